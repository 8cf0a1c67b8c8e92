"""Collection for the doctests of the package: modules of optional dependencies that are
missing are left out (their tests skip in tests/)."""

import importlib.util

collect_ignore = [
    path
    for module, path in (("torch", "cudadml/interop/torch.py"), ("dask", "cudadml/interop/dask.py"))
    if importlib.util.find_spec(module) is None
]
