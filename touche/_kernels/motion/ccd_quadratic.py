"""Exact first contact of two boxes under quadratic (affine) matrix motion.

Seed: S4 (moving boxes under quadratic motion), as corrected in SEED-NOTES §3 S4 and §1.17:
- the relative motion M_A(t)^-1 M_B(t) is rational, not quadratic (S4 L7), so everything is done
  in the WORLD frame, where both boxes' centres and edge vectors are polynomials of degree 2;
- a quadratic matrix is not a rotation, so each box is the parallelepiped it becomes under the
  affine map: centre C(t) = M(t) [c; 1], half-edge vectors E_i(t) = M(t)[:3, i] h_i;
- the method first checks overlap at t = 0 (S4 L9);
- the S4 construction (Gauss map, octant switch times c_ij(t) = 0, 30 boundary planes) is replaced
  by its equivalent, the 15-axis separating-axis test in the world frame (SEED-NOTES §1.17).

Separating-axis functions. Two parallelepipeds are disjoint iff for one of the 15 axes
L in {E_A1 x E_A2, E_A2 x E_A0, E_A0 x E_A1, the same for B, E_Ai x E_Bj}
    f_L(t) = |L.D| - sum_i |L.E_Ai| - sum_j |L.E_Bj| > 0,   D = C_B - C_A
(face normals of a parallelepiped are the cross products of its edge vectors; an axis that
vanishes separates nothing, f_L = 0). Every axis is a degree-4 polynomial vector, every product
L.X a degree-6 polynomial p_k(t) (k = 0: D, 1-3: A's edges, 4-6: B's edges). Between consecutive
real roots of the p_k the signs are fixed, so f_L is a polynomial there. The boxes are separated
at t iff g(t) = max_L f_L(t) > 0; g is continuous, so at the first contact t*, g(t*) = 0: t* is a
root of some piece polynomial of some f_L (or one of the breakpoints). We collect, per axis, the
breakpoints, the roots and the critical points (double roots = grazing contacts) of every piece
in [0, t_max], sort them, and return the first candidate at which the direct geometric SAT
(normalised axes, evaluated from M(t), not from the expanded polynomials) finds no axis
separating by more than ``tolerance`` (a distance). So the time is never after t* (up to the
root accuracy, ~1e-15 relative) and the boxes are within ``tolerance`` of touching there.

Roots: real roots of a polynomial of degree <= 6 in [a, b] by the derivative chain: the roots of
p^(k+1) split [a, b] into intervals on which p^(k) is monotone, so each holds at most one root,
found by safeguarded Newton (bisection whenever Newton leaves the bracket) to full precision.

Entry points: ``quadratic_box_box(ca, ha, qa (3,4,4), cb, hb, qb, t_max, tolerance, out (7,))``
-> status (kinds.HIT / ALREADY_TOUCHING / MISS), out = (t, point (3), normal (3) from A to B);
``quadratic_box_box_many(ca, ha, qa (n|1,3,4,4), cb, hb, qb (n|1,3,4,4), t_max, tolerance,
out_status (n,) int8, out_t (n,), out_point (n,3), out_normal (n,3), lo, hi)`` (pairs [lo, hi));
``box_separation(ca, ha, ma (4,4), cb, hb, mb (4,4))`` -> the largest normalised f_L (> 0:
separated), the static test of two parallelepipeds (also the reference in the tests).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

from touche._kernels.base import kinds

DEGREE = 6
# a product polynomial counts as identically zero when all its coefficients are below this times
# the largest coefficient of its axis (rounding of exact zeros, e.g. L.E for a face normal L)
ZERO_RELATIVE = 1e-13
# an axis whose squared length at t is below this times |E|^4 (parallel edges) separates nothing
PARALLEL_SQ = 1e-20
MAX_CANDIDATES = 15 * (7 * 6 + 2 + 43 * 11)


# ----------------------------------------------------------------------------------------------
# polynomials: coefficient arrays, index = power
@njit(cache=True, nogil=True)
def _horner(c, n, t):
    value = c[n]
    for k in range(n - 1, -1, -1):
        value = value * t + c[k]
    return value


@njit(cache=True, nogil=True)
def _horner2(c, n, t):
    """(p(t), p'(t))."""
    value = c[n]
    slope = 0.0
    for k in range(n - 1, -1, -1):
        slope = slope * t + value
        value = value * t + c[k]
    return value, slope


@njit(cache=True, nogil=True)
def _root_in(c, n, a, b, fa, fb):
    """The root of p (degree n) in [a, b] where p is monotone and fa, fb have opposite signs."""
    t = 0.5 * (a + b)
    for _ in range(200):
        value, slope = _horner2(c, n, t)
        if value == 0.0:
            return t
        if (value < 0.0) == (fa < 0.0):
            a, fa = t, value
        else:
            b, fb = t, value
        following = t - value / slope if slope != 0.0 else 0.5 * (a + b)
        if not (a < following < b):
            following = 0.5 * (a + b)
        if following == t or b - a <= 4e-16 * max(abs(a), abs(b)) + 1e-300:
            return following
        t = following
    return t


@njit(cache=True, nogil=True)
def real_roots(c, n, a, b, roots, critical):
    """Real roots of p (coefficients c[0..n]) in [a, b], ascending, into ``roots``; the roots of
    p' (critical points) into ``critical``. Returns (number of roots, number of critical points).
    Buffers need n entries each."""
    # derivative chain: level k holds p^(k) (degree n - k)
    chain = np.zeros((n + 1, n + 1))
    for k in range(n + 1):
        chain[0, k] = c[k]
    for level in range(1, n + 1):
        for k in range(n - level + 1):
            chain[level, k] = chain[level - 1, k + 1] * (k + 1)
    found = np.empty(n + 1)
    count = 0  # roots of the current level (start: p^(n) is a constant, no roots)
    below = np.empty(n + 1)
    below_count = 0
    critical_count = 0
    for level in range(n - 1, -1, -1):
        degree = n - level
        below_count = count
        for i in range(count):
            below[i] = found[i]
        count = 0
        lo = a
        flo = _horner(chain[level], degree, lo)
        for i in range(below_count + 1):
            hi = below[i] if i < below_count else b
            if hi < lo:
                continue
            fhi = _horner(chain[level], degree, hi)
            if flo == 0.0:
                if count == 0 or found[count - 1] != lo:
                    found[count] = lo
                    count += 1
            elif fhi != 0.0 and (flo < 0.0) != (fhi < 0.0):
                found[count] = _root_in(chain[level], degree, lo, hi, flo, fhi)
                count += 1
            lo = hi
            flo = fhi
        if flo == 0.0 and (count == 0 or found[count - 1] != lo):
            found[count] = lo
            count += 1
        if level == 1:
            for i in range(count):
                critical[i] = found[i]
            critical_count = count
    for i in range(count):
        roots[i] = found[i]
    return count, critical_count


# ----------------------------------------------------------------------------------------------
# the boxes' polynomials
@njit(cache=True, nogil=True)
def _box_polys(c, h, q):
    """Centre (3, 3) and half-edge vectors (3 edges, 3 components, 3 powers) of a box under
    M(t) = q[0] + t q[1] + t^2 q[2]."""
    center = np.zeros((3, 3))
    edges = np.zeros((3, 3, 3))
    for k in range(3):
        for r in range(3):
            center[r, k] = q[k, r, 0] * c[0] + q[k, r, 1] * c[1] + q[k, r, 2] * c[2] + q[k, r, 3]
            for i in range(3):
                edges[i, r, k] = q[k, r, i] * h[i]
    return center, edges


@njit(cache=True, nogil=True)
def _cross_poly(u, v):
    """u, v (3, 3) degree-2 vector polynomials -> (3, 5)."""
    out = np.zeros((3, 5))
    for i in range(3):
        for j in range(3):
            out[0, i + j] += u[1, i] * v[2, j] - u[2, i] * v[1, j]
            out[1, i + j] += u[2, i] * v[0, j] - u[0, i] * v[2, j]
            out[2, i + j] += u[0, i] * v[1, j] - u[1, i] * v[0, j]
    return out


@njit(cache=True, nogil=True)
def _axis_polys(ca, ha, qa, cb, hb, qb):
    """Axes (15, 3, 5) and products (15, 7, 7): products[l, 0] = L.D, [1..3] = L.E_Ai,
    [4..6] = L.E_Bj (degree-6 coefficients)."""
    center_a, edges_a = _box_polys(ca, ha, qa)
    center_b, edges_b = _box_polys(cb, hb, qb)
    d = center_b - center_a
    axes = np.zeros((15, 3, 5))
    for i in range(3):
        copy_into(axes[i], _cross_poly(edges_a[(i + 1) % 3], edges_a[(i + 2) % 3]))
        copy_into(axes[3 + i], _cross_poly(edges_b[(i + 1) % 3], edges_b[(i + 2) % 3]))
        for j in range(3):
            copy_into(axes[6 + 3 * i + j], _cross_poly(edges_a[i], edges_b[j]))
    products = np.zeros((15, 7, 7))
    for axis in range(15):
        for which in range(7):
            if which == 0:
                vec = d
            elif which <= 3:
                vec = edges_a[which - 1]
            else:
                vec = edges_b[which - 4]
            for r in range(3):
                for i in range(5):
                    for j in range(3):
                        products[axis, which, i + j] += axes[axis, r, i] * vec[r, j]
    return axes, products


@njit(cache=True, nogil=True)
def _matrix_at(q, t, out):
    for r in range(4):
        for k in range(4):
            out[r, k] = q[0, r, k] + t * (q[1, r, k] + t * q[2, r, k])


@njit(cache=True, nogil=True)
def _parallelepiped(c, h, m):
    """World centre (3,) and half-edge vectors (3 edges, 3) of a box under the affine m."""
    center = np.empty(3)
    edges = np.empty((3, 3))
    for r in range(3):
        center[r] = m[r, 0] * c[0] + m[r, 1] * c[1] + m[r, 2] * c[2] + m[r, 3]
        for i in range(3):
            edges[i, r] = m[r, i] * h[i]
    return center, edges


@njit(cache=True, nogil=True)
def _cross(u, v):
    return np.array([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]])


