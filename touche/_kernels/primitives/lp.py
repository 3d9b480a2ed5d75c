"""Low-dimensional linear programming (Seidel, Ericson 9.4.1.2) and the Chung-Wang
separating-vector algorithm (Ericson 9.6).

Seidel's randomized incremental LP, maximize c.x subject to A x <= b, x in R^d, d <= 4:
  1. Start from the vertex of a large box P0 (|x_j| <= R) most extreme along c.
  2. Add the halfspaces one by one in a random order. If the current optimum v satisfies H_i,
     keep it. Otherwise the new optimum lies on the plane of H_i: restrict the box and
     H_1..H_{i-1} to that plane (a (d-1)-dimensional LP with c projected) and solve it.
  3. The recursion bottoms out in 1D: intersect the intervals; an empty interval = infeasible.
The levels are written out explicitly (_lp4 -> _lp3 -> _lp2 -> _lp1): numba's cache cannot hold
self-recursive functions. Expected time O(d! m).

Conventions
- Rows are normalised at the top (|a_j| = 1, so violations are distances). Restricted rows
  keep their raw projected coefficients, so ``eps`` keeps the meaning "a point violates an
  original halfspace by at most eps" at every level.
- Rows whose projected normal is shorter than PARALLEL are parallel to the restricted subspace:
  they hold everywhere (kept out) or nowhere (infeasible) by the sign of their offset.
- Ties (objective component below OBJECTIVE_TIE after projection) pick the point nearest the
  level's origin, not a far box corner (noise times box size would spoil the value).
- Each level works in workspace rows passed down from the driver (no allocation per row).
"""
import numpy as np

from touche import tolerance
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.base.vec import copy_into

# LP status codes (mirrored by touche.lp.LPStatus).
OPTIMAL = 0
INFEASIBLE = 1
UNBOUNDED = 2
_HOLDS = -2  # _restricted: the row holds at the current optimum, nothing to do

# Chung-Wang status codes (mirrored by touche.lp.SeparationStatus).
CW_SEPARATED = 0
CW_INTERSECTING = 1
CW_MAX_ITERATIONS = 2

# A projected unit normal shorter than this is treated as parallel to the subspace: its bound
# b/|a.d| would lie beyond any box we use unless b is at rounding level, where the halfspace
# contains the subspace to within rounding. Same meaning as tolerance.RELATIVE.
PARALLEL = tolerance.RELATIVE
# Projected objective components below this (objective normalised to length 1) are rounding
# noise of the projection: treated as exact zeros (a tie).
OBJECTIVE_TIE = tolerance.RELATIVE
# The starting box is BOX_FACTOR * (1 + largest plane offset): large enough for any vertex of a
# well-conditioned problem, small enough that box corners keep ~10 significant digits of the
# model coordinates in the (transient) far iterates.
BOX_FACTOR = 1e6
# Recession-cone LP (A d <= 0, |d_j| <= 1): all offsets are exact zeros there, so only a few
# ulps of slack are needed; a bounded problem gives an objective of ~0, an unbounded one a
# value of order 1. Values above UNBOUNDED_MIN (unit objective) mean UNBOUNDED.
RECESSION_EPS = 4e-16
UNBOUNDED_MIN = 1e-9
# Chung-Wang sub-algorithm: the stored directions r_i trap the origin when no unit-box vector m
# has m.r_i > CW_CONE_EPS for every i (then 0 lies in conv{r_i}, inside B - A).
CW_CONE_EPS = tolerance.RELATIVE
CW_CHECK_EVERY = 4


