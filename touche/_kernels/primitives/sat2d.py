"""Separating axes for 2D convex polygons: static test, first/last time of contact under constant
velocities, contact set at first contact, and the intersection polygon.

Seeds: Eberly, "The Method of Separating Axes" (S0) §2-3 (static test on edge normals), §6
(moving objects: TFirst/TLast per axis), §7-8 (contact set from the extreme features at TFirst);
Ericson 5.2.1 (SAT) and 5.5.2 / 8.3 (clipping a convex polygon by half-planes).

Convex sets are (k, 2) float64 vertex arrays, counter-clockwise (the public layer validates and
reorients). k = 1 is a point and k = 2 a segment (degenerate convex sets). Closed sets: touching
counts as intersecting, comparisons are exact on the computed projections.

Axis set (why it suffices): A and B are disjoint iff 0 is outside the Minkowski difference A - B,
whose edges are parallel to edges of A and B. For k >= 3 the outward edge normals perp(V[j+1] -
V[j]) = (ey, -ex) are the axes (S0 §3). A segment contributes its normal and its direction (when
both sets are collinear segments, A - B is a segment and its direction is needed); a point (or a
zero-length segment) contributes the coordinate axes (A - B may be a single point). The set does
not depend on time for translations, so S0 §6 applies unchanged.

Seed errata (SEED-NOTES §3, S0) not copied: WhichSide's "all projections zero -> -1" and
"ignore zeros" (here an axis separates only on a strict inequality, so touching sets
intersect); the N_0/N_1 loop bounds (each polygon's own count); GetConfiguration's swapped
M12/M11 labels (here the extreme features are found from the projections directly, with a
tolerance, not from a hand-written case table); the W0/W1 swap of L483/L501 (contact points are
computed in A's frame with W = W1 - W0 and moved by TFirst * W0 once, at the end).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.base.kinds import ALREADY_TOUCHING  # noqa: E402, F401  (the status and set codes, also read from here)
from touche._kernels.base.kinds import HIT, MISS  # noqa: E402, F401  (the status and set codes, also read from here)
from touche._kernels.base.kinds import SET_EMPTY  # noqa: E402, F401  (the status and set codes, also read from here)
from touche._kernels.base.kinds import SET_POINT  # noqa: E402, F401  (the status and set codes, also read from here)
from touche._kernels.base.kinds import SET_POLYGON  # noqa: E402, F401  (the status and set codes, also read from here)
from touche._kernels.base.kinds import SET_SEGMENT  # noqa: E402, F401  (the status and set codes, also read from here)
from touche.tolerance import ABSOLUTE, RELATIVE  # noqa: E402

# Layout of one row of the time-of-impact output (float64, TOI_WIDTH columns).
TOI_STATUS = 0
TOI_T_FIRST = 1
TOI_T_LAST = 2
TOI_NX = 3
TOI_NY = 4
TOI_KIND = 5
TOI_P0 = 6  # columns 6, 7: first contact point
TOI_P1 = 8  # columns 8, 9: second contact point (NaN for a point contact)
TOI_WIDTH = 10

_ABS = ABSOLUTE
_REL = RELATIVE
# Clipped polygons: points closer than this many touching tolerances merge, and polygons thinner
# than that collapse to a segment / point (rounding of nearly-touching overlaps leaves slivers).
_COLLAPSE = 4.0


@njit(cache=True, nogil=True)
def num_axes(k):
    """How many candidate axes a convex set of k vertices contributes."""
    return k if k >= 3 else 2


@njit(cache=True, nogil=True)
def axis(poly, j):
    """Candidate axis j of ``poly``: direction (dx, dy) (not unit) and reference point (px, py)."""
    k = poly.shape[0]
    px = poly[0, 0]
    py = poly[0, 1]
    if k >= 3:
        j1 = j + 1 if j + 1 < k else 0
        px = poly[j, 0]
        py = poly[j, 1]
        ex = poly[j1, 0] - px
        ey = poly[j1, 1] - py
        return ey, -ex, px, py  # outward normal of a CCW edge (S0 §3 Perp)
    if k == 2:
        ex = poly[1, 0] - px
        ey = poly[1, 1] - py
        if ex != 0.0 or ey != 0.0:
            if j == 0:
                return ey, -ex, px, py
            return ex, ey, px, py
    # a point (or a zero-length segment): the coordinate axes
    if j == 0:
        return 1.0, 0.0, px, py
    return 0.0, 1.0, px, py


@njit(cache=True, nogil=True)
def project(poly, dx, dy, px, py, sx, sy):
    """[min, max] of d . (v + s - p) over the vertices v of ``poly`` (s: a shift of the polygon)."""
    lo = np.inf
    hi = -np.inf
    for i in range(poly.shape[0]):
        t = dx * (poly[i, 0] + sx - px) + dy * (poly[i, 1] + sy - py)
        if t < lo:
            lo = t
        if t > hi:
            hi = t
    return lo, hi


@njit(cache=True, nogil=True, inline="always")
def pair_axis_count(a, b):
    """How many candidate axes the pair (a, b) has: a's, then b's."""
    return num_axes(a.shape[0]) + num_axes(b.shape[0])


@njit(cache=True, nogil=True, inline="always")
def projected_axis(a, b, k):
    """Candidate axis k of the pair (a's axes first, then b's): (dx, dy, min_a, max_a, min_b,
    max_b), a and b projected on it (zero projections for a zero direction)."""
    na = num_axes(a.shape[0])
    if k < na:
        dx, dy, px, py = axis(a, k)
    else:
        dx, dy, px, py = axis(b, k - na)
    min_a, max_a = project(a, dx, dy, px, py, 0.0, 0.0)
    min_b, max_b = project(b, dx, dy, px, py, 0.0, 0.0)
    return dx, dy, min_a, max_a, min_b, max_b


@njit(cache=True, nogil=True, inline="always")
def least_push(best, best_x, best_y, dx, dy, min_a, max_a, min_b, max_b):
    """The least overlap so far (depth, unit direction A -> B) updated with axis d: moving B
    along +d by (max_a - min_b) / |d|, or along -d by (max_b - min_a) / |d|, separates them."""
    length = np.sqrt(dx * dx + dy * dy)
    push_pos = (max_a - min_b) / length
    push_neg = (max_b - min_a) / length
    if push_pos < best:
        best = push_pos
        best_x = dx / length
        best_y = dy / length
    if push_neg < best:
        best = push_neg
        best_x = -dx / length
        best_y = -dy / length
    return best, best_x, best_y


@njit(cache=True, nogil=True)
def coord_scale(poly, scale):
    for i in range(poly.shape[0]):
        for c in range(2):
            v = abs(poly[i, c])
            if v > scale:
                scale = v
    return scale


@njit(cache=True, nogil=True)
def intersects_pair(a, b):
    """Closed-set static test (S0 §3 with strict separation, Ericson 5.2.1)."""
    for k in range(pair_axis_count(a, b)):
        dx, dy, min_a, max_a, min_b, max_b = projected_axis(a, b, k)
        if dx == 0.0 and dy == 0.0:
            continue  # zero-length edge: no information
        # Strict inequalities: touching (equal end points) is not separated (SEED-NOTES
        # S0 L71-74: WhichSide must not treat zero projections as separating).
        if max_b < min_a or max_a < min_b:
            return False
    return True


@njit(cache=True, nogil=True)
def toi_pair(a, b, vax, vay, vbx, vby, t_max, out):
    """First/last time of contact of A + t va and B + t vb over [0, t_max] (S0 §6), the unit
    contact normal (A -> B) and the contact set at first contact (S0 §7). Writes one TOI row.

    ALREADY_TOUCHING (closed sets meet at t = 0): t_first = 0, normal = axis of least overlap
    (B moves along it to separate), contact set left EMPTY (the caller computes the overlap set).
    HIT: t_first in (0, t_max]. MISS: NaN times and normal. t_last is clamped to t_max.
    """
    for c in range(TOI_WIDTH):
        out[c] = np.nan
    wx = vbx - vax  # A is treated as stationary (S0 §6: W = W1 - W0)
    wy = vby - vay
    t_first = 0.0
    t_last = np.inf
    overlapping = True
    have_first = False
    first_nx = 0.0
    first_ny = 0.0
    least_depth = np.inf
    least_nx = 0.0
    least_ny = 0.0
    for k in range(pair_axis_count(a, b)):
        dx, dy, min_a, max_a, min_b, max_b = projected_axis(a, b, k)
        if dx == 0.0 and dy == 0.0:
            continue
        speed = dx * wx + dy * wy
        if max_b < min_a:  # B on the negative side of A along d
            overlapping = False
            if speed <= 0.0:
                out[TOI_STATUS] = MISS  # apart or never closing (zero speed separates forever)
                return
            t = (min_a - max_b) / speed
            if not have_first or t > t_first:
                t_first = t
                have_first = True
                first_nx = -dx
                first_ny = -dy
            t = (max_a - min_b) / speed
            if t < t_last:
                t_last = t
        elif max_a < min_b:  # B on the positive side
            overlapping = False
            if speed >= 0.0:
                out[TOI_STATUS] = MISS
                return
            t = (max_a - min_b) / speed
            if not have_first or t > t_first:
                t_first = t
                have_first = True
                first_nx = dx
                first_ny = dy
            t = (min_a - max_b) / speed
            if t < t_last:
                t_last = t
        else:
            if speed > 0.0:
                t = (max_a - min_b) / speed
                if t < t_last:
                    t_last = t
            elif speed < 0.0:
                t = (min_a - max_b) / speed
                if t < t_last:
                    t_last = t
            least_depth, least_nx, least_ny = least_push(least_depth, least_nx, least_ny, dx, dy,
                                                         min_a, max_a, min_b, max_b)
        if t_first > t_max or t_first > t_last:
            out[TOI_STATUS] = MISS
            return
    if t_last > t_max:
        t_last = t_max
    if overlapping:
        out[TOI_STATUS] = ALREADY_TOUCHING
        out[TOI_T_FIRST] = 0.0
        out[TOI_T_LAST] = t_last
        out[TOI_NX] = least_nx
        out[TOI_NY] = least_ny
        out[TOI_KIND] = SET_EMPTY
        return
    length = np.sqrt(first_nx * first_nx + first_ny * first_ny)
    nx = first_nx / length
    ny = first_ny / length
    out[TOI_STATUS] = HIT
    out[TOI_T_FIRST] = t_first
    out[TOI_T_LAST] = t_last
    out[TOI_NX] = nx
    out[TOI_NY] = ny
    # contact set in A's frame (B shifted by W * TFirst), then moved by A's own displacement
    # (SEED-NOTES S0 L483/L501: the printed code mixes W0 and W1 here)
    kind, x0, y0, x1, y1 = contact_set(a, b, wx * t_first, wy * t_first, nx, ny)
    out[TOI_KIND] = kind
    out[TOI_P0] = x0 + vax * t_first
    out[TOI_P0 + 1] = y0 + vay * t_first
    if kind == SET_SEGMENT:
        out[TOI_P1] = x1 + vax * t_first
        out[TOI_P1 + 1] = y1 + vay * t_first


@njit(cache=True, nogil=True)
def contact_set(a, b, sx, sy, nx, ny):
    """Contact set of A and B + s that touch across the line with unit normal n (A -> B) (S0 §7:
    the extreme feature of A along +n and of B along -n, intersected on the contact line).
    Vertices within the touching tolerance of the extreme projection belong to the feature, so
    parallel edges give an edge-edge segment. Returns (kind, x0, y0, x1, y1) (x1, y1 NaN for a
    point)."""
    scale = coord_scale(a, 0.0)
    scale = coord_scale(b, scale)
    scale += abs(sx) + abs(sy)
    tol = _ABS + _REL * scale
    tx = -ny  # tangent of the contact line
    ty = nx
    max_a = -np.inf
    for i in range(a.shape[0]):
        h = nx * a[i, 0] + ny * a[i, 1]
        if h > max_a:
            max_a = h
    min_b = np.inf
    for i in range(b.shape[0]):
        h = nx * (b[i, 0] + sx) + ny * (b[i, 1] + sy)
        if h < min_b:
            min_b = h
    a_lo = np.inf
    a_hi = -np.inf
    for i in range(a.shape[0]):
        if nx * a[i, 0] + ny * a[i, 1] >= max_a - tol:
            u = tx * a[i, 0] + ty * a[i, 1]
            a_lo = min(a_lo, u)
            a_hi = max(a_hi, u)
    b_lo = np.inf
    b_hi = -np.inf
    for i in range(b.shape[0]):
        if nx * (b[i, 0] + sx) + ny * (b[i, 1] + sy) <= min_b + tol:
            u = tx * (b[i, 0] + sx) + ty * (b[i, 1] + sy)
            b_lo = min(b_lo, u)
            b_hi = max(b_hi, u)
    lo = max(a_lo, b_lo)
    hi = min(a_hi, b_hi)
    h = 0.5 * (max_a + min_b)
    if hi - lo > tol:
        return SET_SEGMENT, h * nx + lo * tx, h * ny + lo * ty, h * nx + hi * tx, h * ny + hi * ty
    # vertex-vertex / vertex-edge (or intervals that miss by rounding): one point
    u = 0.5 * (lo + hi)
    return SET_POINT, h * nx + u * tx, h * ny + u * ty, np.nan, np.nan


@njit(cache=True, nogil=True)
def least_overlap(a, b):
    """For intersecting A, B: the smallest translation depth over the candidate axes and its unit
    direction (A -> B: moving B along it by the depth separates them). Depth 0 = touching."""
    best, best_x, best_y = np.inf, 1.0, 0.0
    for k in range(pair_axis_count(a, b)):
        dx, dy, min_a, max_a, min_b, max_b = projected_axis(a, b, k)
        if dx == 0.0 and dy == 0.0:
            continue
        best, best_x, best_y = least_push(best, best_x, best_y, dx, dy, min_a, max_a, min_b, max_b)
    return best, best_x, best_y


@njit(cache=True, nogil=True)
def _collapse(pts, count, tol, out):
    """Classify a clipped point list: drop consecutive duplicates (within tol); a polygon needs
    width (area / diameter) above tol, else the two farthest points (segment) or one point.
    Writes the result into ``out`` and returns (kind, count)."""
    tol = _COLLAPSE * tol
    m = 0
    for i in range(count):
        if m > 0:
            if abs(pts[i, 0] - out[m - 1, 0]) <= tol and abs(pts[i, 1] - out[m - 1, 1]) <= tol:
                continue
        out[m, 0] = pts[i, 0]
        out[m, 1] = pts[i, 1]
        m += 1
    while m > 1 and abs(out[m - 1, 0] - out[0, 0]) <= tol and abs(out[m - 1, 1] - out[0, 1]) <= tol:
        m -= 1
    if m == 0:
        return SET_EMPTY, 0
    best = -1.0
    i_far = 0
    j_far = 0
    for i in range(m):
        for j in range(i + 1, m):
            d = (out[i, 0] - out[j, 0]) ** 2 + (out[i, 1] - out[j, 1]) ** 2
            if d > best:
                best = d
                i_far = i
                j_far = j
    diameter = np.sqrt(max(best, 0.0))
    if m >= 3:
        area2 = 0.0
        for i in range(m):
            i1 = i + 1 if i + 1 < m else 0
            area2 += (out[i, 0] - out[0, 0]) * (out[i1, 1] - out[0, 1]) - (out[i1, 0] - out[0, 0]) * (
                out[i, 1] - out[0, 1]
            )
        if 0.5 * area2 > tol * diameter:
            return SET_POLYGON, m
    if diameter > tol:
        x0 = out[i_far, 0]
        y0 = out[i_far, 1]
        x1 = out[j_far, 0]
        y1 = out[j_far, 1]
        out[0, 0] = x0
        out[0, 1] = y0
        out[1, 0] = x1
        out[1, 1] = y1
        return SET_SEGMENT, 2
    return SET_POINT, 1


@njit(cache=True, nogil=True)
def _clip_segment(ax, ay, bx, by, poly, tol, out):
    """Segment [a, b] clipped by the closed half-planes of a CCW polygon (Cyrus-Beck, Ericson
    5.3.8 in 2D); shorter than tol -> a point. Returns (kind, count) with points in ``out``."""
    lo = 0.0
    hi = 1.0
    k = poly.shape[0]
    ex = bx - ax
    ey = by - ay
    for j in range(k):
        dx, dy, px, py = axis(poly, j)
        length = np.sqrt(dx * dx + dy * dy)
        if length == 0.0:
            continue
        s0 = (dx * (ax - px) + dy * (ay - py)) / length  # signed distance, inside <= 0
        ds = (dx * ex + dy * ey) / length
        if ds == 0.0:
            if s0 > 0.0:
                return SET_EMPTY, 0
        elif ds > 0.0:
            hi = min(hi, -s0 / ds)
        else:
            lo = max(lo, -s0 / ds)
        if lo > hi:
            return SET_EMPTY, 0
    out[0, 0] = ax + lo * ex
    out[0, 1] = ay + lo * ey
    out[1, 0] = ax + hi * ex
    out[1, 1] = ay + hi * ey
    if (hi - lo) * np.sqrt(ex * ex + ey * ey) > tol:
        return SET_SEGMENT, 2
    out[0, 0] = ax + 0.5 * (lo + hi) * ex
    out[0, 1] = ay + 0.5 * (lo + hi) * ey
    return SET_POINT, 1


@njit(cache=True, nogil=True)
def intersection_pair(a, b, out):
    """Intersection set of two closed convex sets (already known or not to intersect).

    Touching sets (least overlap depth over the axes <= the touching tolerance): the contact set
    across that axis (S0 §7 features: a point or a segment), so touching never depends on how a
    clipper rounds. Overlapping sets: Sutherland-Hodgman clipping of B by A's closed edge
    half-planes (Ericson 8.3.4; output stays CCW), or Cyrus-Beck for a segment; results thinner
    than a few tolerances collapse to a segment / point. Returns (kind, count); ``out``
    (>= ka + kb rows, 2) receives the points.
    """
    scale = coord_scale(a, 0.0)
    scale = coord_scale(b, scale)
    tol = _ABS + _REL * scale
    ka = a.shape[0]
    kb = b.shape[0]
    if not intersects_pair(a, b):
        return SET_EMPTY, 0
    if ka == 1 or kb == 1:
        p = a if ka == 1 else b
        out[0, 0] = p[0, 0]
        out[0, 1] = p[0, 1]
        return SET_POINT, 1
    depth, nx, ny = least_overlap(a, b)
    if depth <= tol:
        kind, x0, y0, x1, y1 = contact_set(a, b, 0.0, 0.0, nx, ny)
        out[0, 0] = x0
        out[0, 1] = y0
        if kind == SET_SEGMENT:
            out[1, 0] = x1
            out[1, 1] = y1
            return SET_SEGMENT, 2
        return SET_POINT, 1
    if ka == 2 and kb >= 3:
        return _clip_segment(a[0, 0], a[0, 1], a[1, 0], a[1, 1], b, tol, out)
    if kb == 2 and ka >= 3:
        return _clip_segment(b[0, 0], b[0, 1], b[1, 0], b[1, 1], a, tol, out)
    if ka == 2 and kb == 2:
        return _segment_segment(a, b, tol, out)
    m_max = ka + kb
    buf0 = np.empty((m_max, 2))
    buf1 = np.empty((m_max, 2))
    m = kb
    for i in range(kb):
        buf0[i, 0] = b[i, 0]
        buf0[i, 1] = b[i, 1]
    for j in range(ka):
        dx, dy, px, py = axis(a, j)
        length = np.sqrt(dx * dx + dy * dy)
        if length == 0.0 or m == 0:
            continue
        n_out = 0
        for i in range(m):
            i1 = i + 1 if i + 1 < m else 0
            s0 = (dx * (buf0[i, 0] - px) + dy * (buf0[i, 1] - py)) / length
            s1 = (dx * (buf0[i1, 0] - px) + dy * (buf0[i1, 1] - py)) / length
            if s0 <= 0.0 and n_out < m_max:
                buf1[n_out, 0] = buf0[i, 0]
                buf1[n_out, 1] = buf0[i, 1]
                n_out += 1
            if (s0 <= 0.0) != (s1 <= 0.0) and n_out < m_max:
                f = s0 / (s0 - s1)
                buf1[n_out, 0] = buf0[i, 0] + f * (buf0[i1, 0] - buf0[i, 0])
                buf1[n_out, 1] = buf0[i, 1] + f * (buf0[i1, 1] - buf0[i, 1])
                n_out += 1
        m = n_out
        for i in range(m):
            buf0[i, 0] = buf1[i, 0]
            buf0[i, 1] = buf1[i, 1]
    return _collapse(buf0, m, tol, out)


@njit(cache=True, nogil=True)
def _segment_segment(a, b, tol, out):
    """Two intersecting segments: the crossing point, or the overlap of collinear ones."""
    ax = a[0, 0]
    ay = a[0, 1]
    ex = a[1, 0] - ax
    ey = a[1, 1] - ay
    fx = b[1, 0] - b[0, 0]
    fy = b[1, 1] - b[0, 1]
    la = ex * ex + ey * ey
    lb = fx * fx + fy * fy
    if la == 0.0 or lb == 0.0:  # a zero-length segment is a point: it is the intersection
        p = a if la == 0.0 else b
        out[0, 0] = p[0, 0]
        out[0, 1] = p[0, 1]
        return SET_POINT, 1
    cross = ex * fy - ey * fx
    gx = b[0, 0] - ax
    gy = b[0, 1] - ay
    if abs(cross) <= _REL * np.sqrt(la * lb):
        # parallel and intersecting -> collinear: overlap of the parameter ranges along a
        u0 = (gx * ex + gy * ey) / la
        u1 = ((b[1, 0] - ax) * ex + (b[1, 1] - ay) * ey) / la
        lo = max(0.0, min(u0, u1))
        hi = min(1.0, max(u0, u1))
        if lo > hi:
            lo = hi = 0.5 * (lo + hi)
        out[0, 0] = ax + lo * ex
        out[0, 1] = ay + lo * ey
        out[1, 0] = ax + hi * ex
        out[1, 1] = ay + hi * ey
        if (hi - lo) * np.sqrt(la) > tol:
            return SET_SEGMENT, 2
        out[0, 0] = ax + 0.5 * (lo + hi) * ex
        out[0, 1] = ay + 0.5 * (lo + hi) * ey
        return SET_POINT, 1
    u = (gx * fy - gy * fx) / cross
    u = min(1.0, max(0.0, u))
    out[0, 0] = ax + u * ex
    out[0, 1] = ay + u * ey
    return SET_POINT, 1


# ---------------------------------------------------------------------------------------------
# Batch drivers: A is (na, ka, 2), B is (nb, kb, 2) with na, nb in {1, n}; a side with one
# polygon is used for every pair. Velocities (nv, 2), t_max (nt,) broadcast the same way. Each
# driver runs pairs [lo, hi) (its last two arguments; touche._parallel.run cuts a batch in chunks).


@njit(cache=True, nogil=True)
def intersects_many(a, b, out, lo, hi):
    na = a.shape[0]
    nb = b.shape[0]
    for i in range(lo, hi):
        out[i] = intersects_pair(a[i % na], b[i % nb])


@njit(cache=True, nogil=True)
def toi_many(a, b, va, vb, t_max, out, lo, hi):
    na = a.shape[0]
    nb = b.shape[0]
    nva = va.shape[0]
    nvb = vb.shape[0]
    nt = t_max.shape[0]
    for i in range(lo, hi):
        ia = i % nva
        ib = i % nvb
        toi_pair(
            a[i % na],
            b[i % nb],
            va[ia, 0],
            va[ia, 1],
            vb[ib, 0],
            vb[ib, 1],
            t_max[i % nt],
            out[i],
        )


@njit(cache=True, nogil=True)
def intersection_many(a, b, points, kind, count, lo, hi):
    """points (n, ka + kb, 2) preset to NaN by the caller; kind, count (n,) int64."""
    na = a.shape[0]
    nb = b.shape[0]
    for i in range(lo, hi):
        k, m = intersection_pair(a[i % na], b[i % nb], points[i])
        kind[i] = k
        count[i] = m
        for r in range(m, points.shape[1]):
            points[i, r, 0] = np.nan
            points[i, r, 1] = np.nan


# ---------------------------------------------------------------------------------------------
# Input validation (the public layer raises on the first nonzero code).

POLY_OK = 0
POLY_REPEATED_VERTEX = 1
POLY_ZERO_AREA = 2
POLY_NOT_CONVEX = 3
POLY_NOT_FINITE = 4
# A turn between consecutive edges counts as straight (collinear vertices) or convex when
# cross >= -_TURN * |e0| |e1| (sine of the turning angle); rounding of exactly convex input
# (e.g. a rotated regular polygon) stays far inside this.
_TURN = RELATIVE
# Zero-area test: |2 * area| <= _FLAT * extent^2 means all vertices are collinear.
_FLAT = RELATIVE


@njit(cache=True, nogil=True)
def check_polygon(p):
    """Validate one (k, 2) set; reverse a clockwise polygon (k >= 3) in place. Returns a code."""
    k = p.shape[0]
    for i in range(k):
        if not (np.isfinite(p[i, 0]) and np.isfinite(p[i, 1])):
            return POLY_NOT_FINITE
    if k < 3:
        return POLY_OK
    area2 = 0.0
    lo_x = hi_x = p[0, 0]
    lo_y = hi_y = p[0, 1]
    for i in range(k):
        i1 = i + 1 if i + 1 < k else 0
        if p[i, 0] == p[i1, 0] and p[i, 1] == p[i1, 1]:
            return POLY_REPEATED_VERTEX
        area2 += (p[i, 0] - p[0, 0]) * (p[i1, 1] - p[0, 1]) - (p[i1, 0] - p[0, 0]) * (p[i, 1] - p[0, 1])
        lo_x = min(lo_x, p[i, 0])
        hi_x = max(hi_x, p[i, 0])
        lo_y = min(lo_y, p[i, 1])
        hi_y = max(hi_y, p[i, 1])
    extent = max(hi_x - lo_x, hi_y - lo_y)
    if abs(area2) <= _FLAT * extent * extent:
        return POLY_ZERO_AREA
    sign = 1.0 if area2 > 0.0 else -1.0
    # With every turn in [0, pi), the edge direction crosses "pointing along +x" (y changes from
    # < 0 to >= 0) once per revolution: a simple convex polygon turns once, a star more often.
    revolutions = 0
    for i in range(k):
        i0 = i - 1 if i > 0 else k - 1
        i1 = i + 1 if i + 1 < k else 0
        ax = p[i, 0] - p[i0, 0]
        ay = p[i, 1] - p[i0, 1]
        bx = p[i1, 0] - p[i, 0]
        by = p[i1, 1] - p[i, 1]
        cross = sign * (ax * by - ay * bx)
        dot = ax * bx + ay * by
        tol_sq = _TURN * _TURN * (ax * ax + ay * ay) * (bx * bx + by * by)
        if cross < 0.0 and cross * cross > tol_sq:
            return POLY_NOT_CONVEX  # reflex turn
        if dot < 0.0 and cross * cross <= tol_sq:
            return POLY_NOT_CONVEX  # a spike: the boundary turns straight back
        if sign * ay < 0.0 and sign * by >= 0.0:
            revolutions += 1
    if revolutions > 1:
        return POLY_NOT_CONVEX
    if sign < 0.0:  # clockwise: reverse, keeping vertex 0 first
        for i in range(1, (k + 1) // 2):
            j = k - i
            x = p[i, 0]
            y = p[i, 1]
            p[i, 0] = p[j, 0]
            p[i, 1] = p[j, 1]
            p[j, 0] = x
            p[j, 1] = y
    return POLY_OK


@njit(cache=True, nogil=True)
def check_polygons(polys, codes, lo, hi):
    for i in range(lo, hi):
        codes[i] = check_polygon(polys[i])
