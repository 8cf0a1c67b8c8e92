"""Running operators on arrays: bindings (what a descriptor's tensors are bound to), compiled
operators, the runner (the one route every array call takes, with its cache), results and
their one allocation, the windows batches' own runs, the adapter interface for other array
libraries, the array functions and precompiling."""
