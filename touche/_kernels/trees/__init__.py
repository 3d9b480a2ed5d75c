"""Floor 3: mesh preparation, bounding-volume hierarchies (build, dual-tree queries, point and ray
queries), mesh clearance on those trees, and BSP trees.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
