"""Specialised separating-axis fast paths (Eberly, "Dynamic Collision Detection using Oriented
Bounding Boxes" = S1, sections 2-4; Ericson 4.4.2 for the OBB epsilon): OBB-OBB, triangle-OBB and
triangle-triangle, stationary and under constant velocities over [0, t_max].

Conventions (raw-array API, see touche/pairwise.py): an OBB is a centre (3,), axes (3, 3) whose
ROWS are the unit axes (unlike docs/KERNELS.md, whose OBB axes are columns) and half extents (3,);
a triangle is (3, 3), one vertex per row. Everything is scalar code on tuples: no allocation in the
static per-pair path (the throughput path); the batch drivers loop over pairs [lo, hi).

Motion (S0's TFirst <= TLast form, not S1's whole-interval per-axis test, which is only
conservative: erratum S1 "section 3.2.2 and 4.2.2 omit the W x edge axes"). With object 0 fixed
and object 1 moving at the relative velocity w, on an axis L the two projection intervals overlap
for t in [t_in, t_out]; the objects touch at t iff t is in every axis' interval, so the first
contact is the largest t_in when it does not exceed the smallest t_out (starting from [0, t_max]).
That is exact when the axes include every facet normal of K = A - B - [0, t_max] w (a convex
polytope whose edge directions are the edges of A and B and w): so the moving tests add the
w x edge axes (S1 2.2: W x A_i, W x B_j; 3.2: W x edges, W x box axes; 4.2: W x E_i, W x F_j) and
for triangles the in-plane axes N x E_i, N x F_j, N x W (parallel planes make K flat; erratum
S0 "for moving parallel triangles add the N x E_i and N x F_j axes"). Any axis, even a null or
rounding-noise one, is a valid separating axis when both projections are computed exactly from
it, which is why near-parallel cross products need no skipping here, except in OBB-OBB, whose
radii use the orthonormality identities of Ericson 4.4.1 and so take the 4.4.2 epsilon instead.

Point of first contact: instead of S1's configuration tables (2.3, 3.3, 4.3, several errata:
Table 1 A2xB2 label, the second box projection centre, (b_i + sigma y_i), x_j, Sign(i2,i0),
"nonzero", D = (U0+TV1)-(C+TV0)), the objects are moved to the contact time and the contact
set's extreme points are enumerated with the closest-point kernels (an extreme point of the
intersection of two touching convex polytopes is a vertex of one in the other or an edge of one
meeting the other); the best pair is returned as its midpoint.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche import tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import (
    closest_points_segment_obb,
    closest_points_segment_triangle,
    closest_points_triangle_triangle,
)
from touche._kernels.primitives.overlap import cross_tuple as _cross
from touche._kernels.primitives.overlap import obb_obb_overlap_relative
from touche._kernels.primitives.overlap import triangle_edge as _edge
from touche._kernels.primitives.overlap import triangle_is_proper as _tri_is_proper
from touche._kernels.primitives.overlap import triangle_projection as _proj
from touche._kernels.primitives.overlap import triangles_overlap
from touche._kernels.primitives.overlap import triangles_separated_on as _separates
from touche._kernels.base.vec import dot as _dot

# Ericson 4.4.2 robustness term added to |R_ij| (same constant as overlap.test_obb_obb).
OBB_EPSILON = tolerance.OBB_EPSILON

# Triangles whose planes satisfy |nA x nB|^2 <= COPLANAR_SQ |nA|^2 |nB|^2 (sin^2 of the angle
# between the planes) are intersected as coplanar polygons: the plane-plane line of two
# overlapping, (nearly) parallel triangles is meaningless. Same threshold as edge parallelism.
COPLANAR_SQ = tolerance.PARALLEL_SQ

# Points of an intersection polygon closer than MERGE * (coordinate scale) are merged (clipping
# produces duplicates where a vertex lies on a clip line); a polygon whose doubled area is below
# MERGE * scale^2 is reported as the segment between its two farthest points.
MERGE = 1e-12

_INF = np.inf
_NAN = np.nan
# Contact-point search stops at a candidate pair closer than CONTACT_EXACT * (coordinate scale):
# far below the 1e-9 the point is promised to, and rounding keeps touching pairs from reaching 0.
CONTACT_EXACT = 1e-13
MAX_SET_POINTS = 6  # a triangle clipped by three half-planes has at most 6 vertices


# ---------------------------------------------------------------------------------------------
# tuple vector helpers (values, never heap arrays)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _vertex(P, k):
    """Vertex k of a 9-tuple triangle as a 3-tuple."""
    if k == 0:
        return (P[0], P[1], P[2])
    if k == 1:
        return (P[3], P[4], P[5])
    return (P[6], P[7], P[8])


@njit(cache=True, nogil=True)
def _load_tri(T, k, ox, oy, oz):
    """Rows of triangle k of the (n, 3, 3) array T minus the origin o, as a 9-tuple."""
    return (T[k, 0, 0] - ox, T[k, 0, 1] - oy, T[k, 0, 2] - oz,
            T[k, 1, 0] - ox, T[k, 1, 1] - oy, T[k, 1, 2] - oz,
            T[k, 2, 0] - ox, T[k, 2, 1] - oy, T[k, 2, 2] - oz)


@njit(cache=True, nogil=True)
def _update(lo0, hi0, lo1, hi1, v, l0, l1, l2, tf, tl, n0, n1, n2):
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


_MISS_T = (kinds.MISS, _INF, 0.0, 0.0, 0.0)


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
            return _MISS_T
    # A's faces
    rb = b0 * q00 + b1 * q01 + b2 * q02
    tf, tl, n0, n1, n2 = _update(-a0, a0, t0 - rb, t0 + rb, w0, 1.0, 0.0, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    rb = b0 * q10 + b1 * q11 + b2 * q12
    tf, tl, n0, n1, n2 = _update(-a1, a1, t1 - rb, t1 + rb, w1, 0.0, 1.0, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    rb = b0 * q20 + b1 * q21 + b2 * q22
    tf, tl, n0, n1, n2 = _update(-a2, a2, t2 - rb, t2 + rb, w2, 0.0, 0.0, 1.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # B's faces
    s = t0 * r00 + t1 * r10 + t2 * r20
    ra = a0 * q00 + a1 * q10 + a2 * q20
    v = w0 * r00 + w1 * r10 + w2 * r20
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - b0, s + b0, v, r00, r10, r20, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    s = t0 * r01 + t1 * r11 + t2 * r21
    ra = a0 * q01 + a1 * q11 + a2 * q21
    v = w0 * r01 + w1 * r11 + w2 * r21
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - b1, s + b1, v, r01, r11, r21, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    s = t0 * r02 + t1 * r12 + t2 * r22
    ra = a0 * q02 + a1 * q12 + a2 * q22
    v = w0 * r02 + w1 * r12 + w2 * r22
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - b2, s + b2, v, r02, r12, r22, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A0 x B0
    s = t2 * r10 - t1 * r20
    ra = a1 * q20 + a2 * q10
    rb = b1 * q02 + b2 * q01
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w2 * r10 - w1 * r20, 0.0, -r20, r10, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A0 x B1
    s = t2 * r11 - t1 * r21
    ra = a1 * q21 + a2 * q11
    rb = b2 * q00 + b0 * q02
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w2 * r11 - w1 * r21, 0.0, -r21, r11, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A0 x B2
    s = t2 * r12 - t1 * r22
    ra = a1 * q22 + a2 * q12
    rb = b0 * q01 + b1 * q00
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w2 * r12 - w1 * r22, 0.0, -r22, r12, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A1 x B0
    s = t0 * r20 - t2 * r00
    ra = a2 * q00 + a0 * q20
    rb = b1 * q12 + b2 * q11
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w0 * r20 - w2 * r00, r20, 0.0, -r00, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A1 x B1
    s = t0 * r21 - t2 * r01
    ra = a2 * q01 + a0 * q21
    rb = b2 * q10 + b0 * q12
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w0 * r21 - w2 * r01, r21, 0.0, -r01, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A1 x B2
    s = t0 * r22 - t2 * r02
    ra = a2 * q02 + a0 * q22
    rb = b0 * q11 + b1 * q10
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w0 * r22 - w2 * r02, r22, 0.0, -r02, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A2 x B0
    s = t1 * r00 - t0 * r10
    ra = a0 * q10 + a1 * q00
    rb = b1 * q22 + b2 * q21
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w1 * r00 - w0 * r10, -r10, r00, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A2 x B1
    s = t1 * r01 - t0 * r11
    ra = a0 * q11 + a1 * q01
    rb = b2 * q20 + b0 * q22
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w1 * r01 - w0 * r11, -r11, r01, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    # A2 x B2
    s = t1 * r02 - t0 * r12
    ra = a0 * q12 + a1 * q02
    rb = b0 * q21 + b1 * q20
    tf, tl, n0, n1, n2 = _update(-ra, ra, s - rb, s + rb, w1 * r02 - w0 * r12, -r12, r02, 0.0, tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
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
def _unit(n0, n1, n2):
    length = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if length > 0.0:
        return n0 / length, n1 / length, n2 / length
    return _NAN, _NAN, _NAN


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
    nx, ny, nz = _unit(m0, m1, m2)
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
            return _MISS_T
    for i in range(3):
        lo = min(P[i], min(P[3 + i], P[6 + i]))
        hi = max(P[i], max(P[3 + i], P[6 + i]))
        l0 = 1.0 if i == 0 else 0.0
        l1 = 1.0 if i == 1 else 0.0
        l2 = 1.0 if i == 2 else 0.0
        tf, tl, n0, n1, n2 = _update(-h[i], h[i], lo, hi, w[i], l0, l1, l2, tf, tl, n0, n1, n2)
        if tf > tl:
            return _MISS_T
    n = _cross(_edge(P, 0), _edge(P, 1))
    lo, hi = _proj(n, P)
    r = _box_radius(n, h)
    tf, tl, n0, n1, n2 = _update(-r, r, lo, hi, _dot(n, w), n[0], n[1], n[2], tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    for j in range(3):
        f = _edge(P, j)
        for i in range(3):
            L = _box_axis_cross_edge(i, f)
            lo, hi = _proj(L, P)
            r = _box_radius(L, h)
            tf, tl, n0, n1, n2 = _update(-r, r, lo, hi, _dot(L, w), L[0], L[1], L[2], tf, tl, n0, n1, n2)
            if tf > tl:
                return _MISS_T
    if tf > 0.0:
        return kinds.HIT, tf, n0, n1, n2
    return kinds.ALREADY_TOUCHING, 0.0, 0.0, 0.0, 0.0


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
    nx, ny, nz = _unit(m0, m1, m2)
    return status, tf, px, py, pz, nx, ny, nz


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
    return triangles_overlap(_load_tri(TA, i, ox, oy, oz), _load_tri(TB, j, ox, oy, oz))


@njit(cache=True, nogil=True)
def _tt_axis(L, A, B, v, tf, tl, n0, n1, n2):
    lo0, hi0 = _proj(L, A)
    lo1, hi1 = _proj(L, B)
    return _update(lo0, hi0, lo1, hi1, v, L[0], L[1], L[2], tf, tl, n0, n1, n2)


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
            return _MISS_T
        for j in range(i + 1, 8):
            dj = (D[j, 0], D[j, 1], D[j, 2])
            c = _cross(di, dj)
            tf, tl, n0, n1, n2 = _tt_axis(c, A, B, _dot(c, w), tf, tl, n0, n1, n2)
            if tf > tl:
                return _MISS_T
            for k in range(8):
                L = _cross(c, (D[k, 0], D[k, 1], D[k, 2]))
                tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
                if tf > tl:
                    return _MISS_T
    if tf > 0.0:
        return kinds.HIT, tf, n0, n1, n2
    return kinds.ALREADY_TOUCHING, 0.0, 0.0, 0.0, 0.0


@njit(cache=True, nogil=True)
def _tri_tri_toi_core(TA, i, va, TB, j, vb, t_max):
    """S1 4.2 in the TFirst <= TLast form (object 0 = A, object 1 = B moving at w = vb - va).
    Axes: W x E_i, W x F_j, N_A x W (speed 0, first: cheap rejections), N_A, N_B, E_i x F_j,
    N_A x E_i, N_B x F_j. For proper triangles these are the facet normals of K (edges E, F, W),
    plus the in-plane ones for parallel planes moving within their plane (K flat)."""
    ox = TA[i, 0, 0]
    oy = TA[i, 0, 1]
    oz = TA[i, 0, 2]
    A = _load_tri(TA, i, ox, oy, oz)
    B = _load_tri(TB, j, ox, oy, oz)
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
            return _MISS_T
    tf, tl, n0, n1, n2 = _tt_axis(nA, A, B, _dot(nA, w), tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    tf, tl, n0, n1, n2 = _tt_axis(nB, A, B, _dot(nB, w), tf, tl, n0, n1, n2)
    if tf > tl:
        return _MISS_T
    for i in range(3):
        ei = _edge(A, i)
        for j in range(3):
            L = _cross(ei, _edge(B, j))
            tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
            if tf > tl:
                return _MISS_T
    for i in range(3):
        L = _cross(nA, _edge(A, i))
        tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
        if tf > tl:
            return _MISS_T
        L = _cross(nB, _edge(B, i))
        tf, tl, n0, n1, n2 = _tt_axis(L, A, B, _dot(L, w), tf, tl, n0, n1, n2)
        if tf > tl:
            return _MISS_T
    if tf > 0.0:
        return kinds.HIT, tf, n0, n1, n2
    return kinds.ALREADY_TOUCHING, 0.0, 0.0, 0.0, 0.0


@njit(cache=True, nogil=True)
def triangle_triangle_time_of_impact(TA, i, va, TB, j, vb, t_max):
    """(status, time, px, py, pz, nx, ny, nz) as obb_obb_time_of_impact; normal A -> B."""
    status, tf, l0, l1, l2 = _tri_tri_toi_core(TA, i, va, TB, j, vb, t_max)
    if status == kinds.MISS:
        return status, _INF, _NAN, _NAN, _NAN, _NAN, _NAN, _NAN
    px, py, pz = triangle_triangle_contact_point(TA[i], va, TB[j], vb, tf)
    if status == kinds.ALREADY_TOUCHING:
        return status, 0.0, px, py, pz, _NAN, _NAN, _NAN
    nx, ny, nz = _unit(l0, l1, l2)
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
        va = _vertex(P, k)
        vb = _vertex(P, (k + 1) % 3)
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
        bj = _vertex(B, j)
        opp = _vertex(B, (j + 2) % 3)
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
    a = _vertex(P, 0)
    b = a
    for i in range(3):
        e = _edge(P, i)
        d = _dot(e, e)
        if d > best:
            best = d
            a = _vertex(P, i)
            b = _vertex(P, (i + 1) % 3)
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
    A = _load_tri(TA, i, o[0], o[1], o[2])
    B = _load_tri(TB, j, o[0], o[1], o[2])
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
                buf[k, 0], buf[k, 1], buf[k, 2] = _vertex(A, k)
            m = _clip_polygon(buf, 3, tmp, B, nA)
            if m > 0:
                return _finish_points(buf, m, out, o, tol)
        else:
            fa, sa_lo, xa_lo, sa_hi, xa_hi = _plane_cut(A, nB, _vertex(B, 0), D)
            fb, sb_lo, xb_lo, sb_hi, xb_hi = _plane_cut(B, nA, _vertex(A, 0), D)
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
        x0 = _vertex(X, 0)
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


# ---------------------------------------------------------------------------------------------
# batch drivers (pairs [lo, hi), the last two arguments, run on chunks by touche._parallel.run;
# a size-1 argument is broadcast by index 0)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def obb_obb_overlap_many(ca, ua, ha, cb, ub, hb, out, lo, hi):
    sa = 1 if ca.shape[0] > 1 else 0
    sb = 1 if cb.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * sa
        j = k * sb
        out[k] = obb_obb_overlap(ca, ua, ha, i, cb, ub, hb, j)


@njit(cache=True, nogil=True)
def triangle_obb_overlap_many(T, c, u, h, out, lo, hi):
    st = 1 if T.shape[0] > 1 else 0
    sb = 1 if c.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * st
        j = k * sb
        out[k] = triangle_obb_overlap(T, i, c, u, h, j)


@njit(cache=True, nogil=True)
def triangle_triangle_overlap_many(TA, TB, out, lo, hi):
    sa = 1 if TA.shape[0] > 1 else 0
    sb = 1 if TB.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * sa
        j = k * sb
        out[k] = triangle_triangle_overlap(TA, i, TB, j)


@njit(cache=True, nogil=True)
def triangle_triangle_intersection_many(TA, TB, kind, count, points, lo, hi):
    sa = 1 if TA.shape[0] > 1 else 0
    sb = 1 if TB.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * sa
        j = k * sb
        kd, m = triangle_triangle_intersection(TA, i, TB, j, points[k])
        kind[k] = kd
        count[k] = m


@njit(cache=True, nogil=True)
def _store_impact(k, res, status, time, point, normal):
    status[k] = res[0]
    time[k] = res[1]
    point[k, 0] = res[2]
    point[k, 1] = res[3]
    point[k, 2] = res[4]
    normal[k, 0] = res[5]
    normal[k, 1] = res[6]
    normal[k, 2] = res[7]


@njit(cache=True, nogil=True)
def obb_obb_time_of_impact_many(ca, ua, ha, va, cb, ub, hb, vb, t_max, status, time, point, normal, lo, hi):
    sa = 1 if ca.shape[0] > 1 else 0
    sb = 1 if cb.shape[0] > 1 else 0
    sva = 1 if va.shape[0] > 1 else 0
    svb = 1 if vb.shape[0] > 1 else 0
    st = 1 if t_max.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * sa
        j = k * sb
        res = obb_obb_time_of_impact(ca, ua, ha, i, va[k * sva], cb, ub, hb, j, vb[k * svb], t_max[k * st])
        _store_impact(k, res, status, time, point, normal)


@njit(cache=True, nogil=True)
def triangle_obb_time_of_impact_many(T, vt, c, u, h, vb, t_max, status, time, point, normal, lo, hi):
    st_ = 1 if T.shape[0] > 1 else 0
    sb = 1 if c.shape[0] > 1 else 0
    svt = 1 if vt.shape[0] > 1 else 0
    svb = 1 if vb.shape[0] > 1 else 0
    st = 1 if t_max.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * st_
        j = k * sb
        res = triangle_obb_time_of_impact(T, i, vt[k * svt], c, u, h, j, vb[k * svb], t_max[k * st])
        _store_impact(k, res, status, time, point, normal)


@njit(cache=True, nogil=True)
def triangle_triangle_time_of_impact_many(TA, va, TB, vb, t_max, status, time, point, normal, lo, hi):
    sa = 1 if TA.shape[0] > 1 else 0
    sb = 1 if TB.shape[0] > 1 else 0
    sva = 1 if va.shape[0] > 1 else 0
    svb = 1 if vb.shape[0] > 1 else 0
    st = 1 if t_max.shape[0] > 1 else 0
    for k in range(lo, hi):
        i = k * sa
        j = k * sb
        res = triangle_triangle_time_of_impact(TA, i, va[k * sva], TB, j, vb[k * svb], t_max[k * st])
        _store_impact(k, res, status, time, point, normal)


# ---------------------------------------------------------------------------------------------
# input validation (one pass, compiled: numpy temporaries cost more than the tests themselves)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def first_non_finite(a):
    """Flat index of the first NaN / inf of the C-contiguous array a, or -1."""
    flat = a.reshape(-1)
    for i in range(flat.shape[0]):
        if not np.isfinite(flat[i]):
            return i
    return -1


@njit(cache=True, nogil=True)
def check_boxes(u, h, tol):
    """(code, index) of the first invalid box: 1 = negative half extent, 2 = axes not
    orthonormal rows (|A_i . A_j - delta_ij| > tol); (0, -1) when all are valid."""
    for k in range(u.shape[0]):
        if k < h.shape[0]:
            if h[k, 0] < 0.0 or h[k, 1] < 0.0 or h[k, 2] < 0.0:
                return 1, k
    for k in range(u.shape[0]):
        for i in range(3):
            for j in range(i, 3):
                g = u[k, i, 0] * u[k, j, 0] + u[k, i, 1] * u[k, j, 1] + u[k, i, 2] * u[k, j, 2]
                if i == j:
                    g -= 1.0
                if abs(g) > tol:
                    return 2, k
    return 0, -1
