"""Slow references for contact manifolds (tests/test_contacts.py).

- ``surface_gap(shape, pose, x)``: how far a world point is from the shape's boundary (0 on it),
  by brute force per shape kind (plane maxima for solids, in-polygon + edge distances for flat
  shapes, point-segment for capsules).
- ``contact_region(...)``: the full (unreduced) manifold by a construction that does not use
  Sutherland-Hodgman: the vertices of (incident polygon) cut by (reference prism) are the
  incident vertices inside the prism, the crossings of incident edges with the prism's side
  planes that lie in the prism, and the prism's edges (reference vertices + t * n) piercing the
  incident polygon; then the points within ``margin`` of the reference plane.
- ``features(...)``: the feature rules of manifold.py written with numpy arrays and scipy's
  2-D ConvexHull (for the face ordering) instead of the kernel's loops.
"""
from __future__ import annotations

import itertools

import numpy as np
from scipy.spatial import ConvexHull

from touche._kernels import kinds

FACE_COS = np.cos(np.pi / 180.0)
EDGE_SIN = np.sin(np.pi / 180.0)
BIAS = 0.98
TIE = 1e-5


def _world(pose, local):
    if pose is None:
        return local.copy()
    return local @ pose[:3, :3].T + pose[:3, 3]


def _polytope(shape, pose):
    params, points = shape.params, shape.points
    nv, n_planes = int(params[0]), int(params[1])
    verts = _world(pose, points[:nv])
    normals = points[nv : nv + n_planes] @ pose[:3, :3].T
    offsets = params[4 : 4 + n_planes] + normals @ pose[:3, 3]
    return verts, normals, offsets


def _point_segment(x, a, b):
    d = b - a
    dd = d @ d
    t = 0.0 if dd == 0 else np.clip((x - a) @ d / dd, 0.0, 1.0)
    return np.linalg.norm(x - (a + t * d))


def _point_polygon(x, verts, normal):
    """Distance from x to a flat convex polygon (solid, zero thickness)."""
    height = (x - verts[0]) @ normal
    foot = x - height * normal
    inside = all(
        np.cross(verts[(i + 1) % len(verts)] - verts[i], foot - verts[i]) @ normal >= -1e-12
        for i in range(len(verts))
    )
    if inside:
        return abs(height)
    return min(_point_segment(x, verts[i], verts[(i + 1) % len(verts)]) for i in range(len(verts)))


def surface_gap(shape, pose, x):
    """|distance| from world point x to the boundary of the posed shape (approximate outside a
    solid polytope: the largest plane excess, which is 0 exactly on the boundary)."""
    pose = np.eye(4) if pose is None else pose
    kind = shape.kind
    if kind == kinds.SPHERE:
        return abs(np.linalg.norm(x - _world(pose, shape.points[:1])[0]) - shape.params[0])
    if kind == kinds.CAPSULE:
        a, b = _world(pose, shape.points[:2])
        return abs(_point_segment(x, a, b) - shape.params[0])
    if kind in (kinds.TRIANGLE, kinds.POLYGON):
        verts, normals, _ = _polytope(shape, pose)
        return _point_polygon(x, verts, normals[0])
    if kind == kinds.HALFSPACE:
        n = pose[:3, :3] @ shape.points[1]
        return abs(n @ x - n @ _world(pose, shape.points[:1])[0])
    verts, normals, offsets = _polytope(shape, pose)
    return abs(np.max(normals @ x - offsets))


# ----------------------------------------------------------------------------------------------
def _order_face(verts, normal):
    """Counter-clockwise order about ``normal`` via scipy's 2-D hull."""
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.6 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)
    flat = np.column_stack([(verts - verts.mean(0)) @ u, (verts - verts.mean(0)) @ w])
    hull = ConvexHull(flat)
    ordered = verts[hull.vertices]  # counter-clockwise in (u, w), and u x w = normal
    return ordered


