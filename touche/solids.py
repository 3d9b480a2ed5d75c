"""Solid meshes (``TriangleMesh(..., solid=True)`` / ``mesh.as_solid()``) in mesh-mesh
``intersects``: containment without surface contact (issue 19).

Two closed surfaces that do not meet are nested or apart, per connected component: a component
of B lies wholly inside solid A or wholly outside it. So, after the surface test said "no
contact", one vertex of every connected component of B is tested against A (when A is solid) and
one of every component of A against B (when B is solid), with the exact winding-number inside
test (touche.meshquery.contains: points on the surface count, like touching surfaces). A mesh
that is not solid stays a surface: a solid inside a surface mesh does not intersect it, a surface
mesh inside a solid does.
"""
from __future__ import annotations

import numpy as np

from ._cache import WeakIdentityCache, shape_key
from .pose import as_matrices

# one vertex per connected component (vertices with identical coordinates welded), weakly keyed
# by the mesh's coordinate array like the mesh trees
_REPRESENTATIVES = WeakIdentityCache()


def component_representatives(mesh):
    """(k, 3) mesh-frame coordinates: one vertex of each connected component of the mesh."""
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
    return np.ascontiguousarray(welded[first])


def _inside_any(solid, pose_solid, other, pose_other, count):
    """(count,) bool: some component of ``other`` (placed by pose_other) lies in ``solid``."""
    from .meshquery import contains

    points = component_representatives(other)
    ts = as_matrices(pose_solid, "pose").reshape(-1, 4, 4)
    to = as_matrices(pose_other, "pose").reshape(-1, 4, 4)
    out = np.zeros(count, dtype=bool)
    for point in points:  # a handful of components: one batched inside test each
        world = np.einsum("nij,j->ni", to[:, :3, :3], point) + to[:, :3, 3]
        world = np.ascontiguousarray(np.broadcast_to(world, (count, 3)))
        out |= contains(solid, ts if len(ts) == count else ts[0], world)
    return out


def contained_pairs(a, pose_a, b, pose_b, surface):
    """``surface`` (bool or (n,) bool: the surfaces meet) OR one solid holds the other mesh."""
    single = np.ndim(surface) == 0
    touching = np.atleast_1d(np.asarray(surface, dtype=bool)).copy()
    if touching.all():
        return surface
    count = len(touching)
    if a.solid:
        touching |= _inside_any(a, pose_a, b, pose_b, count)
    if b.solid:
        touching |= _inside_any(b, pose_b, a, pose_a, count)
    return bool(touching[0]) if single else touching
