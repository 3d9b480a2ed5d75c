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
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.broad.broadphase import box_overlap, box_overlap_query, emit_pair, grow_ids, ray_box_entry  # noqa: E402
from touche._kernels.base.morton import compact_bits, morton3  # noqa: E402

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
# the one holding its min corner, at the finest level whose cell is at least its size, so it
# reaches at most into the next cell on each axis.
HG_LEVEL_SALT = 0x5851F42D4C957F2D


@njit(cache=True, nogil=True)
def _level_of(qb, i):
    ext = max(qb[i, 3] - qb[i, 0], max(qb[i, 4] - qb[i, 1], qb[i, 5] - qb[i, 2]))
    level = 0
    while (np.int64(1) << level) < ext:
        level += 1
    return level


@njit(cache=True, nogil=True)
def _hgrid_key(cx, cy, cz, lv):
    return _cell_key(cx, cy, cz) ^ (lv * HG_LEVEL_SALT)


@njit(cache=True, nogil=True)
def _hgrid_bucket(cx, cy, cz, lv, mask, bits):
    """Bucket of a (cell, level): the cell's Morton code plus an offset hashed from its high
    bits and the level. Cells close in space then share nearby buckets, so the entries (stored
    in bucket order) of neighbouring cells are close in memory: with a scrambling hash, on
    10^5 boxes every probe of a neighbour cell was a cache miss (pairs() 5x slower)."""
    m = morton3(cx, cy, cz)
    return (m + _mix((m >> bits) * 64 + lv)) & mask


@njit(cache=True, nogil=True)
def hgrid_build(qb, boxes, slots):
    """Entries (one per object) bucketed by (cell, level) (_hgrid_bucket). Returns (mask, bits, starts,
    entry_key, entry_level, entry_slot, entry_box (n, 6): the objects in bucket order, so a
    bucket's objects are adjacent in memory, occupied (objects per level), level_entries (entry
    indices sorted by level), level_start)."""
    n = qb.shape[0]
    level = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    occupied = np.zeros(BITS + 2, dtype=np.int64)
    for i in range(n):
        lv = _level_of(qb, i)
        level[i] = lv
        occupied[lv] += 1
        keys[i] = _hgrid_key(qb[i, 0] >> lv, qb[i, 1] >> lv, qb[i, 2] >> lv, lv)
    size = 16
    bits = 4
    while size < 2 * n:
        size *= 2
        bits += 1
    mask = size - 1
    bucket = np.empty(n, dtype=np.int64)
    for i in range(n):
        lv = level[i]
        bucket[i] = _hgrid_bucket(qb[i, 0] >> lv, qb[i, 1] >> lv, qb[i, 2] >> lv, lv, mask, bits)
    starts = np.zeros(size + 1, dtype=np.int64)
    for i in range(n):
        starts[bucket[i] + 1] += 1
    for b in range(size):
        starts[b + 1] += starts[b]
    fill = starts[:size].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[fill[bucket[i]]] = i
        fill[bucket[i]] += 1
    entry_key = keys[order]
    entry_level = level[order]
    entry_slot = np.empty(n, dtype=np.int64)
    entry_box = np.empty((n, 6))
    entry_qb = np.empty((n, 6), dtype=np.int64)
    for e in range(n):
        i = order[e]
        entry_slot[e] = slots[i]
        for k in range(6):
            entry_box[e, k] = boxes[slots[i], k]
            entry_qb[e, k] = qb[i, k]
    level_entries = np.argsort(entry_level, kind="mergesort")
    level_start = np.zeros(BITS + 3, dtype=np.int64)
    for lv in range(BITS + 2):
        level_start[lv + 1] = level_start[lv] + occupied[lv]
    return mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, entry_qb, occupied, level_entries, \
        level_start


@njit(cache=True, nogil=True)
def _hgrid_cell(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, cx, cy, cz, lv, first, q, a, out,
                count):
    """Emit (a, slot) for the entries of cell (cx, cy, cz) at level lv, from entry index
    ``first`` on, whose box overlaps q."""
    key = _hgrid_key(cx, cy, cz, lv)
    b = _hgrid_bucket(cx, cy, cz, lv, mask, bits)
    for e in range(max(starts[b], first), starts[b + 1]):
        if entry_key[e] == key and entry_level[e] == lv and box_overlap_query(entry_box, e, q):
            count = emit_pair(out, count, a, entry_slot[e])
    return count


