"""Result types of the distance verbs (touche.query) that lower modules (touche.solids) build
too: the status codes and the distance result. The verbs re-export them."""
from __future__ import annotations

import numpy as np

from ._enums import NamedIntEnum
from ._record import Record
from ._kernels import kinds


class Status(NamedIntEnum):
    """What a distance query found. One pair gives a member (it prints as its name:
    ``print(r.status)`` -> ``SEPARATED``); a batch gives an int8 array of the codes:

    ====  ==============  ==========================================================
    code  name            meaning
    ====  ==============  ==========================================================
    0     SEPARATED       apart: ``distance > 0``, the points are the closest points
    1     TOUCHING        in contact (distance 0 within the touching tolerance)
    2     PENETRATING     overlapping: ``depth = -signed_distance > 0``
    3     MAX_ITERATIONS  GJK / EPA did not converge: the numbers are the best found
    4     DEGENERATE      GJK / EPA met a configuration it cannot resolve (same caveat)
    ====  ==============  ==========================================================

    ``Status.names(codes)`` turns a batch's codes into names (a str array of the same shape);
    members compare equal to their codes (``r.status == Status.TOUCHING``, ``codes == 1``)."""

    SEPARATED = kinds.SEPARATED
    TOUCHING = kinds.TOUCHING
    PENETRATING = kinds.PENETRATING
    MAX_ITERATIONS = kinds.GJK_MAX_ITERATIONS  # an iterative method (GJK / EPA) did not converge
    DEGENERATE = kinds.GJK_DEGENERATE  # ... or met a degenerate configuration it cannot resolve


class DistanceResult(Record):
    """Result of :func:`distance`.

    For one pair: ``distance`` (float >= 0), ``signed_distance`` (float; negative = penetration
    depth), ``point_a``, ``point_b``, ``normal`` ((3,) float64, world frame), ``status``
    (:class:`Status`). For a batch of n: arrays of shape (n,), (n, 3) and an int8 ``status``
    (codes of :class:`Status`: 0 SEPARATED, 1 TOUCHING, 2 PENETRATING, 3 MAX_ITERATIONS,
    4 DEGENERATE; ``status_names`` gives them as names).

    ``normal`` points from A towards B. Separated: the points are the closest points and
    ``distance == |point_b - point_a|``. Penetrating: ``-signed_distance`` is the minimum
    translation distance along ``normal`` (B moves along it to separate), ``point_a`` is A's
    deepest point along ``normal`` and ``point_b`` B's deepest point against it. When a depth is
    unbounded or not computed (lines, planes, rays through polytopes) ``signed_distance`` is
    ``-inf`` / NaN and the points NaN.
    """

    __slots__ = ("signed_distance", "point_a", "point_b", "normal", "status")

    @property
    def distance(self):
        signed = self.signed_distance
        if isinstance(signed, np.ndarray):
            return np.where(self.status == Status.PENETRATING, 0.0, np.maximum(signed, 0.0))
        if self.status == Status.PENETRATING:
            return 0.0
        return signed if signed > 0.0 else 0.0

    @property
    def depth(self):
        """Penetration depth (>= 0; 0 when separated)."""
        signed = self.signed_distance
        if isinstance(signed, np.ndarray):
            return np.maximum(-signed, 0.0)
        return -signed if signed < 0.0 else 0.0

    @property
    def status_names(self):
        """``status`` as names: a str for one pair, a (n,) str array for a batch."""
        return Status.names(self.status)

    def __repr__(self):
        if isinstance(self.signed_distance, np.ndarray):
            return f"DistanceResult(batch of {len(self.signed_distance)})"
        return (
            f"DistanceResult(distance={self.distance:.6g}, signed_distance={self.signed_distance:.6g}, "
            f"status={self.status.name}, point_a={np.round(self.point_a, 6).tolist()}, "
            f"point_b={np.round(self.point_b, 6).tolist()}, normal={np.round(self.normal, 6).tolist()})"
        )
