"""Rays against the bounding-volume hierarchy of one triangle mesh: every hit on the tree of
bvh_mesh (``raycast_tree_all``) and the first / any hit on the ray tree of bvh_ray_tree
(``raycast_first_many``). Ericson 6.3 (iterative traversal with an explicit stack).

Conservative boxes. The slab test and the triangle test round differently; a hit the
triangle test accepts must never be culled by a box. Boxes are grown by ``pad`` (the caller
uses 1e-9 of the mesh's coordinate scale) and the slab interval is widened by 1e-12 of its own
magnitude (covers far-away origins). This only visits a few more nodes.

Ties. First hit keeps the lowest original face index among equal ``t`` (the brute force's rule);
closest point keeps the lowest original face index among equal squared distances. Boxes are
culled only when STRICTLY beyond the current best, so equal candidates are still visited.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.simd import box4, triangle4  # noqa: E402
from touche._kernels.base.morton import spread_bits  # noqa: E402
from touche._kernels.trees.bvh_ray_tree import SORT_BITS, SORT_WINDOW  # noqa: E402


MODE_FIRST = 0
MODE_ANY = 1

SLAB_SLACK = 1e-12  # relative widening of the slab interval (rounding of far origins)
INV_ZERO = 1e300  # 1 / 0 stand-in: (box - o) * INV_ZERO is finite or +-inf, never NaN (0 * inf);
# a unit direction has a component >= 1/sqrt(3), so each slab interval has a finite end and the
# widened interval never computes inf - inf


# ---------------------------------------------------------------------------------------------
# rays
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def ray_inverse(d):
    # |d| <= 1e-300 (zero or subnormal): 1 / d would be inf and 0 * inf NaN in the slab test
    return 1.0 / d if abs(d) > 1e-300 else INV_ZERO


@njit(cache=True, nogil=True, inline="always")
def ray_slab(b, row, off, ox, oy, oz, ix, iy, iz):
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
    Same arithmetic and acceptance as ray_polytopes._ray_tri (zero-area triangles and rays in the
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


@njit(cache=True, nogil=True)
def trace_all(rec_f, rec_i, root, root_box, tri, tri_ids, ox, oy, oz, dx, dy, dz, t_max, stack_a, stack_b,
              out_t, out_face, start):
    """Every triangle hit with t in [0, t_max]. With ``out_t`` of length 0 it only counts;
    otherwise it writes ``out_t[start:]`` / ``out_face[start:]`` sorted by (t, face).
    Returns the number of hits."""
    ix = ray_inverse(dx)
    iy = ray_inverse(dy)
    iz = ray_inverse(dz)
    store = out_t.shape[0] > 0
    near, far = ray_slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
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
            near, far = ray_slab(rec_f, index, 6 * side, ox, oy, oz, ix, iy, iz)
            if near <= far and far >= 0.0 and near <= t_max:
                stack_a[top] = rec_i[index, 12 + 2 * side]
                stack_b[top] = rec_i[index, 13 + 2 * side]
                top += 1
    return found


@njit(cache=True, nogil=True, inline="always")
def _local_ray(poses, p, origins, directions, i):
    """_ray_to_local's local origin and direction (the same arithmetic, operation for operation) as
    six scalars: inlined, the batch loop keeps them in registers instead of a scratch array
    (measured 7-12 % of raycast_first_many on diff_ring, one thread)."""
    length = np.sqrt(directions[i, 0] ** 2 + directions[i, 1] ** 2 + directions[i, 2] ** 2)
    ux = directions[i, 0] / length
    uy = directions[i, 1] / length
    uz = directions[i, 2] / length
    qx = origins[i, 0] - poses[p, 0, 3]
    qy = origins[i, 1] - poses[p, 1, 3]
    qz = origins[i, 2] - poses[p, 2, 3]
    return (
        poses[p, 0, 0] * qx + poses[p, 1, 0] * qy + poses[p, 2, 0] * qz,
        poses[p, 0, 1] * qx + poses[p, 1, 1] * qy + poses[p, 2, 1] * qz,
        poses[p, 0, 2] * qx + poses[p, 1, 2] * qy + poses[p, 2, 2] * qz,
        poses[p, 0, 0] * ux + poses[p, 1, 0] * uy + poses[p, 2, 0] * uz,
        poses[p, 0, 1] * ux + poses[p, 1, 1] * uy + poses[p, 2, 1] * uz,
        poses[p, 0, 2] * ux + poses[p, 1, 2] * uy + poses[p, 2, 2] * uz,
    )


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


@njit(cache=True, nogil=True, inline="always")
def _world_normal(v0, v1, v2, poses, p, out, i):
    """out[i] = R unit(v) for a triangle normal v: ray.safe_unit's arithmetic (scaled by the largest
    component first) without its allocation, then batch.raycast_many's apply_vector."""
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