@njit(cache=True, nogil=True)
def _hgrid_coarser(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied, level_entries,
                   level_start, lv, lo, hi, q, a, out, count):
    """Objects of level lv overlapping q (integer box [lo, hi]): their min-corner cells lie in
    [(lo >> lv) - 1, hi >> lv] on each axis (an object of level lv spans two cells at most);
    when the level holds fewer objects than those cells, its objects are scanned instead."""
    cells = 1
    for k in range(3):
        cells *= (hi[k] >> lv) - (lo[k] >> lv) + 2
    if cells > occupied[lv]:
        for p in range(level_start[lv], level_start[lv + 1]):
            e = level_entries[p]
            if box_overlap_query(entry_box, e, q):
                count = emit_pair(out, count, a, entry_slot[e])
        return count
    for cx in range(max(0, (lo[0] >> lv) - 1), (hi[0] >> lv) + 1):
        for cy in range(max(0, (lo[1] >> lv) - 1), (hi[1] >> lv) + 1):
            for cz in range(max(0, (lo[2] >> lv) - 1), (hi[2] >> lv) + 1):
                count = _hgrid_cell(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, cx, cy, cz,
                                    lv, 0, q, a, out, count)
    return count


@njit(cache=True, nogil=True)
def _hgrid_pairs_into(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, entry_qb, occupied,
                      level_entries, level_start, pairs):
    """Each object looks for partners at its own level and at every occupied coarser level
    (7.2); partners at finer levels find it themselves. At its own level the partners are
    anchored in its cell or one of the 26 around it; only the 13 'forward' neighbours (offset
    lexicographically > 0) and, in its own cell, entries after its own are searched, so each
    same-level pair is met once."""
    n = entry_key.shape[0]
    count = 0
    for e in range(n):
        a = entry_slot[e]
        lv0 = entry_level[e]
        lo = entry_qb[e, :3]
        hi = entry_qb[e, 3:]
        q = entry_box[e]
        cx = lo[0] >> lv0
        cy = lo[1] >> lv0
        cz = lo[2] >> lv0
        count = _hgrid_cell(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, cx, cy, cz, lv0, e + 1,
                            q, a, pairs, count)
        for dx in range(-1, 2):
            for dy in range(-1, 2):
                for dz in range(-1, 2):
                    if dx < 0 or (dx == 0 and (dy < 0 or (dy == 0 and dz <= 0))):
                        continue
                    if cx + dx < 0 or cy + dy < 0 or cz + dz < 0:
                        continue
                    count = _hgrid_cell(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, cx + dx,
                                        cy + dy, cz + dz, lv0, 0, q, a, pairs, count)
        for lv in range(lv0 + 1, BITS + 2):
            if occupied[lv] > 0:
                count = _hgrid_coarser(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied,
                                       level_entries, level_start, lv, lo, hi, q, a, pairs, count)
    return count


@njit(cache=True, nogil=True)
def hgrid_pairs(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, entry_qb, occupied, level_entries,
                level_start):
    n = entry_key.shape[0]
    pairs = np.empty((2 * n + 16, 2), dtype=np.int64)
    count = _hgrid_pairs_into(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, entry_qb, occupied,
                              level_entries, level_start, pairs)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _hgrid_pairs_into(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, entry_qb, occupied,
                          level_entries, level_start, pairs)
    return pairs, count


@njit(cache=True, nogil=True)
def _hgrid_query_into(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied, level_entries,
                      level_start, qq, q, out):
    count = 0
    lo = qq[:3]
    hi = qq[3:]
    for lv in range(BITS + 2):
        if occupied[lv] > 0:
            count = _hgrid_coarser(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied,
                                   level_entries, level_start, lv, lo, hi, q, -1, out, count)
    return count


