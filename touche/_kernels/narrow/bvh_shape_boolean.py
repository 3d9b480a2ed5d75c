"""Booleans of one shape against a mesh through the mesh's BVH: one small engine per shape family
behind bvh_shape's mesh interface (``MESH_INTERFACE``, the signature of its distance engines).

The mesh engine was one kernel for every kind, distances and booleans, holding GJK's distance,
EPA and every kind's triangle term: a first ``intersects`` compiled all of it (~2.5 minutes on
an empty cache on the 2-core machine). ``intersects`` takes the engine
of its shape's family instead (``boolean_engine_address``), each the boolean branches that
``bvh_shape.mesh_core`` had for that family (stop 48; mesh_core is distances only since):

- a box: the triangle-OBB test (``_local_box_boolean``);
- a sphere or a point: the closest point of each triangle within the radius (``_local_point_boolean``);
- a segment, capsule, ray or line: ``linear_triangle_term`` (``_local_linear_boolean``);
- a triangle, tetrahedron, polygon or polyhedron: the polytope SAT; planes and half-spaces by
  the vertex scan (``_local_polytope_boolean``);
- a cylinder, cone, ellipsoid, rounded shape or tapered capsule: GJK's boolean
  (``_local_curved_boolean``).

Each gives the brute force's answer (pair_mesh's per-triangle boolean on every triangle): the
same triangle test on the same arithmetic (the shape moved as ``transform_shape`` moves it),
and every pruning test is conservative by mesh_core's rounding pad. The traversal tests a node when it is popped, so the
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
from touche._kernels.narrow.pair_mesh import mesh_vs_plane, polytope_triangle_overlaps  # noqa: E402
from touche._kernels.narrow.pair_mesh import TRIANGLE_SCRATCH_FLOATS, smooth_triangle_overlaps  # noqa: E402
from touche._kernels.narrow.pair_mesh import triangle_scratch_views  # noqa: E402
from touche._kernels.narrow.bvh_shape import CORE_LINEAR, MESH_INTERFACE  # noqa: E402
from touche._kernels.narrow.bvh_shape import PAD_RELATIVE, node_gap, shape_bounds, shape_box_in_mesh  # noqa: E402
from touche._kernels.narrow.bvh_shape import ball_box_gap, bounding_segment, box_axes_gap, core_of, obb_apart  # noqa: E402
from touche._kernels.narrow.bvh_shape import root_apart, triangle_segment_gap  # noqa: E402
from touche._kernels.narrow.bvh_shape import unit_normal  # noqa: E402
from touche._kernels.convex.support import margin_of, support_local  # noqa: E402


@njit(cache=True, nogil=True, inline="always")
def _triangle_apart(kind, params, points, a, b, c, obb, hints, p, d, lo, hi, seg_radius, pad):
    """Whether triangle abc is proven apart from the (finite) shape by more than ``pad`` without
    its exact test (GJK, SAT): by the capsule holding the shape (``seg_radius >= 0``, node_gap),
    the shape's box axes (``obb``), or the triangle's normal, along which the shape's own extent
    is taken (its two support points, margin included: exact for every finite shape) instead of
    its box's, so that a long cylinder lying along a surface is apart from the triangles under
    it though its box, turned about its axis, may reach through them."""
    if seg_radius >= 0.0 and triangle_segment_gap(a, b, c, p, d, lo, hi, seg_radius) > pad:
        return True
    if box_axes_gap(a, b, c, obb) > pad:
        return True
    nx, ny, nz, length = unit_normal(a, b, c)
    if length > 0.0:
        low, high = _extent_along(kind, params, points, nx, ny, nz, hints)
        plane = nx * a[0] + ny * a[1] + nz * a[2]
        return max(plane - high, low - plane) > pad
    return False


# not inlined: support_local is large, and two inlined copies doubled the mesh engine's compile
@njit(cache=True, nogil=True)
def _extent_along(kind, params, points, nx, ny, nz, hints):
    """(min, max) of n . y over the finite shape (its two support points, margin included)."""
    margin = margin_of(kind, params)
    hx, hy, hz = support_local(kind, params, points, nx, ny, nz, hints, 0)
    lx, ly, lz = support_local(kind, params, points, -nx, -ny, -nz, hints, 1)
    return nx * lx + ny * ly + nz * lz - margin, nx * hx + ny * hy + nz * hz + margin



@njit(cache=True, nogil=True)
def _local_box_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                       stack, stack_lb):
    """The mesh engine for a box in a boolean query: mesh_core's box path alone (the root test, the
    nodes' ball and OBB tests, ``test_triangle_obb`` on the triangles of the nodes left). A
    first box-mesh ``intersects`` compiles this (seconds) instead of the whole engine, whose
    GJK, EPA and per-kind terms took ~2 minutes on an empty cache. Same answer as the brute force:
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
        top = _push_children(ni, nb, stack, top, node, box_center[0], box_center[1], box_center[2])
    return np.inf, missing, missing, missing


