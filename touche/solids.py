"""Solid meshes (``TriangleMesh(..., solid=True)`` / ``mesh.as_solid()``) in mesh-mesh
``intersects``: containment without surface contact.

Two closed surfaces that do not meet are nested or apart, per connected component: a component
of B lies wholly inside solid A or wholly outside it. So, after the surface test said "no
contact", one vertex of every connected component of B is tested against A (when A is solid) and
one of every component of A against B (when B is solid), with the exact inside test: a certified
ray crossing count (compiled, bvh_overlap.solid_held_*), else the winding number
(touche.meshquery.contains: points on the surface count, like touching surfaces). A mesh
that is not solid stays a surface: a solid inside a surface mesh does not intersect it, a surface
mesh inside a solid does.
"""
from __future__ import annotations

import numpy as np

from . import _parallel
from ._cache import WeakIdentityCache, shape_key
from ._kernels import kernel_loader
from .pose import as_matrices
from .results import DistanceResult, Status

# per mesh: (one vertex per connected component (k, 3), box min (3,), box max (3,)), weakly keyed
# by the mesh's coordinate array like the mesh trees
_REPRESENTATIVES = WeakIdentityCache()
_IDENTITY_BATCH = np.eye(4).reshape(1, 4, 4)
_FIRST_ROW = np.zeros(1, dtype=np.int64)
_APART = np.zeros(1, dtype=np.bool_)  # one pose pair whose surfaces do not meet (never written)
_overlap_kernels = kernel_loader("bvh_overlap")
_depth_kernels = kernel_loader("solid_depth")
_CANDIDATE_GRAIN = 8192  # pose pairs per thread hand-off in solid_candidates_many (a few ns each)
_HELD_GRAIN = 64  # pose pairs per thread hand-off in solid_held_many (a ray through a tree: ~1-10 us each)


def component_representatives(mesh):
    """``(points (k, 3), box_min (3,), box_max (3,), center (3,), radius, center as floats)`` in
    the mesh's frame: one vertex of each connected component (vertices with identical
    coordinates welded), the mesh's box, and a sphere around the box."""
    key = shape_key(mesh)
    found = _REPRESENTATIVES.get(key)
    if found is None:
        found = _REPRESENTATIVES.get_or_build(lambda: _representatives(mesh._packed[2], mesh._packed[3]), key)
    return found


def _representatives(vertices, faces):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    welded, inverse = np.unique(vertices, axis=0, return_inverse=True)
    faces = inverse.reshape(-1)[faces]
    rows = faces[:, [0, 1, 2]].reshape(-1)
    cols = faces[:, [1, 2, 0]].reshape(-1)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(welded), len(welded)))
    used = np.zeros(len(welded), dtype=bool)
    used[faces.reshape(-1)] = True
    _, labels = connected_components(graph, directed=False)
    labels = np.where(used, labels, -1)
    _, first = np.unique(labels, return_index=True)
    first = first[labels[first] >= 0]
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    center = 0.5 * (low + high)
    radius = float(np.sqrt(((np.maximum(high - center, center - low)) ** 2).sum()))
    points = np.ascontiguousarray(welded[first])
    # the same, flat, for the compiled single-pair test (layout: bvh_overlap's HELD_* offsets)
    held = np.concatenate([low, high, center, [radius], points.reshape(-1)]).astype(np.float64)
    return (points, low, high, center, radius, tuple(float(x) for x in center), held)


def _inside_any(solid, ts, other, to, count, solid_data, other_data):
    """(count,) bool: some component of ``other`` (placed by ``to``) lies in ``solid`` (placed by
    ``ts``). The points are moved into the solid's frame; those outside its box are outside
    (no winding number needed: the common case of meshes apart)."""
    from .meshquery import _inside, mesh_tree

    points = other_data[0]
    box_min, box_max = solid_data[1], solid_data[2]
    # x_solid = R_s^T (R_o p + t_o - t_s), for every pose pair (n, k, 3)
    world = np.einsum("nij,kj->nki", to[:, :3, :3], points) + to[:, None, :3, 3]
    local = np.einsum("nji,nkj->nki", ts[:, :3, :3], world - ts[:, None, :3, 3])
    local = np.ascontiguousarray(np.broadcast_to(local, (count,) + local.shape[1:]).reshape(-1, 3))
    in_box = ((local >= box_min) & (local <= box_max)).all(axis=1)
    inside = np.zeros(len(local), dtype=bool)
    if in_box.any():
        candidates = np.ascontiguousarray(local[in_box])
        inside[in_box] = _inside(mesh_tree(solid), _IDENTITY_BATCH, candidates, False)
    return inside.reshape(count, -1).any(axis=1)


def _solid_pair_arguments(mesh):
    """(node_index, node_bounds, tri_vertices, depth, held data): one mesh's arguments of
    bvh_overlap.solid_tree_intersects_pair, kept on the mesh (a slot read: a cache look-up by
    key costs ~0.5 us, a third of a far pair's whole descent)."""
    arguments = getattr(mesh, "_pair_arguments", None)
    if arguments is None:
        from . import bvh

        tree = bvh._tree(mesh, "mesh")
        arguments = (tree.node_index, tree.node_bounds, tree.tri_vertices, tree.depth,
                     component_representatives(mesh)[6])
        object.__setattr__(mesh, "_pair_arguments", arguments)  # past Shape.__setattr__ (frozen shapes)
    return arguments


def _crossing_arguments(a, b):
    """The crossing-count arguments of bvh_overlap.solid_held_pair / solid_held_many: the ray
    records of each solid's mesh tree (a mesh that is not solid passes the other's, unused) and
    the ray direction of touche.meshquery's certified inside test."""
    from .meshquery import _CROSSING_DIRECTION, mesh_tree

    tree_a = mesh_tree(a) if a.solid else None
    tree_b = mesh_tree(b) if b.solid else tree_a
    tree_a = tree_b if tree_a is None else tree_a
    return (tree_a.rec_f, tree_a.rec_i, tree_a.root, tree_a.root_box, tree_a.tri, tree_a.depth,
            tree_b.rec_f, tree_b.rec_i, tree_b.root, tree_b.root_box, tree_b.tri, tree_b.depth, _CROSSING_DIRECTION)


def solid_mesh_intersects(a, pose_a, b, pose_b):
    """touche.intersects of two meshes, one of them or both solid: the surfaces meet, or a
    solid holds the other mesh. A single pose pair is one compiled call (the tree descent, the
    bounding spheres, the component representatives against the solid's box) and, when a
    representative lies in a solid's box, a second one (its certified crossing count); the
    winding-number test answers only a count that was not certified. (The Python steps around
    the descent are kept to the surface test's own: the target is 1.5x its time, and a far
    pair's descent is ~2 us.)"""
    ma = as_matrices(pose_a, "pose_a", check=False)
    mb = as_matrices(pose_b, "pose_b", check=False)
    if ma.ndim == 2 and mb.ndim == 2:
        args_a = _solid_pair_arguments(a)
        args_b = _solid_pair_arguments(b)
        kernels = _overlap_kernels()
        code = kernels.solid_tree_intersects_pair(
            args_a[0], args_a[1], args_a[2], ma, args_b[0], args_b[1], args_b[2], mb, args_a[3] + args_b[3] + 2,
            args_a[4], args_b[4], a.solid, b.solid)
        if code == 2:
            code = kernels.solid_held_pair(ma, mb, args_a[4], args_b[4], a.solid, b.solid, *_crossing_arguments(a, b))
            if code == 2:
                return bool(_held_rows(a, ma[None], b, mb[None], _FIRST_ROW)[0])
        if code < 0:
            from .bvh import _refuse_poses

            _refuse_poses(pose_a, pose_b)
        return code == 1
    from . import bvh

    # a batch: as_matrices checked it; a single pose beside it is checked here (each once)
    ta = ma if ma.ndim == 3 else as_matrices(pose_a, "pose_a")
    tb = mb if mb.ndim == 3 else as_matrices(pose_b, "pose_b")
    pa, pb, count, single = bvh._batched(ta, tb)
    tree_a, tree_b = bvh._tree(a, "a"), bvh._tree(b, "b")
    held_a, held_b = _solid_pair_arguments(a)[4], _solid_pair_arguments(b)[4]
    codes = np.empty(count, dtype=np.int64)
    _parallel.run(_overlap_kernels().solid_tree_intersects_many, count, *tree_a._arrays(), pa, *tree_b._arrays(), pb,
                  bvh._bv_code("obb"), tree_a._stack_rows(tree_b), max(tree_a.max_leaf, tree_b.max_leaf), held_a,
                  held_b, a.solid, b.solid, codes, grain=bvh.INTERSECTS_GRAIN)
    meet = codes == 1
    rows = np.flatnonzero(codes == 2)
    if len(rows):
        meet[rows] = _held_rows(a, pa, b, pb, rows)
    return bool(meet[0]) if single else meet


def contained_pairs(a, pose_a, b, pose_b, surface):
    """``surface`` (bool or (n,) bool: the surfaces meet) OR one solid holds the other mesh."""
    single = surface is True or surface is False
    if single:
        if surface:
            return True
        ta = as_matrices(pose_a, "pose_a")
        tb = as_matrices(pose_b, "pose_b")
        if ta.ndim == 2 and tb.ndim == 2:
            kernels = _overlap_kernels()
            held_a, held_b = _solid_pair_arguments(a)[4], _solid_pair_arguments(b)[4]
            # the cheap necessary test first: the crossing data (a solid's mesh tree) is built
            # only for a pair that may be held
            candidate = np.empty(1, dtype=np.bool_)
            kernels.solid_candidates_many(ta[None], tb[None], held_a, held_b, a.solid, b.solid, _APART, candidate,
                                          0, 1)
            if not candidate[0]:
                return False
            code = kernels.solid_held_pair(ta, tb, held_a, held_b, a.solid, b.solid, *_crossing_arguments(a, b))
            if code != 2:
                return code == 1
    if np.all(surface):
        return surface
    ta = as_matrices(pose_a, "pose_a").reshape(-1, 4, 4)
    tb = as_matrices(pose_b, "pose_b").reshape(-1, 4, 4)
    return _held_by_solids(a, ta, b, tb, surface, np.size(surface), single)