@njit(cache=True, nogil=True)
def hgrid_query_box(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied, level_entries,
                    level_start, qq, q):
    out = np.empty((64, 2), dtype=np.int64)
    count = _hgrid_query_into(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied,
                              level_entries, level_start, qq, q, out)
    if count > out.shape[0]:
        out = np.empty((count, 2), dtype=np.int64)
        _hgrid_query_into(mask, bits, starts, entry_key, entry_level, entry_slot, entry_box, occupied, level_entries,
                          level_start, qq, q, out)
    return out[:, 1].copy(), count


# ------------------------------------------------------------------------------------------
# Morton keys / locational codes (7.3.5): code = 1 << 3d | interleave(cx, cy, cz) for a node
# at depth d (d = 0 is the root, cells of 2^(BITS - d) units). BITS = 20 keeps codes < 2^61.
@njit(cache=True, nogil=True)
def code_depth(code):
    """Depth d of a locational code (its leading 1 bit is bit 3d)."""
    d = 0
    while (code >> (3 * (d + 1))) != 0:
        d += 1
    return d


@njit(cache=True, nogil=True)
def _all_node_codes(sorted_codes):
    """Sorted unique codes of every node holding objects and of all their ancestors."""
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


# node table columns (one (m, 8) int64 row per node, nodes in ascending code order)
N_OBJ_LO = 0  # its objects are positions [N_OBJ_LO, N_OBJ_HI) of the code-sorted object order
N_OBJ_HI = 1
N_CHILD_LO = 2  # its children are nodes [N_CHILD_LO, N_CHILD_HI): codes (c << 3) | k are adjacent
N_CHILD_HI = 3
N_X = 4  # integer cell coordinates at its depth
N_DEPTH = 7


@njit(cache=True, nogil=True)
def octree_tables(codes):
    """From the objects' node codes (n,): (order (n,) objects sorted by code, rank (n,) the
    position of each object in that order, depth (n,) of each object's node, node table (m, 8)).

    Codes sorted ascending list depth 0, then depth 1, ... and inside a depth Morton order, so
    the eight possible children of a node are one contiguous run: every traversal below steps
    from a node to its children without searching."""
    n = codes.shape[0]
    order = np.argsort(codes, kind="mergesort")
    sorted_codes = codes[order]
    rank = np.empty(n, dtype=np.int64)
    depth = np.empty(n, dtype=np.int64)
    for e in range(n):
        rank[order[e]] = e
    for i in range(n):
        depth[i] = code_depth(codes[i])
    node_codes = _all_node_codes(sorted_codes)
    m = node_codes.shape[0]
    table = np.zeros((m, 8), dtype=np.int64)
    for v in range(m):
        code = node_codes[v]
        d = code_depth(code)
        table[v, N_OBJ_LO] = np.searchsorted(sorted_codes, code, side="left")
        table[v, N_OBJ_HI] = np.searchsorted(sorted_codes, code, side="right")
        if d < BITS:  # (code << 3) stays below 2^63 for d < BITS
            table[v, N_CHILD_LO] = np.searchsorted(node_codes, code << 3, side="left")
            table[v, N_CHILD_HI] = np.searchsorted(node_codes, (code << 3) | 7, side="right")
        key = code ^ (np.int64(1) << (3 * d))
        table[v, N_X] = compact_bits(key)
        table[v, N_X + 1] = compact_bits(key >> 1)
        table[v, N_X + 2] = compact_bits(key >> 2)
        table[v, N_DEPTH] = d
    return order, rank, depth, table


@njit(cache=True, nogil=True)
def _node_meets(table, v, reach_cells, lo0, lo1, lo2, hi0, hi1, hi2):
    """Does node v's integer region (``reach_cells`` = 1: its cell; 2: its loose bounds, twice
    the cell) meet the integer box [lo, hi]?"""
    size = np.int64(1) << (BITS - table[v, N_DEPTH])
    reach = reach_cells * size - 1
    x = table[v, N_X] * size
    y = table[v, N_X + 1] * size
    z = table[v, N_X + 2] * size
    return x <= hi0 and lo0 <= x + reach and y <= hi1 and lo1 <= y + reach and z <= hi2 and lo2 <= z + reach


