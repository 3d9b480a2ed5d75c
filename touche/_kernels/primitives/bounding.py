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

Everything else here backs touche.bounding (see that package for the conventions).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402

# Total triangle area below AREA_DEGENERATE * scale^2 -> the triangles carry no usable surface
# and the (discrete) vertex covariance decides the frame instead.
AREA_DEGENERATE = 1e-12
# Welzl / Ritter: a point counts as inside when |p - c|^2 <= r^2 (1 + SPHERE_SLACK) (+ tiny):
# without the slack, round-off would re-add support points endlessly at the same sphere.
SPHERE_SLACK = 1e-12


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
        # pick the coordinate axis least aligned with a
        k = 0
        if abs(a[1]) < abs(a[k]):
            k = 1
        if abs(a[2]) < abs(a[k]):
            k = 2
        e = np.zeros(3)
        e[k] = 1.0
        b = e - _dot(e, a) * a
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
    angle = np.sqrt(_dot(w, w))
    out = np.eye(3)
    if angle < 1e-300:
        return out
    x = w[0] / angle
    y = w[1] / angle
    z = w[2] / angle
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
    return out


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
        e0 = q[0] - p[0]
        e1 = q[1] - p[1]
        e2 = q[2] - p[2]
        f0 = r[0] - p[0]
        f1 = r[1] - p[1]
        f2 = r[2] - p[2]
        n0 = e1 * f2 - e2 * f1
        n1 = e2 * f0 - e0 * f2
        n2 = e0 * f1 - e1 * f0
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
        corners = np.empty((3 * k_count, 3))
        for t in range(k_count):
            tri = triangles[ids[t]]
            for j in range(3):
                for c in range(3):
                    corners[3 * t + j, c] = vertices[tri[j], c]
        return point_covariance(corners)
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
def _box_in_frame(points, axes):
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
    return _box_in_frame(_gather_corners(vertices, triangles, ids), axes)


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
# spheres
@njit(cache=True, nogil=True)
def _dist2(a, b):
    s = 0.0
    for c in range(3):
        d = a[c] - b[c]
        s += d * d
    return s


@njit(cache=True, nogil=True)
def enclose_all(points, center, radius):
    """The radius that makes the ball at ``center`` contain every point exactly in floating point
    (max of ``radius`` and every distance): the final guarantee after an iterative fit."""
    r2 = radius * radius
    for i in range(points.shape[0]):
        d2 = _dist2(points[i], center)
        if d2 > r2:
            r2 = d2
    return max(radius, np.sqrt(r2))


@njit(cache=True, nogil=True)
def _grow_sphere(center, radius, p):
    """Ericson 4.3.2 SphereOfSphereAndPt: the smallest sphere holding the sphere and p (in place
    on center; returns the new radius)."""
    d2 = _dist2(p, center)
    if d2 <= radius * radius:
        return radius
    d = np.sqrt(d2)
    new_radius = 0.5 * (radius + d)
    k = (new_radius - radius) / d
    for c in range(3):
        center[c] += k * (p[c] - center[c])
    return new_radius


@njit(cache=True, nogil=True)
def ritter_sphere(points):
    """Ritter's sphere (Ericson 4.3.2): the most separated pair among the x/y/z extreme points
    starts the sphere, every outside point grows it. Returns (center (3,), radius)."""
    n = points.shape[0]
    imin = np.zeros(3, np.int64)
    imax = np.zeros(3, np.int64)
    for i in range(1, n):
        for c in range(3):
            if points[i, c] < points[imin[c], c]:
                imin[c] = i
            if points[i, c] > points[imax[c], c]:
                imax[c] = i
    best = 0
    best_d2 = -1.0
    for c in range(3):
        d2 = _dist2(points[imin[c]], points[imax[c]])
        if d2 > best_d2:
            best_d2 = d2
            best = c
    center = 0.5 * (points[imin[best]] + points[imax[best]])
    radius = 0.5 * np.sqrt(best_d2)
    for i in range(n):
        radius = _grow_sphere(center, radius, points[i])
    return center, enclose_all(points, center, radius)


