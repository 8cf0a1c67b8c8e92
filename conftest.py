"""Collection for the doctests of the package: modules of optional dependencies that are
missing are left out (their tests skip in tests/)."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("torch") else ["cudadml/interop/torch.py"]