@njit(cache=True, nogil=True)
def raycast_tree_all(rec_f, rec_i, root, root_box, tri, tri_ids, depth, poses, origins, directions, t_max, offsets,
                     out_ray, out_t, out_face, out_point, lo, hi):
    """Every hit of every ray, rays ``lo .. hi - 1`` of the batch, in two passes over the whole
    batch (count, then fill: the chunks of the fill need no locks). Count pass (``out_t`` of
    length 0, as trace_all): ``offsets[i + 1]`` = the number of hits of ray i. Fill pass
    (``offsets`` the exclusive prefix sums, ``offsets[count]`` = total, outputs of that length):
    ``out_ray``, ``out_t``, ``out_face``, ``out_point (total, 3)``, sorted by ray, then t, then
    face. meshquery.raycast_arrays runs both passes over the thread pool."""
    step = 1 if poses.shape[0] > 1 else 0
    fill = out_t.shape[0] > 0
    stack_a = np.empty(2 * depth + 8, dtype=np.int64)
    stack_b = np.empty(2 * depth + 8, dtype=np.int64)
    unit = np.empty(3)
    local = np.empty(6)
    for i in range(lo, hi):
        if fill and offsets[i + 1] == offsets[i]:
            continue
        _ray_to_local(poses, i * step, origins, directions, i, unit, local)
        limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
        if not fill:
            offsets[i + 1] = trace_all(rec_f, rec_i, root, root_box, tri, tri_ids, local[0], local[1], local[2],
                                       local[3], local[4], local[5], limit, stack_a, stack_b, out_t, out_face, 0)
            continue
        trace_all(rec_f, rec_i, root, root_box, tri, tri_ids, local[0], local[1], local[2],
                  local[3], local[4], local[5], limit, stack_a, stack_b, out_t, out_face, offsets[i])
        for j in range(offsets[i], offsets[i + 1]):
            out_ray[j] = i
            for k in range(3):
                out_point[j, k] = origins[i, k] + out_t[j] * unit[k]


# ---------------------------------------------------------------------------------------------
# first / any hit on the ray tree of bvh_ray_tree
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")  # inlined into the batch loops: 8-9 % (one thread)
def trace_first(nodes, nodes_i, blocks, block_face, root_box, ox, oy, oz, dx, dy, dz, t_max, mode, stack_ref,
                stack_count, stack_t, lanes):
    """One ray (mesh frame, unit direction) on the ray tree: ``nodes`` (K, 32) float32 rows
    (node_boxes in 0:24) and ``nodes_i`` the int32 view of the same memory (node_kids in 24:32).
    MODE_FIRST: nearest hit, ties to the lowest face index; MODE_ANY: the first hit found.
    Returns ``(t, block position 4 b + j)`` or ``(inf, -1)``. Children are stacked farthest
    first (the nearest is taken next) with their entry distance, skipped when popped beyond the
    best hit; a block's lanes that pass simd.triangle4 are finished with hit_triangle's last
    steps (t = tn / denom, t <= best, t != inf), so each accepted t is the brute force's."""
    ix = ray_inverse(dx)
    iy = ray_inverse(dy)
    iz = ray_inverse(dz)
    best = t_max
    best_pos = -1
    best_face = -1
    near, far = ray_slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
    if near > far or far < 0.0 or near > best:
        return np.inf, -1
    stack_ref[0] = 0
    stack_count[0] = 0
    stack_t[0] = near
    top = 1
    while top > 0:
        top -= 1
        if stack_t[top] > best:
            continue
        ref = stack_ref[top]
        count = stack_count[top]
        while True:
            if count > 0:  # a leaf: blocks ref, ref + 1, ... holding count triangles
                b = ref
                while count > 0:
                    mask = triangle4(blocks, b, ox, oy, oz, dx, dy, dz, best, lanes)
                    if mask != 0:
                        for j in range(4):
                            if (mask >> j) & 1:
                                t = lanes[j] / lanes[4 + j]
                                if t <= best and t != np.inf:
                                    pos = 4 * b + j
                                    face = block_face[pos]
                                    # t <= best: t < best, or a tie that a lower face index wins
                                    if best_pos < 0 or t < best or face < best_face:
                                        best = t + 0.0
                                        best_pos = pos
                                        best_face = face
                                        if mode == MODE_ANY:
                                            return best, best_pos
                    count -= 4
                    b += 1
                break
            mask = box4(nodes, ref, ox, oy, oz, ix, iy, iz, best, SLAB_SLACK, lanes)
            if mask == 0:
                break
            # push the hit children sorted by entry distance, nearest on top, then take it
            base = top
            for j in range(4):
                if (mask >> j) & 1:
                    t = lanes[j]
                    p = top
                    while p > base and stack_t[p - 1] < t:
                        stack_t[p] = stack_t[p - 1]
                        stack_ref[p] = stack_ref[p - 1]
                        stack_count[p] = stack_count[p - 1]
                        p -= 1
                    stack_t[p] = t
                    stack_ref[p] = nodes_i[ref, 24 + j]
                    stack_count[p] = nodes_i[ref, 28 + j]
                    top += 1
            top -= 1
            ref = stack_ref[top]
            count = stack_count[top]
    if best_pos < 0:
        return np.inf, -1
    return best, best_pos