# ------------------------------------------------------------------------------------------
# one level down: rows restricted to the plane of a violated row
@njit(cache=True, nogil=True)
def _restrict(M, r, count, row, box, eps, out_M, out_r, x0, basis):
    """Restrict rows 0..count-1 of (M, r) and the box |x_j| <= ``box`` to the plane
    M[row] . x = r[row] (k dims -> k-1). The plane is x = x0 + basis @ y, x0 the foot of the
    level's origin, basis (k, k-1) orthonormal (a Householder reflection of the unit normal).
    Writes the restricted rows (box rows first) to out_M / out_r; returns their number, or -1
    when a parallel row excludes the whole plane (infeasible)."""
    k = M.shape[1]
    norm_sq = 0.0
    for j in range(k):
        norm_sq += M[row, j] * M[row, j]
    norm = np.sqrt(norm_sq)
    scale = r[row] / norm_sq
    p = 0
    for j in range(k):
        x0[j] = M[row, j] * scale
        if abs(M[row, j]) > abs(M[row, p]):
            p = j
    # Householder: H = I - 2 v v^T / (v.v), v = n + sign(n_p) e_p maps n to -sign(n_p) e_p, so
    # the columns of H other than p span the plane's directions.
    sign = 1.0 if M[row, p] >= 0.0 else -1.0
    vp = M[row, p] / norm + sign
    vv = 2.0 * (1.0 + abs(M[row, p]) / norm)  # |n + sign(n_p) e_p|^2 for a unit n
    col = 0
    for jc in range(k):
        if jc == p:
            continue
        vjc = M[row, jc] / norm
        for j in range(k):
            vj = M[row, j] / norm
            if j == p:
                vj = vp
            basis[j, col] = (1.0 if j == jc else 0.0) - 2.0 * vj * vjc / vv
        col += 1
    n_out = 0
    # the box rows +-e_j . x <= box
    for j in range(k):
        for s in (1.0, -1.0):
            length_sq = 0.0
            for c in range(k - 1):
                length_sq += basis[j, c] * basis[j, c]
            beta = box - s * x0[j]
            if length_sq <= PARALLEL * PARALLEL:
                if beta < -eps:
                    return -1
                continue
            for c in range(k - 1):
                out_M[n_out, c] = s * basis[j, c]
            out_r[n_out] = beta
            n_out += 1
    for i in range(count):
        length_sq = 0.0
        for c in range(k - 1):
            a = 0.0
            for j in range(k):
                a += M[i, j] * basis[j, c]
            out_M[n_out, c] = a
            length_sq += a * a
        beta = r[i]
        for j in range(k):
            beta -= M[i, j] * x0[j]
        if length_sq <= PARALLEL * PARALLEL:
            if beta < -eps:
                return -1
            continue
        out_r[n_out] = beta
        n_out += 1
    return n_out


@njit(cache=True, nogil=True)
def _project_objective(c, basis, out):
    k1 = basis.shape[1]
    for col in range(k1):
        value = 0.0
        for j in range(basis.shape[0]):
            value += basis[j, col] * c[j]
        out[col] = 0.0 if abs(value) <= OBJECTIVE_TIE else value


@njit(cache=True, nogil=True)
def _lift(x0, basis, y, out):
    for j in range(x0.shape[0]):
        value = x0[j]
        for col in range(basis.shape[1]):
            value += basis[j, col] * y[col]
        out[j] = value


@njit(cache=True, nogil=True)
def _start(c, box, v):
    for j in range(c.shape[0]):
        v[j] = box if c[j] > 0.0 else (-box if c[j] < 0.0 else 0.0)


@njit(cache=True, nogil=True)
def _violated(M, r, i, v, eps):
    s = 0.0
    for j in range(v.shape[0]):
        s += M[i, j] * v[j]
    return s > r[i] + eps


