"""Single-tree BVH queries on one triangle mesh: rays (first hit, any hit, all hits), closest
point (branch and bound) and the generalized winding number (Ericson 6.3 iterative traversal
with an explicit stack; Jacobson et al. 2013 for the winding number).

The tree comes from ``bvh_build.build_tree`` (SAH split for rays); :func:`mesh_tree` converts it
into the flat arrays the traversals read (one row per node, preorder, left child = i + 1):

``links (N, 4) int64``  ``[left, right, first, count]``; ``left == -1`` marks a leaf.
``boxes (N, 6)``  each node's AABB ``[min, max]``, PADDED by ``pad`` (see below).
``child_boxes (N, 12)``  an internal node's two children's padded boxes (left, right) stored in
    the parent, so one row read orders both children (near child first).
``tri (m, 12)``  per triangle in tree order: ``a``, ``ab = b - a``, ``ac = c - a``,
    ``n = ab x ac`` -- exactly the quantities ``ray._ray_tri`` computes (same arithmetic, same
    order), so a BVH hit is bit-identical to the brute-force ``ray.ray_triangles_first``.

Conservative boxes. The slab test and the triangle test round differently; a hit the
triangle test accepts must never be culled by a box. Boxes are grown by ``pad`` (the caller
uses 1e-9 of the mesh's coordinate scale) and the slab interval is widened by 1e-12 of its own
magnitude (covers far-away origins). This only visits a few more nodes.

Ties. First hit keeps the lowest original face index among equal ``t`` (the brute force's rule);
closest point keeps the lowest original face index among equal squared distances. Boxes are
culled only when STRICTLY beyond the current best, so equal candidates are still visited.

Winding number (exact, not an approximation). For a node whose box does not contain the query
point p, the node's triangles S can be replaced by any surface C with the same boundary curve
that lies in the box: S - C is closed and lies in the (convex) box, so its winding number about
an outside p is exactly 0 and w_S(p) = w_C(p). C is the fan from the box center over the node's
boundary edges (directed edges that do not cancel inside the node). For a closed mesh the
root has no boundary and every point outside the root box gets w = 0 at once; near the surface
the sum runs over leaves plus short boundary fans. Each term is the Van Oosterom-Strackee solid
angle (atan2 form: no NaN for degenerate triangles or a point on a vertex). The result equals the
all-triangle sum up to rounding, so the inside/outside decision is as robust as the naive sum
(integer-valued off the surface), unlike the dipole far-field approximation (Barill 2018) whose
error is only heuristically bounded.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit


from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.trees.bvh_build import AABB_MAX, AABB_MIN, build_tree, points_box  # noqa: E402
from touche._kernels.primitives.closest import closest_point_triangle  # noqa: E402
from touche._kernels.base.morton import spread_bits  # noqa: E402
from touche._kernels.base.touching import offset, touching_tolerance_at  # noqa: E402
from touche._kernels.base.simd import box4, triangle4  # noqa: E402
from touche._kernels.base.vec import cross as _cross  # noqa: E402


MODE_FIRST = 0
MODE_ANY = 1

SLAB_SLACK = 1e-12  # relative widening of the slab interval (rounding of far origins)
INV_ZERO = 1e300  # 1 / 0 stand-in: (box - o) * INV_ZERO is finite or +-inf, never NaN (0 * inf);
# a unit direction has a component >= 1/sqrt(3), so each slab interval has a finite end and the
# widened interval never computes inf - inf
FOUR_PI = 4.0 * np.pi


# ---------------------------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def mesh_tree(vertices, triangles, leaf_size, split, pad):
    """Build the tree (bvh_build.build_tree) and the traversal arrays of the module doc.
    Returns ``(links, boxes, child_boxes, tri, tri_vertices, tri_ids, depth)``."""
    node_index, node_bounds, tri_vertices, tri_ids, depth = build_tree(vertices, triangles, leaf_size, split)
    n = node_index.shape[0]
    m = tri_vertices.shape[0]
    links = np.empty((n, 4), dtype=np.int64)
    boxes = np.empty((n, 6))
    for i in range(n):
        right = node_index[i, 2]
        links[i, 0] = i + 1 if right >= 0 else -1
        links[i, 1] = right
        links[i, 2] = node_index[i, 0]
        links[i, 3] = node_index[i, 1]
        for k in range(3):
            boxes[i, k] = node_bounds[i, AABB_MIN + k] - pad
            boxes[i, 3 + k] = node_bounds[i, AABB_MAX + k] + pad
    child_boxes = np.zeros((n, 12))
    for i in range(n):
        if links[i, 0] >= 0:
            for k in range(6):
                child_boxes[i, k] = boxes[links[i, 0], k]
                child_boxes[i, 6 + k] = boxes[links[i, 1], k]
    tri = np.empty((m, 12))
    ab = np.empty(3)
    ac = np.empty(3)
    for k in range(m):
        for i in range(3):
            ab[i] = tri_vertices[k, 1, i] - tri_vertices[k, 0, i]
            ac[i] = tri_vertices[k, 2, i] - tri_vertices[k, 0, i]
        normal = _cross(ab, ac)
        for i in range(3):
            tri[k, i] = tri_vertices[k, 0, i]
            tri[k, 3 + i] = ab[i]
            tri[k, 6 + i] = ac[i]
            tri[k, 9 + i] = normal[i]
    return links, boxes, child_boxes, tri, tri_vertices, tri_ids, depth


@njit(cache=True, nogil=True)
def ray_layout(links, child_boxes):
    """Compact ray-traversal records, one per INTERNAL node (preorder, renumbered): both
    children's boxes and how to reach each child, so a leaf child never costs a record read.
    Returns ``(records_boxes (K, 12) float64, records_kids (K, 4) int64)`` with kids
    ``[left, left_count, right, right_count]``: count 0 -> the child is internal record
    ``left`` / ``right``; count > 0 -> the child is a leaf covering triangles
    ``[left, left + count)``. The caller rounds the boxes outward to float32 and packs both into
    one 64-byte row per record (one cache line per node visit). K = 0 when the root is a leaf."""
    n = links.shape[0]
    record_of = np.full(n, -1, dtype=np.int64)
    k = 0
    for i in range(n):
        if links[i, 0] >= 0:
            record_of[i] = k
            k += 1
    boxes = np.empty((k, 12))
    kids = np.empty((k, 4), dtype=np.int64)
    for i in range(n):
        r = record_of[i]
        if r < 0:
            continue
        for j in range(12):
            boxes[r, j] = child_boxes[i, j]
        for side in range(2):
            child = links[i, side]
            if links[child, 0] < 0:
                kids[r, 2 * side] = links[child, 2]
                kids[r, 2 * side + 1] = links[child, 3]
            else:
                kids[r, 2 * side] = record_of[child]
                kids[r, 2 * side + 1] = 0
    return boxes, kids


# ---------------------------------------------------------------------------------------------
# rays
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _inverse(d):
    # |d| <= 1e-300 (zero or subnormal): 1 / d would be inf and 0 * inf NaN in the slab test
    return 1.0 / d if abs(d) > 1e-300 else INV_ZERO


@njit(cache=True, nogil=True, inline="always")
def _slab(b, row, off, ox, oy, oz, ix, iy, iz):
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
    Same arithmetic and acceptance as ray._ray_tri (zero-area triangles and rays in the
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
    ix = _inverse(dx)
    iy = _inverse(dy)
    iz = _inverse(dz)
    store = out_t.shape[0] > 0
    near, far = _slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
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
            near, far = _slab(rec_f, index, 6 * side, ox, oy, oz, ix, iy, iz)
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
    """out[i] = R unit(v) for a triangle normal v: ray._unit's arithmetic (scaled by the largest
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
# ray tree for first / any hit: split references, binned SAH, 4-wide nodes, 4-triangle blocks
# ---------------------------------------------------------------------------------------------
#
# The tree above (one triangle per leaf slot, two children per node) serves the all-hits and
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
                grown_tri[:count] = ref_tri[:count]
                ref_tri = grown_tri
                grown_box = np.empty((capacity, 6))
                grown_box[:count] = ref_box[:count]
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
    stack = np.empty((2 * r_count + 64, 4), dtype=np.int64)  # first, count, parent, level
    stack[0, 0] = 0
    stack[0, 1] = r_count
    stack[0, 2] = -1
    stack[0, 3] = 1
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
        top -= 1
        first = stack[top, 0]
        count = stack[top, 1]
        parent = stack[top, 2]
        level = stack[top, 3]
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
        stack[top, 0] = mid
        stack[top, 1] = first + count - mid
        stack[top, 2] = node
        stack[top, 3] = level + 1
        stack[top + 1, 0] = first
        stack[top + 1, 1] = mid - first
        stack[top + 1, 2] = -1
        stack[top + 1, 3] = level + 1
        top += 2
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
    ix = _inverse(dx)
    iy = _inverse(dy)
    iz = _inverse(dz)
    best = t_max
    best_pos = -1
    best_face = -1
    near, far = _slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
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
        start = np.zeros(buckets + 1, dtype=np.int64)
        traced = 0
        for k in range(size):
            i = first + k
            ox, oy, oz, dx, dy, dz = _local_ray(poses, i * step, origins, directions, i)
            limit = t_max[i] if t_max.shape[0] > 1 else t_max[0]
            # trace_first's own first test (same arithmetic): a miss of the root box is a miss
            near, far = _slab(root_box, 0, 0, ox, oy, oz, _inverse(dx), _inverse(dy), _inverse(dz))
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
            key = ray_sort_key(root_box, cells_per_unit, near, ox, oy, oz, dx, dy, dz)
            ray_key[traced] = key
            ray_index[traced] = k
            start[key + 1] += 1
            traced += 1
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


