"""Environment shapes (issue 20 item 4): touche.HeightField and touche.OccupancyMap
(touche/environments.py; docs/environments.md).

References, written here, numpy over every cell or voxel (no tree, not the shapes' meshes):

- height field: the solid is the union of two triangular prisms per cell (a top triangle of the
  cell, split along the diagonal from its (x_j, y_i) corner to its (x_j+1, y_i+1) corner, and its
  shadow on the floor); a point is inside when its cell's triangle height is above it and the
  floor below; outside, its distance is the minimum over every prism's 8 boundary triangles
  (tests/naive_mesh.point_triangle_distance). Boxes and capsules: any / minimum over the prisms
  as touche ConvexPolyhedrons (the convex pair engine, not the mesh path). Rays: the first hit
  over every prism's boundary triangles (Moller-Trumbore).
- occupancy map: the voxels are np.unique of floor(points / size); a point's distance to the
  union of the voxel cubes is the minimum of the clamped box distances, a ray's first hit the
  minimum slab entry; boxes and capsules: any / minimum of touche's convex engine over one
  tc.Box per voxel.
- coal: coal.makeOctree (its voxels, and sphere / box distances) and coal.HeightFieldAABB
  (sphere / box collisions; coal's height fields have no distance).
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import touche as tc
from touche.errors import GeometryError
from touche.meshquery import is_closed
from touche.shapes import solid_orientation

from naive.mesh import point_triangle_distance

try:
    import coal
except ImportError:  # pragma: no cover - coal is a test dependency
    coal = None

needs_coal = pytest.mark.skipif(coal is None, reason="coal not installed")
BAND = 1e-9  # answers within this of a contact are not compared as booleans


# ---------------------------------------------------------------------------------------------
# references
def _cell_triangles(heights, spacing, origin):
    """(2 * cells, 3, 3): the top triangles, built cell by cell."""
    rows, cols = heights.shape
    out = []
    for i in range(rows - 1):
        for j in range(cols - 1):
            def p(ii, jj):
                return [origin[0] + jj * spacing[0], origin[1] + ii * spacing[1], heights[ii, jj]]
            out.append([p(i, j), p(i, j + 1), p(i + 1, j + 1)])
            out.append([p(i, j), p(i + 1, j + 1), p(i + 1, j)])
    return np.array(out, dtype=np.float64)


def _prisms(heights, spacing, origin, floor):
    """(2 * cells, 6, 3): each top triangle and its shadow on the floor."""
    top = _cell_triangles(heights, spacing, origin)
    bottom = top.copy()
    bottom[:, :, 2] = floor
    return np.concatenate([top, bottom], axis=1)


def _prism_boundary(prisms):
    """(8 * k, 3, 3): every prism's top, bottom and two triangles per side."""
    t, b = prisms[:, :3], prisms[:, 3:]
    tris = [t, b]
    for k in range(3):
        m = (k + 1) % 3
        tris.append(np.stack([t[:, k], t[:, m], b[:, m]], axis=1))
        tris.append(np.stack([t[:, k], b[:, m], b[:, k]], axis=1))
    return np.concatenate(tris)


def _in_terrain(points, heights, spacing, origin, floor):
    rows, cols = heights.shape
    u = (points[:, 0] - origin[0]) / spacing[0]
    v = (points[:, 1] - origin[1]) / spacing[1]
    out = np.zeros(len(points), dtype=bool)
    for n, (uu, vv, z) in enumerate(zip(u, v, points[:, 2])):
        if not (0 <= uu <= cols - 1 and 0 <= vv <= rows - 1):
            continue
        j, i = min(int(uu), cols - 2), min(int(vv), rows - 2)
        fu, fv = uu - j, vv - i
        h00, h10, h01, h11 = heights[i, j], heights[i, j + 1], heights[i + 1, j], heights[i + 1, j + 1]
        if fu >= fv:  # triangle (00, 10, 11)
            h = h00 + fu * (h10 - h00) + fv * (h11 - h10)
        else:  # triangle (00, 11, 01)
            h = h00 + fv * (h01 - h00) + fu * (h11 - h01)
        out[n] = floor <= z <= h
    return out


def _triangles_distance(points, tris):
    """(n,): distance of each point to the nearest of ``tris`` (k, 3, 3)."""
    p = points[:, None, :]
    d = point_triangle_distance(p, tris[None, :, 0], tris[None, :, 1], tris[None, :, 2])
    return d.min(axis=1)


def _terrain_distance(points, heights, spacing, origin, floor):
    """Distance of each point to the solid terrain (0 inside)."""
    prisms = _prisms(heights, spacing, origin, floor)
    d = _triangles_distance(points, _prism_boundary(prisms))
    return np.where(_in_terrain(points, heights, spacing, origin, floor), 0.0, d)


