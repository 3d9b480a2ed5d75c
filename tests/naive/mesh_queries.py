"""Slow, obviously-correct references for the mesh queries (numpy over ALL triangles, one query
at a time): ray hits, closest point, winding number (solid-angle sum), plus seeded ray / point
generators and the pybullet_data meshes used by the tests and benchmark."""
from __future__ import annotations

import os

import numpy as np


def load_pybullet_mesh(name):
    """(vertices, faces) of a pybullet_data mesh loaded by trimesh (force='mesh')."""
    import pybullet_data
    import trimesh

    mesh = trimesh.load(os.path.join(pybullet_data.getDataPath(), name), force="mesh")
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


def rays_toward(vertices, n, rng, spread=1.3):
    """n rays from random points on a sphere around the mesh toward random points in
    ``spread`` x its box: roughly half hit. Returns (origins, unit directions)."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    center = 0.5 * (lo + hi)
    radius = np.linalg.norm(hi - lo)
    origins = rng.normal(size=(n, 3))
    origins = center + origins / np.linalg.norm(origins, axis=1)[:, None] * radius
    targets = center + (rng.random((n, 3)) - 0.5) * (hi - lo) * spread
    directions = targets - origins
    return origins, directions / np.linalg.norm(directions, axis=1)[:, None]


def ray_triangle_t(vertices, faces, origin, direction):
    """t of the (unit) ray against every triangle, two-sided, np.inf where it misses. Solves
    o + t d = a + u (b - a) + v (c - a) by Cramer's rule; zero-area / parallel: miss."""
    a = vertices[faces[:, 0]]
    ab = vertices[faces[:, 1]] - a
    ac = vertices[faces[:, 2]] - a
    ao = origin - a
    p = np.cross(direction, ac)
    det = np.einsum("ij,ij->i", ab, p)
    ok = det != 0.0
    safe = np.where(ok, det, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):  # nearly parallel: huge / NaN, rejected below
        u = np.einsum("ij,ij->i", ao, p) / safe
        q = np.cross(ao, ab)
        v = (q @ direction) / safe
        t = np.einsum("ij,ij->i", ac, q) / safe
        hit = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t >= 0.0)
    return np.where(hit, t, np.inf)


def first_hit(vertices, faces, origin, direction, t_max=np.inf):
    """(t, face) of the nearest hit (lowest face index on ties) or (inf, -1)."""
    t = ray_triangle_t(vertices, faces, origin, direction)
    t[t > t_max] = np.inf
    face = int(np.argmin(t))
    return (float(t[face]), face) if np.isfinite(t[face]) else (np.inf, -1)


def all_hits(vertices, faces, origin, direction, t_max=np.inf):
    """Sorted (t, face) arrays of every hit with t <= t_max."""
    t = ray_triangle_t(vertices, faces, origin, direction)
    faces_hit = np.flatnonzero(np.isfinite(t) & (t <= t_max))
    order = np.lexsort((faces_hit, t[faces_hit]))
    return t[faces_hit][order], faces_hit[order]


def winding_number(vertices, faces, point):
    """Sum of the triangles' signed solid angles seen from point over 4 pi (Van Oosterom and
    Strackee: tan(omega / 2) = [A B C] / (|A||B||C| + (A.B)|C| + (A.C)|B| + (B.C)|A|)); a
    triangle whose plane contains the point contributes 0."""
    a = vertices[faces[:, 0]] - point
    b = vertices[faces[:, 1]] - point
    c = vertices[faces[:, 2]] - point
    la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
    det = np.einsum("ij,ij->i", a, np.cross(b, c))
    dot = lambda x, y: np.einsum("ij,ij->i", x, y)  # noqa: E731
    den = la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la
    # a point in a triangle's plane gets 0 from it (the principal value on the surface)
    return float(np.sum(np.where(det == 0.0, 0.0, 2.0 * np.arctan2(det, den))) / (4.0 * np.pi))


def _closest_on_segments(p, a, b):
    ab = b - a
    length2 = np.einsum("ij,ij->i", ab, ab)
    s = np.where(length2 > 0.0, np.einsum("ij,ij->i", p - a, ab) / np.where(length2 > 0.0, length2, 1.0), 0.0)
    s = np.clip(s, 0.0, 1.0)
    return a + s[:, None] * ab


def closest_point(vertices, faces, point):
    """(point, distance, face) closest to ``point`` over all triangles: the plane projection
    when it falls inside the triangle, else the nearest of the three edges (degenerate
    triangles: edges only). Ties: lowest face index."""
    a = vertices[faces[:, 0]]
    b = vertices[faces[:, 1]]
    c = vertices[faces[:, 2]]
    candidates = [_closest_on_segments(point, a, b), _closest_on_segments(point, b, c), _closest_on_segments(point, c, a)]
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    good = nn > 1e-24 * np.einsum("ij,ij->i", b - a, b - a) * np.einsum("ij,ij->i", c - a, c - a)
    safe = np.where(good, nn, 1.0)
    projected = point - (np.einsum("ij,ij->i", point - a, n) / safe)[:, None] * n
    # inside iff the projection is on the inner side of all three edges
    inside = good.copy()
    for p0, p1 in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(p1 - p0, projected - p0), n) >= 0.0
    candidates.append(np.where(inside[:, None], projected, np.inf))
    stacked = np.stack(candidates)  # (4, m, 3)
    d2 = np.sum((stacked - point) ** 2, axis=2)
    which = np.argmin(d2, axis=0)
    per_face = d2[which, np.arange(len(faces))]
    face = int(np.argmin(per_face))
    return stacked[which[face], face], float(np.sqrt(per_face[face])), face
