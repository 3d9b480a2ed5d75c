"""Exact-sign geometric predicates (Ericson 3.1.6; robustness: Ericson ch. 11, 11.5).

orient2d, orient3d, incircle2d, insphere return a float whose SIGN is exactly the sign of the
corresponding determinant for every tuple of finite float64 inputs (no overflow / underflow
exceptions).  The magnitude is approximate (close to the true value whenever it is
representable).  Behaviour for inf / nan inputs is unspecified.

Evaluation is two-stage (the adaptive idea of Shewchuk, "Adaptive Precision Floating-Point
Arithmetic and Fast Robust Geometric Predicates", 1997; implemented from its description):

1. Floating-point filter.  The determinant is evaluated in double precision on the coordinate
   differences together with its "permanent" P (the same expression tree with every leaf product
   replaced by its absolute value and every subtraction by an addition).  Error bound proof
   (standard running-error argument, Higham "Accuracy and Stability", ch. 3): with unit roundoff
   eps = 2^-53 and no underflow/overflow, each rounded operation multiplies the value flowing
   through it by (1 + delta), |delta| <= eps.  Expanding the evaluation tree, the computed value is
   sum_i m_i * prod_{j<=k}(1 + delta_ij) where m_i are the exact monomials (in the exact
   coordinate differences) and k is the "depth": differences count 1, a product adds the depths of
   both operands plus 1, a sum adds 1 to each operand.  Hence |det_computed - det| <= gamma_k * P
   with gamma_k = k eps / (1 - k eps), P = sum |m_i|.  The computed permanent P_c (same depth, only
   additions) satisfies P_c >= P (1 - gamma_k), so |err| <= k eps (1 + 2 k eps + O(eps^2)) P_c and
   the constant ERR_k = (k + 8 k^2 eps) eps, rounding of ERR_k * P_c included, is a safe bound.
   Depths of the evaluation orders used below: orient2d 4, orient3d 8, incircle 11, insphere 16
   (Shewchuk's sharper constants are 3, 7, 10, 16 eps).  If |det_c| > ERR_k * P_c the sign of
   det_c is the exact sign.  The argument assumes no underflow: the filter is only used when every
   nonzero coordinate difference lies in [2^-LO, 2^HI] (checked; then every nonzero intermediate is
   a normal number).  Overflow makes P_c = inf (or det_c = nan) and the test fails.

2. Exact stage (only when the filter fails).  The determinant is expanded into monomials of the
   ORIGINAL coordinates (Laplace / Leibniz expansion of Ericson's (n+1)x(n+1) forms with the
   column of ones).  Each monomial prod f_j is split as (prod m_j) * 2^(sum e_j) with frexp
   mantissas m_j in [0.5, 1); the mantissa product is formed exactly as a floating-point expansion
   with _two_product (Dekker's product, Veltkamp splitting; math.fma is not available in numba),
   so no under/overflow can happen.  The monomials are added in decreasing order of their binary
   exponent into one expansion X (Shewchuk's Grow-Expansion + Compress, with _two_sum), carried
   at a sliding scale 2^S: before each addition X is rescaled to the exponent of the incoming term;
   if |X| 2^S already exceeds a bound on the sum of all remaining terms the sign is final.  This
   keeps every component within a window of about 2^+-300, so the sum is exact for all finite
   inputs.
"""

import math

import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

EPS = 2.0 ** -53  # unit roundoff (half an ulp of 1.0)
SPLITTER = 134217729.0  # 2^27 + 1, Veltkamp splitting constant for 53-bit doubles

# filter constants ERR_k = (k + 8 k^2 eps) eps, see module docstring
ERR_O2 = (4.0 + 128.0 * EPS) * EPS
ERR_O3 = (8.0 + 512.0 * EPS) * EPS
ERR_IC = (11.0 + 968.0 * EPS) * EPS
ERR_IS = (16.0 + 2048.0 * EPS) * EPS

# Filter admissibility: every nonzero coordinate difference must be >= TINY_* in magnitude so that
# no product / sum in the filter can underflow (degree-k products are >= TINY^k, each cancelling
# subtraction loses at most 52 more bits: orient2d 2*450+52 < 1022, orient3d 3*280+104 < 1022,
# incircle 4*200+104 < 1022, insphere 5*150+156 < 1022).
TINY_O2 = 2.0 ** -450
TINY_O3 = 2.0 ** -280
TINY_IC = 2.0 ** -200
TINY_IS = 2.0 ** -150


