"""The pair engine's convex pairs through GJK / EPA (gjk.py): which pairs GJK handles, the SAT
cost limit above which polytope depths come from EPA, bounding balls, unbounded cores clipped
to a bounded piece, and the GJK distance and overlap calls.

Result convention: see pairs.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()

from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds
from touche._kernels.convex.gjk import gjk_pair_distance, gjk_pair_intersects
from touche._kernels.convex.support import local_box, unwrap_rounded
from touche._kernels.base.vec import dot as _dot
from touche._kernels.base.vec import norm as _norm
from touche._kernels.narrow.pair_closed import apply_point, core_radius, linear_core, nan3, status_of


# ----------------------------------------------------------------------------------------------
# convex pairs through GJK / EPA (gjk.py)
@njit(cache=True, nogil=True)
def gjk_handles(kind_a, kind_b):
    """Pairs with a smooth solid (cylinder, cone, ellipsoid, Rounded shape) and no analytic
    kernel: anything convex against it, except a point / sphere against a cylinder / cone
    (closed form)."""
    lo = min(kind_a, kind_b)
    hi = max(kind_a, kind_b)
    if hi < kinds.CYLINDER or hi >= kinds.PLANE:  # the support-mapped solids: CYLINDER .. PLANE - 1
        return False
    return not (lo <= kinds.SPHERE and (hi == kinds.CYLINDER or hi == kinds.CONE))


@njit(cache=True, nogil=True)
def is_polytope(kind):
    return kinds.TRIANGLE <= kind <= kinds.POLYHEDRON


# The exact SAT depth of two polytopes projects both vertex sets on every edge-direction pair:
# ~ (n_dirs_a * nv_a) * (n_dirs_b * nv_b) work. Two boxes: 24 * 24; two 20-vertex hulls about
# 600 * 600. Above this, penetration depth comes from EPA (1e-12 relative convergence) instead.
SAT_COST_LIMIT = 1000.0 * 1000.0


@njit(cache=True, nogil=True)
def sat_cost(params):
    return params[2] * params[0]


@njit(cache=True, nogil=True)
def bounding_ball(kind, params, points):
    """Centre and radius of a ball holding a finite shape (in the frame of its packed points)."""
    core_kind, core_params, rounding = unwrap_rounded(kind, params)
    center, reach = _unrounded_bounding_ball(core_kind, core_params, points)
    return center, reach + rounding


@njit(cache=True, nogil=True)
def _unrounded_bounding_ball(kind, params, points):
    if kind == kinds.CYLINDER or kind == kinds.CONE:
        center = 0.5 * (points[0] + points[1])
        half = 0.5 * _norm(points[1] - points[0])
        return center, np.sqrt(half * half + params[0] * params[0])
    if kind == kinds.ELLIPSOID:
        reach = 0.0
        for i in range(1, 4):
            reach = max(reach, _norm(points[i]))
        return points[0].copy(), reach
    if kinds.CYLINDER <= kind < kinds.PLANE:  # any other support-mapped solid: its box's ball
        box = local_box(kind, params, points)
        center = 0.5 * (box[:3] + box[3:])
        return center, 0.5 * _norm(box[3:] - box[:3])
    count = points.shape[0]
    if is_polytope(kind):
        count = int(params[0])
    elif kind == kinds.RAY or kind == kinds.LINE:
        count = 1
    # on scalars (the same sums in the same order as with (3,) arrays): an array expression per
    # point allocated a temporary, ~70 ns each, and a box's ball was ~0.5 us of every
    # box-against-mesh query (bvh_shape.shape_bounds runs it twice per pair)
    cx = 0.0
    cy = 0.0
    cz = 0.0
    for i in range(count):
        cx += points[i, 0]
        cy += points[i, 1]
        cz += points[i, 2]
    cx /= count
    cy /= count
    cz /= count
    reach = 0.0
    for i in range(count):
        dx = points[i, 0] - cx
        dy = points[i, 1] - cy
        dz = points[i, 2] - cz
        reach = max(reach, np.sqrt(dx * dx + dy * dy + dz * dz))
    center = np.empty(3)
    center[0] = cx
    center[1] = cy
    center[2] = cz
    return center, reach + core_radius(kind, params)


@njit(cache=True, nogil=True)
def _clip_linear_near(kind, points, center, reach):
    """The segment of a ray / line that holds its closest point to any shape inside the ball
    (center, reach): past ``s + reach`` (s = the parameter of the centre's projection) every step
    moves away from every point of the ball, so the distance only grows; likewise before
    ``s - reach``. Distances and closest points of the clipped segment are exact."""
    p, d, lo, hi = linear_core(kind, points)
    squared = _dot(d, d)
    s = _dot(center - p, d) / squared
    half = reach / np.sqrt(squared)
    t0 = max(lo, s - half)
    t1 = min(hi, s + half)
    if t1 < t0:  # the ball lies behind a ray's origin: the origin is the nearest point
        t0 = lo if s + half < lo else hi
        t1 = t0
    segment = np.empty((2, 3))
    copy_into(segment[0], p + t0 * d)
    copy_into(segment[1], p + t1 * d)
    return segment


@njit(cache=True, nogil=True)
def _inverse_apply_point(t, p):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[0, i] * (p[0] - t[0, 3]) + t[1, i] * (p[1] - t[1, 3]) + t[2, i] * (p[2] - t[2, 3])
    return out


@njit(cache=True, nogil=True)
def bounded_for_gjk(kind, params, points, t, other_kind, other_params, other_points, other_t):
    """GJK needs finite shapes: a ray / line becomes the segment of it that can be nearest to
    the other (finite) shape. Returns (kind, params, points, was_unbounded)."""
    if kind != kinds.RAY and kind != kinds.LINE:
        return kind, params, points, False
    center, reach = bounding_ball(other_kind, other_params, other_points)
    local_center = _inverse_apply_point(t, apply_point(other_t, center))
    return kinds.SEGMENT, params[:0], _clip_linear_near(kind, points, local_center, reach), True


@njit(cache=True, nogil=True)
def gjk_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """pair_distance through GJK / EPA; non-convergence is reported in the status (the
    kinds.GJK_MAX_ITERATIONS / GJK_DEGENERATE codes), never hidden."""
    ka, pa, pta, unbounded_a = bounded_for_gjk(ka, pa, pta, ta, kb, pb, ptb, tb)
    kb, pb, ptb, unbounded_b = bounded_for_gjk(kb, pb, ptb, tb, ka, pa, pta, ta)
    signed, point_a, point_b, normal, gjk_status, _ = gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if gjk_status == kinds.GJK_MAX_ITERATIONS or gjk_status == kinds.GJK_DEGENERATE:
        return signed, point_a, point_b, normal, gjk_status
    if (unbounded_a or unbounded_b) and signed < -tolerance:
        # the depth of the clipped segment is not the depth of the unbounded ray / line
        return np.nan, nan3(), nan3(), nan3(), kinds.PENETRATING
    return signed, point_a, point_b, normal, status_of(signed, tolerance)


@njit(cache=True, nogil=True)
def gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb):
    ka, pa, pta, _ = bounded_for_gjk(ka, pa, pta, ta, kb, pb, ptb, tb)
    kb, pb, ptb, _ = bounded_for_gjk(kb, pb, ptb, tb, ka, pa, pta, ta)
    return gjk_pair_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)
