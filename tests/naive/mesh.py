"""Slow, obviously-correct references for touche.mesh (pure Python loops, O(n^2))."""
import numpy as np


def weld_sequential(points, tolerance):
    """Ericson 12.1 'weld to a previous vertex', O(n^2): vertex i joins the earliest kept vertex
    within tolerance. Returns (remap (n,), kept (k,)) like the kernel."""
    kept, remap = [], []
    for i, p in enumerate(points):
        target = -1
        for position, j in enumerate(kept):
            if np.sum((points[j] - p) ** 2) <= tolerance * tolerance:
                target = position
                break
        if target < 0:
            kept.append(i)
            target = len(kept) - 1
        remap.append(target)
    return np.array(remap), np.array(kept)


def weld_exact(points):
    seen, kept, remap = {}, [], []
    for i, p in enumerate(points):
        key = tuple(float(x) + 0.0 for x in p)
        if key not in seen:
            seen[key] = len(kept)
            kept.append(i)
        remap.append(seen[key])
    return np.array(remap), np.array(kept)


def edge_faces(faces):
    """{(lo, hi): sorted list of faces}"""
    table = {}
    for index, face in enumerate(faces):
        for k in range(3):
            a, b = int(face[k]), int(face[(k + 1) % 3])
            table.setdefault((min(a, b), max(a, b)), []).append(index)
    return table


def vertex_faces(faces, n):
    table = [[] for _ in range(n)]
    for index, face in enumerate(faces):
        for vertex in face:
            table[int(vertex)].append(index)
    return table


def components(faces):
    """Face components through shared edges, by repeated flood fill; labels by first face."""
    table = edge_faces(faces)
    neighbours = [set() for _ in faces]
    for members in table.values():
        for a in members:
            neighbours[a].update(members)
    labels = [-1] * len(faces)
    count = 0
    for seed in range(len(faces)):
        if labels[seed] >= 0:
            continue
        stack = [seed]
        labels[seed] = count
        while stack:
            face = stack.pop()
            for other in neighbours[face]:
                if labels[other] < 0:
                    labels[other] = count
                    stack.append(other)
        count += 1
    return np.array(labels)


def components_by_vertex(faces):
    """Face components through shared vertices (flood fill); labels by first face."""
    users = {}
    for index, face in enumerate(faces):
        for vertex in face:
            users.setdefault(int(vertex), []).append(index)
    labels = [-1] * len(faces)
    count = 0
    for seed in range(len(faces)):
        if labels[seed] >= 0:
            continue
        stack = [seed]
        labels[seed] = count
        while stack:
            face = stack.pop()
            for vertex in faces[face]:
                for other in users[int(vertex)]:
                    if labels[other] < 0:
                        labels[other] = count
                        stack.append(other)
        count += 1
    return np.array(labels)


def euler_counts(faces):
    vertices = {int(x) for face in faces for x in face}
    edges = edge_faces(faces)
    boundary = sum(1 for members in edges.values() if len(members) == 1)
    return len(vertices), len(edges), len(faces), boundary


def polygon_area(points2d):
    total = 0.0
    for i in range(len(points2d)):
        x0, y0 = points2d[i]
        x1, y1 = points2d[(i + 1) % len(points2d)]
        total += x0 * y1 - x1 * y0
    return total / 2.0


def point_in_polygon(point, ring):
    """Crossing test (Ericson 5.4.1)."""
    x, y = point
    inside = False
    for i in range(len(ring)):
        x0, y0 = ring[i]
        x1, y1 = ring[(i + 1) % len(ring)]
        if (y0 > y) != (y1 > y):
            if x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
                inside = not inside
    return inside


def star_polygon(rng, count, inner=0.3, outer=1.0, center=(0.0, 0.0)):
    """A random simple (star-shaped) polygon, counter-clockwise."""
    angles = np.sort(rng.uniform(0, 2 * np.pi, count))
    # distinct angles keep it simple
    angles = angles[np.concatenate([[True], np.diff(angles) > 1e-3])]
    radii = rng.uniform(inner, outer, len(angles))
    return np.stack([center[0] + radii * np.cos(angles), center[1] + radii * np.sin(angles)], axis=1)