@njit(cache=True, nogil=True)
def linear_octree_build(qb):
    """Each object goes to the deepest node containing its whole integer box (no straddling).
    Returns octree_tables of those codes."""
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
    return octree_tables(codes)


@njit(cache=True, nogil=True)
def _linear_octree_pairs_into(sorted_boxes, sorted_slots, qb, order, table, pairs, cand, frames):
    """Overlapping objects sit in the same node or one in an ancestor of the other's node (the
    nodes of one depth are disjoint integer ranges; 7.3.4 TestAllCollisions). A depth-first walk
    keeps, for the node on top of its path, the list ``cand`` of objects of its ANCESTORS that
    overlap its cell: a child's list is its parent's list plus the parent's own objects,
    filtered by the child's cell. Each node's objects are tested among themselves and against
    its list only. (Testing against every ancestor object unfiltered -- the printed
    TestAllCollisions -- measured 13x slower than coal on 10^4 boxes: the objects straddling the
    root's planes are tested against every object.)

    Returns the pair count, or -1 when ``cand`` is too small."""
    count = 0
    if table.shape[0] == 0:
        return 0
    cap = cand.shape[0]
    count = _node_pairs(sorted_boxes, sorted_slots, table, 0, cand, 0, 0, pairs, count)
    frames[0, 0] = 0
    frames[0, 1] = 0
    frames[0, 2] = 0
    frames[0, 3] = table[0, N_CHILD_LO]
    top = 0
    while top >= 0:
        u = frames[top, 0]
        c = frames[top, 3]
        if c >= table[u, N_CHILD_HI]:
            top -= 1
            continue
        frames[top, 3] = c + 1
        start = frames[top, 2]
        end = start
        for p in range(frames[top, 1], frames[top, 2] + table[u, N_OBJ_HI] - table[u, N_OBJ_LO]):
            e = cand[p] if p < frames[top, 2] else table[u, N_OBJ_LO] + (p - frames[top, 2])
            i = order[e]
            if _node_meets(table, c, 1, qb[i, 0], qb[i, 1], qb[i, 2], qb[i, 3], qb[i, 4], qb[i, 5]):
                if end >= cap:
                    return -1
                cand[end] = e
                end += 1
        count = _node_pairs(sorted_boxes, sorted_slots, table, c, cand, start, end, pairs, count)
        if table[c, N_CHILD_HI] > table[c, N_CHILD_LO]:
            top += 1
            frames[top, 0] = c
            frames[top, 1] = start
            frames[top, 2] = end
            frames[top, 3] = table[c, N_CHILD_LO]
    return count


@njit(cache=True, nogil=True)
def _node_pairs(sorted_boxes, sorted_slots, table, v, cand, start, end, pairs, count):
    """Pairs among node v's objects, and between them and the objects cand[start:end]."""
    for e in range(table[v, N_OBJ_LO], table[v, N_OBJ_HI]):
        for f in range(e + 1, table[v, N_OBJ_HI]):
            if box_overlap(sorted_boxes, e, f):
                count = emit_pair(pairs, count, sorted_slots[e], sorted_slots[f])
        for p in range(start, end):
            f = cand[p]
            if box_overlap(sorted_boxes, e, f):
                count = emit_pair(pairs, count, sorted_slots[e], sorted_slots[f])
    return count


@njit(cache=True, nogil=True)
def sorted_copies(boxes, slots, order):
    """The boxes and slots of the objects in code order: a node's objects are then adjacent in
    memory (the pair loops read them ~2x faster than through slots[order[e]])."""
    n = order.shape[0]
    sorted_boxes = np.empty((n, 6))
    sorted_slots = np.empty(n, dtype=np.int64)
    for e in range(n):
        s = slots[order[e]]
        sorted_slots[e] = s
        for k in range(6):
            sorted_boxes[e, k] = boxes[s, k]
    return sorted_boxes, sorted_slots