# ------------------------------------------------------------------------------------------
# the levels
@njit(cache=True, nogil=True)
def _lp1(M, r, count, c, box, eps, out):
    """1D: intervals. Writes t to out[0]; returns OPTIMAL or INFEASIBLE."""
    lo = -box
    hi = box
    lo_relaxed = -box
    hi_relaxed = box
    for i in range(count):
        alpha = M[i, 0]
        beta = r[i]
        if abs(alpha) <= PARALLEL:
            if beta < -eps:
                return INFEASIBLE
            continue
        if alpha > 0.0:
            hi = min(hi, beta / alpha)
            hi_relaxed = min(hi_relaxed, (beta + eps) / alpha)
        else:
            lo = max(lo, beta / alpha)
            lo_relaxed = max(lo_relaxed, (beta + eps) / alpha)
    if lo_relaxed > hi_relaxed:
        return INFEASIBLE
    if lo > hi:  # empty only by rounding (touching within eps): the middle
        out[0] = 0.5 * (lo + hi)
    elif c[0] > 0.0:
        out[0] = hi
    elif c[0] < 0.0:
        out[0] = lo
    else:  # tie: the feasible t nearest the origin
        out[0] = min(max(0.0, lo), hi)
    return OPTIMAL


@njit(cache=True, nogil=True, inline="always")
def _restricted(M, r, i, v, c, box, eps, WM, Wr, x0, basis, c_low):
    """Seidel's step for row i at the current optimum v: _HOLDS when v satisfies the row; else
    the LP restricted to the row's plane (_restrict: the number of rows written, -1 when the
    plane is infeasible) with the objective projected to ``c_low``."""
    if not _violated(M, r, i, v, eps):
        return _HOLDS
    n = _restrict(M, r, i, i, box, eps, WM, Wr, x0, basis)
    if n >= 0:
        _project_objective(c, basis, c_low)
    return n


@njit(cache=True, nogil=True, inline="always")
def _level_buffers(k):
    """A k-dimensional level's work arrays: the plane's origin x0 (k,), the projected objective
    and the lower level's optimum (k-1,), the plane's basis (k, k-1)."""
    return np.empty(k), np.empty(k - 1), np.empty(k - 1), np.empty((k, k - 1))


@njit(cache=True, nogil=True)
def _lp2(M, r, count, c, box, eps, out, W1M, W1r, scratch):
    _start(c, box, out)
    x0 = scratch[0, :2]
    c1 = scratch[1, :1]
    t = scratch[2, :1]
    basis = np.empty((2, 1))
    for i in range(count):
        n = _restricted(M, r, i, out, c, box, eps, W1M, W1r, x0, basis, c1)
        if n == -1 or (n >= 0 and _lp1(W1M, W1r, n, c1, 2.0 * box, eps, t) != OPTIMAL):
            return INFEASIBLE
        if n >= 0:
            _lift(x0, basis, t, out)
    return OPTIMAL


@njit(cache=True, nogil=True)
def _lp3(M, r, count, c, box, eps, out, W2M, W2r, W1M, W1r, scratch):
    _start(c, box, out)
    x0, c2, y, basis = _level_buffers(3)
    for i in range(count):
        n = _restricted(M, r, i, out, c, box, eps, W2M, W2r, x0, basis, c2)
        if n == -1 or (n >= 0 and _lp2(W2M, W2r, n, c2, 2.0 * box, eps, y, W1M, W1r, scratch) != OPTIMAL):
            return INFEASIBLE
        if n >= 0:
            _lift(x0, basis, y, out)
    return OPTIMAL


@njit(cache=True, nogil=True)
def _lp4(M, r, count, c, box, eps, out, W3M, W3r, W2M, W2r, W1M, W1r, scratch):
    _start(c, box, out)
    x0, c3, y, basis = _level_buffers(4)
    for i in range(count):
        n = _restricted(M, r, i, out, c, box, eps, W3M, W3r, x0, basis, c3)
        if n == -1 or (n >= 0 and _lp3(W3M, W3r, n, c3, 2.0 * box, eps, y, W2M, W2r, W1M, W1r, scratch) != OPTIMAL):
            return INFEASIBLE
        if n >= 0:
            _lift(x0, basis, y, out)
    return OPTIMAL


