"""Slow, obviously correct references for tests/kernels/test_gjk.py.

* Polytope pairs: the Minkowski difference D = A - B as the scipy ConvexHull of all vertex
  differences; signed distance = distance from the origin to D (brute force over D's boundary
  triangles) when outside, minus the smallest facet-plane distance when inside (the penetration
  depth of a convex polytope is attained on a facet plane).
* Any convex pair: signed distance = -min over unit u of h_A(u) + h_B(-u) (support functions in
  closed form, written here independently of the kernels), minimised by dense sampling of the
  sphere and a Nelder-Mead polish. Separated: that is max_u of the gap along u; overlapping: the
  minimum translation distance.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.spatial import ConvexHull

import touche
from touche._kernels import kinds


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def random_poses(rng, n, spread):
    poses = np.zeros((n, 4, 4))
    for i in range(n):
        poses[i, :3, :3] = random_rotation(rng)
    poses[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    poses[:, 3, 3] = 1.0
    return poses


def world_vertices(shape, pose):
    """Vertices (polytopes) or core points (point/segment cores) in the world."""
    kind, params, points = shape.kind, shape.params, shape.points
    if kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        local = points[: int(params[0])]
    else:
        local = points[:1] if kind <= kinds.SPHERE else points[:2]
    return local @ pose[:3, :3].T + pose[:3, 3]


# ----------------------------------------------------------------------------------------------
# polytope pairs through the Minkowski-difference hull
def _origin_triangle_distance(a, b, c):
    """Distance from the origin to many triangles (m, 3) each: min of the in-face projection
    (when inside) and the three edge distances."""
    def segment(p, q):
        d = q - p
        dd = np.einsum("ij,ij->i", d, d)
        t = np.where(dd > 0, -np.einsum("ij,ij->i", p, d) / np.where(dd > 0, dd, 1.0), 0.0)
        t = np.clip(t, 0.0, 1.0)
        return np.linalg.norm(p + t[:, None] * d, axis=1)

    best = np.minimum(np.minimum(segment(a, b), segment(b, c)), segment(c, a))
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    ok = nn > 0
    f = np.where(ok, np.einsum("ij,ij->i", a, n) / np.where(ok, nn, 1.0), 0.0)
    p = f[:, None] * n  # origin projected on the plane
    inside = ok.copy()
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(v - u, p - u), n) >= 0
    plane = np.abs(f) * np.sqrt(nn)
    return np.where(inside, np.minimum(best, plane), best)


def minkowski_signed(va, vb):
    """(signed distance, normal A->B) of hull(va) vs hull(vb); raises on a flat difference."""
    diff = (va[:, None, :] - vb[None, :, :]).reshape(-1, 3)
    hull = ConvexHull(diff)
    offsets = hull.equations[:, 3]  # n.x + offset <= 0 inside
    if (offsets <= 0).all():
        k = int(np.argmin(-offsets))
        return offsets[k], hull.equations[k, :3]
    tri = diff[hull.simplices]
    d = _origin_triangle_distance(tri[:, 0], tri[:, 1], tri[:, 2])
    return float(d.min()), None


# ----------------------------------------------------------------------------------------------
# any convex pair through support functions
def support_function(shape, pose, u):
    """h(u) = max over the shape of u . x, for unit directions u (m, 3), world frame."""
    R, t = pose[:3, :3], pose[:3, 3]
    ul = u @ R  # directions in the local frame (R^T u, row-wise)
    base = u @ t
    kind, params, points = shape.kind, shape.params, shape.points
    if kind in (kinds.POINT, kinds.SPHERE):
        h = ul @ points[0]
    elif kind in (kinds.SEGMENT, kinds.CAPSULE):
        h = np.maximum(ul @ points[0], ul @ points[1])
    elif kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        h = (ul @ points[: int(params[0])].T).max(axis=1)
    elif kind == kinds.CYLINDER:
        p0, p1, r = points[0], points[1], params[0]
        axis = (p1 - p0) / np.linalg.norm(p1 - p0)
        # the radial part as the norm of the perpendicular component: sqrt(1 - along^2) loses
        # half the digits near the axis (a cap contact: radial ~ sqrt(eps) instead of ~0)
        radial = np.linalg.norm(ul - np.outer(ul @ axis, axis), axis=1)
        h = np.maximum(ul @ p0, ul @ p1) + r * radial
    elif kind == kinds.CONE:
        apex, basec, r = points[0], points[1], params[0]
        axis = (apex - basec) / np.linalg.norm(apex - basec)
        radial = np.linalg.norm(ul - np.outer(ul @ axis, axis), axis=1)  # (see the cylinder)
        h = np.maximum(ul @ apex, ul @ basec + r * radial)
    elif kind == kinds.ELLIPSOID:
        c, axes = points[0], points[1:4]
        h = ul @ c + np.linalg.norm(ul @ axes.T, axis=1)
    else:
        raise ValueError(kind)
    if kind in (kinds.SPHERE, kinds.CAPSULE):
        h = h + params[0]
    return h + base


def _fibonacci(n):
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    r = np.sqrt(1 - z * z)
    phi = np.pi * (1 + 5**0.5) * i
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


_DIRECTIONS = _fibonacci(20000)


def support_signed(a, pose_a, b, pose_b):
    """(signed distance, normal A->B) = (-min_u h_A(u) + h_B(-u), the minimising u)."""
    def g(u):
        u = np.atleast_2d(u)
        u = u / np.linalg.norm(u, axis=1)[:, None]
        return support_function(a, pose_a, u) + support_function(b, pose_b, -u)

    values = g(_DIRECTIONS)
    best_value = np.inf
    best_u = None
    for k in np.argsort(values)[:2]:
        x = _DIRECTIONS[k]
        value = values[k]
        # Nelder-Mead stalls on the ridges of a nonsmooth h (a cylinder's two caps, polytope
        # vertices): restart it from its own result with a fresh simplex (seen: 1e-4 too deep
        # on a cylinder-ellipsoid pair with a single run)
        step = 1e-2
        for _ in range(12):
            simplex = x + step * np.vstack([np.zeros(3), np.eye(3)])
            res = minimize(lambda y: g(y)[0], x, method="Nelder-Mead",
                           options={"xatol": 1e-13, "fatol": 1e-15, "maxiter": 4000, "initial_simplex": simplex})
            x = res.x / np.linalg.norm(res.x)
            if res.fun >= value - 1e-15 and step < 1e-6:
                break
            value = min(value, res.fun)
            step *= 0.1
        if value < best_value:
            best_value = value
            best_u = x
    return -best_value, -best_u


def fine_hull(shape, segments=256, rings=128):
    """A ConvexPolyhedron inscribed in a cylinder / cone / ellipsoid, and the largest distance
    from the true surface to it (the tessellation error bound)."""
    kind, params, points = shape.kind, shape.params, shape.points
    angle = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    circle = np.column_stack([np.cos(angle), np.sin(angle), np.zeros(segments)])
    chord = 1.0 - np.cos(np.pi / segments)  # sagitta of a unit circle per segment
    if kind == kinds.CYLINDER:
        r = params[0]
        verts = np.concatenate([circle * r + points[0], circle * r + points[1]])
        return touche.ConvexPolyhedron(verts), r * chord
    if kind == kinds.CONE:
        r = params[0]
        verts = np.concatenate([circle * r + points[1], points[0][None]])
        return touche.ConvexPolyhedron(verts), r * chord
    if kind == kinds.ELLIPSOID:
        # coarser: ConvexPolyhedron's facet merging is quadratic in Python
        segments, rings = 48, 24
        angle = np.linspace(0, 2 * np.pi, segments, endpoint=False)
        radii = params[:3]
        theta = np.linspace(0, np.pi, rings + 1)
        unit = []
        for th in theta:
            for ph in angle:
                unit.append([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)])
        unit = np.unique(np.round(np.array(unit), 15), axis=0)
        verts = unit * radii + points[0]
        step = max(np.pi / rings, 2 * np.pi / segments)
        return touche.ConvexPolyhedron(verts), float(radii.max()) * (1 - np.cos(step))
    raise ValueError(kind)
