"""Generic separating-axis test for convex polytopes with penetration depth.

Seed: Ericson 5.2.1 (separating-axis test) and 5.2.1.1 (robustness of the SAT).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

# |ea x eb|^2 <= _PARALLEL * |ea|^2 |eb|^2  (sin^2 of the angle <= 1e-12) => skip the axis.
_PARALLEL = 1e-12


@njit(cache=True, nogil=True)
def project_extent(verts, count, lx, ly, lz):
    """[min, max] of l . v over the first ``count`` rows v of ``verts``."""
    lo = np.inf
    hi = -np.inf
    for i in range(count):
        p = verts[i, 0] * lx + verts[i, 1] * ly + verts[i, 2] * lz
        if p < lo:
            lo = p
        if p > hi:
            hi = p
    return lo, hi


@njit(cache=True, nogil=True)
def sat_axes_flat(verts_poly, normal):
    """Face normal plus in-plane side normals n x e_i of a flat convex polygon (k,3).

    Row 0 is `normal` (normalised); rows 1..k are unit n x (v_{i+1} - v_i) (zero rows for
    zero-length edges; sat_convex skips zero axes). Orientation is irrelevant to sat_convex.
    Returns an array (k+1, 3).
    """
    k = verts_poly.shape[0]
    out = np.zeros((k + 1, 3))
    nl = np.sqrt(normal[0] ** 2 + normal[1] ** 2 + normal[2] ** 2)
    if nl > 0.0:
        out[0, 0] = normal[0] / nl
        out[0, 1] = normal[1] / nl
        out[0, 2] = normal[2] / nl
    n0 = out[0, 0]
    n1 = out[0, 1]
    n2 = out[0, 2]
    for i in range(k):
        j = (i + 1) % k
        ex = verts_poly[j, 0] - verts_poly[i, 0]
        ey = verts_poly[j, 1] - verts_poly[i, 1]
        ez = verts_poly[j, 2] - verts_poly[i, 2]
        cx = n1 * ez - n2 * ey
        cy = n2 * ex - n0 * ez
        cz = n0 * ey - n1 * ex
        cl = np.sqrt(cx * cx + cy * cy + cz * cz)
        if cl > 0.0:
            out[i + 1, 0] = cx / cl
            out[i + 1, 1] = cy / cl
            out[i + 1, 2] = cz / cl
    return out


@njit(cache=True, nogil=True, inline="always")
def _edge_pair_axis(edges_a, i, edges_b, j):
    """(ea x eb, whether it is a candidate axis): not when the edges are parallel or nearly
    (|ea x eb|^2 <= _PARALLEL |ea|^2 |eb|^2; see sat_convex)."""
    ax = edges_a[i, 0]
    ay = edges_a[i, 1]
    az = edges_a[i, 2]
    ex = edges_b[j, 0]
    ey = edges_b[j, 1]
    ez = edges_b[j, 2]
    cx = ay * ez - az * ey
    cy = az * ex - ax * ez
    cz = ax * ey - ay * ex
    cc = cx * cx + cy * cy + cz * cz
    return cx, cy, cz, not cc <= _PARALLEL * (ax * ax + ay * ay + az * az) * (ex * ex + ey * ey + ez * ez)


@njit(cache=True, nogil=True)
def _test_axis(lx, ly, lz, verts_a, verts_b, best, bx, by, bz):
    """Normalise the axis, project both sets, update the running best (max gap)."""
    ll = np.sqrt(lx * lx + ly * ly + lz * lz)
    if not ll > 0.0:
        return best, bx, by, bz
    lx /= ll
    ly /= ll
    lz /= ll
    mina, maxa = project_extent(verts_a, verts_a.shape[0], lx, ly, lz)
    minb, maxb = project_extent(verts_b, verts_b.shape[0], lx, ly, lz)
    g1 = minb - maxa  # B on the + side
    g2 = mina - maxb  # B on the - side
    if g1 >= g2:
        g = g1
        sx, sy, sz = lx, ly, lz
    else:
        g = g2
        sx, sy, sz = -lx, -ly, -lz
    if g > best:
        return g, sx, sy, sz
    return best, bx, by, bz


@njit(cache=True, nogil=True)
def sat_convex(verts_a, edges_a, normals_a, verts_b, edges_b, normals_b):
    """Separating-axis test with signed separation (Ericson 5.2.1, 5.2.1.1).

    Inputs: verts (n,3), edges (m,3) edge DIRECTION vectors (any length; may be empty),
    normals (k,3) face normals (any orientation, zero rows ignored; may be empty), float64.

    Candidate axes: every normal of A, every normal of B, every ea x eb that is not near-zero.
    For each unit axis L: gap(L) = max(minB - maxA, minA - maxB).

    Returns (separation, axis):
      separation = max over candidates of gap(L): > 0 separated (along `axis`), = 0 touching,
        < 0 overlapping; then -separation is the penetration depth (minimum translation
        distance) provided the candidate set is complete (see below).
      axis = unit axis attaining it, oriented from A towards B: the midpoint of B's projected
        interval is >= A's (when overlapping, translating B by -separation * axis separates).
      If no candidate axis exists: (-inf, zeros) -- nothing can separate.

    Skipping near-parallel edge pairs: for exactly parallel edges ea x eb is null, and the
    pair contributes no facet to the Minkowski difference B - A (two parallel edges sum to an
    edge), so every facet normal of B - A is still a face normal of A or B or a non-null edge
    cross product: the set stays complete when the face-normal lists are complete. For
    near-parallel pairs (sin angle <= 1e-6) the facet they span is a sliver whose normal is
    numerically meaningless (Ericson 4.4.2 / 5.2.1.1); skipping it can only under-estimate
    the separation (never claim a false separation).

    What callers must pass so that the candidate set is complete (facet normals of B - A):
      - solid polytope: all its face normals and all its edge directions (box: 3 + 3).
      - flat convex polygon / triangle: normals = sat_axes_flat(verts, normal) (face normal
        plus in-plane side normals n x e_i, needed when the other shape is coplanar or flat),
        edges = its edge directions.
      - segment: edges = [b - a]; normals = none against a solid polytope; against a flat
        shape with normal n, normals = [n x (b - a)] (if nonzero) so that the coplanar case
        has the in-plane normal of the segment.
      - for two flat shapes (triangle vs triangle, polygon vs segment) pass the above for
        both; with parallel planes the Minkowski difference is flat and its boundary normals
        are the in-plane normals n x e of both shapes, which the lists then contain.
    """
    best = -np.inf
    bx = 0.0
    by = 0.0
    bz = 0.0
    for i in range(normals_a.shape[0]):
        best, bx, by, bz = _test_axis(normals_a[i, 0], normals_a[i, 1], normals_a[i, 2],
                                      verts_a, verts_b, best, bx, by, bz)
    for i in range(normals_b.shape[0]):
        best, bx, by, bz = _test_axis(normals_b[i, 0], normals_b[i, 1], normals_b[i, 2],
                                      verts_a, verts_b, best, bx, by, bz)
    for i in range(edges_a.shape[0]):
        for j in range(edges_b.shape[0]):
            cx, cy, cz, candidate = _edge_pair_axis(edges_a, i, edges_b, j)
            if candidate:  # parallel edges are not: see docstring
                best, bx, by, bz = _test_axis(cx, cy, cz, verts_a, verts_b, best, bx, by, bz)
    axis = np.empty(3)
    axis[0] = bx
    axis[1] = by
    axis[2] = bz
    return best, axis



@njit(cache=True, nogil=True)
def _better_axis(s, radii, length, lx, ly, lz, best, bx, by, bz):
    """One candidate of obb_obb_depth_relative: centre distance ``s`` along the axis (lx, ly,
    lz) of length ``length``, projected radii ``radii`` (both scaled by the length); the gap on
    the unit axis oriented towards B replaces the running best if larger (sat_convex's order:
    the first of equal gaps stays)."""
    gap = (abs(s) - radii) / length
    if gap > best:
        if s >= 0.0:  # B's interval midpoint on the + side (sat_convex: g1 >= g2)
            return gap, lx / length, ly / length, lz / length
        return gap, -lx / length, -ly / length, -lz / length
    return best, bx, by, bz


@njit(cache=True, nogil=True)
def obb_obb_depth_relative(t, R, a, b, early_out):
    """sat_convex for two boxes, from box B in box A's frame (overlap.box_frame_columns: t, R
    with R[3 i + j] = A_i . B_j; a, b half extents): the same 15 candidate axes in the same order
    (A's faces, B's faces, the edge pairs A_i x B_j, near-parallel pairs skipped by the same
    sin^2 <= 1e-12 rule), each projected through the centres and radii (Ericson 4.4.1's
    expressions: |R_ij| for B's axes on A's and the edge axes' radii through B's orthonormal
    axes) instead of 16 vertex dot products. Returns (separation, (l0, l1, l2)): the axis unit,
    in A's frame, oriented from A towards B; separation < 0 is minus the penetration depth
    (Ericson 5.2.1: for two polytopes the face normals and edge cross products are every facet
    normal of B - A). With ``early_out``, when a face axis separates the boxes the largest face
    gap is returned before the edge axes are tried, with ``by_face`` True: the separation is
    then > 0 but may be less than the SAT's (an edge axis may separate more)."""
    t0, t1, t2 = t
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    a0 = a[0]
    a1 = a[1]
    a2 = a[2]
    b0 = b[0]
    b1 = b[1]
    b2 = b[2]
    q00 = abs(r00)
    q01 = abs(r01)
    q02 = abs(r02)
    q10 = abs(r10)
    q11 = abs(r11)
    q12 = abs(r12)
    q20 = abs(r20)
    q21 = abs(r21)
    q22 = abs(r22)
    best = -np.inf
    bx = 0.0
    by = 0.0
    bz = 0.0
    # A's faces
    best, bx, by, bz = _better_axis(t0, a0 + b0 * q00 + b1 * q01 + b2 * q02, 1.0, 1.0, 0.0, 0.0, best, bx, by, bz)
    best, bx, by, bz = _better_axis(t1, a1 + b0 * q10 + b1 * q11 + b2 * q12, 1.0, 0.0, 1.0, 0.0, best, bx, by, bz)
    best, bx, by, bz = _better_axis(t2, a2 + b0 * q20 + b1 * q21 + b2 * q22, 1.0, 0.0, 0.0, 1.0, best, bx, by, bz)
    # B's faces: the columns of R
    best, bx, by, bz = _better_axis(t0 * r00 + t1 * r10 + t2 * r20, a0 * q00 + a1 * q10 + a2 * q20 + b0, 1.0,
                                    r00, r10, r20, best, bx, by, bz)
    best, bx, by, bz = _better_axis(t0 * r01 + t1 * r11 + t2 * r21, a0 * q01 + a1 * q11 + a2 * q21 + b1, 1.0,
                                    r01, r11, r21, best, bx, by, bz)
    best, bx, by, bz = _better_axis(t0 * r02 + t1 * r12 + t2 * r22, a0 * q02 + a1 * q12 + a2 * q22 + b2, 1.0,
                                    r02, r12, r22, best, bx, by, bz)
    if early_out and best > 0.0:
        return best, (bx, by, bz), True
    # edge pairs A_i x B_j = e_i x (r0j, r1j, r2j); squared length = the two other entries of column j
    squared = r20 * r20 + r10 * r10  # A0 x B0 = (0, -r20, r10)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t2 * r10 - t1 * r20, a1 * q20 + a2 * q10 + b1 * q02 + b2 * q01,
                                        np.sqrt(squared), 0.0, -r20, r10, best, bx, by, bz)
    squared = r21 * r21 + r11 * r11  # A0 x B1 = (0, -r21, r11)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t2 * r11 - t1 * r21, a1 * q21 + a2 * q11 + b2 * q00 + b0 * q02,
                                        np.sqrt(squared), 0.0, -r21, r11, best, bx, by, bz)
    squared = r22 * r22 + r12 * r12  # A0 x B2 = (0, -r22, r12)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t2 * r12 - t1 * r22, a1 * q22 + a2 * q12 + b0 * q01 + b1 * q00,
                                        np.sqrt(squared), 0.0, -r22, r12, best, bx, by, bz)
    squared = r20 * r20 + r00 * r00  # A1 x B0 = (r20, 0, -r00)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t0 * r20 - t2 * r00, a2 * q00 + a0 * q20 + b1 * q12 + b2 * q11,
                                        np.sqrt(squared), r20, 0.0, -r00, best, bx, by, bz)
    squared = r21 * r21 + r01 * r01  # A1 x B1 = (r21, 0, -r01)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t0 * r21 - t2 * r01, a2 * q01 + a0 * q21 + b2 * q10 + b0 * q12,
                                        np.sqrt(squared), r21, 0.0, -r01, best, bx, by, bz)
    squared = r22 * r22 + r02 * r02  # A1 x B2 = (r22, 0, -r02)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t0 * r22 - t2 * r02, a2 * q02 + a0 * q22 + b0 * q11 + b1 * q10,
                                        np.sqrt(squared), r22, 0.0, -r02, best, bx, by, bz)
    squared = r10 * r10 + r00 * r00  # A2 x B0 = (-r10, r00, 0)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t1 * r00 - t0 * r10, a0 * q10 + a1 * q00 + b1 * q22 + b2 * q21,
                                        np.sqrt(squared), -r10, r00, 0.0, best, bx, by, bz)
    squared = r11 * r11 + r01 * r01  # A2 x B1 = (-r11, r01, 0)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t1 * r01 - t0 * r11, a0 * q11 + a1 * q01 + b2 * q20 + b0 * q22,
                                        np.sqrt(squared), -r11, r01, 0.0, best, bx, by, bz)
    squared = r12 * r12 + r02 * r02  # A2 x B2 = (-r12, r02, 0)
    if squared > _PARALLEL:
        best, bx, by, bz = _better_axis(t1 * r02 - t0 * r12, a0 * q12 + a1 * q02 + b0 * q21 + b1 * q20,
                                        np.sqrt(squared), -r12, r02, 0.0, best, bx, by, bz)
    return best, (bx, by, bz), False