def cube(size=1.0):
    v = np.array([[x, y, z] for x in (0, size) for y in (0, size) for z in (0, size)], dtype=float)
    # outward counter-clockwise triangles
    f = np.array([
        [0, 1, 3], [0, 3, 2],  # x = 0
        [4, 6, 7], [4, 7, 5],  # x = 1
        [0, 4, 5], [0, 5, 1],  # y = 0
        [2, 3, 7], [2, 7, 6],  # y = 1
        [0, 2, 6], [0, 6, 4],  # z = 0
        [1, 5, 7], [1, 7, 3],  # z = 1
    ])
    return v, f


def t_junctions(vertices, faces, tolerance):
    """Boundary vertices within tolerance of the open interior of a boundary edge (not within
    tolerance of its endpoints), O(V E): sorted list of (vertex, lo, hi)."""
    table = edge_faces(faces)
    boundary = [edge for edge, members in table.items() if len(members) == 1]
    on_boundary = sorted({x for edge in boundary for x in edge})
    found = []
    for a, b in boundary:
        pa, pb = vertices[a], vertices[b]
        d = pb - pa
        length2 = float(d @ d)
        if length2 <= tolerance * tolerance:
            continue
        for p in on_boundary:
            if p in (a, b):
                continue
            t = float((vertices[p] - pa) @ d) / length2
            if not 0.0 < t < 1.0:
                continue
            if np.linalg.norm(pa + t * d - vertices[p]) > tolerance:
                continue
            if t * np.sqrt(length2) <= tolerance or (1 - t) * np.sqrt(length2) <= tolerance:
                continue
            found.append((p, a, b))
    return sorted(found)


def grid(nx, ny, x0=0.0, x1=1.0, y0=0.0, y1=1.0):
    """A flat (z = 0) grid patch of 2 nx ny counter-clockwise triangles (normal +z)."""
    xs, ys = np.linspace(x0, x1, nx + 1), np.linspace(y0, y1, ny + 1)
    v = np.array([[x, y, 0.0] for y in ys for x in xs])
    f = []
    for j in range(ny):
        for i in range(nx):
            a = j * (nx + 1) + i
            b, c, d = a + 1, a + nx + 2, a + nx + 1
            f += [[a, b, c], [a, c, d]]
    return v, np.array(f)


# ------------------------------------------------------------------------------------------
# clearance references (numpy, vectorised over rows; no shortcuts shared with the kernel)
def _dot(x, y):
    return np.einsum("...i,...i->...", x, y)


def point_segment_distance(p, a, b):
    """|p - closest point of segment ab| by projection and clamping (one variable: obvious)."""
    d = b - a
    length2 = _dot(d, d)
    t = np.where(length2 > 0, _dot(p - a, d) / np.where(length2 > 0, length2, 1.0), 0.0)
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * d), axis=-1)


def point_triangle_distance(p, a, b, c):
    """Distance from p to the closed triangle abc: the plane distance when the projection has
    barycentric coordinates in [0, 1] (solved with the 2x2 normal equations), else the nearest
    of the three edges (which always holds the minimum then). Zero-area triangles use the edges."""
    e0, e1, w = b - a, c - a, p - a
    d00, d01, d11 = _dot(e0, e0), _dot(e0, e1), _dot(e1, e1)
    d20, d21 = _dot(w, e0), _dot(w, e1)
    den = d00 * d11 - d01 * d01
    proper = den > 1e-12 * d00 * d11
    safe = np.where(proper, den, 1.0)
    v = (d11 * d20 - d01 * d21) / safe
    u = (d00 * d21 - d01 * d20) / safe
    inside = proper & (v >= 0) & (u >= 0) & (u + v <= 1)
    projection = a + v[..., None] * e0 + u[..., None] * e1
    plane = np.linalg.norm(p - projection, axis=-1)
    edges = np.minimum(np.minimum(point_segment_distance(p, a, b), point_segment_distance(p, b, c)),
                       point_segment_distance(p, c, a))
    return np.where(inside, np.minimum(plane, edges), edges)


