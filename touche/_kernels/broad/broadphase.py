"""Broad-phase kernels shared by every structure, and the two sort-and-sweep variants.

Seeds: Ericson, Real-Time Collision Detection, 7.5 (sort and prune / sweep and prune: 7.5.1 the
incremental sorted-endpoint version with persistent pairs, 7.5.2 the array version with the
variance-chosen axis), 7.7 (avoiding retests).

Conventions (all broad-phase kernels): boxes live in a slot array ``boxes`` (capacity, 6) float64
``[minx, miny, minz, maxx, maxy, maxz]``; a structure works on the slots listed in ``slots``
(int64). Overlap is the CLOSED test (touching boxes overlap). Pair kernels return
``(pairs (cap, 2) int64 slot pairs, count)``; ``finalize_pairs`` maps slots to user ids and sorts.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402

INF = np.inf


# ------------------------------------------------------------------------------------------
# small shared helpers
@njit(cache=True, nogil=True)
def box_overlap(boxes, a, b):
    """Closed AABB overlap of slots a and b (touching counts)."""
    return (boxes[a, 0] <= boxes[b, 3] and boxes[b, 0] <= boxes[a, 3]
            and boxes[a, 1] <= boxes[b, 4] and boxes[b, 1] <= boxes[a, 4]
            and boxes[a, 2] <= boxes[b, 5] and boxes[b, 2] <= boxes[a, 5])


@njit(cache=True, nogil=True)
def box_overlap_query(boxes, a, q):
    """Closed overlap of slot a with a query box q (6,)."""
    return (boxes[a, 0] <= q[3] and q[0] <= boxes[a, 3]
            and boxes[a, 1] <= q[4] and q[1] <= boxes[a, 4]
            and boxes[a, 2] <= q[5] and q[2] <= boxes[a, 5])


@njit(cache=True, nogil=True)
def box_sphere_overlap(boxes, a, center, radius):
    """Closed test: squared distance from the sphere centre to box a <= radius^2 (Ericson 5.2.5)."""
    d2 = 0.0
    for k in range(3):
        v = center[k]
        if v < boxes[a, k]:
            d2 += (boxes[a, k] - v) ** 2
        elif v > boxes[a, k + 3]:
            d2 += (v - boxes[a, k + 3]) ** 2
    return d2 <= radius * radius


@njit(cache=True, nogil=True)
def ray_box_entry(boxes, a, origin, direction, max_t):
    """Entry parameter t in [0, max_t] of the ray into box a (closed slabs, Ericson 5.3.3), or -1.

    A zero direction component never divides: the origin must then lie inside that slab."""
    t0 = 0.0
    t1 = max_t
    for k in range(3):
        lo = boxes[a, k]
        hi = boxes[a, k + 3]
        d = direction[k]
        o = origin[k]
        if d == 0.0:
            if o < lo or o > hi:
                return -1.0
        else:
            ta = (lo - o) / d
            tb = (hi - o) / d
            if ta > tb:
                ta, tb = tb, ta
            if ta > t0:
                t0 = ta
            if tb < t1:
                t1 = tb
            if t0 > t1:
                return -1.0
    return t0


@njit(cache=True, nogil=True)
def grow_pairs(pairs, count, a, b):
    """Append (a, b) to a growable (cap, 2) buffer; returns the (possibly new) buffer."""
    if count >= pairs.shape[0]:
        bigger = np.empty((2 * pairs.shape[0] + 16, 2), dtype=np.int64)
        bigger[:count] = pairs[:count]
        pairs = bigger
    pairs[count, 0] = a
    pairs[count, 1] = b
    return pairs


@njit(cache=True, nogil=True, inline="always")
def push_pair_if_overlap(stack, top, node_box, a, b):
    """Push the node pair (a, b) on a pair stack if their boxes overlap; returns the new top (the
    slot at the old top is written either way: the caller has checked room for two)."""
    stack[top, 0] = a
    stack[top, 1] = b
    if box_overlap(node_box, a, b):
        return top + 1
    return top


@njit(cache=True, nogil=True)
def emit_pair(pairs, count, a, b):
    """Write (a, b) at ``count`` if it fits and return count + 1. Hot loops call this instead of
    growing the buffer: re-binding an array variable inside a loop makes numba touch reference
    counts on every iteration (measured 5-10x slower); callers rerun with a buffer of the
    returned size when it overflowed."""
    if count < pairs.shape[0]:
        pairs[count, 0] = a
        pairs[count, 1] = b
    return count + 1


@njit(cache=True, nogil=True)
def grow_ids(buffer, count, value):
    if count >= buffer.shape[0]:
        bigger = np.empty(2 * buffer.shape[0] + 16, dtype=np.int64)
        copy_into(bigger[:count], buffer[:count])
        buffer = bigger
    buffer[count] = value
    return buffer


@njit(cache=True, nogil=True)
def finalize_pairs(pairs, count, ids):
    """Slot pairs -> (count, 2) id pairs with id_a < id_b, rows sorted lexicographically."""
    out = np.empty((count, 2), dtype=np.int64)
    max_id = 0
    for p in range(count):
        a = ids[pairs[p, 0]]
        b = ids[pairs[p, 1]]
        if a > b:
            a, b = b, a
        out[p, 0] = a
        out[p, 1] = b
        if b > max_id:
            max_id = b
    if count < 2:
        return out
    m = max_id + 1
    if m < 3037000499:  # m * m fits in int64: sort one packed key
        keys = np.empty(count, dtype=np.int64)
        for p in range(count):
            keys[p] = out[p, 0] * m + out[p, 1]
        keys.sort()
        for p in range(count):
            out[p, 0] = keys[p] // m
            out[p, 1] = keys[p] - out[p, 0] * m
        return out
    order = np.argsort(out[:, 1], kind="mergesort")
    tmp = out[order]
    order = np.argsort(tmp[:, 0], kind="mergesort")
    return tmp[order].copy()


@njit(cache=True, nogil=True)
def finalize_pairs_ranked(pairs, count, rank_of_slot, sorted_ids):
    """Slot pairs -> (count, 2) id pairs (id_a < id_b), rows sorted, in O(count + n).

    ``rank_of_slot[s]`` is the position of slot s's id in ``sorted_ids`` (the ascending ids of
    the n objects), so ordering rows by id is ordering them by (rank_a, rank_b): two stable
    counting sorts (LSD radix with n buckets), first by rank_b then by rank_a. A comparison sort
    of packed keys (``finalize_pairs``) took ~20 % of pairs() on 10^4 boxes."""
    n = sorted_ids.shape[0]
    ra = np.empty(count, dtype=np.int64)
    rb = np.empty(count, dtype=np.int64)
    for p in range(count):
        x = rank_of_slot[pairs[p, 0]]
        y = rank_of_slot[pairs[p, 1]]
        if x > y:
            x, y = y, x
        ra[p] = x
        rb[p] = y
    starts = np.zeros(n + 1, dtype=np.int64)
    for p in range(count):
        starts[rb[p] + 1] += 1
    for r in range(n):
        starts[r + 1] += starts[r]
    by_b = np.empty(count, dtype=np.int64)
    for p in range(count):
        r = rb[p]
        by_b[starts[r]] = p
        starts[r] += 1
    starts[:] = 0
    for p in range(count):
        starts[ra[p] + 1] += 1
    for r in range(n):
        starts[r + 1] += starts[r]
    out = np.empty((count, 2), dtype=np.int64)
    for q in range(count):
        p = by_b[q]
        r = ra[p]
        w = starts[r]
        starts[r] += 1
        out[w, 0] = sorted_ids[r]
        out[w, 1] = sorted_ids[rb[p]]
    return out


@njit(cache=True, nogil=True)
def finalize_ids(buffer, count, ids):
    """Slot list -> sorted unique id array."""
    out = np.empty(count, dtype=np.int64)
    for p in range(count):
        out[p] = ids[buffer[p]]
    out.sort()
    return out


# ------------------------------------------------------------------------------------------
# brute force over a slot list (queries of structures without a spatial index for that query)
@njit(cache=True, nogil=True)
def brute_query_aabb(boxes, slots, q):
    out = np.empty(16, dtype=np.int64)
    count = 0
    for s in slots:
        if box_overlap_query(boxes, s, q):
            out = grow_ids(out, count, s)
            count += 1
    return out, count


@njit(cache=True, nogil=True)
def filter_sphere(boxes, candidates, count, center, radius):
    """Keep the candidate slots whose box touches the sphere."""
    out = np.empty(count, dtype=np.int64)
    kept = 0
    for p in range(count):
        s = candidates[p]
        if box_sphere_overlap(boxes, s, center, radius):
            out[kept] = s
            kept += 1
    return out, kept


@njit(cache=True, nogil=True)
def brute_query_ray(boxes, slots, origin, direction, max_t):
    out = np.empty(16, dtype=np.int64)
    ts = np.empty(16, dtype=np.float64)
    count = 0
    for s in slots:
        t = ray_box_entry(boxes, s, origin, direction, max_t)
        if t >= 0.0:
            out = grow_ids(out, count, s)
            if count >= ts.shape[0]:
                bigger = np.empty(2 * ts.shape[0] + 16)
                copy_into(bigger[:count], ts[:count])
                ts = bigger
            ts[count] = t
            count += 1
    return out, ts, count


@njit(cache=True, nogil=True)
def finalize_ray(slots, ts, count, ids):
    """Hits sorted by entry t, ties by id -> (ids (k,), t (k,))."""
    hit_ids = np.empty(count, dtype=np.int64)
    for p in range(count):
        hit_ids[p] = ids[slots[p]]
    order = np.argsort(hit_ids, kind="mergesort")
    order2 = np.argsort(ts[:count][order], kind="mergesort")
    final = order[order2]
    return hit_ids[final].copy(), ts[:count][final].copy()


@njit(cache=True, nogil=True)
def _brute_pairs_into(boxes, slots, pairs):
    count = 0
    n = slots.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if box_overlap(boxes, slots[i], slots[j]):
                count = emit_pair(pairs, count, slots[i], slots[j])
    return count


@njit(cache=True, nogil=True)
def brute_pairs(boxes, slots):
    """O(n^2) pairs over a slot list (a reference for small inputs)."""
    pairs = np.empty((2 * slots.shape[0] + 16, 2), dtype=np.int64)
    count = _brute_pairs_into(boxes, slots, pairs)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _brute_pairs_into(boxes, slots, pairs)
    return pairs, count


# ------------------------------------------------------------------------------------------
# 7.5.2 array sort-and-sweep
@njit(cache=True, nogil=True)
def sap_array_sort(boxes, order, n, axis, resort):
    """Sort order[:n] by box min on ``axis``: insertion sort (nearly sorted input), or a full
    stable argsort when ``resort`` or when the insertion sort exceeds its swap budget."""
    if resort:
        keys = np.empty(n)
        for i in range(n):
            keys[i] = boxes[order[i], axis]
        perm = np.argsort(keys, kind="mergesort")
        copy_into(order[:n], order[:n][perm])
    else:
        budget = 32 * n + 64
        swaps = 0
        for i in range(1, n):
            key = order[i]
            v = boxes[key, axis]
            j = i - 1
            while j >= 0 and boxes[order[j], axis] > v:
                order[j + 1] = order[j]
                j -= 1
                swaps += 1
            order[j + 1] = key
            if swaps > budget:
                keys = np.empty(n)
                for m in range(n):
                    keys[m] = boxes[order[m], axis]
                perm = np.argsort(keys, kind="mergesort")
                copy_into(order[:n], order[:n][perm])
                break


@njit(cache=True, nogil=True)
def _sap_sweep(order, lo_axis, hi_axis, rest, pairs):
    n = lo_axis.shape[0]
    count = 0
    for i in range(n):
        max_a = hi_axis[i]
        a0 = rest[i, 0]
        a1 = rest[i, 1]
        a2 = rest[i, 2]
        a3 = rest[i, 3]
        j = i + 1
        while j < n and lo_axis[j] <= max_a:
            if a0 <= rest[j, 1] and rest[j, 0] <= a1 and a2 <= rest[j, 3] and rest[j, 2] <= a3:
                count = emit_pair(pairs, count, order[i], order[j])
            j += 1
    return count


@njit(cache=True, nogil=True)
def sap_array_pairs(boxes, order, n, axis, resort):
    """All overlapping pairs of the n slots in ``order`` (sorted in place by min on ``axis``).

    ``order`` from the previous call is nearly sorted, so an insertion sort re-sorts it in about
    O(n) (7.5.2); a swap budget falls back to a full argsort when objects moved a lot or the axis
    changed (``resort``). Returns (pairs, count, next_axis): the next axis is the one along
    which the box centres have the greatest variance (7.5.2).

    Erratum avoided (SEED-NOTES L15243): the printed scan never advances its inner index and
    breaks on the wrong test; here j advances and the scan of i stops at the first box whose
    min exceeds max_i STRICTLY, because touching boxes overlap."""
    sap_array_sort(boxes, order, n, axis, resort)
    other1 = (axis + 1) % 3
    other2 = (axis + 2) % 3
    # gather the boxes in sweep order once: the inner scan then reads contiguous memory
    # (a gather per inner step through ``order`` is several times slower, cache misses)
    lo_axis = np.empty(n)
    hi_axis = np.empty(n)
    rest = np.empty((n, 4))
    s1 = np.zeros(3)
    s2 = np.zeros(3)
    for i in range(n):
        a = order[i]
        lo_axis[i] = boxes[a, axis]
        hi_axis[i] = boxes[a, axis + 3]
        rest[i, 0] = boxes[a, other1]
        rest[i, 1] = boxes[a, other1 + 3]
        rest[i, 2] = boxes[a, other2]
        rest[i, 3] = boxes[a, other2 + 3]
        for k in range(3):
            c = 0.5 * (boxes[a, k] + boxes[a, k + 3])
            s1[k] += c
            s2[k] += c * c
    pairs = np.empty((2 * n + 16, 2), dtype=np.int64)
    count = _sap_sweep(order, lo_axis, hi_axis, rest, pairs)
    if count > pairs.shape[0]:
        pairs = np.empty((count, 2), dtype=np.int64)
        _sap_sweep(order, lo_axis, hi_axis, rest, pairs)
    next_axis = axis
    if n > 1:
        best = -1.0
        for k in range(3):
            var = s2[k] / n - (s1[k] / n) ** 2
            if var > best:
                best = var
                next_axis = k
    return pairs, count, next_axis


@njit(cache=True, nogil=True)
def sap_array_query(boxes, order, n, axis, q):
    """Slots overlapping q, using the sorted order: binary search for the first min > q.max."""
    lo = 0
    hi = n
    while lo < hi:  # first index with min > q.max on the axis
        mid = (lo + hi) // 2
        if boxes[order[mid], axis] > q[axis + 3]:
            hi = mid
        else:
            lo = mid + 1
    out = np.empty(16, dtype=np.int64)
    count = 0
    for i in range(lo):
        s = order[i]
        if box_overlap_query(boxes, s, q):
            out = grow_ids(out, count, s)
            count += 1
    return out, count


# ------------------------------------------------------------------------------------------
# pair hash set (open addressing, linear probing, tombstones): persistent pairs of 7.5.1
EMPTY = -1
TOMB = -2


@njit(cache=True, nogil=True)
def _pair_hash(key, mask):
    h = key ^ (key >> 31)
    h = h * -7046029254386353131  # 0x9E3779B97F4A7C15 as int64; wraps (modular int64 arithmetic)
    h = h ^ (h >> 29)
    return h & mask


@njit(cache=True, nogil=True)
def pairset_rehash(table, state, new_size):
    fresh = np.full(new_size, EMPTY, dtype=np.int64)
    mask = new_size - 1
    for key in table:
        if key >= 0:
            h = _pair_hash(key, mask)
            while fresh[h] != EMPTY:
                h = (h + 1) & mask
            fresh[h] = key
    state[1] = 0
    return fresh


@njit(cache=True, nogil=True, inline="always")
def _pair_key(a, b):
    """The pair set's key of the slot pair {a, b}: (low << 31) | high."""
    if a > b:
        a, b = b, a
    return (a << 31) | b