# --------------------------------------------------------------------------------------------
# error-free transformations and expansion arithmetic
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _two_sum(a, b):
    """Knuth's TwoSum: x + y == a + b exactly, x = fl(a + b) (no preconditions)."""
    x = a + b
    bv = x - a
    av = x - bv
    br = b - bv
    ar = a - av
    return x, ar + br


@njit(cache=True, nogil=True)
def _split(a):
    """Veltkamp split: a == hi + lo, each with <= 26 significant bits (|a| < 2^995)."""
    c = SPLITTER * a
    abig = c - a
    hi = c - abig
    lo = a - hi
    return hi, lo


@njit(cache=True, nogil=True)
def _two_product(a, b):
    """Dekker's TwoProduct: x + y == a * b exactly, x = fl(a * b) (no over/underflow)."""
    x = a * b
    ahi, alo = _split(a)
    bhi, blo = _split(b)
    err1 = x - ahi * bhi
    err2 = err1 - alo * bhi
    err3 = err2 - ahi * blo
    y = alo * blo - err3
    return x, y


@njit(cache=True, nogil=True)
def _grow_expansion(e, n, b):
    """In place: e[0:n] (nonoverlapping, increasing magnitude) += b.  Zero components are
    eliminated.  Returns the new length (<= n + 1); e needs room for n + 1 entries."""
    q = b
    k = 0
    for i in range(n):
        q, h = _two_sum(q, e[i])
        if h != 0.0:
            e[k] = h
            k += 1
    if q != 0.0:
        e[k] = q
        k += 1
    return k


@njit(cache=True, nogil=True)
def _compress(e, m):
    """In place Compress (Shewchuk): same value, nonadjacent, no zeros; the largest component
    approximates the whole value with relative error < 2 eps.  Returns the new length."""
    if m == 0:
        return 0
    bottom = m - 1
    q = e[bottom]
    for i in range(m - 2, -1, -1):
        qn, r = _two_sum(q, e[i])
        if r != 0.0:
            e[bottom] = qn
            bottom -= 1
            q = r
        else:
            q = qn
    e[bottom] = q
    top = 0
    for i in range(bottom + 1, m):
        qn, r = _two_sum(e[i], q)
        if r != 0.0:
            e[top] = r
            top += 1
        q = qn
    if q != 0.0:
        e[top] = q
        top += 1
    return top