def features(shape, pose, direction):
    """(type, points, face normal, radius): type 'point', 'edge', 'face' or 'plane'."""
    pose = np.eye(4) if pose is None else pose
    kind = shape.kind
    if kind in (kinds.POINT, kinds.SPHERE):
        return "point", _world(pose, shape.points[:1]), None, (shape.params[0] if kind == kinds.SPHERE else 0.0)
    if kind in (kinds.SEGMENT, kinds.CAPSULE):
        ends = _world(pose, shape.points[:2])
        radius = shape.params[0] if kind == kinds.CAPSULE else 0.0
        e = ends[1] - ends[0]
        if np.linalg.norm(e) > 0 and abs(e @ direction) <= EDGE_SIN * np.linalg.norm(e):
            return "edge", ends, None, radius
        return "point", ends[[1 if e @ direction > 0 else 0]], None, radius
    if kind == kinds.HALFSPACE:
        n = pose[:3, :3] @ shape.points[1]
        return "plane", _world(pose, shape.points[:1]), n, 0.0
    verts, normals, offsets = _polytope(shape, pose)
    if len(normals):
        k = int(np.argmax(normals @ direction))
        if normals[k] @ direction >= FACE_COS:
            size = np.abs(shape.points[: len(verts)]).max()
            on = verts[normals[k] @ verts.T >= offsets[k] - 1e-9 * size]
            if len(on) >= 3:
                return "face", _order_face(on, normals[k]), normals[k], 0.0
            if len(on) == 2:
                return "edge", on, None, 0.0
    top = int(np.argmax(verts @ direction))
    best = None
    for i, j in shape.edges:
        if top not in (i, j):
            continue
        other = j if i == top else i
        e = verts[other] - verts[top]
        length = np.linalg.norm(e)
        if length == 0:
            continue
        sine = abs(e @ direction) / length
        if best is None or sine < best[0] or (sine == best[0] and length > best[2]):
            best = (sine, other, length)
    if best is not None and best[0] <= EDGE_SIN:
        return "edge", verts[[top, best[1]]], None, 0.0
    return "point", verts[[top]], None, 0.0


def _inside_prism(x, ref, normal, slack):
    for i in range(len(ref)):
        side = np.cross(ref[(i + 1) % len(ref)] - ref[i], normal)
        length = np.linalg.norm(side)
        if length == 0:
            continue
        if (x - ref[i]) @ (side / length) > slack:
            return False
    return True


def contact_region(ref, ref_normal, ref_offset, incident, slack):
    """Points of the incident polygon / segment inside the reference face's prism (no
    separation filter): a list of (3,) points on the incident core."""
    out = []
    for x in incident:
        if _inside_prism(x, ref, ref_normal, slack):
            out.append(x)
    m = len(incident)
    edge_pairs = [(0, 1)] if m == 2 else [(i, (i + 1) % m) for i in range(m)] if m > 2 else []
    for i in range(len(ref)):
        side = np.cross(ref[(i + 1) % len(ref)] - ref[i], ref_normal)
        length = np.linalg.norm(side)
        if length == 0:
            continue
        side /= length
        for p, q in edge_pairs:
            dp = (incident[p] - ref[i]) @ side
            dq = (incident[q] - ref[i]) @ side
            if (dp > 0) != (dq > 0):
                x = incident[p] + dp / (dp - dq) * (incident[q] - incident[p])
                if _inside_prism(x, ref, ref_normal, slack):
                    out.append(x)
    if m >= 3:
        # prism edges (through the reference vertices, along the normal) piercing the polygon
        inc_normal = np.cross(incident[1] - incident[0], incident[2] - incident[0])
        for k in range(2, m):  # Newell-free: the largest fan triangle normal
            cand = np.cross(incident[k - 1] - incident[0], incident[k] - incident[0])
            if np.linalg.norm(cand) > np.linalg.norm(inc_normal):
                inc_normal = cand
        inc_normal /= np.linalg.norm(inc_normal)
        denom = ref_normal @ inc_normal
        if abs(denom) > 1e-12:
            for r in ref:
                t = (incident[0] - r) @ inc_normal / denom
                x = r + t * ref_normal
                # inside the incident polygon?
                ok = True
                for i in range(m):
                    e = incident[(i + 1) % m] - incident[i]
                    if np.cross(e, x - incident[i]) @ inc_normal < -slack * np.linalg.norm(e):
                        ok = False
                        break
                if ok:
                    out.append(x)
    return out