def _held_by_solids(a, ta, b, tb, surface, count, single):
    """contained_pairs for checked pose batches ``ta``, ``tb`` ((1 or count, 4, 4)) and
    ``surface`` (a bool, or (count,) bool)."""
    touching = np.ascontiguousarray(np.atleast_1d(np.asarray(surface, dtype=bool))).copy()
    if touching.all():
        return surface
    data_a = component_representatives(a)
    data_b = component_representatives(b)
    # compiled, per pose pair: bounding spheres apart, or no component representative in a
    # solid's box, hold nothing (the common case, with no numpy pass over the representatives);
    # the exact test runs on the pose pairs that remain
    candidate = np.empty(count, dtype=np.bool_)
    _parallel.run(_overlap_kernels().solid_candidates_many, count, ta, tb, data_a[6], data_b[6], bool(a.solid),
                  bool(b.solid), touching, candidate, grain=_CANDIDATE_GRAIN)
    rows = np.flatnonzero(candidate)
    if len(rows) == 0:
        return surface
    touching[rows] = _held_rows(a, ta, b, tb, rows)
    return bool(touching[0]) if single else touching


def _held_rows(a, ta, b, tb, rows):
    """(len(rows),) bool: whether a solid holds the other mesh at the pose pairs ``rows`` of
    ``ta``, ``tb`` ((1 or n, 4, 4)), whose surfaces do not meet. Compiled per pose pair: the
    certified crossing counts of the representatives in a solid's box (solid_held_many); the
    winding-number test (_inside_any) only for a pair with a count that was not certified."""
    data_a = component_representatives(a)
    data_b = component_representatives(b)
    codes = np.empty(len(rows), dtype=np.int64)
    _parallel.run(_overlap_kernels().solid_held_many, len(rows), ta, tb, rows, data_a[6], data_b[6], bool(a.solid),
                  bool(b.solid), *_crossing_arguments(a, b), codes, grain=_HELD_GRAIN)
    held = codes == 1
    undecided = np.flatnonzero(codes == 2)
    if len(undecided):
        pick = rows[undecided]
        sub_a = ta[pick] if len(ta) > 1 else ta
        sub_b = tb[pick] if len(tb) > 1 else tb
        exact = np.zeros(len(pick), dtype=bool)
        if a.solid:
            exact |= _inside_any(a, sub_a, b, sub_b, len(pick), data_a, data_b)
        if b.solid and not exact.all():
            exact |= _inside_any(b, sub_b, a, sub_a, len(pick), data_b, data_a)
        held[undecided] = exact
    return held


# ---------------------------------------------------------------------------------------------
# penetration depth of solid meshes (docs/solids.md)
#
# The vertex depth of a pose pair: the largest distance to the solid's surface of a vertex of the
# other mesh lying in the solid (both directions when both meshes are solid), the deeper of the
# two. One compiled branch and bound per pose pair (solid_depth.deepest_pairs, _depth_rows); the
# exhaustive path (_vertex_depths_by_winding) answers the rare pose pair where a crossing count
# was not certified, and is the tests' reference.

_MESH_DATA = WeakIdentityCache()
_UNSET = object()
# vertices visited one by one in a pseudo-random order before the groups (solid_depth): enough
# for the depth found to grow near the answer, few enough to cost little next to the groups
# (128 was the fastest of 32-512 on three mesh families: the torus and dented blob of
# bench_solid_depth at 1k and 10k triangles, pybullet's duck against a capsule)
_DEPTH_SAMPLE = 128
# vertices per group of the visit (solid_depth): a group whose ball lies within the depth found
# of the surface is dismissed whole by one tree search from its center; 16 keeps a group's radius
# near two edge lengths on a regular mesh (larger groups are dismissed less often)
_DEPTH_GROUP = 16
_CHUNK_POINTS = 1 << 21  # (pose pair, vertex) rows transformed at once (48 MB of float64 triples)


class _MeshData:
    """Per mesh: the vertices used by its faces (``used`` indices, ``points`` (k, 3)), its
    distinct undirected edges (e, 2) of vertex indices, the box, and a k-d tree of the used
    points (built on first use)."""

    __slots__ = ("used", "points", "_faces", "_edges", "_edge_rows", "low", "high", "convex", "_kdtree", "_order",
                 "__weakref__")

    def __init__(self, vertices, faces):
        # the used vertex indices, ascending (a count per vertex: np.unique sorts or hashes, ~100x slower)
        self.used = np.flatnonzero(np.bincount(faces.reshape(-1), minlength=len(vertices)))
        self.points = np.ascontiguousarray(vertices[self.used])
        self._faces = faces
        self._edges = None  # built on first use (only the directional separation needs them)
        self._edge_rows = None
        self.low = self.points.min(axis=0)
        self.high = self.points.max(axis=0)
        self._kdtree = None
        self._order = None
        self.convex = _UNSET  # solids._convex_of

    @property
    def edges(self):
        """The distinct undirected edges (e, 2) of vertex indices, ascending."""
        if self._edges is None:
            faces = self._faces
            pairs = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
            pairs = pairs[pairs[:, 0] != pairs[:, 1]]
            # one int64 key per edge, a * n + b: a 1-d sort (np.unique(axis=0) is ~10x slower), same order
            n = np.int64(int(faces.max()) + 1 if faces.size else 1)
            keys = np.sort(pairs[:, 0] * n + pairs[:, 1])
            fresh = np.empty(len(keys), dtype=bool)
            fresh[:1] = True
            np.not_equal(keys[1:], keys[:-1], out=fresh[1:])
            keys = keys[fresh]
            edges = np.stack([keys // n, keys % n], axis=1)
            self._edge_rows = np.searchsorted(self.used, edges)  # the edges as rows of ``points``
            self._edges = edges
        return self._edges

    @property
    def edge_rows(self):
        self.edges
        return self._edge_rows

    def visiting_order(self):
        """solid_depth.deepest_pairs' visit list ``(rows, starts, centers, radii, sample)``:
        groups ``rows[starts[g]:starts[g + 1]]`` of rows of ``points``, each within ``radii[g]``
        of ``centers[g]`` (the mesh's own frame). First ``sample`` pseudo-random single vertices
        (the depth found grows in few steps), then every vertex once more in spatially compact
        groups of up to _DEPTH_GROUP (a k-d split; neighbouring groups in turn), which the kernel
        dismisses whole where it can. The answer does not depend on it, only the speed."""
        if self._order is None:
            count = len(self.points)
            sample = np.random.default_rng(0).permutation(count)[:_DEPTH_SAMPLE]
            grouped_rows, bounds = _compact_groups(self.points, _DEPTH_GROUP)
            group_starts = bounds[:-1]
            rows = np.concatenate([sample, grouped_rows]).astype(np.int64)
            starts = np.concatenate([np.arange(len(sample)), len(sample) + bounds]).astype(np.int64)
            grouped = self.points[grouped_rows]
            low = np.minimum.reduceat(grouped, group_starts, axis=0) if count else np.zeros((0, 3))
            high = np.maximum.reduceat(grouped, group_starts, axis=0) if count else np.zeros((0, 3))
            centers = np.concatenate([self.points[sample], 0.5 * (low + high)])
            offsets = grouped - np.repeat(centers[len(sample):], np.diff(np.r_[group_starts, count]), axis=0)
            reach = np.sqrt(np.einsum("ij,ij->i", offsets, offsets))
            radii = np.concatenate([np.zeros(len(sample)),
                                    np.maximum.reduceat(reach, group_starts) if count else np.zeros(0)])
            self._order = (rows, starts, np.ascontiguousarray(centers), radii, len(sample))
        return self._order

    def kdtree(self):
        if self._kdtree is None:
            from scipy.spatial import cKDTree

            self._kdtree = cKDTree(self.points)
        return self._kdtree


def _compact_groups(points, size):
    """``(order, starts)``: the rows of (k, 3) ``points`` split into groups
    ``order[starts[g]:starts[g + 1]]`` of at most ``size``, by halving at the median along the
    longest side of the group's box until small enough (a k-d tree's leaves, in the tree's
    order: consecutive groups are mostly neighbours). All groups of a level split at once."""
    count = len(points)
    order = np.arange(count)
    starts = np.array([0, count] if count else [0], dtype=np.int64)
    while True:
        sizes = np.diff(starts)
        if count == 0 or sizes.max() <= size:  # (no points: no group)
            return order, starts
        group = np.repeat(np.arange(len(sizes)), sizes)
        placed = points[order]
        span = np.maximum.reduceat(placed, starts[:-1], axis=0) - np.minimum.reduceat(placed, starts[:-1], axis=0)
        axis = np.argmax(span, axis=1)
        key = placed[np.arange(count), axis[group]]
        order = order[np.lexsort((key, group))]
        halves = starts[:-1][sizes > size] + sizes[sizes > size] // 2
        starts = np.sort(np.concatenate([starts, halves]))


def mesh_data(mesh):
    return _MESH_DATA.for_shape(mesh, lambda m: _MeshData(m._packed[2], m._packed[3]))


def _relative(ts, to):
    """(n, 4, 4): the pose of ``other`` in the frame of ``solid`` for each pose pair."""
    rs = ts[:, :3, :3]
    out = np.zeros((max(len(ts), len(to)), 4, 4))
    out[:, :3, :3] = np.einsum("nji,njk->nik", rs, to[:, :3, :3])
    out[:, :3, 3] = np.einsum("nji,nj->ni", rs, to[:, :3, 3] - ts[:, :3, 3])
    out[:, 3, 3] = 1.0
    return out


def _no_vertex_depths(count):
    """_vertex_depths_by_winding's answer arrays for ``count`` pose pairs with no vertex in the solid."""
    return (np.zeros(count), np.full(count, -1, dtype=np.int64), np.full((count, 3), np.nan),
            np.full((count, 3), np.nan), np.full(count, -1, dtype=np.int64))


def _depth_arguments(mesh):
    """One mesh's part of solid_depth.deepest_pairs' arguments: its two trees (used where it is
    the solid), its vertices with their visit groups (where the other is) and its box."""
    from .meshquery import mesh_tree

    data = mesh_data(mesh)
    tree = mesh_tree(mesh)
    return (tree.links, tree.boxes, tree.child_boxes, tree.tri_vertices, tree.tri_ids, tree.depth,
            tree.rec_f, tree.rec_i, tree.root, tree.root_box, tree.tri, tree.depth,
            data.points, *data.visiting_order(), data.low, data.high)


def _vertex_depths_by_winding(solid, ts, other, to, rows):
    """For the pose pairs ``rows`` (indices into the broadcast batch): the deepest vertex of
    ``other`` inside ``solid``: ``(depth (k,), vertex (k,) int64 index into other's vertices or
    -1, point (k, 3) the vertex and closest (k, 3) its closest point on the solid's surface, both
    in the solid's frame, face (k,) the solid's face or -1)``; depth 0 and vertex -1 where no
    vertex lies in the solid.

    The exhaustive path: the exact inside test (winding numbers where a crossing count is not
    certified) of every vertex in the solid's box, then exact closest points in rounds, largest
    k-d tree bound first, until no remaining bound beats its pose pair's best."""
    from .meshquery import _inside, closest_arrays, mesh_tree

    count = len(rows)
    depth, vertex, point, closest, face = _no_vertex_depths(count)
    if count == 0:
        return depth, vertex, point, closest, face
    solid_data, other_data = mesh_data(solid), mesh_data(other)
    relative = _relative(ts[rows] if len(ts) > 1 else ts, to[rows] if len(to) > 1 else to)
    if len(relative) == 1 and count > 1:
        relative = np.broadcast_to(relative, (count, 4, 4))
    # candidates: (row, vertex) with the vertex in the solid's box, then in the solid
    slot_list, vid_list, local_list = [], [], []
    per = max(1, _CHUNK_POINTS // max(len(other_data.points), 1))
    for start in range(0, count, per):
        block = relative[start:start + per]
        local = np.einsum("nij,kj->nki", block[:, :3, :3], other_data.points) + block[:, None, :3, 3]
        in_box = ((local >= solid_data.low) & (local <= solid_data.high)).all(axis=2)
        slot, vid = np.nonzero(in_box)
        slot_list.append(slot + start)
        vid_list.append(vid)
        local_list.append(local[slot, vid])
    slot = np.concatenate(slot_list)
    vid = np.concatenate(vid_list)
    local = np.ascontiguousarray(np.concatenate(local_list))
    if len(slot) == 0:
        return depth, vertex, point, closest, face
    tree = mesh_tree(solid)
    inside = _inside(tree, _IDENTITY_BATCH, local, False)
    slot, vid, local = slot[inside], vid[inside], np.ascontiguousarray(local[inside])
    if len(slot) == 0:
        return depth, vertex, point, closest, face
    # an upper bound of each candidate's depth: its distance to the solid's nearest vertex (a
    # point of the surface); exact distances in rounds, largest bounds first, until no
    # remaining bound beats its pose pair's best
    bound, _ = solid_data.kdtree().query(local, eps=1.0)  # approximate: still a vertex, still a bound
    order = np.lexsort((-bound, slot))
    slot, vid, local, bound = slot[order], vid[order], local[order], bound[order]
    take = 8
    while len(slot):
        group_start = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]])
        sizes = np.diff(np.r_[group_start, len(slot)])
        rank = np.arange(len(slot)) - np.repeat(group_start, sizes)
        pick = rank < take
        queries = np.ascontiguousarray(local[pick])
        out_point = np.empty((len(queries), 3))
        out_distance = np.empty(len(queries))
        out_status = np.empty(len(queries), dtype=np.int8)
        out_face = closest_arrays(solid, _IDENTITY_BATCH, queries, out_point, out_distance, out_status)
        picked_slot = slot[pick]
        # the deepest of the picked per pose pair (ties: the first, i.e. the largest bound)
        best = np.lexsort((-out_distance, picked_slot))
        firsts = best[np.r_[True, picked_slot[best][1:] != picked_slot[best][:-1]]]
        better = out_distance[firsts] > depth[picked_slot[firsts]]
        firsts = firsts[better]
        target = picked_slot[firsts]
        depth[target] = out_distance[firsts]
        vertex[target] = other_data.used[vid[pick][firsts]]
        point[target] = queries[firsts]
        closest[target] = out_point[firsts]
        face[target] = out_face[firsts]
        keep = ~pick & (bound > depth[slot])
        slot, vid, local, bound = slot[keep], vid[keep], local[keep], bound[keep]
        take *= 4
    # a vertex on the surface (depth 0) still counts as in the solid
    return depth, vertex, point, closest, face



