"""Bounding volumes: fitting, update under rotation, merging (Ericson ch. 4 and 6.5; Eberly S1 6.1).

    from touche import bounding as bv
    box = bv.aabb(points)                      # points: (n, 3) float
    ball = bv.sphere_welzl(points)             # exact minimum sphere
    obb = bv.obb_min_volume(points)            # best OBB found (never worse than the PCA fits)
    dop = bv.kdop(points, 14)
    both = bv.merge(obb, bv.obb_pca(other))
    obb.contains(points)                       # (n,) bool
    shape, pose = obb.to_box()                 # a touche.Box and its touche.Pose

Result types (NamedTuples of float64 arrays, see ``_volumes``): :class:`AABB` (min, max),
:class:`Sphere` (center, radius), :class:`OBB` (center, axes ROWS = unit right-handed axes,
half_extents), :class:`KDOP` (k, directions, min, max), :class:`Capsule` (p0, p1, radius),
:class:`Lozenge` = :class:`RSS` (origin, axes, lengths, radius). Each has ``volume()`` and
``contains(points, tolerance=None)``.

Fits (points ``(n, 3)``, or one point ``(3,)``; NaN / inf / empty input raises GeometryError):

==========================  ========================================================  ==========
function                    method                                                    seed
==========================  ========================================================  ==========
aabb                        min / max                                                 4.2
aabb_rotated(box, R, t)     Arvo: AABB of the rotated + translated box, exact         4.2.6
sphere_ritter               Ritter (extreme pair, grow)                               4.3.2
sphere_pca                  principal axis extremes, grow                             4.3.3
sphere_iterative            Ritter shrink-and-regrow over random orders               4.3.4
sphere_welzl                exact minimum sphere, move-to-front                       4.3.5
obb_pca                     covariance of the points                                  4.4.3
obb_hull_pca                continuous covariance of the convex hull's surface        4.4.3
obb_triangles(v, t)         continuous covariance of given triangles (Gottschalk)     4.4.3
obb_brute_force             grid over all orientations + local refinement             4.4.5
obb_min_volume              hull-face-flush min-area rectangles (4.4.4), PCA fits,    S1 6.1
                            then derivative-free local minimisation over rotations
kdop(points, k)             k in 6, 8, 14, 18, 26                                     4.6
capsule                     best of principal / hull axes; exact 2D circle; capped    4.5.2
lozenge (= rss)             best of principal / hull frames; rounded-corner shrink    4.5.2
merge(a, b)                 AABB, exact sphere pair, OBB (mean frame, 16 corners),    6.5
                            k-DOP, capsule / lozenge (conservative: holds both)
==========================  ========================================================  ==========

A sphere / capsule / lozenge of radius 0 or a flat box is a valid result (a point, segment or
rectangle); converting it to a touche shape then raises GeometryError.
"""
from __future__ import annotations

import numpy as np

from .._kdop import KDOP_DIRECTIONS
from .._kernels import kernel_loader
from ..errors import GeometryError
from ._volumes import AABB, KDOP, OBB, RSS, Capsule, Lozenge, Sphere, _as_points

__all__ = [
    "AABB", "KDOP", "OBB", "RSS", "Capsule", "Lozenge", "Sphere", "KDOP_DIRECTIONS",
    "aabb", "aabb_rotated", "sphere_ritter", "sphere_iterative", "sphere_welzl", "sphere_pca",
    "obb_pca", "obb_hull_pca", "obb_triangles", "obb_min_volume", "obb_brute_force", "kdop",
    "capsule", "lozenge", "rss", "merge",
]


_kernels = kernel_loader("bounding")
_sphere_kernels = kernel_loader("bounding_spheres")
_obb_kernels = kernel_loader("bounding_obb")


def _points(points):
    array = _as_points(points)
    if array.shape[0] == 0:
        raise GeometryError("points must not be empty")
    return np.ascontiguousarray(array)


def _seed(seed):
    try:
        value = int(seed)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"seed must be an integer, got {seed!r}") from exc
    if not 0 <= value < 2**32:
        raise GeometryError(f"seed must be in [0, 2**32), got {value}")
    return value


# ---------------------------------------------------------------------------------------------
# AABB
def aabb(points):
    """Tightest axis-aligned box (min, max) of the points (n, 3)."""
    p = _points(points)
    return AABB(p.min(axis=0), p.max(axis=0))


