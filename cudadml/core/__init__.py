"""The rules every operator shares, below everything else: tensors and their bounds, data types
and feature levels, errors, plans (the walks a backend runs), windows and overlaps, the
descriptor base and the registry of operators, the normalised calls and their messages, and
the bounded caches. Nothing here imports a layer above (``tests/test_layers.py``)."""
