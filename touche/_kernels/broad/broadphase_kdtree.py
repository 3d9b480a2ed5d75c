"""Broad phase: the k-d tree over boxes (Ericson 7.3.7 and 7.4.1: front-to-back ray traversal).
Every node splits its objects at the median centre along the axis of largest centre spread and
keeps the two planes that bound its halves, so objects are never split or duplicated (layout
below). The median selection is shared with the dynamic tree's top-down build
(broadphase_tree.py).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402

from touche._kernels.broad.broadphase import box_overlap, box_overlap_query, emit_pair, push_hit, push_pair_if_overlap
from touche._kernels.broad.broadphase import ray_box_entry, regrow_pair_buffers
from touche._kernels.broad.broadphase_tree import select_kth


# ------------------------------------------------------------------------------------------
# k-d tree over boxes (7.3.7): every node splits its objects at the median centre along the
# axis of largest centre spread; like a bounding-interval kd-tree each node keeps the two
# planes that bound its halves: ``lmax`` = max coordinate of the left objects, ``rmin`` = min
# coordinate of the right objects, so objects are never split or duplicated.
# Node arrays: axis (-1 = leaf), lmax, rmin, left, right, start, end (leaf ranges in ``perm``).
KD_LEAF = 4


@njit(cache=True, nogil=True)
def kd_build(boxes, slots):
    n = slots.shape[0]
    cap = 2 * n + 1  # a median split never leaves fewer than one object per leaf
    axis = np.full(cap, -1, dtype=np.int64)
    lmax = np.zeros(cap)
    rmin = np.zeros(cap)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    start = np.zeros(cap, dtype=np.int64)
    end = np.zeros(cap, dtype=np.int64)
    perm = slots.copy()
    bounds = np.empty(6)
    node_box = np.empty((cap, 6))
    if n == 0:
        return axis, lmax, rmin, left, right, start, end, perm, 0, bounds, node_box, np.empty((0, 6))
    for k in range(3):
        bounds[k] = np.inf
        bounds[k + 3] = -np.inf
    for s in slots:
        for k in range(3):
            bounds[k] = min(bounds[k], boxes[s, k])
            bounds[k + 3] = max(bounds[k + 3], boxes[s, k + 3])
    n_nodes = 1
    start[0] = 0
    end[0] = n
    stack = np.empty(128, dtype=np.int64)
    stack[0] = 0
    top = 1
    centers = np.empty(n)
    while top > 0:
        top -= 1
        node = stack[top]
        lo = start[node]
        hi = end[node]
        if hi - lo <= KD_LEAF:
            continue
        best_axis = 0
        best_spread = -1.0
        for k in range(3):
            cmin = np.inf
            cmax = -np.inf
            for p in range(lo, hi):
                c = boxes[perm[p], k] + boxes[perm[p], k + 3]
                cmin = min(cmin, c)
                cmax = max(cmax, c)
            if cmax - cmin > best_spread:
                best_spread = cmax - cmin
                best_axis = k
        for p in range(lo, hi):
            centers[p] = boxes[perm[p], best_axis] + boxes[perm[p], best_axis + 3]
        mid = (lo + hi) // 2
        select_kth(centers, perm, lo, hi, mid)  # median partition in O(n), not a sort per node
        lm = -np.inf
        for p in range(lo, mid):
            lm = max(lm, boxes[perm[p], best_axis + 3])
        rm = np.inf
        for p in range(mid, hi):
            rm = min(rm, boxes[perm[p], best_axis])
        l_node = n_nodes
        r_node = n_nodes + 1
        n_nodes += 2
        axis[node] = best_axis
        lmax[node] = lm
        rmin[node] = rm
        left[node] = l_node
        right[node] = r_node
        start[l_node] = lo
        end[l_node] = mid
        start[r_node] = mid
        end[r_node] = hi
        if top + 2 >= stack.shape[0]:
            bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
            copy_into(bigger[:top], stack[:top])
            stack = bigger
        stack[top] = l_node
        stack[top + 1] = r_node
        top += 2
    # the boxes in leaf order (a leaf's objects adjacent in memory) and every node's bounding box
    # (children are numbered after their parent, so one backward pass fills them)
    leaf_boxes = np.empty((n, 6))
    for p in range(n):
        for k in range(6):
            leaf_boxes[p, k] = boxes[perm[p], k]
    for node in range(n_nodes - 1, -1, -1):
        if axis[node] < 0:
            for k in range(3):
                node_box[node, k] = np.inf
                node_box[node, k + 3] = -np.inf
            for p in range(start[node], end[node]):
                for k in range(3):
                    node_box[node, k] = min(node_box[node, k], leaf_boxes[p, k])
                    node_box[node, k + 3] = max(node_box[node, k + 3], leaf_boxes[p, k + 3])
        else:
            a = left[node]
            b = right[node]
            for k in range(3):
                node_box[node, k] = min(node_box[a, k], node_box[b, k])
                node_box[node, k + 3] = max(node_box[a, k + 3], node_box[b, k + 3])
    return axis, lmax, rmin, left, right, start, end, perm, n_nodes, bounds, node_box, leaf_boxes


@njit(cache=True, nogil=True)
def _kd_collect_box(axis, lmax, rmin, left, right, start, end, perm, boxes, q, stack, out, count, a):
    """Emit (a, s) into ``out`` for every slot s > a whose box overlaps q (a = -1: all).
    ``stack`` must hold 2 * depth + 2 entries (median splits: depth <= log2(n) + 1)."""
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        ax = axis[node]
        if ax < 0:
            for p in range(start[node], end[node]):
                s = perm[p]
                if s > a and box_overlap_query(boxes, s, q):
                    count = emit_pair(out, count, a, s)
            continue
        if q[ax] <= lmax[node]:
            stack[top] = left[node]
            top += 1
        if q[ax + 3] >= rmin[node]:
            stack[top] = right[node]
            top += 1
    return count


@njit(cache=True, nogil=True)
def _kd_pairs_into(axis, left, right, start, end, perm, node_box, leaf_boxes, pairs, stack, nodes):
    """The tree against itself, as for the dynamic AABB tree: pairs inside each leaf, and for
    every internal node a simultaneous descent of its two children (the one holding more
    objects is split), on each node's bounding box. Returns the count, or -1 if a stack was too
    small."""
    count = 0
    cap = stack.shape[0]
    nodes[0] = 0
    n_top = 1
    while n_top > 0:
        n_top -= 1
        a = nodes[n_top]
        if axis[a] < 0:
            for p in range(start[a], end[a]):
                for q in range(p + 1, end[a]):
                    if box_overlap(leaf_boxes, p, q):
                        count = emit_pair(pairs, count, perm[p], perm[q])
            continue
        if n_top + 2 > nodes.shape[0]:
            return -1
        c1 = left[a]
        c2 = right[a]
        nodes[n_top] = c1
        nodes[n_top + 1] = c2
        n_top += 2
        if not box_overlap(node_box, c1, c2):
            continue
        stack[0, 0] = c1
        stack[0, 1] = c2
        top = 1
        while top > 0:
            top -= 1
            x = stack[top, 0]
            y = stack[top, 1]
            x_leaf = axis[x] < 0
            y_leaf = axis[y] < 0
            if x_leaf and y_leaf:
                for p in range(start[x], end[x]):
                    for q in range(start[y], end[y]):
                        if box_overlap(leaf_boxes, p, q):
                            count = emit_pair(pairs, count, perm[p], perm[q])
                continue
            if top + 2 > cap:
                return -1
            if x_leaf or (not y_leaf and end[y] - start[y] > end[x] - start[x]):
                d1 = left[y]
                d2 = right[y]
                top = push_pair_if_overlap(stack, top, node_box, x, d1)
                top = push_pair_if_overlap(stack, top, node_box, x, d2)
            else:
                d1 = left[x]
                d2 = right[x]
                top = push_pair_if_overlap(stack, top, node_box, d1, y)
                top = push_pair_if_overlap(stack, top, node_box, d2, y)
    return count


@njit(cache=True, nogil=True)
def kd_pairs(axis, left, right, start, end, perm, node_box, leaf_boxes, n):
    """All overlapping pairs of the n objects of a built k-d tree."""
    pairs = np.empty((2 * n + 16, 2), dtype=np.int64)
    if n < 2:
        return pairs, 0
    stack = np.empty((256, 2), dtype=np.int64)
    nodes = np.empty(256, dtype=np.int64)
    while True:
        count = _kd_pairs_into(axis, left, right, start, end, perm, node_box, leaf_boxes, pairs, stack, nodes)
        done, pairs, stack, nodes = regrow_pair_buffers(count, pairs, stack, nodes)
        if done:
            return pairs, count


@njit(cache=True, nogil=True)
def kd_query_box(axis, lmax, rmin, left, right, start, end, perm, boxes, q, n):
    found = np.empty((64, 2), dtype=np.int64)
    if n == 0:
        return found[:, 1].copy(), 0
    stack = np.empty(256, dtype=np.int64)
    count = _kd_collect_box(axis, lmax, rmin, left, right, start, end, perm, boxes, q, stack, found, 0, -1)
    if count > found.shape[0]:
        found = np.empty((count, 2), dtype=np.int64)
        _kd_collect_box(axis, lmax, rmin, left, right, start, end, perm, boxes, q, stack, found, 0, -1)
    return found[:, 1].copy(), count


@njit(cache=True, nogil=True)
def kd_query_ray(axis, lmax, rmin, left, right, start, end, perm, boxes, bounds, n, origin, direction, max_t):
    """Front-to-back ray traversal (7.4.1) with a [t_min, t_max] interval per node; each child's
    interval is clipped by its bounding plane. Returns (slots, t, count) of every box hit."""
    out = np.empty(16, dtype=np.int64)
    ts = np.empty(16)
    count = 0
    if n == 0:
        return out, ts, count
    # clip to the root bounds
    t0 = 0.0
    t1 = max_t
    for k in range(3):
        d = direction[k]
        if d == 0.0:
            if origin[k] < bounds[k] or origin[k] > bounds[k + 3]:
                return out, ts, count
        else:
            ta = (bounds[k] - origin[k]) / d
            tb = (bounds[k + 3] - origin[k]) / d
            if ta > tb:
                ta, tb = tb, ta
            t0 = max(t0, ta)
            t1 = min(t1, tb)
    if t0 > t1:
        return out, ts, count
    stack = np.empty(256, dtype=np.int64)  # 2 * depth + 2 entries suffice (median splits)
    stack_t = np.empty((256, 2))
    stack[0] = 0
    stack_t[0, 0] = t0
    stack_t[0, 1] = t1
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        tmin = stack_t[top, 0]
        tmax = stack_t[top, 1]
        ax = axis[node]
        if ax < 0:
            for p in range(start[node], end[node]):
                s = perm[p]
                t = ray_box_entry(boxes, s, origin, direction, max_t)
                if t >= 0.0:
                    out, ts = push_hit(out, ts, count, s, t)
                    count += 1
            continue
        d = direction[ax]
        o = origin[ax]
        # interval of the ray inside the left half-space (x <= lmax) and right one (x >= rmin)
        if d == 0.0:
            l0, l1 = (tmin, tmax) if o <= lmax[node] else (1.0, 0.0)
            r0, r1 = (tmin, tmax) if o >= rmin[node] else (1.0, 0.0)
        else:
            tl = (lmax[node] - o) / d
            tr = (rmin[node] - o) / d
            if d > 0.0:
                l0, l1 = tmin, min(tmax, tl)
                r0, r1 = max(tmin, tr), tmax
            else:
                l0, l1 = max(tmin, tl), tmax
                r0, r1 = tmin, min(tmax, tr)
        near_left = d >= 0.0
        # push far first so the near child is popped first
        if near_left:
            if r0 <= r1:
                stack[top] = right[node]
                stack_t[top, 0] = r0
                stack_t[top, 1] = r1
                top += 1
            if l0 <= l1:
                stack[top] = left[node]
                stack_t[top, 0] = l0
                stack_t[top, 1] = l1
                top += 1
        else:
            if l0 <= l1:
                stack[top] = left[node]
                stack_t[top, 0] = l0
                stack_t[top, 1] = l1
                top += 1
            if r0 <= r1:
                stack[top] = right[node]
                stack_t[top, 0] = r0
                stack_t[top, 1] = r1
                top += 1
    return out, ts, count
