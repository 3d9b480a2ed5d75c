"""Allocation-light fast paths for the most common primitive pairs (robotics: spheres, capsules,
boxes). They compute exactly what the general engine (pairs.py) computes, straight from the two
poses, without building moved copies of the shapes. ``tests/kernels/test_fastpaths.py`` checks them
against the engine.

Each function returns ``handled`` first: False means "not a fast-path pair, use the engine".
Which kind pairs the Python layer sends here (the short entries of batch.py) is declared in
touche/dispatch.py (engine CLOSED_FORM); tests/kernels/test_fastpaths.py checks that these functions
handle exactly those pairs.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_points_linear_linear, segment_box_parameter
from touche._kernels.primitives.overlap import box_frame_columns, obb_obb_overlap_relative
from touche._kernels.narrow.pair_closed import box_center_half

OBB_EPSILON = tolerance.OBB_EPSILON  # Ericson 4.4.2


@njit(cache=True, nogil=True)
def _world(t, p, i):
    return t[i, 0] * p[0] + t[i, 1] * p[1] + t[i, 2] * p[2] + t[i, 3]


@njit(cache=True, nogil=True)
def _sqdist_point_box(px, py, pz, tb, center, half):
    """Squared distance from a world point to a posed box (box-frame clamping, Ericson 5.1.3.1)."""
    dx = px - tb[0, 3]
    dy = py - tb[1, 3]
    dz = pz - tb[2, 3]
    squared = 0.0
    for i in range(3):
        local = tb[0, i] * dx + tb[1, i] * dy + tb[2, i] * dz - center[i]
        excess = abs(local) - half[i]
        if excess > 0.0:
            squared += excess * excess
    return squared


@njit(cache=True, nogil=True)
def _obb_obb(ta, center_a, half_a, tb, center_b, half_b):
    """Posed boxes -> overlap.obb_obb_overlap_relative (Ericson 4.4.1 with the 4.4.2 epsilon);
    the box axes are the pose rotation columns, read from the poses in place."""
    t, R = box_frame_columns(_world(ta, center_a, 0), _world(ta, center_a, 1), _world(ta, center_a, 2), ta,
                             _world(tb, center_b, 0), _world(tb, center_b, 1), _world(tb, center_b, 2), tb)
    return obb_obb_overlap_relative(t, R, half_a, half_b, OBB_EPSILON)


@njit(cache=True, nogil=True)
def _segment_in_box(points, ta, tb, center):
    """A segment's first point and step (3-tuples) in the coordinates of a box posed by ``tb``
    with its centre at ``center`` in its own frame: no arrays (a capsule-box query's cost was
    mostly small allocations)."""
    p0 = (_world(ta, points[0], 0) - tb[0, 3], _world(ta, points[0], 1) - tb[1, 3], _world(ta, points[0], 2) - tb[2, 3])
    p1 = (_world(ta, points[1], 0) - tb[0, 3], _world(ta, points[1], 1) - tb[1, 3], _world(ta, points[1], 2) - tb[2, 3])
    start = (tb[0, 0] * p0[0] + tb[1, 0] * p0[1] + tb[2, 0] * p0[2] - center[0],
             tb[0, 1] * p0[0] + tb[1, 1] * p0[1] + tb[2, 1] * p0[2] - center[1],
             tb[0, 2] * p0[0] + tb[1, 2] * p0[1] + tb[2, 2] * p0[2] - center[2])
    end = (tb[0, 0] * p1[0] + tb[1, 0] * p1[1] + tb[2, 0] * p1[2] - center[0],
           tb[0, 1] * p1[0] + tb[1, 1] * p1[1] + tb[2, 1] * p1[2] - center[1],
           tb[0, 2] * p1[0] + tb[1, 2] * p1[1] + tb[2, 2] * p1[2] - center[2])
    return start, (end[0] - start[0], end[1] - start[1], end[2] - start[2])


@njit(cache=True, nogil=True)
def _segment_world(points, t):
    a = np.empty(3)
    d = np.empty(3)
    for i in range(3):
        a[i] = _world(t, points[0], i)
        d[i] = _world(t, points[1], i) - a[i]
    return a, d


@njit(cache=True, nogil=True)
def point_core_overlap(pta, radius_a, ta, ptb, radius_b, tb):
    """Whether two point cores (points or spheres of these radii) overlap (closed)."""
    reach = radius_a + radius_b
    squared = 0.0
    for i in range(3):
        delta = _world(ta, pta[0], i) - _world(tb, ptb[0], i)
        squared += delta * delta
    return squared <= reach * reach


@njit(cache=True, nogil=True)
def box_box_overlap(pa, ta, pb, tb):
    """Whether two boxes (packed parameters, poses) overlap (closed)."""
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    return _obb_obb(ta, center_a, half_a, tb, center_b, half_b)


@njit(cache=True, nogil=True)
def fast_intersects(ka, pa, pta, ta, kb, pb, ptb, tb):
    """(handled, result) for the pairs touche.dispatch routes here for intersects (either order;
    overlap is symmetric)."""
    if ka > kb:
        return _fast_intersects_ordered(kb, pb, ptb, tb, ka, pa, pta, ta)
    return _fast_intersects_ordered(ka, pa, pta, ta, kb, pb, ptb, tb)


@njit(cache=True, nogil=True)
def _fast_intersects_ordered(ka, pa, pta, ta, kb, pb, ptb, tb):
    if kb <= kinds.SPHERE:  # point / sphere pairs
        return True, point_core_overlap(pta, pa[0] if ka == kinds.SPHERE else 0.0, ta,
                                        ptb, pb[0] if kb == kinds.SPHERE else 0.0, tb)
    if (ka == kinds.CAPSULE or ka == kinds.SEGMENT) and kb == kinds.BOX:
        radius = pa[0] if ka == kinds.CAPSULE else 0.0
        center, half = box_center_half(pb)
        start, step = _segment_in_box(pta, ta, tb, center)
        t, meets = segment_box_parameter(start, step, half)
        if meets:
            return True, True
        squared = 0.0
        for i in range(3):
            x = start[i] + t * step[i]
            excess = x - half[i] if x > half[i] else (-half[i] - x if x < -half[i] else 0.0)
            squared += excess * excess
        return True, squared <= radius * radius
    if ka <= kinds.SPHERE and kb == kinds.BOX:
        radius = pa[0] if ka == kinds.SPHERE else 0.0
        center, half = box_center_half(pb)
        squared = _sqdist_point_box(_world(ta, pta[0], 0), _world(ta, pta[0], 1), _world(ta, pta[0], 2), tb, center, half)
        return True, squared <= radius * radius
    if ka == kinds.BOX and kb == kinds.BOX:
        return True, box_box_overlap(pa, ta, pb, tb)
    segment_a = ka == kinds.CAPSULE or ka == kinds.SEGMENT
    segment_b = kb == kinds.CAPSULE or kb == kinds.SEGMENT
    if (segment_a or ka <= kinds.SPHERE) and segment_b:
        reach = (pa[0] if (ka == kinds.CAPSULE or ka == kinds.SPHERE) else 0.0) + (pb[0] if kb == kinds.CAPSULE else 0.0)
        b0, db = _segment_world(ptb, tb)
        if segment_a:
            a0, da = _segment_world(pta, ta)
            _, _, c1, c2 = closest_points_linear_linear(a0, da, 0.0, 1.0, b0, db, 0.0, 1.0)
        else:
            c1 = np.empty(3)
            for i in range(3):
                c1[i] = _world(ta, pta[0], i)
            _, _, _, c2 = closest_points_linear_linear(c1, np.zeros(3), 0.0, 0.0, b0, db, 0.0, 1.0)
        squared = (c2[0] - c1[0]) ** 2 + (c2[1] - c1[1]) ** 2 + (c2[2] - c1[2]) ** 2
        return True, squared <= reach * reach
    return False, False


@njit(cache=True, nogil=True)
def _separated_result(core_a, ra, core_b, rb):
    """(handled, signed, point_a, point_b, normal) for two cores at positive distance; cores that
    touch are left to the engine, which owns the penetration conventions."""
    delta = core_b - core_a
    dist = np.sqrt(delta[0] ** 2 + delta[1] ** 2 + delta[2] ** 2)
    if not dist > 0.0:
        return False, 0.0, core_a, core_b, delta
    normal = delta / dist
    return True, dist - ra - rb, core_a + ra * normal, core_b - rb * normal, normal


@njit(cache=True, nogil=True)
def point_core_distance(pa, pta, ta, radius_a, pb, ptb, tb, radius_b):
    """(handled, signed, point_a, point_b, normal) for two point cores (points or spheres of
    these radii) at positive distance; coincident centres are left to the engine."""
    c1 = np.empty(3)
    c2 = np.empty(3)
    for i in range(3):
        c1[i] = _world(ta, pta[0], i)
        c2[i] = _world(tb, ptb[0], i)
    return _separated_result(c1, radius_a, c2, radius_b)


@njit(cache=True, nogil=True)
def _fast_distance_ordered(ka, pa, pta, ta, kb, pb, ptb, tb):
    radius_a = pa[0] if (ka == kinds.SPHERE or ka == kinds.CAPSULE) else 0.0
    radius_b = pb[0] if (kb == kinds.SPHERE or kb == kinds.CAPSULE) else 0.0
    segment_b = kb == kinds.CAPSULE or kb == kinds.SEGMENT
    if ka <= kinds.SPHERE and kb <= kinds.SPHERE:
        return point_core_distance(pa, pta, ta, radius_a, pb, ptb, tb, radius_b)
    if ka <= kinds.SPHERE and kb == kinds.BOX:
        center, half = box_center_half(pb)
        c = np.empty(3)
        for i in range(3):
            c[i] = _world(ta, pta[0], i)
        # clamp in the box frame, map the clamped point back to the world
        q = np.empty(3)
        local = np.empty(3)
        outside = False
        for i in range(3):
            value = tb[0, i] * (c[0] - tb[0, 3]) + tb[1, i] * (c[1] - tb[1, 3]) + tb[2, i] * (c[2] - tb[2, 3])
            local[i] = min(max(value, center[i] - half[i]), center[i] + half[i])
            outside = outside or local[i] != value
        if not outside:  # centre inside the box: penetration depth is the engine's business
            return False, 0.0, c, c, c
        for i in range(3):
            q[i] = tb[i, 0] * local[0] + tb[i, 1] * local[1] + tb[i, 2] * local[2] + tb[i, 3]
        return _separated_result(c, radius_a, q, 0.0)
    if (ka == kinds.CAPSULE or ka == kinds.SEGMENT) and kb == kinds.BOX:
        center, half = box_center_half(pb)
        start, step = _segment_in_box(pta, ta, tb, center)
        t, meets = segment_box_parameter(start, step, half)
        if meets:  # the cores meet: penetration is the engine's business
            return False, 0.0, np.zeros(3), np.zeros(3), np.zeros(3)
        box_point = np.empty(3)  # the box's closest point to the segment's, in the box frame
        for i in range(3):
            box_point[i] = min(max(start[i] + t * step[i], -half[i]), half[i]) + center[i]
        c1 = np.empty(3)
        c2 = np.empty(3)
        for i in range(3):
            first = _world(ta, pta[0], i)
            c1[i] = first + t * (_world(ta, pta[1], i) - first)
            c2[i] = _world(tb, box_point, i)
        return _separated_result(c1, radius_a, c2, 0.0)
    if (ka <= kinds.SPHERE or ka == kinds.SEGMENT or ka == kinds.CAPSULE) and segment_b:
        b0, db = _segment_world(ptb, tb)
        if ka <= kinds.SPHERE:
            a0 = np.empty(3)
            for i in range(3):
                a0[i] = _world(ta, pta[0], i)
            da = np.zeros(3)
            high = 0.0
        else:
            a0, da = _segment_world(pta, ta)
            high = 1.0
        _, _, c1, c2 = closest_points_linear_linear(a0, da, 0.0, high, b0, db, 0.0, 1.0)
        return _separated_result(c1, radius_a, c2, radius_b)
    return False, 0.0, np.zeros(3), np.zeros(3), np.zeros(3)


@njit(cache=True, nogil=True)
def fast_distance(ka, pa, pta, ta, kb, pb, ptb, tb):
    """(handled, signed, point_a, point_b, normal) for separated sphere/capsule/segment/point vs
    box or capsule/segment pairs, in either order; anything else (or touching cores) -> engine."""
    if ka == kinds.BOX or (kb <= kinds.SPHERE and (ka == kinds.CAPSULE or ka == kinds.SEGMENT)):
        handled, signed, point_b, point_a, normal = _fast_distance_ordered(kb, pb, ptb, tb, ka, pa, pta, ta)
        return handled, signed, point_a, point_b, -normal
    return _fast_distance_ordered(ka, pa, pta, ta, kb, pb, ptb, tb)
