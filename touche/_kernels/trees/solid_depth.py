"""The vertex depth of solid meshes (touche/solids.py): the deepest vertex of one mesh inside a
closed mesh, for a batch of placements, in one pass per placement.

Branch and bound over the vertices. With ``best`` the deepest depth found so far, a vertex can
only beat it if it is farther than ``best`` from the solid's surface, and that is decided by a
search that stops at the first triangle strictly closer than ``best`` (_any_within): for most
vertices it descends to one nearby leaf. Only the vertices it cannot dismiss get the inside test (the certified signed ray crossing count of
bvh_winding), and the few inside the solid the exact closest point. The
vertices are visited in a fixed order (``order``) that starts with a pseudo-random sample, so
that ``best`` grows in few
steps wherever the deep vertices lie in the mesh's own numbering; after that sample it visits
the rest in the mesh's order, where consecutive vertices are mostly neighbours and the triangle
that settled one usually settles the next without a search.

The answer does not depend on the order: the deepest vertex wins, ties go to the lowest vertex
row. A vertex whose crossing count is not certified (its ray grazes an edge) marks the placement
``unsure``; the caller answers that placement with the exact winding number instead."""
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


# The outside anchor (deepest_vertices): a vertex found outside the solid with no triangle closer
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


@njit(cache=True, nogil=True)
def deepest_vertices(links, boxes, child_boxes, tri_vertices, tri_ids, closest_depth,
                     rec_f, rec_i, root, root_box, tri, crossing_depth, direction,
                     points, order, low, high, solid_poses, other_poses,
                     out_depth, out_row, out_point, out_closest, out_face, out_unsure, lo, hi):
    """For the pose pairs ``lo..hi`` of ``solid_poses`` and ``other_poses`` ((n, 4, 4) each, or
    one row that broadcasts): the deepest of ``points`` (k, 3) inside the closed solid, among
    those in its box ``low``..``high``. Writes its depth (0 when none is inside at a positive
    depth), its row in ``points`` (-1 then), the placed vertex and its closest point on the
    solid's surface (solid frame), the solid's original face index, and ``out_unsure`` (module
    doc). The solid's two trees: closest points (links ... tri_ids, ``closest_depth``) and ray
    crossings (rec_f ... tri, ``crossing_depth``) along the unit ``direction``."""
    step_solid = 1 if solid_poses.shape[0] > 1 else 0
    step_other = 1 if other_poses.shape[0] > 1 else 0
    m = np.empty((3, 4))  # the other mesh's frame in the solid's: (solid pose)^-1 (other pose)
    stack_node = np.empty(2 * closest_depth + 8, dtype=np.int64)
    stack_d = np.empty(2 * closest_depth + 8)
    stack_a = np.empty(2 * crossing_depth + 8, dtype=np.int64)
    stack_b = np.empty(2 * crossing_depth + 8, dtype=np.int64)
    p = np.empty(3)
    anchor = np.empty(3)
    for i in range(lo, hi):
        ts = solid_poses[i * step_solid]
        to = other_poses[i * step_other]
        for r in range(3):
            for c in range(3):
                m[r, c] = ts[0, r] * to[0, c] + ts[1, r] * to[1, c] + ts[2, r] * to[2, c]
            m[r, 3] = ts[0, r] * (to[0, 3] - ts[0, 3]) + ts[1, r] * (to[1, 3] - ts[1, 3]) + ts[2, r] * (to[2, 3] - ts[2, 3])
        best_sq = 0.0
        best_row = -1
        unsure = False
        near = -1
        anchor_reach = 0.0  # the last vertex found outside with no triangle within this of it
        for j in range(order.shape[0]):
            v = order[j]
            _place(m, points[v, 0], points[v, 1], points[v, 2], p)
            if not _in_box(p, low, high):
                continue  # outside the solid's box: outside the solid
            if anchor_reach > 0.0:
                gap = np.sqrt((p[0] - anchor[0]) ** 2 + (p[1] - anchor[1]) ** 2 + (p[2] - anchor[2]) ** 2)
                if gap * (1.0 + _ANCHOR_PAD) + _ANCHOR_PAD * (abs(p[0]) + abs(p[1]) + abs(p[2])) < anchor_reach:
                    continue  # in the outside anchor's empty ball: outside
            if best_sq > 0.0:  # closer to the surface than the best: cannot be deeper
                if near >= 0 and _triangle_within(tri_vertices, near, p, best_sq):
                    continue  # the triangle that settled the previous vertex (a neighbour) settles it
                near = _any_within(links, boxes, child_boxes, tri_vertices, p, best_sq, stack_node)
                if near >= 0:
                    continue
            # the crossing count first: ~1 us, where a closest point deep inside costs up to ~100 us
            count, certain = signed_crossings(rec_f, rec_i, root, root_box, tri, p[0], p[1], p[2],
                                              direction[0], direction[1], direction[2], stack_a, stack_b)
            if certain and count == 0:
                if best_sq > 0.0:  # no triangle within sqrt(best_sq) of p (_any_within): an empty ball
                    anchor_reach = np.sqrt(best_sq)
                    for r in range(3):
                        anchor[r] = p[r]
                continue  # outside the solid
            d_sq, q, pos = closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, p, np.inf,
                                           stack_node, stack_d)
            if not (d_sq > best_sq or (d_sq == best_sq and best_row >= 0 and v < best_row)) or not (d_sq > 0.0):
                continue  # not deeper (a vertex on the surface has depth 0 and never counts)
            if not certain:
                unsure = True  # its ray grazes an edge: it may be inside and the deepest
                continue
            best_sq = d_sq
            best_row = v
            for r in range(3):
                out_point[i, r] = p[r]
                out_closest[i, r] = q[r]
            out_face[i] = tri_ids[pos]
        out_depth[i] = np.sqrt(best_sq)
        out_row[i] = best_row
        out_unsure[i] = unsure
        if best_row < 0:
            out_face[i] = -1
            for r in range(3):
                out_point[i, r] = np.nan
                out_closest[i, r] = np.nan
