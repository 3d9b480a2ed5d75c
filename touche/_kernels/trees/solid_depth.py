"""The vertex depth of solid meshes (touche/solids.py): the deepest vertex of one mesh inside a
closed mesh, both ways for two solids, for a batch of placements, in one pass per placement.

Branch and bound over the vertices. With ``best`` the deepest depth found so far, a vertex can
only beat it if it is farther than ``best`` from the solid's surface, and that is decided by a
search that stops at the first triangle strictly closer than ``best`` (_any_within): for most
vertices it descends to one nearby leaf. Only the vertices it cannot dismiss get the inside test
(the certified signed ray crossing count of bvh_winding), and the few inside the solid the exact
closest point.

The vertices are visited in groups (solids._MeshData.visiting_order): first a pseudo-random
sample of single vertices, so that ``best`` grows in few steps wherever the deep vertices lie,
then every vertex in spatially compact groups (the leaves of a k-d split). A group's ball (center and
radius) is dismissed whole when it misses the solid's box, lies in an empty ball found outside
(the outside anchor), or lies within ``best`` of the surface (a triangle within best - radius of
its center); consecutive groups are neighbours, so the triangle that settled one usually settles
the next without a search. For two solids the other side's best is a bound too: both samples
run first, then the rest of the side that went deeper, then the rest of the other, which only
looks for vertices deeper than that.

The answer does not depend on the order: the deepest vertex wins, ties go to the lowest vertex
row, and between the two sides to A's vertex in B. A vertex whose crossing count is not
certified (its ray grazes an edge) marks the placement ``unsure``; the caller answers that
placement with the exact winding number instead."""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.primitives.closest import closest_point_triangle_xyz  # noqa: E402
from touche._kernels.trees.bvh_closest import box_distance_sq, closest_on_tree  # noqa: E402
from touche._kernels.trees.bvh_winding import signed_crossings  # noqa: E402


@njit(cache=True, nogil=True, inline="always")
def _triangle_within(tri_vertices, k, p, limit_sq):
    """Whether triangle k lies strictly closer to ``p`` than ``sqrt(limit_sq)``. A corner within
    the limit settles it without the exact closest point (most vertices near the surface)."""
    for c in range(3):
        if ((tri_vertices[k, c, 0] - p[0]) ** 2 + (tri_vertices[k, c, 1] - p[1]) ** 2
                + (tri_vertices[k, c, 2] - p[2]) ** 2) < limit_sq:
            return True
    t = tri_vertices
    x, y, z = closest_point_triangle_xyz(p[0], p[1], p[2], t[k, 0, 0], t[k, 0, 1], t[k, 0, 2], t[k, 1, 0], t[k, 1, 1],
                                         t[k, 1, 2], t[k, 2, 0], t[k, 2, 1], t[k, 2, 2])
    return (x - p[0]) ** 2 + (y - p[1]) ** 2 + (z - p[2]) ** 2 < limit_sq


