"""Drivers: one compiled call per public query, single pair or a whole batch.

A batch driver is a serial nogil loop over pairs ``lo .. hi`` (its last two arguments); the caller
runs it on chunks through touche._parallel.run (a thread pool), one call per chunk.

Batches broadcast one side: ``poses_a`` and ``poses_b`` are (na, 4, 4) and (nb, 4, 4) with
na == nb or either == 1. Tolerances for the TOUCHING status are computed here from the shapes'
sizes and the translations (touche.tolerance: ABSOLUTE + RELATIVE * scale).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from numba.core import cgutils  # noqa: E402
from numba.core import types as nbtypes  # noqa: E402
from numba.extending import intrinsic, overload  # noqa: E402

from touche._kernels.base.jit import njit, strict_entry
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds
from touche._kernels.narrow.fastpaths import box_box_overlap, fast_distance, fast_intersects, point_core_distance, point_core_overlap
from touche._kernels.base.posecheck import INVALID_POSE_A, INVALID_POSE_B, MAX_TRANSLATION, invalid_pose, is_rigid_transform  # noqa: F401  (the codes: for Python)
from touche._kernels.base.touching import touching_tolerance
from touche._kernels.narrow.pairs import engine_address, engine_by_kinds, call_pair_engine  # noqa: F401  (engine_address, engine_by_kinds: for Python)
from touche._kernels.narrow.pairs import gjk_distance_family  # noqa: F401  (for Python)
from touche._kernels.narrow.pair_closed import apply_point, apply_vector
from touche._kernels.narrow.pair_polytopes import box_box_closed_distance
from touche._kernels.narrow.pair_closed import status_of as _status_of
from touche._kernels.narrow.ray_engine import call_ray_engine, ray_engine_address  # noqa: F401  (the address: for Python)



def borrowed(array):
    """The caller's ``array`` seen without reference counting, for a batch driver's arguments.

    numba counts references to every array it views, slices or passes to a callee: an atomic
    add and an atomic subtract on the array's counter, a few tens per pair in the drivers below.
    That costs as much as a cheap pair itself (sphere-box: ~100 ns of atomics against ~60 ns of
    geometry), and the threads running chunks of one batch share each counter, so its cache line
    bounces between cores. numba's ``parallel=True`` loops never paid this: a parfor body sees its
    arrays without a meminfo. ``borrowed(array)`` gives the same array (type, data, shape,
    strides) with a NULL meminfo and parent, so every count on it and on its views is skipped.

    Only for arrays that outlive the call: a driver's arguments (the Python caller holds them
    until the kernel returns), never an array allocated inside a kernel. Any other value is
    returned as is; so is everything under NUMBA_DISABLE_JIT=1 (this plain function)."""
    return array


@intrinsic
def _without_meminfo(typingctx, array):
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    return array(array), codegen


@overload(borrowed, inline="always")
def _borrowed_compiled(array):
    if isinstance(array, nbtypes.Array):
        return lambda array: _without_meminfo(array)
    return lambda array: array


@njit(cache=True, nogil=True, inline="always")
def borrowed_side(params, points, tris, edges, poses):
    """One side of a batch driver's pairs: its arrays borrowed, and the stride of its poses
    (0 when one pose serves every pair)."""
    step = 1 if poses.shape[0] > 1 else 0
    return borrowed(params), borrowed(points), borrowed(tris), borrowed(edges), borrowed(poses), step


@njit(cache=True, nogil=True, inline="always")
def store_distance(i, result, out_signed, out_point_a, out_point_b, out_normal, out_status):
    """Row i of a distance batch's outputs from distance_one's tuple."""
    signed, point_a, point_b, normal, status = result
    out_signed[i] = signed
    copy_into(out_point_a[i], point_a)
    copy_into(out_point_b[i], point_b)
    copy_into(out_normal[i], normal)
    out_status[i] = status


# element by element: a slice assignment (out[1:4] = v) checks shapes with numba's error
# formatting machinery, whose compilation is a second of a first query on an empty cache
@njit(cache=True, nogil=True, inline="always")
def fill_distance(out, signed, point_a, point_b, normal):
    out[0] = signed
    for i in range(3):
        out[1 + i] = point_a[i]
        out[4 + i] = point_b[i]
        out[7 + i] = normal[i]


@strict_entry
@njit(cache=True, nogil=True)
def checked_distance_into(engine, ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb, out):
    """distance_one for one pair from Python: writes (signed, point_a, point_b, normal) into
    ``out`` (10,) and returns the status, or INVALID_POSE_A / _B when a raw pose is not rigid.
    Filling a buffer avoids boxing three new arrays on the way back to Python."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    signed, point_a, point_b, normal, status = distance_one(engine, ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb,
                                                            sb, tb)
    fill_distance(out, signed, point_a, point_b, normal)
    return status


