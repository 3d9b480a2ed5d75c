"""The pair engine's polytope pairs (pairs.py dispatches to them): two convex polytopes by
their exact SAT depth and closest features (Ericson 4.4 / 5.2.1 style separating axes).

Result convention: see pairs.py.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()

from touche._kernels.base.jit import njit

from touche import tolerance

from touche._kernels.base import kinds
from touche._kernels.primitives.closest import closest_points_triangle_triangle, segment_pair_gap
from touche._kernels.primitives.overlap import test_obb_obb, test_triangle_obb, test_triangle_triangle
from touche._kernels.primitives.sat import sat_convex
from touche._kernels.base.vec import dot as _dot
from touche._kernels.base.vec import norm as _norm
from touche._kernels.narrow.pair_closed import box_frame, nan3, polytope_counts, support, vertex_gap


OBB_EPSILON = tolerance.OBB_EPSILON  # Ericson 4.4.2 robustness term


# ----------------------------------------------------------------------------------------------
# polytope vs polytope
@njit(cache=True, nogil=True)
def _polytope_sat(kind_a, params_a, points_a, kind_b, params_b, points_b):
    nva, npa, nda, nsa = polytope_counts(params_a)
    nvb, npb, ndb, nsb = polytope_counts(params_b)
    return sat_convex(
        points_a[:nva], points_a[nva + npa : nva + npa + nda], points_a[nva : nva + nsa],
        points_b[:nvb], points_b[nvb + npb : nvb + npb + ndb], points_b[nvb : nvb + nsb],
    )


@njit(cache=True, nogil=True)
def _polytope_features(kind_a, params_a, points_a, tris_a, edges_a, kind_b, params_b, points_b, tris_b, edges_b, axis):
    """Closest points of two disjoint convex polytopes: vertex-solid both ways and edge-edge.

    ``axis`` is a separating axis (unit, A towards B). Every feature pair is at least as far
    apart as the gap between their projections on it, so a pair whose projection gap already
    exceeds the best distance found is skipped; features are visited deepest-first along the
    axis so that the best distance drops early. The answer is the same as the full enumeration.
    """
    nva = int(params_a[0])
    nvb = int(params_b[0])
    proj_a = np.empty(nva)
    proj_b = np.empty(nvb)
    for i in range(nva):
        proj_a[i] = _dot(points_a[i], axis)
    for i in range(nvb):
        proj_b[i] = _dot(points_b[i], axis)
    order_a = np.argsort(-proj_a)  # A's vertices nearest to B first
    order_b = np.argsort(proj_b)  # B's vertices nearest to A first
    max_a = proj_a[order_a[0]]
    min_b = proj_b[order_b[0]]
    best = np.inf
    best_dist = np.inf
    point_a = points_a[order_a[0]].copy()
    point_b = points_b[order_b[0]].copy()
    for k in range(max(nva, nvb)):
        if k < nva:
            i = order_a[k]
            if min_b - proj_a[i] < best_dist:
                q, d2 = vertex_gap(points_a[i], kind_b, params_b, points_b, tris_b)
                if d2 < best:
                    best = d2
                    best_dist = np.sqrt(d2)
                    point_a = points_a[i].copy()
                    point_b = q
        if k < nvb:
            i = order_b[k]
            if proj_b[i] - max_a < best_dist:
                q, d2 = vertex_gap(points_b[i], kind_a, params_a, points_a, tris_a)
                if d2 < best:
                    best = d2
                    best_dist = np.sqrt(d2)
                    point_a = q
                    point_b = points_b[i].copy()
    dir_a = np.empty(3)
    dir_b = np.empty(3)
    for i in range(edges_a.shape[0]):
        ia = edges_a[i, 0]
        ja = edges_a[i, 1]
        top_a = max(proj_a[ia], proj_a[ja])
        if min_b - top_a >= best_dist:
            continue
        a0 = points_a[ia]
        a1 = points_a[ja]
        for m in range(3):
            dir_a[m] = a1[m] - a0[m]
        for j in range(edges_b.shape[0]):
            ib = edges_b[j, 0]
            jb = edges_b[j, 1]
            if min(proj_b[ib], proj_b[jb]) - top_a >= best_dist:
                continue
            b0 = points_b[ib]
            b1 = points_b[jb]
            for m in range(3):
                dir_b[m] = b1[m] - b0[m]
            s, t, d2 = segment_pair_gap(a0, dir_a, b0, dir_b)
            if d2 < best:
                best = d2
                best_dist = np.sqrt(d2)
                point_a = a0 + s * dir_a
                point_b = b0 + t * dir_b
    return point_a, point_b


@njit(cache=True, nogil=True)
def polytope_vs_polytope(kind_a, params_a, points_a, tris_a, edges_a,
                          kind_b, params_b, points_b, tris_b, edges_b, boolean):
    # boolean fast paths with dedicated tests
    if boolean:
        if kind_a == kinds.BOX and kind_b == kinds.BOX:
            center_a, axes_a, half_a = box_frame(params_a, points_a)
            center_b, axes_b, half_b = box_frame(params_b, points_b)
            hit = test_obb_obb(center_a, axes_a, half_a, center_b, axes_b, half_b, OBB_EPSILON)
            return -1.0 if hit else 1.0, nan3(), nan3(), nan3()
        if kind_a == kinds.TRIANGLE and kind_b == kinds.TRIANGLE:
            hit = test_triangle_triangle(points_a[0], points_a[1], points_a[2], points_b[0], points_b[1], points_b[2])
            return -1.0 if hit else 1.0, nan3(), nan3(), nan3()
        if kind_a == kinds.TRIANGLE and kind_b == kinds.BOX:
            center_b, axes_b, half_b = box_frame(params_b, points_b)
            hit = test_triangle_obb(points_a[0], points_a[1], points_a[2], center_b, axes_b, half_b)
            return -1.0 if hit else 1.0, nan3(), nan3(), nan3()
        separation, axis = _polytope_sat(kind_a, params_a, points_a, kind_b, params_b, points_b)
        return separation, nan3(), nan3(), axis
    if kind_a == kinds.TRIANGLE and kind_b == kinds.TRIANGLE:
        c1, c2 = closest_points_triangle_triangle(
            points_a[0], points_a[1], points_a[2], points_b[0], points_b[1], points_b[2]
        )
        delta = c2 - c1
        dist = _norm(delta)
        if dist > 0.0:
            return dist, c1, c2, delta / dist
    separation, axis = _polytope_sat(kind_a, params_a, points_a, kind_b, params_b, points_b)
    if separation > 0.0:
        point_a, point_b = _polytope_features(
            kind_a, params_a, points_a, tris_a, edges_a, kind_b, params_b, points_b, tris_b, edges_b, axis
        )
        delta = point_b - point_a
        dist = _norm(delta)
        if dist > 0.0:
            return dist, point_a, point_b, delta / dist
        return 0.0, point_a, point_b, axis
    point_a = support(kind_a, params_a, points_a, axis)
    point_b = support(kind_b, params_b, points_b, -axis)
    return separation, point_a, point_b, axis