@njit(cache=True, nogil=True)
def _workspace(rows, d):
    """Row buffers for the levels below d: level k-1 receives at most rows + 2(d + ... + k) rows."""
    W3M = np.empty((rows + 8, 3))
    W3r = np.empty(rows + 8)
    W2M = np.empty((rows + 14, 2))
    W2r = np.empty(rows + 14)
    W1M = np.empty((rows + 18, 1))
    W1r = np.empty(rows + 18)
    return W3M, W3r, W2M, W2r, W1M, W1r


@njit(cache=True, nogil=True)
def solve_normalized(c, M, r, count, box, eps, x):
    """Seidel on rows 0..count-1 of unit-normal rows (M, r) in the order given; ``c`` already
    normalised with ties zeroed. Writes the optimum (within the box |x_j| <= box) to x and
    returns OPTIMAL or INFEASIBLE."""
    d = M.shape[1]
    W3M, W3r, W2M, W2r, W1M, W1r = _workspace(count, d)
    scratch = np.empty((3, 2))
    if d == 1:
        return _lp1(M, r, count, c, box, eps, x)
    if d == 2:
        return _lp2(M, r, count, c, box, eps, x, W1M, W1r, scratch)
    if d == 3:
        return _lp3(M, r, count, c, box, eps, x, W2M, W2r, W1M, W1r, scratch)
    return _lp4(M, r, count, c, box, eps, x, W3M, W3r, W2M, W2r, W1M, W1r, scratch)


@njit(cache=True, nogil=True)
def normalize_rows(A, b, order, M, r):
    """Copy rows of (A, b) in ``order`` into (M, r) scaled to unit normals; zero rows are
    dropped (0 <= b_j: returns -1 when some b_j < 0 makes the system infeasible). Returns the
    number of rows written and the largest |offset|."""
    d = A.shape[1]
    count = 0
    largest = 0.0
    for k in range(order.shape[0]):
        i = order[k]
        norm_sq = 0.0
        for j in range(d):
            norm_sq += A[i, j] * A[i, j]
        if norm_sq == 0.0:
            if b[i] < 0.0:
                return -1, largest
            continue
        norm = np.sqrt(norm_sq)
        for j in range(d):
            M[count, j] = A[i, j] / norm
        r[count] = b[i] / norm
        largest = max(largest, abs(r[count]))
        count += 1
    return count, largest


@njit(cache=True, nogil=True)
def _unit_objective(c, out):
    norm_sq = 0.0
    for j in range(c.shape[0]):
        norm_sq += c[j] * c[j]
    norm = np.sqrt(norm_sq)
    for j in range(c.shape[0]):
        value = c[j] / norm if norm > 0.0 else 0.0
        out[j] = 0.0 if abs(value) <= OBJECTIVE_TIE else value
    return norm


@njit(cache=True, nogil=True)
def _normalized_system(A, b, order):
    """(M, r, count, largest, eps, box): the rows of (A, b) normalized by normalize_rows (count
    < 0: infeasible), the feasibility tolerance they call for and the half-width of the box that
    bounds the search."""
    m, d = A.shape
    M = np.empty((m, d))
    r = np.empty(m)
    count, largest = normalize_rows(A, b, order, M, r)
    eps = tolerance.ABSOLUTE + tolerance.RELATIVE * largest
    box = BOX_FACTOR * (1.0 + largest)
    return M, r, count, largest, eps, box