def _ray_triangles(origins, directions, tris):
    """(n,): the first t >= 0 at which each ray meets one of ``tris`` (inf if none)."""
    a, b, c = tris[None, :, 0], tris[None, :, 1], tris[None, :, 2]
    o, d = origins[:, None, :], directions[:, None, :]
    e1, e2 = b - a, c - a
    pvec = np.cross(d, e2)
    det = np.einsum("nki,nki->nk", np.broadcast_to(e1, pvec.shape), pvec)
    ok = np.abs(det) > 1e-300
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    tvec = o - a
    u = np.einsum("nki,nki->nk", tvec, pvec) * inv
    qvec = np.cross(tvec, np.broadcast_to(e1, tvec.shape))
    v = np.einsum("nki,nki->nk", np.broadcast_to(d, qvec.shape), qvec) * inv
    t = np.einsum("nki,nki->nk", np.broadcast_to(e2, qvec.shape), qvec) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    return np.where(hit, t, np.inf).min(axis=1)


def _voxels(points, size):
    return np.unique(np.floor(points / size).astype(np.int64), axis=0)


def _boxes_distance(points, voxels, size):
    low = voxels * size
    high = low + size
    gap = np.maximum(np.maximum(low[None] - points[:, None], 0.0), points[:, None] - high[None])
    return np.sqrt((gap ** 2).sum(axis=2)).min(axis=1)


def _ray_boxes(origins, directions, voxels, size):
    low = (voxels * size)[None]
    high = low + size
    o, d = origins[:, None], directions[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (low - o) / d, (high - o) / d
    t1 = np.where(d == 0, np.where((o >= low) & (o <= high), -np.inf, np.inf), t1)
    t2 = np.where(d == 0, np.where((o >= low) & (o <= high), np.inf, -np.inf), t2)
    enter = np.maximum(np.minimum(t1, t2).max(axis=2), 0.0)
    leave = np.maximum(t1, t2).min(axis=2)
    return np.where(enter <= leave, enter, np.inf).min(axis=1)


def _translations(rng, n, low, high):
    return rng.uniform(low, high, (n, 3))


def _poses(centers):
    poses = np.tile(np.eye(4), (len(centers), 1, 1))
    poses[:, :3, 3] = centers
    return poses


def _random_rotations(rng, n):
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def _check_topology(mesh):
    """What the environment meshes tell touche.meshquery without its welding pass (their
    _known_topology), checked here the slow way: distinct vertex coordinates, and (solid)
    closed, edge-manifold, outward-facing."""
    assert len(np.unique(mesh.vertices, axis=0)) == len(mesh.vertices)
    welded = tc.TriangleMesh(mesh.vertices, mesh.faces)  # no hint: welds and checks
    assert is_closed(welded) == mesh.solid and is_closed(mesh) == mesh.solid
    if mesh.solid:
        assert solid_orientation(mesh.vertices, mesh.faces) == 1


TERRAIN = dict(spacing=(0.3, 0.2), origin=(-1.0, 0.5))


@pytest.fixture(scope="module")
def terrain():
    rng = np.random.default_rng(20)
    heights = 0.4 * rng.random((6, 8)) - 0.1
    return tc.HeightField(heights, **TERRAIN), heights


# ---------------------------------------------------------------------------------------------
# height field: construction
@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 2), (2, 6), (6, 2), (3, 3), (4, 9), (9, 4)])
def test_height_field_is_a_closed_outward_solid(shape):
    rng = np.random.default_rng(sum(shape))
    heights = rng.random(shape)
    field = tc.HeightField(heights, spacing=(0.5, 0.25), origin=(1.0, -2.0))
    assert field.solid and field.kind == tc.TriangleMesh([[0, 0, 0]] * 3, [[0, 1, 2]]).kind
    _check_topology(field)
    rows, cols = shape
    assert len(field.faces) == 2 * (rows - 1) * (cols - 1) + 2 * 2 * (rows + cols - 2) + 2 * (rows + cols - 2) - 2
    # volume: each top triangle's area times its mean height above the floor
    tops = _cell_triangles(heights, (0.5, 0.25), (1.0, -2.0))
    expected = (0.5 * 0.5 * 0.25 * (tops[:, :, 2].mean(axis=1) - field.floor)).sum()
    v = field.vertices[field.faces]
    volume = np.einsum("ij,ij->", v[:, 0], np.cross(v[:, 1], v[:, 2])) / 6.0
    assert volume == pytest.approx(expected, rel=1e-12)
    # default floor: a slab under the lowest point as thick as the relief (or a cell)
    assert field.floor == pytest.approx(heights.min() - max(np.ptp(heights), 0.5))
    surface = tc.HeightField(heights, spacing=(0.5, 0.25), origin=(1.0, -2.0), solid=False)
    assert not surface.solid and surface.floor is None and len(surface.faces) == 2 * (rows - 1) * (cols - 1)
    _check_topology(surface)
    assert np.array_equal(surface.vertices, field.vertices[: rows * cols])
    np.testing.assert_array_equal(field.heights, heights)


def test_height_at_matches_the_triangles(terrain):
    field, heights = terrain
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.0, -1.0 + 0.3 * 7, 200)
    y = rng.uniform(0.5, 0.5 + 0.2 * 5, 200)
    z = field.height_at(x, y)
    # the vertical ray from far above hits the surface at that height
    hit = tc.raycast(field, None, np.stack([x, y, np.full(200, 10.0)], axis=1), np.tile([0.0, 0.0, -1.0], (200, 1)))
    np.testing.assert_allclose(10.0 - hit.t, z, atol=1e-12)
    assert np.isnan(field.height_at(-2.0, 0.6))


