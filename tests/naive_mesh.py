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
