"""BSP trees (Ericson ch. 8): the build from a triangle soup (the queries: bsp_query.py).

Everything here works in the tree's LOCAL frame: the caller subtracts the mesh's bounding-box
centre from the vertices before the build and from every query point (so that coordinates and the
plane offsets ``d`` are of the size of the mesh, not of its distance from the origin: the plane
thickness then scales with the mesh alone).

Layout of a built tree (all C-contiguous; int64 unless said):
- ``node_planes (nn, 4)`` float64 rows ``(nx, ny, nz, d)``: unit normal, plane ``n . x = d``,
  FRONT = ``n . x - d > 0`` (for a solid tree the outside: triangles face outward);
- ``node_children (nn, 2)``: front, back; a child ``c >= 0`` is a node, ``c < 0`` the leaf
  ``-1 - c``;
- ``node_fragments (nn, 2)``: ``start, count`` of the fragments stored AT the node (the polygons
  coplanar with its plane: node-storing and solid trees);
- ``leaf_solid (nl,)``: 1 solid, 0 empty (solid trees; 0 elsewhere);
- ``leaf_fragments (nl, 2)``: ``start, count`` of the fragments stored in the leaf (leaf-storing
  trees);
- fragments, convex polygons stored flat: ``fragment_vertices (nv, 3)``, ``fragment_offsets
  (nf + 1,)`` (polygon ``f`` = vertices ``offsets[f]:offsets[f + 1]``, counter-clockwise about
  its plane normal), ``fragment_planes (nf, 4)`` (the plane of the source triangle, NOT one
  recomputed from a fragment: a sliver's own normal would be noise) and ``fragment_source (nf,)``
  (index of the input triangle it was cut from; Ericson 8.3.4 advises keeping that reference);
- ``root`` (a child code as above) and ``depth`` (number of nodes on the longest root-leaf path).

Build (Ericson 8.3, ``build_tree``): a stack of work items (a polygon list and where its subtree
hangs) replaces the book's recursion. At each node:
1. pick the splitting plane among the planes of the list's polygons (autopartitioning, 8.3.1):
   every polygon when there are at most ``max_candidates``, else ``max_candidates`` drawn at
   random (seeded: the same seed, the same tree; Fuchs et al.'s "five random candidates",
   8.3.2), plus (``axis_cuts``) three general planes, one per axis through the median of the
   polygons' centroids (8.3.1's "planes in predetermined directions", allowed only when they
   leave polygons on both sides), all scored by ``k * straddling + (1 - k) * |front - behind|``
   (8.3.2, coplanar counted as in front as in the book's PickSplittingPlane), lowest wins;
2. classify each polygon against the THICK plane (8.3.3) and split the straddling ones with the
   nine-case rules of Table 8.2 (8.3.4), intersecting every cut edge as ordered from its front
   vertex to its back vertex (8.3.5): two neighbours cut along their shared edge compute the
   same bits for the split vertex, so no crack opens between them;
3. mode NODE_STORING / SOLID: the coplanar polygons are stored at the node; an empty list on
   the front side becomes an empty leaf, on the back side a solid leaf (8.2.3: with outward
   faces, a region behind a face with no polygon left is inside). Mode LEAF_STORING: coplanar
   polygons go to the side their normal faces; a list of at most ``leaf_size`` polygons, the
   depth ``max_depth``, or a plane that leaves every polygon on one side makes a leaf storing
   the list.

Thick planes (why ``eps`` is what it is: touche/bsp.py, ``plane_thickness``).
"""
import math
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402


NODE_STORING = 0
LEAF_STORING = 1

FRONT = 1
BACK = -1
ON = 0
STRADDLING = 2


# ---------------------------------------------------------------------------------------------
# growable arrays (numba has no list of arrays we want to pay compile time for)
# (explicit copy loops: a slice assignment pulls in numba's broadcasting and its shape errors,
# about a second of compile per array type)
@njit(cache=True, nogil=True)
def _grow_rows(array, needed):
    """``array`` (r, c) with room for ``needed`` rows (doubling), contents kept."""
    if needed <= array.shape[0]:
        return array
    size = max(needed, 2 * array.shape[0], 16)
    bigger = np.empty((size, array.shape[1]), dtype=array.dtype)
    for i in range(array.shape[0]):
        for j in range(array.shape[1]):
            bigger[i, j] = array[i, j]
    return bigger


