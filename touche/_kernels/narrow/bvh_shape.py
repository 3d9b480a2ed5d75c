"""A triangle mesh against one primitive or convex shape through the mesh's BVH (Ericson 6.3:
descend one tree against a fixed query volume, explicit stack; exact pair kernel at the leaves).

Same answers as the brute force in pair_mesh.py (``point_vs_mesh``, ``linear_vs_mesh``,
``convex_vs_mesh``), which loop over every triangle: the leaves call the
very same per-triangle terms (``pair_mesh.*_triangle_term``) on the same vertex coordinates (the
tree stores exact copies), and the winner is chosen by the same rule -- the smallest key, the
lowest original triangle index among equal keys (the brute force keeps the first strict
minimum). Only the order of the visits differs, so results are bit-identical.

The query shape is moved into the mesh's frame (as pairs._ordered_core does) and bounded there
by an axis-aligned box and a ball (rays and lines: unbounded boxes and the exact point-element
distance). A node's lower bound ``lb`` on the distance from its triangles to the shape is the
larger of the box-box gap and the ball-ball (or ball-element) gap, minus ``pad``:

- ``pad = PAD_RELATIVE * coordinate scale`` absorbs the rounding of the bound and of the leaf
  kernels: a node is never culled when one of its triangles could still win or touch.
- a node is pruned only when ``lb > 0`` (no triangle of it can overlap the shape: overlapping
  triangles have negative keys with no lower bound, or NaN for rays / lines through a triangle,
  which the brute force must see too) AND ``lb`` is STRICTLY above the best key so far (equal
  keys must still be visited for the lowest-index rule). Booleans (bvh_shape_boolean's engines,
  behind the same interface) prune every node with ``lb > 0`` and stop at the first overlapping
  triangle.

Point / sphere cores compare squared core distances (the brute force's key), the other shapes
the signed distance of the per-triangle result. Planes and half-spaces against a mesh stay with
the brute force (pair_mesh.mesh_vs_plane: a scan of the vertices).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from numba.core import types as _types

from touche._kernels.base.jit import KernelInterface, njit, strict_entry
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402
from touche._kernels.narrow.batch import borrowed, fill_distance, store_distance, touching_tolerance  # noqa: E402
from touche._kernels.trees.bvh_volumes import AABB_MAX, AABB_MIN, OBB_AXES, OBB_CENTER, OBB_HALF  # noqa: E402
from touche._kernels.trees.bvh_volumes import SPHERE_CENTER, SPHERE_RADIUS  # noqa: E402
from touche._kernels.trees.bvh_volumes import points_box  # noqa: E402
from touche._kernels.trees.bvh_descent import obb_overlap  # noqa: E402
from touche._kernels.narrow.pairs import relative_transform  # noqa: E402
from touche._kernels.narrow.pair_closed import finish_core_distance, linear_core, nan3, core_radius  # noqa: E402
from touche._kernels.narrow.pair_closed import apply_point, apply_vector, status_of  # noqa: E402
from touche._kernels.narrow.pair_closed import transform_shape  # noqa: E402
from touche._kernels.primitives.tri_distance import edges_normal  # noqa: E402
from touche._kernels.narrow.pair_mesh import degenerate_triangle_as_segment, mesh_vs_plane  # noqa: E402
from touche._kernels.narrow.pair_mesh import linear_triangle_term, point_triangle_term  # noqa: E402
from touche._kernels.primitives.closest import closest_point_triangle_xyz  # noqa: E402
from touche._kernels.narrow.pair_mesh import polytope_triangle_distance  # noqa: E402
from touche._kernels.narrow.pair_mesh import smooth_triangle_distance  # noqa: E402
from touche._kernels.narrow.pair_mesh import TRIANGLE_SCRATCH_FLOATS  # noqa: E402
from touche._kernels.narrow.pair_mesh import triangle_scratch_views  # noqa: E402
from touche._kernels.narrow.pair_gjk import bounding_ball  # noqa: E402
from touche._kernels.convex.support import local_box, relative_into  # noqa: E402
from touche._kernels.base.posecheck import INVALID_POSE_A, INVALID_POSE_B, invalid_pose  # noqa: E402

PAD_RELATIVE = 1e-9
NO_ID = np.iinfo(np.int64).max

CORE_POINT = 0
CORE_LINEAR = 1
CORE_POLYTOPE = 2
CORE_SMOOTH = 3


@njit(cache=True, nogil=True)
def core_of(kind):
    if kind <= kinds.SPHERE:
        return CORE_POINT
    if kind <= kinds.LINE:
        return CORE_LINEAR
    if kind <= kinds.POLYHEDRON:
        return CORE_POLYTOPE
    return CORE_SMOOTH


@njit(cache=True, nogil=True)
def shape_bounds(kind, params, points, box, ball):
    """Box ``box (6,)`` = [min, max] and ball ``ball (4,)`` = [center, radius] holding the shape
    (packed arrays, current frame). Rays / lines get infinite box sides; their ball is unused.
    Point / sphere cores: the box and ball of the CORE (radius 0; the caller compares with r).
    Returns the largest finite coordinate magnitude (for the rounding pad)."""
    core = core_of(kind)
    if core == CORE_POINT:
        for i in range(3):
            box[i] = points[0, i]
            box[3 + i] = points[0, i]
            ball[i] = points[0, i]
        ball[3] = 0.0
    elif core == CORE_LINEAR:
        p, d, lo, hi = linear_core(kind, points)
        r = core_radius(kind, params)
        for i in range(3):
            if d[i] == 0.0:
                a = p[i]
                b = p[i]
            else:
                a = p[i] + lo * d[i] if np.isfinite(lo) else (-np.inf if d[i] > 0.0 else np.inf)
                b = p[i] + hi * d[i] if np.isfinite(hi) else (np.inf if d[i] > 0.0 else -np.inf)
            box[i] = min(a, b) - r
            box[3 + i] = max(a, b) + r
        for i in range(4):
            ball[i] = 0.0
    elif core == CORE_POLYTOPE:
        points_box(points, int(params[0]), box)
        center, reach = bounding_ball(kind, params, points)
        for i in range(3):
            ball[i] = center[i]
        ball[3] = reach
    else:
        # six support points in one call (pair_closed.support's numbers on the axes, without
        # its two arrays per direction)
        copy_into(box, local_box(kind, params, points))
        center, reach = bounding_ball(kind, params, points)
        for i in range(3):
            ball[i] = center[i]
        ball[3] = reach
    size = 0.0
    for i in range(6):
        if np.isfinite(box[i]):
            size = max(size, abs(box[i]))
    return size


@njit(cache=True, nogil=True, inline="always")
def _segment_ball_gap(cx, cy, cz, ball_radius, p, d, lo, hi, seg_radius):
    """The gap between the ball (cx, cy, cz; ball_radius) and everything within ``seg_radius``
    of the segment p + t d, t in [lo, hi] (its capsule); < 0 when they overlap."""
    dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    t = 0.0
    if dd > 0.0:
        t = ((cx - p[0]) * d[0] + (cy - p[1]) * d[1] + (cz - p[2]) * d[2]) / dd
    t = min(max(t, lo), hi) if dd > 0.0 else lo
    qx = cx - p[0] - t * d[0]
    qy = cy - p[1] - t * d[1]
    qz = cz - p[2] - t * d[2]
    return np.sqrt(qx * qx + qy * qy + qz * qz) - ball_radius - seg_radius


@njit(cache=True, nogil=True, inline="always")
def bounding_segment(kind, params, points):
    """(p, d, lo, hi, seg_radius): the shape lies within ``seg_radius`` of the segment p + t d,
    t in [lo, hi] -- a linear core (its own radius), a cylinder or cone (its axis, its radius);
    ``seg_radius`` -1 for the other shapes, which node_gap then bounds by their box and ball."""
    if core_of(kind) == CORE_LINEAR:
        p, d, lo, hi = linear_core(kind, points)
        return p, d, lo, hi, core_radius(kind, params)
    if kind == kinds.CYLINDER or kind == kinds.CONE:
        p, d, lo, hi = linear_core(kinds.SEGMENT, points)
        return p, d, lo, hi, params[0]
    return points[0], points[0], 0.0, 0.0, -1.0


@njit(cache=True, nogil=True)
def node_gap(nb, node, core, box, ball, p, d, lo, hi, seg_radius):
    """A lower bound of the distance between node ``node``'s triangles (its AABB and ball in
    ``nb``) and the shape (``box``, ``ball``; when ``seg_radius >= 0`` the shape lies within
    ``seg_radius`` of the segment p + t d, t in [lo, hi]: a linear core swept by its radius, or
    the capsule around a cylinder's or cone's axis, much tighter than a long cylinder's box or
    ball beside a surface). 0 when the volumes overlap. No pad."""
    g2 = 0.0
    for i in range(3):
        gap = max(nb[node, AABB_MIN + i] - box[3 + i], box[i] - nb[node, AABB_MAX + i])
        if gap > 0.0:
            g2 += gap * gap
    bound = np.sqrt(g2)
    cx = nb[node, SPHERE_CENTER]
    cy = nb[node, SPHERE_CENTER + 1]
    cz = nb[node, SPHERE_CENTER + 2]
    if seg_radius >= 0.0:
        bound = max(bound, _segment_ball_gap(cx, cy, cz, nb[node, SPHERE_RADIUS], p, d, lo, hi, seg_radius))
    if core != CORE_LINEAR:
        qx = cx - ball[0]
        qy = cy - ball[1]
        qz = cz - ball[2]
        bound = max(bound, np.sqrt(qx * qx + qy * qy + qz * qz) - nb[node, SPHERE_RADIUS] - ball[3])
    return bound


@njit(cache=True, nogil=True, inline="always")
def ball_box_gap(nb, node, obb):
    """A lower bound of the distance between node ``node``'s triangles and the shape: the
    distance from the node's ball to the shape's own box (``obb (15,)``, which holds it).
    Tighter than node_gap's bounds for a flat or long shape turned in the mesh's frame (a shelf
    board's axis-aligned box there is nearly a cube, its ball as wide as the board)."""
    g2 = 0.0
    for k in range(3):
        t = ((nb[node, SPHERE_CENTER] - obb[0]) * obb[3 + 3 * k] + (nb[node, SPHERE_CENTER + 1] - obb[1]) * obb[4 + 3 * k]
             + (nb[node, SPHERE_CENTER + 2] - obb[2]) * obb[5 + 3 * k])
        excess = abs(t) - obb[12 + k]
        if excess > 0.0:
            g2 += excess * excess
    return np.sqrt(g2) - nb[node, SPHERE_RADIUS]


@njit(cache=True, nogil=True, inline="always")
def box_axes_gap(a, b, c, obb):
    """The largest gap between triangle abc and the shape's own box (``obb (15,)``) along the
    box's three axes (separating axes; 0 or less when none separates them)."""
    gap = -np.inf
    for k in range(3):
        ax = obb[3 + 3 * k]
        ay = obb[4 + 3 * k]
        az = obb[5 + 3 * k]
        center = obb[0] * ax + obb[1] * ay + obb[2] * az
        pa = a[0] * ax + a[1] * ay + a[2] * az
        pb = b[0] * ax + b[1] * ay + b[2] * az
        pc = c[0] * ax + c[1] * ay + c[2] * az
        gap = max(gap, min(pa, pb, pc) - (center + obb[12 + k]), (center - obb[12 + k]) - max(pa, pb, pc))
    return gap


@njit(cache=True, nogil=True, inline="always")
def unit_normal(a, b, c):
    """(nx, ny, nz, length): triangle abc's unit normal and the length of ab x ac (0: no normal)."""
    _, _, _, _, _, _, nx, ny, nz = edges_normal((a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2]))
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    if length > 0.0:
        return nx / length, ny / length, nz / length, length
    return nx, ny, nz, length


