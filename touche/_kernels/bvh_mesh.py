"""Single-tree BVH queries on one triangle mesh: rays (first hit, any hit, all hits), closest
point (branch and bound) and the generalized winding number (Ericson 6.3 iterative traversal
with an explicit stack; Jacobson et al. 2013 for the winding number).

The tree comes from ``bvh_build.build_tree`` (SAH split for rays); :func:`mesh_tree` converts it
into the flat arrays the traversals read (one row per node, preorder, left child = i + 1):

``links (N, 4) int64``  ``[left, right, first, count]``; ``left == -1`` marks a leaf.
``boxes (N, 6)``  each node's AABB ``[min, max]``, PADDED by ``pad`` (see below).
``child_boxes (N, 12)``  an internal node's two children's padded boxes (left, right) stored in
    the parent, so one row read orders both children (near child first).
``tri (m, 12)``  per triangle in tree order: ``a``, ``ab = b - a``, ``ac = c - a``,
    ``n = ab x ac`` -- exactly the quantities ``ray._ray_tri`` computes (same arithmetic, same
    order), so a BVH hit is bit-identical to the brute-force ``ray.ray_triangles_first``.

Conservative boxes. The slab test and the triangle test round differently; a hit the
triangle test accepts must never be culled by a box. Boxes are grown by ``pad`` (the caller
uses 1e-9 of the mesh's coordinate scale) and the slab interval is widened by 1e-12 of its own
magnitude (covers far-away origins). This only visits a few more nodes.

Ties. First hit keeps the lowest original face index among equal ``t`` (the brute force's rule);
closest point keeps the lowest original face index among equal squared distances. Boxes are
culled only when STRICTLY beyond the current best, so equal candidates are still visited.

Winding number (exact, not an approximation). For a node whose box does not contain the query
point p, the node's triangles S can be replaced by any surface C with the same boundary curve
that lies in the box: S - C is closed and lies in the (convex) box, so its winding number about
an outside p is exactly 0 and w_S(p) = w_C(p). C is the fan from the box center over the node's
boundary edges (directed edges that do not cancel inside the node). For a closed mesh the
root has no boundary and every point outside the root box gets w = 0 at once; near the surface
the sum runs over leaves plus short boundary fans. Each term is the Van Oosterom-Strackee solid
angle (atan2 form: no NaN for degenerate triangles or a point on a vertex). The result equals the
all-triangle sum up to rounding, so the inside/outside decision is as robust as the naive sum
(integer-valued off the surface), unlike the dipole far-field approximation (Barill 2018) whose
error is only heuristically bounded.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from numba import njit, prange  # noqa: E402

from touche import tolerance  # noqa: E402

from . import kinds  # noqa: E402
from .bvh_build import AABB_MAX, AABB_MIN, build_tree  # noqa: E402
from .closest import closest_point_triangle  # noqa: E402
from .vec import cross as _cross  # noqa: E402

TOUCH_ABSOLUTE = tolerance.ABSOLUTE
TOUCH_RELATIVE = tolerance.RELATIVE

MODE_FIRST = 0
MODE_ANY = 1

RAY_CHUNK = 512  # rays per prange task: one traversal stack allocation per chunk
SLAB_SLACK = 1e-12  # relative widening of the slab interval (rounding of far origins)
INV_ZERO = 1e300  # 1 / 0 stand-in: (box - o) * INV_ZERO is finite or +-inf, never NaN (0 * inf);
# a unit direction has a component >= 1/sqrt(3), so each slab interval has a finite end and the
# widened interval never computes inf - inf
FOUR_PI = 4.0 * np.pi


# ---------------------------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def mesh_tree(vertices, triangles, leaf_size, split, pad):
    """Build the tree (bvh_build.build_tree) and the traversal arrays of the module doc.
    Returns ``(links, boxes, child_boxes, tri, tri_vertices, tri_ids, depth)``."""
    node_index, node_bounds, tri_vertices, tri_ids, depth = build_tree(vertices, triangles, leaf_size, split)
    n = node_index.shape[0]
    m = tri_vertices.shape[0]
    links = np.empty((n, 4), dtype=np.int64)
    boxes = np.empty((n, 6))
    for i in range(n):
        right = node_index[i, 2]
        links[i, 0] = i + 1 if right >= 0 else -1
        links[i, 1] = right
        links[i, 2] = node_index[i, 0]
        links[i, 3] = node_index[i, 1]
        for k in range(3):
            boxes[i, k] = node_bounds[i, AABB_MIN + k] - pad
            boxes[i, 3 + k] = node_bounds[i, AABB_MAX + k] + pad
    child_boxes = np.zeros((n, 12))
    for i in range(n):
        if links[i, 0] >= 0:
            for k in range(6):
                child_boxes[i, k] = boxes[links[i, 0], k]
                child_boxes[i, 6 + k] = boxes[links[i, 1], k]
    tri = np.empty((m, 12))
    ab = np.empty(3)
    ac = np.empty(3)
    for k in range(m):
        for i in range(3):
            ab[i] = tri_vertices[k, 1, i] - tri_vertices[k, 0, i]
            ac[i] = tri_vertices[k, 2, i] - tri_vertices[k, 0, i]
        normal = _cross(ab, ac)
        for i in range(3):
            tri[k, i] = tri_vertices[k, 0, i]
            tri[k, 3 + i] = ab[i]
            tri[k, 6 + i] = ac[i]
            tri[k, 9 + i] = normal[i]
    return links, boxes, child_boxes, tri, tri_vertices, tri_ids, depth


@njit(cache=True, nogil=True)
def ray_layout(links, child_boxes):
    """Compact ray-traversal records, one per INTERNAL node (preorder, renumbered): both
    children's boxes and how to reach each child, so a leaf child never costs a record read.
    Returns ``(records_boxes (K, 12) float64, records_kids (K, 4) int64)`` with kids
    ``[left, left_count, right, right_count]``: count 0 -> the child is internal record
    ``left`` / ``right``; count > 0 -> the child is a leaf covering triangles
    ``[left, left + count)``. The caller rounds the boxes outward to float32 and packs both into
    one 64-byte row per record (one cache line per node visit). K = 0 when the root is a leaf."""
    n = links.shape[0]
    record_of = np.full(n, -1, dtype=np.int64)
    k = 0
    for i in range(n):
        if links[i, 0] >= 0:
            record_of[i] = k
            k += 1
    boxes = np.empty((k, 12))
    kids = np.empty((k, 4), dtype=np.int64)
    for i in range(n):
        r = record_of[i]
        if r < 0:
            continue
        for j in range(12):
            boxes[r, j] = child_boxes[i, j]
        for side in range(2):
            child = links[i, side]
            if links[child, 0] < 0:
                kids[r, 2 * side] = links[child, 2]
                kids[r, 2 * side + 1] = links[child, 3]
            else:
                kids[r, 2 * side] = record_of[child]
                kids[r, 2 * side + 1] = 0
    return boxes, kids


# ---------------------------------------------------------------------------------------------
# rays
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _inverse(d):
    # |d| <= 1e-300 (zero or subnormal): 1 / d would be inf and 0 * inf NaN in the slab test
    return 1.0 / d if abs(d) > 1e-300 else INV_ZERO


@njit(cache=True, nogil=True, inline="always")
def _slab(b, row, off, ox, oy, oz, ix, iy, iz):
    """(t_near, t_far) of the ray against the box b[row, off:off + 6], widened by SLAB_SLACK.
    Written with ``x if x < y else y`` (compiles to branch-free min / max): numba's builtin
    min / max on floats branch (NaN handling) and mispredict on every node. No NaN can occur
    here (INV_ZERO), so the plain comparisons are exact."""
    t0 = (b[row, off] - ox) * ix
    t1 = (b[row, off + 3] - ox) * ix
    near = t0 if t0 < t1 else t1
    far = t1 if t0 < t1 else t0
    t0 = (b[row, off + 1] - oy) * iy
    t1 = (b[row, off + 4] - oy) * iy
    lo = t0 if t0 < t1 else t1
    hi = t1 if t0 < t1 else t0
    near = lo if lo > near else near
    far = hi if hi < far else far
    t0 = (b[row, off + 2] - oz) * iz
    t1 = (b[row, off + 5] - oz) * iz
    lo = t0 if t0 < t1 else t1
    hi = t1 if t0 < t1 else t0
    near = lo if lo > near else near
    far = hi if hi < far else far
    return near - SLAB_SLACK * abs(near), far + SLAB_SLACK * abs(far)


@njit(cache=True, nogil=True, inline="always")
def hit_triangle(tri, k, ox, oy, oz, dx, dy, dz, best):
    """Two-sided ray vs the k-th prepared triangle; ``t`` in [0, best] or -1.0 for no hit.
    Same arithmetic and acceptance as ray._ray_tri (zero-area triangles and rays in the
    triangle's plane: no hit)."""
    nx = tri[k, 9]
    ny = tri[k, 10]
    nz = tri[k, 11]
    denom = -(dx * nx + dy * ny + dz * nz)
    if denom == 0.0:
        return -1.0
    apx = ox - tri[k, 0]
    apy = oy - tri[k, 1]
    apz = oz - tri[k, 2]
    tn = apx * nx + apy * ny + apz * nz
    flip = denom < 0.0
    if flip:
        denom = -denom
        tn = -tn
    # cheap rejections first: behind the origin, or certainly beyond best (t = tn / denom
    # rounds to > best when tn exceeds best * denom by more than a few ulps)
    if (tn < 0.0) | (tn > best * denom * (1.0 + 1e-14)):
        return -1.0
    ex = apy * dz - apz * dy
    ey = apz * dx - apx * dz
    ez = apx * dy - apy * dx
    vn = tri[k, 6] * ex + tri[k, 7] * ey + tri[k, 8] * ez
    wn = -(tri[k, 3] * ex + tri[k, 4] * ey + tri[k, 5] * ez)
    if flip:
        vn = -vn
        wn = -wn
    if (vn < 0.0) | (wn < 0.0) | (vn + wn > denom):
        return -1.0
    t = tn / denom
    if not (t <= best) or t == np.inf:
        return -1.0
    return t + 0.0


@njit(cache=True, nogil=True, inline="always")
def _test_leaf(tri, tri_ids, first, count, ox, oy, oz, dx, dy, dz, best, best_pos, best_id, mode):
    """Nearest accepted hit in a leaf, keeping (t, position, face) ties by lowest face index;
    MODE_ANY stops at the first hit (returns done = True)."""
    for k in range(first, first + count):
        t = hit_triangle(tri, k, ox, oy, oz, dx, dy, dz, best)
        if t >= 0.0:
            face = tri_ids[k]
            # t <= best here: t < best, or a tie that a lower face index wins
            if best_pos < 0 or t < best or face < best_id:
                best = t
                best_pos = k
                best_id = face
                if mode == MODE_ANY:
                    return best, best_pos, best_id, True
    return best, best_pos, best_id, False


@njit(cache=True, nogil=True)
def trace(rec_f, rec_i, root, root_box, tri, tri_ids, ox, oy, oz, dx, dy, dz, t_max, mode, stack_a, stack_b, stack_t):
    """One ray in the mesh frame (unit direction) over the ray_layout records (``rec_f`` float32
    boxes in columns 0:12, ``rec_i`` the int32 view of the same rows, kids in columns 12:16;
    ``root = [index, count]`` in the kids' encoding). mode MODE_FIRST: nearest hit (ties: lowest
    face index); MODE_ANY: the first hit found. Returns ``(t, tree position)``, ``(inf, -1)`` on
    a miss. Children are visited near first (slab entry distance), the far one stacked with its
    entry distance and skipped when popped beyond the best hit."""
    ix = _inverse(dx)
    iy = _inverse(dy)
    iz = _inverse(dz)
    best = t_max
    best_pos = -1
    best_id = -1
    near, far = _slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
    if near > far or far < 0.0 or near > best:
        return np.inf, -1
    stack_a[0] = root[0]
    stack_b[0] = root[1]
    stack_t[0] = near
    top = 1
    while top > 0:
        top -= 1
        if stack_t[top] > best:
            continue
        index = stack_a[top]
        count = stack_b[top]
        while True:
            if count > 0:
                best, best_pos, best_id, done = _test_leaf(
                    tri, tri_ids, index, count, ox, oy, oz, dx, dy, dz, best, best_pos, best_id, mode
                )
                if done:
                    return best, best_pos
                break
            near_l, far_l = _slab(rec_f, index, 0, ox, oy, oz, ix, iy, iz)
            near_r, far_r = _slab(rec_f, index, 6, ox, oy, oz, ix, iy, iz)
            hit_l = (near_l <= far_l) & (far_l >= 0.0) & (near_l <= best)
            hit_r = (near_r <= far_r) & (far_r >= 0.0) & (near_r <= best)
            left = rec_i[index, 12]
            left_count = rec_i[index, 13]
            right = rec_i[index, 14]
            right_count = rec_i[index, 15]
            if hit_l and hit_r:
                if near_r < near_l:
                    stack_a[top] = left
                    stack_b[top] = left_count
                    stack_t[top] = near_l
                    index = right
                    count = right_count
                else:
                    stack_a[top] = right
                    stack_b[top] = right_count
                    stack_t[top] = near_r
                    index = left
                    count = left_count
                top += 1
            elif hit_l:
                index = left
                count = left_count
            elif hit_r:
                index = right
                count = right_count
            else:
                break
    if best_pos < 0:
        return np.inf, -1
    return best, best_pos


@njit(cache=True, nogil=True)
def trace_all(rec_f, rec_i, root, root_box, tri, tri_ids, ox, oy, oz, dx, dy, dz, t_max, stack_a, stack_b,
              out_t, out_face, start):
    """Every triangle hit with t in [0, t_max]. With ``out_t`` of length 0 it only counts;
    otherwise it writes ``out_t[start:]`` / ``out_face[start:]`` sorted by (t, face).
    Returns the number of hits."""
    ix = _inverse(dx)
    iy = _inverse(dy)
    iz = _inverse(dz)
    store = out_t.shape[0] > 0
    near, far = _slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
    if near > far or far < 0.0 or near > t_max:
        return 0
    found = 0
    stack_a[0] = root[0]
    stack_b[0] = root[1]
    top = 1
    while top > 0:
        top -= 1
        index = stack_a[top]
        count = stack_b[top]
        if count > 0:
            for k in range(index, index + count):
                t = hit_triangle(tri, k, ox, oy, oz, dx, dy, dz, t_max)
                if t >= 0.0:
                    if store:
                        # insertion into the sorted run out[start : start + found]
                        face = tri_ids[k]
                        j = start + found
                        while j > start and (out_t[j - 1] > t or (out_t[j - 1] == t and out_face[j - 1] > face)):
                            out_t[j] = out_t[j - 1]
                            out_face[j] = out_face[j - 1]
                            j -= 1
                        out_t[j] = t
                        out_face[j] = face
                    found += 1
            continue
        for side in range(2):
            near, far = _slab(rec_f, index, 6 * side, ox, oy, oz, ix, iy, iz)
            if near <= far and far >= 0.0 and near <= t_max:
                stack_a[top] = rec_i[index, 12 + 2 * side]
                stack_b[top] = rec_i[index, 13 + 2 * side]
                top += 1
    return found


@njit(cache=True, nogil=True)
def _ray_to_local(poses, p, origins, directions, i, unit, local):
    """Same arithmetic as batch.raycast_many: unit direction, then o' = R^T (o - t), d' = R^T d
    (pose ``poses[p]``) into local[0:3], local[3:6]. Indexes ``poses`` directly: a per-ray
    ``poses[p]`` view would cost reference counting on every ray."""
    length = np.sqrt(directions[i, 0] ** 2 + directions[i, 1] ** 2 + directions[i, 2] ** 2)
    for k in range(3):
        unit[k] = directions[i, k] / length
    for k in range(3):
        local[k] = (
            poses[p, 0, k] * (origins[i, 0] - poses[p, 0, 3])
            + poses[p, 1, k] * (origins[i, 1] - poses[p, 1, 3])
            + poses[p, 2, k] * (origins[i, 2] - poses[p, 2, 3])
        )
        local[3 + k] = poses[p, 0, k] * unit[0] + poses[p, 1, k] * unit[1] + poses[p, 2, k] * unit[2]


@njit(cache=True, nogil=True)
def _world_normal(tri, pos, poses, p, out, i):
    """out[i] = R unit(n) for the prepared triangle ``pos``: ray._unit's arithmetic (scaled by the
    largest component first) without its allocation, then batch.raycast_many's apply_vector."""
    v0 = tri[pos, 9]
    v1 = tri[pos, 10]
    v2 = tri[pos, 11]
    m = max(abs(v0), max(abs(v1), abs(v2)))
    x0 = 0.0
    x1 = 0.0
    x2 = 0.0
    if m > 0.0 and m != np.inf:
        x0 = v0 / m
        x1 = v1 / m
        x2 = v2 / m
        n = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        x0 = x0 / n
        x1 = x1 / n
        x2 = x2 / n
    for k in range(3):
        out[i, k] = poses[p, k, 0] * x0 + poses[p, k, 1] * x1 + poses[p, k, 2] * x2


@njit(cache=True, nogil=True, parallel=True)
def raycast_tree_many(rec_f, rec_i, root, root_box, tri, tri_ids, depth, poses, origins, directions, t_max, mode,
                      out_hit, out_t, out_point, out_normal, out_face):
    """World rays against one mesh tree under one pose or one pose per ray; fills the outputs of
    query.raycast exactly like batch.raycast_many does for a mesh (normal: the hit triangle's
    unit geometric normal (b - a) x (c - a) in world, not flipped; NaN / inf / -1 on a miss)."""
    count = origins.shape[0]
    step = 1 if poses.shape[0] > 1 else 0
    n_chunks = (count + RAY_CHUNK - 1) // RAY_CHUNK
    for chunk in prange(n_chunks):
        stack_a = np.empty(2 * depth + 8, dtype=np.int64)
        stack_b = np.empty(2 * depth + 8, dtype=np.int64)
        stack_t = np.empty(2 * depth + 8)
        unit = np.empty(3)
        local = np.empty(6)
        for i in range(chunk * RAY_CHUNK, min(count, (chunk + 1) * RAY_CHUNK)):
            _ray_to_local(poses, i * step, origins, directions, i, unit, local)
            limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
            t, pos = trace(rec_f, rec_i, root, root_box, tri, tri_ids, local[0], local[1], local[2],
                           local[3], local[4], local[5], limit, mode, stack_a, stack_b, stack_t)
            if pos >= 0:
                out_hit[i] = True
                out_face[i] = tri_ids[pos]
                out_t[i] = t
                for k in range(3):
                    out_point[i, k] = origins[i, k] + t * unit[k]
                _world_normal(tri, pos, poses, i * step, out_normal, i)
            else:
                out_hit[i] = False
                out_face[i] = -1
                out_t[i] = np.inf
                for k in range(3):
                    out_point[i, k] = np.nan
                    out_normal[i, k] = np.nan


@njit(cache=True, nogil=True, parallel=True)
def raycast_tree_all(rec_f, rec_i, root, root_box, tri, tri_ids, depth, poses, origins, directions, t_max):
    """Every hit of every ray: returns ``(ray (k,), t (k,), face (k,), point (k, 3))`` sorted by
    ray, then t, then face. Two passes (count, then fill) so the parallel fill needs no locks."""
    count = origins.shape[0]
    step = 1 if poses.shape[0] > 1 else 0
    n_chunks = (count + RAY_CHUNK - 1) // RAY_CHUNK
    counts = np.zeros(count, dtype=np.int64)
    no_t = np.empty(0)
    no_face = np.empty(0, dtype=np.int64)
    for chunk in prange(n_chunks):
        stack_a = np.empty(2 * depth + 8, dtype=np.int64)
        stack_b = np.empty(2 * depth + 8, dtype=np.int64)
        unit = np.empty(3)
        local = np.empty(6)
        for i in range(chunk * RAY_CHUNK, min(count, (chunk + 1) * RAY_CHUNK)):
            _ray_to_local(poses, i * step, origins, directions, i, unit, local)
            limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
            counts[i] = trace_all(rec_f, rec_i, root, root_box, tri, tri_ids, local[0], local[1], local[2],
                                  local[3], local[4], local[5], limit, stack_a, stack_b, no_t, no_face, 0)
    offsets = np.zeros(count + 1, dtype=np.int64)
    for i in range(count):
        offsets[i + 1] = offsets[i] + counts[i]
    total = offsets[count]
    out_ray = np.empty(total, dtype=np.int64)
    out_t = np.empty(total)
    out_face = np.empty(total, dtype=np.int64)
    out_point = np.empty((total, 3))
    for chunk in prange(n_chunks):
        stack_a = np.empty(2 * depth + 8, dtype=np.int64)
        stack_b = np.empty(2 * depth + 8, dtype=np.int64)
        unit = np.empty(3)
        local = np.empty(6)
        for i in range(chunk * RAY_CHUNK, min(count, (chunk + 1) * RAY_CHUNK)):
            if counts[i] == 0:
                continue
            _ray_to_local(poses, i * step, origins, directions, i, unit, local)
            limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
            trace_all(rec_f, rec_i, root, root_box, tri, tri_ids, local[0], local[1], local[2],
                      local[3], local[4], local[5], limit, stack_a, stack_b, out_t, out_face, offsets[i])
            for j in range(offsets[i], offsets[i + 1]):
                out_ray[j] = i
                for k in range(3):
                    out_point[j, k] = origins[i, k] + out_t[j] * unit[k]
    return out_ray, out_t, out_face, out_point


# ---------------------------------------------------------------------------------------------
# closest point
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _box_distance_sq(b, row, off, p):
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
    bound = _box_distance_sq(boxes, 0, 0, p)
    if bound > best:
        return best, q, -1
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
                    candidate = closest_point_triangle(p, tri_vertices[k, 0], tri_vertices[k, 1], tri_vertices[k, 2])
                    d2 = (candidate[0] - p[0]) ** 2 + (candidate[1] - p[1]) ** 2 + (candidate[2] - p[2]) ** 2
                    face = tri_ids[k]
                    if d2 < best or (d2 == best and (best_pos < 0 or face < best_id)):
                        best = d2
                        best_pos = k
                        best_id = face
                        q = candidate
                break
            right = links[node, 1]
            bound_l = _box_distance_sq(child_boxes, node, 0, p)
            bound_r = _box_distance_sq(child_boxes, node, 6, p)
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
def _to_local(pose, world, local):
    """Same arithmetic as pairs.relative_transform(identity, pose) applied to the point (the
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


@njit(cache=True, nogil=True, parallel=True)
def closest_points_tree_many(links, boxes, child_boxes, tri_vertices, tri_ids, depth, scale, poses, queries,
                             out_point, out_distance, out_status, out_face):
    """Closest mesh point to each world query (one pose, or one per query); fills the outputs of
    query.closest_point like batch.closest_points_many does for a mesh (status TOUCHING within
    the touching tolerance, else SEPARATED; a mesh is a surface, never PENETRATING), plus the
    original face index."""
    count = queries.shape[0]
    step = 1 if poses.shape[0] > 1 else 0
    n_chunks = (count + RAY_CHUNK - 1) // RAY_CHUNK
    for chunk in prange(n_chunks):
        stack_node = np.empty(2 * depth + 8, dtype=np.int64)
        stack_d = np.empty(2 * depth + 8)
        local = np.empty(3)
        for i in range(chunk * RAY_CHUNK, min(count, (chunk + 1) * RAY_CHUNK)):
            pose = poses[i * step]
            _to_local(pose, queries[i], local)
            d2, q, pos = closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, local, np.inf,
                                         stack_node, stack_d)
            dq = q - local
            signed = np.sqrt(dq[0] * dq[0] + dq[1] * dq[1] + dq[2] * dq[2])
            if not (signed > 0.0):
                signed = -(0.0 + 0.0 + 0.0)  # pairs._finish_core_distance: -depth at zero distance
            reach = scale + max(abs(pose[0, 3]), abs(pose[1, 3]), abs(pose[2, 3]))
            tolerance_i = TOUCH_ABSOLUTE + TOUCH_RELATIVE * max(reach, 0.0)
            for k in range(3):
                out_point[i, k] = pose[k, 0] * q[0] + pose[k, 1] * q[1] + pose[k, 2] * q[2] + pose[k, 3]
            out_distance[i] = max(signed, 0.0)
            out_status[i] = kinds.SEPARATED if signed > tolerance_i else kinds.TOUCHING
            out_face[i] = tri_ids[pos] if pos >= 0 else -1


# ---------------------------------------------------------------------------------------------
# winding number
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _sort_edges(edges, lo, hi):
    """Insertion sort of rows edges[lo:hi] ([a, b, weight]) by (a, b)."""
    for i in range(lo + 1, hi):
        a = edges[i, 0]
        b = edges[i, 1]
        w = edges[i, 2]
        j = i
        while j > lo and (edges[j - 1, 0] > a or (edges[j - 1, 0] == a and edges[j - 1, 1] > b)):
            edges[j, 0] = edges[j - 1, 0]
            edges[j, 1] = edges[j - 1, 1]
            edges[j, 2] = edges[j - 1, 2]
            j -= 1
        edges[j, 0] = a
        edges[j, 1] = b
        edges[j, 2] = w


@njit(cache=True, nogil=True)
def _compact(edges, lo, hi):
    """Sum the weights of equal (a, b) rows of the sorted edges[lo:hi] in place, drop zero
    weights; returns the new end."""
    out = lo
    i = lo
    while i < hi:
        a = edges[i, 0]
        b = edges[i, 1]
        w = 0
        while i < hi and edges[i, 0] == a and edges[i, 1] == b:
            w += edges[i, 2]
            i += 1
        if w != 0:
            edges[out, 0] = a
            edges[out, 1] = b
            edges[out, 2] = w
            out += 1
    return out


@njit(cache=True, nogil=True)
def node_boundaries(links, tri_vertex_ids):
    """Boundary edges of every node: directed edges of its triangles with opposite copies
    cancelled, as rows ``[a, b, weight]`` with ``a < b`` (weight +k: k times a -> b, -k: k times
    b -> a) over welded vertex ids ``tri_vertex_ids (m, 3)`` in tree order. Children come after
    their parent in preorder, so a reverse sweep sees both children's sorted lists first and
    merges them. Returns ``(edges (E, 3), start (N,), count (N,))``."""
    n = links.shape[0]
    capacity = 3 * tri_vertex_ids.shape[0] + 64
    edges = np.empty((capacity, 3), dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    used = 0
    for node in range(n - 1, -1, -1):
        left = links[node, 0]
        if left < 0:
            need = 3 * links[node, 3]
        else:
            need = count[left] + count[links[node, 1]]
        if used + need > capacity:
            capacity = max(2 * capacity, used + need + 64)
            grown = np.empty((capacity, 3), dtype=np.int64)
            grown[:used] = edges[:used]
            edges = grown
        lo = used
        hi = used
        if left < 0:
            first = links[node, 2]
            for k in range(first, first + links[node, 3]):
                for c in range(3):
                    a = tri_vertex_ids[k, c]
                    b = tri_vertex_ids[k, (c + 1) % 3]
                    if a == b:
                        continue  # a collapsed edge bounds nothing
                    if a < b:
                        edges[hi, 0] = a
                        edges[hi, 1] = b
                        edges[hi, 2] = 1
                    else:
                        edges[hi, 0] = b
                        edges[hi, 1] = a
                        edges[hi, 2] = -1
                    hi += 1
            _sort_edges(edges, lo, hi)
        else:
            # merge the two sorted child lists
            right = links[node, 1]
            i = start[left]
            i_end = i + count[left]
            j = start[right]
            j_end = j + count[right]
            while i < i_end or j < j_end:
                take_left = j >= j_end or (
                    i < i_end and (edges[i, 0] < edges[j, 0] or (edges[i, 0] == edges[j, 0] and edges[i, 1] <= edges[j, 1]))
                )
                src = i if take_left else j
                edges[hi, 0] = edges[src, 0]
                edges[hi, 1] = edges[src, 1]
                edges[hi, 2] = edges[src, 2]
                hi += 1
                if take_left:
                    i += 1
                else:
                    j += 1
        hi = _compact(edges, lo, hi)
        start[node] = lo
        count[node] = hi - lo
        used = hi
    return edges[:used].copy(), start, count


@njit(cache=True, nogil=True)
def solid_angle(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Signed solid angle of triangle abc seen from p (Van Oosterom and Strackee 1983):
    tan(omega / 2) = [A B C] / (|A||B||C| + (A.B)|C| + (A.C)|B| + (B.C)|A|), A = a - p, ...
    atan2 keeps it finite for every input (0 for a point on a vertex or a zero-area triangle);
    exactly 0 for p in the triangle's plane (see below)."""
    ax -= px
    ay -= py
    az -= pz
    bx -= px
    by -= py
    bz -= pz
    cx -= px
    cy -= py
    cz -= pz
    la = np.sqrt(ax * ax + ay * ay + az * az)
    lb = np.sqrt(bx * bx + by * by + bz * bz)
    lc = np.sqrt(cx * cx + cy * cy + cz * cz)
    det = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx)
    if det == 0.0:
        # p in the triangle's plane: 0 outside the triangle, and ON it the principal value 0 (the
        # mean of the +-2 pi limits from either side), which is what makes w = 1/2 on a face
        # instead of 0 or 1 by the sign of a rounded zero
        return 0.0
    den = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (ax * cx + ay * cy + az * cz) * lb + (
        bx * cx + by * cy + bz * cz
    ) * la
    return 2.0 * np.arctan2(det, den)


