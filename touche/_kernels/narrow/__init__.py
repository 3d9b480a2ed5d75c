"""Floor 4: the narrow phase: the per-pair engines behind the public verbs (convex pairs, fast
analytic paths, pose batches, shape-vs-mesh pairs) and contact manifolds.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
