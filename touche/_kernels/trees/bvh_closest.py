"""Closest points on one triangle mesh by branch and bound on its bounding-volume hierarchy (the
tree of bvh_mesh; Ericson 6.3 iterative traversal with an explicit stack).

Ties. First hit keeps the lowest original face index among equal ``t`` (the brute force's rule);
closest point keeps the lowest original face index among equal squared distances. Boxes are
culled only when STRICTLY beyond the current best, so equal candidates are still visited.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.primitives.closest import closest_point_triangle_xyz  # noqa: E402
from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.base.touching import offset, touching_tolerance_at  # noqa: E402


# ---------------------------------------------------------------------------------------------
# closest point
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def box_distance_sq(b, row, off, p):
    total = 0.0
    for k in range(3):
        below = b[row, off + k] - p[k]
        above = p[k] - b[row, off + 3 + k]
        gap = max(below, max(above, 0.0))
        total += gap * gap
    return total


@njit(cache=True, nogil=True)
def closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, p, upper, stack_node, stack_d):
    """Closest point of the mesh to p (mesh frame), branch and bound on padded AABB distances,
    nearer child first. Candidates farther than ``upper`` (squared distance) are not searched.
    Returns ``(squared distance, point (3,), tree position)``; position -1 if nothing within
    ``upper``. Ties keep the lowest original face index (the brute force's rule)."""
    best = upper
    best_pos = -1
    best_id = -1
    q = p.copy()
    bound = box_distance_sq(boxes, 0, 0, p)
    if bound > best:
        return best, q, -1
    t = tri_vertices
    p0 = p[0]
    p1 = p[1]
    p2 = p[2]
    stack_node[0] = 0
    stack_d[0] = bound
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        if stack_d[top] > best:
            continue
        while True:
            left = links[node, 0]
            if left < 0:
                first = links[node, 2]
                for k in range(first, first + links[node, 3]):
                    x, y, z = closest_point_triangle_xyz(p0, p1, p2, t[k, 0, 0], t[k, 0, 1], t[k, 0, 2], t[k, 1, 0],
                                                         t[k, 1, 1], t[k, 1, 2], t[k, 2, 0], t[k, 2, 1], t[k, 2, 2])
                    d2 = (x - p0) ** 2 + (y - p1) ** 2 + (z - p2) ** 2
                    face = tri_ids[k]
                    if d2 < best or (d2 == best and (best_pos < 0 or face < best_id)):
                        best = d2
                        best_pos = k
                        best_id = face
                        q[0] = x
                        q[1] = y
                        q[2] = z
                break
            right = links[node, 1]
            bound_l = box_distance_sq(child_boxes, node, 0, p)
            bound_r = box_distance_sq(child_boxes, node, 6, p)
            ok_l = bound_l <= best
            ok_r = bound_r <= best
            if ok_l and ok_r:
                if bound_r < bound_l:
                    stack_node[top] = left
                    stack_d[top] = bound_l
                    node = right
                else:
                    stack_node[top] = right
                    stack_d[top] = bound_r
                    node = left
                top += 1
            elif ok_l:
                node = left
            elif ok_r:
                node = right
            else:
                break
    return best, q, best_pos


@njit(cache=True, nogil=True)
def point_to_local(pose, world, local):
    """Same arithmetic as support.relative_transform(identity, pose) applied to the point (the
    brute-force closest-point path), so both paths see the same local point."""
    rel = np.zeros((3, 4))
    for i in range(3):
        for j in range(3):
            rel[i, j] = pose[0, i] * (1.0 if j == 0 else 0.0) + pose[1, i] * (1.0 if j == 1 else 0.0) + pose[2, i] * (
                1.0 if j == 2 else 0.0
            )
        rel[i, 3] = pose[0, i] * (0.0 - pose[0, 3]) + pose[1, i] * (0.0 - pose[1, 3]) + pose[2, i] * (0.0 - pose[2, 3])
    for i in range(3):
        local[i] = rel[i, 0] * world[0] + rel[i, 1] * world[1] + rel[i, 2] * world[2] + rel[i, 3]


@njit(cache=True, nogil=True)
def closest_points_tree_many(links, boxes, child_boxes, tri_vertices, tri_ids, depth, scale, poses, queries,
                             out_point, out_distance, out_status, out_face, lo, hi):
    """Closest mesh point to each world query (one pose, or one per query); fills the outputs of
    query.closest_point like batch.closest_points_many does for a mesh (status TOUCHING within
    the touching tolerance, else SEPARATED; a mesh is a surface, never PENETRATING), plus the
    original face index."""
    step = 1 if poses.shape[0] > 1 else 0
    stack_node = np.empty(2 * depth + 8, dtype=np.int64)
    stack_d = np.empty(2 * depth + 8)
    local = np.empty(3)
    for i in range(lo, hi):
        pose = poses[i * step]
        point_to_local(pose, queries[i], local)
        d2, q, pos = closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, local, np.inf,
                                     stack_node, stack_d)
        dq = q - local
        signed = np.sqrt(dq[0] * dq[0] + dq[1] * dq[1] + dq[2] * dq[2])
        if not (signed > 0.0):
            signed = -(0.0 + 0.0 + 0.0)  # pair_closed.finish_core_distance: -depth at zero distance
        tolerance_i = touching_tolerance_at(scale, offset(pose))
        for k in range(3):
            out_point[i, k] = pose[k, 0] * q[0] + pose[k, 1] * q[1] + pose[k, 2] * q[2] + pose[k, 3]
        out_distance[i] = max(signed, 0.0)
        out_status[i] = kinds.SEPARATED if signed > tolerance_i else kinds.TOUCHING
        out_face[i] = tri_ids[pos] if pos >= 0 else -1