@njit(cache=True, nogil=True, inline="always")
def triangle_segment_gap(a, b, c, p, d, lo, hi, seg_radius):
    """A lower bound of the distance between triangle abc and the capsule of (p, d, lo, hi,
    ``seg_radius``) (see node_gap): the gap from the triangle's ball (about its centroid)."""
    cx = (a[0] + b[0] + c[0]) / 3.0
    cy = (a[1] + b[1] + c[1]) / 3.0
    cz = (a[2] + b[2] + c[2]) / 3.0
    r2 = max((a[0] - cx) ** 2 + (a[1] - cy) ** 2 + (a[2] - cz) ** 2, (b[0] - cx) ** 2 + (b[1] - cy) ** 2
             + (b[2] - cz) ** 2, (c[0] - cx) ** 2 + (c[1] - cy) ** 2 + (c[2] - cz) ** 2)
    return _segment_ball_gap(cx, cy, cz, np.sqrt(r2), p, d, lo, hi, seg_radius)


@njit(cache=True, nogil=True, inline="always")
def _triangle_box_gap(a, b, c, obb, p, d, lo, hi, seg_radius):
    """A lower bound of the distance between triangle abc and the shape: the largest gap between
    the triangle and the shape's own box (``obb (15,)``) along the box's three axes and the
    triangle's normal (separating axes; 0 or less when none separates them), and from the
    capsule holding the shape when ``seg_radius >= 0`` (node_gap). Skips the exact triangle term
    for triangles that cannot beat the best distance found so far."""
    gap = box_axes_gap(a, b, c, obb)
    if seg_radius >= 0.0:
        gap = max(gap, triangle_segment_gap(a, b, c, p, d, lo, hi, seg_radius))
    nx, ny, nz, length = unit_normal(a, b, c)
    if length > 0.0:
        reach = 0.0
        for k in range(3):
            reach += obb[12 + k] * abs(nx * obb[3 + 3 * k] + ny * obb[4 + 3 * k] + nz * obb[5 + 3 * k])
        offset = nx * (obb[0] - a[0]) + ny * (obb[1] - a[1]) + nz * (obb[2] - a[2])
        gap = max(gap, abs(offset) - reach)
    return gap