@njit(cache=True, nogil=True)
def _any_within(links, boxes, child_boxes, tri_vertices, p, limit_sq, stack_node):
    """The tree position of a triangle strictly closer to ``p`` than ``sqrt(limit_sq)``, or -1
    (the tree of bvh_closest.closest_on_tree; its padded boxes only make the pruning more
    cautious)."""
    if box_distance_sq(boxes, 0, 0, p) >= limit_sq:
        return -1
    stack_node[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        while True:
            left = links[node, 0]
            if left < 0:
                first = links[node, 2]
                for k in range(first, first + links[node, 3]):
                    if _triangle_within(tri_vertices, k, p, limit_sq):
                        return k
                break
            right = links[node, 1]
            bound_l = box_distance_sq(child_boxes, node, 0, p)
            bound_r = box_distance_sq(child_boxes, node, 6, p)
            ok_l = bound_l < limit_sq
            ok_r = bound_r < limit_sq
            if ok_l and ok_r:  # nearer child first, the other on the stack
                stack_node[top] = right if bound_l <= bound_r else left
                node = left if bound_l <= bound_r else right
                top += 1
            elif ok_l:
                node = left
            elif ok_r:
                node = right
            else:
                break
    return -1


# The outside anchor (_search): a vertex found outside the solid with no triangle closer
# than r is the center of a ball of radius r that the surface misses, so every point strictly
# inside that ball is outside too. The pad (relative, on the gap and on the coordinates) keeps
# rounding of the placed points and of the search's distances from ever counting a point of the
# ball's rim as inside it.
_ANCHOR_PAD = 1e-9


@njit(cache=True, nogil=True, inline="always")
def _place(m, x, y, z, p):
    for r in range(3):
        p[r] = m[r, 0] * x + m[r, 1] * y + m[r, 2] * z + m[r, 3]


@njit(cache=True, nogil=True, inline="always")
def _in_box(p, low, high):
    return low[0] <= p[0] <= high[0] and low[1] <= p[1] <= high[1] and low[2] <= p[2] <= high[2]


@njit(cache=True, nogil=True, inline="always")
def _box_gap_sq(p, low, high):
    """The squared distance from ``p`` to the box ``low``..``high`` (0 inside)."""
    total = 0.0
    for r in range(3):
        if p[r] < low[r]:
            total += (low[r] - p[r]) ** 2
        elif p[r] > high[r]:
            total += (p[r] - high[r]) ** 2
    return total


# _search's running answer of one side of a pose pair (a float64 row): the deepest squared depth,
# the vertex row (-1: none), the vertex and its closest point (solid frame), the closest
# triangle's position in the tree, and 1.0 when an uncertified crossing count may hide a deeper one
_BEST_SQ, _ROW, _POINT, _CLOSEST, _POSITION, _UNSURE, _STATE = 0, 1, 2, 5, 8, 9, 10
# a bound taken from the other side is lowered a hair, so that a vertex exactly as deep is still
# found (the comparison of the two sides' depths decides ties exactly)
_FLOOR_SHAVE = 1.0 - 1e-12


@njit(cache=True, nogil=True)
def _search(links, boxes, child_boxes, tri_vertices, tri_ids, rec_f, rec_i, root, root_box, tri, direction,
            points, rows, starts, centers, radii, low, high, m, g_lo, g_hi, floor_sq, state,
            stack_node, stack_d, stack_a, stack_b):
    """One side of a pose pair: the vertex groups ``g_lo..g_hi`` of the other mesh (``points``
    (k, 3), groups ``rows[starts[g]:starts[g + 1]]`` within ``radii[g]`` of ``centers[g]``, its
    own frame) placed in the solid's frame by ``m`` (3, 4), searched for a vertex inside the
    solid deeper than both ``state``'s best and ``sqrt(floor_sq)``; ``state`` (the _STATE
    layout above) is updated in place. A group whose ball cannot hold such a vertex (outside the
    solid's box ``low``..``high``, in an outside anchor's empty ball, or within the best minus
    its radius of a triangle) is dismissed whole; a group of one vertex is that vertex, tested
    once."""
    best_sq = state[_BEST_SQ]
    best_row = int(state[_ROW])
    if floor_sq > best_sq:  # only a vertex deeper than the other side's can change the answer
        best_sq = floor_sq
        best_row = -1
    shift = abs(m[0, 3]) + abs(m[1, 3]) + abs(m[2, 3])
    p = np.empty(3)
    c = np.empty(3)
    anchor = np.empty(3)
    near = -1
    anchor_reach = 0.0  # the last vertex found outside with no triangle within this of it
    for g in range(g_lo, g_hi):
        # the group's ball, its radius padded for the rounding of the placed points (_ANCHOR_PAD)
        _place(m, centers[g, 0], centers[g, 1], centers[g, 2], c)
        reach = radii[g] * (1.0 + _ANCHOR_PAD) + _ANCHOR_PAD * (
            abs(centers[g, 0]) + abs(centers[g, 1]) + abs(centers[g, 2]) + 3.0 * radii[g] + shift
            + abs(c[0]) + abs(c[1]) + abs(c[2]))
        if _box_gap_sq(c, low, high) > reach * reach:
            continue  # the ball misses the solid's box
        if anchor_reach > 0.0:
            gap = np.sqrt((c[0] - anchor[0]) ** 2 + (c[1] - anchor[1]) ** 2 + (c[2] - anchor[2]) ** 2)
            if gap * (1.0 + _ANCHOR_PAD) + _ANCHOR_PAD * (abs(c[0]) + abs(c[1]) + abs(c[2])) + reach < anchor_reach:
                continue  # the ball lies in the outside anchor's empty ball: outside
        clear = 0.0  # no triangle within this of the center (0: not known)
        if best_sq > 0.0:
            limit = np.sqrt(best_sq) - reach
            if limit > 0.0:  # a triangle within (best - radius) of the center: none of its vertices is deeper
                limit_sq = limit * limit
                if near >= 0 and _triangle_within(tri_vertices, near, c, limit_sq):
                    continue
                near = _any_within(links, boxes, child_boxes, tri_vertices, c, limit_sq, stack_node)
                if near >= 0:
                    continue
                clear = limit
        single = starts[g + 1] - starts[g] == 1  # its one vertex passed the tests above
        for j in range(starts[g], starts[g + 1]):
            v = rows[j]
            if single:
                for r in range(3):
                    p[r] = c[r]
                empty = clear
            else:
                _place(m, points[v, 0], points[v, 1], points[v, 2], p)
                if not _in_box(p, low, high):
                    continue  # outside the solid's box: outside the solid
                if anchor_reach > 0.0:
                    gap = np.sqrt((p[0] - anchor[0]) ** 2 + (p[1] - anchor[1]) ** 2 + (p[2] - anchor[2]) ** 2)
                    if gap * (1.0 + _ANCHOR_PAD) + _ANCHOR_PAD * (abs(p[0]) + abs(p[1]) + abs(p[2])) < anchor_reach:
                        continue  # in the outside anchor's empty ball: outside
                empty = 0.0
                if best_sq > 0.0:  # closer to the surface than the best: cannot be deeper
                    if near >= 0 and _triangle_within(tri_vertices, near, p, best_sq):
                        continue  # the triangle that settled the previous vertex (a neighbour) settles it
                    near = _any_within(links, boxes, child_boxes, tri_vertices, p, best_sq, stack_node)
                    if near >= 0:
                        continue
                    empty = np.sqrt(best_sq)
            # the crossing count first: ~1 us, where a closest point deep inside costs up to ~100 us
            count, certain = signed_crossings(rec_f, rec_i, root, root_box, tri, p[0], p[1], p[2],
                                              direction[0], direction[1], direction[2], stack_a, stack_b)
            if certain and count == 0:
                if empty > 0.0:  # no triangle within ``empty`` of p: an empty ball outside
                    anchor_reach = empty
                    for r in range(3):
                        anchor[r] = p[r]
                continue  # outside the solid
            d_sq, q, pos = closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, p, np.inf,
                                           stack_node, stack_d)
            if not (d_sq > best_sq or (d_sq == best_sq and best_row >= 0 and v < best_row)) or not (d_sq > 0.0):
                continue  # not deeper (a vertex on the surface has depth 0 and never counts)
            if not certain:
                state[_UNSURE] = 1.0  # its ray grazes an edge: it may be inside and the deepest
                continue
            best_sq = d_sq
            best_row = v
            state[_BEST_SQ] = d_sq
            state[_ROW] = v
            for r in range(3):
                state[_POINT + r] = p[r]
                state[_CLOSEST + r] = q[r]
            state[_POSITION] = pos