PLAN_FAN = 0
PLAN_DIRECT = 1
PLAN_DESCEND = 2


@njit(cache=True, nogil=True)
def outside_plan(links, cap_count):
    """Cheapest exact treatment of each node when the query point is outside its box (then it is
    outside every descendant's box too, children's boxes lying inside their parent's), in solid
    angles evaluated: the fan (``cap_count`` terms, if >= 0), the node's triangles, or the
    children's plans. Bottom-up over reverse preorder. Returns ``plan (N,) int64``."""
    n = links.shape[0]
    cost = np.empty(n, dtype=np.int64)
    plan = np.empty(n, dtype=np.int64)
    for node in range(n - 1, -1, -1):
        best = links[node, 3]
        choice = PLAN_DIRECT
        if cap_count[node] >= 0 and cap_count[node] < best:
            best = cap_count[node]
            choice = PLAN_FAN
        left = links[node, 0]
        if left >= 0 and cost[left] + cost[links[node, 1]] < best:
            best = cost[left] + cost[links[node, 1]]
            choice = PLAN_DESCEND
        cost[node] = best
        plan[node] = choice
    return plan


@njit(cache=True, nogil=True)
def _outside(boxes, node, p):
    return (
        p[0] < boxes[node, 0] or p[1] < boxes[node, 1] or p[2] < boxes[node, 2]
        or p[0] > boxes[node, 3] or p[1] > boxes[node, 4] or p[2] > boxes[node, 5]
    )