def _convex_of(mesh):
    """The solid mesh's ``ConvexPolyhedron`` when it is convex (the volume it encloses equals
    its hull's within 1e-9 relative), else None; computed once per mesh."""
    data = mesh_data(mesh)
    if data.convex is not _UNSET:
        return data.convex
    from scipy.spatial import ConvexHull, QhullError

    from .shapes import ConvexPolyhedron

    found = None
    try:
        hull = ConvexHull(data.points)
    except QhullError:
        hull = None
    if hull is not None:
        vertices, faces = mesh._packed[2], mesh._packed[3]
        a, b, c = (vertices[faces[:, i]] for i in range(3))
        center = data.points.mean(axis=0)
        volume = abs(np.einsum("ij,ij->", a - center, np.cross(b - center, c - center))) / 6.0
        if abs(hull.volume - volume) <= 1e-9 * hull.volume:
            found = ConvexPolyhedron(data.points[hull.vertices])
    data.convex = found
    return found


# which side's vertex gave the depth (SolidPenetration.side)
SIDE_NONE, SIDE_A_IN_B, SIDE_B_IN_A, SIDE_CONVEX = 0, 1, 2, 3


def _apply(poses, rows, points):
    """World coordinates of (k, 3) ``points`` given in the frames ``poses[rows]`` (or poses[0])."""
    placed = poses[rows] if len(poses) > 1 else np.broadcast_to(poses, (len(rows), 4, 4))
    return np.einsum("nij,nj->ni", placed[:, :3, :3], points) + placed[:, :3, 3]


def _unit_rows(vectors):
    length = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    out = np.tile(np.array([0.0, 0.0, 1.0]), (len(vectors), 1))
    good = length > 0.0
    out[good] = vectors[good] / length[good, None]
    return out


def _depth_rows(a, ta, b, tb, rows):
    """The vertex depth of the pose pairs ``rows`` (module section above), both directions:
    ``(depth, point_a, point_b, normal, side, vertex, face)`` in world coordinates; normal from A
    to B (moving B along it takes the deepest vertex out), point_b - point_a = -depth * normal.

    One compiled pass per pose pair (solid_depth.deepest_pairs: branch and bound over the
    vertices of both sides, the certified crossing count for the few that could be deeper); a
    pose pair where a crossing count was not certified is answered again by
    ``_depth_rows_by_winding``."""
    from .meshquery import _CROSSING_DIRECTION

    count = len(rows)
    depth = np.empty(count)
    point_a = np.empty((count, 3))
    point_b = np.empty((count, 3))
    normal = np.empty((count, 3))
    side = np.empty(count, dtype=np.int8)
    row = np.empty(count, dtype=np.int64)
    face = np.empty(count, dtype=np.int64)
    unsure = np.empty(count, dtype=np.bool_)
    sides = (SIDE_A_IN_B if b.solid else 0) | (SIDE_B_IN_A if a.solid else 0)  # the kernel's bits 1 and 2
    poses_a = np.ascontiguousarray(ta[rows] if len(ta) > 1 else ta)
    poses_b = np.ascontiguousarray(tb[rows] if len(tb) > 1 else tb)
    _parallel.run(_depth_kernels().deepest_pairs, count, *_depth_arguments(a), *_depth_arguments(b), _CROSSING_DIRECTION,
                  sides, poses_a, poses_b, depth, point_a, point_b, normal, side, row, face, unsure,
                  grain=1)  # one pair: in this thread
    # (A single pose pair's two sides as two tasks on two threads was measured in stop 43: up to
    # 1.3x faster on an idle machine for 56k-triangle pairs, but 1.1-1.4x slower with every core
    # busy, where the late thread's side runs after the other without the bound between them.)
    vertex = row  # the rows of the vertex's mesh's used points, to its vertex indices
    for code, mesh in ((SIDE_A_IN_B, a), (SIDE_B_IN_A, b)):
        hit = side == code
        if hit.any():
            vertex[hit] = mesh_data(mesh).used[row[hit]]
    if unsure.any():
        again = np.flatnonzero(unsure)
        redone = _depth_rows_by_winding(a, ta, b, tb, rows[again])
        for out, value in zip((depth, point_a, point_b, normal, side, vertex, face), redone):
            out[again] = value
    return depth, point_a, point_b, normal, side, vertex, face


