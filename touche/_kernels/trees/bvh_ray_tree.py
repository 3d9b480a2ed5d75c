"""The ray tree of one triangle mesh for first / any hit (bvh_rays.raycast_first_many): split
references, binned SAH, 4-wide nodes, 4-triangle blocks (the comment before SPLIT_MAX_PIECES
describes it).
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.trees.bvh_volumes import points_box, pop_range, push_halves, range_stack  # noqa: E402


# ---------------------------------------------------------------------------------------------
# ray tree for first / any hit: split references, binned SAH, 4-wide nodes, 4-triangle blocks
# ---------------------------------------------------------------------------------------------
#
# The tree of bvh_mesh (one triangle per leaf slot, two children per node) serves the all-hits and
# crossing traversals. First / any hit runs on a separate tree built for throughput:
#
# * Split references (Ernst and Greiner 2007, "early split clipping"). A sliver's box is mostly
#   empty space that every ray crossing it pays for (diff_ring.stl: the median triangle box has
#   14x, the 90th percentile 118x the triangle's area). A triangle whose box is large (half surface
#   area above the median's) and loose (above SPLIT_MIN_RATIO times its area) is cut at the
#   midpoint of its box's longest axis, each half clipped exactly (Sutherland-Hodgman), and so on
#   up to SPLIT_MAX_PIECES pieces; each piece is a reference (triangle id, tight box). A triangle
#   may sit in several leaves: harmless for first / any hit (the same t, the same face).
# * Binned SAH over the references (SAH_RAY_BINS bins on all three axes), costed in 4-triangle
#   blocks, with a leaf as soon as splitting does not pay (RAY_LEAF_MIN .. RAY_LEAF_MAX refs).
# * The binary tree collapsed into 4-wide nodes (Wald et al. 2008: repeatedly open the child with
#   the largest surface area). One node row (128 bytes): the four children's boxes as float32
#   rounded outward (SoA, tested at once by simd.box4) and their links.
# * Leaves as blocks of four triangles, SoA float64 ``a, ab, ac`` (simd.triangle4 tests four at
#   once with hit_triangle's exact arithmetic: hits stay bit-identical to the brute force).
#
# Batches are traced in windows sorted by a Morton key of where each ray enters the root box
# (counting sort on SORT_BITS bits per axis): consecutive rays then walk the same nodes and blocks,
# which roughly halves the cache misses that dominate the traversal of incoherent rays.

SPLIT_MAX_PIECES = 16
SPLIT_MIN_RATIO = 4.0  # box half-area / (2 x area): an axis-aligned right triangle has 1
SPLIT_BUDGET = 2  # references per triangle at most, on average (threshold raised until met); 2
# traced 3-4 % faster than 3 on diff_ring (all three ray sets) with 38 % fewer blocks, 1 (no
# splits) 5 % slower on rays that hit
SAH_RAY_BINS = 16
RAY_LEAF_MIN = 4
RAY_LEAF_MAX = 16
RAY_NODE_COST = 2.0  # SAH cost of a binary node step in units of one 4-triangle block test
SORT_BITS = 5  # Morton bits per axis of the ray sort key (32768 cells + one for root-box misses)
SORT_WINDOW = 262144  # rays sorted together at most; larger windows are more coherent once sorted
# (diff_ring, 1e6 rays, 1 thread: 65536 rays / 4 bits -> 262144 / 5 bits: +7 % 'half', +14 % 'mostly
# miss', whose few rays entering the box are otherwise spread thinly over the cells)
_CLIP_CAPACITY = 16  # polygon vertices: a triangle clipped by axis planes stays below 3 + 2 * 4


@njit(cache=True, nogil=True)
def _clip_half(poly, n, axis, mid, keep_low, out):
    """Sutherland-Hodgman clip of the convex polygon poly[:n] to x[axis] <= mid (keep_low) or
    >= mid; vertices on the plane get x[axis] = mid exactly. Returns the vertex count in out."""
    m = 0
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        si = poly[i, axis] - mid
        sj = poly[j, axis] - mid
        if not keep_low:
            si = -si
            sj = -sj
        if si <= 0.0:
            for k in range(3):
                out[m, k] = poly[i, k]
            m += 1
        if (si < 0.0 and sj > 0.0) or (si > 0.0 and sj < 0.0):
            s = si / (si - sj)
            for k in range(3):
                out[m, k] = poly[i, k] + s * (poly[j, k] - poly[i, k])
            out[m, axis] = mid
            m += 1
    return m


@njit(cache=True, nogil=True)
def _half_area(b, row):
    """Half the surface area of box b[row, 0:6]."""
    ex = b[row, 3] - b[row, 0]
    ey = b[row, 4] - b[row, 1]
    ez = b[row, 5] - b[row, 2]
    return ex * ey + ey * ez + ez * ex


@njit(cache=True, nogil=True)
def _twice_polygon_area(poly, n):
    sx = 0.0
    sy = 0.0
    sz = 0.0
    for i in range(1, n - 1):
        ux = poly[i, 0] - poly[0, 0]
        uy = poly[i, 1] - poly[0, 1]
        uz = poly[i, 2] - poly[0, 2]
        vx = poly[i + 1, 0] - poly[0, 0]
        vy = poly[i + 1, 1] - poly[0, 1]
        vz = poly[i + 1, 2] - poly[0, 2]
        sx += uy * vz - uz * vy
        sy += uz * vx - ux * vz
        sz += ux * vy - uy * vx
    return np.sqrt(sx * sx + sy * sy + sz * sz)


@njit(cache=True, nogil=True)
def split_references(vertices, triangles, threshold, max_pieces, min_ratio):
    """Triangle references for the ray tree (section comment): each triangle's box, or the
    boxes of the pieces of its recursive midpoint splits while a piece's box half-area exceeds
    ``threshold`` and ``min_ratio`` times twice its area. Returns ``(ref_tri (R,), ref_box (R, 6))``
    with every triangle covered by the union of its references' boxes (up to rounding of the
    clipped corners, far below the traversal's box padding)."""
    m = triangles.shape[0]
    capacity = 2 * m + 16
    ref_tri = np.empty(capacity, dtype=np.int64)
    ref_box = np.empty((capacity, 6))
    count = 0
    depth_cap = 2 * max_pieces + 2
    polys = np.empty((depth_cap, _CLIP_CAPACITY, 3))
    sizes = np.empty(depth_cap, dtype=np.int64)
    scratch = np.empty((_CLIP_CAPACITY, 3))
    box = np.empty((1, 6))
    for t in range(m):
        for c in range(3):
            for k in range(3):
                polys[0, c, k] = vertices[triangles[t, c], k]
        sizes[0] = 3
        top = 1
        pieces = 1
        while top > 0:
            top -= 1
            n = sizes[top]
            points_box(polys[top], n, box[0])
            # n <= capacity / 2: a clip at most doubles the vertex count (a piece is the triangle
            # cut by an axis-aligned box: <= 9 vertices exactly; the bound guards rounding)
            split = 3 <= n <= _CLIP_CAPACITY // 2 and pieces < max_pieces and top + 2 <= depth_cap
            if split:
                half = _half_area(box, 0)
                split = half > threshold and half > min_ratio * _twice_polygon_area(polys[top], n)
            if split:
                axis = 0
                extent = box[0, 3] - box[0, 0]
                for k in range(1, 3):
                    if box[0, 3 + k] - box[0, k] > extent:
                        extent = box[0, 3 + k] - box[0, k]
                        axis = k
                mid = 0.5 * (box[0, axis] + box[0, 3 + axis])
                for i in range(n):
                    for k in range(3):
                        scratch[i, k] = polys[top, i, k]
                sizes[top] = _clip_half(scratch, n, axis, mid, True, polys[top])
                sizes[top + 1] = _clip_half(scratch, n, axis, mid, False, polys[top + 1])
                top += 2
                pieces += 1
                continue
            if n == 0:
                continue  # an empty side of a split (cannot happen at a midpoint; kept safe)
            if count == capacity:
                capacity *= 2
                grown_tri = np.empty(capacity, dtype=np.int64)
                copy_into(grown_tri[:count], ref_tri[:count])
                ref_tri = grown_tri
                grown_box = np.empty((capacity, 6))
                copy_into(grown_box[:count], ref_box[:count])
                ref_box = grown_box
            ref_tri[count] = t
            for k in range(6):
                ref_box[count, k] = box[0, k]
            count += 1
    return ref_tri[:count].copy(), ref_box[:count].copy()


