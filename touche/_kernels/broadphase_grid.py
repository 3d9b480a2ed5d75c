"""Broad-phase grids and octrees on a quantized integer lattice.

Seeds: Ericson 7.1 (uniform and hashed grids), 7.2 (hierarchical grid), 7.3.4-7.3.6 (octrees,
Morton keys / locational codes, linear octree, loose octree), 7.7 (time stamps).

Every structure first maps coordinates to a lattice with ``q(x) = clamp(floor((x - origin) *
scale), 0, 2^BITS - 1)``. This map is monotone even in floating point (a subtraction and a
multiplication by a positive constant never reverse an order; floor and clamping neither), so
two closed boxes that overlap have overlapping integer boxes. All cell logic is then exact
integer arithmetic; candidates are finally tested on the float boxes. This avoids two seed
errata by construction: negative coordinates are never truncated towards zero (SEED-NOTES
L14912/L13915: ``(int)`` instead of floor), and an object touching a splitting plane straddles
it (L14279: the straddle test must be ``|delta| <= radius``) because its integer box reaches the
next cell.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from numba import njit  # noqa: E402

from .broadphase import box_overlap, box_overlap_query, emit_pair, grow_ids  # noqa: E402

BITS = 20
TOP = (1 << BITS) - 1
STAMP_LIMIT = 2147483647  # mailboxes are int32


@njit(cache=True, nogil=True)
def lattice(boxes, slots):
    """(origin (3,), scale) of the lattice covering the slots' boxes."""
    origin = np.zeros(3)
    top = np.zeros(3)
    if slots.shape[0] == 0:
        return origin, 1.0
    for k in range(3):
        origin[k] = np.inf
        top[k] = -np.inf
    for s in slots:
        for k in range(3):
            origin[k] = min(origin[k], boxes[s, k])
            top[k] = max(top[k], boxes[s, k + 3])
    extent = 0.0
    for k in range(3):
        extent = max(extent, top[k] - origin[k])
    if not extent > 0.0:
        return origin, 1.0
    scale = TOP / extent
    if not np.isfinite(scale):
        scale = 1.0
    return origin, scale


@njit(cache=True, nogil=True)
def _q(x, o, scale):
    v = np.floor((x - o) * scale)
    if v < 0.0:
        return np.int64(0)
    if v > TOP:
        return np.int64(TOP)
    return np.int64(v)


@njit(cache=True, nogil=True)
def quantize_one(box, origin, scale, out):
    for k in range(3):
        out[k] = _q(box[k], origin[k], scale)
        out[k + 3] = _q(box[k + 3], origin[k], scale)


@njit(cache=True, nogil=True)
def quantize(boxes, slots, origin, scale):
    n = slots.shape[0]
    qb = np.empty((n, 6), dtype=np.int64)
    for i in range(n):
        quantize_one(boxes[slots[i]], origin, scale, qb[i])
    return qb


@njit(cache=True, nogil=True)
def _mix(key):
    h = key * -7046029254386353131
    h = h ^ (h >> 31)
    h = h * -4658895280553007687
    return h ^ (h >> 29)


@njit(cache=True, nogil=True)
def _cell_key(cx, cy, cz):
    return cx | (cy << 21) | (cz << 42)


@njit(cache=True, nogil=True)
def _bucketize(keys, m):
    """Counting sort of m entries by hash bucket: (table size mask, starts (T+1,), order (m,))."""
    size = 16
    while size < 2 * m:
        size *= 2
    mask = size - 1
    starts = np.zeros(size + 1, dtype=np.int64)
    bucket = np.empty(m, dtype=np.int64)
    for e in range(m):
        b = _mix(keys[e]) & mask
        bucket[e] = b
        starts[b + 1] += 1
    for b in range(size):
        starts[b + 1] += starts[b]
    fill = starts[:size].copy()
    order = np.empty(m, dtype=np.int64)
    for e in range(m):
        b = bucket[e]
        order[fill[b]] = e
        fill[b] += 1
    return mask, starts, order


