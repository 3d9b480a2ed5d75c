"""Booleans of one shape against a mesh through the mesh's BVH: one small engine per shape family
behind bvh_shape's mesh interface (``MESH_INTERFACE``, the same signature as ``MESH_ENGINE``).

``bvh_shape._local`` answers every kind, distances and booleans, in one kernel that holds GJK's
distance, EPA and every kind's triangle term: a first ``intersects`` compiled all of it (~2.5
minutes on an empty cache on the 2-core machine). ``intersects`` takes the engine of its shape's
family instead (``boolean_engine_address``), each the boolean branches of ``bvh_shape.mesh_core``
for that family:

- a box: the triangle-OBB test (``_local_box_boolean``);
- a sphere or a point: the closest point of each triangle within the radius (``_local_point_boolean``);
- a segment, capsule, ray or line: ``linear_triangle_term`` (``_local_linear_boolean``);
- every other kind: the polytope SAT or GJK's boolean, planes by the vertex scan
  (``_local_convex_boolean``).

Each gives ``_local``'s answer: the same triangle test on the same arithmetic (the shape moved as
``transform_shape`` moves it); only prefilters are left out, and every pruning test is
conservative by mesh_core's rounding pad. The traversal tests a node when it is popped, so the
stack holds at most depth + 1 nodes (the drivers allocate depth + 2).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.trees.bvh_volumes import AABB_MAX, AABB_MIN, SPHERE_CENTER, SPHERE_RADIUS  # noqa: E402
from touche._kernels.narrow.pairs import relative_transform  # noqa: E402
from touche._kernels.narrow.pair_closed import box_center_half, core_radius, linear_core, nan3  # noqa: E402
from touche._kernels.narrow.pair_closed import transform_shape  # noqa: E402
from touche._kernels.primitives.overlap import test_triangle_obb  # noqa: E402
from touche._kernels.primitives.closest import closest_point_triangle_xyz  # noqa: E402
from touche._kernels.narrow.pair_mesh import degenerate_triangle_as_segment, linear_triangle_term  # noqa: E402
from touche._kernels.narrow.pair_mesh import mesh_vs_plane, polytope_triangle_term  # noqa: E402
from touche._kernels.narrow.pair_mesh import TRIANGLE_SCRATCH_FLOATS, smooth_triangle_overlaps  # noqa: E402
from touche._kernels.narrow.pair_mesh import triangle_scratch_views  # noqa: E402
from touche._kernels.narrow.bvh_shape import CORE_LINEAR, CORE_POLYTOPE, MESH_INTERFACE  # noqa: E402
from touche._kernels.narrow.bvh_shape import PAD_RELATIVE, node_gap, shape_bounds, shape_box_in_mesh  # noqa: E402
from touche._kernels.narrow.bvh_shape import ball_box_gap, bounding_segment, box_axes_gap, core_of, obb_apart  # noqa: E402
from touche._kernels.narrow.bvh_shape import root_apart, triangle_apart, triangle_segment_gap  # noqa: E402
from touche._kernels.narrow.bvh_shape import unit_normal  # noqa: E402


@njit(cache=True, nogil=True)
def _local_box_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                       stack, stack_lb):
    """MESH_ENGINE for a box in a boolean query: mesh_core's box path alone (the root test, the
    nodes' ball and OBB tests, ``test_triangle_obb`` on the triangles of the nodes left). A
    first box-mesh ``intersects`` compiles this (seconds) instead of the whole engine, whose
    GJK, EPA and per-kind terms took ~2 minutes on an empty cache. Same answer as ``_local``:
    the same triangle test on the same box frame (transform_shape's arithmetic); the pruning
    differs only in skipping bounds, each conservative by ``pad``."""
    missing = nan3()
    if ks != kinds.BOX or not boolean:
        raise ValueError("the box engine answers a box's boolean query only")
    t_rel = relative_transform(ts, tm)
    frame = np.empty(24)  # obb (15: center, axis rows, half extents), then the axes as columns
    obb = frame[0:15]
    axes = frame[15:24].reshape((3, 3))
    nv = int(ps[0])
    center, half = box_center_half(ps)
    for i in range(3):
        obb[i] = t_rel[i, 0] * center[0] + t_rel[i, 1] * center[1] + t_rel[i, 2] * center[2] + t_rel[i, 3]
        obb[12 + i] = half[i]
        normal = pts[nv + i]  # the box's +x, +y, +z (box_frame), moved as transform_shape moves it
        for r in range(3):
            moved = t_rel[r, 0] * normal[0] + t_rel[r, 1] * normal[1] + t_rel[r, 2] * normal[2]
            obb[3 + 3 * i + r] = moved
            axes[r, i] = moved
    if root_apart(nb, obb, mesh_scale):
        return np.inf, missing, missing, missing
    box_center = obb[0:3]
    # mesh_core's pad is PAD_RELATIVE * max(mesh_scale, the box's largest coordinate); reach bounds it
    reach = abs(obb[0]) + abs(obb[1]) + abs(obb[2]) + obb[12] + obb[13] + obb[14]
    pad = PAD_RELATIVE * max(mesh_scale, reach)
    stack[0] = 0
    top = 1
    while top > 0:  # each node is tested when popped: the stack holds at most depth + 1 nodes
        top -= 1
        node = stack[top]
        if ball_box_gap(nb, node, obb) - pad > 0.0 or obb_apart(nb, node, obb, pad):
            continue
        if ni[node, 2] < 0:
            for k in range(ni[node, 0], ni[node, 0] + ni[node, 1]):
                if test_triangle_obb(tv[k, 0], tv[k, 1], tv[k, 2], box_center, axes, half):
                    return -1.0, missing, missing, missing
            continue
        stack[top] = ni[node, 2]
        stack[top + 1] = node + 1
        top += 2
    return np.inf, missing, missing, missing


@njit(cache=True, nogil=True)
def _local_point_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                         stack, stack_lb):
    """MESH_ENGINE for a sphere or a point in a boolean query: mesh_core's point-core path alone
    (a node is pruned when its box or ball is farther than the radius, plus pad; a triangle
    meets the shape when its closest point is within the radius). As ``_local_box_boolean``,
    the same answer as ``_local`` from a kernel that compiles in about a second."""
    missing = nan3()
    if ks > kinds.SPHERE or not boolean:
        raise ValueError("the point engine answers a sphere's or a point's boolean query only")
    radius = core_radius(ks, ps)
    center = np.empty(3)  # moved into the mesh's frame as transform_shape moves a point
    t_rel = relative_transform(ts, tm)
    size = 0.0
    for i in range(3):
        center[i] = t_rel[i, 0] * pts[0, 0] + t_rel[i, 1] * pts[0, 1] + t_rel[i, 2] * pts[0, 2] + t_rel[i, 3]
        size = max(size, abs(center[i]))
    cx, cy, cz = center[0], center[1], center[2]
    pad = PAD_RELATIVE * max(mesh_scale, size)  # mesh_core's pad (shape_bounds' size of a point core)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        g2 = 0.0
        for i in range(3):
            gap = max(nb[node, AABB_MIN + i] - center[i], center[i] - nb[node, AABB_MAX + i])
            if gap > 0.0:
                g2 += gap * gap
        qx = nb[node, SPHERE_CENTER] - cx
        qy = nb[node, SPHERE_CENTER + 1] - cy
        qz = nb[node, SPHERE_CENTER + 2] - cz
        if max(np.sqrt(g2), np.sqrt(qx * qx + qy * qy + qz * qz) - nb[node, SPHERE_RADIUS]) - pad > radius:
            continue
        if ni[node, 2] < 0:
            for k in range(ni[node, 0], ni[node, 0] + ni[node, 1]):
                x, y, z = closest_point_triangle_xyz(cx, cy, cz, tv[k, 0, 0], tv[k, 0, 1], tv[k, 0, 2], tv[k, 1, 0],
                                                     tv[k, 1, 1], tv[k, 1, 2], tv[k, 2, 0], tv[k, 2, 1], tv[k, 2, 2])
                if np.sqrt((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2) <= radius:
                    return -1.0, missing, missing, missing
            continue
        stack[top] = ni[node, 2]
        stack[top + 1] = node + 1
        top += 2
    return np.inf, missing, missing, missing


@njit(cache=True, nogil=True, inline="always")
def _boolean_prunes(nb, node, core, box, ball, p, d, lo, hi, seg_radius, obb, use_obb, pad):
    """A boolean query skips node ``node``: its bounds (node_gap, and the ball against the
    shape's own box when it has one) are apart by more than ``pad``, or its OBB misses the
    shape's box (mesh_core's pruning of a boolean query)."""
    gap = node_gap(nb, node, core, box, ball, p, d, lo, hi, seg_radius)
    if use_obb:
        gap = max(gap, ball_box_gap(nb, node, obb))
    return gap - pad > 0.0 or use_obb and obb_apart(nb, node, obb, pad)


@njit(cache=True, nogil=True)
def _linear_boolean(ks, ps, pts, ni, nb, tv, mesh_scale, stack, obb, use_obb):
    """mesh_core's boolean for a linear core (segment, capsule, ray, line) already in the mesh's
    frame: nodes pruned by their box and ball against the capsule of the core and, for a finite
    shape (``use_obb``), by its own box ``obb (15,)`` as mesh_core prunes them; triangles by
    their ball, the box's axes and their normal (the capsule's extent along it, exact), then
    ``linear_triangle_term``, whose NaN (a ray or line through a triangle) is a hit. True when
    some triangle meets the shape."""
    bounds = np.empty(10)  # the core's box (6) and ball (4; unused by a linear core)
    box = bounds[0:6]
    ball = bounds[6:10]
    size = shape_bounds(ks, ps, pts, box, ball)
    pad = PAD_RELATIVE * max(mesh_scale, size)  # mesh_core's
    radius = core_radius(ks, ps)
    p, d, lo, hi = linear_core(ks, pts)
    stack[0] = 0
    top = 1
    while top > 0:  # each node is tested when popped: the stack holds at most depth + 1 nodes
        top -= 1
        node = stack[top]
        if _boolean_prunes(nb, node, CORE_LINEAR, box, ball, p, d, lo, hi, radius, obb, use_obb, pad):
            continue
        if ni[node, 2] < 0:
            for k in range(ni[node, 0], ni[node, 0] + ni[node, 1]):
                a, b, c = tv[k, 0], tv[k, 1], tv[k, 2]
                if triangle_segment_gap(a, b, c, p, d, lo, hi, radius) > pad:
                    continue
                if use_obb:
                    if box_axes_gap(a, b, c, obb) > pad:
                        continue
                    nx, ny, nz, length = unit_normal(a, b, c)
                    if length > 0.0:  # the capsule's extent along the normal: its two ends' +- radius
                        plane = nx * a[0] + ny * a[1] + nz * a[2]
                        end_lo = nx * (p[0] + lo * d[0]) + ny * (p[1] + lo * d[1]) + nz * (p[2] + lo * d[2])
                        end_hi = nx * (p[0] + hi * d[0]) + ny * (p[1] + hi * d[1]) + nz * (p[2] + hi * d[2])
                        if max(plane - max(end_lo, end_hi) - radius, min(end_lo, end_hi) - radius - plane) > pad:
                            continue
                if not (linear_triangle_term(ks, ps, pts, a, b, c, True)[0] > 0.0):
                    return True
            continue
        stack[top] = ni[node, 2]
        stack[top + 1] = node + 1
        top += 2
    return False


@njit(cache=True, nogil=True)
def _local_linear_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                          stack, stack_lb):
    """MESH_ENGINE for a segment, capsule, ray or line in a boolean query (a robot's capsule
    against a mesh part): ``_local``'s root test, then ``_linear_boolean``. As
    ``_local_box_boolean``, the same answer as ``_local`` without its GJK, EPA and the other
    kinds' terms."""
    missing = nan3()
    if not (kinds.SEGMENT <= ks <= kinds.LINE) or not boolean:
        raise ValueError("the linear engine answers a segment's, capsule's, ray's or line's boolean query only")
    t_rel = relative_transform(ts, tm)
    bounds = np.empty(25)  # the shape's box in the mesh's frame (15), its local box and ball
    use_obb = shape_box_in_mesh(ks, ps, pts, t_rel, bounds)  # False for rays and lines
    obb = bounds[0:15]
    if use_obb and root_apart(nb, obb, mesh_scale):
        return np.inf, missing, missing, missing
    ps, pts = transform_shape(ks, ps, pts, t_rel)
    if _linear_boolean(ks, ps, pts, ni, nb, tv, mesh_scale, stack, obb, use_obb):
        return -1.0, missing, missing, missing
    return np.inf, missing, missing, missing