# ---------------------------------------------------------------------------------------------
# height field against brute force over cells
def test_height_field_spheres_against_cells(terrain):
    field, heights = terrain
    rng = np.random.default_rng(2)
    n = 300
    centers = _translations(rng, n, [-1.4, 0.2, field.floor - 0.4], [1.5, 1.8, 0.8])
    radii = rng.uniform(0.02, 0.25, n)
    reference = _terrain_distance(centers, heights, TERRAIN["spacing"], TERRAIN["origin"], field.floor)
    for center, radius, ref in zip(centers, radii, reference):
        pose = tc.Pose.from_translation(center)
        sphere = tc.Sphere(radius)
        gap = ref - radius
        if abs(gap) > BAND:
            assert tc.intersects(sphere, pose, field, None) == (gap < 0)
        if gap > BAND:
            result = tc.distance(sphere, pose, field, None)
            assert result.distance == pytest.approx(gap, abs=1e-9)
            # the witness on the terrain is on its boundary, the one on the sphere on the sphere
            assert np.linalg.norm(np.asarray(result.point_a) - center) == pytest.approx(radius, abs=1e-9)
    # a batch of poses gives the single answers
    sphere = tc.Sphere(0.1)
    batch = tc.distance(sphere, _poses(centers), field, None)
    hits = tc.intersects(sphere, _poses(centers), field, None)
    for k in range(0, n, 7):
        single = tc.distance(sphere, tc.Pose.from_translation(centers[k]), field, None)
        assert batch.signed_distance[k] == pytest.approx(single.signed_distance, abs=1e-12)
        assert hits[k] == tc.intersects(sphere, tc.Pose.from_translation(centers[k]), field, None)
    separated = reference - 0.1 > BAND
    np.testing.assert_allclose(batch.signed_distance[separated], reference[separated] - 0.1, atol=1e-9)
    clear = np.abs(reference - 0.1) > BAND
    np.testing.assert_array_equal(hits[clear], (reference - 0.1 < 0)[clear])


def test_height_field_boxes_and_capsules_against_prisms(terrain):
    field, heights = terrain
    prisms = [tc.ConvexPolyhedron(p) for p in _prisms(heights, TERRAIN["spacing"], TERRAIN["origin"], field.floor)]
    rng = np.random.default_rng(3)
    shapes = [tc.Box([0.2, 0.1, 0.15]), tc.Capsule(0.05, 0.3), tc.Box([0.05, 0.4, 0.05])]
    rotations = _random_rotations(rng, 40)
    centers = _translations(rng, 40, [-1.3, 0.3, field.floor - 0.3], [1.4, 1.7, 0.7])
    compared = 0
    for k in range(40):
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotations[k], centers[k]
        shape = shapes[k % len(shapes)]
        gaps = np.array([tc.distance(shape, pose, prism, None).signed_distance for prism in prisms])
        overlap_any = any(tc.intersects(shape, pose, prism, None) for prism in prisms)
        ref = gaps.min()
        if ref > 1e-7:
            assert not tc.intersects(shape, pose, field, None)
            assert tc.distance(shape, pose, field, None).distance == pytest.approx(ref, abs=1e-7)
            compared += 1
        elif overlap_any and ref < -1e-7:
            assert tc.intersects(shape, pose, field, None)
    # wholly inside the terrain, touching no triangle: inside the solid
    deep = tc.Pose.from_translation([0.0, 1.0, field.floor + 0.05])
    assert tc.intersects(tc.Sphere(0.02), deep, field, None)
    assert tc.distance(tc.Sphere(0.02), deep, field, None).signed_distance < 0
    assert compared > 10


def test_surface_height_field_has_no_inside(terrain):
    _, heights = terrain
    surface = tc.HeightField(heights, **TERRAIN, solid=False)
    tops = _cell_triangles(heights, TERRAIN["spacing"], TERRAIN["origin"])
    rng = np.random.default_rng(4)
    centers = _translations(rng, 150, [-1.3, 0.3, -1.0], [1.4, 1.7, 0.8])
    reference = _triangles_distance(centers, tops)
    got = tc.distance(tc.Sphere(0.05), _poses(centers), surface, None)
    separated = reference - 0.05 > BAND
    np.testing.assert_allclose(got.signed_distance[separated], reference[separated] - 0.05, atol=1e-9)
    below = tc.Pose.from_translation([0.0, 1.0, -0.9])
    assert not tc.intersects(tc.Sphere(0.05), below, surface, None)
    assert surface.as_solid().solid and surface.as_solid().floor == pytest.approx(heights.min() - max(np.ptp(heights), 0.3))