@njit(cache=True, nogil=True)
def _next_stamp(mailbox, stamp):
    """Advance the query time stamp (7.7). Values 1..STAMP_LIMIT are used, 0 = never visited;
    when the counter would pass the limit every mailbox is cleared and counting restarts at 1
    (the printed wrap-around of SEED-NOTES L15806 reuses a live value)."""
    stamp[0] += 1
    if stamp[0] > STAMP_LIMIT:
        mailbox[:] = 0
        stamp[0] = 1
    return stamp[0]


# ------------------------------------------------------------------------------------------
# 7.1 uniform grid, hashed: objects are entered in every cell they overlap; objects spanning
# more than ``max_cells`` cells go to an "oversize" list tested against everything.
@njit(cache=True, nogil=True)
def grid_build(qb, cell, max_cells):
    n = qb.shape[0]
    c0 = np.empty((n, 3), dtype=np.int64)
    c1 = np.empty((n, 3), dtype=np.int64)
    oversize = np.zeros(n, dtype=np.bool_)
    m = 0
    for i in range(n):
        cells = 1
        for k in range(3):
            c0[i, k] = qb[i, k] // cell
            c1[i, k] = qb[i, k + 3] // cell
            cells *= c1[i, k] - c0[i, k] + 1
        if cells > max_cells:
            oversize[i] = True
        else:
            m += cells
    keys = np.empty(m, dtype=np.int64)
    owner = np.empty(m, dtype=np.int64)
    e = 0
    for i in range(n):
        if oversize[i]:
            continue
        for cx in range(c0[i, 0], c1[i, 0] + 1):
            for cy in range(c0[i, 1], c1[i, 1] + 1):
                for cz in range(c0[i, 2], c1[i, 2] + 1):
                    keys[e] = _cell_key(cx, cy, cz)
                    owner[e] = i
                    e += 1
    mask, starts, order = _bucketize(keys, m)
    sorted_keys = keys[order]
    sorted_owner = owner[order]
    return c0, c1, oversize, mask, starts, sorted_keys, sorted_owner


@njit(cache=True, nogil=True)
def _grid_pairs_into(boxes, slots, c0, oversize, starts, sorted_keys, sorted_owner, pairs):
    n = slots.shape[0]
    count = 0
    n_buckets = starts.shape[0] - 1
    for b in range(n_buckets):
        lo = starts[b]
        hi = starts[b + 1]
        for e in range(lo, hi):
            key = sorted_keys[e]
            i = sorted_owner[e]
            for f in range(e + 1, hi):
                if sorted_keys[f] != key:
                    continue
                j = sorted_owner[f]
                corner = _cell_key(max(c0[i, 0], c0[j, 0]), max(c0[i, 1], c0[j, 1]), max(c0[i, 2], c0[j, 2]))
                if corner != key:
                    continue
                if box_overlap(boxes, slots[i], slots[j]):
                    count = emit_pair(pairs, count, slots[i], slots[j])
    # oversize objects against everything (each oversize pair once)
    for i in range(n):
        if not oversize[i]:
            continue
        for j in range(n):
            if j == i or (oversize[j] and j < i):
                continue
            if box_overlap(boxes, slots[i], slots[j]):
                count = emit_pair(pairs, count, slots[i], slots[j])
    return count


@njit(cache=True, nogil=True)
def grid_pairs(boxes, slots, c0, oversize, starts, sorted_keys, sorted_owner):
    """Pairs: inside each bucket, entries of the same cell are tested; a pair sharing several
    cells is reported only from the cell at the low corner of the overlap of their cell ranges
    (so no pair is found twice, without a pair table)."""
    pairs = np.empty((2 * slots.shape[0] + 16, 2), dtype=np.int64)
    count = _grid_pairs_into(boxes, slots, c0, oversize, starts, sorted_keys, sorted_owner, pairs)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _grid_pairs_into(boxes, slots, c0, oversize, starts, sorted_keys, sorted_owner, pairs)
    return pairs, count


