"""The TOUCHING band of a pair: touche.tolerance's rule in compiled code, one copy for every kernel.

``ABSOLUTE + RELATIVE * max(scale_a, scale_b) + TRANSLATION * max(|t_a|, |t_b|)``: the shapes'
own sizes set the relative part, as the README says. The translations add only the rounding a
pose at that distance from the origin carries (``tolerance.TRANSLATION``, a few units in the last
place): every pair is solved in the frame of one of its shapes (pairs.py), so a gap of 0.22
between unit shapes 1e12 from the origin stays 0.22, not TOUCHING. (The rule before let the band
grow as RELATIVE x the translation: 1.0 at 1e12, which hid real gaps; issue 23, finding 10.)
"""
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche import tolerance  # noqa: E402

from touche._kernels.base.jit import njit  # noqa: E402

ABSOLUTE = tolerance.ABSOLUTE
RELATIVE = tolerance.RELATIVE
TRANSLATION = tolerance.TRANSLATION


@njit(cache=True, nogil=True)
def offset(t):
    """Largest translation component of a pose (4, 4) or (3, 4)."""
    return max(abs(t[0, 3]), abs(t[1, 3]), abs(t[2, 3]))


@njit(cache=True, nogil=True)
def touching_tolerance(scale_a, ta, scale_b, tb):
    """The TOUCHING band of shapes of sizes ``scale_a`` / ``scale_b`` at poses ``ta`` / ``tb``."""
    return ABSOLUTE + RELATIVE * max(scale_a, scale_b, 0.0) + TRANSLATION * max(offset(ta), offset(tb))


@njit(cache=True, nogil=True)
def touching_tolerance_at(scale, distance_from_origin):
    """The same band for one shape of size ``scale`` whose frame lies ``distance_from_origin``
    (largest coordinate) from the world origin."""
    return ABSOLUTE + RELATIVE * max(scale, 0.0) + TRANSLATION * abs(distance_from_origin)


