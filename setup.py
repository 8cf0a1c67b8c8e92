"""The optional compiled launcher (cudadml/backends/_launch.c); everything else is in setup.cfg.
Without a C compiler the build goes on without it, and launches take the Python route."""

from setuptools import Extension, setup

setup(
    ext_modules=[Extension("cudadml.backends._launch", ["cudadml/backends/_launch.c"], libraries=["dl"], optional=True)]
)
