"""Bounding spheres (Ericson 4.3): Ritter's sphere and its iterative refinement, the sphere
along the points' principal axis, Welzl's exact minimum sphere (Welzl 1991, Gaertner 1999;
Ericson 4.3.5), and the end spheres of a bounding capsule. These back touche.bounding (see
that package for the conventions); bounding.py holds the frames and covariances they use.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402
from touche._kernels.primitives.bounding import dist2, frame_from_covariance, point_covariance


# Welzl / Ritter: a point counts as inside when |p - c|^2 <= r^2 (1 + SPHERE_SLACK) (+ tiny):
# without the slack, round-off would re-add support points endlessly at the same sphere.
SPHERE_SLACK = 1e-12


@njit(cache=True, nogil=True)
def enclose_all(points, center, radius):
    """The radius that makes the ball at ``center`` contain every point exactly in floating point
    (max of ``radius`` and every distance): the final guarantee after an iterative fit."""
    r2 = radius * radius
    for i in range(points.shape[0]):
        d2 = dist2(points[i], center)
        if d2 > r2:
            r2 = d2
    return max(radius, np.sqrt(r2))


@njit(cache=True, nogil=True)
def _grow_sphere(center, radius, p):
    """Ericson 4.3.2 SphereOfSphereAndPt: the smallest sphere holding the sphere and p (in place
    on center; returns the new radius)."""
    d2 = dist2(p, center)
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
        d2 = dist2(points[imin[c]], points[imax[c]])
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
            copy_into(center, trial_center)
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
    radius = 0.5 * np.sqrt(dist2(points[lo], points[hi]))
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
            r2 = 0.25 * dist2(support[idx[0]], support[idx[1]])
            ok = True
        elif count == 3:
            c, r2, ok = _circumball3(support[idx[0]], support[idx[1]], support[idx[2]])
        else:
            c, r2, ok = _circumball4(support[idx[0]], support[idx[1]], support[idx[2]], support[idx[3]])
        if not ok or r2 >= best_r2:
            continue
        inside = True
        for k in range(m):
            if dist2(support[k], c) > r2 * (1.0 + 1e-10):
                inside = False
                break
        if inside:
            best_c = c
            best_r2 = r2
    if best_r2 == np.inf:  # cannot happen for finite input; stay safe
        best_r2 = 0.0
        for k in range(m):
            best_r2 = max(best_r2, dist2(support[k], best_c))
    return best_c, best_r2


@njit(cache=True, nogil=True)
def _outside(p, center, r2):
    return dist2(p, center) > r2 * (1.0 + SPHERE_SLACK)


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
        return 0.5 * (support[0] + support[1]), 0.25 * dist2(support[0], support[1])
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
@njit(cache=True, nogil=True, inline="always")
def _welzl_level(points, order, end, support, m, deeper_level):
    """Smallest ball of points[order[:end]] with the m points of support on its boundary: a point
    outside the current ball joins the support and ``deeper_level`` (the level for m + 1,
    fixed at compile time) recomputes the ball over the points before it."""
    center, r2 = _support_ball(support, m)
    deeper = np.empty((4, 3))
    copy_into(deeper[:m], support[:m])
    for i in range(end):
        p = points[order[i]]
        if _outside(p, center, r2):
            copy_into(deeper[m], p)
            center, r2 = deeper_level(points, order, i, deeper)
            _move_to_front(order, i)
    return center, r2


@njit(cache=True, nogil=True)
def _welzl4(points, order, end, support):
    return _support_ball(support, 4)


@njit(cache=True, nogil=True)
def _welzl3(points, order, end, support):
    return _welzl_level(points, order, end, support, 3, _welzl4)


@njit(cache=True, nogil=True)
def _welzl2(points, order, end, support):
    return _welzl_level(points, order, end, support, 2, _welzl3)


@njit(cache=True, nogil=True)
def _welzl1(points, order, end, support):
    return _welzl_level(points, order, end, support, 1, _welzl2)


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
            copy_into(support[0], p)
            center, r2 = _welzl1(points, order, i, support)
            _move_to_front(order, i)
    return center, enclose_all(points, center, np.sqrt(r2))


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
        dist[i] = np.sqrt(dist2(flat[i], circle_center))
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