@njit(cache=True, nogil=True, inline="always")
def _box_reach(obb, direction):
    """max over the shape's own box (``obb (15,)``) of direction . y."""
    reach = obb[0] * direction[0] + obb[1] * direction[1] + obb[2] * direction[2]
    for k in range(3):
        reach += obb[12 + k] * abs(direction[0] * obb[3 + 3 * k] + direction[1] * obb[4 + 3 * k]
                                   + direction[2] * obb[5 + 3 * k])
    return reach


@njit(cache=True, nogil=True)
def obb_apart(nb, node, obb, pad):
    """The node's OBB and the shape's (``obb (15,)``: center, axis rows, half extents; grown by
    ``pad``) are disjoint (15-axis SAT): no triangle of the node meets the shape."""
    return not obb_overlap(nb[node, OBB_CENTER], nb[node, OBB_CENTER + 1], nb[node, OBB_CENTER + 2],
                            nb[node, OBB_AXES:OBB_AXES + 9], nb[node, OBB_HALF], nb[node, OBB_HALF + 1],
                            nb[node, OBB_HALF + 2], obb[0], obb[1], obb[2], obb[3:12], obb[12] + pad,
                            obb[13] + pad, obb[14] + pad)


@njit(cache=True, nogil=True)
def point_core_distance(kind, params, points, ni, nb, tv, ids, mesh_scale, stack, stack_lb):
    """mesh_core for a point or sphere already in the mesh's frame: the key is the squared
    distance from the center to a triangle (the brute force's, point_vs_mesh); a node is pruned
    when its bound's square exceeds the best, and the nearer child is opened first. Its own
    kernel, so that a first sphere-mesh distance compiles this walk and not mesh_core's GJK and
    SAT terms (``MESH_POINT_DISTANCE_ENGINE``). Same answer, bit for bit, as the brute force."""
    bounds = np.empty(10)
    box = bounds[0:6]
    ball = bounds[6:10]
    size = shape_bounds(kind, params, points, box, ball)
    pad = PAD_RELATIVE * max(mesh_scale, size)
    radius = core_radius(kind, params)
    p, d, lo, hi, seg_radius = bounding_segment(kind, params, points)  # no segment: seg_radius -1
    cx, cy, cz = points[0, 0], points[0, 1], points[0, 2]
    best_id = NO_ID
    best_d2 = np.inf
    best_q = points[0]  # replaced by the first triangle's (every query that reaches a result tests one)
    best_normal = nan3()
    stack_lb[0] = node_gap(nb, 0, CORE_POINT, box, ball, p, d, lo, hi, seg_radius) - pad
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        lb = stack_lb[top]
        if lb > 0.0 and lb * lb > best_d2:
            continue
        if ni[node, 2] < 0:
            for k in range(ni[node, 0], ni[node, 0] + ni[node, 1]):
                tid = ids[k]
                # the distance first, on coordinates (no arrays); point_triangle_term's point and
                # normal only for a triangle that wins (the same arithmetic, the same d2)
                x, y, z = closest_point_triangle_xyz(cx, cy, cz, tv[k, 0, 0], tv[k, 0, 1], tv[k, 0, 2], tv[k, 1, 0],
                                                     tv[k, 1, 1], tv[k, 1, 2], tv[k, 2, 0], tv[k, 2, 1], tv[k, 2, 2])
                d2 = (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2
                if d2 < best_d2 or (d2 == best_d2 and tid < best_id):
                    d2, candidate, normal = point_triangle_term(points[0], tv[k, 0], tv[k, 1], tv[k, 2])
                    best_d2 = d2
                    best_id = tid
                    best_q = candidate
                    best_normal = normal
            continue
        left = node + 1
        right = ni[node, 2]
        lb_left = node_gap(nb, left, CORE_POINT, box, ball, p, d, lo, hi, seg_radius) - pad
        lb_right = node_gap(nb, right, CORE_POINT, box, ball, p, d, lo, hi, seg_radius) - pad
        if not lb_left <= lb_right:  # the nearer child is popped first: pushed last
            left, right = right, left
            lb_left, lb_right = lb_right, lb_left
        stack[top] = right
        stack_lb[top] = lb_right
        stack[top + 1] = left
        stack_lb[top + 1] = lb_left
        top += 2
    if best_d2 == np.inf:  # no triangle reached (the root is always opened: an empty tree)
        return np.inf, nan3(), nan3(), nan3()
    return finish_core_distance(points[0], radius, best_q, 0.0, best_normal, 0.0)


# The per-triangle distance of each family, one signature (mesh_core calls the one its engine
# passes): a triangle GJK proves farther than the best so far (padded as mesh_core's bounds:
# equal keys still compete on their ids) cannot win, so GJK stops there (``cutoff``).
@njit(cache=True, nogil=True)
def _linear_distance_term(kind, params, points, tris, edges, a, b, c, best_key, pad, identity, triangle_params,
                          triangle, placement, simplex, hints):
    """A segment, capsule, ray or line: linear_triangle_term (NaN: a ray or line through the
    triangle, depth not computed)."""
    return linear_triangle_term(kind, params, points, a, b, c, False)


@njit(cache=True, nogil=True)
def _polytope_distance_term(kind, params, points, tris, edges, a, b, c, best_key, pad, identity, triangle_params,
                            triangle, placement, simplex, hints):
    """A triangle, tetrahedron, box, polygon or polyhedron: polytope_triangle_distance."""
    cutoff = max(best_key, 0.0) + pad
    if best_key < -pad:  # penetrating: only a deeper SAT depth can win
        cutoff = best_key + pad
    return polytope_triangle_distance(kind, params, points, tris, edges, a, b, c, cutoff, identity, triangle_params,
                                      triangle, placement, simplex, hints)


@njit(cache=True, nogil=True)
def _curved_distance_term(kind, params, points, tris, edges, a, b, c, best_key, pad, identity, triangle_params,
                          triangle, placement, simplex, hints):
    """A cylinder, cone, ellipsoid, rounded shape or tapered capsule: smooth_triangle_distance."""
    return smooth_triangle_distance(kind, params, points, a, b, c, max(best_key, 0.0) + pad, identity,
                                    triangle_params, triangle, placement, simplex, hints)


# inline: each family's engine inlines it with its own triangle term (a global function once
# inlined: numba compiles that term alone), so a first capsule-mesh distance compiles neither
# GJK nor EPA
@njit(cache=True, nogil=True, inline="always")
def mesh_core(kind, params, points, tris, edges, ni, nb, tv, ids, mesh_scale, stack, stack_lb, obb, use_obb,
              triangle_term):
    """pairs._core's mesh branch, distances, for a shape (not a point or sphere: point_core_distance;
    not a plane) already in the mesh's frame, through the tree (``ni``, ``nb``, ``tv``,
    ``ids``: bvh_volumes layout), each triangle by ``triangle_term`` (its family's: the
    ``_*_distance_term`` above). ``stack (>= depth + 2,) int64``, ``stack_lb`` float64 scratch.
    ``obb (15,)``: the shape's own box in the mesh frame (center, axis rows, half extents;
    ``use_obb``): a node whose OBB misses it holds no triangle that meets the shape, so once
    some triangle overlaps (best key < 0) it is pruned (its triangles cannot be the deepest).
    Returns (signed, point on the shape, point on the mesh, normal) in the mesh frame,
    bit-identical to the brute force. Booleans are bvh_shape_boolean's engines."""
    core = core_of(kind)
    # every scratch array of the query in one allocation (there were ~20, ~5 % of a query that
    # the root prunes): box, ball, the separated direction, then GJK's (pair_mesh.triangle_scratch_views)
    scratch = np.empty(13 + TRIANGLE_SCRATCH_FLOATS)
    box = scratch[0:6]
    ball = scratch[6:10]
    size = shape_bounds(kind, params, points, box, ball)
    pad = PAD_RELATIVE * max(mesh_scale, size)
    p, d, lo, hi, seg_radius = bounding_segment(kind, params, points)
    # the key: the signed distance of the per-triangle result
    best_key = np.inf
    best_id = NO_ID
    missing = nan3()  # the points and normal of no result (callers only read them)
    best = (np.inf, missing, missing, missing)
    unknown_depth = False
    gjk_identity, gjk_triangle_params, gjk_triangle, gjk_placement, gjk_simplex = triangle_scratch_views(scratch[13:])
    gjk_hints = np.zeros(2, dtype=np.int64)
    direction = scratch[10:13]  # the best pair's normal while separated (has_direction)
    has_direction = False
    far_side = 0.0  # max over the shape's box of direction . y
    # a stacked node whose OBB misses the shape's is stored as -node - 1 (no array of flags)
    stack_lb[0] = node_gap(nb, 0, core, box, ball, p, d, lo, hi, seg_radius) - pad
    if use_obb:
        stack_lb[0] = max(stack_lb[0], ball_box_gap(nb, 0, obb) - pad)
    stack[0] = -1 if use_obb and stack_lb[0] <= 0.0 and obb_apart(nb, 0, obb, pad) else 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        apart = node < 0
        if apart:
            node = -node - 1
        lb = stack_lb[top]
        if lb > 0.0 and lb > best_key:
            continue
        elif apart and best_key < 0.0:
            continue
        if ni[node, 2] < 0:
            for k in range(ni[node, 0], ni[node, 0] + ni[node, 1]):
                tid = ids[k]
                if use_obb and best_key > 0.0:
                    # separated so far: the gap along the best pair's normal (from the shape to
                    # the mesh) bounds this triangle's distance from below, and so do the box's
                    # own separating axes; skip it when it cannot win (strictly: equal keys
                    # still compete on their ids)
                    bound = _triangle_box_gap(tv[k, 0], tv[k, 1], tv[k, 2], obb, p, d, lo, hi, seg_radius)
                    if has_direction:
                        bound = max(bound, min(_dot(direction, tv[k, 0]), _dot(direction, tv[k, 1]),
                                               _dot(direction, tv[k, 2])) - far_side)
                    if bound - pad > 0.0 and bound - pad > best_key:
                        continue
                result = triangle_term(kind, params, points, tris, edges, tv[k, 0], tv[k, 1], tv[k, 2], best_key, pad,
                                       gjk_identity, gjk_triangle_params, gjk_triangle, gjk_placement, gjk_simplex,
                                       gjk_hints)
                if core == CORE_LINEAR and result[0] != result[0]:  # NaN: overlapping, depth not computed
                    unknown_depth = True
                    continue
                if result[0] < best_key or (result[0] == best_key and tid < best_id):
                    best_key = result[0]
                    best_id = tid
                    best = result
                    if use_obb and best_key > 0.0 and np.isfinite(result[3][0]):
                        has_direction = True
                        for i in range(3):
                            direction[i] = result[3][i]
                        far_side = _box_reach(obb, direction)
            continue
        left = node + 1
        right = ni[node, 2]
        lb_left = node_gap(nb, left, core, box, ball, p, d, lo, hi, seg_radius) - pad
        lb_right = node_gap(nb, right, core, box, ball, p, d, lo, hi, seg_radius) - pad
        if use_obb:
            lb_left = max(lb_left, ball_box_gap(nb, left, obb) - pad)
            lb_right = max(lb_right, ball_box_gap(nb, right, obb) - pad)
            if has_direction:
                lb_left = max(lb_left, _dot(direction, nb[node + 1, SPHERE_CENTER:SPHERE_CENTER + 3])
                              - nb[node + 1, SPHERE_RADIUS] - far_side - pad)
                lb_right = max(lb_right, _dot(direction, nb[ni[node, 2], SPHERE_CENTER:SPHERE_CENTER + 3])
                               - nb[ni[node, 2], SPHERE_RADIUS] - far_side - pad)
        apart_left = use_obb and lb_left <= 0.0 and obb_apart(nb, left, obb, pad)
        apart_right = use_obb and lb_right <= 0.0 and obb_apart(nb, right, obb, pad)
        if not lb_left <= lb_right:  # the nearer child is popped first: pushed last, as "left"
            left, right = right, left
            lb_left, lb_right = lb_right, lb_left
            apart_left, apart_right = apart_right, apart_left
        stack[top] = -right - 1 if apart_right else right
        stack_lb[top] = lb_right
        stack[top + 1] = -left - 1 if apart_left else left
        stack_lb[top + 1] = lb_left
        top += 2
    if unknown_depth:
        return np.nan, nan3(), nan3(), nan3()
    return best


@njit(cache=True, nogil=True)
def shape_box_in_mesh(ks, ps, pts, t_rel, bounds):
    """The shape's own box (in its frame, where it is tight) carried into the mesh's frame by
    ``t_rel`` (rows 0-2 read): ``bounds (25,)`` gets that box (``[0:15]``: center, axis rows,
    half extents; mesh_core's ``obb``), then the local box (6) and ball (4). Returns False for
    shapes without a finite box (rays, lines, planes and half-spaces): no box then."""
    if ks == kinds.PLANE or ks == kinds.HALFSPACE:  # shape_bounds' box of a plane is not a bound
        return False
    obb = bounds[0:15]
    local_box = bounds[15:21]
    local_ball = bounds[21:25]
    shape_bounds(ks, ps, pts, local_box, local_ball)
    for i in range(6):
        if not np.isfinite(local_box[i]):
            return False
    if ks == kinds.SPHERE or ks == kinds.CAPSULE:  # shape_bounds of a point core omits r
        for i in range(3):
            local_box[i] -= ps[0] if ks == kinds.SPHERE else 0.0
            local_box[3 + i] += ps[0] if ks == kinds.SPHERE else 0.0
    for i in range(3):
        c = 0.5 * (local_box[i] + local_box[3 + i])
        obb[12 + i] = 0.5 * (local_box[3 + i] - local_box[i])
        for r in range(3):
            obb[3 + 3 * i + r] = t_rel[r, i]  # axis i of the shape = column i of the rotation
        local_ball[i] = c
    for r in range(3):
        obb[r] = (t_rel[r, 0] * local_ball[0] + t_rel[r, 1] * local_ball[1] + t_rel[r, 2] * local_ball[2]
                  + t_rel[r, 3])
    return True


@njit(cache=True, nogil=True)
def root_apart(nb, obb, mesh_scale):
    """The shape's own box (``obb``, in the mesh's frame) is farther from the root's ball than
    twice mesh_core's largest rounding pad: no triangle meets the shape, and mesh_core would
    prune the root. A boolean query on a far pair answers here, before the shape is moved into
    the mesh's frame and the query's scratch is made (those were most of a far pair's ~2.5 us;
    a batch of far poses now costs a root test each)."""
    # every point of the box has coordinates within reach: mesh_core's pad is
    # PAD_RELATIVE * max(mesh_scale, the shape's largest coordinate) <= PAD_RELATIVE * max(mesh_scale, reach)
    reach = abs(obb[0]) + abs(obb[1]) + abs(obb[2]) + obb[12] + obb[13] + obb[14]
    return ball_box_gap(nb, 0, obb) > 2.0 * PAD_RELATIVE * max(mesh_scale, reach)


@njit(cache=True, nogil=True)
def shape_far_from_root(ks, ps, pts, ts, tm, nb, mesh_scale, placed):
    """root_apart for a shape at pose ``ts`` and a mesh at ``tm`` (``placed (41,)`` scratch):
    the drivers answer a far pair with it before calling the engine (~14 array arguments through
    the boundary, and the shape moved into the mesh's frame: most of a far pair's cost)."""
    t_rel = placed[0:16].reshape((4, 4))
    relative_into(ts, tm, t_rel)
    return shape_box_in_mesh(ks, ps, pts, t_rel, placed[16:41]) and root_apart(nb, placed[16:31], mesh_scale)


@njit(cache=True, nogil=True)
def _shape_into_mesh_frame(ks, ps, pts, ts, tm, bounds):
    """The distance engines' start: the shape's own box in the mesh's frame (``bounds (25,)``,
    shape_box_in_mesh), then the shape moved into that frame, a zero-area triangle as its
    longest edge. Returns (kind, params, points, use_obb)."""
    t_rel = relative_transform(ts, tm)
    use_obb = shape_box_in_mesh(ks, ps, pts, t_rel, bounds)
    ps, pts = transform_shape(ks, ps, pts, t_rel)
    ks, ps, pts = degenerate_triangle_as_segment(ks, ps, pts)
    return ks, ps, pts, use_obb


@njit(cache=True, nogil=True)
def _local_linear_distance(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                           stack, stack_lb):
    """pairs._ordered_core(shape, mesh) with the tree for a segment, capsule, ray or line (and a
    zero-area triangle, its longest edge): mesh_core with linear_triangle_term."""
    if not (kinds.SEGMENT <= ks <= kinds.LINE or ks == kinds.TRIANGLE and int(ps[1]) == 0) or boolean:
        raise ValueError("the linear distance engine answers a segment's, capsule's, ray's or line's distance only")
    bounds = np.empty(25)  # one allocation: the box in the mesh's frame, and the local box and ball
    ks, ps, pts, use_obb = _shape_into_mesh_frame(ks, ps, pts, ts, tm, bounds)
    return mesh_core(ks, ps, pts, trs, eds, ni, nb, tv, ids, mesh_scale, stack, stack_lb, bounds[0:15], use_obb,
                     _linear_distance_term)


@njit(cache=True, nogil=True)
def _local_polytope_distance(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale,
                             boolean, stack, stack_lb):
    """pairs._ordered_core(shape, mesh) with the tree for a polytope (a triangle of nonzero area,
    tetrahedron, box, polygon, polyhedron): mesh_core with polytope_triangle_distance (GJK for a
    separated triangle, the SAT depth for an overlapping one); a plane or half-space by the
    brute force's scan of the mesh's vertices."""
    polytope = kinds.TRIANGLE <= ks <= kinds.POLYHEDRON and not (ks == kinds.TRIANGLE and int(ps[1]) == 0)
    if not (polytope or ks == kinds.PLANE or ks == kinds.HALFSPACE) or boolean:
        raise ValueError("the polytope distance engine answers a polytope's, plane's or half-space's distance only")
    bounds = np.empty(25)
    ks, ps, pts, use_obb = _shape_into_mesh_frame(ks, ps, pts, ts, tm, bounds)
    if ks == kinds.PLANE or ks == kinds.HALFSPACE:  # brute force: a scan of the mesh's vertices
        normal = pts[1]
        offset = normal[0] * pts[0, 0] + normal[1] * pts[0, 1] + normal[2] * pts[0, 2]
        signed, point_m, point_p, normal_mp = mesh_vs_plane(mesh_points, mesh_tris, normal, offset,
                                                             ks == kinds.HALFSPACE)
        return signed, point_p, point_m, -normal_mp
    return mesh_core(ks, ps, pts, trs, eds, ni, nb, tv, ids, mesh_scale, stack, stack_lb, bounds[0:15], use_obb,
                     _polytope_distance_term)


@njit(cache=True, nogil=True)
def _local_curved_distance(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                           stack, stack_lb):
    """pairs._ordered_core(shape, mesh) with the tree for a cylinder, cone, ellipsoid, rounded
    shape or tapered capsule: mesh_core with smooth_triangle_distance (GJK, EPA)."""
    if not (kinds.CYLINDER <= ks <= kinds.TAPERED_CAPSULE) or boolean:
        raise ValueError("the curved distance engine answers a cylinder's, cone's, ellipsoid's, rounded shape's or "
                         "tapered capsule's distance only")
    bounds = np.empty(25)
    ks, ps, pts, use_obb = _shape_into_mesh_frame(ks, ps, pts, ts, tm, bounds)
    return mesh_core(ks, ps, pts, trs, eds, ni, nb, tv, ids, mesh_scale, stack, stack_lb, bounds[0:15], use_obb,
                     _curved_distance_term)


@njit(cache=True, nogil=True)
def _local_point_distance(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                          stack, stack_lb):
    """pairs._ordered_core(shape, mesh) with the tree for a point or a sphere: its center moved
    into the mesh's frame (as transform_shape moves it), then point_core_distance."""
    if ks > kinds.SPHERE or boolean:
        raise ValueError("the point distance engine answers a sphere's or a point's distance only")
    ps, pts = transform_shape(ks, ps, pts, relative_transform(ts, tm))
    return point_core_distance(ks, ps, pts, ni, nb, tv, ids, mesh_scale, stack, stack_lb)


_F1, _F2, _F3 = _types.float64[::1], _types.float64[:, ::1], _types.float64[:, :, ::1]
_I1, _I2 = _types.int64[::1], _types.int64[:, ::1]
# the mesh-vs-shape core behind a boundary (jit.KernelInterface): compiled once, called through its
# address by the four drivers below (``engine`` = distance_engine_address(...)) and by the robot's pair
# table. The return type is declared, so typing a caller compiles nothing behind it: a kernel
# that may call the engine (the pair table) stays cheap to compile when it never does.
MESH_INTERFACE = KernelInterface(
    "mesh engine",
    (_types.int64, _F1, _F2, _I2, _I2, _F2, _F2, _I2, _F2, _I2, _F2, _F3, _I1, _types.float64, _types.boolean, _I1, _F1),
    _types.Tuple((_types.float64, _F1, _F1, _F1)),
)
# distances, one engine per shape family (intersects takes bvh_shape_boolean's engines)
MESH_POINT_DISTANCE_ENGINE = MESH_INTERFACE.implement(_local_point_distance)  # spheres, points
MESH_LINEAR_DISTANCE_ENGINE = MESH_INTERFACE.implement(_local_linear_distance)  # segments, capsules, rays, lines
MESH_POLYTOPE_DISTANCE_ENGINE = MESH_INTERFACE.implement(_local_polytope_distance)  # polytopes, planes, half-spaces
MESH_CURVED_DISTANCE_ENGINE = MESH_INTERFACE.implement(_local_curved_distance)  # cylinders, cones, ellipsoids, ...
call_mesh_engine = MESH_INTERFACE.call  # kernels call the intrinsic by a global name


def distance_engine_address(kind, params):
    """The engine address for a distance query of a shape of ``kind`` (packed ``params``)
    against a mesh: one per family (points and spheres; linear shapes and zero-area triangles;
    polytopes, planes and half-spaces; curved shapes), so a first query compiles its family's
    alone. Intersects takes ``bvh_shape_boolean.boolean_engine_address``."""
    if kind <= kinds.SPHERE:
        return MESH_POINT_DISTANCE_ENGINE.address()
    if kind <= kinds.LINE or kind == kinds.TRIANGLE and int(params[1]) == 0:
        return MESH_LINEAR_DISTANCE_ENGINE.address()
    if kinds.CYLINDER <= kind <= kinds.TAPERED_CAPSULE:
        return MESH_CURVED_DISTANCE_ENGINE.address()
    return MESH_POLYTOPE_DISTANCE_ENGINE.address()


@njit(cache=True, nogil=True)
def mesh_pair_distance(engine, ks, ps, pts, trs, eds, ss, ts, mesh_points, mesh_tris, ms, tm, ni, nb, tv, ids, shape_is_a,
                       stack, stack_lb):
    """pairs.pair_distance for (shape, mesh) (``shape_is_a``) or (mesh, shape): signed distance,
    world points (A's, B's), normal A -> B, status."""
    tolerance = touching_tolerance(ss, ts, ms, tm)
    signed, point_s, point_m, normal = call_mesh_engine(engine, (ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm,
                                                                 ni, nb, tv, ids, ms, False, stack, stack_lb))
    if shape_is_a:
        point_a = point_s
        point_b = point_m
    else:
        point_a = point_m
        point_b = point_s
        normal = -normal
    return (signed, apply_point(tm, point_a), apply_point(tm, point_b), apply_vector(tm, normal),
            status_of(signed, tolerance))


@njit(cache=True, nogil=True)
def mesh_pair_intersects(engine, ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, ms, tm, ni, nb, tv, ids, stack, stack_lb):
    """pairs.pair_intersects for a shape and a mesh (symmetric)."""
    signed = call_mesh_engine(engine, (ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, ms, True,
                                       stack, stack_lb))[0]
    return not (signed > 0.0)


@strict_entry
@njit(cache=True, nogil=True)
def checked_mesh_distance_into(engine, ks, ps, pts, trs, eds, ss, ts, mesh_points, mesh_tris, ms, tm, ni, nb, tv, ids, depth,
                               shape_is_a, out):
    """One pair from Python (poses unchecked): fills ``out (10,)`` as batch.checked_distance_into
    and returns the status, or INVALID_POSE_A / _B."""
    bad = invalid_pose(ts, tm)
    if bad:
        return bad if shape_is_a else INVALID_POSE_A + INVALID_POSE_B - bad  # the mesh is A
    stack = np.empty(depth + 2, dtype=np.int64)
    stack_lb = np.empty(depth + 2)
    signed, point_a, point_b, normal, status = mesh_pair_distance(
        engine, ks, ps, pts, trs, eds, ss, ts, mesh_points, mesh_tris, ms, tm, ni, nb, tv, ids, shape_is_a, stack, stack_lb)
    fill_distance(out, signed, point_a, point_b, normal)
    return status


@strict_entry
@njit(cache=True, nogil=True)
def checked_mesh_intersects_one(engine, ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, ms, tm, ni, nb, tv, ids, depth,
                                shape_is_a):
    """1 / 0, or INVALID_POSE_A / _B."""
    bad = invalid_pose(ts, tm)
    if bad:
        return bad if shape_is_a else INVALID_POSE_A + INVALID_POSE_B - bad  # the mesh is A
    if shape_far_from_root(ks, ps, pts, ts, tm, nb, ms, np.empty(41)):
        return 0
    stack = np.empty(depth + 2, dtype=np.int64)
    stack_lb = np.empty(depth + 2)
    hit = mesh_pair_intersects(engine, ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, ms, tm, ni, nb, tv, ids, stack,
                               stack_lb)
    return 1 if hit else 0


@njit(cache=True, nogil=True)
def mesh_distance_many(engine, ks, ps, pts, trs, eds, ss, tss, mesh_points, mesh_tris, ms, tms, ni, nb, tv, ids, depth,
                       shape_is_a, out_signed, out_point_a, out_point_b, out_normal, out_status, lo, hi):
    """Pairs lo .. hi - 1 of a batch (poses (n|1, 4, 4) each, broadcast, validated by the caller;
    run through touche._parallel.run): as batch.distance_many."""
    ps, pts, trs, eds, tss = borrowed(ps), borrowed(pts), borrowed(trs), borrowed(eds), borrowed(tss)
    mesh_points, mesh_tris, tms = borrowed(mesh_points), borrowed(mesh_tris), borrowed(tms)
    ni, nb, tv, ids = borrowed(ni), borrowed(nb), borrowed(tv), borrowed(ids)
    out_signed, out_status = borrowed(out_signed), borrowed(out_status)
    out_point_a, out_point_b, out_normal = borrowed(out_point_a), borrowed(out_point_b), borrowed(out_normal)
    step_s = 1 if tss.shape[0] > 1 else 0
    step_m = 1 if tms.shape[0] > 1 else 0
    # one traversal stack per chunk (mesh_core writes every entry before reading it)
    stack = np.empty(depth + 2, dtype=np.int64)
    stack_lb = np.empty(depth + 2)
    for i in range(lo, hi):
        result = mesh_pair_distance(engine, ks, ps, pts, trs, eds, ss, tss[i * step_s], mesh_points, mesh_tris, ms,
                                    tms[i * step_m], ni, nb, tv, ids, shape_is_a, stack, stack_lb)
        store_distance(i, result, out_signed, out_point_a, out_point_b, out_normal, out_status)


@njit(cache=True, nogil=True)
def mesh_intersects_many(engine, ks, ps, pts, trs, eds, tss, mesh_points, mesh_tris, ms, tms, ni, nb, tv, ids, depth, out,
                         lo, hi):
    """Pairs lo .. hi - 1 of a batch boolean (poses broadcast, validated by the caller; run through
    touche._parallel.run)."""
    ps, pts, trs, eds, tss = borrowed(ps), borrowed(pts), borrowed(trs), borrowed(eds), borrowed(tss)
    mesh_points, mesh_tris, tms = borrowed(mesh_points), borrowed(mesh_tris), borrowed(tms)
    ni, nb, tv, ids, out = borrowed(ni), borrowed(nb), borrowed(tv), borrowed(ids), borrowed(out)
    step_s = 1 if tss.shape[0] > 1 else 0
    step_m = 1 if tms.shape[0] > 1 else 0
    stack = np.empty(depth + 2, dtype=np.int64)  # one traversal stack per chunk
    stack_lb = np.empty(depth + 2)
    placed = np.empty(41)
    for i in range(lo, hi):
        if shape_far_from_root(ks, ps, pts, tss[i * step_s], tms[i * step_m], nb, ms, placed):
            out[i] = False
            continue
        out[i] = mesh_pair_intersects(engine, ks, ps, pts, trs, eds, tss[i * step_s], mesh_points, mesh_tris, ms,
                                      tms[i * step_m], ni, nb, tv, ids, stack, stack_lb)
