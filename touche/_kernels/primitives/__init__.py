"""Floor 1: one primitive pair at a time: closest points, overlap and ray tests, separating axes
(3D, 2D, batched triangle-triangle), containment, bounding volumes, hulls, linear programming.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
