"""Brute-force first time of contact: dense sampling of a static overlap test plus bisection.

Slow and obviously correct for any motion, with one blind spot: a contact that lasts less than
the sampling step (a graze) can fall between samples. Tests treat a reference MISS against a
kernel HIT by checking the kernel's contact directly (distance ~ 0 at its time, > 0 before).
"""
import numpy as np


def first_contact_by_sampling(overlaps_at, t_max, samples=2000, tolerance=1e-13):
    """Earliest t in [0, t_max] where ``overlaps_at(t)`` is true (closed sets), or None.

    ``overlaps_at`` must be monotone near the first contact (false before, true just after),
    which holds for convex objects in translation. Bisection runs to ``tolerance * max(1, t_max)``.
    """
    if overlaps_at(0.0):
        return 0.0
    times = np.linspace(0.0, t_max, samples + 1)
    previous = 0.0
    for t in times[1:]:
        if overlaps_at(t):
            low, high = previous, t
            while high - low > tolerance * max(1.0, t_max):
                middle = 0.5 * (low + high)
                if overlaps_at(middle):
                    high = middle
                else:
                    low = middle
            return high
        previous = t
    return None