@njit(cache=True, nogil=True)
def pairset_add(table, state, a, b):
    """Insert the slot pair {a, b}; state = [count, tombstones]. Returns the table."""
    key = _pair_key(a, b)
    if 2 * (state[0] + state[1] + 1) > table.shape[0]:
        size = table.shape[0]
        if 4 * (state[0] + 1) > size:
            size *= 2
        table = pairset_rehash(table, state, size)
    mask = table.shape[0] - 1
    h = _pair_hash(key, mask)
    first_tomb = -1
    while True:
        v = table[h]
        if v == key:
            return table
        if v == EMPTY:
            break
        if v == TOMB and first_tomb < 0:
            first_tomb = h
        h = (h + 1) & mask
    if first_tomb >= 0:
        table[first_tomb] = key
        state[1] -= 1
    else:
        table[h] = key
    state[0] += 1
    return table


@njit(cache=True, nogil=True)
def pairset_remove(table, state, a, b):
    key = _pair_key(a, b)
    mask = table.shape[0] - 1
    h = _pair_hash(key, mask)
    while True:
        v = table[h]
        if v == EMPTY:
            return
        if v == key:
            table[h] = TOMB
            state[0] -= 1
            state[1] += 1
            return
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def pairset_list(table, state):
    pairs = np.empty((state[0], 2), dtype=np.int64)
    count = 0
    low = (np.int64(1) << 31) - 1
    for key in table:
        if key >= 0:
            pairs[count, 0] = key >> 31
            pairs[count, 1] = key & low
            count += 1
    return pairs, count