@njit(cache=True, nogil=True, inline="always")
def ray_sort_key(root_box, cells_per_unit, near, ox, oy, oz, dx, dy, dz):
    """Morton key (SORT_BITS per axis) of the point where a ray that meets the root box enters it
    (its origin if inside): ``near`` is the ray's root-box entry distance, ``cells_per_unit[k]``
    = 2^SORT_BITS / the box's extent along k (0 for a flat box). The key only orders the work
    (no answer depends on it), so its rounding is free; a NaN ray gets the extra key
    1 << 3 SORT_BITS."""
    if not (near <= np.inf):
        return 1 << (3 * SORT_BITS)
    t = near if near > 0.0 else 0.0
    cells = 1 << SORT_BITS
    key = 0
    for k in range(3):
        start = ox if k == 0 else (oy if k == 1 else oz)
        step = dx if k == 0 else (dy if k == 1 else dz)
        position = (start + t * step - root_box[0, k]) * cells_per_unit[k]
        cell = 0
        if position >= cells:
            cell = cells - 1
        elif position > 0.0:
            cell = int(position)
        key |= spread_bits(cell) << k
    return key


@njit(cache=True, nogil=True, inline="always")
def _world_normal_from_block(blocks, pos, poses, p, out, i):
    """out[i] = R unit(n) of the block triangle at ``pos`` = 4 b + j, n = ab x ac with
    vec.cross's arithmetic (= the prepared tri[:, 9:12] of mesh_tree), then _world_normal."""
    b = pos >> 2
    j = pos & 3
    abx = blocks[b, 12 + j]
    aby = blocks[b, 16 + j]
    abz = blocks[b, 20 + j]
    acx = blocks[b, 24 + j]
    acy = blocks[b, 28 + j]
    acz = blocks[b, 32 + j]
    _world_normal(aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx, poses, p, out, i)


