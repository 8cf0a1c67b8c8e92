"""Sphinx configuration: the guide (docs/guide.md), the notebooks as committed (not re-executed), the
benchmark chart and an API reference from the numpydoc docstrings.

    sphinx-build -W -b html docs docs/_build/html
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cudadml  # noqa: E402

project = "cudadml"
release = version = cudadml.__version__
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
]
autosummary_generate = True
numpydoc_show_class_members = False  # each class page lists its own members through autodoc
nb_execution_mode = "off"  # the notebooks are committed executed; tests/test_notebooks.py reruns them
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build", "generated/*.rst.txt", "notebooks/.ipynb_checkpoints"]
html_theme = "pydata_sphinx_theme"
html_title = f"cudadml {release}"
html_theme_options = {"navigation_with_keys": False}
