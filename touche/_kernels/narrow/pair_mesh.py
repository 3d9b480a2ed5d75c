"""The pair engine's mesh terms: a core (point, linear element, polytope, smooth solid, plane)
against a triangle mesh's triangles, one triangle at a time (the brute force over a mesh that
pairs.py's mesh family and the BVH route in bvh_shape.py share), and a degenerate triangle as
the segment it reduces to.

Result convention: see pairs.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()

from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_point_triangle, closest_points_linear_linear
from touche._kernels.convex.gjk import BEYOND_CUTOFF, WITHIN, gjk_distance_within, gjk_pair_distance
from touche._kernels.convex.gjk import gjk_pair_intersects
from touche._kernels.primitives.overlap import test_triangle_obb
from touche._kernels.primitives.tri_distance import segment_triangle_distance_sq
from touche._kernels.base.vec import cross as _cross
from touche._kernels.base.vec import dot as _dot
from touche._kernels.base.vec import norm as _norm
from touche._kernels.narrow.pair_closed import any_perpendicular, box_frame, core_radius, finish_core_distance
from touche._kernels.narrow.pair_closed import linear_core, linear_vs_polytope, nan3, polytope_counts
from touche._kernels.narrow.pair_polytopes import polytope_vs_polytope
from touche._kernels.primitives.sat import sat_convex_separated


@njit(cache=True, nogil=True)
def point_triangle_term(c, a, b, cc):
    """One triangle of point_vs_mesh: (squared distance, closest point, unit face normal or +z
    for a zero-area triangle). The BVH route (bvh_shape.py) calls the same term."""
    candidate = closest_point_triangle(c, a, b, cc)
    d2 = (candidate[0] - c[0]) ** 2 + (candidate[1] - c[1]) ** 2 + (candidate[2] - c[2]) ** 2
    n = _cross(b - a, cc - a)
    length = _norm(n)
    if length > 0.0:
        return d2, candidate, n / length
    return d2, candidate, np.array([0.0, 0.0, 1.0])


@njit(cache=True, nogil=True)
def point_vs_mesh(c, r, points, triangles, first_hit):
    """Brute force (the reference of the BVH route): the nearest triangle, the first (lowest
    index) among equals."""
    best = np.inf
    q = c.copy()
    face_normal = np.array([0.0, 0.0, 1.0])
    for k in range(triangles.shape[0]):
        d2, candidate, normal = point_triangle_term(c, points[triangles[k, 0]], points[triangles[k, 1]],
                                                    points[triangles[k, 2]])
        if d2 < best:
            best = d2
            q = candidate
            face_normal = normal
            if first_hit and np.sqrt(d2) <= r:
                break
    return finish_core_distance(c, r, q, 0.0, face_normal, 0.0)


@njit(cache=True, nogil=True)
def _segment_triangle_verdict(points_a, radius, a, b, c):
    """-1: segment points_a[0..1] swept by ``radius`` is apart from triangle abc; 1: they overlap;
    0: within 1e-9 of the coordinates of touching, or a zero-area triangle (no verdict)."""
    p = points_a[0]
    q = points_a[1]
    d2, exact = segment_triangle_distance_sq(p[0], p[1], p[2], q[0], q[1], q[2],
                                             (a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2]))
    if not exact:
        return 0
    scale = radius
    for i in range(3):
        scale = max(scale, abs(p[i]), abs(q[i]), abs(a[i]), abs(b[i]), abs(c[i]))
    pad = 1e-9 * scale
    distance = np.sqrt(d2)
    if distance > radius + pad:
        return -1
    if distance < radius - pad:
        return 1
    return 0


@njit(cache=True, nogil=True)
def linear_triangle_term(kind_a, params_a, points_a, a, b, c, first_hit):
    """One triangle of linear_vs_mesh (also called by the BVH route, bvh_shape.py): the
    triangle as a solid triangle polytope (exact clip + SAT depth), a zero-area one as its longest
    edge. NaN: overlapping with no computed depth (a ray / line through the triangle).

    A boolean (``first_hit``) of a segment or capsule is first decided by the allocation-free
    segment-triangle distance (tri_distance): apart when it exceeds the radius by more than 1e-9
    of the coordinates, overlapping when it falls short by as much; in that band, or for a
    zero-area triangle, the polytope test below decides, as it always did."""
    if first_hit and (kind_a == kinds.SEGMENT or kind_a == kinds.CAPSULE):
        verdict = _segment_triangle_verdict(points_a, core_radius(kind_a, params_a), a, b, c)
        if verdict < 0:
            return np.inf, nan3(), nan3(), nan3()
        if verdict > 0:
            return -1.0, nan3(), nan3(), nan3()
    params_t, points_t, tris_t, edges_t = _triangle_polytope_arrays(a, b, c)
    if int(params_t[1]) == 0:
        # zero-area triangle: its longest edge, a segment (linear-linear, as _ordered_core does)
        p, d, lo, hi = linear_core(kind_a, points_a)
        r = core_radius(kind_a, params_a)
        _, _, segment = degenerate_triangle_as_segment(kinds.TRIANGLE, params_t, points_t)
        _, _, c1, c2 = closest_points_linear_linear(
            p, d, lo, hi, segment[0], segment[1] - segment[0], 0.0, 1.0
        )
        fallback = _cross(d, segment[1] - segment[0])
        length = _norm(fallback)
        fallback = fallback / length if length > 0.0 else any_perpendicular(d)
        return finish_core_distance(c1, r, c2, 0.0, fallback, 0.0)
    return linear_vs_polytope(
        kind_a, params_a, points_a, kinds.TRIANGLE, params_t, points_t, tris_t, edges_t, first_hit
    )


@njit(cache=True, nogil=True)
def linear_vs_mesh(kind_a, params_a, points_a, points, triangles, first_hit):
    """Linear element vs triangle soup, brute force (the reference of the BVH route): the
    nearest (or, overlapping, the deepest) triangle, the first among equals; NaN when some
    triangle overlaps with no computed depth, as for a Triangle.
    (Replaces a per-triangle crossing test that compared a reconstructed closest point with the
    crossing point for exact equality: round-off missed crossings and reported a distance.)"""
    best = (np.inf, nan3(), nan3(), nan3())
    unknown_depth = False
    for k in range(triangles.shape[0]):
        result = linear_triangle_term(kind_a, params_a, points_a, points[triangles[k, 0]], points[triangles[k, 1]],
                                      points[triangles[k, 2]], first_hit)
        if result[0] != result[0]:  # NaN: overlapping, depth not computed
            unknown_depth = True
            if first_hit:
                return -1.0, nan3(), nan3(), nan3()
            continue
        if first_hit and result[0] <= 0.0:
            return result
        if result[0] < best[0]:
            best = result
    if unknown_depth:
        return np.nan, nan3(), nan3(), nan3()
    return best


@njit(cache=True, nogil=True)
def triangle_polytope_into(a, b, c, params, points):
    """The packed polytope of triangle abc written into ``params (9,)`` and ``points (11, 3)``
    (vertices, unit normal, unit side normals, the normal negated, edge vectors; params: counts
    3, 5, 3, 4, the planes' offsets). False, nothing written, for a zero-area triangle. Scalar
    arithmetic, the same operations as base.vec's cross, norm and dot, in place: a boolean
    engine fills one scratch per query instead of five arrays per triangle."""
    ux = b[0] - a[0]
    uy = b[1] - a[1]
    uz = b[2] - a[2]
    vx = c[0] - a[0]
    vy = c[1] - a[1]
    vz = c[2] - a[2]
    nx = uy * vz - uz * vy
    ny = uz * vx - ux * vz
    nz = ux * vy - uy * vx
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    if length == 0.0:
        return False
    nx /= length
    ny /= length
    nz /= length
    for j in range(3):
        points[0, j] = a[j]
        points[1, j] = b[j]
        points[2, j] = c[j]
    params[0] = 3.0
    params[1] = 5.0
    params[2] = 3.0
    params[3] = 4.0
    points[3, 0] = nx
    points[3, 1] = ny
    points[3, 2] = nz
    params[4] = nx * a[0] + ny * a[1] + nz * a[2]
    for i in range(3):
        k = (i + 1) % 3
        ex = points[k, 0] - points[i, 0]
        ey = points[k, 1] - points[i, 1]
        ez = points[k, 2] - points[i, 2]
        sx = ey * nz - ez * ny
        sy = ez * nx - ex * nz
        sz = ex * ny - ey * nx
        side_length = np.sqrt(sx * sx + sy * sy + sz * sz)
        if side_length > 0.0:
            sx /= side_length
            sy /= side_length
            sz /= side_length
        points[4 + i, 0] = sx
        points[4 + i, 1] = sy
        points[4 + i, 2] = sz
        params[5 + i] = sx * points[i, 0] + sy * points[i, 1] + sz * points[i, 2]
        points[8 + i, 0] = ex
        points[8 + i, 1] = ey
        points[8 + i, 2] = ez
    points[7, 0] = -nx
    points[7, 1] = -ny
    points[7, 2] = -nz
    params[8] = -params[4]
    return True


@njit(cache=True, nogil=True)
def _triangle_polytope_arrays(a, b, c):
    """Packed polytope (params, points, triangles, edges) of one mesh triangle."""
    params = np.empty(4 + 5)
    points = np.empty((3 + 5 + 3, 3))
    if not triangle_polytope_into(a, b, c, params, points):
        params = np.array([3.0, 0.0, 3.0, 0.0])
        points = np.empty((6, 3))
        copy_into(points[0], a)
        copy_into(points[1], b)
        copy_into(points[2], c)
        for i in range(3):
            copy_into(points[3 + i], points[(i + 1) % 3] - points[i])
    triangles = np.zeros((1, 3), dtype=np.int64)
    triangles[0, 1] = 1
    triangles[0, 2] = 2
    edges = np.zeros((3, 2), dtype=np.int64)
    for i in range(3):
        edges[i, 0] = i
        edges[i, 1] = (i + 1) % 3
    return params, points, triangles, edges


@njit(cache=True, nogil=True)
def polytope_triangle_term(kind_a, params_a, points_a, tris_a, edges_a, a, b, c, boolean):
    """One triangle of convex_vs_mesh (also called by the BVH route, bvh_shape.py). Boolean
    box: (-1, NaN..) on overlap, (inf, NaN..) otherwise (triangle-OBB SAT only)."""
    if boolean and kind_a == kinds.BOX:
        center, axes, half = box_frame(params_a, points_a)
        if test_triangle_obb(a, b, c, center, axes, half):
            return -1.0, nan3(), nan3(), nan3()
        return np.inf, nan3(), nan3(), nan3()
    params_t, points_t, tris_t, edges_t = _triangle_polytope_arrays(a, b, c)
    if int(params_t[1]) == 0:
        # zero-area triangle: it is its longest edge, a segment (flip the segment-first result)
        _, _, segment = degenerate_triangle_as_segment(kinds.TRIANGLE, params_t, points_t)
        flipped = linear_vs_polytope(
            kinds.SEGMENT, params_t[:0], segment, kind_a, params_a, points_a, tris_a, edges_a, boolean
        )
        return flipped[0], flipped[2], flipped[1], -flipped[3]
    return polytope_vs_polytope(
        kind_a, params_a, points_a, tris_a, edges_a, kinds.TRIANGLE, params_t, points_t, tris_t, edges_t, boolean
    )


@njit(cache=True, nogil=True)
def polytope_triangle_overlaps(kind, params, points, tris, edges, a, b, c, triangle_params, triangle_points):
    """``polytope_triangle_term(..., True)[0] <= 0.0`` for a polytope other than a box (the box
    engine has the triangle-OBB test): the same SAT axes and arithmetic (sat.sat_convex_separated)
    stopping at the first separating axis, the triangle's polytope written into the caller's
    ``triangle_params (9,)``, ``triangle_points (11, 3)``. A triangle shape (the triangle-triangle
    test) and a zero-area mesh triangle (a segment) take polytope_triangle_term."""
    if kind == kinds.TRIANGLE or not triangle_polytope_into(a, b, c, triangle_params, triangle_points):
        return polytope_triangle_term(kind, params, points, tris, edges, a, b, c, True)[0] <= 0.0
    nv, npl, nd, ns = polytope_counts(params)
    # the triangle's SAT rows (polytope_counts of its params): normals 3:7 (the normal, the sides), edges 8:11
    return not sat_convex_separated(points[:nv], points[nv + npl:nv + npl + nd], points[nv:nv + ns],
                                    triangle_points[:3], triangle_points[8:11], triangle_points[3:7])


@njit(cache=True, nogil=True)
def mesh_vs_plane(points, triangles, normal, offset, halfspace):
    """Mesh (A) vs plane: extremes over the vertices that faces use."""
    low = np.inf
    high = -np.inf
    low_point = points[0]
    high_point = points[0]
    for k in range(triangles.shape[0]):
        for j in range(3):
            v = points[triangles[k, j]]
            value = _dot(normal, v)
            if value < low:
                low = value
                low_point = v
            if value > high:
                high = value
                high_point = v
    if low > offset:
        gap = low - offset
        return gap, low_point.copy(), low_point - gap * normal, -normal
    if not halfspace and high < offset:
        gap = offset - high
        return gap, high_point.copy(), high_point + gap * normal, normal.copy()
    below = offset - low
    above = high - offset
    if halfspace or below <= above:
        return -below, low_point.copy(), low_point + below * normal, -normal
    return -above, high_point.copy(), high_point - above * normal, normal.copy()


@njit(cache=True, nogil=True)
def triangle_scratch():
    """What GJK takes for one triangle of a mesh, made once per query: (identity (4, 4),
    triangle params (4,), triangle points (3, 3), GJK's relative placement (4, 4), simplex
    (4, 10) and hill-climbing hints (2,) int64)."""
    identity, triangle_params, triangle, placement, simplex = triangle_scratch_views(np.empty(TRIANGLE_SCRATCH_FLOATS))
    return identity, triangle_params, triangle, placement, simplex, np.zeros(2, dtype=np.int64)


TRIANGLE_SCRATCH_FLOATS = 85  # the float arrays of triangle_scratch, one after the other


@njit(cache=True, nogil=True, inline="always")
def triangle_scratch_views(buffer):
    """triangle_scratch()'s float arrays as views of ``buffer`` (C-contiguous, at least
    TRIANGLE_SCRATCH_FLOATS), identity and triangle params filled: one allocation instead of
    five, for a caller that makes other scratch in the same buffer."""
    identity = buffer[0:16].reshape((4, 4))
    triangle_params = buffer[16:20]
    for i in range(16):
        buffer[i] = 0.0
    for i in range(4):
        identity[i, i] = 1.0
        triangle_params[i] = 0.0
    triangle_params[0] = 3.0
    return identity, triangle_params, buffer[20:29].reshape((3, 3)), buffer[29:45].reshape((4, 4)), buffer[45:85].reshape(
        (4, 10))


@njit(cache=True, nogil=True, inline="always")
def _load_triangle(triangle, a, b, c):
    for i in range(3):
        triangle[0, i] = a[i]
        triangle[1, i] = b[i]
        triangle[2, i] = c[i]


@njit(cache=True, nogil=True)
def smooth_triangle_overlaps(kind_a, params_a, points_a, a, b, c, identity, triangle_params, triangle):
    """Whether a smooth shape meets triangle abc (GJK in one frame), with triangle_scratch()'s
    arrays: the boolean of smooth_triangle_term without an allocation per triangle."""
    _load_triangle(triangle, a, b, c)
    return gjk_pair_intersects(kind_a, params_a, points_a, identity, kinds.TRIANGLE, triangle_params, triangle, identity)


@njit(cache=True, nogil=True)
def smooth_triangle_distance(kind_a, params_a, points_a, a, b, c, cutoff, identity, triangle_params, triangle, m,
                             simplex, hints):
    """smooth_triangle_term's distance (GJK / EPA in one frame) with triangle_scratch()'s arrays,
    or (inf, NaN..) once GJK proves the triangle farther than ``cutoff`` (a mesh search passes
    its best distance so far, padded: such a triangle cannot be the nearest). Otherwise the same
    numbers as smooth_triangle_term."""
    _load_triangle(triangle, a, b, c)
    state, signed, ax, ay, az, bx, by, bz, nx, ny, nz, _ = gjk_distance_within(
        kind_a, params_a, points_a, identity, kinds.TRIANGLE, triangle_params, triangle, identity, 0.0, cutoff, m,
        simplex, hints)
    if state == WITHIN:
        return signed, np.array((ax, ay, az)), np.array((bx, by, bz)), np.array((nx, ny, nz))
    if state == BEYOND_CUTOFF:
        return np.inf, nan3(), nan3(), nan3()
    # the cores overlap: EPA's depth (gjk_pair_distance runs GJK to the same simplex first)
    signed, point_a, point_b, normal, _, _ = gjk_pair_distance(
        kind_a, params_a, points_a, identity, kinds.TRIANGLE, triangle_params, triangle, identity, 0.0
    )
    return signed, point_a, point_b, normal


@njit(cache=True, nogil=True)
def smooth_triangle_term(kind_a, params_a, points_a, a, b, c, boolean):
    """One triangle of convex_vs_mesh (also called by the BVH route, bvh_shape.py): GJK / EPA
    in one frame. Boolean: (-1, NaN..) on overlap, (inf, NaN..) otherwise."""
    identity, triangle_params, triangle, m, simplex, hints = triangle_scratch()
    if boolean:
        if smooth_triangle_overlaps(kind_a, params_a, points_a, a, b, c, identity, triangle_params, triangle):
            return -1.0, nan3(), nan3(), nan3()
        return np.inf, nan3(), nan3(), nan3()
    return smooth_triangle_distance(kind_a, params_a, points_a, a, b, c, np.inf, identity, triangle_params, triangle,
                                    m, simplex, hints)


@njit(cache=True, nogil=True)
def polytope_triangle_distance(kind_a, params_a, points_a, tris_a, edges_a, a, b, c, cutoff, identity,
                               triangle_params, triangle, m, simplex, hints):
    """polytope_triangle_term's distance with triangle_scratch()'s arrays: GJK settles a
    separated triangle (as pairs.py does for two small polytopes: exact, and several times
    cheaper than enumerating the features) and stops early, (inf, NaN..), once it proves the
    triangle farther than ``cutoff`` >= 0; an overlapping or zero-area triangle goes to
    polytope_triangle_term (SAT depth; the longest edge).

    ``cutoff < 0`` (a search that already holds a triangle penetrating deeper than its pad):
    straight to the SAT depth. A triangle can then win only by penetrating deeper than
    -cutoff, which GJK never reports as separated, so its numbers are the cutoff-free ones;
    a separated triangle gets SAT's distance (>= 0) instead of GJK's, and loses either way."""
    ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    wx, wy, wz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    if cutoff >= 0.0 and (uy * wz - uz * wy != 0.0 or uz * wx - ux * wz != 0.0 or ux * wy - uy * wx != 0.0):
        _load_triangle(triangle, a, b, c)
        state, signed, ax, ay, az, bx, by, bz, nx, ny, nz, status = gjk_distance_within(
            kind_a, params_a, points_a, identity, kinds.TRIANGLE, triangle_params, triangle, identity, 0.0, cutoff,
            m, simplex, hints)
        if state == BEYOND_CUTOFF:
            return np.inf, nan3(), nan3(), nan3()
        if state == WITHIN and status == kinds.GJK_SEPARATED:
            return signed, np.array((ax, ay, az)), np.array((bx, by, bz)), np.array((nx, ny, nz))
    return polytope_triangle_term(kind_a, params_a, points_a, tris_a, edges_a, a, b, c, False)


@njit(cache=True, nogil=True)
def convex_vs_mesh(kind_a, params_a, points_a, tris_a, edges_a, points, triangles, boolean):
    """Polytope (SAT terms) or smooth shape (GJK / EPA terms) vs a triangle soup, brute force (the
    reference of the BVH route): the nearest (or, overlapping, the deepest) triangle, the first
    among equals."""
    smooth = kind_a > kinds.POLYHEDRON
    best = (np.inf, nan3(), nan3(), nan3())
    identity, triangle_params, triangle, m, simplex, hints = triangle_scratch()
    for k in range(triangles.shape[0]):
        a, b, c = points[triangles[k, 0]], points[triangles[k, 1]], points[triangles[k, 2]]
        if smooth:
            result = smooth_triangle_term(kind_a, params_a, points_a, a, b, c, boolean)
        elif boolean:
            result = polytope_triangle_term(kind_a, params_a, points_a, tris_a, edges_a, a, b, c, True)
        else:
            result = polytope_triangle_distance(kind_a, params_a, points_a, tris_a, edges_a, a, b, c, np.inf,
                                                identity, triangle_params, triangle, m, simplex, hints)
        if boolean:
            if result[0] <= 0.0:
                return result
            continue
        if result[0] < best[0]:
            best = result
    return best


@njit(cache=True, nogil=True)
def degenerate_triangle_as_segment(kind, params, points):
    """A zero-area triangle behaves as its longest edge (a segment)."""
    if kind == kinds.TRIANGLE and int(params[1]) == 0:
        best = -1.0
        seg = np.empty((2, 3))
        for i in range(3):
            a = points[i]
            b = points[(i + 1) % 3]
            length = _dot(b - a, b - a)
            if length > best:
                best = length
                copy_into(seg[0], a)
                copy_into(seg[1], b)
        return kinds.SEGMENT, np.zeros(0), seg
    return kind, params, points