@njit(cache=True, nogil=True)
def linear_octree_pairs(sorted_boxes, sorted_slots, qb, order, table):
    """Pairs; ``sorted_boxes`` / ``sorted_slots`` from ``sorted_copies`` (made at build time)."""
    pairs = np.empty((2 * sorted_slots.shape[0] + 16, 2), dtype=np.int64)
    frames = np.empty((BITS + 2, 4), dtype=np.int64)
    cand = np.empty(4 * sorted_slots.shape[0] + 64, dtype=np.int64)
    while True:
        count = _linear_octree_pairs_into(sorted_boxes, sorted_slots, qb, order, table, pairs, cand, frames)
        if count < 0:
            cand = np.empty(2 * cand.shape[0], dtype=np.int64)
        elif count > pairs.shape[0]:
            pairs = np.empty((count, 2), dtype=np.int64)
        else:
            return pairs, count


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
    return octree_tables(codes)


@njit(cache=True, nogil=True)
def _octree_walk(sorted_boxes, sorted_slots, table, reach_cells, lo, hi, q, max_depth, skip_depth, skip_pos, a,
                 stack, out, count):
    """Depth-first walk from the root over the nodes whose region (cell, or loose bounds when
    ``reach_cells`` = 2) meets the integer box [lo, hi], down to depth ``max_depth``; emits
    (a, s) for each object s whose float box overlaps q. Objects at depth ``skip_depth`` with a
    sorted position <= ``skip_pos`` are skipped (pairs: each same-depth pair is found once).
    ``stack`` holds 8 (BITS + 2) nodes: at most 8 children are pending per depth."""
    if table.shape[0] == 0:
        return count
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        if not _node_meets(table, v, reach_cells, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]):
            continue
        d = table[v, N_DEPTH]
        first = table[v, N_OBJ_LO]
        if d == skip_depth and first <= skip_pos:
            first = skip_pos + 1
        for e in range(first, table[v, N_OBJ_HI]):
            if box_overlap_query(sorted_boxes, e, q):
                count = emit_pair(out, count, a, sorted_slots[e])
        if d < max_depth:
            for c in range(table[v, N_CHILD_LO], table[v, N_CHILD_HI]):
                stack[top] = c
                top += 1
    return count


@njit(cache=True, nogil=True)
def _loose_octree_pairs_into(boxes, slots, qb, sorted_boxes, sorted_slots, rank, depth, table, pairs, stack):
    """Every object walks the tree with its own box down to its own depth: partners stored
    higher up are found by the deeper object, partners at the same depth by the one earlier in
    the code order. Loose bounds contain their objects, so an object overlapping b's box meets
    the loose bounds of b's node."""
    count = 0
    for i in range(slots.shape[0]):
        a = slots[i]
        count = _octree_walk(sorted_boxes, sorted_slots, table, 2, qb[i, :3], qb[i, 3:], boxes[a], depth[i],
                             depth[i], rank[i], a, stack, pairs, count)
    return count


@njit(cache=True, nogil=True)
def loose_octree_pairs(boxes, slots, qb, sorted_boxes, sorted_slots, rank, depth, table):
    pairs = np.empty((2 * slots.shape[0] + 16, 2), dtype=np.int64)
    stack = np.empty(8 * (BITS + 2), dtype=np.int64)
    count = _loose_octree_pairs_into(boxes, slots, qb, sorted_boxes, sorted_slots, rank, depth, table, pairs, stack)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _loose_octree_pairs_into(boxes, slots, qb, sorted_boxes, sorted_slots, rank, depth, table, pairs, stack)
    return pairs, count


@njit(cache=True, nogil=True)
def octree_query_box(sorted_boxes, sorted_slots, table, reach_cells, qq, q):
    """Slots overlapping q (quantized qq); reach_cells 1 = linear octree, 2 = loose octree."""
    out = np.empty((64, 2), dtype=np.int64)
    stack = np.empty(8 * (BITS + 2), dtype=np.int64)
    count = _octree_walk(sorted_boxes, sorted_slots, table, reach_cells, qq[:3], qq[3:], q, BITS, -1, -1, -1, stack,
                         out, 0)
    if count > out.shape[0]:
        out = np.empty((count, 2), dtype=np.int64)
        _octree_walk(sorted_boxes, sorted_slots, table, reach_cells, qq[:3], qq[3:], q, BITS, -1, -1, -1, stack, out,
                     0)
    return out[:, 1].copy(), count


