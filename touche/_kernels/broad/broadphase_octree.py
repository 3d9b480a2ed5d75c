"""Broad phase: octrees on the quantized integer lattice of broadphase_grid.py (see there for the
lattice). Ericson 7.3.4-7.3.6: Morton keys / locational codes, the linear octree, the loose octree,
and their box and ray queries.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.broad.broadphase import box_overlap, box_overlap_query, emit_pair, grow_ids, push_hit  # noqa: E402
from touche._kernels.broad.broadphase import ray_box_entry  # noqa: E402
from touche._kernels.base.morton import compact_bits, morton3  # noqa: E402
from touche._kernels.broad.broadphase_grid import BITS, lattice_pad


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
    pad = lattice_pad(origin, scale, ray_o) / scale
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
                out, ts = push_hit(out, ts, count, sorted_slots[e], te)
                count += 1
        for c in range(table[v, N_CHILD_LO], table[v, N_CHILD_HI]):
            stack[top] = c
            top += 1
    return out, ts, count
