"""The pair engine's closed forms (pairs.py dispatches to them): small vector helpers, the
transforms into one frame, the cores (see kinds.py), and the point and linear cores against
polytopes, round solids and planes; two linear elements; planes against any core.

Result convention: see pairs.py (``(signed_distance, point_a, point_b, normal, status)``).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()

from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_point_cone, closest_point_cylinder, closest_point_linear
from touche._kernels.primitives.closest import closest_point_obb, closest_point_triangle, closest_points_linear_linear
from touche._kernels.convex.support import margin_of, support_local, unwrap_rounded
from touche._kernels.primitives.sat import sat_convex
from touche._kernels.base.vec import cross as _cross
from touche._kernels.base.vec import dot as _dot
from touche._kernels.base.vec import norm as _norm


# ----------------------------------------------------------------------------------------------
# small vector helpers


@njit(cache=True, nogil=True)
def any_perpendicular(u):
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
    # row by row in place (apply_point / apply_vector's arithmetic, same order): a new 3-array per
    # row cost ~1 us for a box's 17 rows, more than the query it prepares
    for row in range(points.shape[0]):
        x = points[row, 0]
        y = points[row, 1]
        z = points[row, 2]
        if row < first_vector:
            for i in range(3):
                moved[row, i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z + t[i, 3]
        else:
            for i in range(3):
                moved[row, i] = t[i, 0] * x + t[i, 1] * y + t[i, 2] * z
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
            center = params[4 + n_planes : 7 + n_planes]
            for i in range(3):
                new_params[start + i] = t[i, 0] * center[0] + t[i, 1] * center[1] + t[i, 2] * center[2] + t[i, 3]
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
def polytope_counts(params):
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
def box_center_half(params):
    """(center, half extents) of a packed box in its own frame, whose axes are the frame's."""
    n_planes = int(params[1])
    return params[4 + n_planes : 7 + n_planes], params[7 + n_planes : 10 + n_planes]


@njit(cache=True, nogil=True)
def box_frame(params, points):
    """(center, axes, half) of a packed box in whatever frame it was moved to: its first three
    plane normals are its +x, +y, +z axes (columns of ``axes``)."""
    nv = int(params[0])
    axes = np.empty((3, 3))
    for i in range(3):
        copy_into(axes[:, i], points[nv + i])
    center, half = box_center_half(params)
    return center, axes, half


@njit(cache=True, nogil=True)
def _closest_point_polytope(p, kind, params, points, triangles):
    """Closest point of a solid polytope to p; when p is inside, p itself with the depth
    (distance to the nearest face plane) and that plane's outward normal."""
    nv, n_planes, _, _ = polytope_counts(params)
    if kind == kinds.BOX:
        center, axes, half = box_frame(params, points)
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
def vertex_gap(v, kind, params, points, triangles):
    """The polytope's closest point to the vertex v and their squared distance."""
    q, _, _ = _closest_point_polytope(v, kind, params, points, triangles)
    return q, _dot(q - v, q - v)


@njit(cache=True, nogil=True)
def point_vs_polytope(c, r, kind, params, points, triangles):
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
    radial_unit = radial_vec / rho if rho > 0.0 else any_perpendicular(axis_unit)
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
def point_vs_round(c, r, kind, params, points):
    if kind == kinds.CYLINDER:
        q = closest_point_cylinder(c, points[0], points[1], params[0])
    else:
        q = closest_point_cone(c, points[0], points[1], params[0])
    depth = 0.0
    outward = np.array([0.0, 0.0, 1.0])
    if q[0] == c[0] and q[1] == c[1] and q[2] == c[2]:
        depth, outward = _round_inside_depth(c, kind, params, points)
    return finish_core_distance(c, r, q, 0.0, -outward, depth)


# ----------------------------------------------------------------------------------------------
# linear core vs ...
@njit(cache=True, nogil=True)
def _clip_linear_polytope(p, d, lo, hi, params, points):
    """Cyrus-Beck clip (Ericson 5.3.8) of p + t d, t in [lo, hi], against the polytope's planes.
    Flat polytopes carry both faces (n and -n), so a crossing clips to the single t where the
    element meets the plane: both bounds are computed from exactly negated numbers (IEEE negation
    is exact), so the interval [t*, t*] is never lost to round-off."""
    nv, n_planes, _, _ = polytope_counts(params)
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
    nv, n_planes, n_dirs, n_sat = polytope_counts(params)
    seg_verts = np.empty((2, 3))
    copy_into(seg_verts[0], a)
    copy_into(seg_verts[1], b)
    direction = b - a
    seg_dirs = np.empty((1, 3))
    copy_into(seg_dirs[0], direction)
    extra = np.zeros((0, 3))
    if _is_flat(kind) and n_planes > 0:
        # in-plane axis perpendicular to the segment (needed when the segment lies in the plane)
        side = _cross(points[nv], direction)
        length = _norm(side)
        if length > 0.0:
            extra = np.empty((1, 3))
            copy_into(extra[0], side / length)
    if _norm(direction) == 0.0:
        seg_dirs = np.zeros((0, 3))
    return sat_convex(
        seg_verts, seg_dirs, extra,
        points[:nv], points[nv + n_planes : nv + n_planes + n_dirs], points[nv : nv + n_sat],
    )


@njit(cache=True, nogil=True)
def linear_vs_polytope(kind_a, params_a, points_a, kind, params, points, triangles, edges, boolean):
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
def shape_vs_plane(kind_a, params_a, points_a, normal, offset, halfspace):
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
def plane_vs_plane(kind_a, points_a, kind_b, points_b):
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
# two linear cores, and the status of a signed distance
@njit(cache=True, nogil=True)
def linear_pair(ka, pa, pta, kb, pb, ptb):
    """A point or linear core A against a linear core B."""
    ra = core_radius(ka, pa)
    rb = core_radius(kb, pb)
    pb_, db_, lob, hib = linear_core(kb, ptb)
    if ka <= kinds.SPHERE:
        q, _ = closest_point_linear(pta[0], pb_, db_, lob, hib)
        return finish_core_distance(pta[0], ra, q, rb, any_perpendicular(db_), 0.0)
    pa_, da_, loa, hia = linear_core(ka, pta)
    _, _, c1, c2 = closest_points_linear_linear(pa_, da_, loa, hia, pb_, db_, lob, hib)
    fallback = _cross(da_, db_)
    length = _norm(fallback)
    fallback = fallback / length if length > 0.0 else any_perpendicular(da_)
    return finish_core_distance(c1, ra, c2, rb, fallback, 0.0)


@njit(cache=True, nogil=True)
def status_of(signed, tolerance):
    if signed != signed:  # NaN: overlapping with an unknown depth
        return kinds.PENETRATING
    if signed > tolerance:
        return kinds.SEPARATED
    if signed >= -tolerance:
        return kinds.TOUCHING
    return kinds.PENETRATING