def segment_segment_distance(p, q, r, s):
    """Distance between segments pq and rs: the minimum of the interior stationary point (when it
    lies in [0, 1]^2) and the four endpoint-to-segment distances (the minimum of a convex
    quadratic over a square is at the stationary point or on the boundary)."""
    d1, d2, w = q - p, s - r, p - r
    a, b, e = _dot(d1, d1), _dot(d1, d2), _dot(d2, d2)
    c, f = _dot(d1, w), _dot(d2, w)
    den = a * e - b * b
    ok = den > 1e-14 * a * e
    safe = np.where(ok, den, 1.0)
    sp = (b * f - c * e) / safe
    tp = (a * f - b * c) / safe
    interior = ok & (sp >= 0) & (sp <= 1) & (tp >= 0) & (tp <= 1)
    gap = (p + sp[..., None] * d1) - (r + tp[..., None] * d2)
    stationary = np.where(interior, np.linalg.norm(gap, axis=-1), np.inf)
    ends = np.minimum(np.minimum(point_segment_distance(p, r, s), point_segment_distance(q, r, s)),
                      np.minimum(point_segment_distance(r, p, q), point_segment_distance(s, p, q)))
    return np.minimum(stationary, ends)


def segment_segment_independent_clamp(p, q, r, s):
    """S3 step 3.2 AS PRINTED (erratum S3 L174): solve the 2x2 system, clamp s1 and s2 to [0, 1]
    independently. Kept only to show that the tests can tell it from the right answer."""
    d1, d2, w = q - p, s - r, p - r
    a, b, e = _dot(d1, d1), _dot(d1, d2), _dot(d2, d2)
    c, f = _dot(d1, w), _dot(d2, w)
    den = a * e - b * b
    sp = np.clip((b * f - c * e) / den, 0, 1)
    tp = np.clip((a * f - b * c) / den, 0, 1)
    return np.linalg.norm((p + sp[..., None] * d1) - (r + tp[..., None] * d2), axis=-1)


def segment_crosses_triangle(p, q, a, b, c):
    """Segment pq meets the triangle abc at one point (not lying in its plane): solve
    p + t (q - p) = a + v (b - a) + u (c - a) (Cramer) and check t, u, v, 1 - u - v >= 0."""
    m = np.stack([p - q, b - a, c - a], axis=-1)
    det = np.linalg.det(m)
    ok = np.abs(det) > 1e-14 * np.linalg.norm(p - q, axis=-1) * np.linalg.norm(np.cross(b - a, c - a), axis=-1)
    rhs = p - a
    safe = np.where(ok, det, 1.0)
    sol = []
    for k in range(3):
        mk = m.copy()
        mk[..., :, k] = rhs
        sol.append(np.linalg.det(mk) / safe)
    t, v, u = sol
    return ok & (t >= 0) & (t <= 1) & (v >= 0) & (u >= 0) & (u + v <= 1)