def aabb_rotated(box, rotation, translation=(0.0, 0.0, 0.0)):
    """AABB of ``rotation @ x + translation`` over the box ``box`` (an :class:`AABB`), by Arvo's
    method (Ericson 4.2.6): per output axis i, sum over j of the smaller / larger of
    R[i, j] * min[j] and R[i, j] * max[j]. Exact: it equals the AABB of the 8 transformed
    corners. ``rotation`` (3, 3) may be any linear map."""
    if not isinstance(box, AABB):
        raise GeometryError(f"box must be a bounding.AABB, got {type(box).__name__}")
    m = np.asarray(rotation, dtype=np.float64)
    t = np.asarray(translation, dtype=np.float64)
    if m.shape != (3, 3) or t.shape != (3,):
        raise GeometryError(f"rotation must be (3, 3) and translation (3,), got {m.shape}, {t.shape}")
    if not (np.isfinite(m).all() and np.isfinite(t).all()):
        raise GeometryError("rotation / translation contain NaN or inf")
    e = m * box.min[None, :]
    f = m * box.max[None, :]
    return AABB(t + np.minimum(e, f).sum(axis=1), t + np.maximum(e, f).sum(axis=1))


# ---------------------------------------------------------------------------------------------
# spheres
def sphere_ritter(points):
    """Ritter's sphere (Ericson 4.3.2): fast, typically 5-20 % larger than the minimum."""
    center, radius = _sphere_kernels().ritter_sphere(_points(points))
    return Sphere(center, float(radius))


def sphere_iterative(points, iterations=8, seed=0):
    """Ritter's sphere refined by ``iterations`` shrink-and-regrow passes over random point
    orders drawn from ``seed`` (Ericson 4.3.4)."""
    iterations = int(iterations)
    if iterations < 0:
        raise GeometryError(f"iterations must be >= 0, got {iterations}")
    center, radius = _sphere_kernels().ritter_iterative(_points(points), iterations, _seed(seed))
    return Sphere(center, float(radius))


def sphere_welzl(points, seed=0):
    """Exact minimum enclosing sphere (Welzl's algorithm, move-to-front, expected O(n); the
    random initial order comes from ``seed``)."""
    center, radius = _sphere_kernels().welzl_sphere(_points(points), _seed(seed))
    return Sphere(center, float(radius))


def sphere_pca(points):
    """Sphere from the extremes along the principal axis, grown over all points (Ericson 4.3.3)."""
    center, radius = _sphere_kernels().pca_sphere(_points(points))
    return Sphere(center, float(radius))


# ---------------------------------------------------------------------------------------------
# OBBs
def _box(points, axes):
    center, half = _kernels().box_in_frame(points, np.ascontiguousarray(axes))
    return OBB(center, np.ascontiguousarray(axes), half)