def _depth_rows_by_winding(a, ta, b, tb, rows):
    """_depth_rows by _vertex_depths_by_winding on each side (the exhaustive path)."""
    count = len(rows)
    depth = np.zeros(count)
    point_a = np.full((count, 3), np.nan)
    point_b = np.full((count, 3), np.nan)
    normal = np.full((count, 3), np.nan)
    side = np.zeros(count, dtype=np.int8)
    vertex = np.full(count, -1, dtype=np.int64)
    face = np.full(count, -1, dtype=np.int64)
    for solid, ts, other, to, code in ((b, tb, a, ta, SIDE_A_IN_B), (a, ta, b, tb, SIDE_B_IN_A)):
        if not solid.solid:
            continue
        d, v, local_vertex, local_closest, f = _vertex_depths_by_winding(solid, ts, other, to, rows)
        better = (v >= 0) & (d > depth)  # strictly deeper: ties go to A's vertex in B
        if not better.any():
            continue
        where = np.flatnonzero(better)
        placed_vertex = _apply(ts, rows[where], local_vertex[where])
        placed_closest = _apply(ts, rows[where], local_closest[where])
        depth[where] = d[where]
        side[where] = code
        vertex[where] = v[where]
        face[where] = f[where]
        if code == SIDE_A_IN_B:  # B moves along (vertex - closest) to leave A's vertex behind
            point_a[where], point_b[where] = placed_vertex, placed_closest
        else:  # B's vertex leaves A along (closest - vertex)
            point_a[where], point_b[where] = placed_closest, placed_vertex
        normal[where] = _unit_rows(point_a[where] - point_b[where])
    return depth, point_a, point_b, normal, side, vertex, face


def _batch_poses(pose_a, pose_b):
    ta = as_matrices(pose_a, "pose_a")
    tb = as_matrices(pose_b, "pose_b")
    single = ta.ndim == 2 and tb.ndim == 2
    ta, tb = ta.reshape(-1, 4, 4), tb.reshape(-1, 4, 4)
    if len(ta) != len(tb) and len(ta) != 1 and len(tb) != 1:
        from .errors import GeometryError

        raise GeometryError(f"pose batches differ in length: pose_a has {len(ta)}, pose_b has {len(tb)}")
    return ta, tb, max(len(ta), len(tb)), single


def _penetration_arrays(a, pose_a, b, pose_b, surface, convex_distance):
    """``surface``: the surface DistanceResult (touche.query) of the pair; ``convex_distance``:
    touche.distance (for two convex solids, answered by the pair engine). Returns the arrays of
    the solid answer: (signed, point_a, point_b, normal, status, side, vertex, face), batch
    form, with the rows that do not interpenetrate copied from ``surface``."""
    from . import tolerance

    ta, tb, count, _ = _batch_poses(pose_a, pose_b)
    signed = np.array(surface.signed_distance, dtype=np.float64).reshape(count)
    point_a = np.array(surface.point_a, dtype=np.float64).reshape(count, 3)
    point_b = np.array(surface.point_b, dtype=np.float64).reshape(count, 3)
    normal = np.array(surface.normal, dtype=np.float64).reshape(count, 3)
    status = np.array(surface.status, dtype=np.int8).reshape(count)
    side = np.zeros(count, dtype=np.int8)
    vertex = np.full(count, -1, dtype=np.int64)
    face = np.full(count, -1, dtype=np.int64)
    meeting = status != Status.SEPARATED
    # the surfaces meet, or a solid holds a component of the other mesh (no surface contact)
    if count == 1:
        examine = np.array([contained_pairs(a, ta[0], b, tb[0], bool(meeting[0]))])
    else:
        examine = np.asarray(contained_pairs(a, ta, b, tb, meeting), dtype=bool).reshape(count)
    rows = np.flatnonzero(examine)
    if len(rows) == 0:
        return signed, point_a, point_b, normal, status, side, vertex, face
    depth, pa, pb, nrm, sd, vx, fc = _depth_rows(a, ta, b, tb, rows)
    offset = np.maximum(np.abs(ta[:, :3, 3]).max(axis=1), np.abs(tb[:, :3, 3]).max(axis=1))
    offset = offset[rows] if len(offset) > 1 else np.broadcast_to(offset, (len(rows),))
    touching = tolerance.touching_tolerance(max(a.scale, b.scale), offset)
    convex_a = _convex_of(a) if a.solid and b.solid else None
    convex_b = _convex_of(b) if convex_a is not None else None
    if convex_b is not None:  # two convex solids: the exact penetration depth of the pair engine
        exact = convex_distance(convex_a, ta[rows] if len(ta) > 1 else ta[0], convex_b, tb[rows] if len(tb) > 1 else tb[0])
        e_signed = np.array(exact.signed_distance, dtype=np.float64).reshape(-1)
        e_status = np.array(exact.status).reshape(-1)
        deeper = (e_status == Status.PENETRATING) & (-e_signed >= depth)
        if deeper.any():
            pick = np.flatnonzero(deeper)
            depth[pick] = -e_signed[pick]
            pa[pick] = np.array(exact.point_a, dtype=np.float64).reshape(-1, 3)[pick]
            pb[pick] = np.array(exact.point_b, dtype=np.float64).reshape(-1, 3)[pick]
            nrm[pick] = np.array(exact.normal, dtype=np.float64).reshape(-1, 3)[pick]
            sd[pick] = SIDE_CONVEX
            vx[pick] = -1
            fc[pick] = -1
    deep = depth > touching
    target = rows[deep]
    signed[target] = -depth[deep]
    point_a[target] = pa[deep]
    point_b[target] = pb[deep]
    normal[target] = nrm[deep]
    status[target] = Status.PENETRATING
    side[target] = sd[deep]
    vertex[target] = vx[deep]
    face[target] = fc[deep]
    # a solid holding the other mesh at a positive surface distance: overlapping, never SEPARATED
    return signed, point_a, point_b, normal, status, side, vertex, face


def solid_distance(a, pose_a, b, pose_b, surface_distance, convex_distance):
    """touche.distance of two meshes, at least one solid: the surface answer
    (``surface_distance``, query._surface_mesh_mesh_distance) where they do not interpenetrate,
    the penetration depth (touche.solid_queries.penetration_depth) where they do;
    ``convex_distance`` is touche.distance (two convex solids)."""
    surface = surface_distance(a, pose_a, b, pose_b)
    if not isinstance(surface.signed_distance, np.ndarray) and surface.status == Status.SEPARATED \
            and not contained_pairs(a, pose_a, b, pose_b, False):
        return surface  # apart, nothing held: the common case, without the arrays below
    signed, point_a, point_b, normal, status, *_ = _penetration_arrays(a, pose_a, b, pose_b, surface, convex_distance)
    if isinstance(surface.signed_distance, np.ndarray):
        return DistanceResult(signed, point_a, point_b, normal, status)
    if status[0] == surface.status and signed[0] == surface.signed_distance:
        return surface
    return DistanceResult(float(signed[0]), point_a[0], point_b[0], normal[0], Status(int(status[0])))


# ---------------------------------------------------------------------------------------------
# a convex shape against a solid mesh
#
# The mesh-shape engines compare the shape with the mesh's triangles. A finite convex shape
# that meets no triangle is connected, so it lies wholly inside the solid or wholly outside:
# one point of it decides (its first packed point: a sphere's or ellipsoid's center, an end of
# a segment's, capsule's, cylinder's or cone's axis, a vertex of a polytope; rays, lines and
# planes are unbounded and never inside).


def _shape_points(shape, ts, rows):
    """World (k, 3): the first packed point of ``shape`` placed by ts[rows] (or ts)."""
    local = shape._packed[2][0]
    placed = ts[rows] if ts.ndim == 3 and len(ts) > 1 else np.broadcast_to(ts.reshape(-1, 4, 4)[0], (len(rows), 4, 4))
    return np.einsum("nij,j->ni", placed[:, :3, :3], local) + placed[:, :3, 3]


def _points_in_solid(mesh, tm, rows, points):
    """(k,) bool: world points (one per row) inside the solid mesh placed by tm[rows] (or tm)."""
    from .meshquery import _inside, mesh_tree

    placed = tm[rows] if tm.ndim == 3 and len(tm) > 1 else np.broadcast_to(tm.reshape(-1, 4, 4)[0], (len(rows), 4, 4))
    local = np.einsum("nji,nj->ni", placed[:, :3, :3], points - placed[:, :3, 3])
    data = mesh_data(mesh)
    inside = ((local >= data.low) & (local <= data.high)).all(axis=1)
    if inside.any():
        where = np.flatnonzero(inside)
        inside[where] = _inside(mesh_tree(mesh), _IDENTITY_BATCH, np.ascontiguousarray(local[where]), False)
    return inside


def _finite_convex(shape):
    from ._kernels import kinds

    return shape.kind not in (kinds.RAY, kinds.LINE, kinds.PLANE, kinds.HALFSPACE, kinds.MESH)


def shape_inside(shape, ts, mesh, tm, surface):
    """touche.intersects of a shape and a solid mesh: ``surface`` (bool, or (n,) bool array:
    the shape meets the mesh's triangles) or the shape lies inside the solid."""
    if not _finite_convex(shape):
        return surface
    if surface is True or surface is False or isinstance(surface, (bool, np.bool_)):
        if surface:
            return True
        return bool(_points_in_solid(mesh, tm, np.zeros(1, dtype=np.int64),
                                     _shape_points(shape, ts, np.zeros(1, dtype=np.int64)))[0])
    rows = np.flatnonzero(~surface)
    if len(rows) == 0:
        return surface
    out = surface.copy()
    out[rows] = _points_in_solid(mesh, tm, rows, _shape_points(shape, ts, rows))
    return out