def triangle_pair_distance(A, B):
    """(distance (k,), intersecting (k,)) for triangle rows A, B (k, 3, 3): intersecting when an
    edge of one crosses the other; else the minimum of the 6 vertex-triangle and 9
    segment-segment distances (complete for disjoint triangles). Generic (non-coplanar) input."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    cross = np.zeros(A.shape[:-2], dtype=bool)
    best = np.full(A.shape[:-2], np.inf)
    for X, Y in ((A, B), (B, A)):
        for i in range(3):
            p, q = X[..., i, :], X[..., (i + 1) % 3, :]
            cross |= segment_crosses_triangle(p, q, Y[..., 0, :], Y[..., 1, :], Y[..., 2, :])
            best = np.minimum(best, point_triangle_distance(p, Y[..., 0, :], Y[..., 1, :], Y[..., 2, :]))
    for i in range(3):
        for j in range(3):
            best = np.minimum(best, segment_segment_distance(A[..., i, :], A[..., (i + 1) % 3, :],
                                                             B[..., j, :], B[..., (j + 1) % 3, :]))
    return np.where(cross, 0.0, best), cross | (best == 0.0)


def mesh_clearance_brute(va, fa, vb, fb, chunk=200_000):
    """All triangle pairs of two posed meshes: (distance, intersecting, (i, j) of a minimum pair).
    Pairs are screened by an obviously safe test first: the minimum is at most U, the smallest
    vertex-vertex distance (scipy cKDTree), so only pairs whose bounding boxes come within U can
    hold it (and any intersecting pair has overlapping boxes)."""
    from scipy.spatial import cKDTree

    ta, tb = va[fa], vb[fb]
    upper = float(cKDTree(vb).query(va)[0].min())
    lo_a, hi_a = ta.min(axis=1), ta.max(axis=1)
    lo_b, hi_b = tb.min(axis=1), tb.max(axis=1)
    rows = max(1, chunk // len(fb))
    best, hit, where = np.inf, False, (-1, -1)
    for start in range(0, len(fa), rows):
        gap = np.maximum(lo_a[start:start + rows, None] - hi_b[None], lo_b[None] - hi_a[start:start + rows, None])
        i, j = np.nonzero((gap <= upper).all(axis=2))
        if len(i) == 0:
            continue
        i = i + start
        d, x = triangle_pair_distance(ta[i], tb[j])
        if x.any():
            hit = True
        k = int(np.argmin(d))
        if d[k] < best:
            best, where = float(d[k]), (int(i[k]), int(j[k]))
    return (0.0 if hit else best), hit, where


def convex_polygons_intersect_exact(P, Q):
    """Closed convex 2D polygons (vertex lists of Fractions or ints) intersect iff no edge normal
    of either strictly separates their projections (separating axis theorem, exact)."""
    for poly in (P, Q):
        for i in range(len(poly)):
            x0, y0 = poly[i]
            x1, y1 = poly[(i + 1) % len(poly)]
            nx, ny = y1 - y0, x0 - x1
            if nx == 0 and ny == 0:
                continue
            pa = [nx * x + ny * y for x, y in P]
            pb = [nx * x + ny * y for x, y in Q]
            if max(pa) < min(pb) or max(pb) < min(pa):
                return False
    return True


# ------------------------------------------------------------------------------------------
# solid-mesh references (tests/test_solid_regions.py): dense numpy over every triangle


def winding_numbers(vertices, faces, points, chunk=2000):
    """Generalized winding number of each point: the solid angles of all triangles (Van
    Oosterom-Strackee) summed over 4 pi; about +-1 inside a closed mesh, 0 outside."""
    out = np.empty(len(points))
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk, None]
        a, b, c = (vertices[faces[:, i]][None] - p for i in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        numerator = np.einsum("pfi,pfi->pf", a, np.cross(b, c))
        denominator = la * lb * lc + _dot(a, b) * lc + _dot(a, c) * lb + _dot(b, c) * la
        out[start:start + chunk] = (2.0 * np.arctan2(numerator, denominator)).sum(axis=1) / (4.0 * np.pi)
    return out


def surface_distance(vertices, faces, points, chunk=2000):
    """Distance from each point to the closest of all triangles (point_triangle_distance)."""
    out = np.empty(len(points))
    a, b, c = (vertices[faces[:, i]][None] for i in range(3))
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk, None]
        out[start:start + chunk] = point_triangle_distance(p, a, b, c).min(axis=1)
    return out


def sample_surface(vertices, faces, count, rng):
    """``count`` points spread uniformly by area over the triangles (square-root barycentric
    sampling)."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    pick = rng.choice(len(faces), size=count, p=area / area.sum())
    r1, r2 = np.sqrt(rng.random(count)), rng.random(count)
    return (1 - r1)[:, None] * a[pick] + (r1 * (1 - r2))[:, None] * b[pick] + (r1 * r2)[:, None] * c[pick]