@njit(cache=True, nogil=True)
def grid_query_box(boxes, slots, oversize, mask, starts, sorted_keys, sorted_owner, cell, qq, q,
                   mailbox, stamp):
    """Slots overlapping q (quantized qq). Objects entered in several cells are tested once,
    thanks to per-object time stamps (7.7)."""
    out = np.empty(16, dtype=np.int64)
    count = 0
    n = slots.shape[0]
    lo = np.empty(3, dtype=np.int64)
    hi = np.empty(3, dtype=np.int64)
    cells = 1
    for k in range(3):
        lo[k] = qq[k] // cell
        hi[k] = qq[k + 3] // cell
        cells *= hi[k] - lo[k] + 1
    if cells > sorted_keys.shape[0] + n:  # a huge query: scanning everything is cheaper
        for i in range(n):
            if box_overlap_query(boxes, slots[i], q):
                out = grow_ids(out, count, slots[i])
                count += 1
        return out, count
    now = _next_stamp(mailbox, stamp)
    for cx in range(lo[0], hi[0] + 1):
        for cy in range(lo[1], hi[1] + 1):
            for cz in range(lo[2], hi[2] + 1):
                key = _cell_key(cx, cy, cz)
                b = _mix(key) & mask
                for e in range(starts[b], starts[b + 1]):
                    if sorted_keys[e] != key:
                        continue
                    i = sorted_owner[e]
                    if mailbox[i] == now:
                        continue
                    mailbox[i] = now
                    if box_overlap_query(boxes, slots[i], q):
                        out = grow_ids(out, count, slots[i])
                        count += 1
    for i in range(n):
        if oversize[i] and box_overlap_query(boxes, slots[i], q):
            out = grow_ids(out, count, slots[i])
            count += 1
    return out, count


# ------------------------------------------------------------------------------------------
# 7.2 hierarchical grid: level L has cells of 2^L lattice units; an object lives in ONE cell,
# the one holding its min corner, at the finest level whose cell is at least its size.
@njit(cache=True, nogil=True)
def _level_of(qb, i):
    ext = max(qb[i, 3] - qb[i, 0], max(qb[i, 4] - qb[i, 1], qb[i, 5] - qb[i, 2]))
    level = 0
    while (np.int64(1) << level) < ext:
        level += 1
    return level


@njit(cache=True, nogil=True)
def hgrid_build(qb):
    n = qb.shape[0]
    level = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    occupied = np.zeros(BITS + 2, dtype=np.int64)  # objects per level
    for i in range(n):
        lv = _level_of(qb, i)
        level[i] = lv
        occupied[lv] += 1
        keys[i] = _cell_key(qb[i, 0] >> lv, qb[i, 1] >> lv, qb[i, 2] >> lv) ^ (lv * 0x5851F42D4C957F2D)
    mask, starts, order = _bucketize(keys, n)
    by_level = np.argsort(level, kind="mergesort")
    level_start = np.zeros(BITS + 3, dtype=np.int64)
    for lv in range(BITS + 2):
        level_start[lv + 1] = level_start[lv] + occupied[lv]
    return level, keys[order], order, mask, starts, occupied, by_level, level_start


@njit(cache=True, nogil=True)
def _hgrid_scan_level(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, lv, q_lo, q_hi,
                      q_box, skip_below, a, out, count):
    """Objects of level lv overlapping the box q; their min-corner cells lie in
    [(q_lo >> lv) - 1, q_hi >> lv] (an object at level lv is at most 2^lv units wide)."""
    for cx in range((q_lo[0] >> lv) - 1, (q_hi[0] >> lv) + 1):
        for cy in range((q_lo[1] >> lv) - 1, (q_hi[1] >> lv) + 1):
            for cz in range((q_lo[2] >> lv) - 1, (q_hi[2] >> lv) + 1):
                if cx < 0 or cy < 0 or cz < 0:
                    continue
                key = _cell_key(cx, cy, cz) ^ (lv * 0x5851F42D4C957F2D)
                b = _mix(key) & mask
                for e in range(starts[b], starts[b + 1]):
                    if sorted_keys[e] != key:
                        continue
                    j = sorted_owner[e]
                    if level[j] != lv or slots[j] <= skip_below:
                        continue
                    if box_overlap_query(boxes, slots[j], q_box):
                        count = emit_pair(out, count, a, slots[j])
    return count


