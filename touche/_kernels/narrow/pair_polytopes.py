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
from touche._kernels.primitives.closest import closest_points_triangle_triangle, linear_linear_parameters
from touche._kernels.primitives.closest import segment_pair_gap
from touche._kernels.primitives.overlap import box_frame_columns, test_obb_obb
from touche._kernels.primitives.overlap import test_triangle_obb, test_triangle_triangle
from touche._kernels.primitives.sat import obb_obb_depth_relative, sat_convex
from touche._kernels.base.vec import dot as _dot
from touche._kernels.base.vec import norm as _norm
from touche._kernels.narrow.pair_closed import apply_point, apply_vector, box_center_half, box_frame, nan3
from touche._kernels.narrow.pair_closed import polytope_counts, support, vertex_gap


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


# ----------------------------------------------------------------------------------------------
# two boxes
@njit(cache=True, nogil=True)
def _box_centre_world(pose, center):
    return (pose[0, 0] * center[0] + pose[0, 1] * center[1] + pose[0, 2] * center[2] + pose[0, 3],
            pose[1, 0] * center[0] + pose[1, 1] * center[1] + pose[1, 2] * center[2] + pose[1, 3],
            pose[2, 0] * center[0] + pose[2, 1] * center[1] + pose[2, 2] * center[2] + pose[2, 3])


@njit(cache=True, nogil=True)
def box_box_separation(pa, ta, pb, tb, early_out):
    """(separation, axis, relative, by_face) of two posed boxes: polytope_vs_polytope's SAT
    separation and axis (a 3-tuple in A's frame, oriented from A towards B) straight from the
    poses (obb_obb_depth_relative: no moved copies of the boxes, no vertex projections, no
    arrays), and ``relative`` = (t, R), B's centre in A's frame and R = A_i . B_j (row-major
    9-tuple), for box_box_supports and box_box_face_distance. ``early_out`` (see
    obb_obb_depth_relative): a face axis that separates them is returned as soon as the face
    axes are tried, ``by_face`` True."""
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    ca = _box_centre_world(ta, center_a)
    cb = _box_centre_world(tb, center_b)
    t, R = box_frame_columns(ca[0], ca[1], ca[2], ta, cb[0], cb[1], cb[2], tb)
    separation, axis, by_face = obb_obb_depth_relative(t, R, half_a, half_b, early_out)
    return separation, axis, (t, R), by_face


@njit(cache=True, nogil=True)
def box_box_supports(pa, ta, pb, tb, axis, relative):
    """(point_a, point_b, normal) in world coordinates for box_box_separation's axis: A's support
    point along it, B's against it (polytope_vs_polytope's witnesses of an overlap), the unit
    axis. A box's support is the corner on the axis's side of each of its face pairs."""
    R = relative[1]
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    local_axis = np.empty(3)  # in A's frame
    local_axis[0], local_axis[1], local_axis[2] = axis
    vertex_a = np.empty(3)  # in A's frame
    vertex_b = np.empty(3)  # in B's frame
    for k in range(3):
        vertex_a[k] = center_a[k] + (half_a[k] if local_axis[k] > 0.0 else -half_a[k])
        along_b = -(local_axis[0] * R[k] + local_axis[1] * R[3 + k] + local_axis[2] * R[6 + k])
        vertex_b[k] = center_b[k] + (half_b[k] if along_b > 0.0 else -half_b[k])
    return apply_point(ta, vertex_a), apply_point(tb, vertex_b), apply_vector(ta, local_axis)


# a component of an edge axis along B's edge (zero in exact arithmetic: the axis is A_i x B_j)
# below this is taken as zero; the closest points found are checked anyway (box_box_edge_distance)
_EDGE_ALONG = 1e-9


