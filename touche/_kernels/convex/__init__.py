"""Floor 2: support mappings of every convex kind, GJK (distance, simplex, EPA) and GJK shape casts.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