# ------------------------------------------------------------------------------------------
# ray queries on the lattice structures
@njit(cache=True, nogil=True)
def _lattice_pad(origin, scale, ray_origin):
    """Slack in lattice units that covers the rounding of x -> (x - origin) * scale for every
    coordinate involved (object boxes and points of the ray): ~1e-9 of the magnitudes, far
    above the few ulps actually at stake, far below a cell."""
    big = float(TOP)
    for k in range(3):
        big = max(big, (abs(origin[k]) + abs(ray_origin[k])) * scale)
    return 1e-9 * big + 1e-9


@njit(cache=True, nogil=True)
def _push_hit(out, ts, count, s, t):
    if count >= out.shape[0]:
        bigger = np.empty(2 * out.shape[0] + 16, dtype=np.int64)
        bigger[:count] = out[:count]
        out = bigger
        bigger_t = np.empty(2 * ts.shape[0] + 16)
        bigger_t[:count] = ts[:count]
        ts = bigger_t
    out[count] = s
    ts[count] = t
    return out, ts


@njit(cache=True, nogil=True)
def _clip_lattice(u0, du, pad, max_t):
    """Parameter interval [t0, t1] of the lattice-space ray u0 + t du inside the padded lattice
    cube [-pad, TOP + 1 + pad]^3, clipped to [0, max_t]; t0 > t1 when it misses."""
    t0 = 0.0
    t1 = max_t
    lo = -pad
    hi = TOP + 1.0 + pad
    for k in range(3):
        if du[k] == 0.0:
            if u0[k] < lo or u0[k] > hi:
                return 1.0, 0.0
        else:
            ta = (lo - u0[k]) / du[k]
            tb = (hi - u0[k]) / du[k]
            if ta > tb:
                ta, tb = tb, ta
            t0 = max(t0, ta)
            t1 = min(t1, tb)
    return t0, t1


@njit(cache=True, nogil=True)
def grid_query_ray(boxes, slots, oversize, mask, starts, sorted_keys, sorted_owner, cell, origin, scale, ray_o, ray_d,
                   max_t, mailbox, stamp):
    """Boxes hit by the ray, found by walking the grid cells it crosses (Ericson 7.4.2,
    Amanatides-Woo 3D-DDA) -- written from the crossing parameters directly, so the seed's
    swapped tx/ty initialisers (SEED-NOTES L14927) do not arise: at every step the next crossing
    of each axis is t_k = (boundary_k - u0_k) / du_k for the boundary ahead of the current cell.

    Cell indices are floor(u / cell) (never truncation, L14912). Each step covers the ray piece
    [t, t_next]; the cells met by that piece's lattice box grown by a rounding slack are
    visited (usually just the current one), so rays along cell faces or through corners never
    skip a cell. Objects in several cells are tested once per query (mailboxes, 7.7). Returns
    (slots, t, count)."""
    out = np.empty(16, dtype=np.int64)
    ts = np.empty(16)
    count = 0
    n = slots.shape[0]
    u0 = np.empty(3)
    du = np.empty(3)
    for k in range(3):
        u0[k] = (ray_o[k] - origin[k]) * scale
        du[k] = ray_d[k] * scale
    pad = _lattice_pad(origin, scale, ray_o)
    t0, t1 = _clip_lattice(u0, du, pad, max_t)
    now = _next_stamp(mailbox, stamp)
    if t0 <= t1:
        span = 3.0
        for k in range(3):
            span += abs(du[k]) * (t1 - t0) / cell if np.isfinite(t1) else np.inf
        top_cell = TOP // cell
        brute = not span <= 2 * (sorted_keys.shape[0] + n) + 64
        steps = 0
        t = t0
        lo_c = np.empty(3, dtype=np.int64)
        hi_c = np.empty(3, dtype=np.int64)
        while not brute:
            steps += 1
            if steps > 4 * span + 64:  # cannot happen; stay correct if it ever does
                brute = True
                break
            t_next = t1
            for k in range(3):
                if du[k] == 0.0:
                    continue
                p = u0[k] + t * du[k]
                if du[k] > 0.0:
                    c = np.floor(p / cell)
                    boundary = (c + 1.0) * cell
                else:
                    c = np.ceil(p / cell) - 1.0
                    boundary = c * cell
                tk = (boundary - u0[k]) / du[k]
                if tk < t_next:
                    t_next = tk
            if not t_next > t:
                t_next = min(t1, t + 1e-12 * max(1.0, abs(t)))
            for k in range(3):
                pa = u0[k] + t * du[k]
                pb = u0[k] + t_next * du[k]
                lo = min(pa, pb) - pad
                hi = max(pa, pb) + pad
                lo_c[k] = max(0, min(top_cell, np.int64(np.floor(max(lo, 0.0) / cell))))
                hi_c[k] = max(0, min(top_cell, np.int64(np.floor(min(max(hi, 0.0), float(TOP)) / cell))))
            for cx in range(lo_c[0], hi_c[0] + 1):
                for cy in range(lo_c[1], hi_c[1] + 1):
                    for cz in range(lo_c[2], hi_c[2] + 1):
                        key = _cell_key(cx, cy, cz)
                        b = _mix(key) & mask
                        for e in range(starts[b], starts[b + 1]):
                            if sorted_keys[e] != key:
                                continue
                            i = sorted_owner[e]
                            if mailbox[i] == now:
                                continue
                            mailbox[i] = now
                            s = slots[i]
                            te = ray_box_entry(boxes, s, ray_o, ray_d, max_t)
                            if te >= 0.0:
                                out, ts = _push_hit(out, ts, count, s, te)
                                count += 1
            if t_next >= t1:
                break
            t = t_next
        if brute:  # an absurdly long walk: test every object (mailboxes keep those already seen)
            for i in range(n):
                if oversize[i] or mailbox[i] == now:
                    continue
                mailbox[i] = now
                s = slots[i]
                te = ray_box_entry(boxes, s, ray_o, ray_d, max_t)
                if te >= 0.0:
                    out, ts = _push_hit(out, ts, count, s, te)
                    count += 1
    for i in range(n):
        if oversize[i]:
            s = slots[i]
            te = ray_box_entry(boxes, s, ray_o, ray_d, max_t)
            if te >= 0.0:
                out, ts = _push_hit(out, ts, count, s, te)
                count += 1
    return out, ts, count