@njit(cache=True, nogil=True)
def _exact_sum_of_products(F, sgn, nterms):
    """Exact value estimate of sum_i sgn[i] * prod_j F[i, j] for i < nterms (all F finite).

    Returns a float with the exact sign of the sum; magnitude approximate (may be 0 or +-inf
    only when the true value underflows / overflows, in which case the sign is still exact
    except that an underflowing nonzero value is returned as +-tiny, never 0).
    """
    deg = F.shape[1]
    cap = 1 << deg  # max components of an uncompressed product expansion
    T = np.zeros((nterms, cap + 1))
    buf = np.zeros(2 * cap + 2)
    tmp = np.zeros(2 * cap + 3)
    L = np.zeros(nterms, np.int64)
    E = np.zeros(nterms, np.int64)
    for i in range(nterms):
        zero = False
        for j in range(deg):
            if F[i, j] == 0.0:
                zero = True
        if zero or sgn[i] == 0.0:
            E[i] = -(1 << 40)  # sorts last, skipped
            continue
        m0, e0 = math.frexp(F[i, 0])
        T[i, 0] = m0 * sgn[i]
        n = 1
        ex = e0
        for j in range(1, deg):
            mj, ej = math.frexp(F[i, j])
            ex += ej
            # scale expansion T[i, 0:n] by mj (exact: all magnitudes in [2^-320, 1])
            k = 0
            for c in range(n):
                hi, lo = _two_product(T[i, c], mj)
                buf[k] = lo
                buf[k + 1] = hi
                k += 2
            # renormalise into a nonoverlapping expansion, then compress
            nt = 0
            for c in range(k):
                nt = _grow_expansion(tmp, nt, buf[c])
            nt = _compress(tmp, nt)
            for c in range(nt):
                T[i, c] = tmp[c]
            n = nt
        L[i] = n
        E[i] = ex
    # order by decreasing exponent (insertion sort: small n, keeps compile time low)
    order = np.empty(nterms, np.int64)
    for i in range(nterms):
        j = i
        while j > 0 and E[order[j - 1]] < E[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    X = np.zeros(4 * cap + 1024)
    nx = 0
    S = 0
    # number of nonzero terms remaining
    rem = 0
    for i in range(nterms):
        if L[i] > 0:
            rem += 1
    for oi in range(nterms):
        i = order[oi]
        if L[i] == 0:
            continue
        Ei = E[i]
        if nx > 0:
            top = X[nx - 1]
            low = 0.0
            for c in range(nx - 1):
                low += abs(X[c])
            lb = abs(top) - 1.01 * low
            if lb > 0.0:
                # |X| * 2^S >= 0.99 lb 2^S >= 2^(et - 1 + S); remaining sum < rem * 2^Ei
                _, et = math.frexp(0.99 * lb)
                bits = 0
                r = rem
                while r > 0:
                    bits += 1
                    r >>= 1
                if et - 1 + S > Ei + bits:
                    return _scaled_nonzero(top, S)
            sh = S - Ei
            for c in range(nx):
                X[c] = math.ldexp(X[c], sh)
        S = Ei
        for c in range(L[i]):
            nx = _grow_expansion(X, nx, T[i, c])
        nx = _compress(X, nx)
        rem -= 1
    if nx == 0:
        return 0.0
    top = X[nx - 1]
    if top == 0.0:
        return 0.0
    est = 0.0
    for c in range(nx):
        est += X[c]
    if est == 0.0 or (est > 0.0) != (top > 0.0):
        est = top
    return _scaled_nonzero(est, S)


@njit(cache=True, nogil=True)
def _scaled_nonzero(x, s):
    """x * 2^s for nonzero x, never rounding to 0 (keeps the sign when it underflows)."""
    v = math.ldexp(x, s)
    if v == 0.0:
        v = 5e-324 if x > 0.0 else -5e-324
    return v


@njit(cache=True, nogil=True)
def _perm_sign(p, n):
    """Sign (+1 / -1) of the permutation p[0:n] of 0..n-1 (inversion count)."""
    inv = 0
    for i in range(n):
        for j in range(i + 1, n):
            if p[i] > p[j]:
                inv += 1
    return -1.0 if (inv & 1) else 1.0


# --------------------------------------------------------------------------------------------
# exact stages
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _orient2d_exact(ax, ay, bx, by, cx, cy):
    # det [[ax ay 1] [bx by 1] [cx cy 1]] = ax by - ax cy - ay bx + ay cx + bx cy - by cx
    F = np.empty((6, 2))
    s = np.empty(6)
    F[0, 0] = ax; F[0, 1] = by; s[0] = 1.0
    F[1, 0] = ax; F[1, 1] = cy; s[1] = -1.0
    F[2, 0] = ay; F[2, 1] = bx; s[2] = -1.0
    F[3, 0] = ay; F[3, 1] = cx; s[3] = 1.0
    F[4, 0] = bx; F[4, 1] = cy; s[4] = 1.0
    F[5, 0] = by; F[5, 1] = cx; s[5] = -1.0
    return _exact_sum_of_products(F, s, 6)


@njit(cache=True, nogil=True)
def _next_permutation(p, n):
    """In place: p[0:n] becomes the next permutation in lexicographic order; False (p left
    as it is) after the last one."""
    i = n - 2
    while i >= 0 and p[i] >= p[i + 1]:
        i -= 1
    if i < 0:
        return False
    j = n - 1
    while p[j] <= p[i]:
        j -= 1
    p[i], p[j] = p[j], p[i]
    lo = i + 1
    hi = n - 1
    while lo < hi:
        p[lo], p[hi] = p[hi], p[lo]
        lo += 1
        hi -= 1
    return True


@njit(cache=True, nogil=True)
def _lifted_det_exact(P, lift):
    """Exact det of the n x n matrix whose row i is [P[i], |P[i]|^2, 1] (lift True) or
    [P[i], 1] (lift False), n = P.shape[0]: orient3d (P (4,3)), incircle (P (4,2), lift),
    insphere (P (5,3), lift). Leibniz expansion over the permutations perm of the rows in
    lexicographic order: coordinate column c takes row perm[c], the lift column row perm[dim]
    (one monomial per squared coordinate), the column of ones the last row."""
    n = P.shape[0]
    dim = P.shape[1]
    per_perm = dim if lift else 1
    deg = dim + 2 if lift else dim
    count = per_perm
    for i in range(2, n + 1):
        count *= i
    F = np.empty((count, deg))
    s = np.empty(count)
    perm = np.arange(n)
    t = 0
    more = True
    while more:
        sg = _perm_sign(perm, n)
        for q in range(per_perm):
            for c in range(dim):
                F[t, c] = P[perm[c], c]
            if lift:
                F[t, dim] = P[perm[dim], q]
                F[t, dim + 1] = P[perm[dim], q]
            s[t] = sg
            t += 1
        more = _next_permutation(perm, n)
    return _exact_sum_of_products(F, s, count)


# --------------------------------------------------------------------------------------------
# public predicates
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _admissible(v, tiny):
    """True when the nonzero |v| >= tiny (filter cannot underflow)."""
    a = abs(v)
    return a == 0.0 or a >= tiny


@njit(cache=True, nogil=True, inline="always")
def _all_admissible(values, tiny):
    """True when every coordinate difference in the tuple ``values`` is admissible."""
    for v in values:
        if not _admissible(v, tiny):
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _filter_verdict(det, errbound):
    """(True, value with the exact sign) when the filter decides: |det| above the error bound,
    or a zero bound (every monomial has an exactly-zero factor: the determinant is 0)."""
    if det > errbound or -det > errbound:
        return True, det
    return errbound == 0.0, 0.0


@njit(cache=True, nogil=True, inline="always")
def _minus(a, b):
    """The coordinate differences a - b of two (3,) points, as scalars."""
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


@njit(cache=True, nogil=True, inline="always")
def _minor2(ax, ay, bx, by):
    """The 2x2 minor ax by - bx ay and its permanent |ax by| + |bx ay|."""
    p = ax * by
    q = bx * ay
    return p - q, abs(p) + abs(q)


@njit(cache=True, nogil=True, inline="always")
def _det3_by_last_column(ax, ay, az, bx, by, bz, cx, cy, cz):
    """det [[ax ay az] [bx by bz] [cx cy cz]] expanded along its last column, and its permanent:
    the filter of orient3d (z differences) and of incircle2d (lifts in the last column)."""
    bc, bcp = _minor2(bx, by, cx, cy)
    ca, cap = _minor2(cx, cy, ax, ay)
    ab, abp = _minor2(ax, ay, bx, by)
    return (az * bc + bz * ca) + cz * ab, (bcp * abs(az) + cap * abs(bz)) + abp * abs(cz)


@njit(cache=True, nogil=True)
def orient2d(ax, ay, bx, by, cx, cy):
    """ORIENT2D(A, B, C) = det [[ax ay 1] [bx by 1] [cx cy 1]] (Ericson 3.1.6.1).

    Positive when A, B, C are counter-clockwise (C left of the directed line AB), negative when
    clockwise, zero when collinear.  The sign is exact for all finite inputs; the magnitude
    (twice the signed triangle area) is approximate.
    """
    acx = ax - cx
    bcx = bx - cx
    acy = ay - cy
    bcy = by - cy
    if _all_admissible((acx, bcx, acy, bcy), TINY_O2):
        detleft = acx * bcy
        detright = acy * bcx
        det = detleft - detright
        decided, value = _filter_verdict(det, ERR_O2 * (abs(detleft) + abs(detright)))
        if decided:
            return value
    return _orient2d_exact(ax, ay, bx, by, cx, cy)


@njit(cache=True, nogil=True)
def orient3d(a, b, c, d):
    """ORIENT3D(A, B, C, D) = det [[A 1] [B 1] [C 1] [D 1]] = (A-D) . ((B-D) x (C-D))
    (Ericson 3.1.6.2; a..d are (3,) float64 arrays).

    Sign convention (Ericson 3.1.6.2): NEGATIVE when D lies above the supporting plane of
    triangle ABC, i.e. ABC appears counter-clockwise when viewed from D (D on the side the
    normal (B-A) x (C-A) points to); POSITIVE when D lies below that plane; zero when the four
    points are coplanar.  The value is six times the signed volume of tetrahedron ABCD.
    Sign exact for all finite inputs; magnitude approximate.
    """
    adx, ady, adz = _minus(a, d)
    bdx, bdy, bdz = _minus(b, d)
    cdx, cdy, cdz = _minus(c, d)
    if _all_admissible((adx, bdx, cdx, ady, bdy, cdy, adz, bdz, cdz), TINY_O3):
        det, perm = _det3_by_last_column(adx, ady, adz, bdx, bdy, bdz, cdx, cdy, cdz)
        decided, value = _filter_verdict(det, ERR_O3 * perm)
        if decided:
            return value
    return _lifted_det_exact(np.vstack((a, b, c, d)), False)


@njit(cache=True, nogil=True)
def incircle2d(ax, ay, bx, by, cx, cy, dx, dy):
    """INCIRCLE2D(A, B, C, D) = det [[x y x^2+y^2 1]] over rows A, B, C, D (Ericson 3.1.6.3).

    With A, B, C counter-clockwise (orient2d > 0): positive when D is strictly inside the circle
    through A, B, C, negative when outside, zero when cocircular (reversed when A, B, C are
    clockwise).  Sign exact for all finite inputs; magnitude approximate.
    """
    adx = ax - dx
    bdx = bx - dx
    cdx = cx - dx
    ady = ay - dy
    bdy = by - dy
    cdy = cy - dy
    if _all_admissible((adx, bdx, cdx, ady, bdy, cdy), TINY_IC):
        alift = adx * adx + ady * ady
        blift = bdx * bdx + bdy * bdy
        clift = cdx * cdx + cdy * cdy
        det, perm = _det3_by_last_column(adx, ady, alift, bdx, bdy, blift, cdx, cdy, clift)
        decided, value = _filter_verdict(det, ERR_IC * perm)
        if decided:
            return value
    P = np.empty((4, 2))
    P[0, 0] = ax; P[0, 1] = ay
    P[1, 0] = bx; P[1, 1] = by
    P[2, 0] = cx; P[2, 1] = cy
    P[3, 0] = dx; P[3, 1] = dy
    return _lifted_det_exact(P, True)


@njit(cache=True, nogil=True)
def insphere(a, b, c, d, e):
    """INSPHERE(A, B, C, D, E) = det [[x y z x^2+y^2+z^2 1]] over rows A..E (Ericson 3.1.6.4;
    (3,) float64 arrays).

    With orient3d(A, B, C, D) > 0: positive when E is strictly inside the sphere through
    A, B, C, D, negative when outside, zero when cospherical (reversed if orient3d < 0).
    Sign exact for all finite inputs; magnitude approximate.
    """
    aex, aey, aez = _minus(a, e)
    bex, bey, bez = _minus(b, e)
    cex, cey, cez = _minus(c, e)
    dex, dey, dez = _minus(d, e)
    if _all_admissible((aex, bex, cex, dex, aey, bey, cey, dey, aez, bez, cez, dez), TINY_IS):
        ab, abp = _minor2(aex, aey, bex, bey)
        bc, bcp = _minor2(bex, bey, cex, cey)
        cd, cdp = _minor2(cex, cey, dex, dey)
        da, dap = _minor2(dex, dey, aex, aey)
        ac, acp = _minor2(aex, aey, cex, cey)
        bd, bdp = _minor2(bex, bey, dex, dey)
        # 3x3 minors of the (x, y, z) columns: abc = det(a, b, c), etc.
        abc = (aez * bc - bez * ac) + cez * ab
        bcd = (bez * cd - cez * bd) + dez * bc
        cda = (cez * da + dez * ac) + aez * cd
        dab = (dez * ab + aez * bd) + bez * da
        alift = (aex * aex + aey * aey) + aez * aez
        blift = (bex * bex + bey * bey) + bez * bez
        clift = (cex * cex + cey * cey) + cez * cez
        dlift = (dex * dex + dey * dey) + dez * dez
        # Laplace expansion along the lift column of det4 [a-e, |a-e|^2; ...]
        det = (dlift * abc - clift * dab) + (blift * cda - alift * bcd)
        abcp = (abs(aez) * bcp + abs(bez) * acp) + abs(cez) * abp
        bcdp = (abs(bez) * cdp + abs(cez) * bdp) + abs(dez) * bcp
        cdap = (abs(cez) * dap + abs(dez) * acp) + abs(aez) * cdp
        dabp = (abs(dez) * abp + abs(aez) * bdp) + abs(bez) * dap
        perm = (dlift * abcp + clift * dabp) + (blift * cdap + alift * bcdp)
        decided, value = _filter_verdict(det, ERR_IS * perm)
        if decided:
            return value
    return _lifted_det_exact(np.vstack((a, b, c, d, e)), True)