@njit(cache=True, nogil=True)
def _grow(array, needed):
    if needed <= array.shape[0]:
        return array
    size = max(needed, 2 * array.shape[0], 16)
    bigger = np.empty(size, dtype=array.dtype)
    for i in range(array.shape[0]):
        bigger[i] = array[i]
    return bigger


@njit(cache=True, nogil=True, inline="always")
def _set_row(out, row, point):
    out[row, 0] = point[0]
    out[row, 1] = point[1]
    out[row, 2] = point[2]


# ---------------------------------------------------------------------------------------------
# classification against a thick plane (Ericson 8.3.3)
@njit(cache=True, nogil=True)
def _side(distance, eps):
    if distance > eps:
        return FRONT
    if distance < -eps:
        return BACK
    return ON


@njit(cache=True, nogil=True)
def _classify_polygon(vertices, start, count, nx, ny, nz, d, eps):
    """FRONT, BACK, STRADDLING or ON (every vertex within eps of the plane)."""
    front = 0
    back = 0
    for j in range(start, start + count):
        s = _side(nx * vertices[j, 0] + ny * vertices[j, 1] + nz * vertices[j, 2] - d, eps)
        if s == FRONT:
            front += 1
        elif s == BACK:
            back += 1
    if front > 0 and back > 0:
        return STRADDLING
    if front > 0:
        return FRONT
    if back > 0:
        return BACK
    return ON


@njit(cache=True, nogil=True)
def _cut_edge(front_point, back_point, nx, ny, nz, d, out, row):
    """Intersection of the edge (front_point -> back_point) with the plane into ``out[row]``.
    Ericson 8.3.5: always called with the FRONT endpoint first, whichever polygon owns the edge,
    so both neighbours of an edge get bit-identical split vertices. The denominator is the
    difference of two distances of opposite signs, each beyond eps: never zero."""
    fa = nx * front_point[0] + ny * front_point[1] + nz * front_point[2] - d
    fb = nx * back_point[0] + ny * back_point[1] + nz * back_point[2] - d
    t = fa / (fa - fb)
    for k in range(3):
        out[row, k] = front_point[k] + t * (back_point[k] - front_point[k])


@njit(cache=True, nogil=True)
def _split_polygon(vertices, start, count, nx, ny, nz, d, eps, front_out, back_out):
    """Ericson 8.3.4, Table 8.2 (the nine-case thick-plane clipping that keeps both pieces and
    never lets them overlap), with the 8.3.5 edge ordering. Returns (front count, back count)."""
    n_front = 0
    n_back = 0
    a = vertices[start + count - 1]
    a_side = _side(nx * a[0] + ny * a[1] + nz * a[2] - d, eps)
    for j in range(start, start + count):
        b = vertices[j]
        b_side = _side(nx * b[0] + ny * b[1] + nz * b[2] - d, eps)
        if b_side == FRONT:
            if a_side == BACK:
                _cut_edge(b, a, nx, ny, nz, d, front_out, n_front)  # front endpoint b first (8.3.5)
                _set_row(back_out, n_back, front_out[n_front])
                n_front += 1
                n_back += 1
            _set_row(front_out, n_front, b)
            n_front += 1
        elif b_side == BACK:
            if a_side == FRONT:
                _cut_edge(a, b, nx, ny, nz, d, front_out, n_front)
                _set_row(back_out, n_back, front_out[n_front])
                n_front += 1
                n_back += 1
            elif a_side == ON:
                _set_row(back_out, n_back, a)
                n_back += 1
            _set_row(back_out, n_back, b)
            n_back += 1
        else:
            _set_row(front_out, n_front, b)
            n_front += 1
            if a_side == BACK:
                _set_row(back_out, n_back, b)
                n_back += 1
        a = b
        a_side = b_side
    return n_front, n_back