@njit(cache=True, nogil=True)
def _local_convex_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                          stack, stack_lb):
    """MESH_ENGINE for the other shapes in a boolean query -- triangles, polytopes, cylinders,
    cones, ellipsoids, rounded and tapered shapes, planes and half-spaces: ``_local`` and
    mesh_core's boolean branches (the root test, the nodes' bounds and OBB test, the
    triangles' ``triangle_apart``, then the SAT of ``polytope_triangle_term`` or GJK's
    boolean), without the distance search's GJK and EPA."""
    missing = nan3()
    if ks <= kinds.LINE or ks == kinds.BOX or ks >= kinds.MESH or not boolean:
        raise ValueError("the convex engine answers a boolean query of a shape the other engines do not take")
    t_rel = relative_transform(ts, tm)
    scratch = np.empty(35 + TRIANGLE_SCRATCH_FLOATS)  # the box in the mesh's frame (25), the bounds (10), GJK's
    use_obb = shape_box_in_mesh(ks, ps, pts, t_rel, scratch[0:25])
    obb = scratch[0:15]
    if use_obb and root_apart(nb, obb, mesh_scale):
        return np.inf, missing, missing, missing
    ps, pts = transform_shape(ks, ps, pts, t_rel)
    ks, ps, pts = degenerate_triangle_as_segment(ks, ps, pts)
    if ks == kinds.PLANE or ks == kinds.HALFSPACE:  # _local's scan of the mesh's vertices
        normal = pts[1]
        offset = normal[0] * pts[0, 0] + normal[1] * pts[0, 1] + normal[2] * pts[0, 2]
        signed = mesh_vs_plane(mesh_points, mesh_tris, normal, offset, ks == kinds.HALFSPACE)[0]
        return signed, missing, missing, missing
    if ks == kinds.SEGMENT:  # a zero-area triangle, now its longest edge (inside the triangle's box)
        if _linear_boolean(ks, ps, pts, ni, nb, tv, mesh_scale, stack, obb, use_obb):
            return -1.0, missing, missing, missing
        return np.inf, missing, missing, missing
    core = core_of(ks)
    box = scratch[25:31]
    ball = scratch[31:35]
    size = shape_bounds(ks, ps, pts, box, ball)
    pad = PAD_RELATIVE * max(mesh_scale, size)
    p, d, lo, hi, seg_radius = bounding_segment(ks, ps, pts)  # a cylinder's or cone's axis
    gjk_identity, gjk_triangle_params, gjk_triangle, _, _ = triangle_scratch_views(scratch[35:])
    hints = np.zeros(2, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:  # each node is tested when popped: the stack holds at most depth + 1 nodes
        top -= 1
        node = stack[top]
        if _boolean_prunes(nb, node, core, box, ball, p, d, lo, hi, seg_radius, obb, use_obb, pad):
            continue
        if ni[node, 2] < 0:
            for k in range(ni[node, 0], ni[node, 0] + ni[node, 1]):
                a, b, c = tv[k, 0], tv[k, 1], tv[k, 2]
                if use_obb and triangle_apart(ks, ps, pts, a, b, c, obb, hints, p, d, lo, hi, seg_radius, pad):
                    continue
                if core == CORE_POLYTOPE:
                    if polytope_triangle_term(ks, ps, pts, trs, eds, a, b, c, True)[0] <= 0.0:
                        return -1.0, missing, missing, missing
                elif smooth_triangle_overlaps(ks, ps, pts, a, b, c, gjk_identity, gjk_triangle_params, gjk_triangle):
                    return -1.0, missing, missing, missing
            continue
        stack[top] = ni[node, 2]
        stack[top + 1] = node + 1
        top += 2
    return np.inf, missing, missing, missing


MESH_BOX_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_box_boolean)  # a box's intersects
MESH_POINT_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_point_boolean)  # a sphere's or a point's
MESH_LINEAR_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_linear_boolean)  # segments, capsules, rays, lines
MESH_CONVEX_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_convex_boolean)  # every other shape's intersects


def boolean_engine_address(kind):
    """The engine address for an intersects query of a shape of ``kind`` against a mesh: a box,
    a sphere or point, a linear shape each take a small engine, every other shape the convex
    one; none holds the distance search (GJK, EPA), so a first query compiles its own engine
    alone. ``bvh_shape.MESH_ENGINE`` answers distances (and booleans too: the tests' second opinion)."""
    if kind == kinds.BOX:
        return MESH_BOX_BOOLEAN_ENGINE.address()
    if kind <= kinds.SPHERE:
        return MESH_POINT_BOOLEAN_ENGINE.address()
    if kind <= kinds.LINE:
        return MESH_LINEAR_BOOLEAN_ENGINE.address()
    return MESH_CONVEX_BOOLEAN_ENGINE.address()
