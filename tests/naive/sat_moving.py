"""Slow, obviously correct references for touche/_kernels/motion/sat_moving.py.

- ``minkowski_toi``: translating convex sets A + t v_a and B + t v_b meet iff t (v_a - v_b) lies
  in the Minkowski difference M = conv{b_j - a_i}. Qhull (scipy) builds M's facets; the first
  contact is where the ray t (v_a - v_b), t >= 0, enters M (clip against every facet half-space).
  Flat M (coplanar flat shapes) is handled in its plane with a 2D hull. Independent of the
  kernel's axis enumeration: Qhull finds the facets.
- ``hull_distance_lp``: L-infinity distance between two vertex hulls by linear programming
  (scipy linprog); a static overlap test for tests/naive_toi.first_contact_by_sampling.
- ``intersection_volume``: volume (or area) of A n B by scipy HalfspaceIntersection / ConvexHull.
"""
import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError


def world_vertices(shape, pose):
    vertices = np.asarray(shape.points[: int(shape.params[0])])
    pose = np.asarray(pose, dtype=float)
    return vertices @ pose[:3, :3].T + pose[:3, 3]


def _ray_clip(normals, offsets, d, t_max):
    """(first t in [0, t_max] with normals @ (t d) + offsets <= 0 (inside) or None, the length
    of the whole contact interval t_hi - t_lo: ~0 for a graze, negative for a clear miss)."""
    speed = normals @ d
    t_lo, t_hi = 0.0, np.inf
    for s, c in zip(speed, offsets):
        # s t + c <= 0
        if s > 0:
            t_hi = min(t_hi, -c / s)
        elif s < 0:
            t_lo = max(t_lo, -c / s)
        elif c > 0:
            return None, -np.inf
    if t_lo <= t_hi and t_lo <= t_max:
        return t_lo, t_hi - t_lo
    return None, t_hi - t_lo


def minkowski_toi(va, vb, vel_a, vel_b, t_max, flat_tol=1e-9):
    """First contact time of conv(va) + t vel_a and conv(vb) + t vel_b in [0, t_max], or None.

    Returns (time or None, interval length (see _ray_clip; 0 for the single crossing of a flat
    M), flat) where flat says M was flat (2D reference used). M of dimension < 2 is not handled
    (raises ValueError)."""
    va = np.asarray(va, float)
    vb = np.asarray(vb, float)
    diff = (vb[None, :, :] - va[:, None, :]).reshape(-1, 3)
    d = np.asarray(vel_a, float) - np.asarray(vel_b, float)
    scale = max(1.0, np.abs(diff).max())
    center = diff.mean(0)
    _, sing, vt = np.linalg.svd(diff - center)
    if sing[2] > flat_tol * scale * np.sqrt(len(diff)):
        hull = ConvexHull(diff)
        return (*_ray_clip(hull.equations[:, :3], hull.equations[:, 3], d, t_max), False)
    if sing[1] <= flat_tol * scale * np.sqrt(len(diff)):
        raise ValueError("Minkowski difference of dimension < 2")
    n = vt[2]
    u, w = vt[0], vt[1]
    level = center @ n
    speed = d @ n
    # ray point t d must lie on the plane n.x = level (within round-off)
    if abs(speed) > 1e-14 * max(1.0, np.linalg.norm(d)):
        t = level / speed
        candidates = [t] if 0.0 <= t <= t_max else []
    else:
        if abs(level) > flat_tol * scale:
            return None, -np.inf, True
        candidates = None
    pts2 = np.column_stack([(diff - center) @ u, (diff - center) @ w])
    hull = ConvexHull(pts2)
    normals = hull.equations[:, :2]
    offsets = hull.equations[:, 2]
    o2 = np.array([-center @ u, -center @ w])  # the origin in the 2D frame
    d2 = np.array([d @ u, d @ w])
    if candidates is None:
        # ray o2 + t d2 in the plane
        return (*_ray_clip(normals, offsets + normals @ o2, d2, t_max), True)
    for t in candidates:
        p = o2 + t * d2
        if (normals @ p + offsets <= 1e-9 * scale).all():
            return t, 0.0, True
    return None, -np.inf, True


def hull_distance_lp(va, vb):
    """L-infinity distance between conv(va) and conv(vb) (0 when they overlap), by LP."""
    na, nb = len(va), len(vb)
    # variables: lambda (na), mu (nb), s
    c = np.zeros(na + nb + 1)
    c[-1] = 1.0
    rows = []
    rhs = []
    for k in range(3):
        row = np.concatenate([va[:, k], -vb[:, k], [-1.0]])
        rows.append(row)
        rhs.append(0.0)
        row = np.concatenate([-va[:, k], vb[:, k], [-1.0]])
        rows.append(row)
        rhs.append(0.0)
    a_eq = np.zeros((2, na + nb + 1))
    a_eq[0, :na] = 1.0
    a_eq[1, na : na + nb] = 1.0
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=a_eq, b_eq=[1.0, 1.0],
                  bounds=[(0, None)] * (na + nb + 1), method="highs")
    return res.fun


def planes_of(shape, pose):
    """World half-spaces (n, d) of a polytope with planes: rows n.x <= d."""
    nv, n_planes = int(shape.params[0]), int(shape.params[1])
    normals = np.asarray(shape.points[nv : nv + n_planes]) @ np.asarray(pose)[:3, :3].T
    offsets = np.asarray(shape.params[4 : 4 + n_planes]) + normals @ np.asarray(pose)[:3, 3]
    return normals, offsets


def intersection_measure(shape_a, pose_a, shape_b, pose_b):
    """Volume of A n B for two solids (HalfspaceIntersection), 0 when empty; None if degenerate."""
    na, da = planes_of(shape_a, pose_a)
    nb, db = planes_of(shape_b, pose_b)
    normals = np.vstack([na, nb])
    offsets = np.concatenate([da, db])
    # an interior point: Chebyshev centre by LP
    norms = np.linalg.norm(normals, axis=1)
    res = linprog([0, 0, 0, -1], A_ub=np.column_stack([normals, norms]), b_ub=offsets,
                  bounds=[(None, None)] * 3 + [(0, None)], method="highs")
    if res.status != 0 or res.x[3] <= 1e-9:
        return 0.0
    halfspaces = np.column_stack([normals, -offsets])
    try:
        hs = HalfspaceIntersection(halfspaces, res.x[:3])
        return ConvexHull(hs.intersections).volume
    except QhullError:
        return None


def polygon_area(points):
    """Area of a planar polygon with ordered vertices (k, 3)."""
    p = np.asarray(points)
    total = np.zeros(3)
    for i in range(len(p)):
        total += np.cross(p[i], p[(i + 1) % len(p)])
    return 0.5 * np.linalg.norm(total)