@njit(cache=True, nogil=True, inline="always")
def _relative(solid_pose, other_pose, m):
    """m (3, 4) = (solid_pose)^-1 other_pose, rigid poses."""
    for r in range(3):
        for k in range(3):
            m[r, k] = (solid_pose[0, r] * other_pose[0, k] + solid_pose[1, r] * other_pose[1, k]
                       + solid_pose[2, r] * other_pose[2, k])
        m[r, 3] = (solid_pose[0, r] * (other_pose[0, 3] - solid_pose[0, 3]) + solid_pose[1, r] * (other_pose[1, 3] - solid_pose[1, 3])
                   + solid_pose[2, r] * (other_pose[2, 3] - solid_pose[2, 3]))


@njit(cache=True, nogil=True)
def deepest_pairs(links_a, boxes_a, child_boxes_a, tri_vertices_a, tri_ids_a, closest_depth_a, rec_f_a, rec_i_a,
                  root_a, root_box_a, tri_a, crossing_depth_a, points_a, rows_a, starts_a, centers_a, radii_a,
                  sample_a, low_a, high_a,
                  links_b, boxes_b, child_boxes_b, tri_vertices_b, tri_ids_b, closest_depth_b, rec_f_b, rec_i_b,
                  root_b, root_box_b, tri_b, crossing_depth_b, points_b, rows_b, starts_b, centers_b, radii_b,
                  sample_b, low_b, high_b,
                  direction, sides, poses_a, poses_b,
                  out_depth, out_point_a, out_point_b, out_normal, out_side, out_row, out_face, out_unsure, lo, hi):
    """The vertex depth of the pose pairs ``lo..hi`` of ``poses_a``, ``poses_b`` ((n, 4, 4) each,
    or one row that broadcasts): the deepest vertex of A inside solid B (``sides`` bit 1) and of
    B inside solid A (bit 2). Per mesh: its two trees (closest points: links ... tri_ids,
    ``closest_depth``; ray crossings: rec_f ... tri, ``crossing_depth``, along the unit
    ``direction``; used where the mesh is the solid), its vertices and their visit groups
    (points ... radii; the first ``sample`` groups are single sampled vertices) and its box.

    Both samples first, then the rest of the side whose sample went deeper, then the rest of the
    other side, each searching only for vertices deeper than the other's best (the answer is the
    deeper side; ties go to A's vertex in B). Writes the depth (0 when no vertex lies inside at a
    positive depth), the world points on A and on B (point_b - point_a = -depth * normal), the
    unit normal from A to B (moving B along it takes the deepest vertex out), the side (1: A's
    vertex in B, 2: B's in A, 0: none), the vertex's row in its mesh's points (-1: none), the
    solid's original face index (-1: none) and ``out_unsure`` (module doc: the pose pair is
    answered again by the exact winding number)."""
    step_a = 1 if poses_a.shape[0] > 1 else 0
    step_b = 1 if poses_b.shape[0] > 1 else 0
    m_ab = np.empty((3, 4))  # A's frame in B's: A's vertices in solid B
    m_ba = np.empty((3, 4))
    depth_cap = max(closest_depth_a, closest_depth_b, crossing_depth_a, crossing_depth_b)
    stack_node = np.empty(2 * depth_cap + 8, dtype=np.int64)
    stack_d = np.empty(2 * depth_cap + 8)
    stack_a = np.empty(2 * depth_cap + 8, dtype=np.int64)
    stack_b = np.empty(2 * depth_cap + 8, dtype=np.int64)
    a_in_b = np.empty(_STATE)
    b_in_a = np.empty(_STATE)
    for i in range(lo, hi):
        ta = poses_a[i * step_a]
        tb = poses_b[i * step_b]
        _relative(tb, ta, m_ab)
        _relative(ta, tb, m_ba)
        for state in (a_in_b, b_in_a):
            state[:] = 0.0
            state[_ROW] = -1.0
        with_ab = sides & 1 != 0
        with_ba = sides & 2 != 0
        ab_first = True
        for step in range(4):  # both samples, then the rest of the deeper side so far, then the other's
            rest = step >= 2
            if step == 2:
                ab_first = a_in_b[_BEST_SQ] >= b_in_a[_BEST_SQ]
            if (step % 2 == 0) == ab_first:
                if with_ab:
                    _search(links_b, boxes_b, child_boxes_b, tri_vertices_b, tri_ids_b, rec_f_b, rec_i_b, root_b,
                            root_box_b, tri_b, direction, points_a, rows_a, starts_a, centers_a, radii_a, low_b,
                            high_b, m_ab, sample_a if rest else 0, starts_a.shape[0] - 1 if rest else sample_a,
                            b_in_a[_BEST_SQ] * _FLOOR_SHAVE, a_in_b, stack_node, stack_d, stack_a, stack_b)
            elif with_ba:
                _search(links_a, boxes_a, child_boxes_a, tri_vertices_a, tri_ids_a, rec_f_a, rec_i_a, root_a,
                        root_box_a, tri_a, direction, points_b, rows_b, starts_b, centers_b, radii_b, low_a,
                        high_a, m_ba, sample_b if rest else 0, starts_b.shape[0] - 1 if rest else sample_b,
                        a_in_b[_BEST_SQ] * _FLOOR_SHAVE, b_in_a, stack_node, stack_d, stack_a, stack_b)
        depth_ab = np.sqrt(a_in_b[_BEST_SQ]) if a_in_b[_ROW] >= 0.0 else 0.0
        depth_ba = np.sqrt(b_in_a[_BEST_SQ]) if b_in_a[_ROW] >= 0.0 else 0.0
        out_unsure[i] = a_in_b[_UNSURE] > 0.0 or b_in_a[_UNSURE] > 0.0
        side = 2 if b_in_a[_ROW] >= 0.0 and depth_ba > depth_ab else (1 if a_in_b[_ROW] >= 0.0 else 0)
        out_side[i] = side
        if side == 0:
            out_depth[i] = 0.0
            out_row[i] = -1
            out_face[i] = -1
            for r in range(3):
                out_point_a[i, r] = np.nan
                out_point_b[i, r] = np.nan
                out_normal[i, r] = np.nan
            continue
        found = a_in_b if side == 1 else b_in_a
        pose = tb if side == 1 else ta  # the solid's
        out_depth[i] = depth_ab if side == 1 else depth_ba
        out_row[i] = int(found[_ROW])
        out_face[i] = tri_ids_b[int(found[_POSITION])] if side == 1 else tri_ids_a[int(found[_POSITION])]
        # world coordinates: the vertex and its closest point on the solid, placed by the solid's pose
        vertex_out = out_point_a if side == 1 else out_point_b
        closest_out = out_point_b if side == 1 else out_point_a
        for r in range(3):
            vertex_out[i, r] = (pose[r, 0] * found[_POINT] + pose[r, 1] * found[_POINT + 1]
                                + pose[r, 2] * found[_POINT + 2] + pose[r, 3])
            closest_out[i, r] = (pose[r, 0] * found[_CLOSEST] + pose[r, 1] * found[_CLOSEST + 1]
                                 + pose[r, 2] * found[_CLOSEST + 2] + pose[r, 3])
        length = np.sqrt((out_point_a[i, 0] - out_point_b[i, 0]) ** 2 + (out_point_a[i, 1] - out_point_b[i, 1]) ** 2
                         + (out_point_a[i, 2] - out_point_b[i, 2]) ** 2)
        for r in range(3):
            if length > 0.0:
                out_normal[i, r] = (out_point_a[i, r] - out_point_b[i, r]) / length
            else:
                out_normal[i, r] = 1.0 if r == 2 else 0.0
