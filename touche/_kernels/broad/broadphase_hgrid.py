"""Broad phase: the hierarchical grid (Ericson 7.2) on the quantized integer lattice of
broadphase_grid.py (see there for the lattice): level L has cells of 2^L lattice units, an
object lives in one cell of the finest level whose cell is at least its size.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.broad.broadphase import box_overlap_query, emit_pair
from touche._kernels.base.morton import morton3
from touche._kernels.broad.broadphase_grid import BITS, cell_key, mix_key


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
    return cell_key(cx, cy, cz) ^ (lv * HG_LEVEL_SALT)


@njit(cache=True, nogil=True)
def _hgrid_bucket(cx, cy, cz, lv, mask, bits):
    """Bucket of a (cell, level): the cell's Morton code plus an offset hashed from its high
    bits and the level. Cells close in space then share nearby buckets, so the entries (stored
    in bucket order) of neighbouring cells are close in memory: with a scrambling hash, on
    10^5 boxes every probe of a neighbour cell was a cache miss (pairs() 5x slower)."""
    m = morton3(cx, cy, cz)
    return (m + mix_key((m >> bits) * 64 + lv)) & mask


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