@njit(cache=True, nogil=True)
def _local_point_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                         stack, stack_lb):
    """The mesh engine for a sphere or a point in a boolean query: mesh_core's point-core path alone
    (a node is pruned when its box or ball is farther than the radius, plus pad; a triangle
    meets the shape when its closest point is within the radius). As ``_local_box_boolean``,
    the brute force's answer from a kernel that compiles in about a second."""
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
        top = _push_children(ni, nb, stack, top, node, cx, cy, cz)
    return np.inf, missing, missing, missing


@njit(cache=True, nogil=True, inline="always")
def _push_children(ni, nb, stack, top, node, x, y, z):
    """Pushes the children of inner node ``node`` on ``stack`` (``top`` entries), the one whose
    ball's center is nearer (x, y, z) -- the shape's center -- on top, and returns the new
    top: an overlapping triangle is met sooner, and most queries of a shape resting on a surface
    hit and end there (a 12-point polyhedron against diff_ring.stl: 96 -> 46 us a query)."""
    left = node + 1
    right = ni[node, 2]
    left_d2 = ((nb[left, SPHERE_CENTER] - x) ** 2 + (nb[left, SPHERE_CENTER + 1] - y) ** 2
               + (nb[left, SPHERE_CENTER + 2] - z) ** 2)
    right_d2 = ((nb[right, SPHERE_CENTER] - x) ** 2 + (nb[right, SPHERE_CENTER + 1] - y) ** 2
                + (nb[right, SPHERE_CENTER + 2] - z) ** 2)
    if right_d2 < left_d2:
        left, right = right, left
    stack[top] = right
    stack[top + 1] = left
    return top + 2


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
    middle = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (lo if np.isfinite(lo) else 0.0)
    mx, my, mz = p[0] + middle * d[0], p[1] + middle * d[1], p[2] + middle * d[2]  # the children's order
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
        top = _push_children(ni, nb, stack, top, node, mx, my, mz)
    return False


@njit(cache=True, nogil=True)
def _local_linear_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                          stack, stack_lb):
    """The mesh engine for a segment, capsule, ray or line in a boolean query (a robot's capsule
    against a mesh part): the root test, then ``_linear_boolean``. As
    ``_local_box_boolean``, the brute force's answer without its GJK, EPA and the other
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
def _next_leaf(ni, nb, stack, top, core, box, ball, p, d, lo, hi, seg_radius, obb, use_obb, pad):
    """The walk of the convex engines: pops nodes off ``stack`` (``top`` entries), drops those
    ``_boolean_prunes`` proves apart, opens the others, and returns (the next leaf kept, top);
    (-1, 0) when the stack is empty. Each node is tested when popped: the stack holds at most
    depth + 1 nodes."""
    while top > 0:
        top -= 1
        node = stack[top]
        if _boolean_prunes(nb, node, core, box, ball, p, d, lo, hi, seg_radius, obb, use_obb, pad):
            continue
        if ni[node, 2] < 0:
            return node, top
        top = _push_children(ni, nb, stack, top, node, ball[0], ball[1], ball[2])
    return -1, 0


@njit(cache=True, nogil=True)
def _convex_in_mesh_frame(ks, ps, pts, ts, tm, nb, mesh_scale, scratch):
    """The convex engines' start: the shape's box in the mesh's frame (``scratch[0:25]``) and
    the root test, then the shape moved into the mesh's frame (a zero-area triangle becomes its
    longest edge, a segment). Returns (apart at the root, kind, params, points, use_obb)."""
    t_rel = relative_transform(ts, tm)
    use_obb = shape_box_in_mesh(ks, ps, pts, t_rel, scratch[0:25])
    if use_obb and root_apart(nb, scratch[0:15], mesh_scale):
        return True, ks, ps, pts, use_obb
    ps, pts = transform_shape(ks, ps, pts, t_rel)
    ks, ps, pts = degenerate_triangle_as_segment(ks, ps, pts)
    return False, ks, ps, pts, use_obb


@njit(cache=True, nogil=True)
def _walk_bounds(ks, ps, pts, mesh_scale, box, ball):
    """The bounds the convex engines prune by: the shape's box and ball (written), (core, pad,
    and the segment it lies near: p, d, lo, hi, seg_radius; -1 for none)."""
    size = shape_bounds(ks, ps, pts, box, ball)
    pad = PAD_RELATIVE * max(mesh_scale, size)
    p, d, lo, hi, seg_radius = bounding_segment(ks, ps, pts)  # a cylinder's or cone's axis
    return core_of(ks), pad, p, d, lo, hi, seg_radius


@njit(cache=True, nogil=True)
def _polytope_overlaps(ks, ps, pts, trs, eds, a, b, c, triangle_scratch):
    """The polytope engine's triangle test: the SAT stopping at the first separating axis, the
    triangle's polytope in ``triangle_scratch[0:42]`` (params 9, points 11 x 3)."""
    return polytope_triangle_overlaps(ks, ps, pts, trs, eds, a, b, c, triangle_scratch[0:9],
                                      triangle_scratch[9:42].reshape((11, 3)))