def ray_window(count, threads):
    """Rays per sorted window of raycast_first_many: two windows per thread at least (load
    balance), otherwise as large as SORT_WINDOW allows. (Computed by the caller from
    touche._parallel.get_num_threads.)"""
    return min(SORT_WINDOW, max(2048, (count + 2 * threads - 1) // (2 * threads)))


UNSORTED_RAYS = 256  # windows of at most this many rays are traced unsorted (raycast_first_many)


@njit(cache=True, nogil=True)
def raycast_first_many(nodes, nodes_i, blocks, block_face, root_box, depth, poses, origins, directions, t_max, mode,
                       window, out_hit, out_t, out_point, out_normal, out_face, lo, hi):
    """World rays against the ray tree under one pose or one pose per ray; fills the outputs of
    query.raycast exactly like batch.raycast_many does for a mesh (normal: the hit triangle's
    unit geometric normal (b - a) x (c - a) in world, not flipped; NaN / inf / -1 on a miss).

    The batch is cut into windows of ``window`` rays (ray_window gives the size); this call traces
    windows ``lo .. hi - 1`` (rays ``lo * window`` up to ``min(count, hi * window)``; the thread
    pool hands out ranges of windows: ``_parallel.run(raycast_first_many, n_windows, ...)``). Per
    window, in passes that each stream through memory: (1) in input order, each ray into the mesh
    frame; rays missing the root box (or starting beyond t_max of it) are settled here, the
    others keep their local ray in a compact buffer with a ray_sort_key; (2) counting sort: each
    ray's rank, and the local rays copied into rank order; (3) trace_first in rank order,
    (t, position) into rank-ordered results; (4) in input order, the outputs from the results.
    Why not trace straight from the inputs in sorted order: then every traced ray reads its
    origin / direction and writes its six outputs at a random place of the window (1e6 rays:
    megabytes), and those cache misses stall the traversal (the hottest instruction in a perf
    profile was the origin load after a hit). Here the only random accesses are the rank-order
    copy and the result reads of compact buffers."""
    count = origins.shape[0]
    step = 1 if poses.shape[0] > 1 else 0
    window = max(1, window)
    buckets = (1 << (3 * SORT_BITS)) + 1  # + ray_sort_key's NaN key
    cells_per_unit = np.zeros(3)
    for k in range(3):
        extent = root_box[0, 3 + k] - root_box[0, k]
        if extent > 0.0:
            cells_per_unit[k] = (1 << SORT_BITS) / extent
    for w in range(lo, hi):
        first = w * window
        size = min(count, first + window) - first
        rank = np.empty(size, dtype=np.int64)  # rank in the traced order; -1: settled in pass 1
        # rays entering the root box, compacted (a window of mostly missing rays would otherwise
        # touch every page of a window-sized buffer): local ray + limit, key, index in the window
        rays = np.empty((size, 8))
        ray_key = np.empty(size, dtype=np.int64)
        ray_index = np.empty(size, dtype=np.int64)
        # a small window is traced in input order: the counting sort's pass over its buckets
        # (32,769 of them: ~30 us) cost more than a few rays gain from coherence (a single ray
        # took 27 us, nearly all of it there)
        sort = size > UNSORTED_RAYS
        start = np.zeros(buckets + 1 if sort else 1, dtype=np.int64)
        traced = 0
        for k in range(size):
            i = first + k
            ox, oy, oz, dx, dy, dz = _local_ray(poses, i * step, origins, directions, i)
            limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
            # trace_first's own first test (same arithmetic): a miss of the root box is a miss
            near, far = ray_slab(root_box, 0, 0, ox, oy, oz, ray_inverse(dx), ray_inverse(dy), ray_inverse(dz))
            rank[k] = -1
            if near > far or far < 0.0 or near > limit:
                continue
            rays[traced, 0] = ox
            rays[traced, 1] = oy
            rays[traced, 2] = oz
            rays[traced, 3] = dx
            rays[traced, 4] = dy
            rays[traced, 5] = dz
            rays[traced, 6] = limit
            ray_index[traced] = k
            if sort:
                key = ray_sort_key(root_box, cells_per_unit, near, ox, oy, oz, dx, dy, dz)
                ray_key[traced] = key
                start[key + 1] += 1
            traced += 1
        if sort:
            for b in range(buckets):
                start[b + 1] += start[b]
            sorted_rays = np.empty((traced, 8))
            for m in range(traced):
                key = ray_key[m]
                s = start[key]
                start[key] = s + 1
                rank[ray_index[m]] = s
                for c in range(7):
                    sorted_rays[s, c] = rays[m, c]
        else:
            sorted_rays = rays
            for m in range(traced):
                rank[ray_index[m]] = m
        result_t = np.empty(traced)
        result_pos = np.empty(traced, dtype=np.int64)
        stack_ref = np.empty(3 * depth + 8, dtype=np.int64)
        stack_count = np.empty(3 * depth + 8, dtype=np.int64)
        stack_t = np.empty(3 * depth + 8)
        lanes = np.empty(8)
        for s in range(traced):
            t, pos = trace_first(nodes, nodes_i, blocks, block_face, root_box, sorted_rays[s, 0], sorted_rays[s, 1],
                                 sorted_rays[s, 2], sorted_rays[s, 3], sorted_rays[s, 4], sorted_rays[s, 5],
                                 sorted_rays[s, 6], mode, stack_ref, stack_count, stack_t, lanes)
            result_t[s] = t
            result_pos[s] = pos
        for k in range(size):
            i = first + k
            s = rank[k]
            pos = result_pos[s] if s >= 0 else -1
            if pos >= 0:
                t = result_t[s]
                out_hit[i] = True
                out_face[i] = block_face[pos]
                out_t[i] = t
                # the unit direction exactly as _local_ray computed it
                length = np.sqrt(directions[i, 0] ** 2 + directions[i, 1] ** 2 + directions[i, 2] ** 2)
                for c in range(3):
                    out_point[i, c] = origins[i, c] + t * (directions[i, c] / length)
                _world_normal_from_block(blocks, pos, poses, i * step, out_normal, i)
            else:
                out_hit[i] = False
                out_face[i] = -1
                out_t[i] = np.inf
                for c in range(3):
                    out_point[i, c] = np.nan
                    out_normal[i, c] = np.nan