@njit(cache=True, nogil=True)
def octree_query_ray(sorted_boxes, sorted_slots, table, reach_cells, origin, scale, ray_o, ray_d, max_t):
    """Boxes hit by the ray: a depth-first walk over the nodes whose region (cell, or loose
    bounds), mapped back to world coordinates and grown by the rounding slack, the ray meets
    (slab test, Ericson 5.3.3). Returns (slots, t, count)."""
    out = np.empty(16, dtype=np.int64)
    ts = np.empty(16)
    count = 0
    if table.shape[0] == 0:
        return out, ts, count
    pad = _lattice_pad(origin, scale, ray_o) / scale
    stack = np.empty(8 * (BITS + 2), dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        size = np.int64(1) << (BITS - table[v, N_DEPTH])
        t0 = 0.0
        t1 = max_t
        hit = True
        for k in range(3):
            lo = origin[k] + (table[v, N_X + k] * size) / scale - pad
            hi = origin[k] + (table[v, N_X + k] * size + reach_cells * size) / scale + pad
            d = ray_d[k]
            if d == 0.0:
                if ray_o[k] < lo or ray_o[k] > hi:
                    hit = False
                    break
            else:
                ta = (lo - ray_o[k]) / d
                tb = (hi - ray_o[k]) / d
                if ta > tb:
                    ta, tb = tb, ta
                t0 = max(t0, ta)
                t1 = min(t1, tb)
                if t0 > t1:
                    hit = False
                    break
        if not hit:
            continue
        for e in range(table[v, N_OBJ_LO], table[v, N_OBJ_HI]):
            te = ray_box_entry(sorted_boxes, e, ray_o, ray_d, max_t)
            if te >= 0.0:
                out, ts = _push_hit(out, ts, count, sorted_slots[e], te)
                count += 1
        for c in range(table[v, N_CHILD_LO], table[v, N_CHILD_HI]):
            stack[top] = c
            top += 1
    return out, ts, count