@njit(cache=True, nogil=True)
def ritter_iterative(points, iterations, seed):
    """Iterative refinement of Ritter's sphere (Ericson 4.3.4): shrink the radius by 5 %, grow
    it again over a random permutation of the points, keep the smallest. Returns
    (center (3,), radius)."""
    center, radius = ritter_sphere(points)
    n = points.shape[0]
    work = points.copy()
    np.random.seed(seed)
    trial_center = center.copy()
    trial_radius = radius
    for _k in range(iterations):
        trial_radius *= 0.95
        for i in range(n - 1):
            j = np.random.randint(i + 1, n)  # Ericson: swap pt[i] with a random later pt[j]
            for c in range(3):
                t = work[i, c]
                work[i, c] = work[j, c]
                work[j, c] = t
        for i in range(n):
            trial_radius = _grow_sphere(trial_center, trial_radius, work[i])
        if trial_radius < radius:
            radius = trial_radius
            center[:] = trial_center
    return center, enclose_all(points, center, radius)


@njit(cache=True, nogil=True)
def pca_sphere(points):
    """Eigen (PCA) sphere (Ericson 4.3.3): the extreme points along the principal direction start
    the sphere, every outside point grows it. Returns (center (3,), radius)."""
    axes = frame_from_covariance(point_covariance(points))
    lo = 0
    hi = 0
    lo_s = np.inf
    hi_s = -np.inf
    for i in range(points.shape[0]):
        s = 0.0
        for c in range(3):
            s += (points[i, c] - points[0, c]) * axes[0, c]
        if s < lo_s:
            lo_s = s
            lo = i
        if s > hi_s:
            hi_s = s
            hi = i
    center = 0.5 * (points[lo] + points[hi])
    radius = 0.5 * np.sqrt(_dist2(points[lo], points[hi]))
    for i in range(points.shape[0]):
        radius = _grow_sphere(center, radius, points[i])
    return center, enclose_all(points, center, radius)


@njit(cache=True, nogil=True)
def _circumball3(a, b, c):
    """Smallest ball with a, b, c on its boundary (the circumcircle's ball); ok=False when the
    points are (nearly) collinear."""
    ab = b - a
    ac = c - a
    n = _cross(ab, ac)
    n2 = _dot(n, n)
    if not (n2 > 1e-24 * _dot(ab, ab) * _dot(ac, ac)) or n2 == 0.0:
        return a.copy(), -1.0, False
    offset = (_dot(ac, ac) * _cross(n, ab) + _dot(ab, ab) * _cross(ac, n)) / (2.0 * n2)
    return a + offset, _dot(offset, offset), True


@njit(cache=True, nogil=True)
def _circumball4(a, b, c, d):
    """Ball with a, b, c, d on its boundary (2 (p_i - a).x = |p_i - a|^2, Cramer); ok=False when
    the points are (nearly) coplanar."""
    u = b - a
    v = c - a
    w = d - a
    vw = _cross(v, w)
    det = 2.0 * _dot(u, vw)
    scale = np.sqrt(_dot(u, u) * _dot(v, v) * _dot(w, w))
    if not (abs(det) > 1e-12 * scale) or scale == 0.0:
        return a.copy(), -1.0, False
    offset = (_dot(u, u) * vw + _dot(v, v) * _cross(w, u) + _dot(w, w) * _cross(u, v)) / det
    return a + offset, _dot(offset, offset), True


@njit(cache=True, nogil=True)
def _small_min_ball(support, m):
    """Minimum ball of m <= 4 points by brute force over 1/2/3/4-point boundary sets; the
    fallback for degenerate (collinear / coplanar) Welzl support sets."""
    best_c = support[0].copy()
    best_r2 = np.inf
    for mask in range(1, 1 << m):
        count = 0
        idx = np.empty(4, np.int64)
        for k in range(m):
            if mask & (1 << k):
                idx[count] = k
                count += 1
        if count == 1:
            c = support[idx[0]].copy()
            r2 = 0.0
            ok = True
        elif count == 2:
            c = 0.5 * (support[idx[0]] + support[idx[1]])
            r2 = 0.25 * _dist2(support[idx[0]], support[idx[1]])
            ok = True
        elif count == 3:
            c, r2, ok = _circumball3(support[idx[0]], support[idx[1]], support[idx[2]])
        else:
            c, r2, ok = _circumball4(support[idx[0]], support[idx[1]], support[idx[2]], support[idx[3]])
        if not ok or r2 >= best_r2:
            continue
        inside = True
        for k in range(m):
            if _dist2(support[k], c) > r2 * (1.0 + 1e-10):
                inside = False
                break
        if inside:
            best_c = c
            best_r2 = r2
    if best_r2 == np.inf:  # cannot happen for finite input; stay safe
        best_r2 = 0.0
        for k in range(m):
            best_r2 = max(best_r2, _dist2(support[k], best_c))
    return best_c, best_r2