# ------------------------------------------------------------------------------------------
# 7.5.1 incremental sort and sweep: per axis a sorted endpoint list, persistent pair set.
# Endpoint arrays per axis: ep_slot (3, cap), ep_max (3, cap) 0 = min endpoint, 1 = max.
# Endpoint values are read from ``boxes`` (updated BEFORE the endpoints move). ``where``
# (cap_slots, 6) holds the index of each slot's min/max endpoint per axis (axis * 2 + is_max).
# Order key of an endpoint: (value, is_max): at equal values min endpoints come first, so
# touching intervals count as overlapping.
@njit(cache=True, nogil=True)
def _ep_less(v1, m1, v2, m2):
    return v1 < v2 or (v1 == v2 and m1 < m2)


@njit(cache=True, nogil=True)
def _swap_endpoints(ep_slot, ep_max, where, axis, e1, e2):
    s1 = ep_slot[axis, e1]
    m1 = ep_max[axis, e1]
    s2 = ep_slot[axis, e2]
    m2 = ep_max[axis, e2]
    ep_slot[axis, e1] = s2
    ep_max[axis, e1] = m2
    ep_slot[axis, e2] = s1
    ep_max[axis, e2] = m1
    where[s2, 2 * axis + m2] = e1
    where[s1, 2 * axis + m1] = e2