# ---------------------------------------------------------------------------------------------
# closest point
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _box_distance_sq(b, row, off, p):
    total = 0.0
    for k in range(3):
        below = b[row, off + k] - p[k]
        above = p[k] - b[row, off + 3 + k]
        gap = max(below, max(above, 0.0))
        total += gap * gap
    return total


@njit(cache=True, nogil=True)
def closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, p, upper, stack_node, stack_d):
    """Closest point of the mesh to p (mesh frame), branch and bound on padded AABB distances,
    nearer child first. Candidates farther than ``upper`` (squared distance) are not searched.
    Returns ``(squared distance, point (3,), tree position)``; position -1 if nothing within
    ``upper``. Ties keep the lowest original face index (the brute force's rule)."""
    best = upper
    best_pos = -1
    best_id = -1
    q = p.copy()
    bound = _box_distance_sq(boxes, 0, 0, p)
    if bound > best:
        return best, q, -1
    stack_node[0] = 0
    stack_d[0] = bound
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        if stack_d[top] > best:
            continue
        while True:
            left = links[node, 0]
            if left < 0:
                first = links[node, 2]
                for k in range(first, first + links[node, 3]):
                    candidate = closest_point_triangle(p, tri_vertices[k, 0], tri_vertices[k, 1], tri_vertices[k, 2])
                    d2 = (candidate[0] - p[0]) ** 2 + (candidate[1] - p[1]) ** 2 + (candidate[2] - p[2]) ** 2
                    face = tri_ids[k]
                    if d2 < best or (d2 == best and (best_pos < 0 or face < best_id)):
                        best = d2
                        best_pos = k
                        best_id = face
                        q = candidate
                break
            right = links[node, 1]
            bound_l = _box_distance_sq(child_boxes, node, 0, p)
            bound_r = _box_distance_sq(child_boxes, node, 6, p)
            ok_l = bound_l <= best
            ok_r = bound_r <= best
            if ok_l and ok_r:
                if bound_r < bound_l:
                    stack_node[top] = left
                    stack_d[top] = bound_l
                    node = right
                else:
                    stack_node[top] = right
                    stack_d[top] = bound_r
                    node = left
                top += 1
            elif ok_l:
                node = left
            elif ok_r:
                node = right
            else:
                break
    return best, q, best_pos