@strict_entry
@njit(cache=True, nogil=True)
def checked_engine_distance_into(engine, ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb, out):
    """checked_distance_into for the pairs the closed forms never answer (fast_distance: a point,
    sphere, capsule or segment against a box, capsule or segment; the verbs send here the pairs
    GJK handles): the same numbers, without compiling the closed forms into a first GJK query."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    signed, point_a, point_b, normal, status = call_pair_engine(engine, (
        False, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, touching_tolerance(sa, ta, sb, tb)))
    fill_distance(out, signed, point_a, point_b, normal)
    return status


@strict_entry
@njit(cache=True, nogil=True)
def checked_intersects_one(engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb):
    """intersects_one for raw pose arrays: 1 / 0, or INVALID_POSE_A / _B."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    return 1 if intersects_one(engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb) else 0


NOT_HANDLED = 7


@strict_entry
@njit(cache=True, nogil=True)
def checked_fast_intersects(ka, pa, pta, ta, kb, pb, ptb, tb):
    """Short entry for the pairs touche.dispatch routes to the closed forms (fastpaths.py) for
    intersects (fewer arguments to unbox per call):
    1 / 0, INVALID_POSE_A / _B, or NOT_HANDLED."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    handled, result = fast_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)
    if not handled:
        return NOT_HANDLED
    return 1 if result else 0


@njit(cache=True, nogil=True, inline="always")
def _closed_form_into(result, sa, ta, sb, tb, out):
    """A closed form's (handled, signed, point_a, point_b, normal) into ``out``: the status, or
    NOT_HANDLED."""
    handled, signed, point_a, point_b, normal = result
    if not handled:
        return NOT_HANDLED
    fill_distance(out, signed, point_a, point_b, normal)
    return _status_of(signed, touching_tolerance(sa, ta, sb, tb))


@strict_entry
@njit(cache=True, nogil=True)
def checked_fast_distance_into(ka, pa, pta, sa, ta, kb, pb, ptb, sb, tb, out):
    """Short entry for the pairs touche.dispatch routes to the closed forms for distance: fills ``out`` like
    checked_distance_into and returns the status, or NOT_HANDLED (then call the full entry)."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    return _closed_form_into(fast_distance(ka, pa, pta, ta, kb, pb, ptb, tb), sa, ta, sb, tb, out)


@njit(cache=True, nogil=True, inline="always")
def _point_core_radius(params):
    """A point core's radius from its packed parameters: a sphere's params[0]; a point has none."""
    return params[0] if params.shape[0] > 0 else 0.0


# Two pair families have entries of their own (the same numbers as checked_fast_intersects): a
# first query on them compiles a small kernel, not the closed forms of every pair.
@strict_entry
@njit(cache=True, nogil=True)
def checked_point_core_intersects(pa, pta, ta, pb, ptb, tb):
    """checked_fast_intersects for two point cores (points, spheres: radius params[0])."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    return 1 if point_core_overlap(pta, _point_core_radius(pa), ta, ptb, _point_core_radius(pb), tb) else 0


@strict_entry
@njit(cache=True, nogil=True)
def checked_box_box_intersects(pa, ta, pb, tb):
    """checked_fast_intersects for two boxes."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    return 1 if box_box_overlap(pa, ta, pb, tb) else 0


