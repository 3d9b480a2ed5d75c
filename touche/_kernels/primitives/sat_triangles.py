"""Separating-axis fast paths for two triangles (S1 section 4; S0 for the coplanar axes):
overlap, time of impact under constant velocities over [0, t_max], and the intersection set
(S1 4.3 contact sets; S0 for the coplanar clip). Conventions and the motion form: sat_fast.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_points_triangle_triangle
from touche._kernels.primitives.overlap import cross_tuple as _cross
from touche._kernels.primitives.overlap import triangle_edge as _edge
from touche._kernels.primitives.overlap import triangle_is_proper as _tri_is_proper
from touche._kernels.primitives.overlap import triangle_projection as _proj
from touche._kernels.primitives.overlap import triangles_overlap
from touche._kernels.primitives.overlap import triangles_separated_on as _separates
from touche._kernels.base.vec import dot as _dot
from touche._kernels.primitives.sat_contact import MISS_T, load_triangle, toi_axis_update, toi_verdict
from touche._kernels.primitives.sat_contact import triangle_triangle_contact_point, triangle_vertex, unit_tuple


_INF = np.inf
_NAN = np.nan

# Triangles whose planes satisfy |nA x nB|^2 <= COPLANAR_SQ |nA|^2 |nB|^2 (sin^2 of the angle
# between the planes) are intersected as coplanar polygons: the plane-plane line of two
# overlapping, (nearly) parallel triangles is meaningless. Same threshold as edge parallelism.
COPLANAR_SQ = tolerance.PARALLEL_SQ

# Points of an intersection polygon closer than MERGE * (coordinate scale) are merged (clipping
# produces duplicates where a vertex lies on a clip line); a polygon whose doubled area is below
# MERGE * scale^2 is reported as the segment between its two farthest points.
MERGE = 1e-12


MAX_SET_POINTS = 6  # a triangle clipped by three half-planes has at most 6 vertices


# ---------------------------------------------------------------------------------------------
# triangle - triangle (S1 section 4; S0 for the coplanar axes)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def triangle_triangle_overlap(TA, i, TB, j):
    """Stationary triangle-triangle (S1 4.1), closed: overlap.triangles_overlap on the two
    triangles relative to A's first vertex."""
    ox = TA[i, 0, 0]
    oy = TA[i, 0, 1]
    oz = TA[i, 0, 2]
    return triangles_overlap(load_triangle(TA, i, ox, oy, oz), load_triangle(TB, j, ox, oy, oz))


@njit(cache=True, nogil=True)
def _tt_axis(L, A, B, v, tf, tl, n0, n1, n2):
    lo0, hi0 = _proj(L, A)
    lo1, hi1 = _proj(L, B)
    return toi_axis_update(lo0, hi0, lo1, hi1, v, L[0], L[1], L[2], tf, tl, n0, n1, n2)


@njit(cache=True, nogil=True)
def _tri_tri_toi_general(A, B, w, t_max):
    """Degenerate triangles: with the direction set D = {edges of A and B, W, centroid offset}
    the axes D, D_i x D_j and (D_i x D_j) x D_k contain every facet normal of K (and of its
    lower-dimensional cases: a flat K needs its normal and in-plane normals, a segment K its two
    perpendiculars). ~260 axes: only used when a triangle has zero area."""
    D = np.empty((8, 3))
    for i in range(3):
        e = _edge(A, i)
        f = _edge(B, i)
        for m in range(3):
            D[i, m] = e[m]
            D[3 + i, m] = f[m]
    for m in range(3):
        D[6, m] = w[m]
        D[7, m] = (B[m] + B[3 + m] + B[6 + m] - A[m] - A[3 + m] - A[6 + m]) / 3.0
    tf = 0.0
    tl = t_max
    n0 = 0.0
    n1 = 0.0
    n2 = 0.0
    for i in range(8):
        di = (D[i, 0], D[i, 1], D[i, 2])
        tf, tl, n0, n1, n2 = _tt_axis(di, A, B, _dot(di, w), tf, tl, n0, n1, n2)
        if tf > tl:
            return MISS_T
        for j in range(i + 1, 8):
            dj = (D[j, 0], D[j, 1], D[j, 2])
            c = _cross(di, dj)
            tf, tl, n0, n1, n2 = _tt_axis(c, A, B, _dot(c, w), tf, tl, n0, n1, n2)
            if tf > tl:
                return MISS_T
            for k in range(8):
                L = _cross(c, (D[k, 0], D[k, 1], D[k, 2]))
                tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
                if tf > tl:
                    return MISS_T
    return toi_verdict(tf, n0, n1, n2)


