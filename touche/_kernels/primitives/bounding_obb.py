"""Oriented bounding boxes searched over frames (Ericson 4.4; rotating calipers, Ericson 4.4.4, for
the 2D rectangle): a box's volume and score in a frame, brute force over directions, the
face-flush candidates of a hull (minimum-area rectangle in each face's plane), and local
refinement of a frame. These back touche.bounding; bounding.py holds the frames, covariances
and the fits in a given frame.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit  # noqa: E402
from touche._kernels.base.vec import copy_into  # noqa: E402
from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402
from touche._kernels.primitives.bounding import box_in_frame, dist2, orthonormal_frame, perpendicular_from_axis
from touche._kernels.primitives.bounding import rotation_from_vector


# ---------------------------------------------------------------------------------------------
# OBBs: volume in a frame, brute force, face-flush candidates, local refinement
@njit(cache=True, nogil=True)
def box_volume_in_frame(points, axes):
    """Volume of the tightest box with rows ``axes`` around the points."""
    center, half = box_in_frame(points, axes)
    return 8.0 * half[0] * half[1] * half[2]


@njit(cache=True, nogil=True)
def box_frame_score(points, axes):
    """Ranking key of a box frame: volume, then (for flat / collinear sets whose volume is 0)
    a tiny multiple of the surface area and of the edge sum, so the search still prefers the
    tightest flat box."""
    center, half = box_in_frame(points, axes)
    a = half[0]
    b = half[1]
    c = half[2]
    return 8.0 * a * b * c + 1e-9 * (a * b + b * c + a * c) * (a + b + c) + 1e-18 * (a + b + c) ** 3


@njit(cache=True, nogil=True)
def _rotated(axes, w):
    """Rows of ``axes`` rotated by exp([w]x) (axes @ R^T)."""
    return orthonormal_frame(axes @ rotation_from_vector(w).T)


@njit(cache=True, nogil=True)
def _frame_from_direction(direction, angle):
    """A right-handed frame whose first axis is ``direction`` (unit) and second axis is the
    perpendicular reference rotated by ``angle`` about it."""
    rows = np.empty((3, 3))
    copy_into(rows[0], direction)
    u = perpendicular_from_axis(direction)
    u /= np.sqrt(_dot(u, u))
    v = _cross(direction, u)
    copy_into(rows[1], np.cos(angle) * u + np.sin(angle) * v)
    copy_into(rows[2], _cross(direction, rows[1]))
    return orthonormal_frame(rows)


@njit(cache=True, nogil=True)
def obb_brute_force(points, steps, refine_rounds):
    """Brute-force OBB orientation search (Ericson 4.4.5): the first axis over ``steps^2``
    directions of a hemisphere (Fibonacci spiral) times ``steps`` angles in [0, pi/2) about it
    (this covers every box orientation up to the box symmetries), then ``refine_rounds`` rounds
    of a local 3^3 grid of small rotations with halving step. Returns axes (3,3) rows."""
    n_dir = steps * steps
    golden = np.pi * (3.0 - np.sqrt(5.0))
    best = np.eye(3)
    best_score = box_frame_score(points, best)
    direction = np.empty(3)
    for d in range(n_dir):
        z = 1.0 - (d + 0.5) / n_dir  # (0, 1]: upper hemisphere
        ring = np.sqrt(max(1.0 - z * z, 0.0))
        phi = golden * d
        direction[0] = ring * np.cos(phi)
        direction[1] = ring * np.sin(phi)
        direction[2] = z
        for a in range(steps):
            frame = _frame_from_direction(direction, 0.5 * np.pi * a / steps)
            score = box_frame_score(points, frame)
            if score < best_score:
                best_score = score
                best = frame
    delta = 0.5 * np.pi / steps
    w = np.empty(3)
    for _round in range(refine_rounds):
        improved = True
        while improved:
            improved = False
            center_frame = best.copy()
            for i in range(-1, 2):
                for j in range(-1, 2):
                    for k in range(-1, 2):
                        if i == 0 and j == 0 and k == 0:
                            continue
                        w[0] = i * delta
                        w[1] = j * delta
                        w[2] = k * delta
                        frame = _rotated(center_frame, w)
                        score = box_frame_score(points, frame)
                        if score < best_score * (1.0 - 1e-12):
                            best_score = score
                            best = frame
                            improved = True
        delta *= 0.5
    return best


@njit(cache=True, nogil=True, inline="always")
def _chain_push(xy, hull, k, i, floor):
    """One step of the monotone chain: pop the hull's last points while they make no left turn
    with point i (while it holds at least ``floor`` points), then append i; returns the new size."""
    while k >= floor:
        a = hull[k - 2]
        b = hull[k - 1]
        cr = (xy[b, 0] - xy[a, 0]) * (xy[i, 1] - xy[a, 1]) - (xy[b, 1] - xy[a, 1]) * (xy[i, 0] - xy[a, 0])
        if cr <= 0.0:
            k -= 1
        else:
            break
    hull[k] = i
    return k + 1


@njit(cache=True, nogil=True)
def _hull2d(xy):
    """Andrew's monotone chain (Ericson 3.9.1): indices of the 2D convex hull, counter-clockwise."""
    n = xy.shape[0]
    # lexicographic (x, then y): sort by x, then insertion-sort each run of equal x by y
    order = np.argsort(xy[:, 0])
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and xy[order[stop], 0] == xy[order[start], 0]:
            stop += 1
        for a in range(start + 1, stop):
            item = order[a]
            b = a - 1
            while b >= start and xy[order[b], 1] > xy[item, 1]:
                order[b + 1] = order[b]
                b -= 1
            order[b + 1] = item
        start = stop
    hull = np.empty(2 * n + 1, np.int64)
    k = 0
    for t in range(n):
        k = _chain_push(xy, hull, k, order[t], 2)
    lower = k + 1
    for t in range(n - 2, -1, -1):
        k = _chain_push(xy, hull, k, order[t], lower)
    return hull[: max(k - 1, 1)]