@njit(cache=True, nogil=True)
def box_box_sat(pa, pb, relative):
    """(separation, axis) of the full SAT (every one of the 15 axes) on box_box_separation's
    ``relative``, for a pair a face axis separates whose face distance did not settle it."""
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    separation, axis, _ = obb_obb_depth_relative(relative[0], relative[1], half_a, half_b, False)
    return separation, axis


@njit(cache=True, nogil=True, inline="always")
def _no_edge_distance():
    return False, 0.0, nan3(), nan3(), nan3()


@njit(cache=True, nogil=True)
def box_box_edge_distance(pa, ta, pb, tb, axis, relative):
    """(found, distance, point_a, point_b, normal) for two separated boxes whose SAT axis is an
    edge pair's, A_i x B_j (box_box_separation / box_box_sat's axis in A's frame, towards B):
    A's edge parallel to A_i that supports A along the axis, B's edge parallel to B_j that
    supports B against it, and their closest points (Ericson 5.1.9). Those are the boxes'
    closest points when each is its box's support along the line through them (then the two
    planes through them, normal to that line, bound a slab between the boxes exactly as wide as
    the points are apart); that is checked, to a rounding allowance of 1e-12 of the boxes'
    coordinates, and ``found`` is False otherwise (or when the axis is not an edge pair's, or an
    edge lies in a face that also supports its box): GJK answers then. World coordinates;
    the normal from A towards B. Random separated pairs whose nearest features are two edges
    took GJK ~1 us each (three quarters of a random batch); this is a few dozen flops."""
    t, R = relative
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    l0, l1, l2 = axis
    edge_a = -1  # A_i: the one zero component of the axis (exactly zero: e_i x B_j has none along e_i)
    zeros = 0
    for k in range(3):
        if axis[k] == 0.0:
            edge_a = k
            zeros += 1
    if zeros != 1:
        return _no_edge_distance()
    # one scratch array: the axis along B's axes (3), then the two edges in A's frame from A's
    # centre, start points and directions (12)
    edges = np.empty(15)
    along_b = edges[12:15]
    for j in range(3):
        along_b[j] = l0 * R[j] + l1 * R[3 + j] + l2 * R[6 + j]
    edge_b = 0
    for j in range(1, 3):
        if abs(along_b[j]) < abs(along_b[edge_b]):
            edge_b = j
    for j in range(3):
        if (j == edge_b) != (abs(along_b[j]) <= _EDGE_ALONG):
            return _no_edge_distance()  # not exactly one of B's axes across the axis: a face of B supports it
    for k in range(3):
        if k == edge_a:
            edges[k] = -half_a[k]
            edges[3 + k] = 2.0 * half_a[k]
        else:
            edges[k] = half_a[k] if axis[k] > 0.0 else -half_a[k]
            edges[3 + k] = 0.0
        edges[6 + k] = t[k]
        edges[9 + k] = 2.0 * half_b[edge_b] * R[3 * k + edge_b]
    for j in range(3):
        step = -half_b[j] if (j == edge_b or along_b[j] > 0.0) else half_b[j]
        for k in range(3):
            edges[6 + k] += step * R[3 * k + j]
    s, u = linear_linear_parameters(edges[0:3], edges[3:6], 0.0, 1.0, edges[6:9], edges[9:12], 0.0, 1.0)
    a0 = edges[0] + s * edges[3]
    a1 = edges[1] + s * edges[4]
    a2 = edges[2] + s * edges[5]
    n0 = edges[6] + u * edges[9] - a0
    n1 = edges[7] + u * edges[10] - a1
    n2 = edges[8] + u * edges[11] - a2
    distance = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if not distance > 0.0:
        return _no_edge_distance()
    scale = (half_a[0] + half_a[1] + half_a[2] + half_b[0] + half_b[1] + half_b[2] + abs(t[0]) + abs(t[1])
             + abs(t[2]))
    allowance = 1e-12 * distance * scale
    # A's support value along n against n . (A's point); B's against -n against n . (B's point)
    support_a = half_a[0] * abs(n0) + half_a[1] * abs(n1) + half_a[2] * abs(n2)
    support_b = n0 * t[0] + n1 * t[1] + n2 * t[2]
    for j in range(3):
        support_b -= half_b[j] * abs(n0 * R[j] + n1 * R[3 + j] + n2 * R[6 + j])
    at_a = n0 * a0 + n1 * a1 + n2 * a2
    at_b = at_a + distance * distance
    if support_a > at_a + allowance or support_b < at_b - allowance:
        return _no_edge_distance()
    x = center_a[0] + a0  # A's point in A's frame
    y = center_a[1] + a1
    z = center_a[2] + a2
    return (True, distance, apply_point(ta, (x, y, z)), apply_point(ta, (x + n0, y + n1, z + n2)),
            apply_vector(ta, (n0 / distance, n1 / distance, n2 / distance)))


