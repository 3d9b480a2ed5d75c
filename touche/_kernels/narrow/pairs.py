"""The pair engine: distance / penetration / overlap between any two packed shapes.

Each shape reduces to a *core* (see kinds.py): a point or a linear element swept by a radius
(sphere, capsule), a convex polytope (triangle .. polyhedron), a round solid (cylinder, cone), a
plane / half-space, or a triangle mesh (a surface). A pair is handled once, for
``kind_a <= kind_b``; the reversed pair swaps its inputs and flips the result (points swapped,
normal negated).

Numerics: the lower-kind shape is moved into the local frame of the other (``inv(T_b) @ T_a``),
so the heavier shape (polytope, mesh) is never transformed and round-off stays near its origin;
results are mapped back to the world at the end.

Result convention (``pair_distance``): ``(signed_distance, point_a, point_b, normal, status)``
- separated: the exact distance, the closest points, and ``normal = (point_b - point_a) / dist``;
- overlapping: ``-depth`` where ``depth`` is the minimum translation distance along ``normal``
  (the direction B moves to separate), ``point_a`` the deepest point of A along ``normal`` and
  ``point_b`` the deepest point of B against it, so ``depth == (point_a - point_b) . normal``;
  when a depth is unbounded (lines, planes) or not computed (rays/lines through polytopes), the
  signed distance is NaN / -inf and the points and normal are NaN.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from numba.core import types as _types

from touche._kernels.base.jit import KernelInterface, njit

from touche import tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import (
    closest_point_cone,
    closest_point_cylinder,
    closest_point_linear,
    closest_point_obb,
    closest_point_triangle,
    closest_points_linear_linear,
    closest_points_triangle_triangle,
    segment_pair_gap,
)
from touche._kernels.convex.gjk import gjk_distance_bounds, gjk_pair_distance, gjk_pair_intersects, gjk_pair_separation
from touche._kernels.convex.support import local_box, margin_of, relative_transform, support_local, unwrap_rounded
from touche._kernels.primitives.overlap import test_obb_obb, test_triangle_obb, test_triangle_triangle
from touche._kernels.primitives.sat import sat_convex
from touche._kernels.base.vec import cross as _cross
from touche._kernels.base.vec import dot as _dot
from touche._kernels.base.vec import norm as _norm

OBB_EPSILON = tolerance.OBB_EPSILON  # Ericson 4.4.2 robustness term


# ----------------------------------------------------------------------------------------------
# small vector helpers






@njit(cache=True, nogil=True)
def _any_perpendicular(u):
    """A unit vector perpendicular to u (or +z when u is zero)."""
    if abs(u[0]) < 0.6:
        w = _cross(u, np.array([1.0, 0.0, 0.0]))
    else:
        w = _cross(u, np.array([0.0, 1.0, 0.0]))
    length = _norm(w)
    if length == 0.0:
        return np.array([0.0, 0.0, 1.0])
    return w / length


@njit(cache=True, nogil=True)
def nan3():
    return np.full(3, np.nan)


# ----------------------------------------------------------------------------------------------
# transforms
@njit(cache=True, nogil=True)
def apply_point(t, p):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[i, 0] * p[0] + t[i, 1] * p[1] + t[i, 2] * p[2] + t[i, 3]
    return out


@njit(cache=True, nogil=True)
def apply_vector(t, v):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[i, 0] * v[0] + t[i, 1] * v[1] + t[i, 2] * v[2]
    return out


@njit(cache=True, nogil=True)
def _vector_rows_start(kind, params, points):
    """Rows of ``points`` from this index on are direction vectors, not positions."""
    kind, params, _ = unwrap_rounded(kind, params)
    if kind == kinds.RAY or kind == kinds.LINE or kind == kinds.PLANE or kind == kinds.HALFSPACE:
        return 1
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        return int(params[0])
    if kind == kinds.ELLIPSOID:
        return 1
    return points.shape[0]


@njit(cache=True, nogil=True)
def transform_shape(kind, params, points, t):
    """Packed (params, points) of a shape moved by the rigid transform t."""
    moved = np.empty_like(points)
    first_vector = _vector_rows_start(kind, params, points)
    for row in range(points.shape[0]):
        if row < first_vector:
            moved[row] = apply_point(t, points[row])
        else:
            moved[row] = apply_vector(t, points[row])
    new_params = params.copy()
    kind, params, _ = unwrap_rounded(kind, params)  # a Rounded shape moves its core's params
    header = new_params.shape[0] - params.shape[0]
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        # plane offsets follow the translation: d' = d + (R n) . t
        nv = int(params[0])
        n_planes = int(params[1])
        for k in range(n_planes):
            normal = moved[nv + k]
            new_params[header + 4 + k] = params[4 + k] + normal[0] * t[0, 3] + normal[1] * t[1, 3] + normal[2] * t[2, 3]
        if kind == kinds.BOX:
            start = header + 4 + n_planes
            new_params[start : start + 3] = apply_point(t, params[4 + n_planes : 7 + n_planes])
    return new_params, moved


# ----------------------------------------------------------------------------------------------
# cores
@njit(cache=True, nogil=True)
def core_radius(kind, params):
    if kind == kinds.SPHERE or kind == kinds.CAPSULE:
        return params[0]
    return 0.0


@njit(cache=True, nogil=True)
def linear_core(kind, points):
    """(origin, direction, t_lo, t_hi) of a linear core."""
    if kind == kinds.SEGMENT or kind == kinds.CAPSULE:
        return points[0], points[1] - points[0], 0.0, 1.0
    if kind == kinds.RAY:
        return points[0], points[1], 0.0, np.inf
    return points[0], points[1], -np.inf, np.inf


@njit(cache=True, nogil=True)
def _is_flat(kind):
    return kind == kinds.TRIANGLE or kind == kinds.POLYGON


@njit(cache=True, nogil=True)
def _polytope_counts(params):
    return int(params[0]), int(params[1]), int(params[2]), int(params[3])


@njit(cache=True, nogil=True)
def support(kind, params, points, direction):
    """A point of the shape maximising ``direction . x``: its core's support point (gjk.py's one
    support mapping, Ericson 3.10-3.11) pushed out by its radius along ``direction``. A ray or
    line is unbounded (NaN) unless ``direction`` is perpendicular to it or favours its start; a
    mesh answers its best vertex."""
    if kind == kinds.RAY or kind == kinds.LINE:
        origin, slope_dir, t_lo, t_hi = linear_core(kind, points)
        slope = _dot(slope_dir, direction)
        t = t_hi if slope > 0.0 else t_lo
        if slope == 0.0:
            t = t_lo if np.isfinite(t_lo) else 0.0
        if not np.isfinite(t):
            return nan3()  # unbounded in this direction
        return origin + t * slope_dir
    count = points.shape[0]
    if kind == kinds.MESH:
        best_index = 0
        best_value = _dot(points[0], direction)
        for i in range(1, count):
            value = _dot(points[i], direction)
            if value > best_value:
                best_value = value
                best_index = i
        return points[best_index].copy()
    hints = np.zeros(1, dtype=np.int64)
    x, y, z = support_local(kind, params, points, direction[0], direction[1], direction[2], hints, 0)
    best = np.empty(3)
    best[0] = x
    best[1] = y
    best[2] = z
    radius = margin_of(kind, params)
    length = _norm(direction)
    if radius > 0.0 and length > 0.0:
        return best + (radius / length) * direction
    return best


@njit(cache=True, nogil=True)
def _make_result(signed, point_a, point_b, normal):
    return signed, point_a, point_b, normal


# ----------------------------------------------------------------------------------------------
# point core vs ...
@njit(cache=True, nogil=True)
def finish_core_distance(core_a, ra, core_b, rb, fallback_normal, core_depth):
    """Distance between two cores swept by radii ra, rb, given their closest points.
    When the cores touch (core distance 0) the overlap is resolved along ``fallback_normal`` with
    core penetration ``core_depth`` (>= 0)."""
    delta = core_b - core_a
    dist = _norm(delta)
    if dist > 0.0:
        normal = delta / dist
        return dist - ra - rb, core_a + ra * normal, core_b - rb * normal, normal
    normal = fallback_normal
    depth = core_depth + ra + rb
    return -depth, core_a + ra * normal, core_a - (core_depth + rb) * normal, normal


@njit(cache=True, nogil=True)
def _box_frame(params, points):
    """(center, axes, half) of a packed box in whatever frame it was moved to: its first three
    plane normals are its +x, +y, +z axes (columns of ``axes``)."""
    nv = int(params[0])
    n_planes = int(params[1])
    axes = np.empty((3, 3))
    for i in range(3):
        axes[:, i] = points[nv + i]
    return params[4 + n_planes : 7 + n_planes], axes, params[7 + n_planes : 10 + n_planes]


@njit(cache=True, nogil=True)
def _closest_point_polytope(p, kind, params, points, triangles):
    """Closest point of a solid polytope to p; when p is inside, p itself with the depth
    (distance to the nearest face plane) and that plane's outward normal."""
    nv, n_planes, _, _ = _polytope_counts(params)
    if kind == kinds.BOX:
        center, axes, half = _box_frame(params, points)
        q = closest_point_obb(p, center, axes, half)
    else:
        q = p.copy()
        best = np.inf
        for k in range(triangles.shape[0]):
            candidate = closest_point_triangle(
                p, points[triangles[k, 0]], points[triangles[k, 1]], points[triangles[k, 2]]
            )
            d2 = (candidate[0] - p[0]) ** 2 + (candidate[1] - p[1]) ** 2 + (candidate[2] - p[2]) ** 2
            if d2 < best:
                best = d2
                q = candidate
        if kinds.TETRAHEDRON <= kind <= kinds.BOX or kind == kinds.POLYHEDRON:
            inside = True
            for k in range(n_planes):
                if _dot(points[nv + k], p) - params[4 + k] > 0.0:
                    inside = False
                    break
            if inside:
                q = p.copy()
    # depth below the nearest face plane (0 on the boundary or outside)
    depth = np.inf
    face = np.zeros(3)
    for k in range(n_planes):
        gap = params[4 + k] - _dot(points[nv + k], p)
        if gap < depth:
            depth = gap
            face = points[nv + k]
    if n_planes == 0:
        depth = 0.0
        face = np.array([0.0, 0.0, 1.0])
    return q, max(depth, 0.0), face