@njit(cache=True, nogil=True)
def min_area_rectangle(xy):
    """Minimum-area bounding rectangle of 2D points by rotating calipers (Ericson 4.4.4): one
    side is flush with an edge of the convex hull; the farthest point from the edge and the
    two extremes along it advance monotonically around the hull, so all edges cost O(h).
    Returns (angle of the flush side's direction, area)."""
    hull = _hull2d(xy)
    h = hull.shape[0]
    if h == 1:
        return 0.0, 0.0
    if h == 2:
        a = xy[hull[0]]
        b = xy[hull[1]]
        return np.arctan2(b[1] - a[1], b[0] - a[0]), 0.0
    hx = np.empty(h)
    hy = np.empty(h)
    for k in range(h):
        hx[k] = xy[hull[k], 0]
        hy[k] = xy[hull[k], 1]
    best_area = np.inf
    best_angle = 0.0
    far = 1  # max height above the edge
    right = 1  # max along the edge
    left = 1  # min along the edge
    for e in range(h):
        e1 = (e + 1) % h
        ux = hx[e1] - hx[e]
        uy = hy[e1] - hy[e]
        length = np.sqrt(ux * ux + uy * uy)
        if length == 0.0:
            continue
        ux /= length
        uy /= length
        if e == 0:
            right = e1
        for _step in range(h):  # advance while the projection along the edge grows
            nxt = (right + 1) % h
            if (hx[nxt] - hx[right]) * ux + (hy[nxt] - hy[right]) * uy > 0.0:
                right = nxt
            else:
                break
        if e == 0:
            far = right
        for _step in range(h):  # height above the edge (CCW hull: interior on the left)
            nxt = (far + 1) % h
            if -(hx[nxt] - hx[far]) * uy + (hy[nxt] - hy[far]) * ux >= 0.0 and nxt != e:
                far = nxt
            else:
                break
        if e == 0:
            left = far
        for _step in range(h):  # advance while the projection along the edge shrinks
            nxt = (left + 1) % h
            if (hx[nxt] - hx[left]) * ux + (hy[nxt] - hy[left]) * uy < 0.0 and nxt != e1:
                left = nxt
            else:
                break
        s1 = (hx[right] - hx[e]) * ux + (hy[right] - hy[e]) * uy
        s0 = (hx[left] - hx[e]) * ux + (hy[left] - hy[e]) * uy
        s0 = min(s0, 0.0)
        s1 = max(s1, length)
        height = -(hx[far] - hx[e]) * uy + (hy[far] - hy[e]) * ux
        area = (s1 - s0) * height
        if area < best_area:
            best_area = area
            best_angle = np.arctan2(uy, ux)
    return best_angle, best_area


