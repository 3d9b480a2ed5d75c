"""Shared pieces of the separating-axis fast paths (sat_fast.py, sat_boxes.py, sat_triangles.py):
tuple vector helpers (values, never heap arrays), one axis of S0's TFirst <= TLast form, and the
point of first contact of two boxes, a triangle and a box, or two triangles at a given time:
the objects are moved to the contact time and the contact set's extreme points are enumerated
with the closest-point kernels (see sat_fast.py's docstring). Conventions: sat_fast.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_points_segment_obb, closest_points_segment_triangle
from touche._kernels.primitives.closest import closest_points_triangle_triangle


_INF = np.inf
_NAN = np.nan


# Contact-point search stops at a candidate pair closer than CONTACT_EXACT * (coordinate scale):
# far below the 1e-9 the point is promised to, and rounding keeps touching pairs from reaching 0.
CONTACT_EXACT = 1e-13


# ---------------------------------------------------------------------------------------------
# tuple vector helpers (values, never heap arrays)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def triangle_vertex(P, k):
    """Vertex k of a 9-tuple triangle as a 3-tuple."""
    if k == 0:
        return (P[0], P[1], P[2])
    if k == 1:
        return (P[3], P[4], P[5])
    return (P[6], P[7], P[8])


@njit(cache=True, nogil=True)
def load_triangle(T, k, ox, oy, oz):
    """Rows of triangle k of the (n, 3, 3) array T minus the origin o, as a 9-tuple."""
    return (T[k, 0, 0] - ox, T[k, 0, 1] - oy, T[k, 0, 2] - oz,
            T[k, 1, 0] - ox, T[k, 1, 1] - oy, T[k, 1, 2] - oz,
            T[k, 2, 0] - ox, T[k, 2, 1] - oy, T[k, 2, 2] - oz)


@njit(cache=True, nogil=True)
def toi_axis_update(lo0, hi0, lo1, hi1, v, l0, l1, l2, tf, tl, n0, n1, n2):
    """One axis of the TFirst <= TLast form (S0). Object 0 projects to [lo0, hi0], object 1 to
    [lo1, hi1] at t = 0 and moves at speed v along the axis (l0, l1, l2). Returns the narrowed
    (tf, tl) and the (unnormalised) direction from object 0 to object 1 of the axis that last
    raised tf. tf > tl means no contact in [0, t_max]."""
    if v == 0.0:
        if lo1 > hi0 or hi1 < lo0:
            return _INF, -_INF, n0, n1, n2
        return tf, tl, n0, n1, n2
    if v > 0.0:
        # object 1 climbs: it arrives from below (normal 0 -> 1 is -L), leaves above
        t_in = (lo0 - hi1) / v
        t_out = (hi0 - lo1) / v
        sign = -1.0
    else:
        t_in = (hi0 - lo1) / v
        t_out = (lo0 - hi1) / v
        sign = 1.0
    if t_in > tf:
        tf = t_in
        n0 = sign * l0
        n1 = sign * l1
        n2 = sign * l2
    if t_out < tl:
        tl = t_out
    return tf, tl, n0, n1, n2


MISS_T = (kinds.MISS, _INF, 0.0, 0.0, 0.0)


@njit(cache=True, nogil=True, inline="always")
def toi_verdict(tf, n0, n1, n2):
    """The end of a TFirst <= TLast sweep that no axis separated: HIT at ``tf`` > 0 with the last
    axis ``(n0, n1, n2)``, else ALREADY_TOUCHING (time 0)."""
    if tf > 0.0:
        return kinds.HIT, tf, n0, n1, n2
    return kinds.ALREADY_TOUCHING, 0.0, 0.0, 0.0, 0.0


# ---------------------------------------------------------------------------------------------
# contact points at a given time (closest-point enumeration, see the module docstring)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _moved_box(c, u, v, t):
    """Centre c + t v and the axes as COLUMNS (the closest-point kernels' convention)."""
    cm = np.empty(3)
    cols = np.empty((3, 3))
    for i in range(3):
        cm[i] = c[i] + t * v[i]
        for j in range(3):
            cols[j, i] = u[i, j]
    return cm, cols


@njit(cache=True, nogil=True)
def _moved_tri(T, v, t):
    out = np.empty((3, 3))
    for k in range(3):
        for i in range(3):
            out[k, i] = T[k, i] + t * v[i]
    return out


@njit(cache=True, nogil=True)
def _box_edge(c, cols, h, i, sj, sk):
    """Edge along axis i of box (c, cols, h) at signs (sj, sk) of the two other axes."""
    j = (i + 1) % 3
    k = (i + 2) % 3
    p = np.empty(3)
    q = np.empty(3)
    for m in range(3):
        p[m] = c[m] + sj * h[j] * cols[m, j] + sk * h[k] * cols[m, k] - h[i] * cols[m, i]
        q[m] = p[m] + 2.0 * h[i] * cols[m, i]
    return p, q


@njit(cache=True, nogil=True)
def _consider(best, px, py, pz, c1, c2):
    d0 = c1[0] - c2[0]
    d1 = c1[1] - c2[1]
    d2 = c1[2] - c2[2]
    d = d0 * d0 + d1 * d1 + d2 * d2
    if d < best:
        return d, 0.5 * (c1[0] + c2[0]), 0.5 * (c1[1] + c2[1]), 0.5 * (c1[2] + c2[2])
    return best, px, py, pz


@njit(cache=True, nogil=True)
def obb_obb_contact_point(ca, ua, ha, va, cb, ub, hb, vb, t):
    """A point of A(t) n B(t) (or the midpoint of their closest pair): the 12 edges of each box
    against the other solid box (edges cover the vertices, and edge-face crossings)."""
    cma, cols_a = _moved_box(ca, ua, va, t)
    cmb, cols_b = _moved_box(cb, ub, vb, t)
    scale = 0.0
    for m in range(3):
        scale = max(scale, abs(cma[m]) + abs(cmb[m]) + ha[m] + hb[m])
    done = (CONTACT_EXACT * scale) ** 2
    best = _INF
    px = py = pz = _NAN
    for side in range(2):
        for i in range(3):
            for sj in (-1.0, 1.0):
                for sk in (-1.0, 1.0):
                    if side == 0:
                        p, q = _box_edge(cma, cols_a, ha, i, sj, sk)
                        c1, c2 = closest_points_segment_obb(p, q, cmb, cols_b, hb)
                    else:
                        p, q = _box_edge(cmb, cols_b, hb, i, sj, sk)
                        c1, c2 = closest_points_segment_obb(p, q, cma, cols_a, ha)
                    best, px, py, pz = _consider(best, px, py, pz, c1, c2)
                    if best <= done:
                        return px, py, pz
    return px, py, pz


@njit(cache=True, nogil=True)
def triangle_obb_contact_point(T, vt, c, u, h, vb, t):
    """A point of T(t) n B(t): the triangle's 3 edges against the solid box and the box's 12
    edges against the triangle."""
    Tm = _moved_tri(T, vt, t)
    cm, cols = _moved_box(c, u, vb, t)
    scale = 0.0
    for m in range(3):
        scale = max(scale, abs(cm[m]) + h[m] + abs(Tm[0, m]) + abs(Tm[1, m]) + abs(Tm[2, m]))
    done = (CONTACT_EXACT * scale) ** 2
    best = _INF
    px = py = pz = _NAN
    for k in range(3):
        c1, c2 = closest_points_segment_obb(Tm[k], Tm[(k + 1) % 3], cm, cols, h)
        best, px, py, pz = _consider(best, px, py, pz, c1, c2)
        if best <= done:
            return px, py, pz
    for i in range(3):
        for sj in (-1.0, 1.0):
            for sk in (-1.0, 1.0):
                p, q = _box_edge(cm, cols, h, i, sj, sk)
                c1, c2 = closest_points_segment_triangle(p, q, Tm[0], Tm[1], Tm[2])
                best, px, py, pz = _consider(best, px, py, pz, c1, c2)
                if best <= done:
                    return px, py, pz
    return px, py, pz


@njit(cache=True, nogil=True)
def triangle_triangle_contact_point(TA, va, TB, vb, t):
    """A point of A(t) n B(t) via closest_points_triangle_triangle (Ericson 5.1.11)."""
    Am = _moved_tri(TA, va, t)
    Bm = _moved_tri(TB, vb, t)
    c1, c2 = closest_points_triangle_triangle(Am[0], Am[1], Am[2], Bm[0], Bm[1], Bm[2])
    return 0.5 * (c1[0] + c2[0]), 0.5 * (c1[1] + c2[1]), 0.5 * (c1[2] + c2[2])


@njit(cache=True, nogil=True)
def unit_tuple(n0, n1, n2):
    length = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if length > 0.0:
        return n0 / length, n1 / length, n2 / length
    return _NAN, _NAN, _NAN