@njit(cache=True, nogil=True, inline="always")
def _endpoint(boxes, ep_slot, ep_max, axis, e, slot, value):
    """(slot, is_max, value) of endpoint e on the axis; the moving slot's own reads ``value``."""
    o = ep_slot[axis, e]
    om = ep_max[axis, e]
    return o, om, boxes[o, axis + 3 * om] if o != slot else value


@njit(cache=True, nogil=True, inline="always")
def _passed(boxes, table, state, slot, o, starts, ends):
    """Slot's endpoint passed one of o's: add the pair where an overlap starts (if the boxes do
    overlap), remove it where one ends. Returns the (maybe grown) table."""
    if starts:
        if box_overlap(boxes, slot, o):
            table = pairset_add(table, state, slot, o)
    elif ends:
        pairset_remove(table, state, slot, o)
    return table


@njit(cache=True, nogil=True)
def _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, is_max, value, table, state):
    """Move one endpoint of ``slot`` to its sorted place for ``value``; every crossing of an
    endpoint of another box toggles that pair's overlap on this axis: a crossing that starts an
    overlap tests the full boxes (``boxes`` already holds the new box) and adds the pair, one
    that ends an overlap removes it."""
    e = where[slot, 2 * axis + is_max]
    # leftwards
    while e > 0:
        o, om, ov = _endpoint(boxes, ep_slot, ep_max, axis, e - 1, slot, value)
        if not _ep_less(value, is_max, ov, om):
            break
        if o != slot:  # my min passes its max leftwards: overlap starts; my max its min: it ends
            table = _passed(boxes, table, state, slot, o, is_max == 0 and om == 1, is_max == 1 and om == 0)
        _swap_endpoints(ep_slot, ep_max, where, axis, e - 1, e)
        e -= 1
    # rightwards
    while e < count - 1:
        o, om, ov = _endpoint(boxes, ep_slot, ep_max, axis, e + 1, slot, value)
        if not _ep_less(ov, om, value, is_max):
            break
        if o != slot:  # my max passes its min rightwards: overlap starts; my min its max: it ends
            table = _passed(boxes, table, state, slot, o, is_max == 1 and om == 0, is_max == 0 and om == 1)
        _swap_endpoints(ep_slot, ep_max, where, axis, e, e + 1)
        e += 1
    return table