@njit(cache=True, nogil=True)
def seidel_lp(c, A, b, order, x):
    """maximize c.x subject to A x <= b (A (m, d), d in 1..4), rows in ``order`` (a permutation
    of 0..m-1: the random order of Seidel's algorithm, chosen by the caller for reproducibility).

    Writes x (d,) and returns (status, value): OPTIMAL with x an optimal point (within
    touche.tolerance of every halfspace), INFEASIBLE (x NaN, value -inf), or UNBOUNDED (x a
    feasible point, value +inf). Unboundedness is decided by a second LP on the recession cone
    (A d <= 0, |d_j| <= 1): the first LP alone, cut by its box, cannot tell a far optimum from
    a tie along an unbounded edge."""
    d = A.shape[1]
    M, r, count, largest, eps, box = _normalized_system(A, b, order)
    if count < 0:
        x[:] = np.nan
        return INFEASIBLE, -np.inf
    unit_c = np.empty(d)
    c_norm = _unit_objective(c, unit_c)
    if solve_normalized(unit_c, M, r, count, box, eps, x) != OPTIMAL:
        x[:] = np.nan
        return INFEASIBLE, -np.inf
    value = 0.0
    for j in range(d):
        value += c[j] * x[j]
    if c_norm > 0.0:
        zeros = np.zeros(count)
        direction = np.empty(d)
        if solve_normalized(unit_c, M, zeros, count, 1.0, RECESSION_EPS, direction) == OPTIMAL:
            gain = 0.0
            for j in range(d):
                gain += unit_c[j] * direction[j]
            if gain > UNBOUNDED_MIN:
                return UNBOUNDED, np.inf
    return OPTIMAL, value


@njit(cache=True, nogil=True)
def chebyshev_point(A, b, order, x):
    """Largest ball inside A x <= b (A (m, d), d <= 3) by an LP in d + 1 variables: maximize t
    subject to a_j.x + t |a_j| <= b_j, t <= 1 + max|b_j|/|a_j| (a cap for unbounded regions).
    Writes the centre to x; returns (status, radius): OPTIMAL with radius >= -eps (radius <= eps:
    the set has no interior within the tolerance), or INFEASIBLE."""
    d = A.shape[1]
    M, r, count, largest, eps, box = _normalized_system(A, b, order)
    if count < 0:
        x[:] = np.nan
        return INFEASIBLE, -np.inf
    lifted = np.zeros((count + 1, d + 1))
    rhs = np.empty(count + 1)
    scale = np.sqrt(2.0)  # rows (a_j, 1) / sqrt(2) keep unit normals
    for i in range(count):
        for j in range(d):
            lifted[i, j] = M[i, j] / scale
        lifted[i, d] = 1.0 / scale
        rhs[i] = r[i] / scale
    lifted[count, d] = 1.0
    rhs[count] = 1.0 + largest
    objective = np.zeros(d + 1)
    objective[d] = 1.0
    y = np.empty(d + 1)
    if solve_normalized(objective, lifted, rhs, count + 1, box, eps, y) != OPTIMAL:
        x[:] = np.nan  # never expected: t can always go down to -box
        return INFEASIBLE, -np.inf
    radius = y[d]
    for j in range(d):
        x[j] = y[j]
    if radius < -eps:
        x[:] = np.nan
        return INFEASIBLE, radius
    return OPTIMAL, radius


# ------------------------------------------------------------------------------------------
# polytopes
@njit(cache=True, nogil=True)
def shuffle(order, seed):
    """Fisher-Yates with a xorshift64 generator: a reproducible random order in compiled code."""
    state = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
    for i in range(order.shape[0]):
        order[i] = i
    for i in range(order.shape[0] - 1, 0, -1):
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        j = np.int64(state % np.uint64(i + 1))
        order[i], order[j] = order[j], order[i]


@njit(cache=True, nogil=True)
def _world_planes(normals, offsets, pose, M, r, start):
    """Rows start.. of (M, r): the shape's planes n.x <= d moved by ``pose`` (unit normals)."""
    largest = 0.0
    for i in range(normals.shape[0]):
        dot_t = 0.0
        for j in range(3):
            value = pose[j, 0] * normals[i, 0] + pose[j, 1] * normals[i, 1] + pose[j, 2] * normals[i, 2]
            M[start + i, j] = value
            dot_t += value * pose[j, 3]
        r[start + i] = offsets[i] + dot_t
        largest = max(largest, abs(r[start + i]))
    return largest