@njit(cache=True, nogil=True)
def _corner_against_box(cx, cy, cz, axes, own, other, scale):
    """(found, corner, point) for box_box_corner_distance, in the frame of a box centred at the
    origin with half extents ``other`` and its axes along the frame's: the corner of a second
    box (centre (cx, cy, cz), unit axes the rows of the 9-tuple ``axes``, half extents ``own``)
    nearest to the first box, and the first box's point nearest to that corner (3-tuples).
    ``found`` when the corner is also its box's support towards the first box along the line
    between the two points (to 1e-12 of ``scale``, the boxes' coordinates): then the two points
    are the boxes' closest points (each box lies on its side of the planes through them, normal
    to that line; the first box's point is its support by construction)."""
    best = np.inf
    x = y = z = qx = qy = qz = 0.0
    signs = 0
    for k in range(8):
        s0 = half_sign(k, 0)
        s1 = half_sign(k, 1)
        s2 = half_sign(k, 2)
        px = cx + s0 * own[0] * axes[0] + s1 * own[1] * axes[3] + s2 * own[2] * axes[6]
        py = cy + s0 * own[0] * axes[1] + s1 * own[1] * axes[4] + s2 * own[2] * axes[7]
        pz = cz + s0 * own[0] * axes[2] + s1 * own[1] * axes[5] + s2 * own[2] * axes[8]
        cqx = min(max(px, -other[0]), other[0])
        cqy = min(max(py, -other[1]), other[1])
        cqz = min(max(pz, -other[2]), other[2])
        d2 = (px - cqx) ** 2 + (py - cqy) ** 2 + (pz - cqz) ** 2
        if d2 < best:
            best = d2
            x, y, z, qx, qy, qz = px, py, pz, cqx, cqy, cqz
            signs = k
    n0 = x - qx
    n1 = y - qy
    n2 = z - qz
    # the corner minimises n . p over its box when no axis with a component along n leads further
    # towards the first box: sum_m own_m (s_m (n . axis_m) + |n . axis_m|) is 0 exactly then
    slack = 0.0
    for m in range(3):
        along = n0 * axes[3 * m] + n1 * axes[3 * m + 1] + n2 * axes[3 * m + 2]
        slack += own[m] * (half_sign(signs, m) * along + abs(along))
    found = best > 0.0 and slack <= 1e-12 * np.sqrt(best) * scale
    return found, (x, y, z), (qx, qy, qz)


@njit(cache=True, nogil=True, inline="always")
def half_sign(corner, axis):
    """-1 or +1: the side of a box's corner number ``corner`` (0-7, bit ``axis``) along that axis."""
    return 1.0 if (corner >> axis) & 1 else -1.0


