"""Mesh queries on the BVH (touche.meshquery, touche/_kernels/trees/bvh_mesh.py and its neighbours): rays (first / any /
all hits), closest point, winding number, contains, signed distance.

References: the brute-force kernels the BVH replaced (bit-identical answers expected), the
numpy all-triangle references in naive/mesh_queries.py, and the peers embreex (rays, float32),
trimesh (contains: ray parity; proximity.closest_point).
"""
import gc

import numpy as np
import pytest

import touche as tc
from touche import meshquery
from touche.errors import GeometryError, UnsupportedQuery

from naive import mesh_queries as naive

pytest.importorskip("pybullet_data")
trimesh = pytest.importorskip("trimesh")

MESH_NAMES = ["duck.obj", "teddy2_VHACD_CHs.obj", "differential/diff_ring.stl"]
_LOADED = {}


def load(name):
    if name not in _LOADED:
        vertices, faces = naive.load_pybullet_mesh(name)
        _LOADED[name] = (vertices, faces, tc.TriangleMesh(vertices, faces))
    return _LOADED[name]


def random_pose(rng, translation=1.0):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    rotation = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = rng.normal(size=3) * translation
    return pose


def brute_force_rays(mesh, poses, origins, directions, t_max=np.inf):
    """The pre-BVH path: batch.raycast_many with the brute-force ray family (over all triangles)."""
    from touche import _parallel
    from touche._kernels import batch

    n = len(origins)
    out = (np.empty(n, bool), np.empty(n), np.empty((n, 3)), np.empty((n, 3)), np.empty(n, np.int64))
    _parallel.run(batch.raycast_many, n, batch.ray_engine_address(mesh.kind), *mesh._packed[:4], poses.reshape(-1, 4, 4), np.ascontiguousarray(origins),
                  np.ascontiguousarray(directions), np.atleast_1d(np.asarray(t_max, float)), True, *out, grain=16)
    return out


# ---------------------------------------------------------------------------------------------
# rays


@pytest.mark.parametrize("name", ["duck.obj", "differential/diff_ring.stl"])
def test_first_hit_is_bit_identical_to_the_brute_force(name):
    vertices, faces, mesh = load(name)
    rng = np.random.default_rng(1)
    origins, directions = naive.rays_toward(vertices, 150, rng)
    for pose in (np.eye(4), random_pose(rng)):
        world_o = origins @ pose[:3, :3].T + pose[:3, 3]
        world_d = directions @ pose[:3, :3].T
        result = tc.raycast(mesh, pose, world_o, world_d * 3.0)  # non-unit directions
        hit, t, point, normal, face = brute_force_rays(mesh, pose, world_o, world_d * 3.0)
        assert 0.2 < hit.mean() < 0.8
        np.testing.assert_array_equal(result.hit, hit)
        np.testing.assert_array_equal(result.face, face)
        np.testing.assert_array_equal(result.t, t)
        np.testing.assert_array_equal(result.point[hit], point[hit])
        np.testing.assert_array_equal(result.normal[hit], normal[hit])
        assert np.isnan(result.point[~hit]).all() and np.isinf(result.t[~hit]).all()


