"""Clearance between triangle meshes: the STL triangle-triangle strategy (seed S3, Nathan 2015)
done right, over a compiled bounding-volume tree.

S3's pipeline, and where this file deviates from the printed seed:
  data prep   per triangle, in the part's own frame (``TRI_*`` columns below): the vertices, the
              unit normal, the unit in-plane edge normals nE_i = (E_i / |E_i|) x n (outward for
              counter-clockwise winding), the centroid sphere (centre = centroid, radius = farthest
              vertex; S3 prefers it to the circumsphere) and two flags: PROPER (corners not
              collinear, decided exactly) and NORMAL_OK (sin^2 of the angle at V0 above 1e-24, so
              that the unit normal is accurate enough for vertex-face distances).
  step 1      prefilter. S3 tests the centroid spheres of all pairs (O(N M)) or searches an
              octree; here both parts' bounding-volume trees (touche.bvh: the same tree every
              mesh query uses, built once per mesh) are descended at once, pruning a node pair
              when a lower bound of its distance (spheres and oriented boxes: separating axes,
              Ericson 4.4.1; then the nodes' swept-sphere rectangles, bvh_bounds.rss_pair_bound)
              is not below the best distance so far (branch and bound, Ericson 6.3; the nearer
              child pair is searched first). Crossing parts are found first by a boolean
              descent under the same boxes (step 2 at its leaves). Nodes of at most DIRECT_LEAF
              triangles act as leaves (Ericson 6.3.4). At a leaf pair S3's sphere test comes
              first, then a separating-axis gap of the two triangles (centroid line and both
              normals), which also proves most pairs disjoint so that step 2 is skipped for them.
  step 2      edge-plane crossing plus point-in-triangle, for the edges of each triangle against
              the other one. Deviations: signs come from exact orient3d / orient2d predicates
              (erratum S3 L77: adding eps to the denominator can flip signs; an eps-inclusive
              test is not exact either); the crossing point lies in the triangle iff the three
              triple products [p q a b], [p q b c], [p q c a] do not have strictly opposite signs
              (Ericson 5.3.4), which is the same test without forming the point; an edge lying in
              the other triangle's plane (and fully coplanar triangles, which S3 step 2c skips:
              erratum S3 L22) is decided in 2D on the projection where that triangle is not
              degenerate (segment-triangle: an endpoint inside or an edge crossing).
  step 3      minimum separation of a disjoint pair: vertex-face for the 6 vertices whose
              projection falls inside the other triangle (the edge-normal test of S3 step 2.2)
              and the 9 edge-edge pairs by Ericson 5.1.9 (erratum S3 L174: S3 clamps the two edge
              parameters independently, which is wrong; 5.1.9 recomputes one from the clamped
              other). With correct clamping the vertex-vertex candidates of S3 step 3.3 are
              edge-edge candidates already. The distance vector goes from triangle 2 (part B) to
              triangle 1 (part A), as in S3.

Conventions: part A's frame is the working frame; ``rot``, ``trans`` map B's frame into A's
(x_A = rot @ x_B + trans). Trees are touche.bvh's flat arrays (layout: bvh_volumes.py):
``node_index (n, 3)`` int64 rows ``[first, count, right]`` in preorder (left child = next row,
right == -1 at a leaf), ``node_bounds (n, NODE_FLOATS)``; beside them ``tri (m, TRI_WIDTH)``, the
S3 data of the tree's triangles in tree order, and ``tri_ids (m,)`` their indices in the mesh.
Several parts concatenate into one set of arrays (indices made global) and are named by their
root rows.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402

from touche._kernels.trees.bvh_volumes import SPHERE_CENTER, SPHERE_RADIUS  # noqa: E402
from touche._kernels.trees.bvh_descent import child_pairs, is_direct_leaf, push_nearer_last  # noqa: E402
from touche._kernels.trees.bvh_descent import relative_rotation_translation  # noqa: E402
from touche._kernels.trees.bvh_bounds import obb_pair_gap, pair_lower_bound  # noqa: E402
from touche._kernels.base.predicates import orient2d, orient3d  # noqa: E402
from touche._kernels.primitives.tri_distance import segment_segment  # noqa: E402

# per-triangle columns
TRI_V = 0            # 0:9 vertices V0, V1, V2
TRI_N = 9            # 9:12 unit normal (zeros unless NORMAL_OK)
TRI_EN = 12          # 12:21 unit edge normals nE0, nE1, nE2 (edge i runs from V_i to V_i+1)
TRI_C = 21           # 21:24 centroid
TRI_R = 24           # bounding radius about the centroid
TRI_PROPER = 25      # 1.0 when the corners are not collinear (exact)
TRI_NORMAL_OK = 26   # 1.0 when the unit normal is accurate (sin^2 of the angle at V0 > NORMAL_SIN2_MIN)
TRI_WIDTH = 27

# result rows of the query drivers: out_real (n, OUT_REAL_WIDTH), out_int (n, OUT_INT_WIDTH)
OUT_DISTANCE = 0     # out_real: distance (inf when nothing lies within max_distance)
OUT_POINT_A = 1      # out_real 1:4, closest point on A (world)
OUT_POINT_B = 4      # out_real 4:7, closest point on B (world)
OUT_REAL_WIDTH = 7
OUT_HIT = 0          # out_int: 1 when intersecting
OUT_TRIANGLE_A = 1   # out_int: face of A (-1 beyond max_distance)
OUT_TRIANGLE_B = 2
OUT_NODE_PAIRS = 3   # out_int: work counters
OUT_TRIANGLE_PAIRS = 4
OUT_INT_WIDTH = 5
NORMAL_SIN2_MIN = 1e-24  # below it a sliver takes edge-edge candidates only (they bound it to ~1e-12 size)
# Lower bounds (node pairs, triangle pairs) are lowered by this fraction of the coordinates
# involved, so that the rounding of the rotation cannot prune a pair that touches (bounds stay
# conservative; the trees' volumes are padded for the rounding of their fit, bvh_volumes.py).
BOUND_SLACK = 1e-12
# Nodes of at most this many triangles are tested as leaves (their triangles pair by pair). The
# S3 leaf test costs a few times touche.bvh's triangle distance, most pairs at a leaf are pruned
# by the sphere and separating-axis gaps first, and the tree below 4-8 triangles prunes little
# (bvh_descent.DIRECT_LEAF_DISTANCE is 8: its leaf pairs are pruned along the closest pair's
# direction first, which this search does not do).
DIRECT_LEAF = 6


# ------------------------------------------------------------------------------------------
# preparation
@njit(cache=True, nogil=True)
def _collinear(a0, a1, a2, b0, b1, b2, c0, c1, c2):
    """Exact: the cross product (b-a) x (c-a) is zero iff its three components - the orient2d
    determinants of the projections on the coordinate planes - are zero."""
    return (orient2d(a0, a1, b0, b1, c0, c1) == 0.0 and orient2d(a1, a2, b1, b2, c1, c2) == 0.0
            and orient2d(a2, a0, b2, b0, c2, c0) == 0.0)


@njit(cache=True, nogil=True)
def triangle_rows(tri_vertices, tri):
    """S3 data prep: fill ``tri[k]`` for the triangle ``tri_vertices[k]`` ((m, 3, 3), a tree's
    triangles in tree order)."""
    for k in range(tri_vertices.shape[0]):
        for c in range(3):
            for d in range(3):
                tri[k, TRI_V + 3 * c + d] = tri_vertices[k, c, d]
        _fill_row(tri[k])


@njit(cache=True, nogil=True)
def _fill_row(row):
    """The S3 data of one triangle whose vertices are in row[0:9]."""
    a0, a1, a2 = row[0], row[1], row[2]
    b0, b1, b2 = row[3], row[4], row[5]
    c0, c1, c2 = row[6], row[7], row[8]
    ab0, ab1, ab2 = b0 - a0, b1 - a1, b2 - a2
    ac0, ac1, ac2 = c0 - a0, c1 - a1, c2 - a2
    n0 = ab1 * ac2 - ab2 * ac1
    n1 = ab2 * ac0 - ab0 * ac2
    n2 = ab0 * ac1 - ab1 * ac0
    nn = n0 * n0 + n1 * n1 + n2 * n2
    ok = nn > 0.0 and nn > NORMAL_SIN2_MIN * (ab0 * ab0 + ab1 * ab1 + ab2 * ab2) * (ac0 * ac0 + ac1 * ac1 + ac2 * ac2)
    for d in range(12):
        row[TRI_N + d] = 0.0
    if ok:
        inv = 1.0 / np.sqrt(nn)
        n0 *= inv
        n1 *= inv
        n2 *= inv
        row[TRI_N] = n0
        row[TRI_N + 1] = n1
        row[TRI_N + 2] = n2
        for e in range(3):
            s = 3 * e
            t = 3 * ((e + 1) % 3)
            e0 = row[t] - row[s]
            e1 = row[t + 1] - row[s + 1]
            e2 = row[t + 2] - row[s + 2]
            length = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2)  # > 0: the triangle is not degenerate
            e0 /= length
            e1 /= length
            e2 /= length
            row[TRI_EN + s] = e1 * n2 - e2 * n1
            row[TRI_EN + s + 1] = e2 * n0 - e0 * n2
            row[TRI_EN + s + 2] = e0 * n1 - e1 * n0
    m0 = (a0 + b0 + c0) / 3.0
    m1 = (a1 + b1 + c1) / 3.0
    m2 = (a2 + b2 + c2) / 3.0
    row[TRI_C] = m0
    row[TRI_C + 1] = m1
    row[TRI_C + 2] = m2
    r2 = 0.0
    for c in range(3):
        d0 = row[3 * c] - m0
        d1 = row[3 * c + 1] - m1
        d2 = row[3 * c + 2] - m2
        r2 = max(r2, d0 * d0 + d1 * d1 + d2 * d2)
    row[TRI_R] = np.sqrt(r2) * (1.0 + 1e-15)
    row[TRI_PROPER] = 0.0 if _collinear(a0, a1, a2, b0, b1, b2, c0, c1, c2) else 1.0
    row[TRI_NORMAL_OK] = 1.0 if ok else 0.0


# ------------------------------------------------------------------------------------------
# S3 step 2: exact edge-plane crossing plus point-in-triangle
@njit(cache=True, nogil=True)
def _inside_2d(T, i, j, x):
    """x (3,) in the closed triangle T projected on coordinates (i, j); T's projection is not
    degenerate. The three orientations sum to T's, so 'none of them strictly opposite' is exact."""
    s0 = orient2d(T[0, i], T[0, j], T[1, i], T[1, j], x[i], x[j])
    s1 = orient2d(T[1, i], T[1, j], T[2, i], T[2, j], x[i], x[j])
    s2 = orient2d(T[2, i], T[2, j], T[0, i], T[0, j], x[i], x[j])
    return (s0 >= 0.0 and s1 >= 0.0 and s2 >= 0.0) or (s0 <= 0.0 and s1 <= 0.0 and s2 <= 0.0)