@njit(cache=True, nogil=True)
def _outside(p, center, r2):
    return _dist2(p, center) > r2 * (1.0 + SPHERE_SLACK)


@njit(cache=True, nogil=True)
def _move_to_front(order, i):
    item = order[i]
    for k in range(i, 0, -1):
        order[k] = order[k - 1]
    order[0] = item


@njit(cache=True, nogil=True)
def _support_ball(support, m):
    if m == 1:
        return support[0].copy(), 0.0
    if m == 2:
        return 0.5 * (support[0] + support[1]), 0.25 * _dist2(support[0], support[1])
    if m == 3:
        c, r2, ok = _circumball3(support[0], support[1], support[2])
    else:
        c, r2, ok = _circumball4(support[0], support[1], support[2], support[3])
    if ok:
        return c, r2
    return _small_min_ball(support, m)


# Welzl's move-to-front algorithm (Welzl 1991, Gaertner 1999; Ericson 4.3.5), with the recursion
# on the support set written out level by level (numba caches no self-recursive functions). The
# support set never exceeds 4 points: at |support| = 4 the ball is fixed (the base case the
# seed's code omits, see SEED-NOTES).
@njit(cache=True, nogil=True)
def _welzl3(points, order, end, support):
    center, r2 = _support_ball(support, 3)
    four = np.empty((4, 3))
    four[:3] = support[:3]
    for i in range(end):
        p = points[order[i]]
        if _outside(p, center, r2):
            four[3] = p
            center, r2 = _support_ball(four, 4)
            _move_to_front(order, i)
    return center, r2


@njit(cache=True, nogil=True)
def _welzl2(points, order, end, support):
    center, r2 = _support_ball(support, 2)
    deeper = np.empty((4, 3))
    deeper[:2] = support[:2]
    for i in range(end):
        p = points[order[i]]
        if _outside(p, center, r2):
            deeper[2] = p
            center, r2 = _welzl3(points, order, i, deeper)
            _move_to_front(order, i)
    return center, r2


@njit(cache=True, nogil=True)
def _welzl1(points, order, end, support):
    center, r2 = _support_ball(support, 1)
    deeper = np.empty((4, 3))
    deeper[0] = support[0]
    for i in range(end):
        p = points[order[i]]
        if _outside(p, center, r2):
            deeper[1] = p
            center, r2 = _welzl2(points, order, i, deeper)
            _move_to_front(order, i)
    return center, r2


@njit(cache=True, nogil=True)
def welzl_sphere(points, seed):
    """Exact minimum enclosing sphere (Welzl, move-to-front, random initial order from ``seed``).
    Expected O(n). Returns (center (3,), radius), radius bumped to hold every point exactly."""
    n = points.shape[0]
    np.random.seed(seed)
    order = np.random.permutation(n).astype(np.int64)
    center = points[order[0]].copy()
    r2 = 0.0
    support = np.empty((4, 3))
    for i in range(1, n):
        p = points[order[i]]
        if _outside(p, center, r2):
            support[0] = p
            center, r2 = _welzl1(points, order, i, support)
            _move_to_front(order, i)
    return center, enclose_all(points, center, np.sqrt(r2))


# ---------------------------------------------------------------------------------------------
# OBBs: volume in a frame, brute force, face-flush candidates, local refinement
@njit(cache=True, nogil=True)
def box_volume_in_frame(points, axes):
    """Volume of the tightest box with rows ``axes`` around the points."""
    center, half = _box_in_frame(points, axes)
    return 8.0 * half[0] * half[1] * half[2]