@njit(cache=True, nogil=True)
def _curved_overlaps(ks, ps, pts, trs, eds, a, b, c, triangle_scratch):
    """The curved engine's triangle test: GJK's boolean on triangle_scratch_views' arrays."""
    identity, triangle_params, triangle, _, _ = triangle_scratch_views(triangle_scratch)
    return smooth_triangle_overlaps(ks, ps, pts, a, b, c, identity, triangle_params, triangle)


# inline: each convex engine inlines it with its own triangle test (a known global once inlined:
# numba compiles that test alone, as bvh_shape.mesh_core does with its triangle terms)
@njit(cache=True, nogil=True, inline="always")
def _convex_walk(ks, ps, pts, trs, eds, ni, nb, tv, mesh_scale, stack, scratch, use_obb, triangle_overlaps):
    """The convex engines' search, the shape already in the mesh's frame (its box in
    ``scratch[0:15]``; ``scratch[25:35]`` takes its box and ball, ``scratch[35:]`` is the
    triangle test's): nodes by ``_next_leaf``, triangles by ``_triangle_apart``, then
    ``triangle_overlaps``. True at the first triangle that meets the shape."""
    obb = scratch[0:15]
    box = scratch[25:31]
    ball = scratch[31:35]
    core, pad, p, d, lo, hi, seg_radius = _walk_bounds(ks, ps, pts, mesh_scale, box, ball)
    triangle_scratch = scratch[35:]
    hints = np.zeros(2, dtype=np.int64)
    stack[0] = 0
    leaf, top = _next_leaf(ni, nb, stack, 1, core, box, ball, p, d, lo, hi, seg_radius, obb, use_obb, pad)
    while leaf >= 0:
        for k in range(ni[leaf, 0], ni[leaf, 0] + ni[leaf, 1]):
            a, b, c = tv[k, 0], tv[k, 1], tv[k, 2]
            if use_obb and _triangle_apart(ks, ps, pts, a, b, c, obb, hints, p, d, lo, hi, seg_radius, pad):
                continue
            if triangle_overlaps(ks, ps, pts, trs, eds, a, b, c, triangle_scratch):
                return True
        leaf, top = _next_leaf(ni, nb, stack, top, core, box, ball, p, d, lo, hi, seg_radius, obb, use_obb, pad)
    return False