@njit(cache=True, nogil=True)
def _on_segment_2d(a, b, x, i, j):
    """x collinear with ab (projected): inside ab's bounding box means on the segment (exact)."""
    return (min(a[i], b[i]) <= x[i] <= max(a[i], b[i])) and (min(a[j], b[j]) <= x[j] <= max(a[j], b[j]))


@njit(cache=True, nogil=True, inline="always")
def _end_on_segment_2d(d, a, b, x, i, j, witness):
    """The end point x of one segment, collinear with ab (orientation d == 0), lies on ab:
    written to witness."""
    if d == 0.0 and _on_segment_2d(a, b, x, i, j):
        copy_into(witness, x)
        return True
    return False


@njit(cache=True, nogil=True)
def _segments_meet_2d(p, q, a, b, i, j, witness):
    """Closed segments pq and ab meet in the projection on (i, j) (Ericson 5.1.9.1 with exact
    orientations; collinear overlaps included). Writes a common point (3D) to witness."""
    d1 = orient2d(a[i], a[j], b[i], b[j], p[i], p[j])
    d2 = orient2d(a[i], a[j], b[i], b[j], q[i], q[j])
    d3 = orient2d(p[i], p[j], q[i], q[j], a[i], a[j])
    d4 = orient2d(p[i], p[j], q[i], q[j], b[i], b[j])
    if ((d1 > 0.0 and d2 < 0.0) or (d1 < 0.0 and d2 > 0.0)) and ((d3 > 0.0 and d4 < 0.0) or (d3 < 0.0 and d4 > 0.0)):
        t = d1 / (d1 - d2)
        for k in range(3):
            witness[k] = p[k] + t * (q[k] - p[k])
        return True
    return (_end_on_segment_2d(d1, a, b, p, i, j, witness) or _end_on_segment_2d(d2, a, b, q, i, j, witness)
            or _end_on_segment_2d(d3, p, q, a, i, j, witness) or _end_on_segment_2d(d4, p, q, b, i, j, witness))