def test_height_field_raycast_against_cells(terrain):
    field, heights = terrain
    rng = np.random.default_rng(5)
    n = 200
    origins = _translations(rng, n, [-1.6, 0.0, -1.2], [1.8, 2.0, 1.5])
    directions = rng.standard_normal((n, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    boundary = _prism_boundary(_prisms(heights, TERRAIN["spacing"], TERRAIN["origin"], field.floor))
    reference = _ray_triangles(origins, directions, boundary)
    inside = _in_terrain(origins, heights, TERRAIN["spacing"], TERRAIN["origin"], field.floor)
    got = tc.raycast(field, None, origins, directions, solid=False)
    # from outside every prism, the first prism face met is where the ray enters the terrain
    outside = ~inside & (reference > 1e-9)
    finite = np.isfinite(reference)
    np.testing.assert_array_equal(got.hit[outside], finite[outside])
    np.testing.assert_allclose(got.t[outside & finite], reference[outside & finite], atol=1e-9)
    # from inside (solid=False: where the ray leaves the boundary): inside all the way, then out
    args = (heights, TERRAIN["spacing"], TERRAIN["origin"], field.floor)
    for k in np.flatnonzero(inside):
        assert got.hit[k]
        t = got.t[k]
        samples = origins[k] + np.linspace(0.0, t - 1e-7, 50)[:, None] * directions[k]
        assert _in_terrain(samples, *args).all()
        assert not _in_terrain((origins[k] + (t + 1e-7) * directions[k])[None], *args)[0]
    # a solid height field (the default): a ray starting in the terrain hits at t = 0 (docs/solids.md),
    # one from outside meets the same boundary as on the surface mesh
    solid = tc.raycast(field, None, origins, directions)
    np.testing.assert_array_equal(solid.t[~inside], got.t[~inside])
    np.testing.assert_array_equal(solid.t[inside], 0.0)
    np.testing.assert_array_equal(tc.contains(field, None, origins), inside)
    assert inside.sum() > 10 and (outside & finite).sum() > 10


def test_flat_and_scaled_terrain():
    flat = tc.HeightField(np.zeros((5, 4)), spacing=0.5)
    assert flat.floor == -0.5
    result = tc.distance(tc.Sphere(0.25), tc.Pose.from_translation([0.7, 1.1, 1.0]), flat, None)
    assert result.distance == pytest.approx(0.75, abs=1e-12)
    assert tc.intersects(tc.Sphere(0.1), tc.Pose.from_translation([0.7, 1.1, -0.2]), flat, None)
    assert not tc.intersects(tc.Sphere(0.1), tc.Pose.from_translation([0.7, 1.1, -0.7]), flat, None)
    assert tc.distance(tc.Sphere(0.1), tc.Pose.from_translation([0.7, 1.1, -0.7]), flat, None).distance == pytest.approx(0.1)
    surface = tc.HeightField(np.zeros((5, 4)), spacing=0.5, solid=False)
    assert tc.distance(tc.Sphere(0.1), tc.Pose.from_translation([0.7, 1.1, -0.7]), surface, None).distance == pytest.approx(0.6)
    # the same terrain at scales 1e-6 .. 1e6: the distances scale with it
    rng = np.random.default_rng(6)
    heights = rng.random((5, 6))
    centers = _translations(rng, 30, [-0.5, -0.5, -1.5], [3.0, 2.5, 2.5])
    base = tc.distance(tc.Sphere(0.1), _poses(centers), tc.HeightField(heights, 0.5), None).signed_distance
    for scale in (1e-6, 1e-3, 1e3, 1e6, 1e30):
        field = tc.HeightField(heights * scale, 0.5 * scale)
        got = tc.distance(tc.Sphere(0.1 * scale), _poses(centers * scale), field, None).signed_distance
        np.testing.assert_allclose(got / scale, base, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kwargs, message", [
    (dict(heights=[[0.0, np.nan], [0.0, 0.0]]), "NaN or inf"),
    (dict(heights=[[0.0, np.inf], [0.0, 0.0]]), "NaN or inf"),
    (dict(heights=[[0.0, 1.0]]), "at least 2 rows and 2 columns"),
    (dict(heights=[0.0, 1.0, 2.0]), "2 dimensions"),
    (dict(heights=np.zeros((3, 3)), spacing=0.0), "spacing must be > 0"),
    (dict(heights=np.zeros((3, 3)), spacing=(1.0, -1.0)), "spacing must be > 0"),
    (dict(heights=np.zeros((3, 3)), spacing=(1.0, np.nan)), "NaN or inf"),
    (dict(heights=np.zeros((3, 3)), spacing=(1.0, 2.0, 3.0)), "2 numbers"),
    (dict(heights=np.zeros((3, 3)), spacing=1e-80), "range"),
    (dict(heights=np.zeros((3, 3)), floor=0.0), "not below the lowest height"),
    (dict(heights=np.zeros((3, 3)), floor=1.0), "not below the lowest height"),
    (dict(heights=np.zeros((3, 3)), origin=(0.0, 0.0, 0.0)), "origin must be"),
    (dict(heights=np.full((3, 3), 1e80)), "range"),
    (dict(heights=[["a", "b"], ["c", "d"]]), "numeric"),
])
def test_height_field_bad_input(kwargs, message):
    with pytest.raises(GeometryError, match=message):
        tc.HeightField(**kwargs)


# ---------------------------------------------------------------------------------------------
# occupancy map
@pytest.fixture(scope="module")
def cloud():
    rng = np.random.default_rng(30)
    # a noisy slanted sheet and a blob: pinched (diagonal) voxel edges and cavities happen
    u = rng.random((400, 2))
    sheet = np.stack([u[:, 0], u[:, 1], 0.3 + 0.35 * u[:, 0] + 0.02 * rng.standard_normal(400)], axis=1)
    blob = 0.6 + 0.15 * rng.standard_normal((300, 3))
    points = np.concatenate([sheet, blob])
    size = 0.1
    return tc.OccupancyMap.from_points(points, size), points, size


def test_occupancy_voxels_are_the_occupied_cells(cloud):
    grid, points, size = cloud
    expected = _voxels(points, size)
    got = np.asarray(grid.voxels)
    assert np.array_equal(got[np.lexsort(got.T[::-1])], expected)
    assert grid.solid and grid.voxel_size == size
    _check_topology(grid)
    v = grid.vertices[grid.faces]
    volume = np.einsum("ij,ij->", v[:, 0], np.cross(v[:, 1], v[:, 2])) / 6.0
    assert volume == pytest.approx(len(expected) * size ** 3, rel=1e-12)
    assert grid.occupied(points).all()
    low, high = grid.boxes()
    assert np.allclose(high - low, size)
    # every point lies in its voxel's closed cube
    assert tc.contains(grid, None, points).all()


def test_occupancy_contains_and_occupied_agree_with_voxels(cloud):
    grid, points, size = cloud
    voxels = _voxels(points, size)
    rng = np.random.default_rng(7)
    queries = rng.uniform(-0.3, 1.3, (3000, 3))
    keys = np.floor(queries / size)
    near_face = (np.abs(queries / size - np.round(queries / size)) < 1e-9).any(axis=1)
    expected = (keys[:, None, :] == voxels[None]).all(axis=2).any(axis=1)
    np.testing.assert_array_equal(grid.occupied(queries), expected)
    np.testing.assert_array_equal(tc.contains(grid, None, queries)[~near_face], expected[~near_face])


def test_occupancy_spheres_against_voxel_boxes(cloud):
    grid, points, size = cloud
    voxels = _voxels(points, size)
    rng = np.random.default_rng(8)
    n = 400
    centers = _translations(rng, n, [-0.4, -0.4, -0.4], [1.4, 1.4, 1.4])
    radii = rng.uniform(0.01, 0.2, n)
    reference = _boxes_distance(centers, voxels, size)
    for k in range(n):
        pose = tc.Pose.from_translation(centers[k])
        gap = reference[k] - radii[k]
        if abs(gap) > BAND:
            assert tc.intersects(tc.Sphere(radii[k]), pose, grid, None) == (gap < 0)
        if gap > BAND:
            assert tc.distance(tc.Sphere(radii[k]), pose, grid, None).distance == pytest.approx(gap, abs=1e-9)
    batch = tc.distance(tc.Sphere(0.05), _poses(centers), grid, None)
    separated = reference - 0.05 > BAND
    np.testing.assert_allclose(batch.signed_distance[separated], reference[separated] - 0.05, atol=1e-9)
    hits = tc.intersects(tc.Sphere(0.05), _poses(centers), grid, None)
    clear = np.abs(reference - 0.05) > BAND
    np.testing.assert_array_equal(hits[clear], (reference < 0.05)[clear])
    # closest points of bare points outside: their distance to the union of the cubes
    # (closest_point takes meshes as surfaces: inside, the distance to the boundary)
    closest = tc.closest_point(grid, None, centers)
    outside = reference > 0
    np.testing.assert_allclose(closest.distance[outside], reference[outside], atol=1e-9)
    np.testing.assert_array_equal(tc.contains(grid, None, centers[~outside]), True)


def test_occupancy_boxes_and_capsules_against_voxel_boxes(cloud):
    grid, points, size = cloud
    voxels = _voxels(points, size)
    cubes = [(tc.Box([size] * 3), tc.Pose.from_translation((v + 0.5) * size)) for v in voxels]
    rng = np.random.default_rng(9)
    shapes = [tc.Box([0.12, 0.05, 0.2]), tc.Capsule(0.03, 0.25)]
    rotations = _random_rotations(rng, 30)
    centers = _translations(rng, 30, [-0.3, -0.3, -0.3], [1.3, 1.3, 1.3])
    compared = 0
    for k in range(30):
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotations[k], centers[k]
        shape = shapes[k % 2]
        gaps = np.array([tc.distance(shape, pose, cube, cube_pose).signed_distance for cube, cube_pose in cubes])
        ref = gaps.min()
        if ref > 1e-7:
            assert not tc.intersects(shape, pose, grid, None)
            assert tc.distance(shape, pose, grid, None).distance == pytest.approx(ref, abs=1e-7)
            compared += 1
        elif ref < -1e-7:
            assert tc.intersects(shape, pose, grid, None)
    assert compared > 5


def test_occupancy_raycast_against_slabs(cloud):
    grid, points, size = cloud
    voxels = _voxels(points, size)
    rng = np.random.default_rng(10)
    origins = _translations(rng, 300, [-0.8, -0.8, -0.8], [1.8, 1.8, 1.8])
    directions = rng.standard_normal((300, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    reference = _ray_boxes(origins, directions, voxels, size)
    got = tc.raycast(grid, None, origins, directions)
    outside = reference > 0  # from inside a voxel the ray reports where it leaves the union
    finite = np.isfinite(reference)
    np.testing.assert_array_equal(got.hit[outside], finite[outside])
    np.testing.assert_allclose(got.t[outside & finite], reference[outside & finite], atol=1e-9)
    assert (outside & finite).sum() > 20


@pytest.mark.parametrize("voxels", [
    [[0, 0, 0]],
    [[0, 0, 0], [1, 1, 0]],             # a pinched edge
    [[0, 0, 0], [1, -1, 0], [2, 0, 0]],  # two pinched edges on one voxel
    [[0, 0, 0], [1, 1, 1]],             # a pinched corner
    [[0, 0, 0], [1, 1, 0], [0, 1, 1], [1, 0, 1]],  # pinches around a cube's diagonals
    [[x, y, z] for x in range(3) for y in range(3) for z in range(3) if (x, y, z) != (1, 1, 1)],  # a cavity
])
def test_small_maps_are_solids(voxels):
    grid = tc.OccupancyMap(voxels, 0.5, origin=(1.0, 2.0, 3.0))
    _check_topology(grid)
    v = grid.vertices[grid.faces]
    volume = np.einsum("ij,ij->", v[:, 0], np.cross(v[:, 1], v[:, 2])) / 6.0
    assert volume == pytest.approx(len(voxels) * 0.125, rel=1e-12)
    centers = np.asarray(voxels) * 0.5 + 0.25 + np.array([1.0, 2.0, 3.0])
    assert tc.contains(grid, None, centers).all()
    # each voxel centre is 0.25 deep: a sphere there intersects, a point-sized probe is inside
    for c in centers:
        assert tc.intersects(tc.Sphere(0.01), tc.Pose.from_translation(c), grid, None)
    if len(voxels) == 26:
        assert not tc.contains(grid, None, [1.75, 2.75, 3.75])  # the cavity is empty
        assert tc.distance(tc.Sphere(0.1), tc.Pose.from_translation([1.75, 2.75, 3.75]), grid, None).distance == pytest.approx(0.15)


def test_single_voxel_is_a_box():
    grid = tc.OccupancyMap.from_points([[0.31, 0.72, -0.05]], 0.2)
    assert np.array_equal(grid.voxels, [[1, 3, -1]])
    box = tc.Box([0.2, 0.2, 0.2])
    box_pose = tc.Pose.from_translation([0.3, 0.7, -0.1])
    rng = np.random.default_rng(11)
    for center in _translations(rng, 40, [-0.5, 0.0, -0.8], [1.0, 1.4, 0.6]):
        pose = tc.Pose.from_translation(center)
        expected = tc.distance(tc.Sphere(0.05), pose, box, box_pose)
        if expected.distance > BAND:
            assert tc.distance(tc.Sphere(0.05), pose, grid, None).distance == pytest.approx(expected.distance, abs=1e-12)


def test_duplicates_and_points_on_voxel_faces():
    points = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.25, 0.5, 0.75], [0.1, 0.1, 0.1], [1.0, 1.0, 1.0]])
    grid = tc.OccupancyMap.from_points(points, 0.25)
    # a point on a face between voxels goes to the upper one (floor, as octomap), duplicates once
    assert {tuple(v) for v in grid.voxels} == {(0, 0, 0), (1, 2, 3), (4, 4, 4)}
    assert tc.contains(grid, None, points).all()
    again = tc.OccupancyMap.from_points(np.repeat(points, 5, axis=0), 0.25)
    assert np.array_equal(again.voxels, grid.voxels) and np.array_equal(again.faces, grid.faces)
    shifted = tc.OccupancyMap.from_points(points, 0.25, origin=(0.1, 0.0, 0.0))
    assert {tuple(v) for v in shifted.voxels.tolist()} == {(-1, 0, 0), (0, 0, 0), (0, 2, 3), (3, 4, 4)}
    assert tc.contains(shifted, None, points).all()