@njit(cache=True, nogil=True, inline="always")
def _vertex_gap(v, kind, params, points, triangles):
    """The polytope's closest point to the vertex v and their squared distance."""
    q, _, _ = _closest_point_polytope(v, kind, params, points, triangles)
    return q, _dot(q - v, q - v)


@njit(cache=True, nogil=True)
def _point_vs_polytope(c, r, kind, params, points, triangles):
    q, depth, face = _closest_point_polytope(c, kind, params, points, triangles)
    return finish_core_distance(c, r, q, 0.0, -face, depth)


@njit(cache=True, nogil=True)
def _round_inside_depth(c, kind, params, points):
    """Depth of a point inside a cylinder / cone and the outward boundary normal there."""
    p0 = points[0]
    p1 = points[1]
    axis = p1 - p0
    height = _norm(axis)
    axis_unit = axis / height
    rel = c - p0
    axial = _dot(rel, axis_unit)
    radial_vec = rel - axial * axis_unit
    rho = _norm(radial_vec)
    radial_unit = radial_vec / rho if rho > 0.0 else _any_perpendicular(axis_unit)
    radius = params[0]
    if kind == kinds.CYLINDER:
        depth = radius - rho
        normal = radial_unit
        if axial < depth:
            depth = axial
            normal = -axis_unit
        if height - axial < depth:
            depth = height - axial
            normal = axis_unit
        return max(depth, 0.0), normal
    # cone: apex p0 at axial 0, base at axial = height (in the meridian half-plane)
    depth = height - axial
    normal = axis_unit.copy()  # base disc's outward normal points away from the apex
    # lateral line from (rho=0, axial=0) to (rho=radius, axial=height); outward 2D normal
    slant = np.sqrt(radius * radius + height * height)
    lateral = (height * rho - radius * axial) / slant  # > 0 outside
    if -lateral < depth:
        depth = -lateral
        normal = (height * radial_unit - radius * axis_unit) / slant
    return max(depth, 0.0), normal


@njit(cache=True, nogil=True)
def _point_vs_round(c, r, kind, params, points):
    if kind == kinds.CYLINDER:
        q = closest_point_cylinder(c, points[0], points[1], params[0])
    else:
        q = closest_point_cone(c, points[0], points[1], params[0])
    depth = 0.0
    outward = np.array([0.0, 0.0, 1.0])
    if q[0] == c[0] and q[1] == c[1] and q[2] == c[2]:
        depth, outward = _round_inside_depth(c, kind, params, points)
    return finish_core_distance(c, r, q, 0.0, -outward, depth)


@njit(cache=True, nogil=True)
def point_triangle_term(c, a, b, cc):
    """One triangle of _point_vs_mesh: (squared distance, closest point, unit face normal or +z
    for a zero-area triangle). The BVH route (bvh_shape.py) calls the same term."""
    candidate = closest_point_triangle(c, a, b, cc)
    d2 = (candidate[0] - c[0]) ** 2 + (candidate[1] - c[1]) ** 2 + (candidate[2] - c[2]) ** 2
    n = _cross(b - a, cc - a)
    length = _norm(n)
    if length > 0.0:
        return d2, candidate, n / length
    return d2, candidate, np.array([0.0, 0.0, 1.0])


@njit(cache=True, nogil=True)
def _point_vs_mesh(c, r, points, triangles, first_hit):
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


# ----------------------------------------------------------------------------------------------
# linear core vs ...
@njit(cache=True, nogil=True)
def _clip_linear_polytope(p, d, lo, hi, params, points):
    """Cyrus-Beck clip (Ericson 5.3.8) of p + t d, t in [lo, hi], against the polytope's planes.
    Flat polytopes carry both faces (n and -n), so a crossing clips to the single t where the
    element meets the plane: both bounds are computed from exactly negated numbers (IEEE negation
    is exact), so the interval [t*, t*] is never lost to round-off."""
    nv, n_planes, _, _ = _polytope_counts(params)
    t_enter = lo
    t_exit = hi
    for k in range(n_planes):
        normal = points[nv + k]
        numerator = params[4 + k] - _dot(normal, p)
        denominator = _dot(normal, d)
        if denominator == 0.0:
            if numerator < 0.0:  # parallel and outside this plane (erratum L9406: reject when outside)
                return False, t_enter, t_exit
        elif denominator > 0.0:
            t_exit = min(t_exit, numerator / denominator)
        else:
            t_enter = max(t_enter, numerator / denominator)
        if t_enter > t_exit:
            return False, t_enter, t_exit
    return True, t_enter, t_exit