@njit(cache=True, nogil=True)
def _projection_axes(T):
    """Coordinates (i, j) on which the triangle T (exactly in its own plane) projects to a
    non-degenerate triangle, trying the dominant normal axis first; (-1, -1) if T is collinear."""
    ab0 = T[1, 0] - T[0, 0]
    ab1 = T[1, 1] - T[0, 1]
    ab2 = T[1, 2] - T[0, 2]
    ac0 = T[2, 0] - T[0, 0]
    ac1 = T[2, 1] - T[0, 1]
    ac2 = T[2, 2] - T[0, 2]
    n0 = abs(ab1 * ac2 - ab2 * ac1)
    n1 = abs(ab2 * ac0 - ab0 * ac2)
    n2 = abs(ab0 * ac1 - ab1 * ac0)
    # drop the axis with the largest normal component first
    first = 0 if (n0 >= n1 and n0 >= n2) else (1 if n1 >= n2 else 2)
    for attempt in range(3):
        drop = (first + attempt) % 3
        i = (drop + 1) % 3
        j = (drop + 2) % 3
        if orient2d(T[0, i], T[0, j], T[1, i], T[1, j], T[2, i], T[2, j]) != 0.0:
            return i, j
    return -1, -1


@njit(cache=True, nogil=True)
def _segment_triangle_coplanar(p, q, T, witness):
    """Segment pq lying in the plane of T (exactly): does it meet the closed triangle T?"""
    i, j = _projection_axes(T)
    if i < 0:
        return False  # T is collinear after all: its own edges are tested against the other triangle
    if _inside_2d(T, i, j, p):
        copy_into(witness, p)
        return True
    if _inside_2d(T, i, j, q):
        copy_into(witness, q)
        return True
    for k in range(3):
        if _segments_meet_2d(p, q, T[k], T[(k + 1) % 3], i, j, witness):
            return True
    return False


@njit(cache=True, nogil=True)
def _edge_meets_triangle(p, q, sp, sq, T, witness):
    """S3 step 2 for one edge pq of one triangle against the closed triangle T (not collinear).
    sp, sq: exact orient3d signs of p and q against T's plane."""
    if (sp > 0.0 and sq > 0.0) or (sp < 0.0 and sq < 0.0):
        return False  # both ends strictly on one side: the edge does not reach the plane
    if sp == 0.0 and sq == 0.0:
        return _segment_triangle_coplanar(p, q, T, witness)  # edge in the plane (S3 skips: erratum L22)
    # The edge reaches the plane at one point X; X is in T iff the line pq passes through T:
    # the triple products do not have strictly opposite signs (Ericson 5.3.4), all exact.
    u = orient3d(p, q, T[0], T[1])
    v = orient3d(p, q, T[1], T[2])
    w = orient3d(p, q, T[2], T[0])
    if (u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0):
        t = sp / (sp - sq)  # the crossing point (approximate position; the decision is exact)
        for k in range(3):
            witness[k] = p[k] + t * (q[k] - p[k])
        return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _plane_sides(T, P):
    """orient3d of P's three vertices against the plane of T."""
    return orient3d(T[0], T[1], T[2], P[0]), orient3d(T[0], T[1], T[2], P[1]), orient3d(T[0], T[1], T[2], P[2])


@njit(cache=True, nogil=True, inline="always")
def _one_side(s0, s1, s2):
    """All three orientations strictly of one sign."""
    return (s0 > 0.0 and s1 > 0.0 and s2 > 0.0) or (s0 < 0.0 and s1 < 0.0 and s2 < 0.0)