@njit(cache=True, nogil=True)
def ray_references(vertices, triangles):
    """split_references with the threshold at the median triangle box's half-area, raised
    (x4) until the references number at most SPLIT_BUDGET per triangle."""
    m = triangles.shape[0]
    halves = np.empty(m)
    box = np.empty((1, 6))
    for t in range(m):
        for k in range(3):
            a = vertices[triangles[t, 0], k]
            b = vertices[triangles[t, 1], k]
            c = vertices[triangles[t, 2], k]
            box[0, k] = min(a, min(b, c))
            box[0, 3 + k] = max(a, max(b, c))
        halves[t] = _half_area(box, 0)
    threshold = np.median(halves)
    largest = halves.max()
    for _ in range(16):
        ref_tri, ref_box = split_references(vertices, triangles, threshold, SPLIT_MAX_PIECES, SPLIT_MIN_RATIO)
        if ref_tri.shape[0] <= SPLIT_BUDGET * m or threshold >= largest:
            return ref_tri, ref_box
        threshold = 4.0 * threshold if threshold > 0.0 else largest
    return split_references(vertices, triangles, np.inf, 1, SPLIT_MIN_RATIO)


@njit(cache=True, nogil=True)
def _bin_of(value, lo, scale):
    b = int((value - lo) * scale)
    return SAH_RAY_BINS - 1 if b >= SAH_RAY_BINS else b


