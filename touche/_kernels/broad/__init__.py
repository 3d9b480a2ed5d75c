"""Floor 4, beside narrow: broad phases (sweep and prune, grids, dynamic trees) and the world step.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