@njit(cache=True, nogil=True)
def _edges_meet_triangle(P, s0, s1, s2, Q, witness):
    """Does an edge of P meet the proper triangle Q (s: P's vertices against Q's plane)?"""
    return (_edge_meets_triangle(P[0], P[1], s0, s1, Q, witness)
            or _edge_meets_triangle(P[1], P[2], s1, s2, Q, witness)
            or _edge_meets_triangle(P[2], P[0], s2, s0, Q, witness))


@njit(cache=True, nogil=True)
def triangles_intersect(P, Q, proper_p, proper_q, witness):
    """Do the closed triangles P and Q (rows = vertices, one frame) share a point? Exact on the
    given coordinates for every pair with at least one non-collinear triangle (two collinear
    ones return False here and are decided by the distance). Writes a common point to witness."""
    s0 = s1 = s2 = 0.0
    if proper_q:
        s0, s1, s2 = _plane_sides(Q, P)
        if _one_side(s0, s1, s2):
            return False  # P strictly on one side of Q's plane
    t0 = t1 = t2 = 0.0
    if proper_p:
        t0, t1, t2 = _plane_sides(P, Q)
        if _one_side(t0, t1, t2):
            return False
    # S3 2a: edges of P against Q; 2b: edges of Q against P. Together they cover every contact:
    # the boundary of the convex set P n Q lies on an edge of P or of Q. Coplanar triangles go
    # through the 2D branch of both loops (P inside Q, Q inside P, crossing edges).
    if proper_q and _edges_meet_triangle(P, s0, s1, s2, Q, witness):
        return True
    if proper_p and _edges_meet_triangle(Q, t0, t1, t2, P, witness):
        return True
    return False


# ------------------------------------------------------------------------------------------
# S3 step 3: minimum separation of disjoint triangles
@njit(cache=True, nogil=True)
def _vertex_face(V, F, nF, enF, best, points, vertex_row):
    """The vertices of triangle V whose projection lies in triangle F (unit normal nF, unit
    in-plane edge normals enF): the squared height h^2 when below ``best``, the vertex going to
    points[vertex_row] and its foot on F to the other row. Returns the new best."""
    for i in range(3):
        inside = True
        for k in range(3):
            g = (enF[k, 0] * (V[i, 0] - F[k, 0]) + enF[k, 1] * (V[i, 1] - F[k, 1])
                 + enF[k, 2] * (V[i, 2] - F[k, 2]))
            if g > 0.0:
                inside = False
        if inside:
            h = nF[0] * (V[i, 0] - F[0, 0]) + nF[1] * (V[i, 1] - F[0, 1]) + nF[2] * (V[i, 2] - F[0, 2])
            if h * h < best:
                best = h * h
                for d in range(3):
                    points[vertex_row, d] = V[i, d]
                    points[1 - vertex_row, d] = V[i, d] - h * nF[d]
    return best


@njit(cache=True, nogil=True)
def triangles_separation(P, nP, enP, normal_ok_p, Q, nQ, enQ, normal_ok_q, points):
    """S3 step 3 (done right) for two triangles that do not intersect: the squared distance;
    points[0] on P and points[1] on Q get the closest points."""
    # vertex-face: a vertex of one triangle whose projection lies in the other (S3's edge-normal
    # point-in-triangle test; a projection on the boundary is also an edge-edge candidate)
    best = np.inf
    if normal_ok_q:
        best = _vertex_face(P, Q, nQ, enQ, best, points, 0)
    if normal_ok_p:
        best = _vertex_face(Q, P, nP, enP, best, points, 1)
    # edge-edge: all 9 pairs (vertex-vertex included through the clamping)
    for i in range(3):
        i1 = (i + 1) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            d2, x, y = segment_segment(P[i, 0], P[i, 1], P[i, 2], P[i1, 0], P[i1, 1], P[i1, 2],
                                       Q[j, 0], Q[j, 1], Q[j, 2], Q[j1, 0], Q[j1, 1], Q[j1, 2])
            if d2 < best:
                best = d2
                for d in range(3):
                    points[0, d] = x[d]
                    points[1, d] = y[d]
    return best


# ------------------------------------------------------------------------------------------
# loading triangles into the working frame
@njit(cache=True, nogil=True)
def _load_a(tri, k, P, nP, enP):
    for c in range(3):
        for d in range(3):
            P[c, d] = tri[k, TRI_V + 3 * c + d]
            enP[c, d] = tri[k, TRI_EN + 3 * c + d]
    for d in range(3):
        nP[d] = tri[k, TRI_N + d]


@njit(cache=True, nogil=True)
def _load_b(tri, k, rot, trans, Q, nQ, enQ):
    """Triangle k of part B with its S3 data moved into A's frame (vertices by the rigid
    motion, normal and edge normals by the rotation)."""
    for c in range(3):
        x0 = tri[k, TRI_V + 3 * c]
        x1 = tri[k, TRI_V + 3 * c + 1]
        x2 = tri[k, TRI_V + 3 * c + 2]
        y0 = tri[k, TRI_EN + 3 * c]
        y1 = tri[k, TRI_EN + 3 * c + 1]
        y2 = tri[k, TRI_EN + 3 * c + 2]
        for d in range(3):
            Q[c, d] = rot[d, 0] * x0 + rot[d, 1] * x1 + rot[d, 2] * x2 + trans[d]
            enQ[c, d] = rot[d, 0] * y0 + rot[d, 1] * y1 + rot[d, 2] * y2
    x0 = tri[k, TRI_N]
    x1 = tri[k, TRI_N + 1]
    x2 = tri[k, TRI_N + 2]
    for d in range(3):
        nQ[d] = rot[d, 0] * x0 + rot[d, 1] * x1 + rot[d, 2] * x2


