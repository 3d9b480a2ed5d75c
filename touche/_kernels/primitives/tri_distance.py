"""Allocation-free triangle-triangle distance with closest points, for the inner loops of the
BVH traversals (one call per leaf pair: heap arrays there cost more than the arithmetic).

Same method and degenerate rules as closest.closest_points_triangle_triangle (Ericson 5.1.11),
written on scalars / tuples: the best of the 6 vertex-triangle and 9 edge-edge pairs, plus a
transversal edge crossing, which makes the distance 0. The enumeration is complete for disjoint
triangles; a crossing gives the common point twice. A zero-area triangle (sin^2 of its angle at
the first vertex <= DEG_EPS) takes no vertex-triangle or crossing candidates: its edges'
segment-segment distances cover it.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.primitives.closest import DEG_EPS  # noqa: E402


@njit(cache=True, nogil=True)
def segment_segment(p0, p1, p2, q0, q1, q2, r0, r1, r2, s0, s1, s2):
    """Closest points of segments pq and rs, scalars in: (d2, x (3-tuple) on pq, y on rs).

    Ericson 5.1.9: t is recomputed from the clamped s, and s again from a clamped t, which makes
    the pair the true closest one (erratum S3 L174: clamping both independently is wrong).
    Parallel segments (denominator 0) take s = 0 and let t be clamped. A segment of squared
    length <= 1e-300 acts as a point: dividing by a subnormal length would lose all precision."""
    d10 = q0 - p0
    d11 = q1 - p1
    d12 = q2 - p2
    d20 = s0 - r0
    d21 = s1 - r1
    d22 = s2 - r2
    w0 = p0 - r0
    w1 = p1 - r1
    w2 = p2 - r2
    a = d10 * d10 + d11 * d11 + d12 * d12
    e = d20 * d20 + d21 * d21 + d22 * d22
    f = d20 * w0 + d21 * w1 + d22 * w2
    if a <= 1e-300 and e <= 1e-300:
        sp = 0.0
        t = 0.0
    elif a <= 1e-300:
        sp = 0.0
        t = min(max(f / e, 0.0), 1.0)
    else:
        c = d10 * w0 + d11 * w1 + d12 * w2
        if e <= 1e-300:
            t = 0.0
            sp = min(max(-c / a, 0.0), 1.0)
        else:
            b = d10 * d20 + d11 * d21 + d12 * d22
            denom = a * e - b * b
            sp = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 0.0 else 0.0
            t = (b * sp + f) / e
            if t < 0.0:
                t = 0.0
                sp = min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                sp = min(max((b - c) / a, 0.0), 1.0)
    x = (p0 + d10 * sp, p1 + d11 * sp, p2 + d12 * sp)
    y = (r0 + d20 * t, r1 + d21 * t, r2 + d22 * t)
    d0 = x[0] - y[0]
    d1 = x[1] - y[1]
    d2 = x[2] - y[2]
    return d0 * d0 + d1 * d1 + d2 * d2, x, y




@njit(cache=True, nogil=True, inline="always")
def edges_normal(T):
    """Edges ab, ac and the (unnormalised) normal ab x ac of the triangle T (9-tuple), as nine
    scalars."""
    ab0 = T[3] - T[0]
    ab1 = T[4] - T[1]
    ab2 = T[5] - T[2]
    ac0 = T[6] - T[0]
    ac1 = T[7] - T[1]
    ac2 = T[8] - T[2]
    return ab0, ab1, ab2, ac0, ac1, ac2, ab1 * ac2 - ab2 * ac1, ab2 * ac0 - ab0 * ac2, ab0 * ac1 - ab1 * ac0


@njit(cache=True, nogil=True)
def _proper(T):
    ab0, ab1, ab2, ac0, ac1, ac2, n0, n1, n2 = edges_normal(T)
    nn = n0 * n0 + n1 * n1 + n2 * n2
    return nn > DEG_EPS * (ab0 * ab0 + ab1 * ab1 + ab2 * ab2) * (ac0 * ac0 + ac1 * ac1 + ac2 * ac2)


@njit(cache=True, nogil=True)
def _closest_on_triangle(p0, p1, p2, T):
    """Ericson 5.1.5 on a proper triangle T (9-tuple): the closest point to p (3-tuple)."""
    a0 = T[0]
    a1 = T[1]
    a2 = T[2]
    ab0 = T[3] - a0
    ab1 = T[4] - a1
    ab2 = T[5] - a2
    ac0 = T[6] - a0
    ac1 = T[7] - a1
    ac2 = T[8] - a2
    ap0 = p0 - a0
    ap1 = p1 - a1
    ap2 = p2 - a2
    d1 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2
    d2 = ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    if d1 <= 0.0 and d2 <= 0.0:
        return (a0, a1, a2)
    bp0 = p0 - T[3]
    bp1 = p1 - T[4]
    bp2 = p2 - T[5]
    d3 = ab0 * bp0 + ab1 * bp1 + ab2 * bp2
    d4 = ac0 * bp0 + ac1 * bp1 + ac2 * bp2
    if d3 >= 0.0 and d4 <= d3:
        return (T[3], T[4], T[5])
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        den = d1 - d3
        v = d1 / den if den > 0.0 else 0.0
        return (a0 + v * ab0, a1 + v * ab1, a2 + v * ab2)
    cp0 = p0 - T[6]
    cp1 = p1 - T[7]
    cp2 = p2 - T[8]
    d5 = ab0 * cp0 + ab1 * cp1 + ab2 * cp2
    d6 = ac0 * cp0 + ac1 * cp1 + ac2 * cp2
    if d6 >= 0.0 and d5 <= d6:
        return (T[6], T[7], T[8])
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        den = d2 - d6
        w = d2 / den if den > 0.0 else 0.0
        return (a0 + w * ac0, a1 + w * ac1, a2 + w * ac2)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        num = d4 - d3
        den = num + (d5 - d6)
        w = num / den if den > 0.0 else 0.0
        return (T[3] + w * (T[6] - T[3]), T[4] + w * (T[7] - T[4]), T[5] + w * (T[8] - T[5]))
    den = va + vb + vc
    v = vb / den
    w = vc / den
    return (a0 + ab0 * v + ac0 * w, a1 + ab1 * v + ac1 * w, a2 + ab2 * v + ac2 * w)


@njit(cache=True, nogil=True)
def _crossing(p0, p1, p2, q0, q1, q2, T):
    """Transversal crossing of segment pq through the proper triangle T (closest.py's rule):
    (hit, x)."""
    _, _, _, _, _, _, n0, n1, n2 = edges_normal(T)
    sp = n0 * (p0 - T[0]) + n1 * (p1 - T[1]) + n2 * (p2 - T[2])
    sq = n0 * (q0 - T[0]) + n1 * (q1 - T[1]) + n2 * (q2 - T[2])
    none = (p0, p1, p2)
    if not ((sp > 0.0 and sq < 0.0) or (sp < 0.0 and sq > 0.0)):
        return False, none
    pq0 = q0 - p0
    pq1 = q1 - p1
    pq2 = q2 - p2
    pa0 = T[0] - p0
    pa1 = T[1] - p1
    pa2 = T[2] - p2
    pb0 = T[3] - p0
    pb1 = T[4] - p1
    pb2 = T[5] - p2
    pc0 = T[6] - p0
    pc1 = T[7] - p1
    pc2 = T[8] - p2
    u = pq0 * (pb1 * pc2 - pb2 * pc1) + pq1 * (pb2 * pc0 - pb0 * pc2) + pq2 * (pb0 * pc1 - pb1 * pc0)
    v = pq0 * (pc1 * pa2 - pc2 * pa1) + pq1 * (pc2 * pa0 - pc0 * pa2) + pq2 * (pc0 * pa1 - pc1 * pa0)
    w = pq0 * (pa1 * pb2 - pa2 * pb1) + pq1 * (pa2 * pb0 - pa0 * pb2) + pq2 * (pa0 * pb1 - pa1 * pb0)
    if not ((u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0)):
        return False, none
    if u == 0.0 and v == 0.0 and w == 0.0:
        return False, none
    t = sp / (sp - sq)
    return True, (p0 + t * pq0, p1 + t * pq1, p2 + t * pq2)


@njit(cache=True, nogil=True)
def triangle_distance_sq(A, B):
    """Squared distance and closest points ``(d2, x on A, y on B)`` (3-tuples) of triangles A and
    B given as 9-tuples (vertex rows)."""
    proper_a = _proper(A)
    proper_b = _proper(B)
    if proper_b:
        for i in range(3):
            j = (i + 1) % 3
            hit, x = _crossing(A[3 * i], A[3 * i + 1], A[3 * i + 2], A[3 * j], A[3 * j + 1], A[3 * j + 2], B)
            if hit:
                return 0.0, x, x
    if proper_a:
        for i in range(3):
            j = (i + 1) % 3
            hit, x = _crossing(B[3 * i], B[3 * i + 1], B[3 * i + 2], B[3 * j], B[3 * j + 1], B[3 * j + 2], A)
            if hit:
                return 0.0, x, x
    best = np.inf
    bx = (A[0], A[1], A[2])
    by = (B[0], B[1], B[2])
    if proper_b:
        for i in range(3):
            y = _closest_on_triangle(A[3 * i], A[3 * i + 1], A[3 * i + 2], B)
            d0 = A[3 * i] - y[0]
            d1 = A[3 * i + 1] - y[1]
            d2 = A[3 * i + 2] - y[2]
            d = d0 * d0 + d1 * d1 + d2 * d2
            if d < best:
                best = d
                bx = (A[3 * i], A[3 * i + 1], A[3 * i + 2])
                by = y
    if proper_a:
        for i in range(3):
            x = _closest_on_triangle(B[3 * i], B[3 * i + 1], B[3 * i + 2], A)
            d0 = B[3 * i] - x[0]
            d1 = B[3 * i + 1] - x[1]
            d2 = B[3 * i + 2] - x[2]
            d = d0 * d0 + d1 * d1 + d2 * d2
            if d < best:
                best = d
                bx = x
                by = (B[3 * i], B[3 * i + 1], B[3 * i + 2])
    for i in range(3):
        i1 = (i + 1) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            d, x, y = segment_segment(A[3 * i], A[3 * i + 1], A[3 * i + 2], A[3 * i1], A[3 * i1 + 1], A[3 * i1 + 2],
                                      B[3 * j], B[3 * j + 1], B[3 * j + 2], B[3 * j1], B[3 * j1 + 1], B[3 * j1 + 2])
            if d < best:
                best = d
                bx = x
                by = y
    if best == 0.0:
        by = bx
    return best, bx, by


@njit(cache=True, nogil=True)
def segment_triangle_distance_sq(p0, p1, p2, q0, q1, q2, T):
    """``(d2, exact)``: squared distance of segment pq and triangle T (9-tuple), as
    triangle_distance_sq with the segment as the zero-area triangle (p, q, q); ``exact`` is False
    for a zero-area T, whose crossings are not enumerated (a segment through a sliver's interior
    gets the distance to its edges), so only a proper T's distance is exact."""
    d2, _, _ = triangle_distance_sq((p0, p1, p2, q0, q1, q2, q0, q1, q2), T)
    return d2, _proper(T)


@njit(cache=True, nogil=True)
def load_triangle(T, k):
    """Triangle k of an (m, 3, 3) array as a 9-tuple."""
    return (T[k, 0, 0], T[k, 0, 1], T[k, 0, 2], T[k, 1, 0], T[k, 1, 1], T[k, 1, 2], T[k, 2, 0], T[k, 2, 1], T[k, 2, 2])


@njit(cache=True, nogil=True)
def load_moved_triangle(T, k, rot, trans):
    """Triangle k of T under x -> rot @ x + trans, as a 9-tuple."""
    v00 = rot[0, 0] * T[k, 0, 0] + rot[0, 1] * T[k, 0, 1] + rot[0, 2] * T[k, 0, 2] + trans[0]
    v01 = rot[1, 0] * T[k, 0, 0] + rot[1, 1] * T[k, 0, 1] + rot[1, 2] * T[k, 0, 2] + trans[1]
    v02 = rot[2, 0] * T[k, 0, 0] + rot[2, 1] * T[k, 0, 1] + rot[2, 2] * T[k, 0, 2] + trans[2]
    v10 = rot[0, 0] * T[k, 1, 0] + rot[0, 1] * T[k, 1, 1] + rot[0, 2] * T[k, 1, 2] + trans[0]
    v11 = rot[1, 0] * T[k, 1, 0] + rot[1, 1] * T[k, 1, 1] + rot[1, 2] * T[k, 1, 2] + trans[1]
    v12 = rot[2, 0] * T[k, 1, 0] + rot[2, 1] * T[k, 1, 1] + rot[2, 2] * T[k, 1, 2] + trans[2]
    v20 = rot[0, 0] * T[k, 2, 0] + rot[0, 1] * T[k, 2, 1] + rot[0, 2] * T[k, 2, 2] + trans[0]
    v21 = rot[1, 0] * T[k, 2, 0] + rot[1, 1] * T[k, 2, 1] + rot[1, 2] * T[k, 2, 2] + trans[1]
    v22 = rot[2, 0] * T[k, 2, 0] + rot[2, 1] * T[k, 2, 1] + rot[2, 2] * T[k, 2, 2] + trans[2]
    return (v00, v01, v02, v10, v11, v12, v20, v21, v22)