@njit(cache=True, nogil=True)
def box_box_corner_distance(pa, ta, pb, tb, relative):
    """(found, distance, point_a, point_b, normal) for two separated boxes whose closest points
    are a corner of one and a point of the other (a corner beyond the border of the face the
    SAT found, against an edge or a corner): B's corner nearest to A, then A's nearest to B,
    each accepted only as _corner_against_box checks it. World coordinates; the normal from A
    towards B. In a random batch these were all the pairs left to GJK after the face and edge
    distances."""
    t, R = relative
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    scale = (half_a[0] + half_a[1] + half_a[2] + half_b[0] + half_b[1] + half_b[2] + abs(t[0]) + abs(t[1])
             + abs(t[2]))
    # B's corners in A's frame (B's axes: the columns of R)
    found, corner, point = _corner_against_box(t[0], t[1], t[2], (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]),
                                               half_b, half_a, scale)
    if found:  # A's point, then B's corner
        return _points_result(ta, center_a, point, corner)
    # A's corners in B's frame (A's centre: -R^T t; A's axes: the rows of R)
    found, corner, point = _corner_against_box(-(t[0] * R[0] + t[1] * R[3] + t[2] * R[6]),
                                               -(t[0] * R[1] + t[1] * R[4] + t[2] * R[7]),
                                               -(t[0] * R[2] + t[1] * R[5] + t[2] * R[8]), R, half_a, half_b, scale)
    if not found:
        return _no_edge_distance()
    return _points_result(tb, center_b, corner, point)  # A's corner, then B's point


@njit(cache=True, nogil=True)
def _points_result(pose, center, on_a, on_b):
    """(True, distance, point_a, point_b, normal) in world coordinates from the two closest
    points given in a box's frame from its centre (``center`` in the frame of ``pose``)."""
    n0 = on_b[0] - on_a[0]
    n1 = on_b[1] - on_a[1]
    n2 = on_b[2] - on_a[2]
    distance = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    return (True, distance, apply_point(pose, (center[0] + on_a[0], center[1] + on_a[1], center[2] + on_a[2])),
            apply_point(pose, (center[0] + on_b[0], center[1] + on_b[1], center[2] + on_b[2])),
            apply_vector(pose, (n0 / distance, n1 / distance, n2 / distance)))


@njit(cache=True, nogil=True)
def box_box_closed_distance(pa, ta, pb, tb):
    """(found, signed, point_a, point_b, normal) of two posed boxes without GJK: the SAT from the
    poses (box_box_separation) answers an overlap (its depth, axis and support corners); a
    separated pair takes the face distance (box_box_face_distance), else the full SAT's edge
    distance (box_box_edge_distance), else the corner distance (box_box_corner_distance).
    ``found`` False only for a separated pair none of those settles: GJK's. World
    coordinates; the normal from A towards B."""
    signed, axis, relative, by_face = box_box_separation(pa, ta, pb, tb, True)
    if signed <= 0.0:
        point_a, point_b, normal = box_box_supports(pa, ta, pb, tb, axis, relative)
        return True, signed, point_a, point_b, normal
    if by_face:
        found, point_a, point_b, normal = box_box_face_distance(pa, ta, pb, tb, axis, relative)
        if found:
            return True, signed, point_a, point_b, normal
        signed, axis = box_box_sat(pa, pb, relative)  # the edge axes too
    found, distance, point_a, point_b, normal = box_box_edge_distance(pa, ta, pb, tb, axis, relative)
    if not found:
        found, distance, point_a, point_b, normal = box_box_corner_distance(pa, ta, pb, tb, relative)
    return found, distance, point_a, point_b, normal


@njit(cache=True, nogil=True)
def _onto_face(corner, face, side, half, center, pose):
    """(found, face point, corner) for box_box_face_distance, in world coordinates: ``corner``
    (in a box's frame, from its centre) projected along axis ``face`` onto the plane at
    ``side``; found when the projection lies on that face of the box (half extents ``half``,
    centre ``center`` in the frame of ``pose``)."""
    point = np.empty(3)
    for i in range(3):
        if i == face:
            point[i] = side
        elif abs(corner[i]) <= half[i]:
            point[i] = corner[i]
        else:
            return False, point, corner
    for i in range(3):
        point[i] += center[i]
        corner[i] += center[i]
    return True, apply_point(pose, point), apply_point(pose, corner)