@njit(cache=True, nogil=True)
def _hgrid_pairs_into(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, pairs):
    n = slots.shape[0]
    count = 0
    q_lo = np.empty(3, dtype=np.int64)
    q_hi = np.empty(3, dtype=np.int64)
    for i in range(n):
        a = slots[i]
        for k in range(3):
            q_lo[k] = qb[i, k]
            q_hi[k] = qb[i, k + 3]
        for lv in range(level[i], BITS + 2):
            if occupied[lv] == 0:
                continue
            skip = a if lv == level[i] else -1
            count = _hgrid_scan_level(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, lv, q_lo,
                                      q_hi, boxes[a], skip, a, pairs, count)
    return count


@njit(cache=True, nogil=True)
def hgrid_pairs(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied):
    """Each object looks for partners at its own level (keeping larger slots only) and at every
    occupied coarser level; partners at finer levels find it themselves."""
    pairs = np.empty((2 * slots.shape[0] + 16, 2), dtype=np.int64)
    count = _hgrid_pairs_into(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, pairs)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _hgrid_pairs_into(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, pairs)
    return pairs, count


@njit(cache=True, nogil=True)
def _hgrid_query_into(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, by_level,
                      level_start, qq, q, out):
    count = 0
    q_lo = qq[:3].copy()
    q_hi = qq[3:].copy()
    for lv in range(BITS + 2):
        if occupied[lv] == 0:
            continue
        cells = 1
        for k in range(3):
            cells *= (q_hi[k] >> lv) - (q_lo[k] >> lv) + 2
        if cells > occupied[lv]:  # cheaper to scan this level's objects
            for p in range(level_start[lv], level_start[lv + 1]):
                s = slots[by_level[p]]
                if box_overlap_query(boxes, s, q):
                    count = emit_pair(out, count, -1, s)
        else:
            count = _hgrid_scan_level(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, lv, q_lo,
                                      q_hi, q, -1, -1, out, count)
    return count


@njit(cache=True, nogil=True)
def hgrid_query_box(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, by_level,
                    level_start, qq, q):
    out = np.empty((64, 2), dtype=np.int64)
    count = _hgrid_query_into(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, by_level,
                              level_start, qq, q, out)
    if count > out.shape[0]:
        out = np.empty((count, 2), dtype=np.int64)
        _hgrid_query_into(boxes, slots, qb, level, sorted_keys, sorted_owner, mask, starts, occupied, by_level,
                          level_start, qq, q, out)
    return out[:, 1].copy(), count


# ------------------------------------------------------------------------------------------
# Morton keys / locational codes (7.3.5): code = 1 << 3d | interleave(cx, cy, cz) for a node
# at depth d (d = 0 is the root, cells of 2^(BITS - d) units). BITS = 20 keeps codes < 2^61.
@njit(cache=True, nogil=True)
def _spread3(v):
    v &= 0x1FFFFF
    v = (v | (v << 32)) & 0x1F00000000FFFF
    v = (v | (v << 16)) & 0x1F0000FF0000FF
    v = (v | (v << 8)) & 0x100F00F00F00F00F
    v = (v | (v << 4)) & 0x10C30C30C30C30C3
    v = (v | (v << 2)) & 0x1249249249249249
    return v


@njit(cache=True, nogil=True)
def morton3(cx, cy, cz):
    return _spread3(cx) | (_spread3(cy) << 1) | (_spread3(cz) << 2)


@njit(cache=True, nogil=True)
def _find_run(sorted_codes, code):
    """[lo, hi) of entries equal to code in an ascending array."""
    lo = np.searchsorted(sorted_codes, code, side="left")
    hi = lo
    n = sorted_codes.shape[0]
    while hi < n and sorted_codes[hi] == code:
        hi += 1
    return lo, hi