@njit(cache=True, nogil=True)
def _to_local(pose, world, local):
    """Same arithmetic as support.relative_transform(identity, pose) applied to the point (the
    brute-force closest-point path), so both paths see the same local point."""
    rel = np.zeros((3, 4))
    for i in range(3):
        for j in range(3):
            rel[i, j] = pose[0, i] * (1.0 if j == 0 else 0.0) + pose[1, i] * (1.0 if j == 1 else 0.0) + pose[2, i] * (
                1.0 if j == 2 else 0.0
            )
        rel[i, 3] = pose[0, i] * (0.0 - pose[0, 3]) + pose[1, i] * (0.0 - pose[1, 3]) + pose[2, i] * (0.0 - pose[2, 3])
    for i in range(3):
        local[i] = rel[i, 0] * world[0] + rel[i, 1] * world[1] + rel[i, 2] * world[2] + rel[i, 3]


@njit(cache=True, nogil=True)
def closest_points_tree_many(links, boxes, child_boxes, tri_vertices, tri_ids, depth, scale, poses, queries,
                             out_point, out_distance, out_status, out_face, lo, hi):
    """Closest mesh point to each world query (one pose, or one per query); fills the outputs of
    query.closest_point like batch.closest_points_many does for a mesh (status TOUCHING within
    the touching tolerance, else SEPARATED; a mesh is a surface, never PENETRATING), plus the
    original face index."""
    step = 1 if poses.shape[0] > 1 else 0
    stack_node = np.empty(2 * depth + 8, dtype=np.int64)
    stack_d = np.empty(2 * depth + 8)
    local = np.empty(3)
    for i in range(lo, hi):
        pose = poses[i * step]
        _to_local(pose, queries[i], local)
        d2, q, pos = closest_on_tree(links, boxes, child_boxes, tri_vertices, tri_ids, local, np.inf,
                                     stack_node, stack_d)
        dq = q - local
        signed = np.sqrt(dq[0] * dq[0] + dq[1] * dq[1] + dq[2] * dq[2])
        if not (signed > 0.0):
            signed = -(0.0 + 0.0 + 0.0)  # pairs.finish_core_distance: -depth at zero distance
        tolerance_i = touching_tolerance_at(scale, offset(pose))
        for k in range(3):
            out_point[i, k] = pose[k, 0] * q[0] + pose[k, 1] * q[1] + pose[k, 2] * q[2] + pose[k, 3]
        out_distance[i] = max(signed, 0.0)
        out_status[i] = kinds.SEPARATED if signed > tolerance_i else kinds.TOUCHING
        out_face[i] = tri_ids[pos] if pos >= 0 else -1


