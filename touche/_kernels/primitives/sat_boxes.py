"""Separating-axis fast paths with boxes (S1 sections 2 and 3; Ericson 4.4.1 axes with the 4.4.2
epsilon, Ericson 5.2.9 for triangle-box): OBB-OBB and triangle-OBB, stationary and under constant
velocities over [0, t_max]. Conventions and the motion form: sat_fast.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.overlap import cross_tuple as _cross
from touche._kernels.primitives.overlap import obb_obb_overlap_relative
from touche._kernels.primitives.overlap import triangle_edge as _edge
from touche._kernels.primitives.overlap import triangle_projection as _proj
from touche._kernels.base.vec import dot as _dot
from touche._kernels.primitives.sat_contact import MISS_T, obb_obb_contact_point, toi_axis_update, toi_verdict
from touche._kernels.primitives.sat_contact import triangle_obb_contact_point, unit_tuple


_INF = np.inf
_NAN = np.nan

# Ericson 4.4.2 robustness term added to |R_ij| (same constant as overlap.test_obb_obb).
OBB_EPSILON = tolerance.OBB_EPSILON


# ---------------------------------------------------------------------------------------------
# OBB - OBB (S1 section 2; Ericson 4.4.1 axes with the 4.4.2 epsilon)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _obb_relative(ca, ua, i, cb, ub, j):
    """t = A^T (cb - ca) and R_ij = A_i . B_j for box i of the A arrays and box j of the B arrays
    (A's axes are the rows of ua[i]). Indices, not views: a view costs two atomic refcounts."""
    dx = cb[j, 0] - ca[i, 0]
    dy = cb[j, 1] - ca[i, 1]
    dz = cb[j, 2] - ca[i, 2]
    t0 = dx * ua[i, 0, 0] + dy * ua[i, 0, 1] + dz * ua[i, 0, 2]
    t1 = dx * ua[i, 1, 0] + dy * ua[i, 1, 1] + dz * ua[i, 1, 2]
    t2 = dx * ua[i, 2, 0] + dy * ua[i, 2, 1] + dz * ua[i, 2, 2]
    r00 = ua[i, 0, 0] * ub[j, 0, 0] + ua[i, 0, 1] * ub[j, 0, 1] + ua[i, 0, 2] * ub[j, 0, 2]
    r01 = ua[i, 0, 0] * ub[j, 1, 0] + ua[i, 0, 1] * ub[j, 1, 1] + ua[i, 0, 2] * ub[j, 1, 2]
    r02 = ua[i, 0, 0] * ub[j, 2, 0] + ua[i, 0, 1] * ub[j, 2, 1] + ua[i, 0, 2] * ub[j, 2, 2]
    r10 = ua[i, 1, 0] * ub[j, 0, 0] + ua[i, 1, 1] * ub[j, 0, 1] + ua[i, 1, 2] * ub[j, 0, 2]
    r11 = ua[i, 1, 0] * ub[j, 1, 0] + ua[i, 1, 1] * ub[j, 1, 1] + ua[i, 1, 2] * ub[j, 1, 2]
    r12 = ua[i, 1, 0] * ub[j, 2, 0] + ua[i, 1, 1] * ub[j, 2, 1] + ua[i, 1, 2] * ub[j, 2, 2]
    r20 = ua[i, 2, 0] * ub[j, 0, 0] + ua[i, 2, 1] * ub[j, 0, 1] + ua[i, 2, 2] * ub[j, 0, 2]
    r21 = ua[i, 2, 0] * ub[j, 1, 0] + ua[i, 2, 1] * ub[j, 1, 1] + ua[i, 2, 2] * ub[j, 1, 2]
    r22 = ua[i, 2, 0] * ub[j, 2, 0] + ua[i, 2, 1] * ub[j, 2, 1] + ua[i, 2, 2] * ub[j, 2, 2]
    return t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22


@njit(cache=True, nogil=True)
def obb_obb_overlap(ca, ua, ha, i, cb, ub, hb, j):
    """Stationary OBB-OBB (S1 2.1): overlap.obb_obb_overlap_relative with OBB_EPSILON, box i of
    the A arrays against box j of the B arrays. Closed boxes: touching is overlap."""
    t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22 = _obb_relative(ca, ua, i, cb, ub, j)
    return obb_obb_overlap_relative((t0, t1, t2), (r00, r01, r02, r10, r11, r12, r20, r21, r22),
                                    (ha[i, 0], ha[i, 1], ha[i, 2]), (hb[j, 0], hb[j, 1], hb[j, 2]), OBB_EPSILON)


@njit(cache=True, nogil=True)
def _box_projection(l0, l1, l2, r00, r01, r02, r10, r11, r12, r20, r21, r22, b0, b1, b2):
    """Radius of box B (axes = columns of R, in A's frame) on the axis L, computed directly."""
    return (b0 * abs(l0 * r00 + l1 * r10 + l2 * r20) + b1 * abs(l0 * r01 + l1 * r11 + l2 * r21)
            + b2 * abs(l0 * r02 + l1 * r12 + l2 * r22))


@njit(cache=True, nogil=True)
def _obb_obb_toi_core(ca, ua, ha, i, va, cb, ub, hb, j, vb, t_max):
    """S1 2.2 in the TFirst <= TLast form. Returns (status, time, normal in A's frame, unnormalised).
    Axes: the 15 static ones (with the epsilon, so t = 0 agrees with obb_obb_overlap), then
    W x A_i and W x B_j (speed exactly 0: a static separation perpendicular to the motion)."""
    t0, t1, t2, r00, r01, r02, r10, r11, r12, r20, r21, r22 = _obb_relative(ca, ua, i, cb, ub, j)
    wx = vb[0] - va[0]
    wy = vb[1] - va[1]
    wz = vb[2] - va[2]
    w0 = wx * ua[i, 0, 0] + wy * ua[i, 0, 1] + wz * ua[i, 0, 2]
    w1 = wx * ua[i, 1, 0] + wy * ua[i, 1, 1] + wz * ua[i, 1, 2]
    w2 = wx * ua[i, 2, 0] + wy * ua[i, 2, 1] + wz * ua[i, 2, 2]
    a0 = ha[i, 0]
    a1 = ha[i, 1]
    a2 = ha[i, 2]
    b0 = hb[j, 0]
    b1 = hb[j, 1]
    b2 = hb[j, 2]
    q00 = abs(r00) + OBB_EPSILON
    q01 = abs(r01) + OBB_EPSILON
    q02 = abs(r02) + OBB_EPSILON
    q10 = abs(r10) + OBB_EPSILON
    q11 = abs(r11) + OBB_EPSILON
    q12 = abs(r12) + OBB_EPSILON
    q20 = abs(r20) + OBB_EPSILON
    q21 = abs(r21) + OBB_EPSILON
    q22 = abs(r22) + OBB_EPSILON
    tf = 0.0
    tl = t_max
    n0 = 0.0
    n1 = 0.0
    n2 = 0.0
    # W x A_i and W x B_j first: cheap rejections of pairs whose paths never cross.
    for k in range(6):
        if k == 0:
            l0, l1, l2 = 0.0, w2, -w1
        elif k == 1:
            l0, l1, l2 = -w2, 0.0, w0
        elif k == 2:
            l0, l1, l2 = w1, -w0, 0.0
        else:
            col = k - 3
            if col == 0:
                c0, c1, c2 = r00, r10, r20
            elif col == 1:
                c0, c1, c2 = r01, r11, r21
            else:
                c0, c1, c2 = r02, r12, r22
            l0 = w1 * c2 - w2 * c1
            l1 = w2 * c0 - w0 * c2
            l2 = w0 * c1 - w1 * c0
        s = l0 * t0 + l1 * t1 + l2 * t2
        ra = a0 * abs(l0) + a1 * abs(l1) + a2 * abs(l2)
        rb = _box_projection(l0, l1, l2, r00, r01, r02, r10, r11, r12, r20, r21, r22, b0, b1, b2)
        if abs(s) > ra + rb:
            return MISS_T
    # A's faces
    rb = b0 * q00 + b1 * q01 + b2 * q02
    tf, tl, n0, n1, n2 = toi_axis_update(-a0, a0, t0 - rb, t0 + rb, w0, 1.0, 0.0, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    rb = b0 * q10 + b1 * q11 + b2 * q12
    tf, tl, n0, n1, n2 = toi_axis_update(-a1, a1, t1 - rb, t1 + rb, w1, 0.0, 1.0, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    rb = b0 * q20 + b1 * q21 + b2 * q22
    tf, tl, n0, n1, n2 = toi_axis_update(-a2, a2, t2 - rb, t2 + rb, w2, 0.0, 0.0, 1.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # B's faces
    s = t0 * r00 + t1 * r10 + t2 * r20
    ra = a0 * q00 + a1 * q10 + a2 * q20
    v = w0 * r00 + w1 * r10 + w2 * r20
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - b0, s + b0, v, r00, r10, r20, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    s = t0 * r01 + t1 * r11 + t2 * r21
    ra = a0 * q01 + a1 * q11 + a2 * q21
    v = w0 * r01 + w1 * r11 + w2 * r21
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - b1, s + b1, v, r01, r11, r21, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    s = t0 * r02 + t1 * r12 + t2 * r22
    ra = a0 * q02 + a1 * q12 + a2 * q22
    v = w0 * r02 + w1 * r12 + w2 * r22
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - b2, s + b2, v, r02, r12, r22, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A0 x B0
    s = t2 * r10 - t1 * r20
    ra = a1 * q20 + a2 * q10
    rb = b1 * q02 + b2 * q01
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w2 * r10 - w1 * r20, 0.0, -r20, r10, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A0 x B1
    s = t2 * r11 - t1 * r21
    ra = a1 * q21 + a2 * q11
    rb = b2 * q00 + b0 * q02
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w2 * r11 - w1 * r21, 0.0, -r21, r11, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A0 x B2
    s = t2 * r12 - t1 * r22
    ra = a1 * q22 + a2 * q12
    rb = b0 * q01 + b1 * q00
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w2 * r12 - w1 * r22, 0.0, -r22, r12, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A1 x B0
    s = t0 * r20 - t2 * r00
    ra = a2 * q00 + a0 * q20
    rb = b1 * q12 + b2 * q11
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w0 * r20 - w2 * r00, r20, 0.0, -r00, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A1 x B1
    s = t0 * r21 - t2 * r01
    ra = a2 * q01 + a0 * q21
    rb = b2 * q10 + b0 * q12
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w0 * r21 - w2 * r01, r21, 0.0, -r01, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A1 x B2
    s = t0 * r22 - t2 * r02
    ra = a2 * q02 + a0 * q22
    rb = b0 * q11 + b1 * q10
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w0 * r22 - w2 * r02, r22, 0.0, -r02, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A2 x B0
    s = t1 * r00 - t0 * r10
    ra = a0 * q10 + a1 * q00
    rb = b1 * q22 + b2 * q21
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w1 * r00 - w0 * r10, -r10, r00, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A2 x B1
    s = t1 * r01 - t0 * r11
    ra = a0 * q11 + a1 * q01
    rb = b2 * q20 + b0 * q22
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w1 * r01 - w0 * r11, -r11, r01, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    # A2 x B2
    s = t1 * r02 - t0 * r12
    ra = a0 * q12 + a1 * q02
    rb = b0 * q21 + b1 * q20
    tf, tl, n0, n1, n2 = toi_axis_update(-ra, ra, s - rb, s + rb, w1 * r02 - w0 * r12, -r12, r02, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    return toi_verdict(tf, n0, n1, n2)


@njit(cache=True, nogil=True)
def obb_obb_time_of_impact(ca, ua, ha, i, va, cb, ub, hb, j, vb, t_max):
    """Box i of the A arrays (velocity va (3,)) and box j of the B arrays (velocity vb).
    Returns (status, time, px, py, pz, nx, ny, nz): MISS (time inf, point/normal NaN), HIT at time
    with a point of first contact and the unit contact normal A -> B, or ALREADY_TOUCHING
    (time 0, a common point, normal NaN)."""
    status, tf, l0, l1, l2 = _obb_obb_toi_core(ca, ua, ha, i, va, cb, ub, hb, j, vb, t_max)
    if status == kinds.MISS:
        return status, _INF, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN
    px, py, pz = obb_obb_contact_point(ca[i], ua[i], ha[i], va, cb[j], ub[j], hb[j], vb, tf)
    if status == kinds.ALREADY_TOUCHING:
        return status, 0.0, px, py, pz, _NAN, _NAN, _NAN
    # the axis is in A's frame: world = sum_i l_i A_i
    m0 = l0 * ua[i, 0, 0] + l1 * ua[i, 1, 0] + l2 * ua[i, 2, 0]
    m1 = l0 * ua[i, 0, 1] + l1 * ua[i, 1, 1] + l2 * ua[i, 2, 1]
    m2 = l0 * ua[i, 0, 2] + l1 * ua[i, 1, 2] + l2 * ua[i, 2, 2]
    nx, ny, nz = unit_tuple(m0, m1, m2)
    return status, tf, px, py, pz, nx, ny, nz


# ---------------------------------------------------------------------------------------------
# triangle - OBB (S1 section 3; Ericson 5.2.9 axes)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _tri_in_box_frame(T, it, c, u, j):
    """Triangle vertices in the box frame: x_i = (v - c) . u_i (u's rows are the axes)."""
    out0 = T[it, 0, 0] - c[j, 0]
    out1 = T[it, 0, 1] - c[j, 1]
    out2 = T[it, 0, 2] - c[j, 2]
    a0 = out0 * u[j, 0, 0] + out1 * u[j, 0, 1] + out2 * u[j, 0, 2]
    a1 = out0 * u[j, 1, 0] + out1 * u[j, 1, 1] + out2 * u[j, 1, 2]
    a2 = out0 * u[j, 2, 0] + out1 * u[j, 2, 1] + out2 * u[j, 2, 2]
    out0 = T[it, 1, 0] - c[j, 0]
    out1 = T[it, 1, 1] - c[j, 1]
    out2 = T[it, 1, 2] - c[j, 2]
    b0 = out0 * u[j, 0, 0] + out1 * u[j, 0, 1] + out2 * u[j, 0, 2]
    b1 = out0 * u[j, 1, 0] + out1 * u[j, 1, 1] + out2 * u[j, 1, 2]
    b2 = out0 * u[j, 2, 0] + out1 * u[j, 2, 1] + out2 * u[j, 2, 2]
    out0 = T[it, 2, 0] - c[j, 0]
    out1 = T[it, 2, 1] - c[j, 1]
    out2 = T[it, 2, 2] - c[j, 2]
    d0 = out0 * u[j, 0, 0] + out1 * u[j, 0, 1] + out2 * u[j, 0, 2]
    d1 = out0 * u[j, 1, 0] + out1 * u[j, 1, 1] + out2 * u[j, 1, 2]
    d2 = out0 * u[j, 2, 0] + out1 * u[j, 2, 1] + out2 * u[j, 2, 2]
    return (a0, a1, a2, b0, b1, b2, d0, d1, d2)


@njit(cache=True, nogil=True)
def _box_radius(L, h):
    return h[0] * abs(L[0]) + h[1] * abs(L[1]) + h[2] * abs(L[2])


@njit(cache=True, nogil=True)
def _box_axis_cross_edge(i, f):
    """u_i x f in the box frame (u_i the unit coordinate axis)."""
    if i == 0:
        return (0.0, -f[2], f[1])
    if i == 1:
        return (f[2], 0.0, -f[0])
    return (-f[1], f[0], 0.0)


@njit(cache=True, nogil=True)
def triangle_obb_overlap(T, it, c, u, h, j):
    """Stationary triangle-OBB (S1 3.1, Ericson 5.2.9): the triangle in the box frame, then the
    13 axes: box faces, triangle normal, u_i x f_j. All three vertices are projected on every
    axis, so zero-area triangles (rounding-noise normal) stay exact: the box faces and u_i x f_j
    are complete for a segment or a point against a box. Erratum E L8014 (v2.z for v2.y) and the
    translated-plane mix-up avoided by the generic projections."""
    P = _tri_in_box_frame(T, it, c, u, j)
    h = (h[j, 0], h[j, 1], h[j, 2])
    for i in range(3):
        lo = min(P[i], min(P[3 + i], P[6 + i]))
        hi = max(P[i], max(P[3 + i], P[6 + i]))
        if lo > h[i] or hi < -h[i]:
            return False
    f0 = _edge(P, 0)
    f1 = _edge(P, 1)
    n = _cross(f0, f1)
    lo, hi = _proj(n, P)
    r = _box_radius(n, h)
    if lo > r or hi < -r:
        return False
    for j in range(3):
        f = _edge(P, j)
        for i in range(3):
            L = _box_axis_cross_edge(i, f)
            lo, hi = _proj(L, P)
            r = _box_radius(L, h)
            if lo > r or hi < -r:
                return False
    return True


@njit(cache=True, nogil=True)
def _tri_box_toi_core(T, it, vt, c, u, h, j, vb, t_max):
    """S1 3.2 in the TFirst <= TLast form, in the box frame (object 0 = box, object 1 = the
    triangle moving at w = vt - vb). Axes: box faces, normal, u_i x f_j, then W x f_j and
    W x u_i (speed 0). Complete for any triangle, zero-area ones included: K's edges are the box
    axes, the triangle edges and W. Returns (status, time, axis box->triangle in box frame)."""
    P = _tri_in_box_frame(T, it, c, u, j)
    h = (h[j, 0], h[j, 1], h[j, 2])
    wx = vt[0] - vb[0]
    wy = vt[1] - vb[1]
    wz = vt[2] - vb[2]
    w = (wx * u[j, 0, 0] + wy * u[j, 0, 1] + wz * u[j, 0, 2],
         wx * u[j, 1, 0] + wy * u[j, 1, 1] + wz * u[j, 1, 2],
         wx * u[j, 2, 0] + wy * u[j, 2, 1] + wz * u[j, 2, 2])
    tf = 0.0
    tl = t_max
    n0 = 0.0
    n1 = 0.0
    n2 = 0.0
    # static axes perpendicular to W first (cheap rejections)
    for k in range(6):
        if k < 3:
            L = _cross(w, _edge(P, k))
        else:
            L = _box_axis_cross_edge(k - 3, w)
        lo, hi = _proj(L, P)
        r = _box_radius(L, h)
        if lo > r or hi < -r:
            return MISS_T
    for i in range(3):
        lo = min(P[i], min(P[3 + i], P[6 + i]))
        hi = max(P[i], max(P[3 + i], P[6 + i]))
        l0 = 1.0 if i == 0 else 0.0
        l1 = 1.0 if i == 1 else 0.0
        l2 = 1.0 if i == 2 else 0.0
        tf, tl, n0, n1, n2 = toi_axis_update(-h[i], h[i], lo, hi, w[i], l0, l1, l2, tf, tl, n0, n1, n2)
        if tf > tl:
            return MISS_T
    n = _cross(_edge(P, 0), _edge(P, 1))
    lo, hi = _proj(n, P)
    r = _box_radius(n, h)
    tf, tl, n0, n1, n2 = toi_axis_update(-r, r, lo, hi, _dot(n, w), n[0], n[1], n[2], tf, tl, n0, n1, n2)
    if tf > tl:
        return MISS_T
    for j in range(3):
        f = _edge(P, j)
        for i in range(3):
            L = _box_axis_cross_edge(i, f)
            lo, hi = _proj(L, P)
            r = _box_radius(L, h)
            tf, tl, n0, n1, n2 = toi_axis_update(-r, r, lo, hi, _dot(L, w), L[0], L[1], L[2], tf, tl, n0, n1, n2)
            if tf > tl:
                return MISS_T
    return toi_verdict(tf, n0, n1, n2)


@njit(cache=True, nogil=True)
def triangle_obb_time_of_impact(T, it, vt, c, u, h, j, vb, t_max):
    """(status, time, px, py, pz, nx, ny, nz) as obb_obb_time_of_impact; normal triangle -> box."""
    status, tf, l0, l1, l2 = _tri_box_toi_core(T, it, vt, c, u, h, j, vb, t_max)
    if status == kinds.MISS:
        return status, _INF, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN
    px, py, pz = triangle_obb_contact_point(T[it], vt, c[j], u[j], h[j], vb, tf)
    if status == kinds.ALREADY_TOUCHING:
        return status, 0.0, px, py, pz, _NAN, _NAN, _NAN
    # box frame -> world, and flip box->triangle into triangle->box
    m0 = -(l0 * u[j, 0, 0] + l1 * u[j, 1, 0] + l2 * u[j, 2, 0])
    m1 = -(l0 * u[j, 0, 1] + l1 * u[j, 1, 1] + l2 * u[j, 2, 1])
    m2 = -(l0 * u[j, 0, 2] + l1 * u[j, 1, 2] + l2 * u[j, 2, 2])
    nx, ny, nz = unit_tuple(m0, m1, m2)
    return status, tf, px, py, pz, nx, ny, nz