@njit(cache=True, nogil=True)
def ray_sah_build(ref_box, pad):
    """Binary tree over reference boxes: binned SAH (SAH_RAY_BINS bins of the reference
    centers on each axis, cost = half-area x 4-triangle blocks per side); a node becomes a leaf at
    <= RAY_LEAF_MIN references, or at <= RAY_LEAF_MAX when the best split costs more than the
    leaf (RAY_NODE_COST per step). Returns ``(links (N, 4), boxes (N, 6) padded by pad, order (R,)
    reference of each tree position, depth)`` in mesh_tree's layout (preorder, left = i + 1)."""
    r_count = ref_box.shape[0]
    order = np.arange(r_count)
    center = np.empty((r_count, 3))
    for r in range(r_count):
        for k in range(3):
            center[r, k] = 0.5 * (ref_box[r, k] + ref_box[r, 3 + k])
    capacity = 2 * r_count + 8
    links = np.empty((capacity, 4), dtype=np.int64)
    boxes = np.empty((capacity, 6))
    stack = range_stack(r_count)
    top = 1
    n = 0
    depth = 0
    bin_box = np.empty((3 * SAH_RAY_BINS, 6))
    bin_n = np.empty(3 * SAH_RAY_BINS, dtype=np.int64)
    right_half = np.empty(SAH_RAY_BINS)
    right_n = np.empty(SAH_RAY_BINS, dtype=np.int64)
    acc = np.empty((1, 6))
    lo = np.empty(3)
    hi = np.empty(3)
    while top > 0:
        top, first, count, parent, level = pop_range(stack, top)
        node = n
        n += 1
        if parent >= 0:
            links[parent, 1] = node  # the right child: pushed below the left one, built after it
        depth = max(depth, level)
        for k in range(3):
            boxes[node, k] = np.inf
            boxes[node, 3 + k] = -np.inf
            lo[k] = np.inf
            hi[k] = -np.inf
        for q in range(first, first + count):
            r = order[q]
            for k in range(3):
                boxes[node, k] = min(boxes[node, k], ref_box[r, k])
                boxes[node, 3 + k] = max(boxes[node, 3 + k], ref_box[r, 3 + k])
                lo[k] = min(lo[k], center[r, k])
                hi[k] = max(hi[k], center[r, k])
        links[node, 0] = -1
        links[node, 1] = -1
        links[node, 2] = first
        links[node, 3] = count
        if count <= RAY_LEAF_MIN:
            continue
        for b in range(3 * SAH_RAY_BINS):
            bin_n[b] = 0
            for k in range(3):
                bin_box[b, k] = np.inf
                bin_box[b, 3 + k] = -np.inf
        for q in range(first, first + count):
            r = order[q]
            for axis in range(3):
                extent = hi[axis] - lo[axis]
                if not extent > 0.0:
                    continue
                b = axis * SAH_RAY_BINS + _bin_of(center[r, axis], lo[axis], SAH_RAY_BINS / extent)
                bin_n[b] += 1
                for k in range(3):
                    bin_box[b, k] = min(bin_box[b, k], ref_box[r, k])
                    bin_box[b, 3 + k] = max(bin_box[b, 3 + k], ref_box[r, 3 + k])
        best = np.inf
        best_axis = -1
        best_bin = -1
        for axis in range(3):
            if not hi[axis] - lo[axis] > 0.0:
                continue
            base = axis * SAH_RAY_BINS
            for k in range(3):
                acc[0, k] = np.inf
                acc[0, 3 + k] = -np.inf
            total = 0
            for b in range(SAH_RAY_BINS - 1, 0, -1):
                for k in range(3):
                    acc[0, k] = min(acc[0, k], bin_box[base + b, k])
                    acc[0, 3 + k] = max(acc[0, 3 + k], bin_box[base + b, 3 + k])
                total += bin_n[base + b]
                right_half[b] = _half_area(acc, 0) if total > 0 else 0.0
                right_n[b] = total
            for k in range(3):
                acc[0, k] = np.inf
                acc[0, 3 + k] = -np.inf
            total = 0
            for b in range(SAH_RAY_BINS - 1):
                for k in range(3):
                    acc[0, k] = min(acc[0, k], bin_box[base + b, k])
                    acc[0, 3 + k] = max(acc[0, 3 + k], bin_box[base + b, 3 + k])
                total += bin_n[base + b]
                if total == 0 or right_n[b + 1] == 0:
                    continue
                cost = _half_area(acc, 0) * ((total + 3) // 4) + right_half[b + 1] * ((right_n[b + 1] + 3) // 4)
                if cost < best:
                    best = cost
                    best_axis = axis
                    best_bin = b
        if count <= RAY_LEAF_MAX:
            half = _half_area(boxes, node)
            if not (RAY_NODE_COST * half + best < half * ((count + 3) // 4)):
                continue  # splitting does not pay (or no axis to split along): a leaf
        mid = first
        if best_axis >= 0:
            axis = best_axis
            scale = SAH_RAY_BINS / (hi[axis] - lo[axis])
            i = first
            j = first + count - 1
            while i <= j:
                r = order[i]
                if _bin_of(center[r, axis], lo[axis], scale) <= best_bin:
                    i += 1
                else:
                    order[i] = order[j]
                    order[j] = r
                    j -= 1
            mid = i
        if mid == first or mid == first + count:
            mid = first + count // 2  # every center in one bin (coincident centers): halve the list
        links[node, 0] = node + 1
        top = push_halves(stack, top, first, mid - first, count, node, level)
    for i in range(n):
        for k in range(3):
            boxes[i, k] -= pad
            boxes[i, 3 + k] += pad
    return links[:n].copy(), boxes[:n].copy(), order, depth


@njit(cache=True, nogil=True)
def _float32_down(x):
    """The largest float32 <= x (-inf below the float32 range)."""
    y = np.float32(x)
    if np.float64(y) > x:
        y = np.nextafter(y, np.float32(-np.inf))
    return y


@njit(cache=True, nogil=True)
def _float32_up(x):
    y = np.float32(x)
    if np.float64(y) < x:
        y = np.nextafter(y, np.float32(np.inf))
    return y


@njit(cache=True, nogil=True)
def ray_tree_pack(links, boxes, order, ref_tri, vertices, triangles):
    """4-wide nodes and triangle blocks from the binary reference tree (section comment).

    Returns ``(node_boxes (K, 24) float32, node_kids (K, 8) int32, blocks (B, 36), block_face
    (4 B,) int64, depth)``. Node row k: child j's box in columns ``[4 c + j]`` (c = min x, min y,
    min z, max x, max y, max z), float32 rounded outward (contains the float64 box: culling stays
    conservative), NaN for an empty slot; ``node_kids[k, j]`` its node index (internal child) or
    first block (leaf child), ``node_kids[k, 4 + j]`` 0 (internal), the leaf's triangle count,
    or -1 (empty). Block b holds triangles 4 b .. 4 b + 3 (``block_face``: original face index,
    -1 for all-zero padding) as columns ``[4 c + j]`` for c = a x, y, z, ab x, y, z, ac x, y, z.
    The root is node 0 (a leaf root gets a node with one child). ``depth`` counts node levels."""
    n2 = links.shape[0]
    # collapse (breadth first): each 4-wide node opens its largest internal children
    source = np.empty(n2 + 1, dtype=np.int64)
    kids = np.full((n2 + 1, 4), -1, dtype=np.int64)
    level = np.zeros(n2 + 1, dtype=np.int64)
    source[0] = 0
    count = 1
    i = 0
    depth = 1
    while i < count:
        node = source[i]
        if links[node, 0] < 0:
            kids[i, 0] = node  # a leaf root: one child
        else:
            kids[i, 0] = links[node, 0]
            kids[i, 1] = links[node, 1]
            used = 2
            while used < 4:
                pick = -1
                largest = -1.0
                for j in range(used):
                    c = kids[i, j]
                    if links[c, 0] >= 0 and _half_area(boxes, c) > largest:
                        largest = _half_area(boxes, c)
                        pick = j
                if pick < 0:
                    break
                c = kids[i, pick]
                kids[i, pick] = links[c, 0]
                kids[i, used] = links[c, 1]
                used += 1
            for j in range(used):
                if links[kids[i, j], 0] >= 0:
                    source[count] = kids[i, j]
                    level[count] = level[i] + 1
                    depth = max(depth, level[count] + 1)
                    count += 1
        i += 1
    node_of = np.full(n2, -1, dtype=np.int64)
    for k in range(count):
        node_of[source[k]] = k
    # blocks: each binary leaf's references, in tree order, padded to a multiple of four
    block_of = np.full(n2, -1, dtype=np.int64)
    num_blocks = 0
    for node in range(n2):
        if links[node, 0] < 0:
            block_of[node] = num_blocks
            num_blocks += (links[node, 3] + 3) // 4
    blocks = np.zeros((num_blocks, 36))
    block_face = np.full(4 * num_blocks, -1, dtype=np.int64)
    for node in range(n2):
        if links[node, 0] >= 0:
            continue
        first = links[node, 2]
        for q in range(links[node, 3]):
            b = block_of[node] + q // 4
            j = q % 4
            t = ref_tri[order[first + q]]
            for k in range(3):
                a = vertices[triangles[t, 0], k]
                blocks[b, k * 4 + j] = a
                blocks[b, (3 + k) * 4 + j] = vertices[triangles[t, 1], k] - a  # = mesh_tree's ab
                blocks[b, (6 + k) * 4 + j] = vertices[triangles[t, 2], k] - a
            block_face[4 * b + j] = t
    node_boxes = np.full((count, 24), np.nan, dtype=np.float32)
    node_kids = np.zeros((count, 8), dtype=np.int32)
    for k in range(count):
        for j in range(4):
            c = kids[k, j]
            if c < 0:
                node_kids[k, 4 + j] = -1
                continue
            for axis in range(3):
                node_boxes[k, 4 * axis + j] = _float32_down(boxes[c, axis])
                node_boxes[k, 12 + 4 * axis + j] = _float32_up(boxes[c, 3 + axis])
            if links[c, 0] >= 0:
                node_kids[k, j] = node_of[c]
            else:
                node_kids[k, j] = block_of[c]
                node_kids[k, 4 + j] = links[c, 3]
    return node_boxes, node_kids, blocks, block_face, depth


@njit(cache=True, nogil=True)
def ray_tree(vertices, triangles, pad):
    """The first / any-hit tree of a mesh: ``(node_boxes, node_kids, blocks, block_face,
    root_box (1, 6) padded float64, depth)`` (ray_tree_pack)."""
    ref_tri, ref_box = ray_references(vertices, triangles)
    links, boxes, order, _ = ray_sah_build(ref_box, pad)
    node_boxes, node_kids, blocks, block_face, depth = ray_tree_pack(links, boxes, order, ref_tri, vertices,
                                                                     triangles)
    return node_boxes, node_kids, blocks, block_face, boxes[:1].copy(), depth
