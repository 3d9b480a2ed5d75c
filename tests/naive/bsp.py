"""Slow, obviously-correct references for the BSP tree queries (touche/bsp.py): numpy over ALL
triangles of the mesh, no tree. Plus the test meshes.

- ``winding_numbers``: the solid-angle sum (Van Oosterom-Strackee) over every triangle: 1 inside
  a closed outward mesh, 0 outside;
- ``first_hit``: the smallest t of the ray over every triangle (Cramer's rule, two-sided);
- ``surface_distance``: distance to the nearest triangle (plane projection if it falls inside,
  else the nearest of the three edges);
- ``sphere_meets_solid``: centre inside or surface distance <= r;
- ``polytope_meets_solid``: the boundary-based test (Ericson 9.1): a polytope vertex inside the
  solid, a mesh vertex inside the polytope, a polytope edge through a mesh triangle or a mesh edge
  through a polytope face.
"""
from __future__ import annotations

import numpy as np


# ---------------------------------------------------------------------------------------------
# meshes
def trimesh_arrays(mesh):
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


def l_block():
    """A concave L-shaped block (closed, outward, 12 quads as 24 triangles... built from the
    union of two boxes by manifold3d): its faces include coplanar neighbours."""
    import manifold3d

    a = manifold3d.Manifold.cube([2.0, 1.0, 1.0])
    b = manifold3d.Manifold.cube([1.0, 2.0, 1.0])
    mesh = (a + b).to_mesh()
    return np.asarray(mesh.vert_properties[:, :3], dtype=np.float64), np.asarray(mesh.tri_verts, dtype=np.int64)


def test_meshes():
    """name -> (vertices, faces): closed, outward-facing meshes of several kinds."""
    import trimesh

    meshes = {
        "cube": trimesh_arrays(trimesh.creation.box()),
        "icosphere": trimesh_arrays(trimesh.creation.icosphere(2)),
        "torus": trimesh_arrays(trimesh.creation.torus(1.0, 0.35, major_sections=24, minor_sections=12)),
        "l_block": l_block(),
        "coplanar_faces": trimesh_arrays(trimesh.creation.box().subdivide().subdivide()),
        "cylinder": trimesh_arrays(trimesh.creation.cylinder(0.5, 2.0, sections=24)),
        "capsule": trimesh_arrays(trimesh.creation.capsule(1.0, 0.4, count=[12, 12])),
    }
    return meshes


# ---------------------------------------------------------------------------------------------
# references
def winding_numbers(vertices, faces, points, chunk=256):
    """Generalized winding number of every point (solid-angle sum over all triangles)."""
    a0 = vertices[faces[:, 0]]
    b0 = vertices[faces[:, 1]]
    c0 = vertices[faces[:, 2]]
    out = np.empty(len(points))
    for lo in range(0, len(points), chunk):
        p = points[lo:lo + chunk, None, :]
        a = a0[None] - p
        b = b0[None] - p
        c = c0[None] - p
        la = np.linalg.norm(a, axis=2)
        lb = np.linalg.norm(b, axis=2)
        lc = np.linalg.norm(c, axis=2)
        det = np.einsum("pti,pti->pt", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("pti,pti->pt", a, b) * lc + np.einsum("pti,pti->pt", b, c) * la
               + np.einsum("pti,pti->pt", c, a) * lb)
        out[lo:lo + chunk] = (2.0 * np.arctan2(det, den)).sum(axis=1) / (4.0 * np.pi)
    return out


def inside(vertices, faces, points):
    return winding_numbers(vertices, faces, points) >= 0.5


def first_hit(vertices, faces, origins, directions, max_t=np.inf, chunk=64):
    """(t (n,), face (n,)) of the first triangle along each ray, inf / -1 where none."""
    a0 = vertices[faces[:, 0]]
    ab = vertices[faces[:, 1]] - a0
    ac = vertices[faces[:, 2]] - a0
    limits = np.broadcast_to(np.asarray(max_t, dtype=np.float64), (len(origins),))
    out_t = np.full(len(origins), np.inf)
    out_face = np.full(len(origins), -1)
    for lo in range(0, len(origins), chunk):
        o = origins[lo:lo + chunk, None, :]
        d = np.broadcast_to(directions[lo:lo + chunk, None, :], (len(o), len(a0), 3))
        p = np.cross(d, ac[None])
        det = np.einsum("rti,ti->rt", p, ab)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            s = o - a0[None]
            u = np.einsum("rti,rti->rt", s, p) * inv
            q = np.cross(s, ab[None])
            v = np.einsum("rti,rti->rt", d, q) * inv
            t = np.einsum("rti,ti->rt", q, ac) * inv
        ok = (det != 0.0) & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t >= 0.0) & (t <= limits[lo:lo + chunk, None])
        t = np.where(ok, t, np.inf)
        out_t[lo:lo + chunk] = t.min(axis=1)
        out_face[lo:lo + chunk] = np.where(np.isfinite(out_t[lo:lo + chunk]), t.argmin(axis=1), -1)
    return out_t, out_face