def test_occupancy_scales():
    rng = np.random.default_rng(12)
    points = rng.random((200, 3))
    centers = _translations(rng, 40, [-0.5, -0.5, -0.5], [1.5, 1.5, 1.5])
    base = tc.distance(tc.Sphere(0.05), _poses(centers), tc.OccupancyMap.from_points(points, 0.125), None).signed_distance
    for scale in (2.0 ** -40, 1e-6, 1e6, 2.0 ** 100):
        grid = tc.OccupancyMap.from_points(points * scale, 0.125 * scale)
        got = tc.distance(tc.Sphere(0.05 * scale), _poses(centers * scale), grid, None).signed_distance
        np.testing.assert_allclose(got / scale, base, rtol=1e-9, atol=1e-9)
    # far from the origin, with a voxel size the coordinates still resolve
    # a million units from the origin (the voxel grid shifts by a whole number of voxels): the
    # same voxels, the same distances up to the rounding of the coordinates
    far = tc.OccupancyMap.from_points(points + 1e6, 0.125)
    assert np.array_equal(far.voxels - 8_000_000, tc.OccupancyMap.from_points(points, 0.125).voxels)
    got = tc.distance(tc.Sphere(0.05), _poses(centers + 1e6), far, None).signed_distance
    np.testing.assert_allclose(got, base, atol=1e-8)