@strict_entry
@njit(cache=True, nogil=True)
def checked_box_box_distance_into(pa, sa, ta, pb, sb, tb, out):
    """checked_distance_into for two boxes with the fewest arguments to unbox (their params,
    scales and poses): the same numbers (pair_polytopes.box_box_closed_distance, what the
    polytope engine runs first for two boxes), or NOT_HANDLED for a separated pair only GJK
    settles (the caller then calls the engine)."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    return _closed_form_into(box_box_closed_distance(pa, ta, pb, tb), sa, ta, sb, tb, out)


@strict_entry
@njit(cache=True, nogil=True)
def checked_point_core_distance_into(pa, pta, sa, ta, pb, ptb, sb, tb, out):
    """checked_fast_distance_into for two point cores (points, spheres: radius params[0]), the
    same numbers: a first sphere-sphere query compiles this small kernel and not the closed
    forms of every pair. NOT_HANDLED for coincident centres (the engine answers)."""
    bad = invalid_pose(ta, tb)
    if bad:
        return bad
    return _closed_form_into(point_core_distance(pa, pta, ta, _point_core_radius(pa), pb, ptb, tb, _point_core_radius(pb)),
                             sa, ta, sb, tb, out)


# ``engine``: the address of a pair engine family (pairs.engine_address), called through it
@njit(cache=True, nogil=True, inline="always")
def distance_one(engine, ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb):
    tolerance = touching_tolerance(sa, ta, sb, tb)
    handled, signed, point_a, point_b, normal = fast_distance(ka, pa, pta, ta, kb, pb, ptb, tb)
    if handled:
        return signed, point_a, point_b, normal, _status_of(signed, tolerance)
    return call_pair_engine(engine, (False, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance))


@njit(cache=True, nogil=True, inline="always")
def intersects_one(engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb):
    handled, result = fast_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)
    if handled:
        return result
    return call_pair_engine(engine, (True, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, 0.0))[0] <= 0.0


@njit(cache=True, nogil=True)
def checked_threshold_one(engine, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, threshold):
    """One pair's margin test or lower bound from Python (``threshold``: pairs.LOWER_BOUND_QUERY
    or a margin > 0; ``engine``: a GJK-backed family, see pairs.py): the engine's first field
    (margin: 0.0 within, inf beyond; lower bound: L >= 0), or INVALID_POSE_A / _B."""
    bad = invalid_pose(ta, tb)
    if bad:
        return float(bad)
    return call_pair_engine(engine, (True, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, threshold))[0]


@njit(cache=True, nogil=True)
def threshold_many(engine, ka, pa, pta, tra, eda, tas, kb, pb, ptb, trb, edb, tbs, threshold, out, lo, hi):
    """checked_threshold_one over pairs lo .. hi - 1 of a batch (poses validated by the caller;
    run through touche._parallel.run): ``out (n,)`` float64."""
    pa, pta, tra, eda, tas, step_a = borrowed_side(pa, pta, tra, eda, tas)
    pb, ptb, trb, edb, tbs, step_b = borrowed_side(pb, ptb, trb, edb, tbs)
    out = borrowed(out)
    for i in range(lo, hi):
        out[i] = call_pair_engine(engine, (True, ka, pa, pta, tra, eda, tas[i * step_a], kb, pb, ptb, trb, edb,
                                           tbs[i * step_b], threshold))[0]


@njit(cache=True, nogil=True)
def distance_many(engine, ka, pa, pta, tra, eda, sa, tas, kb, pb, ptb, trb, edb, sb, tbs,
                  out_signed, out_point_a, out_point_b, out_normal, out_status, lo, hi):
    """Pairs lo .. hi - 1 of a batch (run through touche._parallel.run)."""
    pa, pta, tra, eda, tas, step_a = borrowed_side(pa, pta, tra, eda, tas)
    pb, ptb, trb, edb, tbs, step_b = borrowed_side(pb, ptb, trb, edb, tbs)
    out_signed, out_status = borrowed(out_signed), borrowed(out_status)
    out_point_a, out_point_b, out_normal = borrowed(out_point_a), borrowed(out_point_b), borrowed(out_normal)
    for i in range(lo, hi):
        ta = tas[i * step_a]
        tb = tbs[i * step_b]
        result = distance_one(engine, ka, pa, pta, tra, eda, sa, ta, kb, pb, ptb, trb, edb, sb, tb)
        store_distance(i, result, out_signed, out_point_a, out_point_b, out_normal, out_status)


@njit(cache=True, nogil=True)
def intersects_many(engine, ka, pa, pta, tra, eda, tas, kb, pb, ptb, trb, edb, tbs, out, lo, hi):
    """Pairs lo .. hi - 1 of a batch (run through touche._parallel.run)."""
    pa, pta, tra, eda, tas, step_a = borrowed_side(pa, pta, tra, eda, tas)
    pb, ptb, trb, edb, tbs, step_b = borrowed_side(pb, ptb, trb, edb, tbs)
    out = borrowed(out)
    for i in range(lo, hi):
        out[i] = intersects_one(engine, ka, pa, pta, tra, eda, tas[i * step_a], kb, pb, ptb, trb, edb, tbs[i * step_b])


INVALID_QUERY_POINT = -5  # a single query point that is not finite or beyond touche's range


@strict_entry
@njit(cache=True, nogil=True)
def checked_closest_point_into(engine, kind, params, points, tris, edges, scale, pose, x, y, z, out):
    """closest_points_many for one point (x, y, z) and one raw pose (checked here): fills
    ``out`` (4,) with the closest point and the distance and returns the status, or
    INVALID_POSE_A / INVALID_QUERY_POINT (touche.query's single-point plan; the same numbers as
    the batch, bit for bit)."""
    if not is_rigid_transform(pose):
        return INVALID_POSE_A
    if not (abs(x) <= MAX_TRANSLATION and abs(y) <= MAX_TRANSLATION and abs(z) <= MAX_TRANSLATION):  # NaN too
        return INVALID_QUERY_POINT
    query = np.empty((1, 3))
    query[0, 0] = x
    query[0, 1] = y
    query[0, 2] = z
    identity = np.eye(4)
    tolerance = touching_tolerance(scale, pose, 0.0, identity)
    signed, on_point, on_shape, normal, status = call_pair_engine(engine, (
        False, kinds.POINT, np.zeros(0), query, np.zeros((0, 3), dtype=np.int64), np.zeros((0, 2), dtype=np.int64),
        identity, kind, params, points, tris, edges, pose, tolerance))
    if status == kinds.PENETRATING:
        out[0] = x
        out[1] = y
        out[2] = z
        out[3] = 0.0
    else:
        copy_into(out[:3], on_shape)
        out[3] = max(signed, 0.0)
    return status


@njit(cache=True, nogil=True)
def closest_points_many(engine, kind, params, points, tris, edges, scale, poses, queries, out_point, out_distance,
                        out_status, lo, hi):
    """Closest point of a shape to each query point lo .. hi - 1 (run through touche._parallel.run);
    a point inside a solid is its own closest point (distance 0, status PENETRATING)."""
    params, points, tris, edges = borrowed(params), borrowed(points), borrowed(tris), borrowed(edges)
    poses, queries = borrowed(poses), borrowed(queries)
    out_point, out_distance, out_status = borrowed(out_point), borrowed(out_distance), borrowed(out_status)
    step = 1 if poses.shape[0] > 1 else 0
    no_params = np.zeros(0)
    no_tris = np.zeros((0, 3), dtype=np.int64)
    no_edges = np.zeros((0, 2), dtype=np.int64)
    for i in range(lo, hi):
        t = poses[i * step]
        identity = np.eye(4)
        query = queries[i : i + 1]
        tolerance = touching_tolerance(scale, t, 0.0, identity)
        signed, on_point, on_shape, normal, status = call_pair_engine(engine, (
            False, kinds.POINT, no_params, query, no_tris, no_edges, identity, kind, params, points, tris, edges, t,
            tolerance))
        if status == kinds.PENETRATING:
            copy_into(out_point[i], queries[i])
            out_distance[i] = 0.0
        else:
            copy_into(out_point[i], on_shape)
            out_distance[i] = max(signed, 0.0)
        out_status[i] = status


@njit(cache=True, nogil=True)
def _planes_of(params, points):
    nv = int(params[0])
    n_planes = int(params[1])
    planes = np.empty((n_planes, 4))
    for k in range(n_planes):
        copy_into(planes[k, :3], points[nv + k])
        planes[k, 3] = params[4 + k]
    return planes


@njit(cache=True, nogil=True, inline="always")
def _cast_one(ray_address, kind, params, points, tris, planes, pose, origin, direction, limit, solid):
    """One world ray (``direction`` need not be unit) against a shape under ``pose`` through its
    ray family: ``(hit, t, local normal, face, unit direction)``, t along the unit direction."""
    length = np.sqrt(direction[0] ** 2 + direction[1] ** 2 + direction[2] ** 2)
    unit = direction / length
    # into the shape's frame: o' = R^T (o - t), d' = R^T d
    o_local = np.empty(3)
    d_local = np.empty(3)
    for k in range(3):
        o_local[k] = (
            pose[0, k] * (origin[0] - pose[0, 3])
            + pose[1, k] * (origin[1] - pose[1, 3])
            + pose[2, k] * (origin[2] - pose[2, 3])
        )
        d_local[k] = pose[0, k] * unit[0] + pose[1, k] * unit[1] + pose[2, k] * unit[2]
    hit, t, normal, face = call_ray_engine(ray_address, (kind, params, points, tris, planes, o_local, d_local, limit,
                                                          solid))
    return hit, t, normal, face, unit


DIRECTION_SAFE_LOW = 2.0 ** -500  # touche._queryargs._DIRECTION_SAFE: directions used as given
DIRECTION_SAFE_HIGH = 2.0 ** 500
RAY_REFUSED = -6  # a single ray the checked path must look at (a direction to scale, a bad max_t)


@strict_entry
@njit(cache=True, nogil=True)
def checked_raycast_into(ray_address, kind, params, points, tris, pose, ox, oy, oz, dx, dy, dz, t_max, solid, out):
    """raycast_many for one ray (origin, direction as numbers) and one raw pose, checked here:
    ``(code, face)``, code 1 hit / 0 miss with ``out`` (7,) = t, point, normal (inf and NaN on
    a miss), or INVALID_POSE_A / INVALID_QUERY_POINT / RAY_REFUSED (touche.query's single-ray
    plan; the same numbers as the batch, bit for bit)."""
    if not is_rigid_transform(pose):
        return INVALID_POSE_A, -1
    if not (abs(ox) <= MAX_TRANSLATION and abs(oy) <= MAX_TRANSLATION and abs(oz) <= MAX_TRANSLATION):
        return INVALID_QUERY_POINT, -1
    largest = max(abs(dx), abs(dy), abs(dz))
    if not (DIRECTION_SAFE_LOW <= largest <= DIRECTION_SAFE_HIGH) or not (t_max >= 0.0):
        return RAY_REFUSED, -1
    planes = np.zeros((0, 4))
    if kind == kinds.TETRAHEDRON or kind == kinds.POLYHEDRON:
        planes = _planes_of(params, points)
    direction = np.empty(3)
    direction[0] = dx
    direction[1] = dy
    direction[2] = dz
    origin = np.empty(3)
    origin[0] = ox
    origin[1] = oy
    origin[2] = oz
    hit, t, normal, face, unit = _cast_one(ray_address, kind, params, points, tris, planes, pose, origin, direction, t_max,
                                           solid)
    if hit:
        out[0] = t
        copy_into(out[1:4], origin + t * unit)
        copy_into(out[4:7], apply_vector(pose, normal))
        return 1, face
    out[0] = np.inf
    for k in range(1, 7):
        out[k] = np.nan
    return 0, face


@njit(cache=True, nogil=True)
def raycast_many(ray_address, kind, params, points, tris, poses, origins, directions, t_max, solid,
                 out_hit, out_t, out_point, out_normal, out_face, lo, hi):
    """Rays lo .. hi - 1 (run through touche._parallel.run) in world coordinates (directions need
    not be unit; t is a distance along the unit direction) against one shape under one pose or one
    pose per ray. ``ray_address``: the shape's ray family (ray_engine.ray_engine_address)."""
    params, points, tris, poses = borrowed(params), borrowed(points), borrowed(tris), borrowed(poses)
    origins, directions, t_max = borrowed(origins), borrowed(directions), borrowed(t_max)
    out_hit, out_t, out_face = borrowed(out_hit), borrowed(out_t), borrowed(out_face)
    out_point, out_normal = borrowed(out_point), borrowed(out_normal)
    step = 1 if poses.shape[0] > 1 else 0
    planes = np.zeros((0, 4))
    if kind == kinds.TETRAHEDRON or kind == kinds.POLYHEDRON:
        planes = _planes_of(params, points)
    for i in range(lo, hi):
        pose = poses[i * step]
        limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
        hit, t, normal, face, unit = _cast_one(ray_address, kind, params, points, tris, planes, pose, origins[i],
                                               directions[i], limit, solid)
        out_hit[i] = hit
        out_face[i] = face
        if hit:
            out_t[i] = t
            copy_into(out_point[i], origins[i] + t * unit)
            copy_into(out_normal[i], apply_vector(pose, normal))
        else:
            out_t[i] = np.inf
            out_point[i] = np.nan
            out_normal[i] = np.nan


@njit(cache=True, nogil=True)
def world_point(pose, p):
    return apply_point(pose, p)