@njit(cache=True, nogil=True)
def box_frame_score(points, axes):
    """Ranking key of a box frame: volume, then (for flat / collinear sets whose volume is 0)
    a tiny multiple of the surface area and of the edge sum, so the search still prefers the
    tightest flat box."""
    center, half = _box_in_frame(points, axes)
    a = half[0]
    b = half[1]
    c = half[2]
    return 8.0 * a * b * c + 1e-9 * (a * b + b * c + a * c) * (a + b + c) + 1e-18 * (a + b + c) ** 3


@njit(cache=True, nogil=True)
def _rotated(axes, w):
    """Rows of ``axes`` rotated by exp([w]x) (axes @ R^T)."""
    return orthonormal_frame(axes @ rotation_from_vector(w).T)


@njit(cache=True, nogil=True)
def _frame_from_direction(direction, angle):
    """A right-handed frame whose first axis is ``direction`` (unit) and second axis is the
    perpendicular reference rotated by ``angle`` about it."""
    rows = np.empty((3, 3))
    rows[0] = direction
    k = 0
    if abs(direction[1]) < abs(direction[k]):
        k = 1
    if abs(direction[2]) < abs(direction[k]):
        k = 2
    e = np.zeros(3)
    e[k] = 1.0
    u = e - _dot(e, direction) * direction
    u /= np.sqrt(_dot(u, u))
    v = _cross(direction, u)
    rows[1] = np.cos(angle) * u + np.sin(angle) * v
    rows[2] = _cross(direction, rows[1])
    return orthonormal_frame(rows)


@njit(cache=True, nogil=True)
def obb_brute_force(points, steps, refine_rounds):
    """Brute-force OBB orientation search (Ericson 4.4.5): the first axis over ``steps^2``
    directions of a hemisphere (Fibonacci spiral) times ``steps`` angles in [0, pi/2) about it
    (this covers every box orientation up to the box symmetries), then ``refine_rounds`` rounds
    of a local 3^3 grid of small rotations with halving step. Returns axes (3,3) rows."""
    n_dir = steps * steps
    golden = np.pi * (3.0 - np.sqrt(5.0))
    best = np.eye(3)
    best_score = box_frame_score(points, best)
    direction = np.empty(3)
    for d in range(n_dir):
        z = 1.0 - (d + 0.5) / n_dir  # (0, 1]: upper hemisphere
        ring = np.sqrt(max(1.0 - z * z, 0.0))
        phi = golden * d
        direction[0] = ring * np.cos(phi)
        direction[1] = ring * np.sin(phi)
        direction[2] = z
        for a in range(steps):
            frame = _frame_from_direction(direction, 0.5 * np.pi * a / steps)
            score = box_frame_score(points, frame)
            if score < best_score:
                best_score = score
                best = frame
    delta = 0.5 * np.pi / steps
    w = np.empty(3)
    for _round in range(refine_rounds):
        improved = True
        while improved:
            improved = False
            center_frame = best.copy()
            for i in range(-1, 2):
                for j in range(-1, 2):
                    for k in range(-1, 2):
                        if i == 0 and j == 0 and k == 0:
                            continue
                        w[0] = i * delta
                        w[1] = j * delta
                        w[2] = k * delta
                        frame = _rotated(center_frame, w)
                        score = box_frame_score(points, frame)
                        if score < best_score * (1.0 - 1e-12):
                            best_score = score
                            best = frame
                            improved = True
        delta *= 0.5
    return best


@njit(cache=True, nogil=True)
def _hull2d(xy):
    """Andrew's monotone chain (Ericson 3.9.1): indices of the 2D convex hull, counter-clockwise."""
    n = xy.shape[0]
    # lexicographic (x, then y): sort by x, then insertion-sort each run of equal x by y
    order = np.argsort(xy[:, 0])
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and xy[order[stop], 0] == xy[order[start], 0]:
            stop += 1
        for a in range(start + 1, stop):
            item = order[a]
            b = a - 1
            while b >= start and xy[order[b], 1] > xy[item, 1]:
                order[b + 1] = order[b]
                b -= 1
            order[b + 1] = item
        start = stop
    hull = np.empty(2 * n + 1, np.int64)
    k = 0
    for t in range(n):
        i = order[t]
        while k >= 2:
            a = hull[k - 2]
            b = hull[k - 1]
            cr = (xy[b, 0] - xy[a, 0]) * (xy[i, 1] - xy[a, 1]) - (xy[b, 1] - xy[a, 1]) * (xy[i, 0] - xy[a, 0])
            if cr <= 0.0:
                k -= 1
            else:
                break
        hull[k] = i
        k += 1
    lower = k + 1
    for t in range(n - 2, -1, -1):
        i = order[t]
        while k >= lower:
            a = hull[k - 2]
            b = hull[k - 1]
            cr = (xy[b, 0] - xy[a, 0]) * (xy[i, 1] - xy[a, 1]) - (xy[b, 1] - xy[a, 1]) * (xy[i, 0] - xy[a, 0])
            if cr <= 0.0:
                k -= 1
            else:
                break
        hull[k] = i
        k += 1
    return hull[: max(k - 1, 1)]