# ---------------------------------------------------------------------------------------------
# winding number
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _sort_edges(edges, lo, hi):
    """Insertion sort of rows edges[lo:hi] ([a, b, weight]) by (a, b)."""
    for i in range(lo + 1, hi):
        a = edges[i, 0]
        b = edges[i, 1]
        w = edges[i, 2]
        j = i
        while j > lo and (edges[j - 1, 0] > a or (edges[j - 1, 0] == a and edges[j - 1, 1] > b)):
            edges[j, 0] = edges[j - 1, 0]
            edges[j, 1] = edges[j - 1, 1]
            edges[j, 2] = edges[j - 1, 2]
            j -= 1
        edges[j, 0] = a
        edges[j, 1] = b
        edges[j, 2] = w


@njit(cache=True, nogil=True)
def _compact(edges, lo, hi):
    """Sum the weights of equal (a, b) rows of the sorted edges[lo:hi] in place, drop zero
    weights; returns the new end."""
    out = lo
    i = lo
    while i < hi:
        a = edges[i, 0]
        b = edges[i, 1]
        w = 0
        while i < hi and edges[i, 0] == a and edges[i, 1] == b:
            w += edges[i, 2]
            i += 1
        if w != 0:
            edges[out, 0] = a
            edges[out, 1] = b
            edges[out, 2] = w
            out += 1
    return out


