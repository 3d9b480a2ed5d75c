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

This module holds the batch drivers and the input checks; the tests live in sat_boxes.py
(OBB-OBB, triangle-OBB), sat_triangles.py (triangle-triangle) and sat_contact.py (shared tuple
helpers, contact points).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit
from touche._kernels.primitives.sat_boxes import obb_obb_overlap, obb_obb_time_of_impact, triangle_obb_overlap
from touche._kernels.primitives.sat_boxes import triangle_obb_time_of_impact
from touche._kernels.primitives.sat_triangles import triangle_triangle_intersection, triangle_triangle_overlap
from touche._kernels.primitives.sat_triangles import triangle_triangle_time_of_impact


# ---------------------------------------------------------------------------------------------
# batch drivers (pairs [lo, hi), the last two arguments, run on chunks by touche._parallel.run;
# a size-1 argument is broadcast by index 0)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _row(k, a):
    """The row of a for pair k: a size-1 argument is broadcast (row 0 for every pair)."""
    return k if a.shape[0] > 1 else 0


@njit(cache=True, nogil=True)
def obb_obb_overlap_many(ca, ua, ha, cb, ub, hb, out, lo, hi):
    for k in range(lo, hi):
        out[k] = obb_obb_overlap(ca, ua, ha, _row(k, ca), cb, ub, hb, _row(k, cb))


@njit(cache=True, nogil=True)
def triangle_obb_overlap_many(T, c, u, h, out, lo, hi):
    for k in range(lo, hi):
        out[k] = triangle_obb_overlap(T, _row(k, T), c, u, h, _row(k, c))


@njit(cache=True, nogil=True)
def triangle_triangle_overlap_many(TA, TB, out, lo, hi):
    for k in range(lo, hi):
        out[k] = triangle_triangle_overlap(TA, _row(k, TA), TB, _row(k, TB))


@njit(cache=True, nogil=True)
def triangle_triangle_intersection_many(TA, TB, kind, count, points, lo, hi):
    for k in range(lo, hi):
        kd, m = triangle_triangle_intersection(TA, _row(k, TA), TB, _row(k, TB), points[k])
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
    for k in range(lo, hi):
        res = obb_obb_time_of_impact(ca, ua, ha, _row(k, ca), va[_row(k, va)],
                                     cb, ub, hb, _row(k, cb), vb[_row(k, vb)], t_max[_row(k, t_max)])
        _store_impact(k, res, status, time, point, normal)


@njit(cache=True, nogil=True)
def triangle_obb_time_of_impact_many(T, vt, c, u, h, vb, t_max, status, time, point, normal, lo, hi):
    for k in range(lo, hi):
        res = triangle_obb_time_of_impact(T, _row(k, T), vt[_row(k, vt)],
                                          c, u, h, _row(k, c), vb[_row(k, vb)], t_max[_row(k, t_max)])
        _store_impact(k, res, status, time, point, normal)


@njit(cache=True, nogil=True)
def triangle_triangle_time_of_impact_many(TA, va, TB, vb, t_max, status, time, point, normal, lo, hi):
    for k in range(lo, hi):
        res = triangle_triangle_time_of_impact(TA, _row(k, TA), va[_row(k, va)],
                                               TB, _row(k, TB), vb[_row(k, vb)], t_max[_row(k, t_max)])
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
