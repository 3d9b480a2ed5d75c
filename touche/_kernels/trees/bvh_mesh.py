"""The bounding-volume hierarchy of one triangle mesh as the single-tree queries read it (rays:
bvh_rays, closest points: bvh_closest, winding numbers and ray crossings: bvh_winding; the ray
tree of first / any hit: bvh_ray_tree).

The tree comes from ``bvh_build.build_tree`` (SAH split for rays); :func:`mesh_tree` converts it
into the flat arrays the traversals read (one row per node, preorder, left child = i + 1):

``links (N, 4) int64``  ``[left, right, first, count]``; ``left == -1`` marks a leaf.
``boxes (N, 6)``  each node's AABB ``[min, max]``, PADDED by ``pad`` (see below).
``child_boxes (N, 12)``  an internal node's two children's padded boxes (left, right) stored in
    the parent, so one row read orders both children (near child first).
``tri (m, 12)``  per triangle in tree order: ``a``, ``ab = b - a``, ``ac = c - a``,
    ``n = ab x ac`` -- exactly the quantities ``ray_polytopes._ray_tri`` computes (same arithmetic, same
    order), so a BVH hit is bit-identical to the brute-force ``ray.ray_triangles_first``.

Conservative boxes. The slab test and the triangle test round differently; a hit the
triangle test accepts must never be culled by a box. Boxes are grown by ``pad`` (the caller
uses 1e-9 of the mesh's coordinate scale) and the slab interval is widened by 1e-12 of its own
magnitude (covers far-away origins). This only visits a few more nodes.
"""
import numpy as np

from touche._kernels import ensure_fresh_cache

ensure_fresh_cache()

from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.trees.bvh_volumes import AABB_MAX, AABB_MIN  # noqa: E402
from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.trees.bvh_build import build_tree  # noqa: E402


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