# ---------------------------------------------------------------------------------------------
# the build
@njit(cache=True, nogil=True)
def build_tree(vertices, triangles, mode, max_candidates, split_weight, seed, leaf_size, max_depth, axis_cuts, eps):
    """Build a BSP tree of the triangles (module doc). ``vertices`` in the local frame. Triangles
    of zero area (no plane) are left out. Returns the arrays of the module doc, in that order,
    then ``root, depth``."""
    np.random.seed(seed)
    n_tri = triangles.shape[0]
    # --- the pool of polygons: input triangles first, then every piece cut during the build
    pool_vertices = np.empty((3 * n_tri + 16, 3))
    pool_start = np.empty(n_tri + 16, dtype=np.int64)
    pool_count = np.empty(n_tri + 16, dtype=np.int64)
    pool_source = np.empty(n_tri + 16, dtype=np.int64)
    source_planes = np.zeros((n_tri, 4))
    n_pool = 0
    n_pool_vertices = 0
    for t in range(n_tri):
        a = vertices[triangles[t, 0]]
        b = vertices[triangles[t, 1]]
        c = vertices[triangles[t, 2]]
        ux = b[0] - a[0]; uy = b[1] - a[1]; uz = b[2] - a[2]
        vx = c[0] - a[0]; vy = c[1] - a[1]; vz = c[2] - a[2]
        nx = uy * vz - uz * vy
        ny = uz * vx - ux * vz
        nz = ux * vy - uy * vx
        length = math.sqrt(nx * nx + ny * ny + nz * nz)
        if not length > 0.0:
            continue
        nx /= length; ny /= length; nz /= length
        source_planes[t, 0] = nx
        source_planes[t, 1] = ny
        source_planes[t, 2] = nz
        # offset from the centroid: the plane's error is then symmetric over the triangle
        source_planes[t, 3] = (nx * (a[0] + b[0] + c[0]) + ny * (a[1] + b[1] + c[1]) + nz * (a[2] + b[2] + c[2])) / 3.0
        pool_start[n_pool] = n_pool_vertices
        pool_count[n_pool] = 3
        pool_source[n_pool] = t
        for k in range(3):
            pool_vertices[n_pool_vertices, k] = a[k]
            pool_vertices[n_pool_vertices + 1, k] = b[k]
            pool_vertices[n_pool_vertices + 2, k] = c[k]
        n_pool += 1
        n_pool_vertices += 3
    # --- work lists: polygon ids in one buffer; a work item is (list start, length, parent, side, depth)
    lists = np.empty(2 * n_pool + 16, dtype=np.int64)
    for i in range(n_pool):
        lists[i] = i
    n_lists = n_pool
    work = np.empty((64, 5), dtype=np.int64)
    work[0, 0] = 0
    work[0, 1] = n_pool
    work[0, 2] = -1
    work[0, 3] = 0
    work[0, 4] = 0
    n_work = 1
    # --- output
    node_planes = np.empty((16, 4))
    node_children = np.empty((16, 2), dtype=np.int64)
    node_fragments = np.empty((16, 2), dtype=np.int64)
    leaf_solid = np.empty(16, dtype=np.int64)
    leaf_fragments = np.empty((16, 2), dtype=np.int64)
    stored = np.empty(n_pool + 16, dtype=np.int64)  # pool ids in storage order
    n_nodes = 0
    n_leaves = 0
    n_stored = 0
    root = -1
    depth = 0
    # scratch for splitting: a convex piece of a triangle cut by k planes has at most 3 + k vertices
    max_vertices = 8
    front_piece = np.empty((max_vertices, 3))
    back_piece = np.empty((max_vertices, 3))
    candidates = np.empty(max(max_candidates, 1), dtype=np.int64)
    general_planes = np.zeros((3, 4))
    best_plane = np.zeros(4)
    sample = np.empty(64)
    while n_work > 0:
        n_work -= 1
        list_start = work[n_work, 0]
        list_length = work[n_work, 1]
        parent = work[n_work, 2]
        side = work[n_work, 3]
        level = work[n_work, 4]
        depth = max(depth, level)
        make_leaf = list_length == 0
        if mode == LEAF_STORING and (list_length <= leaf_size or level >= max_depth):
            make_leaf = True
        best = -1
        if not make_leaf:
            # 1. candidates (Ericson 8.3.1-8.3.2): all, or a seeded random sample
            if list_length <= max_candidates:
                n_candidates = list_length
                for i in range(list_length):
                    candidates[i] = lists[list_start + i]
            else:
                n_candidates = max_candidates
                for i in range(max_candidates):
                    candidates[i] = lists[list_start + np.random.randint(0, list_length)]
            # general cuts (8.3.1, "planes in a few predetermined directions"): one plane per
            # axis through the median of (a sample of) the polygons' centroids. Autopartitioning
            # alone gives a convex mesh a tree as deep as its face count (Figure 8.7a); these
            # cuts across the volume bring that to O(log n) (8.7b) when the score prefers them.
            n_general = 3 if axis_cuts != 0 and list_length > max_candidates else 0
            for axis in range(n_general):
                n_sample = min(list_length, 64)
                for i in range(n_sample):
                    p = lists[list_start + (i if n_sample == list_length else np.random.randint(0, list_length))]
                    acc = 0.0
                    for j in range(pool_start[p], pool_start[p] + pool_count[p]):
                        acc += pool_vertices[j, axis]
                    sample[i] = acc / pool_count[p]
                general_planes[axis, 0] = 0.0
                general_planes[axis, 1] = 0.0
                general_planes[axis, 2] = 0.0
                general_planes[axis, axis] = 1.0
                # median by insertion sort (at most 64 values; np.median costs seconds of compile)
                for i in range(1, n_sample):
                    value = sample[i]
                    j = i - 1
                    while j >= 0 and sample[j] > value:
                        sample[j + 1] = sample[j]
                        j -= 1
                    sample[j + 1] = value
                general_planes[axis, 3] = sample[n_sample // 2]
            best_score = np.inf
            best_one_sided = True
            for ci in range(n_candidates + n_general):
                if ci < n_candidates:
                    cand = candidates[ci]
                    plane = source_planes[pool_source[cand]]
                else:
                    cand = -1
                    plane = general_planes[ci - n_candidates]
                in_front = 0
                behind = 0
                straddling = 0
                coplanar = 0
                for i in range(list_length):
                    p = lists[list_start + i]
                    if p == cand:
                        continue
                    where = _classify_polygon(pool_vertices, pool_start[p], pool_count[p],
                                              plane[0], plane[1], plane[2], plane[3], eps)
                    if where == STRADDLING:
                        straddling += 1
                    elif where == BACK:
                        behind += 1
                    elif where == FRONT:
                        in_front += 1
                    elif mode != LEAF_STORING:
                        coplanar += 1
                        in_front += 1  # the book's PickSplittingPlane counts coplanar as in front
                    else:  # leaf-storing: a coplanar polygon goes where its normal points
                        q = source_planes[pool_source[p]]
                        if q[0] * plane[0] + q[1] * plane[1] + q[2] * plane[2] > 0.0:
                            in_front += 1
                        else:
                            behind += 1
                if cand < 0 and (in_front - coplanar + straddling == 0 or behind + straddling == 0):
                    # a general cut must leave polygons on both sides: a side without any would
                    # become a leaf whose solidity no face decides
                    continue
                score = split_weight * straddling + (1.0 - split_weight) * abs(in_front - behind)
                if score < best_score:
                    best_score = score
                    best = cand
                    for k in range(4):
                        best_plane[k] = plane[k]
                    # the candidate itself lies on its plane (in front for leaf-storing): nothing
                    # behind and nothing cut means this plane divides nothing
                    best_one_sided = cand >= 0 and straddling == 0 and behind == 0
            if mode == LEAF_STORING and best_one_sided:
                make_leaf = True  # every polygon on one side: no plane of the list divides it
        code = 0
        if make_leaf:
            leaf_solid = _grow(leaf_solid, n_leaves + 1)
            leaf_fragments = _grow_rows(leaf_fragments, n_leaves + 1)
            leaf_solid[n_leaves] = 1 if (mode != LEAF_STORING and side == BACK) else 0
            stored = _grow(stored, n_stored + list_length)
            leaf_fragments[n_leaves, 0] = n_stored
            leaf_fragments[n_leaves, 1] = list_length
            for i in range(list_length):
                stored[n_stored] = lists[list_start + i]
                n_stored += 1
            code = -1 - n_leaves
            n_leaves += 1
        else:
            plane = best_plane
            nx = plane[0]; ny = plane[1]; nz = plane[2]; d = plane[3]
            node = n_nodes
            n_nodes += 1
            node_planes = _grow_rows(node_planes, n_nodes)
            node_children = _grow_rows(node_children, n_nodes)
            node_fragments = _grow_rows(node_fragments, n_nodes)
            for k in range(4):
                node_planes[node, k] = plane[k]
            node_children[node, 0] = -1
            node_children[node, 1] = -1
            # 2. partition: the front list, then the back list, appended to the list buffer
            lists = _grow(lists, n_lists + 2 * list_length)
            front_start = n_lists
            n_front = 0
            # first pass: front side (and the coplanar ones stored at the node)
            stored = _grow(stored, n_stored + list_length)
            node_fragments[node, 0] = n_stored
            back_ids = np.empty(list_length, dtype=np.int64)
            n_back = 0
            for i in range(list_length):
                p = lists[list_start + i]
                where = _classify_polygon(pool_vertices, pool_start[p], pool_count[p], nx, ny, nz, d, eps)
                if where == ON:
                    if mode == LEAF_STORING:
                        q = source_planes[pool_source[p]]
                        where = FRONT if q[0] * nx + q[1] * ny + q[2] * nz > 0.0 else BACK
                    else:
                        stored[n_stored] = p
                        n_stored += 1
                        continue
                if where == FRONT:
                    lists[front_start + n_front] = p
                    n_front += 1
                elif where == BACK:
                    back_ids[n_back] = p
                    n_back += 1
                else:
                    count = pool_count[p]
                    if count + 2 > front_piece.shape[0]:
                        front_piece = np.empty((2 * (count + 2), 3))
                        back_piece = np.empty((2 * (count + 2), 3))
                    kf, kb = _split_polygon(pool_vertices, pool_start[p], count, nx, ny, nz, d, eps,
                                            front_piece, back_piece)
                    pool_vertices = _grow_rows(pool_vertices, n_pool_vertices + kf + kb)
                    pool_start = _grow(pool_start, n_pool + 2)
                    pool_count = _grow(pool_count, n_pool + 2)
                    pool_source = _grow(pool_source, n_pool + 2)
                    for piece in range(2):
                        k_piece = kf if piece == 0 else kb
                        pool_start[n_pool] = n_pool_vertices
                        pool_count[n_pool] = k_piece
                        pool_source[n_pool] = pool_source[p]
                        for j in range(k_piece):
                            for k in range(3):
                                pool_vertices[n_pool_vertices + j, k] = (
                                    front_piece[j, k] if piece == 0 else back_piece[j, k])
                        n_pool_vertices += k_piece
                        if piece == 0:
                            lists[front_start + n_front] = n_pool
                            n_front += 1
                        else:
                            back_ids[n_back] = n_pool
                            n_back += 1
                        n_pool += 1
            node_fragments[node, 1] = n_stored - node_fragments[node, 0]
            back_start = front_start + n_front
            for i in range(n_back):
                lists[back_start + i] = back_ids[i]
            n_lists = back_start + n_back
            work = _grow_rows(work, n_work + 2)
            # back first on the stack, front on top: the front subtree is built first
            work[n_work, 0] = back_start
            work[n_work, 1] = n_back
            work[n_work, 2] = node
            work[n_work, 3] = BACK
            work[n_work, 4] = level + 1
            work[n_work + 1, 0] = front_start
            work[n_work + 1, 1] = n_front
            work[n_work + 1, 2] = node
            work[n_work + 1, 3] = FRONT
            work[n_work + 1, 4] = level + 1
            n_work += 2
            code = node
        if parent < 0:
            root = code
        else:
            node_children[parent, 0 if side == FRONT else 1] = code
    # --- compact: the stored polygons become the fragments, in storage order
    n_fragment_vertices = 0
    for i in range(n_stored):
        n_fragment_vertices += pool_count[stored[i]]
    fragment_vertices = np.empty((n_fragment_vertices, 3))
    fragment_offsets = np.empty(n_stored + 1, dtype=np.int64)
    fragment_planes = np.empty((n_stored, 4))
    fragment_source = np.empty(n_stored, dtype=np.int64)
    row = 0
    for i in range(n_stored):
        p = stored[i]
        fragment_offsets[i] = row
        for j in range(pool_count[p]):
            for k in range(3):
                fragment_vertices[row, k] = pool_vertices[pool_start[p] + j, k]
            row += 1
        for k in range(4):
            fragment_planes[i, k] = source_planes[pool_source[p], k]
        fragment_source[i] = pool_source[p]
    fragment_offsets[n_stored] = row
    return (
        node_planes[:n_nodes].copy(), node_children[:n_nodes].copy(), node_fragments[:n_nodes].copy(),
        leaf_solid[:n_leaves].copy(), leaf_fragments[:n_leaves].copy(),
        fragment_vertices, fragment_offsets, fragment_planes, fragment_source, root, depth,
    )