@njit(cache=True, nogil=True)
def _sphere_gap(triA, i, c0, c1, c2, radius_b):
    """S3 step 1: gap between the centroid sphere of A's triangle i and B's triangle's
    (centroid (c0, c1, c2) already in A's frame, radius ``radius_b``), lowered by BOUND_SLACK so
    that rounding never prunes a touching pair."""
    g0 = c0 - triA[i, TRI_C]
    g1 = c1 - triA[i, TRI_C + 1]
    g2 = c2 - triA[i, TRI_C + 2]
    gap = np.sqrt(g0 * g0 + g1 * g1 + g2 * g2) - triA[i, TRI_R] - radius_b
    scale = (abs(c0) + abs(c1) + abs(c2) + abs(triA[i, TRI_C]) + abs(triA[i, TRI_C + 1]) + abs(triA[i, TRI_C + 2])
             + triA[i, TRI_R] + radius_b)
    return gap - BOUND_SLACK * scale


@njit(cache=True, nogil=True)
def _moved_centroid(tri, j, rot, trans):
    """Triangle j's centroid moved by (rot, trans)."""
    return (rot[0, 0] * tri[j, TRI_C] + rot[0, 1] * tri[j, TRI_C + 1] + rot[0, 2] * tri[j, TRI_C + 2] + trans[0],
            rot[1, 0] * tri[j, TRI_C] + rot[1, 1] * tri[j, TRI_C + 1] + rot[1, 2] * tri[j, TRI_C + 2] + trans[1],
            rot[2, 0] * tri[j, TRI_C] + rot[2, 1] * tri[j, TRI_C + 1] + rot[2, 2] * tri[j, TRI_C + 2] + trans[2])


@njit(cache=True, nogil=True, inline="always")
def _plane_range(n, T, S):
    """(lo, hi) of the signed distances of S's vertices to T's plane (unit normal n)."""
    h = n[0] * T[0, 0] + n[1] * T[0, 1] + n[2] * T[0, 2]
    lo = np.inf
    hi = -np.inf
    for c in range(3):
        x = n[0] * S[c, 0] + n[1] * S[c, 1] + n[2] * S[c, 2] - h
        lo = min(lo, x)
        hi = max(hi, x)
    return lo, hi


@njit(cache=True, nogil=True, inline="always")
def _pair_buffers():
    """Work arrays of a triangle pair: P, Q (3, 3), their normals nP, nQ (3,), their edge
    normals enP, enQ (3, 3)."""
    return np.empty((3, 3)), np.empty((3, 3)), np.empty(3), np.empty(3), np.empty((3, 3)), np.empty((3, 3))


@njit(cache=True, nogil=True)
def _triangle_gap(P, nP, normal_ok_p, Q, nQ, normal_ok_q):
    """A cheap lower bound of the distance between triangles P and Q (one frame): the largest
    separation of their projections on the line through the centroids and on the two normals
    (separating axes). Lowered by BOUND_SLACK so that a touching pair is never called disjoint."""
    u0 = (Q[0, 0] + Q[1, 0] + Q[2, 0] - P[0, 0] - P[1, 0] - P[2, 0]) / 3.0
    u1 = (Q[0, 1] + Q[1, 1] + Q[2, 1] - P[0, 1] - P[1, 1] - P[2, 1]) / 3.0
    u2 = (Q[0, 2] + Q[1, 2] + Q[2, 2] - P[0, 2] - P[1, 2] - P[2, 2]) / 3.0
    gap = -np.inf
    length = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if length > 0.0:
        hi = -np.inf
        lo = np.inf
        for c in range(3):
            hi = max(hi, u0 * P[c, 0] + u1 * P[c, 1] + u2 * P[c, 2])
            lo = min(lo, u0 * Q[c, 0] + u1 * Q[c, 1] + u2 * Q[c, 2])
        gap = (lo - hi) / length
    if normal_ok_p:
        lo, hi = _plane_range(nP, P, Q)
        gap = max(gap, lo, -hi)
    if normal_ok_q:
        lo, hi = _plane_range(nQ, Q, P)
        gap = max(gap, lo, -hi)
    scale = 0.0
    for c in range(3):
        for d in range(3):
            scale = max(scale, abs(P[c, d]), abs(Q[c, d]))
    return gap - BOUND_SLACK * 4.0 * scale


# ------------------------------------------------------------------------------------------
# traversals
@njit(cache=True, nogil=True)
def _bound_slack(nb_a, root_a, nb_b, root_b, trans):
    """The absolute allowance subtracted from node-pair bounds in one query: BOUND_SLACK times
    the size of the coordinates involved (both root spheres and the offset between the frames)."""
    scale = abs(trans[0]) + abs(trans[1]) + abs(trans[2]) + nb_a[root_a, SPHERE_RADIUS] + nb_b[root_b, SPHERE_RADIUS]
    for d in range(3):
        scale += abs(nb_a[root_a, SPHERE_CENTER + d]) + abs(nb_b[root_b, SPHERE_CENTER + d])
    return BOUND_SLACK * 4.0 * scale