@njit(cache=True, nogil=True)
def winding_on_tree(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight, vertices, plan, p,
                    stack_node):
    """Generalized winding number of the mesh about p (mesh frame): sum of signed solid angles
    / 4 pi. A node whose (padded) box does not contain p is handled by its ``plan``
    (:func:`outside_plan`): its boundary fan from the box center (exact; module doc), its
    triangles summed directly, or its children; a node containing p is descended (a leaf:
    summed directly)."""
    total = 0.0
    stack_node[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        left = links[node, 0]
        outside = _outside(boxes, node, p)
        if outside and plan[node] == PLAN_FAN:
            cx = 0.5 * (boxes[node, 0] + boxes[node, 3])
            cy = 0.5 * (boxes[node, 1] + boxes[node, 4])
            cz = 0.5 * (boxes[node, 2] + boxes[node, 5])
            for e in range(cap_start[node], cap_start[node] + cap_count[node]):
                a = cap_edges[e, 0]
                b = cap_edges[e, 1]
                total += cap_weight[e] * solid_angle(
                    p[0], p[1], p[2], cx, cy, cz, vertices[a, 0], vertices[a, 1], vertices[a, 2],
                    vertices[b, 0], vertices[b, 1], vertices[b, 2],
                )
            continue
        if left < 0 or (outside and plan[node] == PLAN_DIRECT):
            first = links[node, 2]
            for k in range(first, first + links[node, 3]):
                total += solid_angle(
                    p[0], p[1], p[2], tri_vertices[k, 0, 0], tri_vertices[k, 0, 1], tri_vertices[k, 0, 2],
                    tri_vertices[k, 1, 0], tri_vertices[k, 1, 1], tri_vertices[k, 1, 2],
                    tri_vertices[k, 2, 0], tri_vertices[k, 2, 1], tri_vertices[k, 2, 2],
                )
            continue
        stack_node[top] = links[node, 1]
        stack_node[top + 1] = left
        top += 2
    return total / FOUR_PI


@njit(cache=True, nogil=True, parallel=True)
def winding_tree_many(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight, vertices, plan,
                      depth, poses, queries, out):
    """Winding number of the mesh (one pose, or one per query) about each world query."""
    count = queries.shape[0]
    step = 1 if poses.shape[0] > 1 else 0
    n_chunks = (count + RAY_CHUNK - 1) // RAY_CHUNK
    for chunk in prange(n_chunks):
        stack_node = np.empty(2 * depth + 8, dtype=np.int64)
        local = np.empty(3)
        for i in range(chunk * RAY_CHUNK, min(count, (chunk + 1) * RAY_CHUNK)):
            _to_local(poses[i * step], queries[i], local)
            out[i] = winding_on_tree(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight,
                                     vertices, plan, local, stack_node)


# ---------------------------------------------------------------------------------------------
# signed ray crossings (fast inside / outside for closed meshes, with a certificate)
# ---------------------------------------------------------------------------------------------

CROSSING_TOLERANCE = 1e-11  # relative margin: ~1e5 times the rounding bound of each quantity
AMBIGUOUS = 2


@njit(cache=True, nogil=True, inline="always")
def classify_crossing(tri, k, ox, oy, oz, dx, dy, dz):
    """How the ray o + t d (t > 0) crosses prepared triangle k: +1 leaving through its front
    (d . n > 0), -1 entering, 0 certainly not crossing, AMBIGUOUS when any deciding quantity
    (plane side of o, the three edge functions, parallelism) is within CROSSING_TOLERANCE of
    its own rounding scale of zero: then rounding could change the answer (grazing an edge or
    vertex, the origin on the plane, a ray in the plane), and the caller falls back to the exact
    winding number."""
    nx = tri[k, 9]
    ny = tri[k, 10]
    nz = tri[k, 11]
    dn = dx * nx + dy * ny + dz * nz
    apx = ox - tri[k, 0]
    apy = oy - tri[k, 1]
    apz = oz - tri[k, 2]
    ap1 = abs(apx) + abs(apy) + abs(apz)
    n1 = abs(nx) + abs(ny) + abs(nz)
    tn = apx * nx + apy * ny + apz * nz
    tol_t = CROSSING_TOLERANCE * ap1 * n1
    if n1 == 0.0:
        return 0  # zero area: covers nothing (a ray through its segment grazes the neighbours)
    if abs(dn) <= CROSSING_TOLERANCE * n1:
        return AMBIGUOUS  # (nearly) parallel to the plane: the crossing is ill-conditioned
    # the ray meets the plane at t = -tn / dn: behind the origin when tn and dn share a sign
    if (tn > tol_t and dn > 0.0) or (tn < -tol_t and dn < 0.0):
        return 0
    ex = apy * dz - apz * dy
    ey = apz * dx - apx * dz
    ez = apx * dy - apy * dx
    vn = tri[k, 6] * ex + tri[k, 7] * ey + tri[k, 8] * ez
    wn = -(tri[k, 3] * ex + tri[k, 4] * ey + tri[k, 5] * ez)
    un = -dn - vn - wn  # = denom - vn - wn before the sign flip
    if dn > 0.0:
        vn = -vn
        wn = -wn
        un = -un
    ab1 = abs(tri[k, 3]) + abs(tri[k, 4]) + abs(tri[k, 5])
    ac1 = abs(tri[k, 6]) + abs(tri[k, 7]) + abs(tri[k, 8])
    tol_v = CROSSING_TOLERANCE * ac1 * ap1
    tol_w = CROSSING_TOLERANCE * ab1 * ap1
    tol_u = tol_v + tol_w + CROSSING_TOLERANCE * n1
    if vn < -tol_v or wn < -tol_w or un < -tol_u:
        return 0  # certainly outside the triangle
    if vn <= tol_v or wn <= tol_w or un <= tol_u or abs(tn) <= tol_t:
        return AMBIGUOUS  # near an edge / vertex, or the origin near the plane
    return 1 if dn > 0.0 else -1


@njit(cache=True, nogil=True)
def signed_crossings(rec_f, rec_i, root, root_box, tri, ox, oy, oz, dx, dy, dz, stack_a, stack_b):
    """Sum of classify_crossing over every triangle along the whole ray; (sum, certain)."""
    ix = _inverse(dx)
    iy = _inverse(dy)
    iz = _inverse(dz)
    near, far = _slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
    if near > far or far < 0.0:
        return 0, True
    total = 0
    stack_a[0] = root[0]
    stack_b[0] = root[1]
    top = 1
    while top > 0:
        top -= 1
        index = stack_a[top]
        count = stack_b[top]
        if count > 0:
            for k in range(index, index + count):
                c = classify_crossing(tri, k, ox, oy, oz, dx, dy, dz)
                if c == AMBIGUOUS:
                    return 0, False
                total += c
            continue
        for side in range(2):
            near, far = _slab(rec_f, index, 6 * side, ox, oy, oz, ix, iy, iz)
            if near <= far and far >= 0.0:
                stack_a[top] = rec_i[index, 12 + 2 * side]
                stack_b[top] = rec_i[index, 13 + 2 * side]
                top += 1
    return total, True


@njit(cache=True, nogil=True, parallel=True)
def crossings_many(rec_f, rec_i, root, root_box, tri, depth, poses, queries, direction, out_count, out_certain):
    """Signed crossing count of the ray from each world query along the mesh-frame unit
    ``direction`` (leaving +1, entering -1): the winding number of a closed mesh about the
    query when ``out_certain`` (every crossing decided beyond rounding), else undecided."""
    count = queries.shape[0]
    step = 1 if poses.shape[0] > 1 else 0
    n_chunks = (count + RAY_CHUNK - 1) // RAY_CHUNK
    for chunk in prange(n_chunks):
        stack_a = np.empty(2 * depth + 8, dtype=np.int64)
        stack_b = np.empty(2 * depth + 8, dtype=np.int64)
        local = np.empty(3)
        for i in range(chunk * RAY_CHUNK, min(count, (chunk + 1) * RAY_CHUNK)):
            _to_local(poses[i * step], queries[i], local)
            total, certain = signed_crossings(rec_f, rec_i, root, root_box, tri, local[0], local[1], local[2],
                                              direction[0], direction[1], direction[2], stack_a, stack_b)
            out_count[i] = total
            out_certain[i] = certain