@njit(cache=True, nogil=True)
def _local_polytope_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                            stack, stack_lb):
    """The mesh engine for a triangle, tetrahedron, polygon or polyhedron in a boolean query (and a
    plane or half-space: the scan of the mesh's vertices): the root test, the nodes' bounds and
    OBB test, the triangles' ``_triangle_apart``, then the SAT of ``polytope_triangle_term``
    (``polytope_triangle_overlaps``: the same axes, stopping at the first that separates).
    Neither GJK nor the curved kinds' support functions: the curved shapes have their own
    engine (``_local_curved_boolean``)."""
    missing = nan3()
    if not (kinds.TRIANGLE <= ks <= kinds.POLYHEDRON or ks == kinds.PLANE or ks == kinds.HALFSPACE) or ks == kinds.BOX \
            or not boolean:
        raise ValueError("the polytope engine answers a polytope's, plane's or half-space's boolean query only")
    # the box in the mesh's frame (25), the shape's box and ball (10), a triangle's polytope (9 + 33)
    scratch = np.empty(35 + 9 + 33)
    apart, ks, ps, pts, use_obb = _convex_in_mesh_frame(ks, ps, pts, ts, tm, nb, mesh_scale, scratch)
    obb = scratch[0:15]
    if apart:
        return np.inf, missing, missing, missing
    if ks == kinds.PLANE or ks == kinds.HALFSPACE:  # the distance engine's scan of the mesh's vertices
        normal = pts[1]
        offset = normal[0] * pts[0, 0] + normal[1] * pts[0, 1] + normal[2] * pts[0, 2]
        signed = mesh_vs_plane(mesh_points, mesh_tris, normal, offset, ks == kinds.HALFSPACE)[0]
        return signed, missing, missing, missing
    if ks == kinds.SEGMENT:  # a zero-area triangle, now its longest edge (inside the triangle's box)
        if _linear_boolean(ks, ps, pts, ni, nb, tv, mesh_scale, stack, obb, use_obb):
            return -1.0, missing, missing, missing
        return np.inf, missing, missing, missing
    if _convex_walk(ks, ps, pts, trs, eds, ni, nb, tv, mesh_scale, stack, scratch, use_obb, _polytope_overlaps):
        return -1.0, missing, missing, missing
    return np.inf, missing, missing, missing


@njit(cache=True, nogil=True)
def _local_curved_boolean(ks, ps, pts, trs, eds, ts, mesh_points, mesh_tris, tm, ni, nb, tv, ids, mesh_scale, boolean,
                          stack, stack_lb):
    """The mesh engine for a cylinder, cone, ellipsoid, rounded shape or tapered capsule in a
    boolean query: the root test, the nodes' bounds and OBB test, the triangles'
    ``_triangle_apart``, then GJK's boolean (``smooth_triangle_overlaps``), without the distance
    search's GJK and EPA or the polytopes' SAT."""
    missing = nan3()
    if not (kinds.CYLINDER <= ks <= kinds.TAPERED_CAPSULE) or not boolean:
        raise ValueError("the curved engine answers a cylinder's, cone's, ellipsoid's, rounded shape's or tapered "
                         "capsule's boolean query only")
    scratch = np.empty(35 + TRIANGLE_SCRATCH_FLOATS)  # the box in the mesh's frame (25), the bounds (10), GJK's
    apart, ks, ps, pts, use_obb = _convex_in_mesh_frame(ks, ps, pts, ts, tm, nb, mesh_scale, scratch)
    if apart:
        return np.inf, missing, missing, missing
    if _convex_walk(ks, ps, pts, trs, eds, ni, nb, tv, mesh_scale, stack, scratch, use_obb, _curved_overlaps):
        return -1.0, missing, missing, missing
    return np.inf, missing, missing, missing


MESH_BOX_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_box_boolean)  # a box's intersects
MESH_POINT_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_point_boolean)  # a sphere's or a point's
MESH_LINEAR_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_linear_boolean)  # segments, capsules, rays, lines
MESH_POLYTOPE_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_polytope_boolean)  # polytopes, planes, half-spaces
MESH_CURVED_BOOLEAN_ENGINE = MESH_INTERFACE.implement(_local_curved_boolean)  # cylinders, cones, ellipsoids, ...


def boolean_engine_address(kind):
    """The engine address for an intersects query of a shape of ``kind`` against a mesh: a box,
    a sphere or point, a linear shape, a polytope (planes and half-spaces with them), a curved
    shape each take their own engine; none holds the distance search (GJK, EPA), so a first
    query compiles its own engine alone. Distances: ``bvh_shape.distance_engine_address``."""
    if kind == kinds.BOX:
        return MESH_BOX_BOOLEAN_ENGINE.address()
    if kind <= kinds.SPHERE:
        return MESH_POINT_BOOLEAN_ENGINE.address()
    if kind <= kinds.LINE:
        return MESH_LINEAR_BOOLEAN_ENGINE.address()
    if kinds.CYLINDER <= kind <= kinds.TAPERED_CAPSULE:
        return MESH_CURVED_BOOLEAN_ENGINE.address()
    return MESH_POLYTOPE_BOOLEAN_ENGINE.address()
