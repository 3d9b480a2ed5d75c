"""Floor 4, beside narrow: moving objects: conservative advancement, analytic and quadratic-motion
times of impact, moving separating axes, mesh time of impact, robot kinematics.

No numba here: kernel modules are imported one by one, through ``touche._kernels.load``."""