def shape_in_solid_distance(shape, ts, mesh, tm, shape_is_a, result, convex_distance):
    """touche.distance of a finite convex shape and a solid mesh (``convex_distance`` is
    touche.distance, for the shape's support point): ``result`` (the engine's
    answer against the triangles) where the shape meets the triangles or lies outside; where it
    lies wholly inside, the depth of its deepest point: the shape's support point away from the
    nearest wall (opposite to the direction from its closest point to the mesh's), measured to
    the mesh's surface (a certified lower bound on the translation that takes the shape out)."""
    from .meshquery import closest_point_with_face
    from .shapes import HalfSpace

    if not _finite_convex(shape):
        return result
    single = not isinstance(result.signed_distance, np.ndarray)
    status = np.array(result.status, dtype=np.int8).reshape(-1)
    rows = np.flatnonzero(status == Status.SEPARATED)
    if len(rows) == 0:
        return result
    ts3, tm3 = ts.reshape(-1, 4, 4), tm.reshape(-1, 4, 4)
    inside = _points_in_solid(mesh, tm3, rows, _shape_points(shape, ts3, rows))
    if not inside.any():
        return result
    rows = rows[inside]
    point_a = np.array(result.point_a, dtype=np.float64).reshape(-1, 3)
    point_b = np.array(result.point_b, dtype=np.float64).reshape(-1, 3)
    on_shape, on_mesh = (point_a, point_b) if shape_is_a else (point_b, point_a)
    toward_wall = _unit_rows(on_mesh[rows] - on_shape[rows])
    # the support point of the shape along -toward_wall: its closest point to a half-space
    # {x : n.x <= n.c - R} beyond it (z <= 0 placed by a pose whose z axis is n)
    reach = 4.0 * shape.scale
    planes = np.zeros((len(rows), 4, 4))
    planes[:, 3, 3] = 1.0
    helper = np.where(np.abs(toward_wall[:, :1]) < 0.6, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    u = _unit_rows(np.cross(toward_wall, helper))
    v = np.cross(toward_wall, u)
    planes[:, :3, 0], planes[:, :3, 1], planes[:, :3, 2] = u, v, toward_wall
    planes[:, :3, 3] = on_shape[rows] - reach * toward_wall
    shape_poses = ts3[rows] if len(ts3) > 1 else np.ascontiguousarray(np.broadcast_to(ts3, (len(rows), 4, 4)))
    support = np.array(convex_distance(shape, shape_poses, HalfSpace([0.0, 0.0, 1.0], 0.0), planes).point_a).reshape(-1, 3)
    mesh_poses = tm3[rows] if len(tm3) > 1 else tm3
    wall, distance_to_wall, _ = closest_point_with_face(mesh, mesh_poses, support)
    depth = np.atleast_1d(distance_to_wall)
    wall = np.asarray(wall).reshape(-1, 3)
    signed = np.array(result.signed_distance, dtype=np.float64).reshape(-1)
    normal = np.array(result.normal, dtype=np.float64).reshape(-1, 3)
    signed[rows] = -depth
    status[rows] = Status.PENETRATING
    if shape_is_a:  # the mesh (B) moves along (support - wall) to leave the shape's point out
        point_a[rows], point_b[rows] = support, wall
        normal[rows] = _unit_rows(support - wall)
    else:
        point_a[rows], point_b[rows] = wall, support
        normal[rows] = _unit_rows(wall - support)
    if single:
        return DistanceResult(float(signed[0]), point_a[0], point_b[0], normal[0], Status(int(status[0])))
    return DistanceResult(signed, point_a, point_b, normal, status)


# ---------------------------------------------------------------------------------------------
# interpenetration regions of two solid meshes: contacts and intersection volume (
# docs/solids.md "Contact regions and the intersection volume")
#
# The boundary of the intersection I = A ∩ B is made of the parts of A's triangles inside B and
# of B's triangles inside A. Its edges are of three kinds, each found by batched compiled
# queries: the portions of A's edges inside B (A's edges cast as segments at B with
# raycast(mode="all"): the crossings cut an edge into portions, each classified by the winding
# number of its midpoint, or of its end vertices when no crossing cuts it), the same for B's
# edges, and the segments where a triangle t of A
# crosses a triangle s of B (their two end points are crossings already found: an edge of t
# through s or an edge of s through t). Every end point carries a symbolic key (a vertex, or a
# crossing = an edge through a triangle), so the pieces join without a distance tolerance: the
# connected components of that graph are the boundary's components. A face of the boundary can
# hold holes (a plate through a ring: the part of a plate triangle inside the ring is an annulus
# whose two loops are not joined by any edge); the pieces of each crossed triangle that lie in
# two components or more are chained into loops in its plane, and each hole loop is joined to
# the smallest outer loop around it. A region is a component of the result.
#
# The volume of I follows from the divergence theorem: each boundary loop in a triangle with
# outward unit normal n and vertex x0 contributes (x0 - o) . area_vector / 3, the area vector of
# a closed planar loop being 1/2 sum p x q over its oriented edges (o any origin).

_TOPOLOGY = WeakIdentityCache()


class _Topology:
    """Per solid mesh: welded vertices (v, 3), faces in welded indices (f, 3) oriented outward,
    distinct undirected edges (e, 2) (low index first), each face's edges (f, 3) and whether the
    face walks them low to high (f, 3) bool, each edge's two faces (e, 2)."""

    __slots__ = ("vertices", "faces", "edges", "face_edges", "face_forward", "edge_faces", "__weakref__")

    def __init__(self, vertices, faces):
        from .shapes import solid_orientation

        if solid_orientation(vertices, faces) < 0:  # inward-facing solid: walk its faces the other way
            faces = faces[:, ::-1]
        welded, inverse = np.unique(vertices, axis=0, return_inverse=True)
        faces = inverse.reshape(-1)[faces]
        self.vertices = welded
        self.faces = faces
        directed = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
        low, high = directed.min(axis=1), directed.max(axis=1)
        n = np.int64(len(welded))
        keys, index = np.unique(low * n + high, return_inverse=True)
        index = index.reshape(-1)
        self.edges = np.stack([keys // n, keys % n], axis=1)
        self.face_edges = index.reshape(-1, 3)
        self.face_forward = (directed[:, 0] == low).reshape(-1, 3)
        order = np.argsort(index, kind="stable")
        counts = np.bincount(index, minlength=len(keys))
        # a solid mesh is edge-manifold (every edge in two faces) except at zero-length edges,
        # which the solid check skips: an edge seen once lists its face twice (it is never cast)
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        first = order[starts] // 3
        second = order[np.minimum(starts + 1, len(order) - 1)] // 3
        self.edge_faces = np.stack([first, np.where(counts >= 2, second, first)], axis=1)


def topology(mesh):
    return _TOPOLOGY.for_shape(mesh, lambda m: _Topology(m._packed[2], m._packed[3]))


class _Side:
    """One mesh of the pair, placed: world vertices, outward unit face normals."""

    def __init__(self, mesh, pose, key_offset):
        self.mesh = mesh
        self.pose = pose
        self.topo = topology(mesh)
        self.world = self.topo.vertices @ pose[:3, :3].T + pose[:3, 3]
        f = self.topo.faces
        cross = np.cross(self.world[f[:, 1]] - self.world[f[:, 0]], self.world[f[:, 2]] - self.world[f[:, 0]])
        length = np.sqrt(np.einsum("ij,ij->i", cross, cross))
        self.normals = cross / np.where(length > 0.0, length, 1.0)[:, None]
        self.key_offset = key_offset  # keys of this mesh's vertices: key_offset + welded index


class _Keys:
    """The end points of the boundary pieces: vertex keys first (A's, then B's), then crossings."""

    def __init__(self, a_side, b_side):
        self.points = [a_side.world, b_side.world]
        self.count = len(a_side.world) + len(b_side.world)
        self.vertex_count = self.count

    def add(self, points):
        start = self.count
        self.points.append(points)
        self.count += len(points)
        return np.arange(start, self.count)

    def all_points(self):
        return np.concatenate(self.points)


def _cast_edges(side, other, keys, low, high, tol):
    """A's (``side``) edges against B (``other``): returns ``(portions, crossings, degenerate)``.

    ``portions``: (edge, key_from, key_to, point_from, point_to, inside) for every piece of every
    edge meeting B's box, pieces running from the edge's low vertex to its high one;
    ``crossings``: (edge, face of other, key) for every hit (a hit at an end is that vertex's
    key; hits within ``tol`` of each other along an edge share one key); ``degenerate``: the
    edges are not in general position against B (see the end of the function)."""
    from .meshquery import ON_SURFACE_GAP, _winding_closed, mesh_tree, raycast_all

    edges = side.topo.edges
    p, q = side.world[edges[:, 0]], side.world[edges[:, 1]]
    near = ((np.minimum(p, q) <= high).all(axis=1) & (np.maximum(p, q) >= low).all(axis=1))
    vectors = q - p
    lengths = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    near &= lengths > 0.0
    ids = np.flatnonzero(near)
    empty_i = np.zeros(0, dtype=np.int64)
    if len(ids) == 0:
        return (empty_i, empty_i, empty_i, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=bool)), \
            (empty_i, empty_i, empty_i), False
    hits = raycast_all(other.mesh, other.pose, p[ids], vectors[ids], lengths[ids])
    start_key = side.key_offset + edges[ids, 0]
    end_key = side.key_offset + edges[ids, 1]
    ray, t, face, point = hits.ray, hits.t, hits.face, hits.point
    length = lengths[ids][ray]
    # hits within tol of each other along an edge are one crossing (an edge through a shared
    # edge or vertex of the other mesh reports each of its triangles); at an end, the vertex
    new = np.r_[True, (ray[1:] != ray[:-1]) | (t[1:] - t[:-1] > tol)] if len(t) else np.zeros(0, dtype=bool)
    cluster = np.cumsum(new) - 1
    heads = np.flatnonzero(new)
    at_start = t[heads] <= tol
    at_end = t[heads] >= length[heads] - tol
    interior = ~at_start & ~at_end
    cluster_key = np.empty(len(heads), dtype=np.int64)
    cluster_key[at_start] = start_key[ray[heads[at_start]]]
    cluster_key[at_end & ~at_start] = end_key[ray[heads[at_end & ~at_start]]]
    cluster_key[interior] = keys.add(point[heads[interior]])
    hit_key = cluster_key[cluster]
    crossings = (ids[ray], face, hit_key)
    # portions: between consecutive interior crossing clusters (and the ends)
    stops_ray = ray[heads[interior]]
    stops_t = t[heads[interior]]
    stops_key = cluster_key[interior]
    stops_point = point[heads[interior]]
    m = len(ids)
    per_edge = np.bincount(stops_ray, minlength=m)
    # rows: for each edge, [start, stops..., end]
    total = m * 2 + len(stops_ray)
    row_edge = np.repeat(np.arange(m), per_edge + 2)
    first_row = np.r_[0, np.cumsum(per_edge + 2)[:-1]]
    row_key = np.empty(total, dtype=np.int64)
    row_point = np.empty((total, 3))
    row_key[first_row] = start_key
    row_point[first_row] = p[ids]
    last_row = first_row + per_edge + 1
    row_key[last_row] = end_key
    row_point[last_row] = q[ids]
    middle = np.ones(total, dtype=bool)
    middle[first_row] = False
    middle[last_row] = False
    order = np.lexsort((stops_t, stops_ray))  # hits come sorted by ray then t already; kept explicit
    row_key[middle] = stops_key[order]
    row_point[middle] = stops_point[order]
    keep = np.ones(total, dtype=bool)
    keep[last_row] = False  # a portion starts at every row but the last of its edge
    from_rows = np.flatnonzero(keep)
    portion_edge = ids[row_edge[from_rows]]
    key_from, key_to = row_key[from_rows], row_key[from_rows + 1]
    point_from, point_to = row_point[from_rows], row_point[from_rows + 1]
    tree = mesh_tree(other.mesh)
    _, _, _, orientation = tree.topology()
    pose = other.pose.reshape(1, 4, 4)

    def classify(points):  # (inside, on the surface): closed sets, as touche.contains
        winding = orientation * _winding_closed(tree, pose, np.ascontiguousarray(points))
        on = np.abs(winding - np.round(winding)) > ON_SURFACE_GAP
        return (np.abs(winding) >= 0.5) | on, on

    # an edge no crossing cuts is inside or outside whole: its end vertices tell (a third as
    # many queries as the edges), unless one is on the surface or they disagree (the midpoint)
    whole = per_edge[row_edge[from_rows]] == 0
    ends = np.unique(edges[ids[per_edge == 0]])
    vertex_inside, vertex_on = classify(side.world[ends])
    first = np.searchsorted(ends, edges[portion_edge[whole], 0])
    second = np.searchsorted(ends, edges[portion_edge[whole], 1])
    clear = ~vertex_on[first] & ~vertex_on[second] & (vertex_inside[first] == vertex_inside[second])
    inside = np.zeros(len(portion_edge), dtype=bool)
    on_surface = np.zeros(len(portion_edge), dtype=bool)
    inside[np.flatnonzero(whole)[clear]] = vertex_inside[first[clear]]
    ask = np.ones(len(portion_edge), dtype=bool)
    ask[np.flatnonzero(whole)[clear]] = False
    if ask.any():
        inside[ask], on_surface[ask] = classify(0.5 * (point_from[ask] + point_to[ask]))
    # not in general position: a vertex on the other surface, an edge through an edge or a
    # vertex of the other mesh, or a portion lying on the other surface (faces in one plane)
    degenerate = bool(at_start.any() or at_end.any() or len(heads) != len(t) or on_surface.any())
    return (portion_edge, key_from, key_to, point_from, point_to, inside), crossings, degenerate


def _segments(a_side, b_side, crossings_a, crossings_b, key_points):
    """The segments where a triangle t of A crosses a triangle s of B, from the crossings of
    A's edges through B's triangles and of B's edges through A's triangles. Returns
    ``(t, s, key_from, key_to, degenerate_t, degenerate_s, chain_from, chain_to)``: each
    segment oriented along n_t x n_s (B's inside on its left seen from outside A, A's inside on
    its right seen from outside B); the triangles whose crossings did not pair up (a touch at a
    point, a crossing through an edge or vertex of both meshes, coplanar contact) are listed as
    degenerate, and the keys of each such pair are linked in a chain (they lie on the segment
    where the two triangles meet)."""
    edge_a, face_b, key_a = crossings_a
    edge_b, face_a, key_b = crossings_b
    fa = a_side.topo.edge_faces
    fb = b_side.topo.edge_faces
    t = np.concatenate([fa[edge_a, 0], fa[edge_a, 1], face_a, face_a])
    s = np.concatenate([face_b, face_b, fb[edge_b, 0], fb[edge_b, 1]])
    k = np.concatenate([key_a, key_a, key_b, key_b])
    nb = np.int64(len(b_side.topo.faces))
    triples = np.unique(np.stack([t * nb + s, k], axis=1), axis=0)
    pair, k = triples[:, 0], triples[:, 1]
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]]) if len(pair) else np.zeros(0, dtype=np.int64)
    sizes = np.diff(np.r_[starts, len(pair)])
    good = starts[sizes == 2]
    bad = starts[sizes != 2]
    t_good, s_good = pair[good] // nb, pair[good] % nb
    k1, k2 = k[good], k[good + 1]
    direction = np.cross(a_side.normals[t_good], b_side.normals[s_good])
    flip = np.einsum("ij,ij->i", key_points[k2] - key_points[k1], direction) < 0.0
    k1, k2 = np.where(flip, k2, k1), np.where(flip, k1, k2)
    # a bad group: its keys are joined in a chain (the pieces meet there; conservative) and its
    # triangles skip the hole search
    chain_from, chain_to = [], []
    for start, size in zip(bad.tolist(), sizes[sizes != 2].tolist()):
        chain_from.extend(k[start:start + size - 1].tolist())
        chain_to.extend(k[start + 1:start + size].tolist())
    return (t_good, s_good, k1, k2, np.unique(pair[bad] // nb), np.unique(pair[bad] % nb),
            np.array(chain_from, dtype=np.int64), np.array(chain_to, dtype=np.int64))


def _loops(tail, head):
    """Chains the directed pieces (tail[i] -> head[i]) of one triangle into closed loops: a list
    of index arrays, or None when the pieces do not form loops (a key without exactly one
    piece in and one out)."""
    if len(np.unique(tail)) != len(tail) or len(np.unique(head)) != len(head):
        return None
    following = {int(k): i for i, k in enumerate(tail.tolist())}
    seen = np.zeros(len(tail), dtype=bool)
    loops = []
    for first in range(len(tail)):
        if seen[first]:
            continue
        loop = []
        i = first
        while not seen[i]:
            seen[i] = True
            loop.append(i)
            nxt = following.get(int(head[i]))
            if nxt is None:
                return None
            i = nxt
        if i != first:
            return None
        loops.append(np.array(loop))
    return loops


def _point_in_polygon(x, y, px, py):
    """Even-odd rule: (x, y) inside the polygon of vertices (px, py)."""
    qx, qy = np.roll(px, -1), np.roll(py, -1)
    crosses = (py > y) != (qy > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        at = px + (y - py) * (qx - px) / (qy - py)
    return bool(np.count_nonzero(crosses & (x < at)) % 2)


def _hole_links(side, triangles, tri_of, tail, head, key_points):
    """For each triangle in ``triangles`` (crossed, not degenerate): its boundary pieces
    (``tri_of`` their triangle, ``tail`` -> ``head`` keys, each with the inside on its left seen
    from outside the mesh) chained into loops; each hole loop (clockwise) is joined to the
    smallest counter-clockwise loop around it. Returns ``(from_keys, to_keys, failed)``:
    the links, and the triangles whose pieces did not chain (joined conservatively by the
    caller)."""
    order = np.argsort(tri_of, kind="stable")
    tri_sorted = tri_of[order]
    link_from, link_to, failed = [], [], []
    bounds = np.searchsorted(tri_sorted, triangles), np.searchsorted(tri_sorted, triangles, side="right")
    for tri, lo, hi in zip(triangles.tolist(), bounds[0].tolist(), bounds[1].tolist()):
        rows = order[lo:hi]
        loops = _loops(tail[rows], head[rows])
        if loops is None:
            failed.append(tri)
            continue
        if len(loops) < 2:
            continue
        # the triangle's plane: axes u, v with u x v the outward normal
        corners = side.world[side.topo.faces[tri]]
        u = corners[1] - corners[0]
        u = u / np.sqrt(u @ u)
        v = np.cross(side.normals[tri], u)
        polygons, areas = [], []
        for loop in loops:
            pts = key_points[tail[rows[loop]]] - corners[0]
            px, py = pts @ u, pts @ v
            polygons.append((px, py))
            areas.append(0.5 * float(np.sum(px * np.roll(py, -1) - np.roll(px, -1) * py)))
        outer = [i for i, area in enumerate(areas) if area > 0.0]
        for i, area in enumerate(areas):
            if area > 0.0:
                continue
            px, py = polygons[i]
            # the midpoint of the hole's first piece (its first vertex may lie on another loop)
            x, y = 0.5 * (px[0] + px[1 % len(px)]), 0.5 * (py[0] + py[1 % len(py)])
            around = [j for j in outer if _point_in_polygon(x, y, *polygons[j])]
            if not around:  # a clockwise loop in no outer one: the pieces are not in general position
                failed.append(tri)
            else:
                j = min(around, key=lambda j: areas[j])
                link_from.append(int(tail[rows[loops[i][0]]]))
                link_to.append(int(tail[rows[loops[j][0]]]))
    return link_from, link_to, failed


class _Regions:
    """The interpenetration regions of one placed pair (module section above): ``key_points``
    (k, 3) world end points of the boundary pieces, ``labels`` (k,) their component, ``used``
    (k,) whether a piece ends there, ``volume_by_label`` (k,) the volume of each component
    (indexed by label), ``portions`` per side (A's edges inside B, B's inside A: key_from,
    key_to (p,)), ``crossing_face`` / ``crossing_side`` per key (the face of the other mesh an
    edge goes through at that crossing and 0 for an edge of A, 1 for an edge of B; -1 for
    vertex keys), ``sides`` (the placed A and B), ``degenerate`` (the pair is not in general
    position: see _cast_edges and _segments; the volumes may then be off), ``area_by_label``
    (k, 3) the area vector of A's part of each component's boundary minus B's part (from A
    to B)."""

    __slots__ = ("key_points", "labels", "used", "volume_by_label", "portions", "crossing_face", "crossing_side",
                 "sides", "degenerate", "area_by_label")


def regions(a, ta, b, tb):
    """The connected interpenetration regions of two solid meshes placed by (4, 4) poses."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    side_a = _Side(a, ta, 0)
    side_b = _Side(b, tb, len(topology(a).vertices))
    keys = _Keys(side_a, side_b)
    scale = max(a.scale, b.scale, float(np.abs(side_a.world).max()), float(np.abs(side_b.world).max()))
    tol = 1e-12 * scale
    pad = 1e-9 * scale
    low_a, high_a = side_a.world.min(axis=0) - pad, side_a.world.max(axis=0) + pad
    low_b, high_b = side_b.world.min(axis=0) - pad, side_b.world.max(axis=0) + pad
    portions_a, crossings_a, degenerate_a = _cast_edges(side_a, side_b, keys, low_b, high_b, tol)
    portions_b, crossings_b, degenerate_b = _cast_edges(side_b, side_a, keys, low_a, high_a, tol)
    degenerate = degenerate_a or degenerate_b
    key_points = keys.all_points()
    t_seg, s_seg, k1, k2, bad_t, bad_s, chain_from, chain_to = _segments(side_a, side_b, crossings_a,
                                                                         crossings_b, key_points)
    links_from = [chain_from, k1]
    links_to = [chain_to, k2]
    # per side: the inside portions, each in its two triangles (walked by the triangle's order),
    # and the segments (A's triangle: along n_t x n_s; B's: the other way)
    pieces = []
    for side, portions, seg_tri, seg_tail, seg_head, bad in (
            (side_a, portions_a, t_seg, k1, k2, bad_t), (side_b, portions_b, s_seg, k2, k1, bad_s)):
        edge, key_from, key_to, point_from, point_to, inside = portions
        edge, key_from, key_to = edge[inside], key_from[inside], key_to[inside]
        links_from.append(key_from)
        links_to.append(key_to)
        topo = side.topo
        ef = topo.edge_faces[edge]
        tri = np.concatenate([ef[:, 0], ef[:, 1], seg_tri])
        # does the face walk the edge low -> high (the portions' direction)?
        forward = np.concatenate([_walks_forward(topo, ef[:, 0], edge), _walks_forward(topo, ef[:, 1], edge)])
        tail = np.concatenate([np.where(forward, np.tile(key_from, 2), np.tile(key_to, 2)), seg_tail])
        head = np.concatenate([np.where(forward, np.tile(key_to, 2), np.tile(key_from, 2)), seg_head])
        pieces.append((side, tri, tail, head, seg_tri, bad))
        degenerate = degenerate or len(bad) > 0
    n = len(key_points)
    if degenerate:
        # not in general position: distinct keys can be one point (a vertex on the other
        # surface is also a crossing there; an edge through an edge is two crossings); keys
        # closer than the crossings' rounding are joined
        from scipy.spatial import cKDTree

        ends = np.unique(np.concatenate([np.concatenate(links_from), np.concatenate(links_to)]))
        close = cKDTree(key_points[ends]).query_pairs(1e-10 * scale, output_type="ndarray")
        links_from.append(ends[close[:, 0]])
        links_to.append(ends[close[:, 1]])

    def components():
        link_from = np.concatenate(links_from).astype(np.int64)
        link_to = np.concatenate(links_to).astype(np.int64)
        graph = coo_matrix((np.ones(len(link_from)), (link_from, link_to)), shape=(n, n))
        return connected_components(graph, directed=False)[1], link_from, link_to

    labels, link_from, link_to = components()
    # holes: only a crossed triangle whose pieces lie in two components or more can hold a
    # hole loop that changes the regions (a hole in a single component joins nothing)
    more = False
    for side, tri, tail, head, seg_tri, bad in pieces:
        crossed = np.setdiff1d(np.unique(seg_tri), bad)
        if len(crossed) == 0:
            continue
        low = np.full(int(tri.max()) + 1, n, dtype=np.int64)
        high = np.full(int(tri.max()) + 1, -1, dtype=np.int64)
        np.minimum.at(low, tri, labels[tail])
        np.maximum.at(high, tri, labels[tail])
        split = crossed[low[crossed] != high[crossed]]
        if len(split) == 0:
            continue
        more_from, more_to, failed = _hole_links(side, split, tri, tail, head, key_points)
        links_from.append(np.array(more_from, dtype=np.int64))
        links_to.append(np.array(more_to, dtype=np.int64))
        degenerate = degenerate or len(failed) > 0
        more = True
    if more:
        labels, link_from, link_to = components()
    used = np.zeros(n, dtype=bool)
    used[link_from] = True
    used[link_to] = True
    # volume per component: every oriented piece in its triangle, (x0 - o) . (p - o) x (q - o) / 6
    origin = 0.5 * (np.maximum(low_a, low_b) + np.minimum(high_a, high_b))
    volume_by_label = np.zeros(n)
    # and the area vector of A's part minus B's part (both point from A to B; equal and opposite
    # on a closed boundary, so their difference is twice either, also for zero-volume contacts)
    area_by_label = np.zeros((n, 3))
    for sign, (side, tri, tail, head, _, _) in zip((0.5, -0.5), pieces):
        x0 = side.world[side.topo.faces[tri, 0]] - origin
        p, q = key_points[tail] - origin, key_points[head] - origin
        cross = np.cross(p, q)
        volume_by_label += np.bincount(labels[tail], np.einsum("ij,ij->i", x0, cross) / 6.0, minlength=n)
        for axis in range(3):
            area_by_label[:, axis] += np.bincount(labels[tail], sign * cross[:, axis], minlength=n)
    out = _Regions()
    out.key_points, out.labels, out.used, out.volume_by_label = key_points, labels, used, volume_by_label
    out.area_by_label = area_by_label
    out.portions = [(p[1][p[5]], p[2][p[5]]) for p in (portions_a, portions_b)]
    out.crossing_face = np.full(n, -1, dtype=np.int64)
    out.crossing_side = np.full(n, -1, dtype=np.int8)
    # the crossings' faces (a crossing key made at a vertex keeps -1: it is a vertex)
    for code, (_, face, key) in ((0, crossings_a), (1, crossings_b)):
        made = key >= keys.vertex_count
        out.crossing_face[key[made]] = face[made]
        out.crossing_side[key[made]] = code
    out.sides = (side_a, side_b)
    out.degenerate = degenerate
    return out


def _walks_forward(topo, faces, edges):
    """(k,) bool: face ``faces[i]`` walks edge ``edges[i]`` from its low vertex to its high one."""
    match = topo.face_edges[faces] == edges[:, None]
    return (topo.face_forward[faces] & match).any(axis=1)


def _spread(points, chosen, normal, max_points):
    """Indices into ``points`` (c, 3): ``chosen`` (the deepest) first, then greedily the point
    adding the most area to the convex hull of those kept, in the plane across ``normal``
    (the second: the farthest from the first). Ties: the lowest index."""
    if len(points) == 1 or max_points == 1:
        return [chosen]
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.6 else np.array([0.0, 1.0, 0.0])
    u = np.cross(normal, helper)
    u /= np.sqrt(u @ u)
    v = np.cross(normal, u)
    flat = np.stack([points @ u, points @ v], axis=1)
    kept = [chosen]
    while len(kept) < min(max_points, len(points)):
        hull = flat[kept]
        if len(kept) == 1:
            gain = np.sum((flat - hull[0]) ** 2, axis=1)
        elif len(kept) == 2:
            gain = np.abs(_cross2(hull[1] - hull[0], flat - hull[0]))
        else:
            # hull kept counter-clockwise: a point adds the triangles over the edges it sees
            start, end = hull, np.roll(hull, -1, axis=0)
            side = _cross2(end - start, flat[:, None, :] - start)  # (c, h)
            gain = -np.where(side < 0.0, side, 0.0).sum(axis=1)
        gain[kept] = -1.0
        top = float(gain.max())
        if top <= 0.0:
            break
        # near-ties (within rounding of the largest gain; symmetric shapes tie exactly) go to
        # the lowest index, so that rounding does not pick another point after a tiny motion
        best = int(np.argmax(gain >= top * (1.0 - 1e-9)))
        kept.append(best)
        if len(kept) >= 3:  # the kept points in counter-clockwise order around their centre
            hull = flat[kept]
            centre = hull.mean(axis=0)
            angle = np.arctan2(hull[:, 1] - centre[1], hull[:, 0] - centre[0])
            order = np.argsort(angle, kind="stable")
            kept = [kept[i] for i in order]
    # the deepest first, then the others in the order they were kept around it
    first = kept.index(chosen)
    return kept[first:] + kept[:first]


def _cross2(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def region_contacts(a, ta, b, tb, max_points):
    """Contact points of each interpenetration region of two solid meshes placed by (4, 4)
    poses. Returns a dict of arrays (touche.solid_queries.SolidContacts documents them).

    Candidates: every end point of the boundary pieces (a vertex inside the other solid, or a
    crossing, on both surfaces: depth 0) and the midpoint of every edge portion inside the
    other solid. A candidate's depth is its distance to the other surface; only the candidates
    that can still be the deepest of their region are measured exactly (closest points on the
    other mesh's tree, in rounds ordered by an upper bound: the distance to the other mesh's
    nearest vertex), then the points kept by the spread."""
    from . import tolerance
    from .meshquery import closest_point_with_face

    found = regions(a, ta, b, tb)
    side_a, side_b = found.sides
    key_points, labels, used = found.key_points, found.labels, found.used
    count_a = len(side_a.world)
    size = max(a.scale, b.scale)
    keys = np.flatnonzero(used)
    crossing = found.crossing_side[keys] >= 0
    vertex_keys = keys[~crossing]
    # a vertex ending an inside portion is in the other solid, except where the portions are not
    # well defined (faces in one plane): checked
    for code, other_mesh, other_pose in ((0, b, tb), (1, a, ta)):
        mine = (vertex_keys >= count_a) == bool(code)
        if mine.any():
            inside = _points_in_solid(other_mesh, other_pose.reshape(1, 4, 4), np.zeros(int(mine.sum()), dtype=np.int64),
                                      key_points[vertex_keys[mine]])
            vertex_keys = np.delete(vertex_keys, np.flatnonzero(mine)[~inside])
    # side: 0 on A's surface (in B), 1 on B's (in A), 2 a crossing (on both)
    parts_point = [key_points[vertex_keys]]
    parts_side = [(vertex_keys >= count_a).astype(np.int8)]
    parts_key = [vertex_keys]
    for code, (key_from, key_to) in enumerate(found.portions):
        parts_point.append(0.5 * (key_points[key_from] + key_points[key_to]))
        parts_side.append(np.full(len(key_from), code, dtype=np.int8))
        parts_key.append(key_from)
    parts_point.append(key_points[keys[crossing]])
    parts_side.append(np.full(int(crossing.sum()), 2, dtype=np.int8))
    parts_key.append(keys[crossing])
    point = np.concatenate(parts_point)
    side = np.concatenate(parts_side)
    names, region_of = np.unique(labels[np.concatenate(parts_key)], return_inverse=True)
    count = len(names)
    offset = max(float(np.abs(ta[:3, 3]).max()), float(np.abs(tb[:3, 3]).max()))
    touching = tolerance.touching_tolerance(size, offset)
    tie = 1e-9 * size
    # exact depths on demand
    depth = np.zeros(len(point))
    closest = point.copy()
    measured = side == 2
    others = ((b, tb), (a, ta))

    def measure(rows):
        for code in (0, 1):
            mine = rows[side[rows] == code]
            if len(mine):
                mesh, pose = others[code]
                near, dist, _ = closest_point_with_face(mesh, pose, np.ascontiguousarray(point[mine]))
                near, dist = np.asarray(near).reshape(-1, 3), np.atleast_1d(dist)
                deep = dist > touching  # within the touching tolerance: on both surfaces
                depth[mine] = np.where(deep, dist, 0.0)
                closest[mine] = np.where(deep[:, None], near, point[mine])
        measured[rows] = True

    bound = np.zeros(len(point))
    for code in (0, 1):
        mine = np.flatnonzero(side == code)
        if len(mine):
            mesh, pose = others[code]
            local = (point[mine] - pose[:3, 3]) @ pose[:3, :3]
            # a vertex of the other surface within twice the nearest one: still a bound
            bound[mine] = mesh_data(mesh).kdtree().query(local, eps=1.0)[0]
    best = np.full(count, -np.inf)
    np.maximum.at(best, region_of[measured], depth[measured])
    take = 8
    while True:
        pending = np.flatnonzero(~measured & (bound >= best[region_of] - tie))
        if len(pending) == 0:
            break
        order = pending[np.lexsort((-bound[pending], region_of[pending]))]
        starts = np.flatnonzero(np.r_[True, region_of[order][1:] != region_of[order][:-1]])
        rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        picked = order[rank < take]
        measure(picked)
        np.maximum.at(best, region_of[picked], depth[picked])
        take *= 4
    # regions, deepest first (ties: the lowest label)
    order = np.lexsort((names, -best))
    rank = np.empty(count, dtype=np.int64)
    rank[order] = np.arange(count)
    region_of = rank[region_of]
    region_volume = np.maximum(region_volumes(a, ta, b, tb, found)[names][order], 0.0)
    # the region's normal: its area vector (from A to B); a region without one (a mesh wholly
    # inside the other) takes its deepest point's
    area = found.area_by_label[names][order]
    length = np.sqrt(np.einsum("ij,ij->i", area, area))
    region_normal = area / np.where(length > 0.0, length, 1.0)[:, None]
    flat = length <= 1e-12 * size ** 2
    region_depth = np.zeros(count)
    picked, picked_region = [], []
    by_region = np.argsort(region_of, kind="stable")
    bounds = np.searchsorted(region_of[by_region], np.arange(count + 1))
    for r in range(count):
        rows = by_region[bounds[r]:bounds[r + 1]]
        # the deepest; ties within 1e-9 of the size (exact ties are common: the midpoints of
        # chords through a slab all lie at half its thickness) go to the lowest candidate
        # index, the same after a tiny motion
        top = float(depth[rows][measured[rows]].max())
        deepest = int(np.argmax(measured[rows] & (depth[rows] >= top - tie)))
        region_depth[r] = depth[rows[deepest]]
        if flat[r] and region_depth[r] > 0.0:
            away = point[rows[deepest]] - closest[rows[deepest]]
            region_normal[r] = (away if side[rows[deepest]] == 0 else -away) / region_depth[r]
        elif flat[r]:  # no depth and no area vector (two coincident solids): no direction is better
            region_normal[r] = (0.0, 0.0, 1.0)
        kept = _spread(point[rows], deepest, region_normal[r], max_points)
        picked.extend(rows[kept].tolist())
        picked_region.extend([r] * len(kept))
    picked = np.array(picked, dtype=np.int64)
    unmeasured = picked[~measured[picked]]
    if len(unmeasured):
        measure(unmeasured)
    # from A to B: a point of A inside B leaves B along (point - closest), a point of B inside A
    # along (closest - point); points at depth 0 (on both surfaces) take the region's normal
    p, c, d, sd = point[picked], closest[picked], depth[picked], side[picked]
    region = np.array(picked_region, dtype=np.int64)
    normal = region_normal[region].copy()
    deep = d > 0.0
    normal[deep] = np.where((sd[deep] == 0)[:, None], p[deep] - c[deep], c[deep] - p[deep]) / d[deep, None]
    point_a = np.where((sd == 1)[:, None], c, p)
    point_b = np.where((sd == 1)[:, None], p, c)
    return {
        "points": point_a - 0.5 * d[:, None] * normal,  # midway: A's point is mid + depth / 2 * normal
        "depths": d, "normals": normal, "point_a": point_a, "point_b": point_b, "region": region,
        "region_depth": region_depth, "region_volume": region_volume, "region_normal": region_normal,
    }


# directions of the infinitesimal shift of B for pairs not in general position (fixed, far from
# the axes and from each other: the meshes users build are aligned with axes more than anything)
_SHIFTS = np.array([[0.5773502691896258, 0.3015113445777636, 0.7587869740361543],
                    [-0.2672612419124244, 0.8017837257372732, 0.5345224838248488],
                    [0.6882472016116852, -0.6246950475544243, 0.3687623354943167]])


def region_volumes(a, ta, b, tb, found):
    """(k,) the volume of each component of ``found`` (= regions(a, ta, b, tb)), indexed by
    label. In general position, the sums over the boundary pieces (module section above).
    Otherwise (faces of A and B in one plane, a vertex on the other surface, edges through
    edges) the pieces are not well defined, but the volume is a continuous function of B's
    translation, polynomial (degree 3) on (0, h] along a fixed direction for some h > 0: with
    V(e) the volume for B shifted by e along it, 2 V(e) - V(2 e) = V(0) + O(e^2); e = 1e-7 of
    the size makes the error about 1e-14 of the size cubed. The shifted pairs are in general
    position (else the next direction is tried); each of their regions is credited to the
    region where most of its end points land (nearest key point)."""
    if not found.degenerate:
        return found.volume_by_label
    from scipy.spatial import cKDTree

    used = np.flatnonzero(found.used)
    nearest_key = cKDTree(found.key_points[used])
    step = 1e-7 * max(a.scale, b.scale)
    out = found.volume_by_label
    for direction in _SHIFTS:
        out = np.zeros(len(found.labels))
        degenerate = False
        for factor, weight in ((1.0, 2.0), (2.0, -1.0)):
            shifted = tb.copy()
            shifted[:3, 3] += factor * step * direction
            moved = regions(a, ta, b, shifted)
            degenerate = degenerate or moved.degenerate
            moved_used = np.flatnonzero(moved.used)
            if len(moved_used) == 0:
                continue
            _, nearest = nearest_key.query(moved.key_points[moved_used])
            votes = np.unique(np.stack([moved.labels[moved_used], found.labels[used[nearest]]], axis=1), axis=0,
                              return_counts=True)
            (pairs, counts) = votes
            order = np.lexsort((-counts, pairs[:, 0]))  # per moved region, the most voted first
            pairs = pairs[order]
            first = np.r_[True, pairs[1:, 0] != pairs[:-1, 0]]
            np.add.at(out, pairs[first, 1], weight * moved.volume_by_label[pairs[first, 0]])
        if not degenerate:
            break
    return out


def volume(a, ta, b, tb):
    """Volume of the intersection of two solid meshes placed by (4, 4) poses (region_volumes)."""
    found = regions(a, ta, b, tb)
    labels = np.unique(found.labels[found.used])
    return max(float(region_volumes(a, ta, b, tb, found)[labels].sum()), 0.0)