@njit(cache=True, nogil=True)
def _linear_features_vs_polytope(p, d, lo, hi, kind, params, points, triangles, edges):
    """Closest points of a linear element and a polytope that it does not meet: the minimum over
    its finite end points against the solid and the element against every polytope edge
    (complete for convex sets: a closest pair is end point-face or edge-edge, and parallel
    configurations slide to one of those without changing the distance)."""
    best = np.inf
    core_a = p.copy()
    core_b = p.copy()
    for end in range(2):
        t_end = lo if end == 0 else hi
        if not np.isfinite(t_end):
            continue
        e = p + t_end * d
        q, _, _ = _closest_point_polytope(e, kind, params, points, triangles)
        d2 = _dot(q - e, q - e)
        if d2 < best:
            best = d2
            core_a = e
            core_b = q
    for k in range(edges.shape[0]):
        e0 = points[edges[k, 0]]
        e1 = points[edges[k, 1]]
        _, _, c1, c2 = closest_points_linear_linear(p, d, lo, hi, e0, e1 - e0, 0.0, 1.0)
        d2 = _dot(c2 - c1, c2 - c1)
        if d2 < best:
            best = d2
            core_a = c1
            core_b = c2
    return core_a, core_b


@njit(cache=True, nogil=True)
def _sat_segment_polytope(a, b, kind, params, points):
    """SAT separation of a segment and a polytope: (separation, axis from segment to polytope)."""
    nv, n_planes, n_dirs, n_sat = _polytope_counts(params)
    seg_verts = np.empty((2, 3))
    seg_verts[0] = a
    seg_verts[1] = b
    direction = b - a
    seg_dirs = np.empty((1, 3))
    seg_dirs[0] = direction
    extra = np.zeros((0, 3))
    if _is_flat(kind) and n_planes > 0:
        # in-plane axis perpendicular to the segment (needed when the segment lies in the plane)
        side = _cross(points[nv], direction)
        length = _norm(side)
        if length > 0.0:
            extra = np.empty((1, 3))
            extra[0] = side / length
    if _norm(direction) == 0.0:
        seg_dirs = np.zeros((0, 3))
    return sat_convex(
        seg_verts, seg_dirs, extra,
        points[:nv], points[nv + n_planes : nv + n_planes + n_dirs], points[nv : nv + n_sat],
    )


@njit(cache=True, nogil=True)
def _linear_vs_polytope(kind_a, params_a, points_a, kind, params, points, triangles, edges, boolean):
    p, d, lo, hi = linear_core(kind_a, points_a)
    r = core_radius(kind_a, params_a)
    meets, _, _ = _clip_linear_polytope(p, d, lo, hi, params, points)
    if meets:
        if boolean:
            return -1.0, p, p, p
        if kind_a == kinds.RAY or kind_a == kinds.LINE:
            return np.nan, nan3(), nan3(), nan3()
        a = p
        b = p + d
        separation, axis = _sat_segment_polytope(a, b, kind, params, points)
        depth = max(-separation, 0.0) + r
        point_a = support(kind_a, params_a, points_a, axis)
        point_b = support(kind, params, points, -axis)
        return -depth, point_a, point_b, axis
    core_a, core_b = _linear_features_vs_polytope(p, d, lo, hi, kind, params, points, triangles, edges)
    return finish_core_distance(core_a, r, core_b, 0.0, np.array([0.0, 0.0, 1.0]), 0.0)


@njit(cache=True, nogil=True)
def linear_triangle_term(kind_a, params_a, points_a, a, b, c, first_hit):
    """One triangle of _linear_vs_mesh (also called by the BVH route, bvh_shape.py): the
    triangle as a solid triangle polytope (exact clip + SAT depth), a zero-area one as its longest
    edge. NaN: overlapping with no computed depth (a ray / line through the triangle)."""
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
        fallback = fallback / length if length > 0.0 else _any_perpendicular(d)
        return finish_core_distance(c1, r, c2, 0.0, fallback, 0.0)
    return _linear_vs_polytope(
        kind_a, params_a, points_a, kinds.TRIANGLE, params_t, points_t, tris_t, edges_t, first_hit
    )


@njit(cache=True, nogil=True)
def _linear_vs_mesh(kind_a, params_a, points_a, points, triangles, first_hit):
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


# ----------------------------------------------------------------------------------------------
# polytope vs polytope
@njit(cache=True, nogil=True)
def _polytope_sat(kind_a, params_a, points_a, kind_b, params_b, points_b):
    nva, npa, nda, nsa = _polytope_counts(params_a)
    nvb, npb, ndb, nsb = _polytope_counts(params_b)
    return sat_convex(
        points_a[:nva], points_a[nva + npa : nva + npa + nda], points_a[nva : nva + nsa],
        points_b[:nvb], points_b[nvb + npb : nvb + npb + ndb], points_b[nvb : nvb + nsb],
    )


@njit(cache=True, nogil=True)
def _polytope_features(kind_a, params_a, points_a, tris_a, edges_a, kind_b, params_b, points_b, tris_b, edges_b, axis):
    """Closest points of two disjoint convex polytopes: vertex-solid both ways and edge-edge.

    ``axis`` is a separating axis (unit, A towards B). Every feature pair is at least as far
    apart as the gap between their projections on it, so a pair whose projection gap already
    exceeds the best distance found is skipped; features are visited deepest-first along the
    axis so that the best distance drops early. The answer is the same as the full enumeration.
    """
    nva = int(params_a[0])
    nvb = int(params_b[0])
    proj_a = np.empty(nva)
    proj_b = np.empty(nvb)
    for i in range(nva):
        proj_a[i] = _dot(points_a[i], axis)
    for i in range(nvb):
        proj_b[i] = _dot(points_b[i], axis)
    order_a = np.argsort(-proj_a)  # A's vertices nearest to B first
    order_b = np.argsort(proj_b)  # B's vertices nearest to A first
    max_a = proj_a[order_a[0]]
    min_b = proj_b[order_b[0]]
    best = np.inf
    best_dist = np.inf
    point_a = points_a[order_a[0]].copy()
    point_b = points_b[order_b[0]].copy()
    for k in range(max(nva, nvb)):
        if k < nva:
            i = order_a[k]
            if min_b - proj_a[i] < best_dist:
                q, d2 = _vertex_gap(points_a[i], kind_b, params_b, points_b, tris_b)
                if d2 < best:
                    best = d2
                    best_dist = np.sqrt(d2)
                    point_a = points_a[i].copy()
                    point_b = q
        if k < nvb:
            i = order_b[k]
            if proj_b[i] - max_a < best_dist:
                q, d2 = _vertex_gap(points_b[i], kind_a, params_a, points_a, tris_a)
                if d2 < best:
                    best = d2
                    best_dist = np.sqrt(d2)
                    point_a = q
                    point_b = points_b[i].copy()
    dir_a = np.empty(3)
    dir_b = np.empty(3)
    for i in range(edges_a.shape[0]):
        ia = edges_a[i, 0]
        ja = edges_a[i, 1]
        top_a = max(proj_a[ia], proj_a[ja])
        if min_b - top_a >= best_dist:
            continue
        a0 = points_a[ia]
        a1 = points_a[ja]
        for m in range(3):
            dir_a[m] = a1[m] - a0[m]
        for j in range(edges_b.shape[0]):
            ib = edges_b[j, 0]
            jb = edges_b[j, 1]
            if min(proj_b[ib], proj_b[jb]) - top_a >= best_dist:
                continue
            b0 = points_b[ib]
            b1 = points_b[jb]
            for m in range(3):
                dir_b[m] = b1[m] - b0[m]
            s, t, d2 = segment_pair_gap(a0, dir_a, b0, dir_b)
            if d2 < best:
                best = d2
                best_dist = np.sqrt(d2)
                point_a = a0 + s * dir_a
                point_b = b0 + t * dir_b
    return point_a, point_b


