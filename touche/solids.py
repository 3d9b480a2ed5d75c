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

# per mesh: (one vertex per connected component (k, 3), box min (3,), box max (3,)), weakly keyed
# by the mesh's coordinate array like the mesh trees
_REPRESENTATIVES = WeakIdentityCache()
_IDENTITY_BATCH = np.eye(4).reshape(1, 4, 4)


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
    return (np.ascontiguousarray(welded[first]), low, high, center, radius, tuple(float(x) for x in center))


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


def _spheres_apart(ta, tb, data_a, data_b):
    """One pose pair: the bounding spheres of the placed meshes are apart (plain floats: a
    handful of numpy calls would cost ten times the surface test of two far meshes)."""
    (a00, a01, a02, a03), (a10, a11, a12, a13), (a20, a21, a22, a23), _ = ta.tolist()
    (b00, b01, b02, b03), (b10, b11, b12, b13), (b20, b21, b22, b23), _ = tb.tolist()
    x, y, z = data_a[5]
    u, v, w = data_b[5]
    gx = a00 * x + a01 * y + a02 * z + a03 - (b00 * u + b01 * v + b02 * w + b03)
    gy = a10 * x + a11 * y + a12 * z + a13 - (b10 * u + b11 * v + b12 * w + b13)
    gz = a20 * x + a21 * y + a22 * z + a23 - (b20 * u + b21 * v + b22 * w + b23)
    reach = data_a[4] + data_b[4]
    return gx * gx + gy * gy + gz * gz > reach * reach


_FEW = 8  # components: up to this many, one pose pair is answered point by point in plain floats


def _inside_one(solid, ts, to, solid_data, other_data):
    """One pose pair: some component of the other mesh lies in the solid (the points moved into
    the solid's frame with plain floats; the winding number only for those inside its box)."""
    from .meshquery import _inside, mesh_tree

    (s00, s01, s02, s03), (s10, s11, s12, s13), (s20, s21, s22, s23), _ = ts.tolist()
    (o00, o01, o02, o03), (o10, o11, o12, o13), (o20, o21, o22, o23), _ = to.tolist()
    lx, ly, lz = solid_data[1].tolist()
    hx, hy, hz = solid_data[2].tolist()
    candidates = []
    for x, y, z in other_data[0].tolist():
        wx = o00 * x + o01 * y + o02 * z + o03 - s03
        wy = o10 * x + o11 * y + o12 * z + o13 - s13
        wz = o20 * x + o21 * y + o22 * z + o23 - s23
        px = s00 * wx + s10 * wy + s20 * wz
        py = s01 * wx + s11 * wy + s21 * wz
        pz = s02 * wx + s12 * wy + s22 * wz
        if lx <= px <= hx and ly <= py <= hy and lz <= pz <= hz:
            candidates.append((px, py, pz))
    if not candidates:
        return False
    return bool(_inside(mesh_tree(solid), _IDENTITY_BATCH, np.array(candidates), False).any())


def contained_pairs(a, pose_a, b, pose_b, surface):
    """``surface`` (bool or (n,) bool: the surfaces meet) OR one solid holds the other mesh."""
    single = surface is True or surface is False
    if single:
        if surface:
            return True
        ta = as_matrices(pose_a, "pose_a")
        tb = as_matrices(pose_b, "pose_b")
        data_a = component_representatives(a)
        data_b = component_representatives(b)
        if _spheres_apart(ta, tb, data_a, data_b):
            return False
        if len(data_a[0]) <= _FEW and len(data_b[0]) <= _FEW:
            if a.solid and _inside_one(a, ta, tb, data_a, data_b):
                return True
            return bool(b.solid and _inside_one(b, tb, ta, data_b, data_a))
    touching = np.atleast_1d(np.asarray(surface, dtype=bool)).copy()
    if touching.all():
        return surface
    count = len(touching)
    ta = as_matrices(pose_a, "pose_a").reshape(-1, 4, 4)
    tb = as_matrices(pose_b, "pose_b").reshape(-1, 4, 4)
    data_a = component_representatives(a)
    data_b = component_representatives(b)
    # meshes whose bounding spheres are apart hold nothing of each other: the common case, and
    # no per-point work for it
    gap = (ta[:, :3, :3] @ data_a[3] + ta[:, :3, 3]) - (tb[:, :3, :3] @ data_b[3] + tb[:, :3, 3])
    near = np.einsum("ni,ni->n", gap, gap) <= (data_a[4] + data_b[4]) ** 2
    if not near.any():
        return surface
    if a.solid:
        touching |= near & _inside_any(a, ta, b, tb, count, data_a, data_b)
    if b.solid and not touching.all():
        touching |= near & _inside_any(b, tb, a, ta, count, data_b, data_a)
    return bool(touching[0]) if single else touching
