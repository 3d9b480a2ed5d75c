"""Bounding-volume fitting kernels (Ericson ch. 4, 6.5; Eberly S1 6.1).

Stable entry points used by the BVH builder (per node, on a subset of a mesh's triangles):

``triangle_covariance_frame(vertices (n,3) f8, triangles (m,3) i8, ids (k,) i8) -> axes (3,3)``
    Rows of ``axes`` are a right-handed orthonormal frame: the eigenvectors of the continuous
    (area-weighted) covariance of the triangles ``triangles[ids]`` (Gottschalk, Ericson 4.4.3),
    sorted by decreasing eigenvalue (axes[0] = direction of largest spread). When the total area
    is ~0 (all triangles degenerate) the covariance of the triangles' corner points is used; a
    zero or isotropic covariance still yields a valid frame (never NaN for finite input).
``fit_obb_in_frame(vertices, triangles, ids, axes) -> (center (3,), half_extents (3,))``
    The tightest box with the given axes around every corner of ``triangles[ids]``.
``fit_rss_in_frame(vertices, triangles, ids, axes) -> (origin (3,), lengths (2,), radius)``
    Rectangle swept sphere: the rectangle ``origin + s*lengths[0]*axes[0] + t*lengths[1]*axes[1]``
    (s, t in [0, 1]) swept by a sphere of ``radius``; radius = half the spread along axes[2], the
    rectangle shrunk where the rounded edges/corners still cover the points, so every corner
    point lies within ``radius`` of the rectangle.
All three accept any int64 ``ids`` subset (repeats allowed); empty ``ids`` give the identity
frame / zero-size volumes at the origin. ``triangles`` must be int64 and in range (unchecked).

Everything else here backs touche.bounding (see that package for the conventions), as do
bounding_spheres.py (spheres, capsules) and bounding_obb.py (OBB searches over frames).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402
from touche._kernels.primitives.tri_distance import edges_normal  # noqa: E402


# Total triangle area below AREA_DEGENERATE * scale^2 -> the triangles carry no usable surface
# and the (discrete) vertex covariance decides the frame instead.
AREA_DEGENERATE = 1e-12


# ---------------------------------------------------------------------------------------------
# small linear algebra
@njit(cache=True, nogil=True)
def jacobi_eigen(matrix):
    """Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations (Ericson 4.3.3).

    Returns (values (3,), vectors (3,3) with eigenvectors in COLUMNS). A zero matrix gives the
    identity; the vectors are always orthonormal (products of plane rotations)."""
    a = matrix.copy()
    v = np.eye(3)
    for _sweep in range(64):
        off = a[0, 1] * a[0, 1] + a[0, 2] * a[0, 2] + a[1, 2] * a[1, 2]
        diag = a[0, 0] * a[0, 0] + a[1, 1] * a[1, 1] + a[2, 2] * a[2, 2]
        if off == 0.0 or off <= 1e-32 * diag:
            break
        for pair in range(3):
            if pair == 0:
                p, q = 0, 1
            elif pair == 1:
                p, q = 0, 2
            else:
                p, q = 1, 2
            apq = a[p, q]
            if apq == 0.0:
                continue
            theta = (a[q, q] - a[p, p]) / (2.0 * apq)
            if abs(theta) > 1e150:  # theta^2 would overflow; t ~ 1 / (2 theta)
                t = 0.5 / theta
            else:
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
            c = 1.0 / np.sqrt(t * t + 1.0)
            s = t * c
            # a <- J^T a J, v <- v J with J the rotation in the (p, q) plane
            for k in range(3):
                akp = a[k, p]
                akq = a[k, q]
                a[k, p] = c * akp - s * akq
                a[k, q] = s * akp + c * akq
            for k in range(3):
                apk = a[p, k]
                aqk = a[q, k]
                a[p, k] = c * apk - s * aqk
                a[q, k] = s * apk + c * aqk
            for k in range(3):
                vkp = v[k, p]
                vkq = v[k, q]
                v[k, p] = c * vkp - s * vkq
                v[k, q] = s * vkp + c * vkq
    values = np.empty(3)
    for k in range(3):
        values[k] = a[k, k]
    return values, v


@njit(cache=True, nogil=True)
def perpendicular_from_axis(a):
    """A vector perpendicular to the unit vector ``a`` (not normalised): the coordinate axis
    least aligned with ``a`` minus its component along ``a``."""
    k = 0
    if abs(a[1]) < abs(a[k]):
        k = 1
    if abs(a[2]) < abs(a[k]):
        k = 2
    e = np.zeros(3)
    e[k] = 1.0
    return e - _dot(e, a) * a


@njit(cache=True, nogil=True)
def orthonormal_frame(rows):
    """Gram-Schmidt of rows 0 and 1, row 2 = row0 x row1: a right-handed orthonormal frame.
    Falls back to a completion of whatever is usable (identity if nothing is)."""
    out = np.empty((3, 3))
    a = rows[0].copy()
    n = np.sqrt(_dot(a, a))
    if not (n > 1e-300) or not np.isfinite(n):
        a[0] = 1.0
        a[1] = 0.0
        a[2] = 0.0
        n = 1.0
    a = a / n
    b = rows[1] - _dot(rows[1], a) * a
    nb = np.sqrt(_dot(b, b))
    if not (nb > 1e-8 * np.sqrt(_dot(rows[1], rows[1]))) or not (nb > 1e-300) or not np.isfinite(nb):
        b = perpendicular_from_axis(a)
        nb = np.sqrt(_dot(b, b))
    b = b / nb
    c = _cross(a, b)
    c = c / np.sqrt(_dot(c, c))
    for k in range(3):
        out[0, k] = a[k]
        out[1, k] = b[k]
        out[2, k] = c[k]
    return out


@njit(cache=True, nogil=True)
def frame_from_covariance(cov):
    """Eigenvectors of ``cov`` as rows, by decreasing eigenvalue, right-handed orthonormal."""
    values, vectors = jacobi_eigen(cov)
    order = np.argsort(-values)
    rows = np.empty((3, 3))
    for r in range(3):
        for k in range(3):
            rows[r, k] = vectors[k, order[r]]
    return orthonormal_frame(rows)


@njit(cache=True, nogil=True)
def rotation_from_vector(w):
    """Rodrigues: the rotation matrix exp([w]x)."""
    out = np.eye(3)
    rotation_into(w[0], w[1], w[2], out)
    return out


@njit(cache=True, nogil=True)
def rotation_into(wx, wy, wz, out):
    """rotation_from_vector((wx, wy, wz)) written into the top-left 3 x 3 of ``out`` (left as it
    is for a zero vector: the caller's identity), without an allocation (robot kinematics run it
    once per joint and configuration)."""
    angle = np.sqrt(wx * wx + wy * wy + wz * wz)
    if angle < 1e-300:
        return
    x = wx / angle
    y = wy / angle
    z = wz / angle
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    out[0, 0] = c + x * x * t
    out[0, 1] = x * y * t - z * s
    out[0, 2] = x * z * t + y * s
    out[1, 0] = y * x * t + z * s
    out[1, 1] = c + y * y * t
    out[1, 2] = y * z * t - x * s
    out[2, 0] = z * x * t - y * s
    out[2, 1] = z * y * t + x * s
    out[2, 2] = c + z * z * t


# ---------------------------------------------------------------------------------------------
# covariance
@njit(cache=True, nogil=True)
def point_covariance(points):
    """Covariance matrix (3,3) of the points (Ericson 4.3.3), computed about the mean."""
    n = points.shape[0]
    mean = np.zeros(3)
    for i in range(n):
        for k in range(3):
            mean[k] += points[i, k]
    mean /= n
    cov = np.zeros((3, 3))
    for i in range(n):
        for r in range(3):
            dr = points[i, r] - mean[r]
            for c in range(r, 3):
                cov[r, c] += dr * (points[i, c] - mean[c])
    cov /= n
    for r in range(3):
        for c in range(r):
            cov[r, c] = cov[c, r]
    return cov


@njit(cache=True, nogil=True)
def triangle_covariance(vertices, triangles, ids):
    """Continuous covariance (3,3) of the surface of triangles[ids] (Ericson 4.4.3, Gottschalk):
    C = (1/aH) sum_k a_k/12 (9 m_k m_k^T + p p^T + q q^T + r r^T) - mH mH^T, computed about a
    reference point (the mean corner) so that far-from-origin input does not cancel. The seed S1
    formula (L2276-2335) is wrong and not used. Falls back to the corner-point covariance when
    the total area is ~0."""
    k_count = ids.shape[0]
    ref = np.zeros(3)
    for t in range(k_count):
        tri = triangles[ids[t]]
        for j in range(3):
            for c in range(3):
                ref[c] += vertices[tri[j], c]
    ref /= 3.0 * k_count
    scale2 = 0.0
    for t in range(k_count):
        tri = triangles[ids[t]]
        for j in range(3):
            d2 = 0.0
            for c in range(3):
                d = vertices[tri[j], c] - ref[c]
                d2 += d * d
            if d2 > scale2:
                scale2 = d2
    acc = np.zeros((3, 3))
    centroid = np.zeros(3)
    total = 0.0
    p = np.empty(3)
    q = np.empty(3)
    r = np.empty(3)
    m = np.empty(3)
    for t in range(k_count):
        tri = triangles[ids[t]]
        for c in range(3):
            p[c] = vertices[tri[0], c] - ref[c]
            q[c] = vertices[tri[1], c] - ref[c]
            r[c] = vertices[tri[2], c] - ref[c]
            m[c] = (p[c] + q[c] + r[c]) / 3.0
        _, _, _, _, _, _, n0, n1, n2 = edges_normal((p[0], p[1], p[2], q[0], q[1], q[2], r[0], r[1], r[2]))
        area = 0.5 * np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        if area == 0.0:
            continue
        total += area
        w = area / 12.0
        for a in range(3):
            centroid[a] += area * m[a]
            for b in range(a, 3):
                acc[a, b] += w * (9.0 * m[a] * m[b] + p[a] * p[b] + q[a] * q[b] + r[a] * r[b])
    if not (total > AREA_DEGENERATE * scale2) or scale2 == 0.0:
        return point_covariance(_gather_corners(vertices, triangles, ids))
    centroid /= total
    cov = np.empty((3, 3))
    for a in range(3):
        for b in range(a, 3):
            cov[a, b] = acc[a, b] / total - centroid[a] * centroid[b]
            cov[b, a] = cov[a, b]
    return cov


@njit(cache=True, nogil=True)
def triangle_covariance_frame(vertices, triangles, ids):
    """Right-handed orthonormal axes (3,3) (rows) of the continuous triangle covariance of
    triangles[ids], by decreasing spread. See the module docstring."""
    if ids.shape[0] == 0:
        return np.eye(3)
    return frame_from_covariance(triangle_covariance(vertices, triangles, ids))


# ---------------------------------------------------------------------------------------------
# fits in a given frame
@njit(cache=True, nogil=True)
def box_in_frame(points, axes):
    """(center (3,), half_extents (3,)) of the tightest box with rows ``axes`` around points.
    Projections are taken relative to the first point (far-from-origin input keeps precision)."""
    n = points.shape[0]
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    ref = points[0].copy()
    for i in range(n):
        for a in range(3):
            s = 0.0
            for c in range(3):
                s += (points[i, c] - ref[c]) * axes[a, c]
            if s < lo[a]:
                lo[a] = s
            if s > hi[a]:
                hi[a] = s
    center = ref.copy()
    half = np.empty(3)
    for a in range(3):
        mid = 0.5 * (lo[a] + hi[a])
        half[a] = 0.5 * (hi[a] - lo[a])
        for c in range(3):
            center[c] += mid * axes[a, c]
    return center, half


@njit(cache=True, nogil=True)
def _gather_corners(vertices, triangles, ids):
    k_count = ids.shape[0]
    corners = np.empty((3 * k_count, 3))
    for t in range(k_count):
        tri = triangles[ids[t]]
        for j in range(3):
            for c in range(3):
                corners[3 * t + j, c] = vertices[tri[j], c]
    return corners


@njit(cache=True, nogil=True)
def fit_obb_in_frame(vertices, triangles, ids, axes):
    """(center (3,), half_extents (3,)) of the box with rows ``axes`` around every corner of
    triangles[ids] (empty ids: zeros)."""
    if ids.shape[0] == 0:
        return np.zeros(3), np.zeros(3)
    return box_in_frame(_gather_corners(vertices, triangles, ids), axes)


@njit(cache=True, nogil=True)
def rss_fit_spheres(centers, radii, axes):
    """Tight rectangle-swept sphere with the given frame around spheres (centers (n,3), radii (n,)
    >= 0; zero radii = points). Rectangle in the plane of axes[0], axes[1]; returns
    (origin (3,) = rectangle corner, lengths (2,), radius).

    radius R = half the spread of (z_i -/+ r_i) along axes[2]. Sphere i is covered iff its centre
    lies within R - r_i of the rectangle, i.e. its in-plane distance to the rectangle is at most
    s_i = sqrt((R - r_i)^2 - dz_i^2). The rectangle starts as [max_i(x_i - s_i), min_i(x_i + s_i)]
    style bounds (shrunk by each point's slack, Ericson 4.5.2 / the RSS fit of PQP), which covers
    every point whose excess is along one axis only; one pass then grows the rectangle for points
    beyond a corner, moving the cheaper side. Growing never uncovers a point, so one pass ends
    with every sphere covered."""
    n = centers.shape[0]
    ref = centers[0].copy()
    x = np.empty(n)
    y = np.empty(n)
    z = np.empty(n)
    zlo = np.inf
    zhi = -np.inf
    for i in range(n):
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for c in range(3):
            d = centers[i, c] - ref[c]
            sx += d * axes[0, c]
            sy += d * axes[1, c]
            sz += d * axes[2, c]
        x[i] = sx
        y[i] = sy
        z[i] = sz
        if sz - radii[i] < zlo:
            zlo = sz - radii[i]
        if sz + radii[i] > zhi:
            zhi = sz + radii[i]
    radius = 0.5 * (zhi - zlo)
    zmid = 0.5 * (zhi + zlo)
    slack = np.empty(n)
    for i in range(n):
        room = radius - radii[i]
        dz = z[i] - zmid
        s2 = room * room - dz * dz
        slack[i] = np.sqrt(s2) if s2 > 0.0 else 0.0
    x0 = np.inf
    x1 = -np.inf
    y0 = np.inf
    y1 = -np.inf
    for i in range(n):
        if x[i] + slack[i] < x0:
            x0 = x[i] + slack[i]
        if x[i] - slack[i] > x1:
            x1 = x[i] - slack[i]
        if y[i] + slack[i] < y0:
            y0 = y[i] + slack[i]
        if y[i] - slack[i] > y1:
            y1 = y[i] - slack[i]
    if x0 > x1:
        x0 = x1 = 0.5 * (x0 + x1)
    if y0 > y1:
        y0 = y1 = 0.5 * (y0 + y1)
    for i in range(n):
        s = slack[i]
        dx = 0.0
        if x[i] < x0:
            dx = x0 - x[i]
        elif x[i] > x1:
            dx = x[i] - x1
        dy = 0.0
        if y[i] < y0:
            dy = y0 - y[i]
        elif y[i] > y1:
            dy = y[i] - y1
        if dx * dx + dy * dy <= s * s:
            continue
        # new excesses (ex, ey) with ex^2 + ey^2 <= s^2; choose the cheaper growth
        grow_x = np.inf
        grow_y = np.inf
        if dy <= s:
            grow_x = dx - np.sqrt(max(s * s - dy * dy, 0.0))
        if dx <= s:
            grow_y = dy - np.sqrt(max(s * s - dx * dx, 0.0))
        if grow_x == np.inf and grow_y == np.inf:
            # both excesses beyond the slack: take x fully in, y down to the slack
            grow_x = dx
            grow_y = dy - s
        elif grow_x <= grow_y:
            grow_y = 0.0
        else:
            grow_x = 0.0
        if grow_x > 0.0:
            if x[i] < x0:
                x0 -= grow_x
            else:
                x1 += grow_x
        if grow_y > 0.0:
            if y[i] < y0:
                y0 -= grow_y
            else:
                y1 += grow_y
    origin = ref.copy()
    for c in range(3):
        origin[c] += x0 * axes[0, c] + y0 * axes[1, c] + zmid * axes[2, c]
    lengths = np.empty(2)
    lengths[0] = x1 - x0
    lengths[1] = y1 - y0
    return origin, lengths, radius


@njit(cache=True, nogil=True)
def fit_rss_in_frame(vertices, triangles, ids, axes):
    """(origin (3,), lengths (2,), radius) of the rectangle swept sphere around every corner of
    triangles[ids], rectangle spanned by axes[0], axes[1]; see rss_fit_spheres."""
    if ids.shape[0] == 0:
        return np.zeros(3), np.zeros(2), 0.0
    corners = _gather_corners(vertices, triangles, ids)
    return rss_fit_spheres(corners, np.zeros(corners.shape[0]), axes)


# ---------------------------------------------------------------------------------------------
# squared distance (the sphere fits, bounding_spheres.py, and frame refinement, bounding_obb.py)
@njit(cache=True, nogil=True)
def dist2(a, b):
    s = 0.0
    for c in range(3):
        d = a[c] - b[c]
        s += d * d
    return s


# ---------------------------------------------------------------------------------------------
# k-DOPs
@njit(cache=True, nogil=True)
def project_extents(points, directions):
    """(min (k,), max (k,)) of the points' projections onto each row of ``directions``."""
    k_count = directions.shape[0]
    lo = np.full(k_count, np.inf)
    hi = np.full(k_count, -np.inf)
    for i in range(points.shape[0]):
        for k in range(k_count):
            s = points[i, 0] * directions[k, 0] + points[i, 1] * directions[k, 1] + points[i, 2] * directions[k, 2]
            if s < lo[k]:
                lo[k] = s
            if s > hi[k]:
                hi[k] = s
    return lo, hi