@njit(cache=True, nogil=True)
def linear_octree_build(qb):
    """Each object goes to the deepest node containing its whole integer box (no straddling).
    Returns (codes sorted ascending, order of objects along them, codes of all nodes)."""
    n = qb.shape[0]
    codes = np.empty(n, dtype=np.int64)
    for i in range(n):
        depth = BITS
        while depth > 0:
            shift = BITS - depth
            if ((qb[i, 0] >> shift) == (qb[i, 3] >> shift) and (qb[i, 1] >> shift) == (qb[i, 4] >> shift)
                    and (qb[i, 2] >> shift) == (qb[i, 5] >> shift)):
                break
            depth -= 1
        shift = BITS - depth
        codes[i] = (np.int64(1) << (3 * depth)) | morton3(qb[i, 0] >> shift, qb[i, 1] >> shift, qb[i, 2] >> shift)
    order = np.argsort(codes, kind="mergesort")
    sorted_codes = codes[order]
    return sorted_codes, order, _all_node_codes(sorted_codes)


@njit(cache=True, nogil=True)
def _linear_octree_pairs_into(boxes, slots, sorted_codes, order, pairs):
    """Overlapping objects sit in the same node or one in an ancestor of the other's node (the
    nodes of one depth are disjoint integer ranges), so each node's objects are tested among
    themselves and against the objects of its ancestors (7.3.4 TestAllCollisions, with the
    ancestors found by shifting the Morton code instead of a recursion stack)."""
    n = slots.shape[0]
    count = 0
    lo = 0
    while lo < n:
        code = sorted_codes[lo]
        hi = lo
        while hi < n and sorted_codes[hi] == code:
            hi += 1
        for e in range(lo, hi):
            a = slots[order[e]]
            for f in range(e + 1, hi):
                b = slots[order[f]]
                if box_overlap(boxes, a, b):
                    count = emit_pair(pairs, count, a, b)
        ancestor = code >> 3
        while ancestor >= 1:
            alo, ahi = _find_run(sorted_codes, ancestor)
            for f in range(alo, ahi):
                b = slots[order[f]]
                for e in range(lo, hi):
                    a = slots[order[e]]
                    if box_overlap(boxes, a, b):
                        count = emit_pair(pairs, count, a, b)
            ancestor >>= 3
        lo = hi
    return count


@njit(cache=True, nogil=True)
def linear_octree_pairs(boxes, slots, sorted_codes, order):
    pairs = np.empty((2 * slots.shape[0] + 16, 2), dtype=np.int64)
    count = _linear_octree_pairs_into(boxes, slots, sorted_codes, order, pairs)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _linear_octree_pairs_into(boxes, slots, sorted_codes, order, pairs)
    return pairs, count


@njit(cache=True, nogil=True)
def linear_octree_query_box(boxes, slots, sorted_codes, order, node_codes, qq, q):
    """Walk down from the root along the nodes whose integer range meets the query box."""
    return _octree_query(boxes, slots, sorted_codes, order, node_codes, qq, q, False)


@njit(cache=True, nogil=True)
def _octree_query(boxes, slots, sorted_codes, order, node_codes, qq, q, loose):
    out = np.empty((64, 2), dtype=np.int64)
    stack = np.empty((8 * (BITS + 2), 5), dtype=np.int64)
    count = _octree_walk(boxes, slots, sorted_codes, order, node_codes, qq, q, loose, -1, stack, out, 0)
    if count > out.shape[0]:
        out = np.empty((count, 2), dtype=np.int64)
        _octree_walk(boxes, slots, sorted_codes, order, node_codes, qq, q, loose, -1, stack, out, 0)
    return out[:, 1].copy(), count