@njit(cache=True, nogil=True)
def _polytope_vs_polytope(kind_a, params_a, points_a, tris_a, edges_a,
                          kind_b, params_b, points_b, tris_b, edges_b, boolean):
    # boolean fast paths with dedicated tests
    if boolean:
        if kind_a == kinds.BOX and kind_b == kinds.BOX:
            center_a, axes_a, half_a = _box_frame(params_a, points_a)
            center_b, axes_b, half_b = _box_frame(params_b, points_b)
            hit = test_obb_obb(center_a, axes_a, half_a, center_b, axes_b, half_b, OBB_EPSILON)
            return -1.0 if hit else 1.0, nan3(), nan3(), nan3()
        if kind_a == kinds.TRIANGLE and kind_b == kinds.TRIANGLE:
            hit = test_triangle_triangle(points_a[0], points_a[1], points_a[2], points_b[0], points_b[1], points_b[2])
            return -1.0 if hit else 1.0, nan3(), nan3(), nan3()
        if kind_a == kinds.TRIANGLE and kind_b == kinds.BOX:
            center_b, axes_b, half_b = _box_frame(params_b, points_b)
            hit = test_triangle_obb(points_a[0], points_a[1], points_a[2], center_b, axes_b, half_b)
            return -1.0 if hit else 1.0, nan3(), nan3(), nan3()
        separation, axis = _polytope_sat(kind_a, params_a, points_a, kind_b, params_b, points_b)
        return separation, nan3(), nan3(), axis
    if kind_a == kinds.TRIANGLE and kind_b == kinds.TRIANGLE:
        c1, c2 = closest_points_triangle_triangle(
            points_a[0], points_a[1], points_a[2], points_b[0], points_b[1], points_b[2]
        )
        delta = c2 - c1
        dist = _norm(delta)
        if dist > 0.0:
            return dist, c1, c2, delta / dist
    separation, axis = _polytope_sat(kind_a, params_a, points_a, kind_b, params_b, points_b)
    if separation > 0.0:
        point_a, point_b = _polytope_features(
            kind_a, params_a, points_a, tris_a, edges_a, kind_b, params_b, points_b, tris_b, edges_b, axis
        )
        delta = point_b - point_a
        dist = _norm(delta)
        if dist > 0.0:
            return dist, point_a, point_b, delta / dist
        return 0.0, point_a, point_b, axis
    point_a = support(kind_a, params_a, points_a, axis)
    point_b = support(kind_b, params_b, points_b, -axis)
    return separation, point_a, point_b, axis


@njit(cache=True, nogil=True)
def _triangle_polytope_arrays(a, b, c):
    """Packed polytope (params, points, triangles, edges) of one mesh triangle."""
    normal = _cross(b - a, c - a)
    length = _norm(normal)
    verts = np.empty((3, 3))
    verts[0] = a
    verts[1] = b
    verts[2] = c
    if length == 0.0:
        params = np.array([3.0, 0.0, 3.0, 0.0])
        points = np.empty((6, 3))
        points[:3] = verts
        for i in range(3):
            points[3 + i] = verts[(i + 1) % 3] - verts[i]
    else:
        normal = normal / length
        params = np.empty(4 + 5)
        params[0] = 3.0
        params[1] = 5.0
        params[2] = 3.0
        params[3] = 4.0
        points = np.empty((3 + 5 + 3, 3))
        points[:3] = verts
        points[3] = normal
        params[4] = _dot(normal, a)
        for i in range(3):
            edge = verts[(i + 1) % 3] - verts[i]
            side = _cross(edge, normal)
            side_length = _norm(side)
            if side_length > 0.0:
                side = side / side_length
            points[4 + i] = side
            params[5 + i] = _dot(side, verts[i])
            points[8 + i] = edge
        points[7] = -normal
        params[8] = -params[4]
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
    """One triangle of _convex_vs_mesh (also called by the BVH route, bvh_shape.py). Boolean
    box: (-1, NaN..) on overlap, (inf, NaN..) otherwise (triangle-OBB SAT only)."""
    if boolean and kind_a == kinds.BOX:
        center, axes, half = _box_frame(params_a, points_a)
        if test_triangle_obb(a, b, c, center, axes, half):
            return -1.0, nan3(), nan3(), nan3()
        return np.inf, nan3(), nan3(), nan3()
    params_t, points_t, tris_t, edges_t = _triangle_polytope_arrays(a, b, c)
    if int(params_t[1]) == 0:
        # zero-area triangle: it is its longest edge, a segment (flip the segment-first result)
        _, _, segment = degenerate_triangle_as_segment(kinds.TRIANGLE, params_t, points_t)
        flipped = _linear_vs_polytope(
            kinds.SEGMENT, params_t[:0], segment, kind_a, params_a, points_a, tris_a, edges_a, boolean
        )
        return flipped[0], flipped[2], flipped[1], -flipped[3]
    return _polytope_vs_polytope(
        kind_a, params_a, points_a, tris_a, edges_a, kinds.TRIANGLE, params_t, points_t, tris_t, edges_t, boolean
    )


# ----------------------------------------------------------------------------------------------
# planes and half-spaces
@njit(cache=True, nogil=True)
def _linear_extent_on(kind, points, normal):
    """(min, max) of normal . x over a linear core (infinite for rays / lines not parallel)."""
    p, d, lo, hi = linear_core(kind, points)
    base = _dot(normal, p)
    slope = _dot(normal, d)
    if slope == 0.0:
        return base, base
    v_lo = base + slope * lo if np.isfinite(lo) else (-np.inf if slope > 0 else np.inf)
    v_hi = base + slope * hi if np.isfinite(hi) else (np.inf if slope > 0 else -np.inf)
    return min(v_lo, v_hi), max(v_lo, v_hi)