@njit(cache=True, nogil=True)
def _tri_tri_toi_core(TA, i, va, TB, j, vb, t_max):
    """S1 4.2 in the TFirst <= TLast form (object 0 = A, object 1 = B moving at w = vb - va).
    Axes: W x E_i, W x F_j, N_A x W (speed 0, first: cheap rejections), N_A, N_B, E_i x F_j,
    N_A x E_i, N_B x F_j. For proper triangles these are the facet normals of K (edges E, F, W),
    plus the in-plane ones for parallel planes moving within their plane (K flat)."""
    ox = TA[i, 0, 0]
    oy = TA[i, 0, 1]
    oz = TA[i, 0, 2]
    A = load_triangle(TA, i, ox, oy, oz)
    B = load_triangle(TB, j, ox, oy, oz)
    w = (vb[0] - va[0], vb[1] - va[1], vb[2] - va[2])
    if not (_tri_is_proper(A) and _tri_is_proper(B)):
        return _tri_tri_toi_general(A, B, w, t_max)
    nA = _cross(_edge(A, 0), (A[6] - A[0], A[7] - A[1], A[8] - A[2]))
    nB = _cross(_edge(B, 0), (B[6] - B[0], B[7] - B[1], B[8] - B[2]))
    tf = 0.0
    tl = t_max
    n0 = 0.0
    n1 = 0.0
    n2 = 0.0
    for k in range(7):
        if k < 3:
            L = _cross(w, _edge(A, k))
        elif k < 6:
            L = _cross(w, _edge(B, k - 3))
        else:
            L = _cross(nA, w)
        if _separates(L, A, B):
            return MISS_T
    tf, tl, n0, n1, n2 = _tt_axis(nA, A, B, _dot(nA, w), tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    tf, tl, n0, n1, n2 = _tt_axis(nB, A, B, _dot(nB, w), tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    for i in range(3):
        ei = _edge(A, i)
        for j in range(3):
            L = _cross(ei, _edge(B, j))
            tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
            if tf > tl:
                return MISS_T
    for i in range(3):
        L = _cross(nA, _edge(A, i))
        tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
        if tf > tl:
            return MISS_T
        L = _cross(nB, _edge(B, i))
        tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
        if tf > tl:
            return MISS_T
    return toi_verdict(tf, n0, n1, n2)


@njit(cache=True, nogil=True)
def triangle_triangle_time_of_impact(TA, i, va, TB, j, vb, t_max):
    """(status, time, px, py, pz, nx, ny, nz) as obb_obb_time_of_impact; normal A -> B."""
    status, tf, l0, l1, l2 = _tri_tri_toi_core(TA, i, va, TB, j, vb, t_max)
    if status == kinds.MISS:
        return status, _INF, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN
    px, py, pz = triangle_triangle_contact_point(TA[i], va, TB[j], vb, tf)
    if status == kinds.ALREADY_TOUCHING:
        return status, 0.0, px, py, pz, _NAN, _NAN, _NAN
    nx, ny, nz = unit_tuple(l0, l1, l2)
    return status, tf, px, py, pz, nx, ny, nz


# ---------------------------------------------------------------------------------------------
# triangle - triangle intersection set (S1 4.3 contact sets; S0 for the coplanar clip)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _plane_cut(P, n, q, D):
    """The part of triangle P on the plane n.(x - q) = 0, as its extreme points along D:
    (found, s_lo, x_lo, s_hi, x_hi) with x_* 3-tuples. Vertices on the plane and strict edge
    crossings are the candidates (the cut of a triangle by a plane is their convex hull)."""
    d0 = n[0] * (P[0] - q[0]) + n[1] * (P[1] - q[1]) + n[2] * (P[2] - q[2])
    d1 = n[0] * (P[3] - q[0]) + n[1] * (P[4] - q[1]) + n[2] * (P[5] - q[2])
    d2 = n[0] * (P[6] - q[0]) + n[1] * (P[7] - q[1]) + n[2] * (P[8] - q[2])
    found = False
    s_lo = _INF
    s_hi = -_INF
    x_lo = (0.0, 0.0, 0.0)
    x_hi = (0.0, 0.0, 0.0)
    for k in range(3):
        if k == 0:
            da, db = d0, d1
        elif k == 1:
            da, db = d1, d2
        else:
            da, db = d2, d0
        va = triangle_vertex(P, k)
        vb = triangle_vertex(P, (k + 1) % 3)
        for c in range(2):
            if c == 0:
                if da != 0.0:
                    continue
                x = va
            else:
                if not ((da < 0.0 and db > 0.0) or (da > 0.0 and db < 0.0)):
                    continue
                r = da / (da - db)
                x = (va[0] + r * (vb[0] - va[0]), va[1] + r * (vb[1] - va[1]), va[2] + r * (vb[2] - va[2]))
            s = _dot(D, x)
            found = True
            if s < s_lo:
                s_lo = s
                x_lo = x
            if s > s_hi:
                s_hi = s
                x_hi = x
    return found, s_lo, x_lo, s_hi, x_hi


@njit(cache=True, nogil=True)
def _scale(A, B):
    s = 0.0
    for k in range(9):
        s = max(s, max(abs(A[k]), abs(B[k])))
    return s


@njit(cache=True, nogil=True)
def _put(out, k, x, o):
    out[k, 0] = x[0] + o[0]
    out[k, 1] = x[1] + o[1]
    out[k, 2] = x[2] + o[2]


@njit(cache=True, nogil=True)
def _finish_points(buf, m, out, o, tol):
    """Merge near-duplicates of the closed polygon buf[:m], decide its kind, write it to out
    (world coordinates). Returns (kind, count)."""
    tol2 = tol * tol
    k = 0
    for i in range(m):
        dup = False
        for j in range(k):
            d0 = buf[i, 0] - out[j, 0]
            d1 = buf[i, 1] - out[j, 1]
            d2 = buf[i, 2] - out[j, 2]
            if d0 * d0 + d1 * d1 + d2 * d2 <= tol2:
                dup = True
                break
        if not dup and k < MAX_SET_POINTS:
            out[k, 0] = buf[i, 0]
            out[k, 1] = buf[i, 1]
            out[k, 2] = buf[i, 2]
            k += 1
    if k >= 3:
        # doubled area of the (convex) polygon; a sliver is a segment between its farthest pair
        sx = sy = sz = 0.0
        for i in range(1, k - 1):
            c = _cross((out[i, 0] - out[0, 0], out[i, 1] - out[0, 1], out[i, 2] - out[0, 2]),
                       (out[i + 1, 0] - out[0, 0], out[i + 1, 1] - out[0, 1], out[i + 1, 2] - out[0, 2]))
            sx += c[0]
            sy += c[1]
            sz += c[2]
        if np.sqrt(sx * sx + sy * sy + sz * sz) <= tol * tol / MERGE:
            bi = 0
            bj = 1
            best = -1.0
            for i in range(k):
                for j in range(i + 1, k):
                    d0 = out[i, 0] - out[j, 0]
                    d1 = out[i, 1] - out[j, 1]
                    d2 = out[i, 2] - out[j, 2]
                    d = d0 * d0 + d1 * d1 + d2 * d2
                    if d > best:
                        best = d
                        bi = i
                        bj = j
            p = (out[bi, 0], out[bi, 1], out[bi, 2])
            q = (out[bj, 0], out[bj, 1], out[bj, 2])
            out[0, 0], out[0, 1], out[0, 2] = p
            out[1, 0], out[1, 1], out[1, 2] = q
            k = 2
    for i in range(k):
        out[i, 0] += o[0]
        out[i, 1] += o[1]
        out[i, 2] += o[2]
    for i in range(k, out.shape[0]):
        out[i, 0] = _NAN
        out[i, 1] = _NAN
        out[i, 2] = _NAN
    if k == 0:
        return kinds.SET_EMPTY, 0
    if k == 1:
        return kinds.SET_POINT, 1
    if k == 2:
        return kinds.SET_SEGMENT, 2
    return kinds.SET_POLYGON, k


@njit(cache=True, nogil=True)
def _clip_polygon(buf, m, tmp, B, nRef):
    """Sutherland-Hodgman: clip the polygon buf[:m] by the three in-plane half-planes of the
    proper triangle B (normals nRef x f_j, oriented towards B's opposite vertex). Returns the
    new count (the result is in buf)."""
    for j in range(3):
        f = _edge(B, j)
        mj = _cross(nRef, f)
        bj = triangle_vertex(B, j)
        opp = triangle_vertex(B, (j + 2) % 3)
        sgn = 1.0 if _dot(mj, (opp[0] - bj[0], opp[1] - bj[1], opp[2] - bj[2])) >= 0.0 else -1.0
        k = 0
        for i in range(m):
            i2 = (i + 1) % m
            p = (buf[i, 0], buf[i, 1], buf[i, 2])
            q = (buf[i2, 0], buf[i2, 1], buf[i2, 2])
            dp = sgn * _dot(mj, (p[0] - bj[0], p[1] - bj[1], p[2] - bj[2]))
            dq = sgn * _dot(mj, (q[0] - bj[0], q[1] - bj[1], q[2] - bj[2]))
            if dp >= 0.0:
                tmp[k, 0], tmp[k, 1], tmp[k, 2] = p
                k += 1
            if (dp > 0.0 and dq < 0.0) or (dp < 0.0 and dq > 0.0):
                r = dp / (dp - dq)
                tmp[k, 0] = p[0] + r * (q[0] - p[0])
                tmp[k, 1] = p[1] + r * (q[1] - p[1])
                tmp[k, 2] = p[2] + r * (q[2] - p[2])
                k += 1
        for i in range(k):
            buf[i, 0] = tmp[i, 0]
            buf[i, 1] = tmp[i, 1]
            buf[i, 2] = tmp[i, 2]
        m = k
        if m == 0:
            break
    return m


@njit(cache=True, nogil=True)
def _longest_edge(P):
    best = -1.0
    a = triangle_vertex(P, 0)
    b = a
    for i in range(3):
        e = _edge(P, i)
        d = _dot(e, e)
        if d > best:
            best = d
            a = triangle_vertex(P, i)
            b = triangle_vertex(P, (i + 1) % 3)
    return a, b


@njit(cache=True, nogil=True)
def triangle_triangle_intersection(TA, i, TB, j, out):
    """Intersection set of triangles TA[i] and TB[j] (closed; S1 4.3 / S0): writes its points to out (6, 3)
    (world coordinates, unused rows NaN) and returns (kind, count), kind a kinds.SET_* code.
    - not overlapping (triangle_triangle_overlap): SET_EMPTY;
    - proper triangles in non-parallel planes: the overlap of the two plane cuts along the line
      n_A x n_B, a segment (or a point when it shrinks to one);
    - parallel planes (sin^2 <= COPLANAR_SQ): A clipped by B's in-plane half-planes (a point, a
      segment or a convex polygon of up to 6 vertices);
    - a zero-area triangle against a proper one: its segment clipped in the plane, or its
      crossing point; two zero-area triangles: the common point (a collinear overlap of two
      degenerate triangles is reported as one point: not resolved further).
    """
    for r in range(out.shape[0]):
        out[r, 0] = _NAN
        out[r, 1] = _NAN
        out[r, 2] = _NAN
    if not triangle_triangle_overlap(TA, i, TB, j):
        return kinds.SET_EMPTY, 0
    o = (TA[i, 0, 0], TA[i, 0, 1], TA[i, 0, 2])
    A = load_triangle(TA, i, o[0], o[1], o[2])
    B = load_triangle(TB, j, o[0], o[1], o[2])
    tol = MERGE * max(_scale(A, B), 1e-300)
    buf = np.empty((9, 3))
    tmp = np.empty((9, 3))
    proper_a = _tri_is_proper(A)
    proper_b = _tri_is_proper(B)
    if proper_a and proper_b:
        nA = _cross(_edge(A, 0), (A[6] - A[0], A[7] - A[1], A[8] - A[2]))
        nB = _cross(_edge(B, 0), (B[6] - B[0], B[7] - B[1], B[8] - B[2]))
        D = _cross(nA, nB)
        if _dot(D, D) <= COPLANAR_SQ * _dot(nA, nA) * _dot(nB, nB):
            for k in range(3):
                buf[k, 0], buf[k, 1], buf[k, 2] = triangle_vertex(A, k)
            m = _clip_polygon(buf, 3, tmp, B, nA)
            if m > 0:
                return _finish_points(buf, m, out, o, tol)
        else:
            fa, sa_lo, xa_lo, sa_hi, xa_hi = _plane_cut(A, nB, triangle_vertex(B, 0), D)
            fb, sb_lo, xb_lo, sb_hi, xb_hi = _plane_cut(B, nA, triangle_vertex(A, 0), D)
            if fa and fb:
                x_lo = xa_lo if sa_lo >= sb_lo else xb_lo
                x_hi = xa_hi if sa_hi <= sb_hi else xb_hi
                if max(sa_lo, sb_lo) > min(sa_hi, sb_hi):
                    # rounding only (the SAT said they touch): the contact is a point
                    x_lo = (0.5 * (x_lo[0] + x_hi[0]), 0.5 * (x_lo[1] + x_hi[1]), 0.5 * (x_lo[2] + x_hi[2]))
                    x_hi = x_lo
                buf[0, 0], buf[0, 1], buf[0, 2] = x_lo
                buf[1, 0], buf[1, 1], buf[1, 2] = x_hi
                return _finish_points(buf, 2, out, o, tol)
    elif proper_a or proper_b:
        X = A if proper_a else B
        S = B if proper_a else A
        p, q = _longest_edge(S)
        nX = _cross(_edge(X, 0), (X[6] - X[0], X[7] - X[1], X[8] - X[2]))
        x0 = triangle_vertex(X, 0)
        dp = _dot(nX, (p[0] - x0[0], p[1] - x0[1], p[2] - x0[2]))
        dq = _dot(nX, (q[0] - x0[0], q[1] - x0[1], q[2] - x0[2]))
        plane_tol = tol * np.sqrt(_dot(nX, nX))
        if abs(dp) <= plane_tol and abs(dq) <= plane_tol:
            buf[0, 0], buf[0, 1], buf[0, 2] = p
            buf[1, 0], buf[1, 1], buf[1, 2] = q
            m = _clip_polygon(buf, 2, tmp, X, nX)
            if m > 0:
                return _finish_points(buf, m, out, o, tol)
        elif (dp <= 0.0 and dq >= 0.0) or (dp >= 0.0 and dq <= 0.0):
            r = 0.0 if dp == dq else dp / (dp - dq)
            buf[0, 0] = p[0] + r * (q[0] - p[0])
            buf[0, 1] = p[1] + r * (q[1] - p[1])
            buf[0, 2] = p[2] + r * (q[2] - p[2])
            return _finish_points(buf, 1, out, o, tol)
    # two zero-area triangles, or a rounding corner case above: the closest (common) point
    c1, c2 = closest_points_triangle_triangle(TA[i, 0], TA[i, 1], TA[i, 2], TB[j, 0], TB[j, 1], TB[j, 2])
    for m in range(3):
        buf[0, m] = 0.5 * (c1[m] + c2[m]) - o[m]
    return _finish_points(buf, 1, out, o, tol)
