"""Floor 0: the jit decorator and persistent cache, kind codes, small vector helpers, pose checks,
Morton codes and exact predicates. Imports nothing above it.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