@njit(cache=True, nogil=True)
def _octree_walk(boxes, slots, sorted_codes, order, node_codes, qq, q, loose, a, stack, out, count):
    """Depth-first walk over existing nodes (``node_codes``: sorted codes of every node that holds
    objects or has a descendant that does), emitting (a, s) for objects s > a overlapping q.
    A node (depth d, cell c, size S) covers [c S, (c+1) S) or, if ``loose``, [c S, (c+2) S)
    (objects are anchored at their min corner). ``stack`` holds 8 (BITS + 2) rows: at most 8
    children are pending per depth."""
    if node_codes.shape[0] == 0:
        return count
    stack[0, 0] = 1
    stack[0, 1] = 0
    stack[0, 2] = 0
    stack[0, 3] = 0
    stack[0, 4] = 0
    top = 1
    while top > 0:
        top -= 1
        code = stack[top, 0]
        depth = stack[top, 1]
        size = np.int64(1) << (BITS - depth)
        reach = 2 * size if loose else size
        inside = True
        for k in range(3):
            c = stack[top, 2 + k]
            if c * size > qq[k + 3] or c * size + reach - 1 < qq[k]:
                inside = False
        if not inside:
            continue
        lo, hi = _find_run(sorted_codes, code)
        for e in range(lo, hi):
            s = slots[order[e]]
            if s > a and box_overlap_query(boxes, s, q):
                count = emit_pair(out, count, a, s)
        if depth == BITS:
            continue
        cx = stack[top, 2]
        cy = stack[top, 3]
        cz = stack[top, 4]
        for child in range(8):
            child_code = (code << 3) | child
            p = np.searchsorted(node_codes, child_code)
            if p < node_codes.shape[0] and node_codes[p] == child_code:
                stack[top, 0] = child_code
                stack[top, 1] = depth + 1
                stack[top, 2] = 2 * cx + (child & 1)
                stack[top, 3] = 2 * cy + ((child >> 1) & 1)
                stack[top, 4] = 2 * cz + ((child >> 2) & 1)
                top += 1
    return count


@njit(cache=True, nogil=True)
def _all_node_codes(sorted_codes):
    n = sorted_codes.shape[0]
    buffer = np.empty(max(16, 4 * n), dtype=np.int64)
    m = 0
    for i in range(n):
        code = sorted_codes[i]
        if i > 0 and code == sorted_codes[i - 1]:
            continue
        while code >= 1:
            buffer = grow_ids(buffer, m, code)
            m += 1
            code >>= 3
    return np.unique(buffer[:m])


@njit(cache=True, nogil=True)
def octree_node_codes(sorted_codes):
    return _all_node_codes(sorted_codes)


# ------------------------------------------------------------------------------------------
# 7.3.6 loose octree: an object of integer size <= S goes to the depth with cell size S, in the
# cell of its min corner; that node's loose bounds (twice the cell) contain it.
@njit(cache=True, nogil=True)
def loose_octree_build(qb):
    n = qb.shape[0]
    codes = np.empty(n, dtype=np.int64)
    for i in range(n):
        ext = max(qb[i, 3] - qb[i, 0], max(qb[i, 4] - qb[i, 1], qb[i, 5] - qb[i, 2]))
        depth = BITS
        while depth > 0 and (np.int64(1) << (BITS - depth)) < ext:
            depth -= 1
        shift = BITS - depth
        codes[i] = (np.int64(1) << (3 * depth)) | morton3(qb[i, 0] >> shift, qb[i, 1] >> shift, qb[i, 2] >> shift)
    order = np.argsort(codes, kind="mergesort")
    sorted_codes = codes[order]
    return sorted_codes, order, _all_node_codes(sorted_codes)


@njit(cache=True, nogil=True)
def _loose_octree_pairs_into(boxes, slots, qb, sorted_codes, order, node_codes, pairs, stack):
    count = 0
    for i in range(slots.shape[0]):
        a = slots[i]
        count = _octree_walk(boxes, slots, sorted_codes, order, node_codes, qb[i], boxes[a], True, a, stack, pairs,
                             count)
    return count


@njit(cache=True, nogil=True)
def loose_octree_pairs(boxes, slots, qb, sorted_codes, order, node_codes):
    """Every object walks the tree with its own box, keeping partners with a larger slot."""
    pairs = np.empty((2 * slots.shape[0] + 16, 2), dtype=np.int64)
    stack = np.empty((8 * (BITS + 2), 5), dtype=np.int64)
    count = _loose_octree_pairs_into(boxes, slots, qb, sorted_codes, order, node_codes, pairs, stack)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _loose_octree_pairs_into(boxes, slots, qb, sorted_codes, order, node_codes, pairs, stack)
    return pairs, count


@njit(cache=True, nogil=True)
def loose_octree_query_box(boxes, slots, sorted_codes, order, node_codes, qq, q):
    return _octree_query(boxes, slots, sorted_codes, order, node_codes, qq, q, True)