@njit(cache=True, nogil=True)
def sap_inc_update(boxes, ep_slot, ep_max, where, count, slot, new_box, table, state):
    """Set slot's box to new_box and restore every axis order and the pair set.

    Expanding moves (min left, max right) go first so that a min never passes its own max."""
    old = boxes[slot].copy()
    for k in range(6):
        boxes[slot, k] = new_box[k]
    for axis in range(3):
        if new_box[axis] < old[axis]:
            table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 0, new_box[axis], table, state)
        if new_box[axis + 3] > old[axis + 3]:
            table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 1, new_box[axis + 3], table, state)
        if new_box[axis] > old[axis]:
            table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 0, new_box[axis], table, state)
        if new_box[axis + 3] < old[axis + 3]:
            table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 1, new_box[axis + 3], table, state)
    return table


@njit(cache=True, nogil=True)
def sap_inc_update_many(boxes, ep_slot, ep_max, where, count, slots, new_boxes, table, state):
    for p in range(slots.shape[0]):
        table = sap_inc_update(boxes, ep_slot, ep_max, where, count, slots[p], new_boxes[p], table, state)
    return table


@njit(cache=True, nogil=True)
def sap_inc_insert(boxes, ep_slot, ep_max, where, count, slot, new_box, table, state):
    """Append slot's endpoints at +inf (after every other endpoint) and move them into place.

    Returns (table, new endpoint count)."""
    for k in range(6):
        boxes[slot, k] = INF
    for axis in range(3):
        ep_slot[axis, count] = slot
        ep_max[axis, count] = 0
        where[slot, 2 * axis] = count
        ep_slot[axis, count + 1] = slot
        ep_max[axis, count + 1] = 1
        where[slot, 2 * axis + 1] = count + 1
    count += 2
    for k in range(6):
        boxes[slot, k] = new_box[k]
    for axis in range(3):  # from +inf leftwards: min first (it sits before its own max)
        table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 0, new_box[axis], table, state)
        table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 1, new_box[axis + 3], table, state)
    return table, count


