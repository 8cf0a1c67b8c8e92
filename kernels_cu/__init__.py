"""CUDA C sources of cudadml, installed as the package ``cudadml._kernels`` and read with
``importlib.resources`` by ``cudadml.backends.kernels``."""