@njit(cache=True, nogil=True)
def polytopes_lp(normals_a, offsets_a, ta, normals_b, offsets_b, tb, seed, witness):
    """Ericson 9.4.1: two convex polytopes (planes n.x <= d in their local frames, placed by
    4x4 poses) intersect iff the union of their halfspaces is feasible. Seidel's LP with a zero
    objective; touching within the tolerance (ABSOLUTE + RELATIVE * largest offset) counts.
    Writes a common point to ``witness`` and returns 1 (intersecting) or 0."""
    na = normals_a.shape[0]
    nb = normals_b.shape[0]
    m = na + nb
    M = np.empty((m, 3))
    r = np.empty(m)
    order = np.empty(m, dtype=np.int64)
    shuffle(order, seed)
    largest = max(_world_planes(normals_a, offsets_a, ta, M, r, 0), _world_planes(normals_b, offsets_b, tb, M, r, na))
    # apply the random order in place (rows are already unit)
    Mp = np.empty((m, 3))
    rp = np.empty(m)
    for k in range(m):
        i = order[k]
        Mp[k, 0] = M[i, 0]
        Mp[k, 1] = M[i, 1]
        Mp[k, 2] = M[i, 2]
        rp[k] = r[i]
    eps = tolerance.ABSOLUTE + tolerance.RELATIVE * largest
    box = BOX_FACTOR * (1.0 + largest)
    zero = np.zeros(3)
    if solve_normalized(zero, Mp, rp, m, box, eps, witness) == OPTIMAL:
        return 1
    witness[:] = np.nan
    return 0


@njit(cache=True, nogil=True)
def _support(vertices, pose, sx, sy, sz):
    """World vertex of a posed vertex set most extreme along s (brute force over vertices)."""
    lx = pose[0, 0] * sx + pose[1, 0] * sy + pose[2, 0] * sz
    ly = pose[0, 1] * sx + pose[1, 1] * sy + pose[2, 1] * sz
    lz = pose[0, 2] * sx + pose[1, 2] * sy + pose[2, 2] * sz
    best = 0
    best_value = -np.inf
    for i in range(vertices.shape[0]):
        value = vertices[i, 0] * lx + vertices[i, 1] * ly + vertices[i, 2] * lz
        if value > best_value:
            best_value = value
            best = i
    return best


@njit(cache=True, nogil=True)
def _world_vertex(vertices, pose, i, out):
    for j in range(3):
        out[j] = pose[j, 0] * vertices[i, 0] + pose[j, 1] * vertices[i, 1] + pose[j, 2] * vertices[i, 2] + pose[j, 3]


@njit(cache=True, nogil=True)
def _origin_trapped(directions, count):
    """Chung-Wang's sub-algorithm (Ericson 9.6): is there m with m.r_i > 0 for all stored r_i?
    Solved as maximize tau s.t. tau - m.r_i <= 0, |m_j| <= 1 (a 4D Seidel LP). When the best tau
    is <= CW_CONE_EPS no such m exists, so 0 is in conv{r_i} and hence in B - A."""
    M = np.empty((count, 4))
    r = np.zeros(count)
    scale = np.sqrt(2.0)
    for i in range(count):
        M[i, 0] = -directions[i, 0] / scale
        M[i, 1] = -directions[i, 1] / scale
        M[i, 2] = -directions[i, 2] / scale
        M[i, 3] = 1.0 / scale
    c = np.zeros(4)
    c[3] = 1.0
    y = np.empty(4)
    if solve_normalized(c, M, r, count, 1.0, RECESSION_EPS, y) != OPTIMAL:
        return True  # never expected (m = 0, tau = 0 is feasible)
    return y[3] <= CW_CONE_EPS