@njit(cache=True, nogil=True)
def _separation_of(center_a, edges_a, center_b, edges_b, axis_out):
    """Largest normalised f_L over the 15 axes (> 0: separated) and its unit axis (A to B)."""
    d = center_b - center_a
    size4 = 0.0
    for i in range(3):
        for j in range(3):
            size4 = max(size4, (edges_a[i] @ edges_a[i]) * (edges_b[j] @ edges_b[j]))
        size4 = max(size4, (edges_a[i] @ edges_a[i]) * (edges_a[(i + 1) % 3] @ edges_a[(i + 1) % 3]))
        size4 = max(size4, (edges_b[i] @ edges_b[i]) * (edges_b[(i + 1) % 3] @ edges_b[(i + 1) % 3]))
    best = -np.inf
    for axis in range(15):
        if axis < 3:
            L = _cross(edges_a[(axis + 1) % 3], edges_a[(axis + 2) % 3])
        elif axis < 6:
            L = _cross(edges_b[(axis - 3 + 1) % 3], edges_b[(axis - 3 + 2) % 3])
        else:
            L = _cross(edges_a[(axis - 6) // 3], edges_b[(axis - 6) % 3])
        length2 = L @ L
        if length2 <= PARALLEL_SQ * size4 or length2 == 0.0:
            continue
        length = np.sqrt(length2)
        projection = L @ d
        value = abs(projection)
        for i in range(3):
            value -= abs(L @ edges_a[i]) + abs(L @ edges_b[i])
        value /= length
        if value > best:
            best = value
            sign = 1.0 if projection >= 0.0 else -1.0
            for r in range(3):
                axis_out[r] = sign * L[r] / length
    return best


@njit(cache=True, nogil=True)
def box_separation(ca, ha, ma, cb, hb, mb):
    """Static test of two boxes under affine matrices ma, mb (4, 4): the largest normalised
    separating-axis value (> 0 separated, <= 0 touching or overlapping)."""
    center_a, edges_a = _parallelepiped(ca, ha, ma)
    center_b, edges_b = _parallelepiped(cb, hb, mb)
    axis = np.empty(3)
    return _separation_of(center_a, edges_a, center_b, edges_b, axis)


@njit(cache=True, nogil=True)
def _boxes_at(ca, ha, qa, cb, hb, qb, t):
    """Both boxes at time t as parallelepipeds (centre, edge half-vectors)."""
    ma = np.empty((4, 4))
    mb = np.empty((4, 4))
    _matrix_at(qa, t, ma)
    _matrix_at(qb, t, mb)
    center_a, edges_a = _parallelepiped(ca, ha, ma)
    center_b, edges_b = _parallelepiped(cb, hb, mb)
    return center_a, edges_a, center_b, edges_b


@njit(cache=True, nogil=True)
def _separation_at(ca, ha, qa, cb, hb, qb, t, axis_out):
    center_a, edges_a, center_b, edges_b = _boxes_at(ca, ha, qa, cb, hb, qb, t)
    return _separation_of(center_a, edges_a, center_b, edges_b, axis_out)


@njit(cache=True, nogil=True)
def _contact_point(ca, ha, qa, cb, hb, qb, t, normal, tolerance, point):
    """A point of contact at time t: A's supporting corner along the normal when unique, else
    B's against it, else the middle of the closest points of two supporting edges, else the
    centroid of the smaller supporting face (a point of the contact region for face contacts
    of equal faces; otherwise a point on that face)."""
    center_a, edges_a, center_b, edges_b = _boxes_at(ca, ha, qa, cb, hb, qb, t)
    corners = np.empty((2, 8, 3))
    values = np.empty((2, 8))
    for s in range(2):
        for k in range(8):
            for r in range(3):
                x = center_a[r] if s == 0 else center_b[r]
                for i in range(3):
                    sign = 1.0 if (k >> i) & 1 else -1.0
                    x += sign * (edges_a[i, r] if s == 0 else edges_b[i, r])
                corners[s, k, r] = x
            values[s, k] = (corners[s, k] @ normal) * (1.0 if s == 0 else -1.0)
    chosen = np.zeros((2, 8), dtype=np.bool_)
    counts = np.zeros(2, dtype=np.int64)
    for s in range(2):
        top = values[s].max()
        for k in range(8):
            if values[s, k] >= top - 16.0 * tolerance:
                chosen[s, k] = True
                counts[s] += 1
    if counts[0] == 2 and counts[1] == 2:
        ends = np.empty((2, 2, 3))
        for s in range(2):
            m = 0
            for k in range(8):
                if chosen[s, k]:
                    copy_into(ends[s, m], corners[s, k])
                    m += 1
        # closest points of the two segments (both non-degenerate edges; clamp the parameters)
        u = ends[0, 1] - ends[0, 0]
        v = ends[1, 1] - ends[1, 0]
        w = ends[0, 0] - ends[1, 0]
        aa = u @ u
        bb = u @ v
        cc = v @ v
        dd = u @ w
        ee = v @ w
        den = aa * cc - bb * bb
        s1 = (bb * ee - cc * dd) / den if den > 1e-14 * aa * cc else 0.0
        s1 = min(max(s1, 0.0), 1.0)
        s2 = min(max((bb * s1 + ee) / cc, 0.0), 1.0)
        s1 = min(max((bb * s2 - dd) / aa, 0.0), 1.0)
        for r in range(3):
            point[r] = 0.5 * (ends[0, 0, r] + s1 * u[r] + ends[1, 0, r] + s2 * v[r])
        return
    s = 0 if counts[0] <= counts[1] else 1
    for r in range(3):
        total = 0.0
        for k in range(8):
            if chosen[s, k]:
                total += corners[s, k, r]
        point[r] = total / counts[s]


@njit(cache=True, nogil=True)
def quadratic_box_box(ca, ha, qa, cb, hb, qb, t_max, tolerance, out):
    """First contact in [0, t_max] of two boxes (local centre c, half extents h) under
    quadratic matrices qa, qb (3, 4, 4); see the module doc. out (7,) = (t, point, normal)."""
    normal = np.empty(3)
    point = np.empty(3)
    for i in range(7):
        out[i] = np.nan
    if _separation_at(ca, ha, qa, cb, hb, qb, 0.0, normal) <= tolerance:
        _contact_point(ca, ha, qa, cb, hb, qb, 0.0, normal, tolerance, point)
        out[0] = 0.0
        for r in range(3):
            out[1 + r] = point[r]
            out[4 + r] = normal[r]
        return kinds.ALREADY_TOUCHING
    axes, products = _axis_polys(ca, ha, qa, cb, hb, qb)
    candidates = np.empty(MAX_CANDIDATES)
    count = 0
    roots = np.empty(DEGREE)
    critical = np.empty(DEGREE)
    breaks = np.empty(7 * DEGREE + 2)
    piece = np.empty(DEGREE + 1)
    active = np.empty(7, dtype=np.bool_)
    for axis in range(15):
        scale = 0.0
        for which in range(7):
            for k in range(DEGREE + 1):
                scale = max(scale, abs(products[axis, which, k]))
        if scale == 0.0:
            continue
        nb = 0
        breaks[nb] = 0.0
        nb += 1
        for which in range(7):
            biggest = 0.0
            for k in range(DEGREE + 1):
                biggest = max(biggest, abs(products[axis, which, k]))
            active[which] = biggest > ZERO_RELATIVE * scale
            if not active[which]:
                continue
            nr, nc = real_roots(products[axis, which], DEGREE, 0.0, t_max, roots, critical)
            for i in range(nr):
                breaks[nb] = roots[i]
                nb += 1
        breaks[nb] = t_max
        nb += 1
        breaks[:nb].sort()
        for p in range(nb - 1):
            lo = breaks[p]
            hi = breaks[p + 1]
            candidates[count] = lo
            count += 1
            if hi <= lo:
                continue
            middle = 0.5 * (lo + hi)
            for k in range(DEGREE + 1):
                piece[k] = 0.0
            for which in range(7):
                if not active[which]:
                    continue
                sign = 1.0 if _horner(products[axis, which], DEGREE, middle) >= 0.0 else -1.0
                if which > 0:
                    sign = -sign
                for k in range(DEGREE + 1):
                    piece[k] += sign * products[axis, which, k]
            nr, nc = real_roots(piece, DEGREE, lo, hi, roots, critical)
            for i in range(nr):
                candidates[count] = roots[i]
                count += 1
            for i in range(nc):
                candidates[count] = critical[i]
                count += 1
        candidates[count] = t_max
        count += 1
    chosen = candidates[:count].copy()
    chosen.sort()
    for i in range(count):
        t = chosen[i]
        if t <= 0.0 or t > t_max:
            continue
        if _separation_at(ca, ha, qa, cb, hb, qb, t, normal) <= tolerance:
            _contact_point(ca, ha, qa, cb, hb, qb, t, normal, tolerance, point)
            out[0] = t
            for r in range(3):
                out[1 + r] = point[r]
                out[4 + r] = normal[r]
            return kinds.HIT
    out[0] = np.inf
    return kinds.MISS


@njit(cache=True, nogil=True)
def quadratic_box_box_many(ca, ha, qa, cb, hb, qb, t_max, tolerance, out_status, out_t, out_point, out_normal, lo, hi):
    step_a = 1 if qa.shape[0] > 1 else 0
    step_b = 1 if qb.shape[0] > 1 else 0
    for i in range(lo, hi):
        out = np.empty(7)
        out_status[i] = quadratic_box_box(ca, ha, qa[i * step_a], cb, hb, qb[i * step_b], t_max, tolerance, out)
        out_t[i] = out[0]
        for r in range(3):
            out_point[i, r] = out[1 + r]
            out_normal[i, r] = out[4 + r]