@njit(cache=True, nogil=True)
def min_area_rectangle(xy):
    """Minimum-area bounding rectangle of 2D points by rotating calipers (Ericson 4.4.4): one
    side is flush with an edge of the convex hull; the farthest point from the edge and the
    two extremes along it advance monotonically around the hull, so all edges cost O(h).
    Returns (angle of the flush side's direction, area)."""
    hull = _hull2d(xy)
    h = hull.shape[0]
    if h == 1:
        return 0.0, 0.0
    if h == 2:
        a = xy[hull[0]]
        b = xy[hull[1]]
        return np.arctan2(b[1] - a[1], b[0] - a[0]), 0.0
    hx = np.empty(h)
    hy = np.empty(h)
    for k in range(h):
        hx[k] = xy[hull[k], 0]
        hy[k] = xy[hull[k], 1]
    best_area = np.inf
    best_angle = 0.0
    far = 1  # max height above the edge
    right = 1  # max along the edge
    left = 1  # min along the edge
    for e in range(h):
        e1 = (e + 1) % h
        ux = hx[e1] - hx[e]
        uy = hy[e1] - hy[e]
        length = np.sqrt(ux * ux + uy * uy)
        if length == 0.0:
            continue
        ux /= length
        uy /= length
        if e == 0:
            right = e1
        for _step in range(h):  # advance while the projection along the edge grows
            nxt = (right + 1) % h
            if (hx[nxt] - hx[right]) * ux + (hy[nxt] - hy[right]) * uy > 0.0:
                right = nxt
            else:
                break
        if e == 0:
            far = right
        for _step in range(h):  # height above the edge (CCW hull: interior on the left)
            nxt = (far + 1) % h
            if -(hx[nxt] - hx[far]) * uy + (hy[nxt] - hy[far]) * ux >= 0.0 and nxt != e:
                far = nxt
            else:
                break
        if e == 0:
            left = far
        for _step in range(h):  # advance while the projection along the edge shrinks
            nxt = (left + 1) % h
            if (hx[nxt] - hx[left]) * ux + (hy[nxt] - hy[left]) * uy < 0.0 and nxt != e1:
                left = nxt
            else:
                break
        s1 = (hx[right] - hx[e]) * ux + (hy[right] - hy[e]) * uy
        s0 = (hx[left] - hx[e]) * ux + (hy[left] - hy[e]) * uy
        s0 = min(s0, 0.0)
        s1 = max(s1, length)
        height = -(hx[far] - hx[e]) * uy + (hy[far] - hy[e]) * ux
        area = (s1 - s0) * height
        if area < best_area:
            best_area = area
            best_angle = np.arctan2(uy, ux)
    return best_angle, best_area


@njit(cache=True, nogil=True)
def obb_face_flush(points, normals):
    """For each candidate normal (rows of ``normals``, unit; e.g. convex-hull face normals) the
    box with one face perpendicular to it and the minimum-area rectangle in that plane. Returns
    the best frame (3,3) rows and its score."""
    best = np.eye(3)
    best_score = box_frame_score(points, best)
    n = points.shape[0]
    xy = np.empty((n, 2))
    for f in range(normals.shape[0]):
        frame = _frame_from_direction(normals[f], 0.0)
        for i in range(n):
            sx = 0.0
            sy = 0.0
            for c in range(3):
                d = points[i, c] - points[0, c]
                sx += d * frame[1, c]
                sy += d * frame[2, c]
            xy[i, 0] = sx
            xy[i, 1] = sy
        angle, _area = min_area_rectangle(xy)
        frame = _frame_from_direction(normals[f], angle)
        score = box_frame_score(points, frame)
        if score < best_score:
            best_score = score
            best = frame
    return best, best_score