@njit(cache=True, nogil=True)
def chung_wang(verts_a, ta, verts_b, tb, s0, max_iterations, check_every, eps, out_s):
    """Ericson 9.6, the Chung-Wang separating-vector algorithm for the convex hulls of two
    posed vertex sets:
      1. s = s0 (unit).
      2. p = A's vertex maximising p.s, q = B's vertex minimising q.s (maximising q.(-s)).
      3. If p.s < q.s - eps, s separates (max over A of p.s < min over B of q.s): SEPARATED.
         (Erratum E L18373: the book prints p.s < q.(-s); the condition is p.s < q.s. The margin
         eps keeps touching sets, closed, from being reported separated by rounding.)
      4. Else reflect: r = (q - p)/|q - p|, s = s - 2 (r.s) r; go to 2.
    Intersection is detected by the sub-algorithm every ``check_every`` iterations (0: never;
    the stored r_i trap the origin, _origin_trapped) or by p == q (a common vertex):
    INTERSECTING.
    Otherwise MAX_ITERATIONS after ``max_iterations`` reflections. Writes s to out_s; returns
    (status, iterations)."""
    norm = np.sqrt(s0[0] * s0[0] + s0[1] * s0[1] + s0[2] * s0[2])
    if norm > 0.0:
        sx, sy, sz = s0[0] / norm, s0[1] / norm, s0[2] / norm
    else:
        sx, sy, sz = 1.0, 0.0, 0.0
    directions = np.empty((max(max_iterations, 1), 3))
    p = np.empty(3)
    q = np.empty(3)
    stored = 0
    status = CW_MAX_ITERATIONS
    iteration = 0
    while True:
        _world_vertex(verts_a, ta, _support(verts_a, ta, sx, sy, sz), p)
        _world_vertex(verts_b, tb, _support(verts_b, tb, -sx, -sy, -sz), q)
        ps = p[0] * sx + p[1] * sy + p[2] * sz
        qs = q[0] * sx + q[1] * sy + q[2] * sz
        if ps < qs - eps:
            status = CW_SEPARATED
            break
        rx, ry, rz = q[0] - p[0], q[1] - p[1], q[2] - p[2]
        length = np.sqrt(rx * rx + ry * ry + rz * rz)
        if length <= eps:  # a common point (to within eps)
            status = CW_INTERSECTING
            break
        if iteration >= max_iterations:
            break
        rx, ry, rz = rx / length, ry / length, rz / length
        directions[stored, 0] = rx
        directions[stored, 1] = ry
        directions[stored, 2] = rz
        stored += 1
        if check_every > 0 and (stored % check_every == 0 or stored == max_iterations):
            if _origin_trapped(directions, stored):
                status = CW_INTERSECTING
                break
        rs = 2.0 * (rx * sx + ry * sy + rz * sz)
        sx, sy, sz = sx - rs * rx, sy - rs * ry, sz - rs * rz
        # a reflection keeps |s| = 1; renormalise to stop rounding drift
        norm = np.sqrt(sx * sx + sy * sy + sz * sz)
        sx, sy, sz = sx / norm, sy / norm, sz / norm
        iteration += 1
    out_s[0] = sx
    out_s[1] = sy
    out_s[2] = sz
    return status, iteration


@njit(cache=True, nogil=True)
def _pose_scale(vertices, pose):
    reach = 0.0
    for i in range(vertices.shape[0]):
        for j in range(3):
            reach = max(reach, abs(vertices[i, j]))
    return reach + max(abs(pose[0, 3]), abs(pose[1, 3]), abs(pose[2, 3]))


@njit(cache=True, nogil=True)
def _start_vector(verts_a, ta, verts_b, tb, out):
    """Initial candidate: from A's vertex centroid to B's (world)."""
    for j in range(3):
        out[j] = 0.0
    for i in range(verts_b.shape[0]):
        for j in range(3):
            out[j] += (tb[j, 0] * verts_b[i, 0] + tb[j, 1] * verts_b[i, 1] + tb[j, 2] * verts_b[i, 2]) / verts_b.shape[0]
    for i in range(verts_a.shape[0]):
        for j in range(3):
            out[j] -= (ta[j, 0] * verts_a[i, 0] + ta[j, 1] * verts_a[i, 1] + ta[j, 2] * verts_a[i, 2]) / verts_a.shape[0]
    for j in range(3):
        out[j] += tb[j, 3] - ta[j, 3]