@njit(cache=True, nogil=True)
def _shape_vs_plane(kind_a, params_a, points_a, normal, offset, halfspace):
    """Any finite or linear shape A against the plane / half-space ``normal . x (<)= offset``."""
    radius = core_radius(kind_a, params_a)
    if kinds.SEGMENT <= kind_a <= kinds.LINE:
        low, high = _linear_extent_on(kind_a, points_a, normal)
        low -= radius
        high += radius
    else:
        low = _dot(normal, support(kind_a, params_a, points_a, -normal))
        high = _dot(normal, support(kind_a, params_a, points_a, normal))
    if low > offset:  # entirely on the outer side
        point_a = support(kind_a, params_a, points_a, -normal)
        gap = low - offset
        return gap, point_a, point_a - gap * normal, -normal
    if not halfspace and high < offset:
        point_a = support(kind_a, params_a, points_a, normal)
        gap = offset - high
        return gap, point_a, point_a + gap * normal, normal.copy()
    below = offset - low
    above = high - offset
    # a two-sided plane is left through the nearer side: unbounded only when both sides are
    # (was: -inf as soon as one side was, e.g. for a ray crossing a plane, whose depth is finite)
    if not np.isfinite(below if halfspace else min(below, above)):
        return -np.inf, nan3(), nan3(), nan3()
    if halfspace or below <= above:
        point_a = support(kind_a, params_a, points_a, -normal)
        return -below, point_a, point_a + below * normal, -normal
    point_a = support(kind_a, params_a, points_a, normal)
    return -above, point_a, point_a - above * normal, normal.copy()


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
def _plane_vs_plane(kind_a, points_a, kind_b, points_b):
    na = points_a[1]
    nb = points_b[1]
    da = _dot(na, points_a[0])
    db = _dot(nb, points_b[0])
    axis = _cross(na, nb)
    if _dot(axis, axis) > 1e-24:  # not parallel: they meet, and no translation separates them
        return -np.inf, nan3(), nan3(), nan3()
    same = _dot(na, nb) > 0.0
    db_aligned = db if same else -db  # B's plane as na . x = db_aligned
    gap = db_aligned - da  # B's plane sits at this height above A's along na
    point_a = da * na
    if kind_a == kinds.PLANE and kind_b == kinds.PLANE:
        dist = abs(gap)
        if dist == 0.0:
            return 0.0, point_a, point_a.copy(), na.copy()
        normal = na if gap > 0 else -na
        return dist, point_a, point_a + gap * na, normal
    if kind_a == kinds.HALFSPACE and kind_b == kinds.HALFSPACE:
        if same:
            return -np.inf, nan3(), nan3(), nan3()
        # A: na.x <= da, B: na.x >= db_aligned; a negative gap is the slab they share
        gap = db_aligned - da
        return gap, point_a, point_a + gap * na, na.copy()
    # parallel plane A vs half-space B (solid side nb.x <= db): a finite gap or depth
    height = _dot(nb, point_a) - db  # A's plane above B's boundary along nb
    return height, point_a, point_a - height * nb, -nb


# ----------------------------------------------------------------------------------------------
# convex pairs through GJK / EPA (gjk.py)
@njit(cache=True, nogil=True)
def _gjk_handles(kind_a, kind_b):
    """Pairs with a smooth solid (cylinder, cone, ellipsoid, Rounded shape) and no analytic
    kernel: anything convex against it, except a point / sphere against a cylinder / cone
    (closed form)."""
    lo = min(kind_a, kind_b)
    hi = max(kind_a, kind_b)
    if hi < kinds.CYLINDER or hi >= kinds.PLANE:  # the support-mapped solids: CYLINDER .. PLANE - 1
        return False
    return not (lo <= kinds.SPHERE and (hi == kinds.CYLINDER or hi == kinds.CONE))


@njit(cache=True, nogil=True)
def _is_polytope(kind):
    return kinds.TRIANGLE <= kind <= kinds.POLYHEDRON


# The exact SAT depth of two polytopes projects both vertex sets on every edge-direction pair:
# ~ (n_dirs_a * nv_a) * (n_dirs_b * nv_b) work. Two boxes: 24 * 24; two 20-vertex hulls about
# 600 * 600. Above this, penetration depth comes from EPA (1e-12 relative convergence) instead.
SAT_COST_LIMIT = 1000.0 * 1000.0


@njit(cache=True, nogil=True)
def _sat_cost(params):
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
    if _is_polytope(kind):
        count = int(params[0])
    elif kind == kinds.RAY or kind == kinds.LINE:
        count = 1
    center = np.zeros(3)
    for i in range(count):
        center += points[i]
    center /= count
    reach = 0.0
    for i in range(count):
        reach = max(reach, _norm(points[i] - center))
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
    segment[0] = p + t0 * d
    segment[1] = p + t1 * d
    return segment


@njit(cache=True, nogil=True)
def _inverse_apply_point(t, p):
    out = np.empty(3)
    for i in range(3):
        out[i] = t[0, i] * (p[0] - t[0, 3]) + t[1, i] * (p[1] - t[1, 3]) + t[2, i] * (p[2] - t[2, 3])
    return out


@njit(cache=True, nogil=True)
def _bounded_for_gjk(kind, params, points, t, other_kind, other_params, other_points, other_t):
    """GJK needs finite shapes: a ray / line becomes the segment of it that can be nearest to
    the other (finite) shape. Returns (kind, params, points, was_unbounded)."""
    if kind != kinds.RAY and kind != kinds.LINE:
        return kind, params, points, False
    center, reach = bounding_ball(other_kind, other_params, other_points)
    local_center = _inverse_apply_point(t, apply_point(other_t, center))
    return kinds.SEGMENT, params[:0], _clip_linear_near(kind, points, local_center, reach), True


@njit(cache=True, nogil=True)
def _gjk_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """pair_distance through GJK / EPA; non-convergence is reported in the status (the
    kinds.GJK_MAX_ITERATIONS / GJK_DEGENERATE codes), never hidden."""
    ka, pa, pta, unbounded_a = _bounded_for_gjk(ka, pa, pta, ta, kb, pb, ptb, tb)
    kb, pb, ptb, unbounded_b = _bounded_for_gjk(kb, pb, ptb, tb, ka, pa, pta, ta)
    signed, point_a, point_b, normal, gjk_status, _ = gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if gjk_status == kinds.GJK_MAX_ITERATIONS or gjk_status == kinds.GJK_DEGENERATE:
        return signed, point_a, point_b, normal, gjk_status
    if (unbounded_a or unbounded_b) and signed < -tolerance:
        # the depth of the clipped segment is not the depth of the unbounded ray / line
        return np.nan, nan3(), nan3(), nan3(), kinds.PENETRATING
    return signed, point_a, point_b, normal, status_of(signed, tolerance)


@njit(cache=True, nogil=True)
def _gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb):
    ka, pa, pta, _ = _bounded_for_gjk(ka, pa, pta, ta, kb, pb, ptb, tb)
    kb, pb, ptb, _ = _bounded_for_gjk(kb, pb, ptb, tb, ka, pa, pta, ta)
    return gjk_pair_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)


@njit(cache=True, nogil=True)
def smooth_triangle_term(kind_a, params_a, points_a, a, b, c, boolean):
    """One triangle of _convex_vs_mesh (also called by the BVH route, bvh_shape.py): GJK / EPA
    in one frame. Boolean: (-1, NaN..) on overlap, (inf, NaN..) otherwise."""
    identity = np.eye(4)
    triangle_params = np.zeros(4)
    triangle_params[0] = 3.0
    triangle = np.empty((3, 3))
    triangle[0] = a
    triangle[1] = b
    triangle[2] = c
    if boolean:
        if gjk_pair_intersects(kind_a, params_a, points_a, identity, kinds.TRIANGLE, triangle_params, triangle, identity):
            return -1.0, nan3(), nan3(), nan3()
        return np.inf, nan3(), nan3(), nan3()
    signed, point_a, point_b, normal, _, _ = gjk_pair_distance(
        kind_a, params_a, points_a, identity, kinds.TRIANGLE, triangle_params, triangle, identity, 0.0
    )
    return signed, point_a, point_b, normal