def ray_triangle_pairs_t(vertices, faces, origins, directions):
    """t of ray i against triangle faces[i] (inf where it misses), same rules as first_hit."""
    a = vertices[faces[:, 0]]
    ab = vertices[faces[:, 1]] - a
    ac = vertices[faces[:, 2]] - a
    p = np.cross(directions, ac)
    det = np.einsum("ri,ri->r", p, ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = origins - a
        u = np.einsum("ri,ri->r", s, p) / det
        q = np.cross(s, ab)
        v = np.einsum("ri,ri->r", directions, q) / det
        t = np.einsum("ri,ri->r", q, ac) / det
    slack = 1e-9  # a hit through a shared edge may land a rounding outside either triangle
    ok = (det != 0.0) & (u >= -slack) & (v >= -slack) & (u + v <= 1.0 + slack) & (t >= 0.0)
    return np.where(ok, t, np.inf)


def _segment_distance(p, a, b):
    ab = b - a
    denom = np.einsum("...i,...i->...", ab, ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.clip(np.einsum("...i,...i->...", p - a, ab) / denom, 0.0, 1.0)
    s = np.where(denom > 0.0, s, 0.0)
    return np.linalg.norm(p - (a + s[..., None] * ab), axis=-1)


def surface_distance(vertices, faces, points, chunk=128):
    """Distance from each point to the nearest triangle."""
    a0 = vertices[faces[:, 0]]
    b0 = vertices[faces[:, 1]]
    c0 = vertices[faces[:, 2]]
    normal = np.cross(b0 - a0, c0 - a0)
    length = np.linalg.norm(normal, axis=1)
    unit = normal / np.where(length > 0.0, length, 1.0)[:, None]
    out = np.empty(len(points))
    for lo in range(0, len(points), chunk):
        p = points[lo:lo + chunk, None, :]
        h = np.einsum("pti,ti->pt", p - a0[None], unit)
        proj = p - h[..., None] * unit[None]
        inside_all = np.ones(h.shape, dtype=bool)
        for x, y in ((a0, b0), (b0, c0), (c0, a0)):
            inside_all &= np.einsum("pti,ti->pt", np.cross(y - x, proj - x[None]), normal) >= 0.0
        inside_all &= (length > 0.0)[None]
        edges = np.minimum(np.minimum(_segment_distance(p, a0[None], b0[None]), _segment_distance(p, b0[None], c0[None])),
                           _segment_distance(p, c0[None], a0[None]))
        out[lo:lo + chunk] = np.where(inside_all, np.abs(h), edges).min(axis=1)
    return out


def sphere_meets_solid(vertices, faces, centers, radii):
    return inside(vertices, faces, centers) | (surface_distance(vertices, faces, centers) <= radii)


def _segments_cross_triangles(p, q, a, b, c):
    """(S, T) bool: segment s crosses (or touches) triangle t, both non-degenerate, in general
    position (the tests' random poses)."""
    d = (q - p)[:, None, :]
    ab = (b - a)[None]
    ac = (c - a)[None]
    n = np.cross(ab, ac)
    det = -np.einsum("sti,sti->st", np.broadcast_to(d, (len(p), len(a), 3)), np.broadcast_to(n, (len(p), len(a), 3)))
    s = p[:, None, :] - a[None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.einsum("sti,sti->st", s, np.broadcast_to(n, s.shape)) / det
        e = np.cross(np.broadcast_to(d, s.shape), s)
        v = -np.einsum("sti,sti->st", np.broadcast_to(ac, s.shape), e) / det
        w = np.einsum("sti,sti->st", np.broadcast_to(ab, s.shape), e) / det
    return (det != 0.0) & (t >= 0.0) & (t <= 1.0) & (v >= 0.0) & (w >= 0.0) & (v + w <= 1.0)


def polytope_meets_solid(vertices, faces, poly_vertices, poly_planes, poly_triangles, poly_edges, pose):
    """The polytope (local vertices, planes (f, 4) n . x <= d inside, boundary triangles, edges)
    placed by ``pose`` against the solid (vertices, faces)."""
    rotation, translation = pose[:3, :3], pose[:3, 3]
    world = poly_vertices @ rotation.T + translation
    normals = poly_planes[:, :3] @ rotation.T
    offsets = poly_planes[:, 3] + normals @ translation
    if inside(vertices, faces, world).any():
        return True
    if ((vertices @ normals.T - offsets) <= 0.0).all(axis=1).any():
        return True
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    if _segments_cross_triangles(world[poly_edges[:, 0]], world[poly_edges[:, 1]], a, b, c).any():
        return True
    mesh_edges = np.unique(np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1), axis=0)
    pa, pb, pc = (world[poly_triangles[:, i]] for i in range(3))
    return bool(_segments_cross_triangles(vertices[mesh_edges[:, 0]], vertices[mesh_edges[:, 1]], pa, pb, pc).any())


def polygon_area(polygon):
    """Area of a planar polygon (k, 3) (half the norm of the Newell normal)."""
    local = polygon - polygon[0]  # relative to a vertex: no cancellation far from the origin
    return 0.5 * np.linalg.norm(np.cross(local, np.roll(local, -1, axis=0)).sum(axis=0))