@njit(cache=True, nogil=True)
def _leaf_pairs(nodes_a, tri_a, a, nodes_b, tri_b, b, rot, trans, best, points, work, found, scratch,
                candidate):
    """S3 step 3 on every triangle pair of leaf a (part A) and leaf b (part B), B moved into A's
    frame, when no pair of the two parts intersects (step 2 was done for all of them first):
    returns ``(best, touching)`` and writes an improvement into ``found`` ([tri a, tri b], tree
    positions) and ``points`` (closest points in A's frame). Pairs whose lower bounds reach
    ``best`` are skipped; returns at the first pair whose computed distance is exactly 0
    (touching below the resolution of float64). ``scratch (5, 3, 3)``, ``candidate (2, 3)``:
    room for the two triangles and their data."""
    P = scratch[0]
    Q = scratch[1]
    enP = scratch[2]
    enQ = scratch[3]
    nP = scratch[4, 0]
    nQ = scratch[4, 1]
    # B's triangle j is moved into A's frame once for the whole leaf of A: its centroid first (S3's
    # sphere test), the rest only when some triangle of A passes that test
    for j in range(nodes_b[b, 0], nodes_b[b, 0] + nodes_b[b, 1]):
        c0, c1, c2 = _moved_centroid(tri_b, j, rot, trans)
        ok_q = tri_b[j, TRI_NORMAL_OK] != 0.0
        moved = False
        for i in range(nodes_a[a, 0], nodes_a[a, 0] + nodes_a[a, 1]):
            if _sphere_gap(tri_a, i, c0, c1, c2, tri_b[j, TRI_R]) >= best:
                continue
            if not moved:
                _load_b(tri_b, j, rot, trans, Q, nQ, enQ)
                moved = True
            _load_a(tri_a, i, P, nP, enP)
            ok_p = tri_a[i, TRI_NORMAL_OK] != 0.0
            lower = _triangle_gap(P, nP, ok_p, Q, nQ, ok_q)
            if lower >= best:
                continue
            work[1] += 1
            d2 = triangles_separation(P, nP, enP, ok_p, Q, nQ, enQ, ok_q, candidate)
            dist = np.sqrt(d2)
            if dist < best:
                best = dist
                found[0] = i
                found[1] = j
                for d in range(3):
                    points[0, d] = candidate[0, d]
                    points[1, d] = candidate[1, d]
                if d2 == 0.0:  # touching within rounding (or two collinear triangles that touch)
                    return 0.0, True
    return best, False


@njit(cache=True, nogil=True)
def clearance_query(nodes_a, bounds_a, tri_a, root_a, nodes_b, bounds_b, tri_b, root_b, rot, trans, max_distance,
                    stack, stack_bound, points, work):
    """Minimum distance between the surfaces of part A (tree rooted at ``root_a``) and part B,
    B moved into A's frame by (rot, trans).

    First an intersecting triangle pair is looked for (collect_intersections, stopping at the
    first: S3 step 2 under the node pairs whose boxes may touch); crossing parts are answered
    there, at the cost of an overlap test. Otherwise the branch and bound (Ericson 6.3) over the
    two trees: pop a node pair, skip it when its lower bound (_node_gap) is not below the best
    distance, split the node with the larger sphere, push the farther child pair first
    (bvh_overlap's descent); at a leaf pair (nodes of at most DIRECT_LEAF triangles) S3 step 3 on
    each triangle pair (_leaf_pairs). Only separations below ``max_distance`` are searched.
    ``intersecting``: the exact test found a common point, or the computed separation of a
    pair is exactly 0 (touching below the resolution of float64, or two collinear triangles).
    Returns ``(distance, intersecting, tri_a, tri_b)`` (tree positions, -1 when nothing lies
    within max_distance); ``points[0]``, ``points[1]`` get the closest points in A's frame (a
    common point when intersecting). ``work[0]`` += node pairs popped, ``work[1]`` += triangle
    pairs given the exact tests (for benchmarks)."""
    # crossing meshes overlap in many node pairs, all with lower bound 0: a boolean search finds a
    # crossing pair sooner than the branch and bound, which orders pairs by their bounds
    first_pair = np.full((1, 2), -1, dtype=np.int64)
    first_point = np.empty((1, 3))
    if collect_intersections(nodes_a, bounds_a, tri_a, root_a, nodes_b, bounds_b, tri_b, root_b, rot, trans, stack,
                             first_pair, first_point, True, work) > 0:
        for d in range(3):
            points[0, d] = first_point[0, d]
            points[1, d] = first_point[0, d]
        return 0.0, True, first_pair[0, 0], first_pair[0, 1]
    scratch = np.empty((5, 3, 3))
    candidate = np.empty((2, 3))
    found = np.full(2, -1, dtype=np.int64)
    slack = _bound_slack(bounds_a, root_a, bounds_b, root_b, trans)
    best = max_distance
    stack[0, 0] = root_a
    stack[0, 1] = root_b
    stack_bound[0] = obb_pair_gap(bounds_a, root_a, bounds_b, root_b, rot, trans)[0] - slack
    top = 1
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        if stack_bound[top] >= best:
            continue
        work[0] += 1
        leaf_a = is_direct_leaf(nodes_a, a, DIRECT_LEAF)
        leaf_b = is_direct_leaf(nodes_b, b, DIRECT_LEAF)
        if leaf_a and leaf_b:
            best, hit = _leaf_pairs(nodes_a, tri_a, a, nodes_b, tri_b, b, rot, trans, best, points, work, found,
                                    scratch, candidate)
            if hit:
                return 0.0, True, found[0], found[1]
            continue
        c1a, c2a, c1b, c2b = child_pairs(nodes_a, bounds_a, nodes_b, bounds_b, a, b, leaf_a, leaf_b)
        l1, key1 = pair_lower_bound(bounds_a, c1a, bounds_b, c1b, rot, trans, best + slack)
        l2, key2 = pair_lower_bound(bounds_a, c2a, bounds_b, c2b, rot, trans, best + slack)
        top = push_nearer_last(stack, stack_bound, top, best, c1a, c1b, l1 - slack, key1, c2a, c2b, l2 - slack, key2)
    return best, False, found[0], found[1]