@njit(cache=True, nogil=True)
def sap_inc_remove(boxes, ep_slot, ep_max, where, count, slot, table, state):
    """Move slot's endpoints to +inf (removing its pairs on the way) and drop them. Returns count."""
    for k in range(6):
        boxes[slot, k] = INF
    for axis in range(3):
        table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 1, INF, table, state)
        table = _move_endpoint(boxes, ep_slot, ep_max, where, count, axis, slot, 0, INF, table, state)
    # its two endpoints are now the last two on every axis (ties at +inf: min before max)
    for axis in range(3):
        e = where[slot, 2 * axis]
        # another box may also sit at +inf only if it is being removed too; never the case
        if e != count - 2:
            _swap_endpoints(ep_slot, ep_max, where, axis, e, count - 2)
        e = where[slot, 2 * axis + 1]
        if e != count - 1:
            _swap_endpoints(ep_slot, ep_max, where, axis, e, count - 1)
    return table, count - 2


@njit(cache=True, nogil=True)
def sap_inc_rebuild(boxes, slots, ep_slot, ep_max, where, table_size, seed_pairs, seed_count):
    """Sort all endpoints from scratch and fill a new pair set with the ``seed_count`` slot
    pairs ``seed_pairs`` (every overlapping pair, found by the caller: a sweep of the sorted
    endpoints with an active list costs n x (active boxes), 2 s for 10^5 boxes with ~2 overlaps
    each; a temporary top-down tree finds them in ~0.1 s)."""
    n = slots.shape[0]
    for axis in range(3):
        vals = np.empty(2 * n)
        for i in range(n):
            vals[2 * i] = boxes[slots[i], axis]
            vals[2 * i + 1] = boxes[slots[i], axis + 3]
        order_max = np.argsort(vals, kind="mergesort")
        # inside a run of equal values, min endpoints go first
        keyed = np.empty(2 * n)
        for e in range(2 * n):
            keyed[e] = vals[order_max[e]]
        e = 0
        while e < 2 * n:
            f = e
            while f + 1 < 2 * n and keyed[f + 1] == keyed[e]:
                f += 1
            if f > e:  # a run of equal values: mins first
                run = order_max[e:f + 1].copy()
                write = e
                for r in run:
                    if (r & 1) == 0:
                        order_max[write] = r
                        write += 1
                for r in run:
                    if (r & 1) == 1:
                        order_max[write] = r
                        write += 1
            e = f + 1
        for e in range(2 * n):
            r = order_max[e]
            s = slots[r >> 1]
            m = r & 1
            ep_slot[axis, e] = s
            ep_max[axis, e] = m
            where[s, 2 * axis + m] = e
    state = np.zeros(2, dtype=np.int64)
    size = table_size
    while size < 4 * seed_count:
        size *= 2
    table = np.full(size, EMPTY, dtype=np.int64)
    for p in range(seed_count):
        table = pairset_add(table, state, seed_pairs[p, 0], seed_pairs[p, 1])
    return table, state


@njit(cache=True, nogil=True)
def regrow_pair_buffers(count, pairs, stack, nodes):
    """After a tree self-pair pass that returned ``count`` (-1: a stack overflowed; more than
    ``pairs`` holds: the pairs overflowed): (done, pairs, stack, nodes), the overflowed buffers
    replaced by larger ones (stacks doubled, pairs sized to ``count``)."""
    if count < 0:
        return False, pairs, np.empty((2 * stack.shape[0], 2), dtype=np.int64), np.empty(2 * nodes.shape[0], dtype=np.int64)
    if count > pairs.shape[0]:
        return False, np.empty((count, 2), dtype=np.int64), stack, nodes
    return True, pairs, stack, nodes


@njit(cache=True, nogil=True)
def push_hit(out, ts, count, s, t):
    """Append slot s hit at t to (out, ts), doubling both when full; returns (out, ts)."""
    if count >= out.shape[0]:
        bigger = np.empty(2 * out.shape[0] + 16, dtype=np.int64)
        copy_into(bigger[:count], out[:count])
        out = bigger
        bigger_t = np.empty(2 * ts.shape[0] + 16)
        copy_into(bigger_t[:count], ts[:count])
        ts = bigger_t
    out[count] = s
    ts[count] = t
    return out, ts