@pytest.mark.parametrize("points, size, message", [
    (np.zeros((0, 3)), 0.1, "empty"),
    ([[0.0, np.nan, 0.0]], 0.1, "NaN or inf"),
    ([[0.0, 0.0, -np.inf]], 0.1, "NaN or inf"),
    ([[0.0, 0.0]], 0.1, r"shape \(n, 3\)"),
    ([[0.0, 0.0, 0.0]], 0.0, "voxel_size must be > 0"),
    ([[0.0, 0.0, 0.0]], -1.0, "voxel_size must be > 0"),
    ([[0.0, 0.0, 0.0]], np.nan, "NaN or inf"),
    ([[0.0, 0.0, 0.0]], (0.1, 0.2), "voxel_size must be a number"),
    ([[1e80, 0.0, 0.0]], 0.1, "range"),
    ([[1e6, 0.0, 0.0]], 1e-9, "2\\*\\*40"),
    ([[0.0, 0.0, 0.0], [1e5, 1e5, 1e5]], 1e-2, "more than touche's"),
])
def test_occupancy_bad_input(points, size, message):
    with pytest.raises(GeometryError, match=message):
        tc.OccupancyMap.from_points(points, size)


def test_occupancy_from_voxel_indices_bad_input():
    with pytest.raises(GeometryError, match="at least one voxel"):
        tc.OccupancyMap(np.zeros((0, 3), dtype=np.int64), 0.1)
    with pytest.raises(GeometryError, match="integer"):
        tc.OccupancyMap([[0.5, 0.0, 0.0]], 0.1)
    with pytest.raises(GeometryError, match=r"shape \(k, 3\)"):
        tc.OccupancyMap([0, 0, 0], 0.1)
    assert np.array_equal(tc.OccupancyMap([[1.0, 2.0, 3.0]], 0.1).voxels, [[1, 2, 3]])