def naive_manifold(a, pose_a, b, pose_b, normal, signed, margin, size):
    """The unreduced manifold: ('single', None) when the kernel's rule gives one engine point,
    else ('clip', points (k, 3) midway, depths (k,), manifold normal)."""
    fa = features(a, pose_a, normal)
    fb = features(b, pose_b, -normal)
    if fa[0] == "point" or fb[0] == "point":
        return "single", None, None, normal
    if fa[0] == "edge" and fb[0] == "edge":
        ea = fa[1][1] - fa[1][0]
        eb = fb[1][1] - fb[1][0]
        if np.linalg.norm(np.cross(ea, eb)) > EDGE_SIN * np.linalg.norm(ea) * np.linalg.norm(eb):
            return "single", None, None, normal
    if fb[0] == "plane":
        ref_is_a = False
    elif fa[0] == "plane":
        ref_is_a = True
    elif fa[0] == "face" and fb[0] == "face":
        sa = np.linalg.norm(np.cross(fa[2], normal))
        sb = np.linalg.norm(np.cross(fb[2], normal))
        ref_is_a = not (sb < BIAS * sa - TIE)
    else:
        ref_is_a = fb[0] != "face"
    ref, inc = (fa, fb) if ref_is_a else (fb, fa)
    if ref[0] == "edge":
        e = ref[1][1] - ref[1][0]
        e /= np.linalg.norm(e)
        outward = normal if ref_is_a else -normal
        plane_normal = outward - (outward @ e) * e
        plane_normal /= np.linalg.norm(plane_normal)
        lo, hi = ref[1][0] @ e, ref[1][1] @ e
        p, q = inc[1]
        pts = []
        for x in (p, q):
            if lo <= x @ e <= hi:
                pts.append(x)
        for bound in (lo, hi):
            dp, dq = p @ e - bound, q @ e - bound
            if (dp > 0) != (dq > 0):
                pts.append(p + dp / (dp - dq) * (q - p))
        region = pts
    elif ref[0] == "plane":
        plane_normal = ref[2]
        region = list(inc[1])
    else:
        plane_normal = ref[2]
        region = contact_region(ref[1], plane_normal, None, inc[1], 1e-12 * size)
    offset = plane_normal @ ref[1][0] + ref[3]
    points, depths = [], []
    for x in region:
        reach = exit_distance(x, inc[1], inc[3], -plane_normal) if inc[0] == "edge" else inc[3]
        separation = plane_normal @ x - offset - reach
        if separation <= margin + 1e-12 * (1 + size):
            surface = x - reach * plane_normal
            points.append(surface - 0.5 * separation * plane_normal)
            depths.append(-separation)
    manifold_normal = plane_normal if ref_is_a else -plane_normal
    if not points:
        return "single", None, None, normal
    if ref[0] == "edge":
        # nearly parallel edges: the reference-side points lie on the plane through the
        # reference edge, off the edge by at most the skew (length * sine of the angle)
        e_inc = inc[1][1] - inc[1][0]
        skew = np.linalg.norm(ref[1][1] - ref[1][0]) * np.linalg.norm(np.cross(e, e_inc)) / np.linalg.norm(e_inc)
        return ("edge-a" if ref_is_a else "edge-b", skew), np.array(points), np.array(depths), manifold_normal
    return "clip", np.array(points), np.array(depths), manifold_normal


def exit_distance(q, ends, radius, u):
    """Bisection: how far q + t u runs inside the capsule (core segment ``ends``) from q on it."""
    if radius == 0:
        return 0.0
    lo, hi = 0.0, 2.0 * radius
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _point_segment(q + mid * u, ends[0], ends[1]) <= radius:
            lo = mid
        else:
            hi = mid
    return lo


def dedupe(points, depths, tol):
    keep_p, keep_d = [], []
    for p, d in zip(points, depths):
        for i, q in enumerate(keep_p):
            if np.abs(p - q).max() <= tol:
                keep_d[i] = max(keep_d[i], d)
                break
        else:
            keep_p.append(p)
            keep_d.append(d)
    return np.array(keep_p).reshape(-1, 3), np.array(keep_d)


def hull_area(points, normal):
    """Area of the convex hull of points projected on the plane normal to ``normal``."""
    if len(points) < 3:
        return 0.0
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.6 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)
    flat = np.column_stack([points @ u, points @ w])
    try:
        return float(ConvexHull(flat).volume)
    except Exception:  # collinear
        return 0.0


def best_area_with_deepest(points, depths, normal, k):
    """Largest hull area of k points that include the deepest one (exhaustive)."""
    first = int(np.argmax(depths))
    rest = [i for i in range(len(points)) if i != first]
    best = 0.0
    for combo in itertools.combinations(rest, min(k - 1, len(rest))):
        best = max(best, hull_area(points[[first, *combo]], normal))
    return best