@njit(cache=True, nogil=True)
def _convex_vs_mesh(kind_a, params_a, points_a, tris_a, edges_a, points, triangles, boolean):
    """Polytope (SAT terms) or smooth shape (GJK / EPA terms) vs a triangle soup, brute force (the
    reference of the BVH route): the nearest (or, overlapping, the deepest) triangle, the first
    among equals."""
    smooth = kind_a > kinds.POLYHEDRON
    best = (np.inf, nan3(), nan3(), nan3())
    for k in range(triangles.shape[0]):
        a, b, c = points[triangles[k, 0]], points[triangles[k, 1]], points[triangles[k, 2]]
        if smooth:
            result = smooth_triangle_term(kind_a, params_a, points_a, a, b, c, boolean)
        else:
            result = polytope_triangle_term(kind_a, params_a, points_a, tris_a, edges_a, a, b, c, boolean)
        if boolean:
            if result[0] <= 0.0:
                return result
            continue
        if result[0] < best[0]:
            best = result
    return best


# ----------------------------------------------------------------------------------------------
# dispatch
@njit(cache=True, nogil=True)
def is_supported(kind_a, kind_b):
    """Whether pair_distance / pair_intersects answer this pair (either order)."""
    return not (kind_a == kinds.MESH and kind_b == kinds.MESH)


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
                seg[0] = a
                seg[1] = b
        return kinds.SEGMENT, np.zeros(0), seg
    return kind, params, points


# inline: a thin layer over a core; compiled on its own it would link, optimize and emit the
# core once more (numba compiles every callee into each caller's machine code). ``core`` is one
# of the _core_* functions below: each engine family passes the one that holds only its pairs.
@njit(cache=True, nogil=True, inline="always")
def _ordered_core(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, boolean):
    """Core of both verbs for ka <= kb, in B's frame. Returns the B-frame result."""
    t_rel = relative_transform(ta, tb)
    pa, pta = transform_shape(ka, pa, pta, t_rel)
    ka, pa, pta = degenerate_triangle_as_segment(ka, pa, pta)
    kb, pb, ptb = degenerate_triangle_as_segment(kb, pb, ptb)
    if ka > kb:  # a degenerate triangle became a segment: keep the cores' order
        swapped = core(kb, pb, ptb, trb, edb, ka, pa, pta, tra, eda, boolean)
        return swapped[0], swapped[2], swapped[1], -swapped[3]
    return core(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)


# ---- the cores: ka <= kb, both shapes already expressed in one frame (B's)
@njit(cache=True, nogil=True)
def _linear_pair(ka, pa, pta, kb, pb, ptb):
    """A point or linear core A against a linear core B."""
    ra = core_radius(ka, pa)
    rb = core_radius(kb, pb)
    pb_, db_, lob, hib = linear_core(kb, ptb)
    if ka <= kinds.SPHERE:
        q, _ = closest_point_linear(pta[0], pb_, db_, lob, hib)
        return finish_core_distance(pta[0], ra, q, rb, _any_perpendicular(db_), 0.0)
    pa_, da_, loa, hia = linear_core(ka, pta)
    _, _, c1, c2 = closest_points_linear_linear(pa_, da_, loa, hia, pb_, db_, lob, hib)
    fallback = _cross(da_, db_)
    length = _norm(fallback)
    fallback = fallback / length if length > 0.0 else _any_perpendicular(da_)
    return finish_core_distance(c1, ra, c2, rb, fallback, 0.0)