# ---------------------------------------------------------------------------------------------
# every verb, worlds, robots, pickling
def test_every_verb_takes_them(terrain, cloud):
    field, _ = terrain
    grid, _, _ = cloud
    sphere = tc.Sphere(0.05)
    for env in (field, grid):
        above = tc.Pose.from_translation([0.2, 0.9, 2.0])
        d = tc.distance(sphere, above, env, None)
        assert d.distance > 0 and tc.signed_distance(sphere, above, env, None) == pytest.approx(d.distance)
        assert tc.closest_point(env, None, [0.2, 0.9, 2.0]).distance == pytest.approx(d.distance + 0.05, abs=1e-9)
        # falling straight down: the first time the gap closes (sampled before it: apart)
        fall = tc.time_of_impact(sphere, tc.Linear([0.0, 0.0, -1.0], above), env, None, t_max=10.0)
        assert d.distance - 1e-9 <= fall.time < 10.0
        at = tc.Pose.from_translation([0.2, 0.9, 2.0 - fall.time])
        assert tc.distance(sphere, at, env, None).distance < 1e-6
        before = _poses(np.array([[0.2, 0.9, 2.0 - t] for t in np.linspace(0.0, fall.time - 1e-6, 100)]))
        assert (tc.distance(sphere, before, env, None).distance > 0).all()
        # mesh against mesh: a small solid cube under the terrain / in a voxel
        cube = tc.TriangleMesh(*_cube_arrays(0.02), solid=True)
        inside = tc.Pose.from_translation([0.1, 0.9, field.floor + 0.1] if env is field else (grid.voxels[0] + 0.5) * 0.1)
        assert tc.intersects(cube, inside, env, None)
        assert tc.distance(cube, above, env, None).distance == pytest.approx(d.distance + 0.05 - 0.01, abs=0.02)
        world = tc.CollisionWorld()
        handle = world.add(env)
        assert list(world.query(sphere, inside)) == [handle]
        assert list(world.query(sphere, tc.Pose.from_translation([50.0, 0.0, 0.0]))) == []
        copy = pickle.loads(pickle.dumps(env))
        assert type(copy) is type(env) and copy.solid and np.array_equal(copy.faces, env.faces)
        assert tc.distance(sphere, above, copy, None).distance == pytest.approx(d.distance)
        assert repr(env).startswith(type(env).__name__)
    assert np.array_equal(pickle.loads(pickle.dumps(field)).heights, field.heights)
    assert np.array_equal(pickle.loads(pickle.dumps(grid)).voxels, grid.voxels)
    with pytest.raises(tc.UnsupportedQuery):
        tc.contacts(sphere, None, field, None)


def _cube_arrays(half):
    v = np.array([[x, y, z] for x in (-half, half) for y in (-half, half) for z in (-half, half)])
    f = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4],
         [1, 5, 7], [1, 7, 3]]
    return v, np.array(f)