@njit(cache=True, nogil=True)
def box_box_face_distance(pa, ta, pb, tb, axis, relative):
    """(found, point_a, point_b, normal) for two boxes that a face axis separates
    (box_box_separation with early_out and ``by_face`` True; ``axis`` is its largest face
    gap's): the other box's nearest corner along that face normal (where one of its edges is
    parallel to the face, the point of that edge nearest the face's box centre), projected onto
    the face plane. When the projection lies on the face, the gap is the distance and the two
    points are closest points (every pair of points is at least the gap apart along the
    normal, and these two are exactly that). Otherwise (the closest features are edges, or a
    corner beyond the face's border) ``found`` is False and GJK answers. World coordinates;
    the normal from A towards B."""
    t, R = relative
    center_a, half_a = box_center_half(pa)
    center_b, half_b = box_center_half(pb)
    l0, l1, l2 = axis
    local_axis = np.empty(3)  # in A's frame
    local_axis[0], local_axis[1], local_axis[2] = axis
    face_of_a = -1
    for k in range(3):
        if abs(local_axis[k]) == 1.0:  # A's face axes are exact unit vectors
            face_of_a = k
    point_a = np.empty(3)  # A's corner nearest to B's face (in B's frame), or
    point_b = np.empty(3)  # B's corner nearest to A's face (in A's frame), from the box's centre
    if face_of_a >= 0:
        # B's corner nearest to A's face, in A's frame from A's centre (B's centre: t)
        point_b[0], point_b[1], point_b[2] = t
        for j in range(3):
            along = l0 * R[j] + l1 * R[3 + j] + l2 * R[6 + j]
            if along != 0.0:
                step = -half_b[j] if along > 0.0 else half_b[j]
            else:  # B_j parallel to the face: every point of that edge as near; the one nearest A's centre
                offset = point_b[0] * R[j] + point_b[1] * R[3 + j] + point_b[2] * R[6 + j]
                step = min(max(-offset, -half_b[j]), half_b[j])
            for i in range(3):
                point_b[i] += step * R[3 * i + j]
        side = half_a[face_of_a] if local_axis[face_of_a] > 0.0 else -half_a[face_of_a]
        found, on_face, corner = _onto_face(point_b, face_of_a, side, half_a, center_a, ta)
        if not found:  # the caller reads nothing else
            return False, on_face, corner, corner
        return found, on_face, corner, apply_vector(ta, local_axis)
    # a face of B: the axis is +-B_j; in B's frame it is sigma * e_j
    along_b = np.empty(3)
    for j in range(3):
        along_b[j] = l0 * R[j] + l1 * R[3 + j] + l2 * R[6 + j]
    face_of_b = 0
    for j in range(1, 3):
        if abs(along_b[j]) > abs(along_b[face_of_b]):
            face_of_b = j
    # A's corner nearest to B's face, in B's frame from B's centre (A's centre: -R^T t)
    for j in range(3):
        point_a[j] = -(t[0] * R[j] + t[1] * R[3 + j] + t[2] * R[6 + j])
    for i in range(3):
        if local_axis[i] != 0.0:
            step = half_a[i] if local_axis[i] > 0.0 else -half_a[i]
        else:  # A_i parallel to B's face: the point of that edge nearest B's centre
            offset = point_a[0] * R[3 * i] + point_a[1] * R[3 * i + 1] + point_a[2] * R[3 * i + 2]
            step = min(max(-offset, -half_a[i]), half_a[i])
        for j in range(3):
            point_a[j] += step * R[3 * i + j]
    side = -half_b[face_of_b] if along_b[face_of_b] > 0.0 else half_b[face_of_b]
    found, on_face, corner = _onto_face(point_a, face_of_b, side, half_b, center_b, tb)
    if not found:
        return False, corner, on_face, corner
    return found, corner, on_face, apply_vector(ta, local_axis)
