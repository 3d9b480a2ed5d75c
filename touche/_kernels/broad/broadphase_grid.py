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

Here: the lattice, the uniform (hashed) grid and the ray helpers; broadphase_hgrid.py holds the
hierarchical grid, broadphase_octree.py the linear and loose octrees.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402

from touche._kernels.broad.broadphase import box_overlap, box_overlap_query, emit_pair, grow_ids, push_hit  # noqa: E402
from touche._kernels.broad.broadphase import ray_box_entry  # noqa: E402


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
def mix_key(key):
    h = key * -7046029254386353131
    h = h ^ (h >> 31)
    h = h * -4658895280553007687
    return h ^ (h >> 29)


@njit(cache=True, nogil=True)
def cell_key(cx, cy, cz):
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
        b = mix_key(keys[e]) & mask
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
                    keys[e] = cell_key(cx, cy, cz)
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
                corner = cell_key(max(c0[i, 0], c0[j, 0]), max(c0[i, 1], c0[j, 1]), max(c0[i, 2], c0[j, 2]))
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
def _objects_in_cells(lo, hi, mask, starts, sorted_keys, sorted_owner, mailbox, now, found):
    """The objects entered in the cells lo .. hi (inclusive, per axis) that this query (time
    stamp ``now``) has not met yet, stamped now: ``(found, count)``, written into ``found``
    (grown when full). Objects in several cells are thus tested once per query (mailboxes,
    7.7)."""
    count = 0
    for cx in range(lo[0], hi[0] + 1):
        for cy in range(lo[1], hi[1] + 1):
            for cz in range(lo[2], hi[2] + 1):
                key = cell_key(cx, cy, cz)
                b = mix_key(key) & mask
                for e in range(starts[b], starts[b + 1]):
                    if sorted_keys[e] != key:
                        continue
                    i = sorted_owner[e]
                    if mailbox[i] == now:
                        continue
                    mailbox[i] = now
                    found = grow_ids(found, count, i)
                    count += 1
    return found, count


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
    found, unseen = _objects_in_cells(lo, hi, mask, starts, sorted_keys, sorted_owner, mailbox, now,
                                      np.empty(16, dtype=np.int64))
    for f in range(unseen):
        i = found[f]
        if box_overlap_query(boxes, slots[i], q):
            out = grow_ids(out, count, slots[i])
            count += 1
    for i in range(n):
        if oversize[i] and box_overlap_query(boxes, slots[i], q):
            out = grow_ids(out, count, slots[i])
            count += 1
    return out, count


# ------------------------------------------------------------------------------------------
# ray queries on the lattice structures
@njit(cache=True, nogil=True)
def lattice_pad(origin, scale, ray_origin):
    """Slack in lattice units that covers the rounding of x -> (x - origin) * scale for every
    coordinate involved (object boxes and points of the ray): ~1e-9 of the magnitudes, far
    above the few ulps actually at stake, far below a cell."""
    big = float(TOP)
    for k in range(3):
        big = max(big, (abs(origin[k]) + abs(ray_origin[k])) * scale)
    return 1e-9 * big + 1e-9


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
    pad = lattice_pad(origin, scale, ray_o)
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
        found = np.empty(16, dtype=np.int64)
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
            found, unseen = _objects_in_cells(lo_c, hi_c, mask, starts, sorted_keys, sorted_owner, mailbox, now, found)
            for f in range(unseen):
                s = slots[found[f]]
                te = ray_box_entry(boxes, s, ray_o, ray_d, max_t)
                if te >= 0.0:
                    out, ts = push_hit(out, ts, count, s, te)
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
                    out, ts = push_hit(out, ts, count, s, te)
                    count += 1
    for i in range(n):
        if oversize[i]:
            s = slots[i]
            te = ray_box_entry(boxes, s, ray_o, ray_d, max_t)
            if te >= 0.0:
                out, ts = push_hit(out, ts, count, s, te)
                count += 1
    return out, ts, count