@njit(cache=True, nogil=True)
def obb_face_flush(points, normals):
    """For each candidate normal (rows of ``normals``, unit; e.g. convex-hull face normals) the
    box with one face perpendicular to it and the minimum-area rectangle in that plane. Returns
    the best frame (3,3) rows and its score."""
    best = np.eye(3)
    best_score = box_frame_score(points, best)
    n = points.shape[0]
    xy = np.empty((n, 2))
    for f in range(normals.shape[0]):
        frame = _frame_from_direction(normals[f], 0.0)
        for i in range(n):
            sx = 0.0
            sy = 0.0
            for c in range(3):
                d = points[i, c] - points[0, c]
                sx += d * frame[1, c]
                sy += d * frame[2, c]
            xy[i, 0] = sx
            xy[i, 1] = sy
        angle, _area = min_area_rectangle(xy)
        frame = _frame_from_direction(normals[f], angle)
        score = box_frame_score(points, frame)
        if score < best_score:
            best_score = score
            best = frame
    return best, best_score


@njit(cache=True, nogil=True)
def refine_frame(points, axes, step, iterations):
    """Local minimisation of the box score over rotations exp([w]x) applied to ``axes`` by
    Nelder-Mead on w (a derivative-free search as in Eberly S1 6.1, which uses Powell). The
    result is never worse than ``axes``. Returns axes (3,3)."""
    simplex = np.zeros((4, 3))
    values = np.empty(4)
    for k in range(3):
        simplex[k + 1, k] = step
    for k in range(4):
        values[k] = box_frame_score(points, _rotated(axes, simplex[k]))
    for _it in range(iterations):
        order = np.argsort(values)
        simplex = simplex[order].copy()
        values = values[order].copy()
        if values[3] - values[0] <= 1e-12 * abs(values[0]):
            spread = 0.0
            for k in range(1, 4):
                spread = max(spread, np.sqrt(dist2(simplex[k], simplex[0])))
            if spread < 1e-9:
                break
        centroid = (simplex[0] + simplex[1] + simplex[2]) / 3.0
        reflected = centroid + (centroid - simplex[3])
        fr = box_frame_score(points, _rotated(axes, reflected))
        if fr < values[0]:
            expanded = centroid + 2.0 * (centroid - simplex[3])
            fe = box_frame_score(points, _rotated(axes, expanded))
            if fe < fr:
                copy_into(simplex[3], expanded)
                values[3] = fe
            else:
                copy_into(simplex[3], reflected)
                values[3] = fr
        elif fr < values[2]:
            copy_into(simplex[3], reflected)
            values[3] = fr
        else:
            if fr < values[3]:
                contracted = centroid + 0.5 * (reflected - centroid)
            else:
                contracted = centroid + 0.5 * (simplex[3] - centroid)
            fc = box_frame_score(points, _rotated(axes, contracted))
            if fc < min(fr, values[3]):
                copy_into(simplex[3], contracted)
                values[3] = fc
            else:
                for k in range(1, 4):
                    copy_into(simplex[k], simplex[0] + 0.5 * (simplex[k] - simplex[0]))
                    values[k] = box_frame_score(points, _rotated(axes, simplex[k]))
    best = np.argmin(values)
    frame = _rotated(axes, simplex[best])
    if box_frame_score(points, frame) <= box_frame_score(points, axes):
        return frame
    return axes.copy()