@njit(cache=True, nogil=True)
def collect_intersections(nodes_a, bounds_a, tri_a, root_a, nodes_b, bounds_b, tri_b, root_b, rot, trans, stack,
                          out_pairs, out_points, first_only, work):
    """Every intersecting triangle pair (tree positions) with a common point in A's frame.
    Writes up to len(out_pairs) rows and returns the total count (call again with more room
    when it is larger). ``first_only``: stop at the first pair (count 0 or 1). ``work[0]`` +=
    node pairs opened, ``work[1]`` += triangle pairs given the exact test."""
    P, Q, nP, nQ, enP, enQ = _pair_buffers()
    candidate = np.empty((2, 3))
    witness = np.empty(3)
    capacity = out_pairs.shape[0]
    count = 0
    slack = _bound_slack(bounds_a, root_a, bounds_b, root_b, trans)
    # a node pair is searched while its lower bound is below the slack
    if obb_pair_gap(bounds_a, root_a, bounds_b, root_b, rot, trans)[0] >= slack:
        return 0
    stack_gap = np.empty(stack.shape[0])
    stack[0, 0] = root_a
    stack[0, 1] = root_b
    top = 1
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        work[0] += 1
        leaf_a = is_direct_leaf(nodes_a, a, DIRECT_LEAF)
        leaf_b = is_direct_leaf(nodes_b, b, DIRECT_LEAF)
        if leaf_a and leaf_b:
            for i in range(nodes_a[a, 0], nodes_a[a, 0] + nodes_a[a, 1]):
                for j in range(nodes_b[b, 0], nodes_b[b, 0] + nodes_b[b, 1]):
                    c0, c1, c2 = _moved_centroid(tri_b, j, rot, trans)
                    if _sphere_gap(tri_a, i, c0, c1, c2, tri_b[j, TRI_R]) > 0.0:
                        continue
                    _load_a(tri_a, i, P, nP, enP)
                    _load_b(tri_b, j, rot, trans, Q, nQ, enQ)
                    ok_p = tri_a[i, TRI_NORMAL_OK] != 0.0
                    ok_q = tri_b[j, TRI_NORMAL_OK] != 0.0
                    if _triangle_gap(P, nP, ok_p, Q, nQ, ok_q) > 0.0:
                        continue
                    work[1] += 1
                    proper_p = tri_a[i, TRI_PROPER] != 0.0
                    proper_q = tri_b[j, TRI_PROPER] != 0.0
                    hit = triangles_intersect(P, Q, proper_p, proper_q, witness)
                    if not hit:  # touching within rounding counts, as in clearance_query
                        hit = triangles_separation(P, nP, enP, ok_p, Q, nQ, enQ, ok_q, candidate) == 0.0
                        for d in range(3):
                            witness[d] = candidate[0, d]
                    if hit:
                        if count < capacity:
                            out_pairs[count, 0] = i
                            out_pairs[count, 1] = j
                            for d in range(3):
                                out_points[count, d] = witness[d]
                        count += 1
                        if first_only:
                            return count
            continue
        c1a, c2a, c1b, c2b = child_pairs(nodes_a, bounds_a, nodes_b, bounds_b, a, b, leaf_a, leaf_b)
        g1, centres1 = obb_pair_gap(bounds_a, c1a, bounds_b, c1b, rot, trans)
        g2, centres2 = obb_pair_gap(bounds_a, c2a, bounds_b, c2b, rot, trans)
        # the pair with the nearer box centres pushed last (searched first): surfaces cross where
        # their clusters are close
        top = push_nearer_last(stack, stack_gap, top, slack, c1a, c1b, g1, centres1, c2a, c2b, g2, centres2)
    return count


@njit(cache=True, nogil=True)
def _to_world(pose, x, out, k):
    for d in range(3):
        out[k, d] = pose[d, 0] * x[0] + pose[d, 1] * x[1] + pose[d, 2] * x[2] + pose[d, 3]