@njit(cache=True, nogil=True)
def refine_frame(points, axes, step, iterations):
    """Local minimisation of the box score over rotations exp([w]x) applied to ``axes`` by
    Nelder-Mead on w (a derivative-free search as in Eberly S1 6.1, which uses Powell). The
    result is never worse than ``axes``. Returns axes (3,3)."""
    simplex = np.zeros((4, 3))
    values = np.empty(4)
    for k in range(3):
        simplex[k + 1, k] = step
    for k in range(4):
        values[k] = box_frame_score(points, _rotated(axes, simplex[k]))
    for _it in range(iterations):
        order = np.argsort(values)
        simplex = simplex[order].copy()
        values = values[order].copy()
        if values[3] - values[0] <= 1e-12 * abs(values[0]):
            spread = 0.0
            for k in range(1, 4):
                spread = max(spread, np.sqrt(_dist2(simplex[k], simplex[0])))
            if spread < 1e-9:
                break
        centroid = (simplex[0] + simplex[1] + simplex[2]) / 3.0
        reflected = centroid + (centroid - simplex[3])
        fr = box_frame_score(points, _rotated(axes, reflected))
        if fr < values[0]:
            expanded = centroid + 2.0 * (centroid - simplex[3])
            fe = box_frame_score(points, _rotated(axes, expanded))
            if fe < fr:
                simplex[3] = expanded
                values[3] = fe
            else:
                simplex[3] = reflected
                values[3] = fr
        elif fr < values[2]:
            simplex[3] = reflected
            values[3] = fr
        else:
            if fr < values[3]:
                contracted = centroid + 0.5 * (reflected - centroid)
            else:
                contracted = centroid + 0.5 * (simplex[3] - centroid)
            fc = box_frame_score(points, _rotated(axes, contracted))
            if fc < min(fr, values[3]):
                simplex[3] = contracted
                values[3] = fc
            else:
                for k in range(1, 4):
                    simplex[k] = simplex[0] + 0.5 * (simplex[k] - simplex[0])
                    values[k] = box_frame_score(points, _rotated(axes, simplex[k]))
    best = np.argmin(values)
    frame = _rotated(axes, simplex[best])
    if box_frame_score(points, frame) <= box_frame_score(points, axes):
        return frame
    return axes.copy()


# ---------------------------------------------------------------------------------------------
# k-DOPs and capsules
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


@njit(cache=True, nogil=True)
def capsule_fit_spheres(centers, radii, axis, seed):
    """Capsule with the given unit ``axis`` direction around spheres (centers (n,3), radii (n,)
    >= 0). The axis line passes through the centre of the minimum circle of the centres
    projected on the plane perpendicular to the axis (Welzl); radius R = max(d_i + r_i); the
    segment is shrunk so that each centre stays within R - r_i of it (Ericson 4.5.2).
    Returns (p0 (3,), p1 (3,), radius)."""
    n = centers.shape[0]
    ref = centers[0].copy()
    flat = np.empty((n, 3))
    t = np.empty(n)
    for i in range(n):
        ti = 0.0
        for c in range(3):
            ti += (centers[i, c] - ref[c]) * axis[c]
        t[i] = ti
        for c in range(3):
            flat[i, c] = centers[i, c] - ref[c] - ti * axis[c]
    circle_center, _r = welzl_sphere(flat, seed)
    circle_center -= _dot(circle_center, axis) * axis
    radius = 0.0
    dist = np.empty(n)
    for i in range(n):
        dist[i] = np.sqrt(_dist2(flat[i], circle_center))
        radius = max(radius, dist[i] + radii[i])
    t_lo = np.inf
    t_hi = -np.inf
    for i in range(n):
        room = radius - radii[i]
        s2 = room * room - dist[i] * dist[i]
        s = np.sqrt(s2) if s2 > 0.0 else 0.0
        t_lo = min(t_lo, t[i] + s)
        t_hi = max(t_hi, t[i] - s)
    if t_lo > t_hi:
        t_lo = t_hi = 0.5 * (t_lo + t_hi)
    base = ref + circle_center
    return base + t_lo * axis, base + t_hi * axis, radius
