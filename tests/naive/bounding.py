"""Slow, obviously-correct references for touche.bounding (plain numpy, no numba)."""
import itertools

import numpy as np


def ball_through(support):
    """Smallest ball with every support point on its boundary (1-4 points), or None when the
    points admit no such ball (collinear triple, coplanar quadruple off a circle...)."""
    s = np.asarray(support, dtype=float)
    a = s[0]
    if len(s) == 1:
        return a.copy(), 0.0
    # centre = a + sum_k lambda_k (s_k - a), with 2 (s_j - a).(c - a) = |s_j - a|^2
    d = s[1:] - a
    gram = 2.0 * d @ d.T
    rhs = (d * d).sum(axis=1)
    if not abs(np.linalg.det(gram)) > 1e-10 * np.prod(np.diag(gram)):  # (near-)dependent: no ball
        return None
    lam = np.linalg.solve(gram, rhs)
    center = a + lam @ d
    return center, float(np.linalg.norm(center - a))


def min_sphere(points):
    """Exact minimum enclosing sphere by brute force over every 1-4 point support set:
    O(n^5); use n <= 12. Returns (center, radius)."""
    pts = np.asarray(points, dtype=float)
    best = None
    for size in range(1, 5):
        for combo in itertools.combinations(range(len(pts)), size):
            ball = ball_through(pts[list(combo)])
            if ball is None:
                continue
            center, radius = ball
            if best is not None and radius >= best[1]:
                continue
            if (np.linalg.norm(pts - center, axis=1) <= radius * (1 + 1e-9) + 1e-12).all():
                best = (center, radius)
    return best


def kdop_extents(points, directions):
    """Min / max of the projections onto each direction, one dot product at a time."""
    lo, hi = [], []
    for d in directions:
        proj = [float(np.dot(p, d)) for p in points]
        lo.append(min(proj))
        hi.append(max(proj))
    return np.array(lo), np.array(hi)


def segment_distance(points, p0, p1):
    """Distance of each point to the segment p0-p1 (dense sampling refined by the exact
    clamp; written independently of the library's helper)."""
    out = []
    d = np.asarray(p1, float) - np.asarray(p0, float)
    for p in points:
        if d @ d == 0:
            out.append(np.linalg.norm(p - p0))
            continue
        t = min(max((p - p0) @ d / (d @ d), 0.0), 1.0)
        out.append(np.linalg.norm(p - (p0 + t * d)))
    return np.array(out)


def rectangle_distance(points, origin, axes, lengths):
    """Distance of each point to the rectangle origin + s L0 a0 + t L1 a1, s, t in [0, 1]."""
    out = []
    for p in points:
        rel = p - origin
        s = min(max(rel @ axes[0], 0.0), lengths[0])
        t = min(max(rel @ axes[1], 0.0), lengths[1])
        out.append(np.linalg.norm(rel - s * axes[0] - t * axes[1]))
    return np.array(out)


def surface_covariance_by_quadrature(vertices, triangles, subdivisions=24):
    """Covariance of the uniform distribution on the triangles' surface, by splitting each
    triangle into subdivisions^2 congruent pieces and weighting their centroids by area (second
    moments converge as 1/subdivisions^2). Independent of Gottschalk's closed form."""
    samples, weights = [], []
    n = subdivisions
    for tri in triangles:
        p, q, r = (vertices[i] for i in tri)
        area = 0.5 * np.linalg.norm(np.cross(q - p, r - p))
        for i in range(n):
            for j in range(n - i):
                # upward piece
                a = p + (q - p) * i / n + (r - p) * j / n
                b = p + (q - p) * (i + 1) / n + (r - p) * j / n
                c = p + (q - p) * i / n + (r - p) * (j + 1) / n
                samples.append((a + b + c) / 3)
                weights.append(area / n**2)
                if i + j < n - 1:  # downward piece
                    d = p + (q - p) * (i + 1) / n + (r - p) * (j + 1) / n
                    samples.append((b + c + d) / 3)
                    weights.append(area / n**2)
    x = np.array(samples)
    w = np.array(weights) / np.sum(weights)
    mean = w @ x
    centered = x - mean
    # a small piece's own spread adds a term that vanishes with its size^2; the eigenvectors
    # are compared with a tolerance well above it.
    return (centered * w[:, None]).T @ centered


def box_volume_in_frame(points, axes):
    proj = np.asarray(points) @ np.asarray(axes).T
    return float(np.prod(proj.max(axis=0) - proj.min(axis=0)))


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def min_box_by_random_search(points, rng, samples=20000):
    """Upper bound on the minimum OBB volume: the best of many uniformly random orientations."""
    best = np.inf
    for _ in range(samples):
        best = min(best, box_volume_in_frame(points, random_rotation(rng)))
    return best


def min_area_rectangle(xy):
    """Minimum bounding-rectangle area of 2D points: try the direction of every pair of points
    (the optimum has a side through two hull vertices). O(n^3)."""
    xy = np.asarray(xy, dtype=float)
    best = np.inf
    for i in range(len(xy)):
        for j in range(i + 1, len(xy)):
            d = xy[j] - xy[i]
            n = np.linalg.norm(d)
            if n == 0:
                continue
            u = d / n
            s = xy @ u
            t = xy @ np.array([-u[1], u[0]])
            best = min(best, np.ptp(s) * np.ptp(t))
    return best