_ARM = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="upper"><collision><origin xyz="0 0 0.25"/><geometry><capsule radius="0.04" length="0.4"/></geometry></collision></link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3"/>
  </joint>
</robot>"""


def test_robot_environment(tmp_path):
    from touche import robot

    path = tmp_path / "arm.urdf"
    path.write_text(_ARM)
    arm = robot.load_urdf(path)
    ground = tc.HeightField(np.zeros((3, 3)), spacing=1.0, origin=(-1.0, -1.0))
    lowered = tc.Pose.from_translation([0.0, 0.0, -0.1])  # the base's bottom (z = -0.05) 0.05 above it
    cloud = tc.OccupancyMap.from_points([[0.33, 0.01, 0.27]], 0.1)  # the voxel [0.3, 0.4] x [0, 0.1] x [0.2, 0.3]
    q = np.array([[0.0], [1.0], [-1.0], [2.0]])
    # the capsule (0.01 .. 0.49 above the joint at z = 0.05) reaches the ground only past ~1.9 rad
    assert arm.in_collision(q, [(ground, lowered)], self_collision=False).tolist() == [False, False, False, True]
    assert arm.in_collision(q, [cloud], self_collision=False).tolist() == [False, True, False, False]
    world = tc.CollisionWorld()
    world.add(ground, lowered)
    world.add(cloud)
    assert arm.in_collision(q, world, self_collision=False).tolist() == [False, True, False, True]
    d = arm.distances(np.array([0.0]), [(ground, lowered)], self_collision=False)
    assert d.minimum == pytest.approx(0.05, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# against coal
@needs_coal
def test_voxels_and_distances_against_coal_octree(cloud):
    grid, points, size = cloud
    octree = coal.makeOctree(np.ascontiguousarray(points), size)
    boxes = np.asarray(octree.toBoxes())
    occupied = boxes[boxes[:, 4] >= boxes[:, 5]]  # occupancy >= threshold
    assert np.allclose(occupied[:, 3], size)
    keys = np.round(occupied[:, :3] / size - 0.5).astype(np.int64)
    assert {tuple(k) for k in keys} == {tuple(v) for v in grid.voxels}
    rng = np.random.default_rng(13)
    shapes = [(tc.Sphere(0.05), coal.Sphere(0.05)), (tc.Box([0.1, 0.05, 0.2]), coal.Box(0.1, 0.05, 0.2))]
    compared = 0
    for k, center in enumerate(_translations(rng, 60, [-0.6, -0.6, -0.6], [1.6, 1.6, 1.6])):
        ours, theirs = shapes[k % 2]
        rotation = _random_rotations(rng, 1)[0]
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, center
        result = coal.DistanceResult()
        coal_distance = coal.distance(theirs, coal.Transform3s(rotation, center), octree, coal.Transform3s(),
                                      coal.DistanceRequest(), result)
        request, answer = coal.CollisionRequest(), coal.CollisionResult()
        coal_hit = coal.collide(theirs, coal.Transform3s(rotation, center), octree, coal.Transform3s(), request, answer) > 0
        ours_distance = tc.distance(ours, pose, grid, None)
        if coal_distance > 1e-6:
            assert ours_distance.distance == pytest.approx(coal_distance, abs=1e-6)
            assert not tc.intersects(ours, pose, grid, None) and not coal_hit
            compared += 1
        elif coal_hit:
            assert tc.intersects(ours, pose, grid, None)
    assert compared > 20


@needs_coal
def test_collisions_against_coal_height_field():
    rng = np.random.default_rng(14)
    heights = 0.2 + 0.5 * rng.random((7, 9))
    x_dim, y_dim = 2.0, 1.5
    theirs = coal.HeightFieldAABB(x_dim, y_dim, heights, 0.0)
    ours = tc.HeightField.from_coal(x_dim, y_dim, heights, 0.0)
    assert ours.floor == 0.0
    # the same surface: coal's grid points hold the same heights
    xg, yg = np.asarray(theirs.getXGrid()), np.asarray(theirs.getYGrid())
    np.testing.assert_allclose(ours.height_at(xg[None, :], yg[:, None]), heights, atol=1e-12)
    shapes = [(tc.Sphere(0.08), coal.Sphere(0.08)), (tc.Box([0.2, 0.1, 0.15]), coal.Box(0.2, 0.1, 0.15))]
    agree = compared = 0
    for k, center in enumerate(_translations(rng, 200, [-1.2, -0.9, -0.3], [1.2, 0.9, 1.0])):
        mine, coal_shape = shapes[k % 2]
        rotation = _random_rotations(rng, 1)[0]
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, center
        request, answer = coal.CollisionRequest(), coal.CollisionResult()
        coal_hit = coal.collide(coal_shape, coal.Transform3s(rotation, center), theirs, coal.Transform3s(), request, answer) > 0
        gap = tc.distance(mine, pose, ours, None).signed_distance
        if abs(gap) < 1e-6:
            continue
        compared += 1
        agree += coal_hit == (gap < 0)
    assert compared > 150 and agree == compared