@njit(cache=True, nogil=True)
def _core_closed(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """Every convex pair but polytope against polytope (_core_polytopes) and pairs that need
    GJK (see _gjk_handles): point and linear cores against anything convex, point against a
    cylinder / cone, anything against a plane."""
    # ---- B is a point core
    if kb <= kinds.SPHERE:
        return finish_core_distance(pta[0], core_radius(ka, pa), ptb[0], core_radius(kb, pb), np.array([0.0, 0.0, 1.0]), 0.0)
    # ---- B is a linear core
    if kb <= kinds.LINE:
        return _linear_pair(ka, pa, pta, kb, pb, ptb)
    # ---- B is a polytope
    if kb <= kinds.POLYHEDRON:
        if ka <= kinds.SPHERE:
            return _point_vs_polytope(pta[0], core_radius(ka, pa), kb, pb, ptb, trb)
        if ka <= kinds.LINE:
            return _linear_vs_polytope(ka, pa, pta, kb, pb, ptb, trb, edb, boolean)
        return np.nan, nan3(), nan3(), nan3()  # polytope pairs: _core_polytopes
    # ---- B is a cylinder or cone (pairs needing GJK never get here: see _gjk_handles)
    if kb < kinds.PLANE:
        if ka <= kinds.SPHERE and (kb == kinds.CYLINDER or kb == kinds.CONE):
            return _point_vs_round(pta[0], core_radius(ka, pa), kb, pb, ptb)
        return np.nan, nan3(), nan3(), nan3()
    # ---- B is a plane or half-space
    if kb <= kinds.HALFSPACE:
        normal = ptb[1]
        offset = _dot(normal, ptb[0])
        if ka >= kinds.PLANE:
            return _plane_vs_plane(ka, pta, kb, ptb)
        return _shape_vs_plane(ka, pa, pta, normal, offset, kb == kinds.HALFSPACE)
    return np.nan, nan3(), nan3(), nan3()  # meshes: _core_mesh


@njit(cache=True, nogil=True)
def _core_polytopes(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """Polytope against polytope: SAT depth and feature enumeration. A zero-area triangle has
    become a segment by now (_ordered_core), so a linear core may stand on either side."""
    if kb <= kinds.LINE:
        return _linear_pair(ka, pa, pta, kb, pb, ptb)
    if ka <= kinds.LINE:
        return _linear_vs_polytope(ka, pa, pta, kb, pb, ptb, trb, edb, boolean)
    return _polytope_vs_polytope(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)


@njit(cache=True, nogil=True)
def _core_mesh(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """A shape against a mesh (kb == MESH) by brute force over its triangles: the reference the
    BVH route (bvh_shape.py) is checked against."""
    ra = core_radius(ka, pa)
    if ka <= kinds.SPHERE:
        return _point_vs_mesh(pta[0], ra, ptb, trb, boolean)
    if ka <= kinds.LINE:
        return _linear_vs_mesh(ka, pa, pta, ptb, trb, boolean)
    if ka < kinds.PLANE:
        return _convex_vs_mesh(ka, pa, pta, tra, eda, ptb, trb, boolean)
    if ka == kinds.PLANE or ka == kinds.HALFSPACE:
        # plane is A: compute mesh-vs-plane and flip
        normal = pta[1]
        offset = _dot(normal, pta[0])
        signed, point_m, point_p, normal_mp = mesh_vs_plane(ptb, trb, normal, offset, ka == kinds.HALFSPACE)
        return signed, point_p, point_m, -normal_mp
    return np.nan, nan3(), nan3(), nan3()


@njit(cache=True, nogil=True)
def _core(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean):
    """Every pair the cores answer (ka <= kb, one frame)."""
    if kb == kinds.MESH:
        return _core_mesh(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)
    if _is_polytope(ka) and _is_polytope(kb):
        return _polytope_vs_polytope(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)
    return _core_closed(ka, pa, pta, tra, eda, kb, pb, ptb, trb, edb, boolean)


@njit(cache=True, nogil=True)
def status_of(signed, tolerance):
    if signed != signed:  # NaN: overlapping with an unknown depth
        return kinds.PENETRATING
    if signed > tolerance:
        return kinds.SEPARATED
    if signed >= -tolerance:
        return kinds.TOUCHING
    return kinds.PENETRATING


@njit(cache=True, nogil=True)
def _point_core_pair(pta, ra, ta, ptb, rb, tb):
    """Fast path for point/sphere pairs: straight in world coordinates, no frame change."""
    ca = apply_point(ta, pta[0])
    cb = apply_point(tb, ptb[0])
    return finish_core_distance(ca, ra, cb, rb, np.array([0.0, 0.0, 1.0]), 0.0)


# ---- the verbs over a core (inline: see _ordered_core)
@njit(cache=True, nogil=True, inline="always")
def _cores_distance(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """pair_distance without GJK, through ``core``: closed forms, SAT depth and feature
    enumeration."""
    if ka <= kinds.SPHERE and kb <= kinds.SPHERE:
        signed, point_a, point_b, normal = _point_core_pair(pta, core_radius(ka, pa), ta, ptb, core_radius(kb, pb), tb)
        return signed, point_a, point_b, normal, status_of(signed, tolerance)
    if ka <= kb:
        signed, point_a, point_b, normal = _ordered_core(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, False)
        frame = tb
    else:
        signed, point_b, point_a, normal = _ordered_core(core, kb, pb, ptb, trb, edb, tb, ka, pa, pta, tra, eda, ta, False)
        normal = -normal
        frame = ta
    return signed, apply_point(frame, point_a), apply_point(frame, point_b), apply_vector(frame, normal), status_of(signed, tolerance)


@njit(cache=True, nogil=True, inline="always")
def _cores_intersect(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb):
    """pair_intersects without GJK, through ``core``."""
    if ka <= kinds.SPHERE and kb <= kinds.SPHERE:
        reach = core_radius(ka, pa) + core_radius(kb, pb)
        squared = 0.0
        for i in range(3):
            delta = (
                ta[i, 0] * pta[0, 0] + ta[i, 1] * pta[0, 1] + ta[i, 2] * pta[0, 2] + ta[i, 3]
                - tb[i, 0] * ptb[0, 0] - tb[i, 1] * ptb[0, 1] - tb[i, 2] * ptb[0, 2] - tb[i, 3]
            )
            squared += delta * delta
        return squared <= reach * reach
    if ka <= kb:
        signed = _ordered_core(core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, True)[0]
    else:
        signed = _ordered_core(core, kb, pb, ptb, trb, edb, tb, ka, pa, pta, tra, eda, ta, True)[0]
    return not (signed > 0.0)


@njit(cache=True, nogil=True, inline="always")
def _large_polytopes_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance):
    """Two polytopes whose SAT edge-pair axes would cost too much (big hulls): GJK for the
    distance, EPA for the depth."""
    signed, point_a, point_b, normal, gjk_status, _ = gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if gjk_status == kinds.GJK_SEPARATED:
        return signed, point_a, point_b, normal, kinds.SEPARATED
    if gjk_status == kinds.GJK_MAX_ITERATIONS or gjk_status == kinds.GJK_DEGENERATE:
        return signed, point_a, point_b, normal, gjk_status
    return signed, point_a, point_b, normal, status_of(signed, tolerance)


@njit(cache=True, nogil=True, inline="always")
def _small_polytopes_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Two polytopes: GJK settles the separated case fast; overlap takes the exact SAT depth
    (EPA is not run: its depth would be discarded)."""
    separated, signed, point_a, point_b, normal = gjk_pair_separation(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if separated:
        return signed, point_a, point_b, normal, kinds.SEPARATED
    return _cores_distance(_core_polytopes, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


# ---- every pair in one function (tests, oracles); the public verbs go through the families
@njit(cache=True, nogil=True, inline="always")
def pair_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Signed distance, world points, normal (A to B) and status of one pair."""
    if not is_supported(ka, kb):
        return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED
    if _gjk_handles(ka, kb):
        return _gjk_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    if _is_polytope(ka) and _is_polytope(kb):
        if _sat_cost(pa) * _sat_cost(pb) > SAT_COST_LIMIT:
            return _large_polytopes_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
        return _small_polytopes_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)
    return _cores_distance(_core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True, inline="always")
def engine_pair_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """pair_distance without GJK: closed forms, SAT depth and feature enumeration (the oracle
    that GJK is cross-checked against in the tests)."""
    return _cores_distance(_core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True, inline="always")
def pair_intersects(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb):
    """Closed-set overlap of one pair (touching counts)."""
    if _gjk_handles(ka, kb) or (
        (ka == kinds.POLYHEDRON and _is_polytope(kb)) or (kb == kinds.POLYHEDRON and _is_polytope(ka))
    ):
        return _gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb)
    return _cores_intersect(_core, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb)


# ----------------------------------------------------------------------------------------------
# the engine families: one signature (PAIR_ENGINE), several kernels behind boundaries
#
# Every driver (batch.py, manifold.py) calls the pair engine through an address that Python
# passes in (jit.KernelBoundary). The engine is split by the pairs it answers, and Python
# passes the address of the smallest family that answers the call (engine_address), so a first
# query compiles only its family: closed forms for points / lines against anything, SAT for
# polytopes, GJK (and EPA) for curved solids and big hulls, a GJK boolean for overlap tests,
# and the brute force over a mesh's triangles (the reference for the mesh trees). Results are
# the same as pair_distance / pair_intersects for every pair a family is given: each family is
# those functions with the branches of other families left out.
#
# Each family takes both verbs: ``intersects_only`` gives pair_intersects as (0.0 when they
# overlap, else inf; NaN points and normal; TOUCHING / SEPARATED), otherwise pair_distance.
@njit(cache=True, nogil=True, inline="always")
def _boolean_answer(overlapping):
    # one NaN array for the three unused fields: an allocation per array is a measurable part of
    # a GJK pair's intersects (the callers read only the first field)
    unused = nan3()
    if overlapping:
        return 0.0, unused, unused, unused, kinds.TOUCHING
    return np.inf, unused, unused, unused, kinds.SEPARATED


# Margins and lower bounds (issue 19) travel through the boolean call too: with
# ``intersects_only`` the engine's float argument (the touching tolerance of a distance, unused
# by a boolean) is the query's THRESHOLD: 0.0 is today's overlap test; a margin > 0 asks whether
# the distance is <= margin (answered like the overlap test: 0.0 within, inf beyond);
# LOWER_BOUND_QUERY asks for a certified lower bound L of the distance (first field, 0 <= L <=
# distance up to rounding; NaN points and normal; SEPARATED when L > 0, else TOUCHING: they
# touch or overlap). Only the GJK-backed families (polytope_engine, gjk_boolean_engine) take a
# non-zero threshold: the closed forms are exact and cheap, so the verbs answer their pairs from
# the distance (touche/query.py), and a shape swept by a radius is inflated there instead.
# Carrying the threshold in an existing argument keeps the engine's one signature (a new
# argument would recompile every driver of every family).
LOWER_BOUND_QUERY = -1.0
# a lower-bound query stops when its bound is within this fraction of GJK's upper bound: a few
# iterations for polytopes, far fewer than the 1e-12 relative convergence of a distance
LOWER_BOUND_RELATIVE = 0.1


@njit(cache=True, nogil=True)
def _gjk_threshold_answer(ka, pa, pta, ta, kb, pb, ptb, tb, threshold):
    """The margin test (threshold > 0) or the lower bound (LOWER_BOUND_QUERY) of a pair GJK
    answers, through gjk.gjk_distance_bounds (rays and lines clipped as for the distance)."""
    ka, pa, pta, _ = _bounded_for_gjk(ka, pa, pta, ta, kb, pb, ptb, tb)
    kb, pb, ptb, _ = _bounded_for_gjk(kb, pb, ptb, tb, ka, pa, pta, ta)
    unused = nan3()
    if threshold < 0.0:
        lower, _, _ = gjk_distance_bounds(ka, pa, pta, ta, kb, pb, ptb, tb, 0.0, LOWER_BOUND_RELATIVE)
        return lower, unused, unused, unused, kinds.SEPARATED if lower > 0.0 else kinds.TOUCHING
    lower, upper, rounding = gjk_distance_bounds(ka, pa, pta, ta, kb, pb, ptb, tb, threshold, np.inf)
    if upper <= threshold:
        within = True
    elif lower > threshold:
        within = False
    else:  # stopped by rounding between the bounds: decide as the overlap test does
        within = upper <= threshold + rounding
    return _boolean_answer(within)


@njit(cache=True, nogil=True)
def closed_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Pairs of _core_closed: no polytope pair, nothing that needs GJK, no mesh."""
    if intersects_only:
        return _boolean_answer(_cores_intersect(_core_closed, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb))
    return _cores_distance(_core_closed, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True)
def polytope_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Two polytopes: overlap by SAT (no polyhedron: that is the GJK boolean's), distance by GJK
    and the SAT depth (not for big hulls: that is the GJK engine's)."""
    if intersects_only:
        if tolerance != 0.0:  # a margin or a lower bound (see LOWER_BOUND_QUERY)
            return _gjk_threshold_answer(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
        return _boolean_answer(_cores_intersect(_core_polytopes, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb))
    return _small_polytopes_distance(ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


@njit(cache=True, nogil=True)
def gjk_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Distance of the pairs GJK handles (_gjk_handles) and of big polytopes, GJK + EPA."""
    if intersects_only:
        return _boolean_answer(_gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb))
    if _gjk_handles(ka, kb):
        return _gjk_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
    return _large_polytopes_distance(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)


@njit(cache=True, nogil=True)
def gjk_boolean_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """Overlap of the pairs pair_intersects gives to GJK (no EPA: a boolean needs no depth).
    Distances are the GJK engine's; asked for one, it answers UNSUPPORTED."""
    if intersects_only:
        if tolerance != 0.0:  # a margin or a lower bound (see LOWER_BOUND_QUERY)
            return _gjk_threshold_answer(ka, pa, pta, ta, kb, pb, ptb, tb, tolerance)
        return _boolean_answer(_gjk_intersects(ka, pa, pta, ta, kb, pb, ptb, tb))
    return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED


@njit(cache=True, nogil=True)
def mesh_engine(intersects_only, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance):
    """A convex shape against a mesh by brute force over its triangles (the public verbs use the
    mesh's BVH, bvh_shape.py; this is their reference); two meshes are UNSUPPORTED."""
    if not is_supported(ka, kb):
        return np.nan, nan3(), nan3(), nan3(), kinds.UNSUPPORTED
    if intersects_only:
        return _boolean_answer(_cores_intersect(_core_mesh, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb))
    return _cores_distance(_core_mesh, ka, pa, pta, tra, eda, ta, kb, pb, ptb, trb, edb, tb, tolerance)


_SHAPE_TYPES = (_types.int64, _types.float64[::1], _types.float64[:, ::1], _types.int64[:, ::1],
                _types.int64[:, ::1], _types.float64[:, ::1])
_VECTOR = _types.float64[::1]
# the drivers' one way into the engine (see jit.KernelInterface): call_pair_engine(address, (...))
PAIR_ENGINE = KernelInterface(
    "pair engine",
    (_types.boolean,) + _SHAPE_TYPES + _SHAPE_TYPES + (_types.float64,),
    _types.Tuple((_types.float64, _VECTOR, _VECTOR, _VECTOR, _types.int64)),
)
call_pair_engine = PAIR_ENGINE.call  # kernels call the intrinsic by a global name
CLOSED_ENGINE = PAIR_ENGINE.implement(closed_engine)
POLYTOPE_ENGINE = PAIR_ENGINE.implement(polytope_engine)
GJK_ENGINE = PAIR_ENGINE.implement(gjk_engine)
GJK_BOOLEAN_ENGINE = PAIR_ENGINE.implement(gjk_boolean_engine)
MESH_BRUTE_ENGINE = PAIR_ENGINE.implement(mesh_engine)
ENGINE_FAMILIES = (CLOSED_ENGINE, POLYTOPE_ENGINE, GJK_ENGINE, GJK_BOOLEAN_ENGINE, MESH_BRUTE_ENGINE)


# ---- which family answers a call (plain Python: the verbs call it before every query)
def _python_gjk_handles(kind_a, kind_b):
    lo, hi = min(kind_a, kind_b), max(kind_a, kind_b)
    if hi < kinds.CYLINDER or hi >= kinds.PLANE:
        return False
    return not (lo <= kinds.SPHERE and hi in (kinds.CYLINDER, kinds.CONE))


def _python_is_polytope(kind):
    return kinds.TRIANGLE <= kind <= kinds.POLYHEDRON


# polytopes whose SAT cost is small whatever their size (a fixed vertex and direction count)
_FIXED_POLYTOPES = (kinds.TRIANGLE, kinds.TETRAHEDRON, kinds.BOX)
_BY_COST = None  # polytope distance: the family depends on the two hulls' SAT cost


def _family(kind_a, kind_b, intersects_only):
    """The family of pair_distance / pair_intersects for these kinds (the same branches)."""
    if kinds.MESH in (kind_a, kind_b):
        return MESH_BRUTE_ENGINE
    both_polytopes = _python_is_polytope(kind_a) and _python_is_polytope(kind_b)
    if intersects_only:
        if _python_gjk_handles(kind_a, kind_b) or (both_polytopes and kinds.POLYHEDRON in (kind_a, kind_b)):
            return GJK_BOOLEAN_ENGINE
        return POLYTOPE_ENGINE if both_polytopes else CLOSED_ENGINE
    if _python_gjk_handles(kind_a, kind_b):
        return GJK_ENGINE
    if both_polytopes:
        return POLYTOPE_ENGINE if kind_a in _FIXED_POLYTOPES and kind_b in _FIXED_POLYTOPES else _BY_COST
    return CLOSED_ENGINE


_FAMILIES = {(kind_a, kind_b, flag): _family(kind_a, kind_b, flag)
             for kind_a in range(kinds.NUM_KINDS) for kind_b in range(kinds.NUM_KINDS) for flag in (False, True)}


def engine_address(kind_a, params_a, kind_b, params_b, intersects_only=False):
    """The address of the pair engine family that answers this pair (compiled on first use)."""
    family = _FAMILIES[kind_a, kind_b, intersects_only]
    if family is _BY_COST:
        big = float(params_a[2] * params_a[0]) * float(params_b[2] * params_b[0]) > SAT_COST_LIMIT
        family = GJK_ENGINE if big else POLYTOPE_ENGINE
    return family.address()