def _hull(points):
    """(hull points (h, 3), hull triangles (f, 3) indexing them, face normals (f, 3)) or None
    when the points span no volume (flat, collinear, < 4 distinct points)."""
    from scipy.spatial import ConvexHull, QhullError

    if points.shape[0] < 4:
        return None
    try:
        hull = ConvexHull(points)
    except (QhullError, ValueError):
        return None
    used = np.unique(hull.simplices)
    remap = np.full(points.shape[0], -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    normals = np.ascontiguousarray(hull.equations[:, :3])
    return (np.ascontiguousarray(points[used]),
            np.ascontiguousarray(remap[hull.simplices].astype(np.int64)), normals)


def _pca_axes(points):
    kb = _kernels()
    return kb.frame_from_covariance(kb.point_covariance(points))


def _hull_axes(points, hull):
    """Frame of the hull surface's continuous covariance; PCA of the points when there is no
    3D hull (flat / collinear input: then the points' own covariance already sees the extent)."""
    if hull is None:
        return _pca_axes(points)
    vertices, triangles, _ = hull
    return _kernels().triangle_covariance_frame(vertices, triangles, np.arange(triangles.shape[0]))


def obb_pca(points):
    """OBB along the eigenvectors of the points' covariance (Ericson 4.4.3; sensitive to point
    clustering)."""
    p = _points(points)
    return _box(p, _pca_axes(p))


def obb_hull_pca(points):
    """OBB along the eigenvectors of the area-weighted continuous covariance of the convex
    hull's triangles (Ericson 4.4.3, Gottschalk): independent of interior points and of how
    densely the hull is sampled. Flat / collinear input falls back to :func:`obb_pca`."""
    p = _points(points)
    return _box(p, _hull_axes(p, _hull(p)))


def _triangles(vertices, triangles):
    v = _points(vertices)
    try:
        t = np.asarray(triangles)
    except Exception as exc:  # pragma: no cover
        raise GeometryError("triangles must be an integer array (m, 3)") from exc
    if t.ndim != 2 or t.shape[1] != 3 or t.shape[0] == 0:
        raise GeometryError(f"triangles must have shape (m, 3) with m >= 1, got {t.shape}")
    if not np.issubdtype(t.dtype, np.integer):
        raise GeometryError(f"triangles must be integers, got {t.dtype}")
    if t.min() < 0 or t.max() >= v.shape[0]:
        raise GeometryError(f"triangle indices out of range [0, {v.shape[0]})")
    return v, np.ascontiguousarray(t, dtype=np.int64)


def obb_triangles(vertices, triangles):
    """OBB of a triangle set along the eigenvectors of its continuous (area-weighted) covariance
    (Ericson 4.4.3, Gottschalk; NOT the seed S1 formula, which is wrong). The box holds every
    vertex referenced by ``triangles`` (m, 3) int. Zero-area triangles carry no weight; when all
    are degenerate the referenced vertices' covariance decides."""
    v, t = _triangles(vertices, triangles)
    kb = _kernels()
    ids = np.arange(t.shape[0], dtype=np.int64)
    axes = kb.triangle_covariance_frame(v, t, ids)
    center, half = kb.fit_obb_in_frame(v, t, ids, axes)
    return OBB(center, axes, half)


def _search_points(points, hull):
    """Points that decide every bounding volume: the hull vertices (all points when flat)."""
    return points if hull is None else hull[0]


def _obb_search_points(points, hull):
    """Points that decide the best box ORIENTATION: the 3D hull vertices, or for flat /
    collinear input the vertices of the 2D hull in the principal plane (the final box is always
    fitted to every point, so off-plane noise only changes its thickness)."""
    if hull is not None:
        return hull[0]
    if points.shape[0] <= 8:
        return points
    axes = _pca_axes(points)
    xy = np.ascontiguousarray((points - points[0]) @ axes[:2].T)
    return np.ascontiguousarray(points[_obb_kernels()._hull2d(xy)])


def obb_brute_force(points, steps=12, refine_rounds=8):
    """Brute-force OBB (Ericson 4.4.5): ``steps^2`` hemisphere directions for the first axis x
    ``steps`` angles about it, scored on the convex-hull points, then ``refine_rounds`` rounds of
    local refinement with halving step. Cost ~ steps^3 * hull size."""
    steps = int(steps)
    if steps < 1:
        raise GeometryError(f"steps must be >= 1, got {steps}")
    p = _points(points)
    search = _obb_search_points(p, _hull(p))
    axes = _obb_kernels().obb_brute_force(search, steps, int(refine_rounds))
    return _box(p, axes)


def obb_min_volume(points, max_faces=256, restarts=3):
    """Near-minimum-volume OBB. Candidates: the PCA and hull-PCA frames and, for up to
    ``max_faces`` convex-hull faces (largest first), the box flush with that face whose
    cross-section is the minimum-area rectangle of the projected hull (Ericson 4.4.4; O'Rourke:
    the optimum has a face flush with a hull face, or three edges on box faces). The best
    ``restarts`` candidates are then polished by a derivative-free search over rotations (Eberly
    S1 6.1 uses Powell; Nelder-Mead here). Never larger than :func:`obb_pca` / :func:`obb_hull_pca`.
    Flat input: the search runs on the plane (the box then has zero thickness)."""
    p = _points(points)
    kb = _obb_kernels()
    hull = _hull(p)
    search = _obb_search_points(p, hull)
    pca = _pca_axes(p)
    candidates = [pca, _hull_axes(p, hull)]
    if hull is not None:
        # largest faces first, one normal per facet plane (qhull triangulates coplanar facets)
        v, tri, normals = hull
        areas = np.linalg.norm(np.cross(v[tri[:, 1]] - v[tri[:, 0]], v[tri[:, 2]] - v[tri[:, 0]]), axis=1)
        normals = normals[np.argsort(-areas, kind="stable")]
        _, first = np.unique(np.round(normals, 9), axis=0, return_index=True)
        normals = normals[np.sort(first)[: max(1, int(max_faces))]]
    else:
        # flat / collinear: the thin direction of the PCA frame is the plane normal
        normals = pca[::-1].copy()
    flush, _ = kb.obb_face_flush(search, np.ascontiguousarray(normals))
    candidates.append(flush)
    scored = sorted(candidates, key=lambda axes: kb.box_frame_score(search, axes))
    refined = []
    for axes in scored[: max(1, int(restarts))]:
        axes = kb.refine_frame(search, axes, 0.2, 200)
        axes = kb.refine_frame(search, axes, 0.01, 200)
        refined.append(axes)
    best = min(refined + candidates[:2], key=lambda axes: (
        kb.box_volume_in_frame(search, axes), kb.box_frame_score(search, axes)))
    return _box(p, best)


# ---------------------------------------------------------------------------------------------
# k-DOPs
def kdop(points, k):
    """k-DOP (Ericson 4.6) for k in 6, 8, 14, 18, 26: min / max of the projections onto
    ``KDOP_DIRECTIONS[k]`` (8: the four cube diagonals; 14: axes + diagonals; 18: axes + edge
    diagonals; 26: all thirteen)."""
    try:
        known = k in KDOP_DIRECTIONS
    except TypeError:  # unhashable
        known = False
    if not known:
        raise GeometryError(f"k must be one of {sorted(KDOP_DIRECTIONS)}, got {k!r}")
    p = _points(points)
    directions = KDOP_DIRECTIONS[k]
    lo, hi = _kernels().project_extents(p, np.ascontiguousarray(directions))
    return KDOP(int(k), directions, lo, hi)


# ---------------------------------------------------------------------------------------------
# sphere-swept volumes
def _capsule_from_spheres(centers, radii, axes_candidates, seed=0):
    kb = _sphere_kernels()
    best = None
    for axis in axes_candidates:
        norm = np.linalg.norm(axis)
        if not norm > 0:
            continue
        p0, p1, radius = kb.capsule_fit_spheres(centers, radii, np.ascontiguousarray(axis / norm), seed)
        fit = Capsule(p0, p1, float(radius))
        if best is None or fit.volume() < best.volume():
            best = fit
    return best


def _farthest_pair_direction(points):
    """Direction between the most separated pair among the coordinate extremes (as in Ritter)."""
    lo = points.argmin(axis=0)
    hi = points.argmax(axis=0)
    d = points[hi] - points[lo]
    return d[np.argmax((d * d).sum(axis=1))]


def capsule(points):
    """Capsule around the points (Ericson 4.5.2): for each candidate axis (the PCA and hull-PCA
    axes, the extreme-pair direction) the axis line goes through the centre of the minimum
    circle of the points projected across it, the radius is the largest distance to that line
    and the segment's ends are pulled in as far as the hemispherical caps allow. The candidate
    of least volume wins."""
    p = _points(points)
    hull = _hull(p)
    search = _search_points(p, hull)
    axes = list(_pca_axes(p)) + list(_hull_axes(p, hull)) + [_farthest_pair_direction(p)]
    return _capsule_from_spheres(search, np.zeros(search.shape[0]), axes)


def _lozenge_from_spheres(centers, radii, frames):
    kb = _kernels()
    best = None
    for frame in frames:
        for normal in range(3):
            rows = np.roll(np.asarray(frame), -(normal + 1), axis=0)  # normal -> row 2, right-handed
            rows = np.ascontiguousarray(rows)
            origin, lengths, radius = kb.rss_fit_spheres(centers, radii, rows)
            fit = Lozenge(origin, rows, lengths, float(radius))
            if best is None or fit.volume() < best.volume():
                best = fit
    return best


def lozenge(points):
    """Lozenge / rectangle swept sphere (RSS, Ericson 4.5.2): for the PCA and hull-PCA frames
    and each choice of normal axis, the radius is half the spread along the normal and the
    rectangle is shrunk as far as the rounded edges and corners allow (every point within
    ``radius`` of the rectangle). The candidate of least volume wins."""
    p = _points(points)
    hull = _hull(p)
    search = _search_points(p, hull)
    frames = [_pca_axes(p), _hull_axes(p, hull)]
    return _lozenge_from_spheres(search, np.zeros(search.shape[0]), frames)


rss = lozenge


# ---------------------------------------------------------------------------------------------
# merging (Ericson 6.5)
def _merge_spheres(a, b):
    """Ericson 6.5.2: the exact smallest sphere holding both spheres."""
    d = b.center - a.center
    dist2 = float(d @ d)
    if (b.radius - a.radius) ** 2 >= dist2:
        return a if a.radius >= b.radius else b
    dist = np.sqrt(dist2)
    radius = 0.5 * (dist + a.radius + b.radius)
    center = a.center + (radius - a.radius) / dist * d
    # round-off: make sure both far points are inside
    reach = max(np.linalg.norm(center - a.center) + a.radius, np.linalg.norm(center - b.center) + b.radius)
    return Sphere(center, float(max(radius, reach)))


def _aligned_axes(reference, axes):
    """``axes`` rows permuted and sign-flipped to best match ``reference`` (same box, same
    orientation class), kept right-handed."""
    out = np.empty((3, 3))
    free = [0, 1, 2]
    for r in range(3):
        dots = [abs(reference[r] @ axes[j]) for j in free]
        j = free.pop(int(np.argmax(dots)))
        out[r] = axes[j] if reference[r] @ axes[j] >= 0 else -axes[j]
    if np.linalg.det(out) < 0:
        out[2] = -out[2]
    return out


def _mean_frame(a_axes, b_axes):
    """Chordal mean of two orientations (Ericson 6.5.3 averages quaternions; the polar factor of
    the summed matrices is the same idea without the quaternion round trip)."""
    m = a_axes + _aligned_axes(a_axes, b_axes)
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    if np.linalg.det(r) < 0:
        u[:, -1] = -u[:, -1]
        r = u @ vt
    return _kernels().orthonormal_frame(np.ascontiguousarray(r))


def _merge_obbs(a, b):
    """Ericson 6.5.3: a frame halfway between both orientations (Eberly's quaternion
    interpolation), extents and then the centre from the 16 corners (centre last: tighter). The
    frames of a and b and the covariance frame of the 16 corners (ComputeOBB) are tried too; the
    smallest box wins."""
    corners = np.ascontiguousarray(np.concatenate([a.corners(), b.corners()]))
    frames = [_mean_frame(a.axes, b.axes), a.axes, b.axes, _pca_axes(corners)]
    return min((_box(corners, np.ascontiguousarray(f)) for f in frames), key=lambda box: box.volume())


def merge(a, b):
    """A bounding volume of the same kind holding both ``a`` and ``b`` (Ericson 6.5): AABB
    (exact), Sphere (exact smallest), OBB (mean frame / either frame over the 16 corners),
    KDOP (exact, same k), Capsule and Lozenge (conservative: fitted to the end / corner spheres
    of both, whose hull is the union's hull)."""
    if type(a) is not type(b):
        raise GeometryError(f"cannot merge {type(a).__name__} with {type(b).__name__}")
    if isinstance(a, AABB):
        return AABB(np.minimum(a.min, b.min), np.maximum(a.max, b.max))
    if isinstance(a, Sphere):
        return _merge_spheres(a, b)
    if isinstance(a, OBB):
        return _merge_obbs(a, b)
    if isinstance(a, KDOP):
        if a.k != b.k or not np.array_equal(a.directions, b.directions):
            raise GeometryError(f"cannot merge a {a.k}-DOP with a {b.k}-DOP")
        return KDOP(a.k, a.directions, np.minimum(a.min, b.min), np.maximum(a.max, b.max))
    if isinstance(a, Capsule):
        centers = np.ascontiguousarray(np.stack([a.p0, a.p1, b.p0, b.p1]))
        radii = np.array([a.radius, a.radius, b.radius, b.radius])
        gaps = np.linalg.norm(centers[:, None] - centers[None], axis=2) + radii[:, None] + radii[None]
        i, j = np.unravel_index(np.argmax(gaps), gaps.shape)
        axes = [a.p1 - a.p0, b.p1 - b.p0, centers[j] - centers[i]] + list(_pca_axes(centers))
        return _capsule_from_spheres(centers, radii, axes)
    if isinstance(a, Lozenge):
        centers = np.ascontiguousarray(np.concatenate([a.corners(), b.corners()]))
        radii = np.array([a.radius] * 4 + [b.radius] * 4)
        frames = [a.axes, b.axes, _mean_frame(a.axes, b.axes), _pca_axes(centers)]
        return _lozenge_from_spheres(centers, radii, frames)
    raise GeometryError(f"cannot merge objects of type {type(a).__name__}")