@njit(cache=True, nogil=True)
def _axis_separates(lx, ly, lz, verts_a, verts_b):
    """Whether _test_axis's gap along (lx, ly, lz) is > 0: the same normalisation and projections."""
    ll = np.sqrt(lx * lx + ly * ly + lz * lz)
    if not ll > 0.0:
        return False
    lx /= ll
    ly /= ll
    lz /= ll
    mina, maxa = project_extent(verts_a, verts_a.shape[0], lx, ly, lz)
    minb, maxb = project_extent(verts_b, verts_b.shape[0], lx, ly, lz)
    return minb - maxa > 0.0 or mina - maxb > 0.0


@njit(cache=True, nogil=True)
def sat_convex_separated(verts_a, edges_a, normals_a, verts_b, edges_b, normals_b):
    """Whether sat_convex's separation is > 0 (same inputs): the same candidate axes with the
    same arithmetic, stopping at the first that separates -- a boolean needs no depth, and most
    pairs a boolean query meets are apart along one of the first axes."""
    for i in range(normals_b.shape[0]):  # a mesh triangle's normal and sides: few, and often decisive
        if _axis_separates(normals_b[i, 0], normals_b[i, 1], normals_b[i, 2], verts_a, verts_b):
            return True
    for i in range(normals_a.shape[0]):
        if _axis_separates(normals_a[i, 0], normals_a[i, 1], normals_a[i, 2], verts_a, verts_b):
            return True
    for i in range(edges_a.shape[0]):
        for j in range(edges_b.shape[0]):
            cx, cy, cz, candidate = _edge_pair_axis(edges_a, i, edges_b, j)
            if candidate and _axis_separates(cx, cy, cz, verts_a, verts_b):
                return True
    return False