@njit(cache=True, nogil=True)
def _one(nodes_a, bounds_a, tri_a, ids_a, root_a, nodes_b, bounds_b, tri_b, ids_b, root_b, pose_a, pose_b,
         max_distance, stack_rows, k, out_real, out_int):
    """Row k of the outputs (``OUT_*`` columns): world-frame points."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    stack = np.empty((stack_rows, 2), dtype=np.int64)
    stack_bound = np.empty(stack_rows)
    points = np.empty((2, 3))
    work = np.zeros(2, dtype=np.int64)
    dist, hit, i, j = clearance_query(nodes_a, bounds_a, tri_a, root_a, nodes_b, bounds_b, tri_b, root_b, rot, trans,
                                      max_distance, stack, stack_bound, points, work)
    out_int[k, OUT_HIT] = 1 if hit else 0
    out_int[k, OUT_NODE_PAIRS] = work[0]
    out_int[k, OUT_TRIANGLE_PAIRS] = work[1]
    if i >= 0:
        out_real[k, OUT_DISTANCE] = dist
        out_int[k, OUT_TRIANGLE_A] = ids_a[i]
        out_int[k, OUT_TRIANGLE_B] = ids_b[j]
        for d in range(3):  # A's frame -> world
            out_real[k, OUT_POINT_A + d] = (pose_a[d, 0] * points[0, 0] + pose_a[d, 1] * points[0, 1]
                                            + pose_a[d, 2] * points[0, 2] + pose_a[d, 3])
            out_real[k, OUT_POINT_B + d] = (pose_a[d, 0] * points[1, 0] + pose_a[d, 1] * points[1, 1]
                                            + pose_a[d, 2] * points[1, 2] + pose_a[d, 3])
    else:  # nothing within max_distance
        out_real[k, OUT_DISTANCE] = np.inf
        out_int[k, OUT_TRIANGLE_A] = -1
        out_int[k, OUT_TRIANGLE_B] = -1
        for d in range(3):
            out_real[k, OUT_POINT_A + d] = np.nan
            out_real[k, OUT_POINT_B + d] = np.nan


@njit(cache=True, nogil=True)
def clearance_one(nodes_a, bounds_a, tri_a, ids_a, nodes_b, bounds_b, tri_b, ids_b, pose_a, pose_b, max_distance,
                  stack_rows, out_real, out_int):
    """One pose pair (no thread-pool dispatch): results in row 0 of the outputs."""
    _one(nodes_a, bounds_a, tri_a, ids_a, 0, nodes_b, bounds_b, tri_b, ids_b, 0, pose_a, pose_b, max_distance,
         stack_rows, 0, out_real, out_int)


@njit(cache=True, nogil=True)
def clearance_poses(nodes_a, bounds_a, tri_a, ids_a, nodes_b, bounds_b, tri_b, ids_b, poses_a, poses_b,
                    max_distance, stack_rows, out_real, out_int, lo, hi):
    """Part A at poses_a (n|1, 4, 4) against part B at poses_b (n|1, 4, 4): rows [lo, hi)."""
    single_a = poses_a.shape[0] == 1
    single_b = poses_b.shape[0] == 1
    for k in range(lo, hi):
        pa = poses_a[0] if single_a else poses_a[k]
        pb = poses_b[0] if single_b else poses_b[k]
        _one(nodes_a, bounds_a, tri_a, ids_a, 0, nodes_b, bounds_b, tri_b, ids_b, 0, pa, pb, max_distance,
             stack_rows, k, out_real, out_int)


@njit(cache=True, nogil=True)
def clearance_pairs(nodes, bounds, tri, ids, roots, poses, pairs, max_distance, stack_rows, out_real, out_int, lo, hi):
    """Many parts at once (their arrays concatenated, part p rooted at roots[p], posed at
    poses[p]): row k answers parts pairs[k, 0] (A) and pairs[k, 1] (B), for rows [lo, hi)."""
    for k in range(lo, hi):
        p = pairs[k, 0]
        q = pairs[k, 1]
        _one(nodes, bounds, tri, ids, roots[p], nodes, bounds, tri, ids, roots[q], poses[p], poses[q], max_distance,
             stack_rows, k, out_real, out_int)


@njit(cache=True, nogil=True)
def intersections(nodes_a, bounds_a, tri_a, ids_a, nodes_b, bounds_b, tri_b, ids_b, pose_a, pose_b, stack_rows,
                  out_pairs, out_points):
    """collect_intersections for world poses: pairs as mesh triangle ids, points in the world
    frame. Returns the total count (rows beyond len(out_pairs) are not written)."""
    rot = np.empty((3, 3))
    trans = np.empty(3)
    relative_rotation_translation(pose_a, pose_b, rot, trans)
    stack = np.empty((stack_rows, 2), dtype=np.int64)
    local = np.empty(out_points.shape)
    count = collect_intersections(nodes_a, bounds_a, tri_a, 0, nodes_b, bounds_b, tri_b, 0, rot, trans, stack,
                                  out_pairs, local, False, np.zeros(2, dtype=np.int64))
    for k in range(min(count, out_pairs.shape[0])):
        out_pairs[k, 0] = ids_a[out_pairs[k, 0]]
        out_pairs[k, 1] = ids_b[out_pairs[k, 1]]
        _to_world(pose_a, local[k], out_points, k)
    return count


@njit(cache=True, nogil=True)
def triangle_pairs(A, B, out_distance, out_hit, out_point_a, out_point_b, lo, hi):
    """Row k: S3 (done right) on triangles A[k] and B[k] ((n, 3, 3) vertex rows, one frame):
    intersecting, distance and closest points (a common point when intersecting), for rows [lo, hi)."""
    for k in range(lo, hi):
        rows = np.empty((2, TRI_WIDTH))
        for c in range(3):
            for d in range(3):
                rows[0, TRI_V + 3 * c + d] = A[k, c, d]
                rows[1, TRI_V + 3 * c + d] = B[k, c, d]
        _fill_row(rows[0])
        _fill_row(rows[1])
        P, Q, nP, nQ, enP, enQ = _pair_buffers()
        _load_a(rows, 0, P, nP, enP)
        _load_a(rows, 1, Q, nQ, enQ)
        ok_p = rows[0, TRI_NORMAL_OK] != 0.0
        ok_q = rows[1, TRI_NORMAL_OK] != 0.0
        witness = np.empty(3)
        hit = False
        if _triangle_gap(P, nP, ok_p, Q, nQ, ok_q) <= 0.0:
            hit = triangles_intersect(P, Q, rows[0, TRI_PROPER] != 0.0, rows[1, TRI_PROPER] != 0.0, witness)
        if hit:
            out_distance[k] = 0.0
            for d in range(3):
                out_point_a[k, d] = witness[d]
                out_point_b[k, d] = witness[d]
        else:
            points = np.empty((2, 3))
            d2 = triangles_separation(P, nP, enP, ok_p, Q, nQ, enQ, ok_q, points)
            out_distance[k] = np.sqrt(d2)
            hit = d2 == 0.0
            for d in range(3):
                out_point_a[k, d] = points[0, d]
                out_point_b[k, d] = points[1, d]
        out_hit[k] = hit