@njit(cache=True, nogil=True)
def separating_vector_one(verts_a, ta, verts_b, tb, s0, use_initial, max_iterations, check_every, out_s):
    """Chung-Wang for one pose pair (serial: no thread-pool start for a single call). The start
    vector is ``s0`` when ``use_initial``, else the centroid difference. Returns (status,
    iterations); writes the vector to out_s."""
    start = np.empty(3)
    if use_initial:
        copy_into(start, s0)
    else:
        _start_vector(verts_a, ta, verts_b, tb, start)
    scale = max(_pose_scale(verts_a, ta), _pose_scale(verts_b, tb))
    eps = tolerance.ABSOLUTE + tolerance.RELATIVE * scale
    return chung_wang(verts_a, ta, verts_b, tb, start, max_iterations, check_every, eps, out_s)


@njit(cache=True, nogil=True)
def separating_vector_many(verts_a, tas, verts_b, tbs, initial, use_initial, max_iterations,
                           out_s, out_status, out_iterations, lo, hi):
    """Chung-Wang for a batch of pose pairs (broadcast: tas / tbs of length n or 1; ``initial``
    rows the same way)."""
    step_a = 1 if tas.shape[0] > 1 else 0
    step_b = 1 if tbs.shape[0] > 1 else 0
    step_s = 1 if initial.shape[0] > 1 else 0
    for k in range(lo, hi):
        status, iterations = separating_vector_one(
            verts_a, tas[k * step_a], verts_b, tbs[k * step_b], initial[k * step_s], use_initial, max_iterations,
            CW_CHECK_EVERY, out_s[k]
        )
        out_status[k] = status
        out_iterations[k] = iterations


@njit(cache=True, nogil=True)
def intersect_pair(normals_a, offsets_a, verts_a, ta, normals_b, offsets_b, verts_b, tb,
                   method, max_iterations, seed, witness):
    """One pair for touche.lp.polytopes_intersect. method 0: Seidel LP on the planes; method 1:
    Chung-Wang on the vertices (no sub-algorithm: after ``max_iterations`` reflections the plane
    LP, cheaper than the 4D sub-algorithm LPs, decides). Returns 1 / 0;
    writes a common point (LP) or NaN to ``witness``."""
    if method == 1:
        s0 = np.zeros(3)
        s = np.empty(3)
        status, _ = separating_vector_one(verts_a, ta, verts_b, tb, s0, False, max_iterations, 0, s)
        if status == CW_SEPARATED:
            witness[:] = np.nan
            return 0
        if status == CW_INTERSECTING:
            witness[:] = np.nan
            return 1
    return polytopes_lp(normals_a, offsets_a, ta, normals_b, offsets_b, tb, seed, witness)


@njit(cache=True, nogil=True)
def polytopes_intersect_many(normals_a, offsets_a, verts_a, tas, normals_b, offsets_b, verts_b, tbs,
                             method, max_iterations, seed, out, out_witness, lo, hi):
    """Batch driver for touche.lp.polytopes_intersect (pairs [lo, hi); pair k uses the LP
    order seed + k)."""
    step_a = 1 if tas.shape[0] > 1 else 0
    step_b = 1 if tbs.shape[0] > 1 else 0
    for k in range(lo, hi):
        out[k] = intersect_pair(normals_a, offsets_a, verts_a, tas[k * step_a], normals_b, offsets_b, verts_b,
                                tbs[k * step_b], method, max_iterations, seed + k, out_witness[k])