@njit(cache=True, nogil=True)
def node_boundaries(links, tri_vertex_ids):
    """Boundary edges of every node: directed edges of its triangles with opposite copies
    cancelled, as rows ``[a, b, weight]`` with ``a < b`` (weight +k: k times a -> b, -k: k times
    b -> a) over welded vertex ids ``tri_vertex_ids (m, 3)`` in tree order. Children come after
    their parent in preorder, so a reverse sweep sees both children's sorted lists first and
    merges them. Returns ``(edges (E, 3), start (N,), count (N,))``."""
    n = links.shape[0]
    capacity = 3 * tri_vertex_ids.shape[0] + 64
    edges = np.empty((capacity, 3), dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    used = 0
    for node in range(n - 1, -1, -1):
        left = links[node, 0]
        if left < 0:
            need = 3 * links[node, 3]
        else:
            need = count[left] + count[links[node, 1]]
        if used + need > capacity:
            capacity = max(2 * capacity, used + need + 64)
            grown = np.empty((capacity, 3), dtype=np.int64)
            grown[:used] = edges[:used]
            edges = grown
        lo = used
        hi = used
        if left < 0:
            first = links[node, 2]
            for k in range(first, first + links[node, 3]):
                for c in range(3):
                    a = tri_vertex_ids[k, c]
                    b = tri_vertex_ids[k, (c + 1) % 3]
                    if a == b:
                        continue  # a collapsed edge bounds nothing
                    if a < b:
                        edges[hi, 0] = a
                        edges[hi, 1] = b
                        edges[hi, 2] = 1
                    else:
                        edges[hi, 0] = b
                        edges[hi, 1] = a
                        edges[hi, 2] = -1
                    hi += 1
            _sort_edges(edges, lo, hi)
        else:
            # merge the two sorted child lists
            right = links[node, 1]
            i = start[left]
            i_end = i + count[left]
            j = start[right]
            j_end = j + count[right]
            while i < i_end or j < j_end:
                take_left = j >= j_end or (
                    i < i_end and (edges[i, 0] < edges[j, 0] or (edges[i, 0] == edges[j, 0] and edges[i, 1] <= edges[j, 1]))
                )
                src = i if take_left else j
                edges[hi, 0] = edges[src, 0]
                edges[hi, 1] = edges[src, 1]
                edges[hi, 2] = edges[src, 2]
                hi += 1
                if take_left:
                    i += 1
                else:
                    j += 1
        hi = _compact(edges, lo, hi)
        start[node] = lo
        count[node] = hi - lo
        used = hi
    return edges[:used].copy(), start, count


@njit(cache=True, nogil=True)
def solid_angle(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Signed solid angle of triangle abc seen from p (Van Oosterom and Strackee 1983):
    tan(omega / 2) = [A B C] / (|A||B||C| + (A.B)|C| + (A.C)|B| + (B.C)|A|), A = a - p, ...
    atan2 keeps it finite for every input (0 for a point on a vertex or a zero-area triangle);
    exactly 0 for p in the triangle's plane (see below)."""
    ax -= px
    ay -= py
    az -= pz
    bx -= px
    by -= py
    bz -= pz
    cx -= px
    cy -= py
    cz -= pz
    la = np.sqrt(ax * ax + ay * ay + az * az)
    lb = np.sqrt(bx * bx + by * by + bz * bz)
    lc = np.sqrt(cx * cx + cy * cy + cz * cz)
    det = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx)
    if det == 0.0:
        # p in the triangle's plane: 0 outside the triangle, and ON it the principal value 0 (the
        # mean of the +-2 pi limits from either side), which is what makes w = 1/2 on a face
        # instead of 0 or 1 by the sign of a rounded zero
        return 0.0
    den = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (ax * cx + ay * cy + az * cz) * lb + (
        bx * cx + by * cy + bz * cz
    ) * la
    return 2.0 * np.arctan2(det, den)


PLAN_FAN = 0
PLAN_DIRECT = 1
PLAN_DESCEND = 2


@njit(cache=True, nogil=True)
def outside_plan(links, cap_count):
    """Cheapest exact treatment of each node when the query point is outside its box (then it is
    outside every descendant's box too, children's boxes lying inside their parent's), in solid
    angles evaluated: the fan (``cap_count`` terms, if >= 0), the node's triangles, or the
    children's plans. Bottom-up over reverse preorder. Returns ``plan (N,) int64``."""
    n = links.shape[0]
    cost = np.empty(n, dtype=np.int64)
    plan = np.empty(n, dtype=np.int64)
    for node in range(n - 1, -1, -1):
        best = links[node, 3]
        choice = PLAN_DIRECT
        if cap_count[node] >= 0 and cap_count[node] < best:
            best = cap_count[node]
            choice = PLAN_FAN
        left = links[node, 0]
        if left >= 0 and cost[left] + cost[links[node, 1]] < best:
            best = cost[left] + cost[links[node, 1]]
            choice = PLAN_DESCEND
        cost[node] = best
        plan[node] = choice
    return plan


@njit(cache=True, nogil=True)
def _outside(boxes, node, p):
    return (
        p[0] < boxes[node, 0] or p[1] < boxes[node, 1] or p[2] < boxes[node, 2]
        or p[0] > boxes[node, 3] or p[1] > boxes[node, 4] or p[2] > boxes[node, 5]
    )


@njit(cache=True, nogil=True)
def winding_on_tree(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight, vertices, plan, p,
                    stack_node):
    """Generalized winding number of the mesh about p (mesh frame): sum of signed solid angles
    / 4 pi. A node whose (padded) box does not contain p is handled by its ``plan``
    (:func:`outside_plan`): its boundary fan from the box center (exact; module doc), its
    triangles summed directly, or its children; a node containing p is descended (a leaf:
    summed directly)."""
    total = 0.0
    stack_node[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        left = links[node, 0]
        outside = _outside(boxes, node, p)
        if outside and plan[node] == PLAN_FAN:
            cx = 0.5 * (boxes[node, 0] + boxes[node, 3])
            cy = 0.5 * (boxes[node, 1] + boxes[node, 4])
            cz = 0.5 * (boxes[node, 2] + boxes[node, 5])
            for e in range(cap_start[node], cap_start[node] + cap_count[node]):
                a = cap_edges[e, 0]
                b = cap_edges[e, 1]
                total += cap_weight[e] * solid_angle(
                    p[0], p[1], p[2], cx, cy, cz, vertices[a, 0], vertices[a, 1], vertices[a, 2],
                    vertices[b, 0], vertices[b, 1], vertices[b, 2],
                )
            continue
        if left < 0 or (outside and plan[node] == PLAN_DIRECT):
            first = links[node, 2]
            for k in range(first, first + links[node, 3]):
                total += solid_angle(
                    p[0], p[1], p[2], tri_vertices[k, 0, 0], tri_vertices[k, 0, 1], tri_vertices[k, 0, 2],
                    tri_vertices[k, 1, 0], tri_vertices[k, 1, 1], tri_vertices[k, 1, 2],
                    tri_vertices[k, 2, 0], tri_vertices[k, 2, 1], tri_vertices[k, 2, 2],
                )
            continue
        stack_node[top] = links[node, 1]
        stack_node[top + 1] = left
        top += 2
    return total / FOUR_PI


@njit(cache=True, nogil=True)
def winding_tree_many(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight, vertices, plan,
                      depth, poses, queries, out, lo, hi):
    """Winding number of the mesh (one pose, or one per query) about each world query."""
    step = 1 if poses.shape[0] > 1 else 0
    stack_node = np.empty(2 * depth + 8, dtype=np.int64)
    local = np.empty(3)
    for i in range(lo, hi):
        _to_local(poses[i * step], queries[i], local)
        out[i] = winding_on_tree(links, boxes, tri_vertices, cap_start, cap_count, cap_edges, cap_weight,
                                 vertices, plan, local, stack_node)


# ---------------------------------------------------------------------------------------------
# signed ray crossings (fast inside / outside for closed meshes, with a certificate)
# ---------------------------------------------------------------------------------------------

CROSSING_TOLERANCE = 1e-11  # relative margin: ~1e5 times the rounding bound of each quantity
AMBIGUOUS = 2


@njit(cache=True, nogil=True, inline="always")
def classify_crossing(tri, k, ox, oy, oz, dx, dy, dz):
    """How the ray o + t d (t > 0) crosses prepared triangle k: +1 leaving through its front
    (d . n > 0), -1 entering, 0 certainly not crossing, AMBIGUOUS when any deciding quantity
    (plane side of o, the three edge functions, parallelism) is within CROSSING_TOLERANCE of
    its own rounding scale of zero: then rounding could change the answer (grazing an edge or
    vertex, the origin on the plane, a ray in the plane), and the caller falls back to the exact
    winding number."""
    nx = tri[k, 9]
    ny = tri[k, 10]
    nz = tri[k, 11]
    dn = dx * nx + dy * ny + dz * nz
    apx = ox - tri[k, 0]
    apy = oy - tri[k, 1]
    apz = oz - tri[k, 2]
    ap1 = abs(apx) + abs(apy) + abs(apz)
    n1 = abs(nx) + abs(ny) + abs(nz)
    tn = apx * nx + apy * ny + apz * nz
    tol_t = CROSSING_TOLERANCE * ap1 * n1
    if n1 == 0.0:
        return 0  # zero area: covers nothing (a ray through its segment grazes the neighbours)
    if abs(dn) <= CROSSING_TOLERANCE * n1:
        return AMBIGUOUS  # (nearly) parallel to the plane: the crossing is ill-conditioned
    # the ray meets the plane at t = -tn / dn: behind the origin when tn and dn share a sign
    if (tn > tol_t and dn > 0.0) or (tn < -tol_t and dn < 0.0):
        return 0
    ex = apy * dz - apz * dy
    ey = apz * dx - apx * dz
    ez = apx * dy - apy * dx
    vn = tri[k, 6] * ex + tri[k, 7] * ey + tri[k, 8] * ez
    wn = -(tri[k, 3] * ex + tri[k, 4] * ey + tri[k, 5] * ez)
    un = -dn - vn - wn  # = denom - vn - wn before the sign flip
    if dn > 0.0:
        vn = -vn
        wn = -wn
        un = -un
    ab1 = abs(tri[k, 3]) + abs(tri[k, 4]) + abs(tri[k, 5])
    ac1 = abs(tri[k, 6]) + abs(tri[k, 7]) + abs(tri[k, 8])
    tol_v = CROSSING_TOLERANCE * ac1 * ap1
    tol_w = CROSSING_TOLERANCE * ab1 * ap1
    tol_u = tol_v + tol_w + CROSSING_TOLERANCE * n1
    if vn < -tol_v or wn < -tol_w or un < -tol_u:
        return 0  # certainly outside the triangle
    if vn <= tol_v or wn <= tol_w or un <= tol_u or abs(tn) <= tol_t:
        return AMBIGUOUS  # near an edge / vertex, or the origin near the plane
    return 1 if dn > 0.0 else -1


@njit(cache=True, nogil=True)
def signed_crossings(rec_f, rec_i, root, root_box, tri, ox, oy, oz, dx, dy, dz, stack_a, stack_b):
    """Sum of classify_crossing over every triangle along the whole ray; (sum, certain)."""
    ix = _inverse(dx)
    iy = _inverse(dy)
    iz = _inverse(dz)
    near, far = _slab(root_box, 0, 0, ox, oy, oz, ix, iy, iz)
    if near > far or far < 0.0:
        return 0, True
    total = 0
    stack_a[0] = root[0]
    stack_b[0] = root[1]
    top = 1
    while top > 0:
        top -= 1
        index = stack_a[top]
        count = stack_b[top]
        if count > 0:
            for k in range(index, index + count):
                c = classify_crossing(tri, k, ox, oy, oz, dx, dy, dz)
                if c == AMBIGUOUS:
                    return 0, False
                total += c
            continue
        for side in range(2):
            near, far = _slab(rec_f, index, 6 * side, ox, oy, oz, ix, iy, iz)
            if near <= far and far >= 0.0:
                stack_a[top] = rec_i[index, 12 + 2 * side]
                stack_b[top] = rec_i[index, 13 + 2 * side]
                top += 1
    return total, True


@njit(cache=True, nogil=True)
def crossings_many(rec_f, rec_i, root, root_box, tri, depth, poses, queries, direction, out_count, out_certain,
                   lo, hi):
    """Signed crossing count of the ray from each world query along the mesh-frame unit
    ``direction`` (leaving +1, entering -1): the winding number of a closed mesh about the
    query when ``out_certain`` (every crossing decided beyond rounding), else undecided."""
    step = 1 if poses.shape[0] > 1 else 0
    stack_a = np.empty(2 * depth + 8, dtype=np.int64)
    stack_b = np.empty(2 * depth + 8, dtype=np.int64)
    local = np.empty(3)
    for i in range(lo, hi):
        _to_local(poses[i * step], queries[i], local)
        total, certain = signed_crossings(rec_f, rec_i, root, root_box, tri, local[0], local[1], local[2],
                                          direction[0], direction[1], direction[2], stack_a, stack_b)
        out_count[i] = total
        out_certain[i] = certain
