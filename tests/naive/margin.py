"""References for safety margins and lower bounds (touche.intersects(margin=),
touche.distance(lower_bound_only=True)): the obvious answers from the exact distance.

- within a margin: ``distance <= margin``, where an overlap of unknown depth (NaN signed
  distance: a line through a solid) is within any margin;
- a lower bound L is certified when ``0 <= L <= distance`` (up to the rounding of two
  computations of one distance, ``slack``).
"""
import numpy as np

import touche as tc


def within_margin(a, pose_a, b, pose_b, margin):
    """(n,) bool: the exact distance of each pose pair (today's touche.distance) <= margin."""
    signed = np.atleast_1d(tc.distance(a, pose_a, b, pose_b).signed_distance)
    return ~(signed > margin)


def exact_distances(a, pose_a, b, pose_b):
    """(n,) distances (0 when touching or overlapping) from today's touche.distance."""
    return np.atleast_1d(tc.distance(a, pose_a, b, pose_b).distance)


def is_certified_lower_bound(bound, exact, slack):
    """(n,) bool: 0 <= bound <= exact + slack (slack: rounding of two computations)."""
    bound = np.asarray(bound)
    return (bound >= 0.0) & (bound <= exact + slack)