def test_large_batch_in_several_windows_is_bit_identical_to_the_brute_force():
    """raycast_first_many cuts a batch into sorted windows (at least 2048 rays each) and settles
    root-box misses before sorting: 9,000 rays (several windows) mixing rays that miss the root
    box (spread 4), rays from inside the box, per-ray poses and per-ray max_t must give exactly the
    brute force's outputs at every index."""
    vertices, faces, mesh = load("duck.obj")
    rng = np.random.default_rng(11)
    n = 9000
    origins, directions = naive.rays_toward(vertices, n, rng)
    wide = rng.random(n) < 0.4  # toward 4x the box: many miss the root box
    origins[wide], directions[wide] = naive.rays_toward(vertices, int(wide.sum()), rng, spread=4.0)
    inside = rng.random(n) < 0.2  # origins inside the box: not all rays enter from outside
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    origins[inside] = lo + rng.random((int(inside.sum()), 3)) * (hi - lo)
    poses = np.stack([random_pose(rng) for _ in range(n)])
    world_o = np.einsum("nij,nj->ni", poses[:, :3, :3], origins) + poses[:, :3, 3]
    world_d = np.einsum("nij,nj->ni", poses[:, :3, :3], directions) * 2.5
    limits = np.where(rng.random(n) < 0.3, rng.uniform(0.0, 2.0, n) * np.linalg.norm(hi - lo), np.inf)
    result = tc.raycast(mesh, poses, world_o, world_d, limits)
    hit, t, point, normal, face = brute_force_rays(mesh, poses, world_o, world_d, limits)
    assert 0.2 < hit.mean() < 0.8
    np.testing.assert_array_equal(result.hit, hit)
    np.testing.assert_array_equal(result.face, face)
    np.testing.assert_array_equal(result.t, t)
    np.testing.assert_array_equal(result.point, point)  # NaN rows compare equal
    np.testing.assert_array_equal(result.normal[hit], normal[hit])
    assert np.isnan(result.normal[~hit]).all()
    anyhit = tc.raycast(mesh, poses, world_o, world_d, limits, mode="any")
    np.testing.assert_array_equal(anyhit.hit, hit)
    # the window size (set from the thread count) changes the order of work, never the answer
    from touche._kernels import bvh_rays

    for window in (1, 1500, n):
        out = (np.empty(n, bool), np.empty(n), np.empty((n, 3)), np.empty((n, 3)), np.empty(n, np.int64))
        bvh_rays.raycast_first_many(*meshquery.mesh_tree(mesh).ray_tree(), poses, world_o, world_d, limits,
                                    bvh_rays.MODE_FIRST, window, *out, 0, -(-n // window))
        np.testing.assert_array_equal(out[1], t)
        np.testing.assert_array_equal(out[4], face)
        np.testing.assert_array_equal(out[2], point)


def test_first_hit_matches_the_naive_reference_and_max_t():
    vertices, faces, mesh = load("duck.obj")
    rng = np.random.default_rng(2)
    origins, directions = naive.rays_toward(vertices, 200, rng)
    limits = rng.uniform(0.5, 3.0, size=200) * np.linalg.norm(np.ptp(vertices, axis=0))
    result = tc.raycast(mesh, None, origins, directions, limits)
    expected = [naive.first_hit(vertices, faces, o, d, m) for o, d, m in zip(origins, directions, limits)]
    t_ref = np.array([e[0] for e in expected])
    face_ref = np.array([e[1] for e in expected])
    assert 0.2 < result.hit.mean() < 0.8
    assert (result.t[result.hit] <= limits[result.hit]).all()
    np.testing.assert_array_equal(result.hit, np.isfinite(t_ref))
    np.testing.assert_allclose(result.t[result.hit], t_ref[result.hit], rtol=1e-9)
    assert (result.face == face_ref).mean() > 0.99  # a differing face must be a tie in t
    for i in np.flatnonzero(result.face != face_ref):
        t_all = naive.ray_triangle_t(vertices, faces, origins[i], directions[i])
        assert abs(t_all[result.face[i]] - t_ref[i]) <= 1e-9 * t_ref[i]


def _grazing(mesh, origin, direction, scale, rng):
    """A ray is grazing (ill-conditioned) when moving its origin by 1e-5 of the mesh size changes
    touche's answer: hit flag, or t by more than 1e-4 relative. Embree (float32) may legitimately
    disagree there."""
    base = tc.raycast(mesh, None, origin, direction)
    offsets = rng.normal(size=(8, 3))
    offsets *= 1e-5 * scale / np.linalg.norm(offsets, axis=1)[:, None]
    moved = tc.raycast(mesh, None, origin + offsets, np.tile(direction, (8, 1)))
    if (moved.hit != base.hit).any():
        return True
    return base.hit and bool((np.abs(moved.t - base.t) > 1e-4 * base.t).any())


@pytest.mark.parametrize("name", MESH_NAMES)
def test_first_hit_agrees_with_embreex(name):
    embree_scene = pytest.importorskip("embreex.rtcore_scene")
    embree_mesh = pytest.importorskip("embreex.mesh_construction")
    vertices, faces, mesh = load(name)
    rng = np.random.default_rng(3)
    origins, directions = naive.rays_toward(vertices, 3000, rng)
    result = tc.raycast(mesh, None, origins, directions)
    scene = embree_scene.EmbreeScene()
    embree_mesh.TriangleMesh(scene, vertices.astype(np.float32)[faces])
    answer = scene.run(origins.astype(np.float32), directions.astype(np.float32), output=1)
    embree_hit = answer["primID"] >= 0
    assert 0.2 < result.hit.mean() < 0.8
    both = embree_hit & result.hit
    t_close = np.abs(answer["tfar"] - result.t) <= 1e-4 * np.where(both, result.t, 1.0)
    disagree = np.flatnonzero((embree_hit != result.hit) | (both & ~t_close))
    scale = np.linalg.norm(np.ptp(vertices, axis=0))
    assert len(disagree) <= 0.01 * len(origins)
    for i in disagree:
        assert _grazing(mesh, origins[i], directions[i], scale, rng), (name, i)
    # where t agrees the faces are the same or touch at the hit (shared edge / vertex)
    same_face = answer["primID"][both] == result.face[both]
    assert same_face.mean() > 0.99


def test_any_hit_agrees_with_first_hit_on_whether_a_ray_hits():
    vertices, faces, mesh = load("teddy2_VHACD_CHs.obj")
    rng = np.random.default_rng(4)
    origins, directions = naive.rays_toward(vertices, 400, rng)
    first = tc.raycast(mesh, None, origins, directions)
    anyhit = tc.raycast(mesh, None, origins, directions, mode="any")
    assert 0.2 < first.hit.mean() < 0.8
    np.testing.assert_array_equal(anyhit.hit, first.hit)
    hit = first.hit
    assert (anyhit.t[hit] >= first.t[hit]).all()
    for i in np.flatnonzero(hit)[:60]:  # the reported face is really hit at the reported t
        t_all = naive.ray_triangle_t(vertices, faces, origins[i], directions[i])
        assert abs(t_all[anyhit.face[i]] - anyhit.t[i]) <= 1e-9 * anyhit.t[i]


def test_all_hits_match_the_naive_reference():
    vertices, faces, mesh = load("duck.obj")
    rng = np.random.default_rng(5)
    origins, directions = naive.rays_toward(vertices, 150, rng)
    origins[:5] = vertices.mean(axis=0)  # a few rays from inside
    hits = tc.raycast(mesh, None, origins, directions, mode="all")
    assert isinstance(hits, meshquery.RayHits)
    counts = hits.counts(len(origins))
    assert 0.2 < (counts > 0).mean() < 0.8
    assert (np.diff(hits.ray) >= 0).all()
    for i in range(len(origins)):
        t_ref, face_ref = naive.all_hits(vertices, faces, origins[i], directions[i])
        mine = hits.ray == i
        assert mine.sum() == len(t_ref)
        np.testing.assert_allclose(hits.t[mine], t_ref, rtol=1e-9)
        assert (np.diff(hits.t[mine]) >= 0).all()
        assert set(hits.face[mine]) == set(face_ref)
        np.testing.assert_allclose(hits.point[mine], origins[i] + hits.t[mine][:, None] * directions[i], atol=1e-12)
    # closed surface: a ray from outside crosses it an even number of times (grazing aside)
    outside = np.arange(5, len(origins))
    assert (counts[outside] % 2 == 0).mean() > 0.97
    assert (counts[:5] % 2 == 1).all()
    first = tc.raycast(mesh, None, origins, directions)
    firsts = np.searchsorted(hits.ray, np.flatnonzero(counts))
    np.testing.assert_array_equal(hits.t[firsts], first.t[counts > 0])


def test_all_hits_respects_max_t_and_is_unsupported_for_primitives():
    vertices, faces, mesh = load("duck.obj")
    rng = np.random.default_rng(6)
    origins, directions = naive.rays_toward(vertices, 100, rng)
    limits = np.full(100, 0.5 * np.linalg.norm(np.ptp(vertices, axis=0)))
    hits = tc.raycast(mesh, None, origins, directions, limits, mode="all")
    assert (hits.t <= limits[hits.ray]).all()
    with pytest.raises(UnsupportedQuery, match="all"):
        tc.raycast(tc.Sphere(1.0), None, [0, 0, 5.0], [0, 0, -1.0], mode="all")
    with pytest.raises(GeometryError, match="mode"):
        tc.raycast(mesh, None, origins, directions, mode="nearest")
    single = tc.raycast(tc.Sphere(1.0), None, [0, 0, 5.0], [0, 0, -1.0], mode="any")
    assert single.hit and single.t == pytest.approx(4.0)


def test_shared_edge_hit_reports_one_face_first_hit():
    # two triangles sharing the diagonal of the unit square; rays straight down the diagonal
    mesh = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    s = np.linspace(0.1, 0.9, 9)
    origins = np.stack([s, s, np.ones(9)], axis=1)
    result = tc.raycast(mesh, None, origins, [0, 0, -1.0])
    assert result.hit.all() and (result.t == 1.0).all()
    assert (result.face == 0).all()  # the tie goes to the lowest face index, once per ray
    hits = tc.raycast(mesh, None, origins, [0, 0, -1.0], mode="all")
    assert (hits.counts(9) >= 1).all()


# ---------------------------------------------------------------------------------------------
# closest point


@pytest.mark.parametrize("name", ["duck.obj", "differential/diff_ring.stl"])
def test_closest_point_matches_naive_and_the_brute_force(name):
    from touche import _parallel
    from touche._kernels import batch

    vertices, faces, mesh = load(name)
    rng = np.random.default_rng(7)
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    points = rng.uniform(lo - 0.2 * (hi - lo), hi + 0.2 * (hi - lo), size=(60, 3))
    points[:10] = vertices[rng.integers(0, len(vertices), 10)] + rng.normal(size=(10, 3)) * 1e-3 * np.ptp(vertices)
    pose = random_pose(rng)
    world = points @ pose[:3, :3].T + pose[:3, 3]
    result = tc.closest_point(mesh, pose, world)
    point, distance, face = meshquery.closest_point_with_face(mesh, pose, world)
    np.testing.assert_array_equal(point, result.point)
    for i, p in enumerate(points):
        ref_point, ref_distance, ref_face = naive.closest_point(vertices, faces, p)
        assert result.distance[i] == pytest.approx(ref_distance, rel=1e-12, abs=1e-13 * np.ptp(vertices))
        np.testing.assert_allclose(result.point[i], pose[:3, :3] @ ref_point + pose[:3, 3],
                                   atol=1e-9 * np.ptp(vertices) + 1e-6 * ref_distance)
        if face[i] != ref_face:  # only a tie (shared edge / vertex) may pick another face
            _, other, _ = naive.closest_point(vertices, faces[[face[i]]], p)
            assert other == pytest.approx(ref_distance, rel=1e-12)
    # bit-identical to the pre-BVH brute force (batch.closest_points_many)
    n = len(world)
    out = (np.empty((n, 3)), np.empty(n), np.empty(n, np.int8))
    _parallel.run(batch.closest_points_many, n, batch.engine_address(mesh.kind, None, mesh.kind, None), *mesh._packed, mesh.scale, pose.reshape(1, 4, 4), world, *out,
                  grain=16)
    np.testing.assert_array_equal(result.point, out[0])
    np.testing.assert_array_equal(result.distance, out[1])
    np.testing.assert_array_equal(result.status, out[2])


def test_closest_point_agrees_with_trimesh_proximity():
    pytest.importorskip("rtree")
    vertices, faces, mesh = load("teddy2_VHACD_CHs.obj")
    rng = np.random.default_rng(8)
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    points = rng.uniform(lo - 0.3 * (hi - lo), hi + 0.3 * (hi - lo), size=(300, 3))
    result = tc.closest_point(mesh, None, points)
    _, distance, _ = trimesh.proximity.closest_point(trimesh.Trimesh(vertices, faces, process=False), points)
    close = np.isclose(result.distance, distance, rtol=1e-9, atol=1e-12)
    # trimesh's candidate search (rtree boxes around a guessed radius) occasionally misses the
    # nearest face; touche is never farther, and where they differ the naive sum decides
    assert close.mean() > 0.98
    assert (result.distance <= distance * (1 + 1e-9) + 1e-12).all()
    for i in np.flatnonzero(~close):
        assert result.distance[i] == pytest.approx(naive.closest_point(vertices, faces, points[i])[1], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# winding number, contains, signed distance


def _probe_points(vertices, rng, n):
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    points = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), size=(n, 3))
    near = vertices[rng.integers(0, len(vertices), n // 4)]
    points[: n // 4] = near + rng.normal(size=near.shape) * 1e-3 * np.linalg.norm(hi - lo)
    return points


@pytest.mark.parametrize("name", MESH_NAMES)
def test_winding_number_matches_the_naive_solid_angle_sum(name):
    vertices, faces, mesh = load(name)
    rng = np.random.default_rng(9)
    points = _probe_points(vertices, rng, 80)
    pose = random_pose(rng)
    winding = tc.winding_number(mesh, pose, points @ pose[:3, :3].T + pose[:3, 3])
    expected = np.array([naive.winding_number(vertices, faces, p) for p in points])
    np.testing.assert_allclose(winding, expected, atol=1e-9)
    inside = np.abs(expected) > 0.5
    assert 0.1 < inside.mean() < 0.9
    np.testing.assert_allclose(winding[inside], np.round(expected[inside]), atol=1e-9)


def test_winding_number_on_an_open_mesh_matches_naive():
    vertices, faces, _ = load("duck.obj")
    open_faces = faces[np.arange(len(faces)) % 7 != 0]  # punch holes
    mesh = tc.TriangleMesh(vertices, open_faces)
    assert not meshquery.is_closed(mesh)
    rng = np.random.default_rng(10)
    points = _probe_points(vertices, rng, 60)
    winding = tc.winding_number(mesh, None, points)
    expected = np.array([naive.winding_number(vertices, open_faces, p) for p in points])
    np.testing.assert_allclose(winding, expected, atol=1e-9)
    assert ((expected > 0.05) & (expected < 0.95)).any()  # genuinely fractional somewhere
    with pytest.raises(GeometryError, match="closed"):
        tc.contains(mesh, None, points)
    with pytest.raises(GeometryError, match="closed"):
        tc.signed_distance_points(mesh, None, points)
    np.testing.assert_array_equal(tc.contains(mesh, None, points, open_ok=True), expected >= 0.5)


@pytest.mark.parametrize("name", ["differential/diff_ring.stl", "duck.obj"])
def test_contains_agrees_with_trimesh_and_the_naive_winding_number(name):
    vertices, faces, mesh = load(name)
    rng = np.random.default_rng(11)
    points = _probe_points(vertices, rng, 400)
    inside = tc.contains(mesh, None, points)
    assert 0.1 < inside.mean() < 0.9
    reference = trimesh.Trimesh(vertices, faces)  # merges vertices: the duck is watertight after
    assert reference.is_watertight
    expected = reference.contains(points)
    _, distance, _ = meshquery.closest_point_with_face(mesh, None, points)
    near_surface = distance < 1e-6 * np.ptp(vertices)
    assert (inside == expected)[~near_surface].mean() > 0.995  # trimesh's ray parity may graze
    naive_inside = np.array([abs(naive.winding_number(vertices, faces, p)) >= 0.5 for p in points[:100]])
    np.testing.assert_array_equal(inside[:100], naive_inside)


@pytest.mark.parametrize("name", MESH_NAMES)
def test_certified_ray_crossings_equal_the_exact_winding_number(name):
    vertices, faces, mesh = load(name)
    tree = meshquery.mesh_tree(mesh)
    rng = np.random.default_rng(16)
    points = _probe_points(vertices, rng, 400)
    points[:20] = vertices[:20]  # on the surface: never certified, the winding number decides
    poses = np.eye(4).reshape(1, 4, 4)
    crossings = np.empty(len(points))
    certain = np.empty(len(points), dtype=bool)
    from touche._kernels import bvh_winding

    bvh_winding.crossings_many(tree.rec_f, tree.rec_i, tree.root, tree.root_box, tree.tri, tree.depth, poses,
                               points, meshquery._CROSSING_DIRECTION, crossings, certain, 0, len(points))
    assert not certain[:20].any()
    assert certain[20:].mean() > 0.9
    exact = meshquery._winding(tree, poses, points)
    np.testing.assert_allclose(crossings[certain], exact[certain], atol=1e-9)
    assert 0.1 < (np.abs(exact) > 0.5).mean() < 0.9
    np.testing.assert_allclose(meshquery._winding_closed(tree, poses, points), exact, atol=1e-12)


def test_signed_distance_sign_is_contains_and_magnitude_is_the_distance():
    vertices, faces, mesh = load("teddy2_VHACD_CHs.obj")
    rng = np.random.default_rng(12)
    points = _probe_points(vertices, rng, 200)
    pose = random_pose(rng)
    world = points @ pose[:3, :3].T + pose[:3, 3]
    signed = tc.signed_distance_points(mesh, pose, world)
    inside = tc.contains(mesh, pose, world)
    distance = tc.closest_point(mesh, pose, world).distance
    assert 0.1 < inside.mean() < 0.9
    np.testing.assert_array_equal(signed < 0, inside & (distance > 0))
    np.testing.assert_array_equal(np.abs(signed), distance)
    single = tc.signed_distance_points(mesh, pose, world[0])
    assert isinstance(single, float) and single == signed[0]
    assert isinstance(tc.contains(mesh, pose, world[0]), bool)


def test_one_pose_per_point_and_axis_parallel_rays():
    vertices, faces, mesh = load("teddy2_VHACD_CHs.obj")
    rng = np.random.default_rng(15)
    points = _probe_points(vertices, rng, 40)
    poses = np.stack([random_pose(rng) for _ in range(40)])
    world = np.einsum("nij,nj->ni", poses[:, :3, :3], points) + poses[:, :3, 3]
    np.testing.assert_allclose(tc.winding_number(mesh, poses, world), tc.winding_number(mesh, None, points), atol=1e-9)
    np.testing.assert_array_equal(tc.contains(mesh, poses, world), tc.contains(mesh, None, points))
    np.testing.assert_allclose(tc.closest_point(mesh, poses, world).distance,
                               tc.closest_point(mesh, None, points).distance, rtol=1e-9, atol=1e-12)
    # rays along the axes (zero and subnormal direction components) through the middle
    center = vertices.mean(axis=0)
    directions = np.array([[1, 0, 0], [0, -1, 0], [0, 0, 1], [1e-320, 0, -1], [0, 5e-324, 1]], dtype=float)
    origins = center - 10.0 * np.ptp(vertices) * directions / np.linalg.norm(directions, axis=1)[:, None]
    result = tc.raycast(mesh, None, origins, directions)
    for o, d, hit, t in zip(origins, directions, result.hit, result.t):
        t_ref, _ = naive.first_hit(vertices, faces, o, d / np.linalg.norm(d))
        assert hit == np.isfinite(t_ref) and (not hit or t == pytest.approx(t_ref, rel=1e-9))
    assert result.hit.any()


def test_inward_facing_closed_mesh_and_surface_points():
    box = trimesh.creation.box(extents=[2.0, 2.0, 2.0])
    outward = tc.TriangleMesh(box.vertices, box.faces)
    inward = tc.TriangleMesh(box.vertices, box.faces[:, ::-1])
    points = np.array([[0, 0, 0], [0.5, 0.5, 0.9], [3, 0, 0], [0, 0, -1.5],
                       [1.0, 0.2, 0.3], [1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # last three on the surface
    expected = [True, True, False, False, True, True, True]
    np.testing.assert_array_equal(tc.contains(outward, None, points), expected)
    np.testing.assert_array_equal(tc.contains(inward, None, points), expected)
    assert tc.winding_number(inward, None, [0, 0, 0]) == pytest.approx(-1.0, abs=1e-12)
    assert tc.signed_distance_points(outward, None, [0, 0, 0]) == pytest.approx(-1.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# degenerate input, scales, caching, bad input


def test_zero_area_and_duplicate_triangles_never_give_nan():
    vertices, faces, _ = load("duck.obj")
    extra = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]]) * 0.01 + vertices.mean(axis=0)  # collinear
    all_vertices = np.vstack([vertices, extra])
    n = len(vertices)
    degenerate = np.array([[n, n + 1, n + 2], [n, n, n + 1], [n + 2, n + 2, n + 2]])
    all_faces = np.vstack([faces, faces[:50], degenerate])  # 50 duplicates + 3 zero-area
    mesh = tc.TriangleMesh(all_vertices, all_faces)
    rng = np.random.default_rng(13)
    origins, directions = naive.rays_toward(vertices, 300, rng)
    origins[:20] = extra[0] + [0, 0, 1.0]  # straight at the degenerate triangles
    directions[:20] = [0, 0, -1.0]
    result = tc.raycast(mesh, None, origins, directions)
    assert not np.isnan(result.t[result.hit]).any() and not np.isnan(result.normal[result.hit]).any()
    assert (result.face < len(faces)).all()  # zero-area triangles are never hit, duplicates lose ties
    plain = tc.raycast(load("duck.obj")[2], None, origins, directions)
    np.testing.assert_array_equal(result.face, plain.face)
    hits = tc.raycast(mesh, None, origins, directions, mode="all")
    assert not np.isnan(hits.t).any()
    points = np.vstack([_probe_points(vertices, rng, 50), extra, extra.mean(axis=0)])
    closest = tc.closest_point(mesh, None, points)
    assert np.isfinite(closest.point).all() and np.isfinite(closest.distance).all()
    assert closest.distance[-4:] == pytest.approx(0.0, abs=1e-12)
    winding = tc.winding_number(mesh, None, points)
    assert np.isfinite(winding).all()
    expected = np.array([naive.winding_number(all_vertices, all_faces, p) for p in points[:20]])
    np.testing.assert_allclose(winding[:20], expected, atol=1e-9)
    assert not meshquery.is_closed(mesh)  # duplicates use their edges four times


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_huge_and_tiny_scales(scale):
    vertices, faces, mesh = load("duck.obj")
    scaled = tc.TriangleMesh(vertices * scale, faces)
    rng = np.random.default_rng(14)
    origins, directions = naive.rays_toward(vertices, 200, rng)
    base = tc.raycast(mesh, None, origins, directions)
    result = tc.raycast(scaled, None, origins * scale, directions)
    assert (result.hit == base.hit).mean() > 0.99
    both = result.hit & base.hit
    np.testing.assert_allclose(result.t[both], base.t[both] * scale, rtol=1e-9)
    points = _probe_points(vertices, rng, 60)
    np.testing.assert_array_equal(tc.contains(scaled, None, points * scale), tc.contains(mesh, None, points))
    np.testing.assert_allclose(tc.closest_point(scaled, None, points * scale).distance,
                               tc.closest_point(mesh, None, points).distance * scale, rtol=1e-9)


def test_tree_is_cached_per_mesh_and_dropped_with_it():
    vertices, faces, _ = load("duck.obj")
    mesh = tc.TriangleMesh(vertices, faces)
    tree = meshquery.mesh_tree(mesh)
    assert meshquery.mesh_tree(mesh) is tree
    assert meshquery.mesh_tree(tc.TriangleMesh(vertices, faces)) is not tree
    before = len(meshquery._TREES)
    del mesh
    gc.collect()
    assert len(meshquery._TREES) < before


def test_single_triangle_and_one_leaf_meshes():
    triangle = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    result = tc.raycast(triangle, None, [[0.2, 0.2, 1.0], [2.0, 2.0, 1.0]], [0, 0, -1.0])
    np.testing.assert_array_equal(result.hit, [True, False])
    assert result.t[0] == 1.0
    tetra = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    assert meshquery.is_closed(tetra)
    np.testing.assert_array_equal(tc.contains(tetra, None, [[0.1, 0.1, 0.1], [1, 1, 1]]), [True, False])
    assert tc.winding_number(tetra, None, [0.1, 0.1, 0.1]) == pytest.approx(1.0, abs=1e-12)


def test_bad_input_raises_geometry_error():
    with pytest.raises(GeometryError):
        tc.TriangleMesh(np.zeros((0, 3)), np.zeros((0, 3), int))  # empty
    with pytest.raises(GeometryError, match="NaN"):
        tc.TriangleMesh([[0, 0, 0], [1, 0, np.nan], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(GeometryError, match="out of range"):
        tc.TriangleMesh(np.eye(3), [[0, 1, 3]])
    _, _, mesh = load("duck.obj")
    for fn in (tc.contains, tc.winding_number, tc.signed_distance_points):
        with pytest.raises(GeometryError, match="NaN"):
            fn(mesh, None, [[0, 0, np.nan]])
        with pytest.raises(GeometryError, match="shape"):
            fn(mesh, None, np.zeros((4, 2)))
        with pytest.raises(GeometryError, match="empty"):
            fn(mesh, None, np.zeros((0, 3)))
        with pytest.raises(GeometryError, match="TriangleMesh"):
            fn(tc.Sphere(1.0), None, [0, 0, 0])
        with pytest.raises(GeometryError, match="differ"):
            fn(mesh, np.tile(np.eye(4), (3, 1, 1)), np.zeros((2, 3)))
    with pytest.raises(GeometryError, match="NaN"):
        tc.raycast(mesh, None, [0, 0, np.inf], [0, 0, 1.0])
    with pytest.raises(GeometryError, match="zero-length"):
        tc.raycast(mesh, None, [0, 0, 0], [0, 0, 0.0])
