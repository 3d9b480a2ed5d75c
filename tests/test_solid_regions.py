"""Solid meshes (issue 19 item 2): contact regions, intersection volume, rays and closest points
on solid meshes (touche/solids.py, touche/solid_queries.py; docs/solids.md).

References:
- manifold3d's exact boolean intersection (double precision Mesh64): its volume, and its
  connected components (``decompose``) = the interpenetration regions, with their volumes;
- dense numpy over all triangles (tests/naive/mesh.py): winding numbers (inside / outside)
  and point-to-surface distances (depths), and uniform surface sampling for the deepest point.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import trimesh

import touche as tc
from touche.errors import GeometryError
from naive.mesh import sample_surface, surface_distance, winding_numbers

manifold3d = pytest.importorskip("manifold3d")


def _arrays(mesh):
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


def _from_manifold(shape, shift=(0.0, 0.0, 0.0)):
    mesh = shape.to_mesh64()
    return np.asarray(mesh.vert_properties, dtype=np.float64)[:, :3] - shift, np.asarray(mesh.tri_verts, dtype=np.int64)


def _u_shape():
    """A bridge: a 3 x 1 x 1 deck on two 1 x 1 x 2 legs (x in [-1.5, -0.5] and [0.5, 1.5])."""
    cube = manifold3d.Manifold.cube
    union = cube([3.0, 1.0, 1.0]) + cube([1.0, 1.0, 2.0]).translate([0.0, 0.0, -2.0]) \
        + cube([1.0, 1.0, 2.0]).translate([2.0, 0.0, -2.0])
    return _from_manifold(union, (1.5, 0.5, 0.0))


MESHES = {
    "box": _arrays(trimesh.creation.box([1.0, 0.7, 0.5])),
    "ico": _arrays(trimesh.creation.icosphere(1, 0.6)),
    "torus": _arrays(trimesh.creation.torus(0.6, 0.22, major_sections=14, minor_sections=7)),
    "plate": _arrays(trimesh.creation.box([2.0, 2.0, 0.1])),
    "cylinder": _arrays(trimesh.creation.cylinder(0.3, 2.0, sections=9)),
    "u_shape": _u_shape(),
}


def _solid(name):
    vertices, faces = MESHES[name]
    return tc.TriangleMesh(vertices, faces, solid=True)


def _placed(vertices, pose):
    return vertices @ pose[:3, :3].T + pose[:3, 3]


def _manifold(name, pose):
    vertices, faces = MESHES[name]
    return manifold3d.Manifold(manifold3d.Mesh64(vert_properties=np.ascontiguousarray(_placed(vertices, pose)),
                                                 tri_verts=np.ascontiguousarray(faces, dtype=np.uint32)))


def _reference(name_a, pose_a, name_b, pose_b):
    """manifold3d: (intersection volume, sorted volumes of its connected components)."""
    both = _manifold(name_a, pose_a) ^ _manifold(name_b, pose_b)
    return both.volume(), sorted(part.volume() for part in both.decompose())


def _pose(rng, spread):
    pose = tc.Pose.random(1, seed=int(rng.integers(1 << 30))).matrix[0].copy()
    pose[:3, 3] = rng.uniform(-spread, spread, 3)
    return pose


def _translation(x, y, z):
    pose = np.eye(4)
    pose[:3, 3] = [x, y, z]
    return pose


def _check_points(name_a, pose_a, name_b, pose_b, found):
    """Every contact against the dense references: witnesses on the surfaces, the deeper one in
    the other solid at its depth, the normal and the midway point consistent."""
    va, fa = MESHES[name_a]
    vb, fb = MESHES[name_b]
    wa, wb = _placed(va, pose_a), _placed(vb, pose_b)
    size = max(np.abs(wa).max(), np.abs(wb).max())
    assert found.count == len(found.depths) > 0
    assert (surface_distance(wa, fa, found.point_a) <= 1e-12 * size).all()
    assert (surface_distance(wb, fb, found.point_b) <= 1e-12 * size).all()
    np.testing.assert_allclose(np.linalg.norm(found.normals, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(found.point_b - found.point_a, -found.depths[:, None] * found.normals, atol=1e-12 * size)
    np.testing.assert_allclose(found.points, found.point_a - 0.5 * found.depths[:, None] * found.normals, atol=1e-12 * size)
    deep = found.depths > 1e-9 * size
    # a point of A in B (its depth: its distance to B's surface, point_b the closest point) or
    # a point of B in A
    depth = found.depths[deep]
    tight = 1e-12 * np.maximum(depth, size)
    a_in_b = (np.abs(winding_numbers(wb, fb, found.point_a[deep])) > 0.5) \
        & (np.abs(surface_distance(wb, fb, found.point_a[deep]) - depth) <= tight)
    b_in_a = (np.abs(winding_numbers(wa, fa, found.point_b[deep])) > 0.5) \
        & (np.abs(surface_distance(wa, fa, found.point_b[deep]) - depth) <= tight)
    assert (a_in_b | b_in_a).all()


# ---------------------------------------------------------------------------------------------
# regions and volumes against manifold3d


PAIRS = [("box", "ico"), ("torus", "box"), ("torus", "plate"), ("cylinder", "torus"), ("ico", "cylinder"),
         ("u_shape", "cylinder"), ("torus", "torus")]


@pytest.mark.parametrize("names", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_regions_and_volumes_agree_with_manifold3d(names):
    rng = np.random.default_rng(sum(map(ord, "".join(names))))
    name_a, name_b = names
    a, b = _solid(name_a), _solid(name_b)
    checked = 0
    for _ in range(12):
        pose_a, pose_b = _pose(rng, 0.4), _pose(rng, 0.4)
        total, parts = _reference(name_a, pose_a, name_b, pose_b)
        found = tc.contacts(a, pose_a, b, pose_b)
        assert found.regions == len(parts)
        np.testing.assert_allclose(sorted(found.region_volume), parts, rtol=1e-9, atol=1e-15)
        volume = tc.intersection_volume(a, pose_a, b, pose_b)
        assert volume == pytest.approx(total, rel=1e-9, abs=1e-15)
        if found.regions:
            checked += 1
            assert found.status == tc.Status.PENETRATING
            assert np.bincount(found.region).max() <= 4
            _check_points(name_a, pose_a, name_b, pose_b, found)
            # the deepest point of each region first, regions deepest first
            firsts = np.r_[0, np.flatnonzero(np.diff(found.region)) + 1]
            np.testing.assert_array_equal(found.depths[firsts], found.region_depth)
            assert (np.diff(found.region_depth) <= 0.0).all()
            for r in range(found.regions):
                assert found.depths[found.region == r].max() == found.region_depth[r]
        else:
            assert found.status == tc.Status.SEPARATED and found.count == 0
    assert checked >= 4  # most random placements overlap: the test compares something


def test_two_legs_over_a_bar_are_two_regions():
    bar = np.asarray(trimesh.creation.box([4.0, 0.5, 0.5]).vertices), np.asarray(trimesh.creation.box([4.0, 0.5, 0.5]).faces)
    MESHES["bar"] = bar
    a, b = _solid("u_shape"), _solid("bar")
    pose_a, pose_b = _translation(0.0, 0.0, 0.3), _translation(0.0, 0.2, -1.0)
    total, parts = _reference("u_shape", pose_a, "bar", pose_b)
    found = tc.contacts(a, pose_a, b, pose_b)
    assert found.regions == len(parts) == 2
    np.testing.assert_allclose(sorted(found.region_volume), parts, rtol=1e-12)
    assert tc.intersection_volume(a, pose_a, b, pose_b) == pytest.approx(total, rel=1e-12)
    # one region under each leg, four points each
    for r in range(2):
        x = found.points[found.region == r, 0]
        assert len(x) == 4 and ((x < 0).all() or (x > 0).all())
    assert np.sign(found.points[found.region == 0, 0][0]) != np.sign(found.points[found.region == 1, 0][0])
    _check_points("u_shape", pose_a, "bar", pose_b, found)


@pytest.mark.parametrize("flat, regions", [(True, 1), (False, 2)], ids=["across-the-hole", "through-the-tube"])
def test_plate_through_a_torus(flat, regions):
    """A coarse plate (two triangles a face) across the torus' hole: the part of each plate
    triangle inside the torus is an annulus, its two loops joined by no edge (the hole search
    joins them); upright through the tube, two separate regions."""
    MESHES["big_torus"] = _arrays(trimesh.creation.torus(1.0, 0.3))
    MESHES["slab"] = _arrays(trimesh.creation.box([3.0, 3.0, 0.1] if flat else [3.0, 0.1, 3.0]))
    a, b = _solid("big_torus"), _solid("slab")
    pose_b = _translation(0.01, 0.02, 0.03)
    total, parts = _reference("big_torus", np.eye(4), "slab", pose_b)
    found = tc.contacts(a, None, b, pose_b)
    assert found.regions == len(parts) == regions
    np.testing.assert_allclose(sorted(found.region_volume), parts, rtol=1e-12)
    _check_points("big_torus", np.eye(4), "slab", pose_b, found)


def test_nested_solid_is_one_region_with_its_own_volume():
    MESHES["ball"] = _arrays(trimesh.creation.icosphere(2, 1.0))
    MESHES["cube"] = _arrays(trimesh.creation.box([0.5, 0.5, 0.5]))
    a, b = _solid("ball"), _solid("cube")
    pose_b = tc.Pose.random(1, seed=4).matrix[0].copy()
    pose_b[:3, 3] = [0.1, -0.05, 0.02]
    found = tc.contacts(a, None, b, pose_b)
    assert found.regions == 1 and found.status == tc.Status.PENETRATING
    assert found.region_volume[0] == pytest.approx(0.125, rel=1e-12)
    assert tc.intersection_volume(a, None, b, pose_b) == pytest.approx(0.125, rel=1e-12)
    assert tc.intersection_volume(b, pose_b, a, None) == pytest.approx(0.125, rel=1e-12)
    # the deepest point: at least the deepest cube corner's depth in the ball (dense reference)
    corners = _placed(MESHES["cube"][0], pose_b)
    corner_depth = surface_distance(*MESHES["ball"], corners).max()
    assert found.region_depth[0] >= corner_depth - 1e-12
    _check_points("ball", np.eye(4), "cube", pose_b, found)


def test_touching_faces_give_a_surface_region_and_no_volume():
    MESHES["unit"] = _arrays(trimesh.creation.box([1.0, 1.0, 1.0]))
    a, b = _solid("unit"), _solid("unit")
    pose_b = _translation(0.3, 0.2, 1.0)  # B's bottom face on A's top face
    found = tc.contacts(a, None, b, pose_b)
    assert found.status == tc.Status.TOUCHING and found.regions == 1
    np.testing.assert_array_equal(found.depths, 0.0)
    np.testing.assert_allclose(found.normals, np.tile([0.0, 0.0, 1.0], (found.count, 1)), atol=1e-15)
    # the corners of the contact rectangle [-0.2, 0.5] x [-0.3, 0.5] at z = 0.5
    corners = {(-0.2, -0.3), (-0.2, 0.5), (0.5, -0.3), (0.5, 0.5)}
    assert {tuple(np.round(p[:2], 12) + 0.0) for p in found.points} == corners
    np.testing.assert_allclose(found.points[:, 2], 0.5)
    assert tc.intersection_volume(a, None, b, pose_b) == pytest.approx(0.0, abs=1e-14)
    assert found.region_volume[0] == pytest.approx(0.0, abs=1e-14)
    assert _reference("unit", np.eye(4), "unit", pose_b)[0] == pytest.approx(0.0, abs=1e-14)


@pytest.mark.parametrize("offset", [(0.3, 0.2, 0.0), (0.3, 0.0, 0.0), (0.0, 0.0, 0.0), (0.5, 0.5, 0.5)])
def test_coplanar_faces_volume(offset):
    """Boxes with faces in common planes (vertices on the other surface, edges through edges):
    the volume comes from two infinitesimally shifted placements (docs/solids.md)."""
    MESHES["unit"] = _arrays(trimesh.creation.box([1.0, 1.0, 1.0]))
    a, b = _solid("unit"), _solid("unit")
    pose_b = _translation(*offset)
    total, parts = _reference("unit", np.eye(4), "unit", pose_b)
    assert tc.intersection_volume(a, None, b, pose_b) == pytest.approx(total, rel=1e-9)
    found = tc.contacts(a, None, b, pose_b)
    assert found.regions == len(parts) == 1
    assert found.region_volume[0] == pytest.approx(total, rel=1e-9)


def test_deepest_point_against_dense_sampling():
    """A fine ball pressed into a box's face: the deepest point of the ball's surface inside the
    box is a vertex; 100k points sampled on the ball's surface, kept where the winding number
    says inside the box, never beat the reported depth and come within the sampling's reach."""
    MESHES["fine_ball"] = _arrays(trimesh.creation.icosphere(4, 0.5))
    MESHES["block"] = _arrays(trimesh.creation.box([2.0, 2.0, 1.0]))
    a, b = _solid("block"), _solid("fine_ball")
    pose_b = tc.Pose.random(1, seed=11).matrix[0].copy()
    pose_b[:3, 3] = [0.1, -0.2, 0.5 + 0.5 - 0.137]  # the ball dips 0.137 below the block's top face
    found = tc.contacts(a, None, b, pose_b)
    assert found.regions == 1
    rng = np.random.default_rng(2)
    vb, fb = MESHES["fine_ball"]
    samples = sample_surface(_placed(vb, pose_b), fb, 100_000, rng)
    va, fa = MESHES["block"]
    inside = np.abs(winding_numbers(va, fa, samples)) > 0.5
    sampled = surface_distance(va, fa, samples[inside]).max()
    assert found.region_depth[0] >= sampled - 1e-12
    assert found.region_depth[0] - sampled <= 2e-3  # a few sample spacings (about 1e-3 apart)
    assert found.region_depth[0] == pytest.approx(0.137, abs=2e-3)  # the tessellated sphere's bottom


def test_depth_is_at_least_the_vertex_depth():
    rng = np.random.default_rng(8)
    a, b = _solid("torus"), _solid("u_shape")
    compared = 0
    for _ in range(10):
        pose_a, pose_b = _pose(rng, 0.5), _pose(rng, 0.5)
        found = tc.contacts(a, pose_a, b, pose_b)
        vertex = tc.penetration_depth(a, pose_a, b, pose_b)
        if vertex.depth > 0.0:
            compared += 1
            assert found.region_depth.max() >= vertex.depth - 1e-12
    assert compared >= 3


@pytest.mark.parametrize("names", [("box", "ico"), ("u_shape", "cylinder"), ("torus", "plate")],
                         ids=["box-ico", "u_shape-cylinder", "torus-plate"])
def test_stable_under_small_motion(names):
    """The pose moved by 1e-6 of the size (translation and rotation): the same regions, every
    point within a few 1e-6 of one before."""
    rng = np.random.default_rng(21)
    a, b = _solid(names[0]), _solid(names[1])
    size = max(a.scale, b.scale)
    tried = 0
    for _ in range(8):
        pose_a, pose_b = _pose(rng, 0.3), _pose(rng, 0.3)
        before = tc.contacts(a, pose_a, b, pose_b)
        if before.regions == 0:
            continue
        tried += 1
        nudge = tc.Pose.from_rotvec(rng.normal(size=3) * 1e-6 / np.sqrt(3)).matrix.copy()
        nudge[:3, 3] = rng.normal(size=3) * 1e-6 * size / np.sqrt(3)
        after = tc.contacts(a, pose_a, b, nudge @ pose_b)
        assert after.regions == before.regions
        assert after.count == before.count
        for r in range(before.regions):
            p, q = before.points[before.region == r], after.points[after.region == r]
            moved = np.linalg.norm(p[:, None] - q[None], axis=2).min(axis=1)
            assert moved.max() <= 1e-5 * size
            assert abs(after.region_depth[r] - before.region_depth[r]) <= 1e-5 * size
    assert tried >= 3


def test_max_points_caps_each_region():
    a, b = _solid("torus"), _solid("plate")
    pose_b = tc.Pose.from_rotvec([1.2, 0.3, 0.0]).matrix.copy()
    pose_b[:3, 3] = [0.05, 0.1, 0.0]
    one = tc.contacts(a, None, b, pose_b, max_points=1)
    many = tc.contacts(a, None, b, pose_b, max_points=8)
    assert one.regions == many.regions >= 1
    assert one.count == one.regions
    np.testing.assert_array_equal(one.depths, one.region_depth)
    assert (np.bincount(many.region) <= 8).all() and many.count > one.count


def test_apart_and_batches_and_bad_input():
    a, b = _solid("box"), _solid("ico")
    far = _translation(5.0, 0.0, 0.0)
    found = tc.contacts(a, None, b, far)
    assert found.status == tc.Status.SEPARATED and found.count == 0 and found.regions == 0
    assert found.points.shape == (0, 3) and np.isnan(found.normal).all()
    assert tc.intersection_volume(a, None, b, far) == 0.0
    poses = np.stack([np.eye(4), far, _translation(0.3, 0.0, 0.0)])
    volumes = tc.intersection_volume(a, poses, b, None)
    assert volumes.shape == (3,)
    for i in range(3):
        assert volumes[i] == tc.intersection_volume(a, poses[i], b, None)
    assert volumes[0] > 0.0 and volumes[1] == 0.0
    surface = tc.TriangleMesh(*MESHES["ico"])
    with pytest.raises(GeometryError, match="solid"):
        tc.contacts(a, None, surface, None)
    with pytest.raises(GeometryError, match="solid"):
        tc.intersection_volume(surface, None, b, None)
    with pytest.raises(GeometryError, match="mesh"):
        tc.intersection_volume(tc.Sphere(1.0), None, b, None)
    bad = np.eye(4)
    bad[0, 3] = np.nan
    with pytest.raises(GeometryError):
        tc.contacts(a, bad, b, None)
    with pytest.raises(GeometryError):
        tc.intersection_volume(a, None, b, bad)
    with pytest.raises(GeometryError, match="margin"):
        tc.contacts(a, None, b, None, margin=-0.1)
    with pytest.raises(GeometryError, match="differ"):
        tc.contacts(a, poses, b, poses[:2])
    with pytest.raises(GeometryError, match="max_points"):
        tc.contacts(a, None, b, None, max_points=0)
    with pytest.raises(GeometryError, match="differ"):
        tc.intersection_volume(a, poses, b, poses[:2])
    # two surface meshes keep refusing contacts
    with pytest.raises(tc.UnsupportedQuery):
        tc.contacts(surface, None, tc.TriangleMesh(*MESHES["box"]), None)


# ---------------------------------------------------------------------------------------------
# rays and closest points on solid meshes


def test_rays_from_inside_a_solid_mesh_hit_at_zero():
    vertices, faces = MESHES["torus"]
    solid, surface = tc.TriangleMesh(vertices, faces, solid=True), tc.TriangleMesh(vertices, faces)
    pose = tc.Pose.random(1, seed=5).matrix[0]
    rng = np.random.default_rng(3)
    origins = rng.uniform(-0.9, 0.9, (400, 3)) @ pose[:3, :3].T + pose[:3, 3]
    directions = rng.normal(size=(400, 3))
    inside = np.abs(winding_numbers(_placed(vertices, pose), faces, origins)) > 0.5
    assert 20 < inside.sum() < 380
    for mode in ("first", "any"):
        hits = tc.raycast(solid, pose, origins, directions, mode=mode)
        plain = tc.raycast(surface, pose, origins, directions, mode=mode)
        assert hits.hit[inside].all()
        np.testing.assert_array_equal(hits.t[inside], 0.0)
        np.testing.assert_array_equal(hits.point[inside], origins[inside])
        np.testing.assert_array_equal(hits.normal[inside], 0.0)
        np.testing.assert_array_equal(hits.face[inside], -1)
        # outside: the surface answer, unchanged; solid=False: the surface answer everywhere
        np.testing.assert_array_equal(hits.t[~inside], plain.t[~inside])
        np.testing.assert_array_equal(hits.face[~inside], plain.face[~inside])
        off = tc.raycast(solid, pose, origins, directions, mode=mode, solid=False)
        np.testing.assert_array_equal(off.t, plain.t)
    assert plain.hit[inside].all() and (plain.t[inside] > 0.0).all()  # a surface mesh: where the ray leaves
    every = tc.raycast(solid, pose, origins, directions, mode="all")
    plain_all = tc.raycast(surface, pose, origins, directions, mode="all")
    np.testing.assert_array_equal(every.t, plain_all.t)


def test_closest_point_inside_a_solid_mesh_is_the_point():
    vertices, faces = MESHES["u_shape"]
    solid, surface = tc.TriangleMesh(vertices, faces, solid=True), tc.TriangleMesh(vertices, faces)
    rng = np.random.default_rng(4)
    points = rng.uniform([-1.6, -0.6, -2.1], [1.6, 0.6, 1.1], (500, 3))
    inside = np.abs(winding_numbers(vertices, faces, points)) > 0.5
    assert 50 < inside.sum() < 450
    found = tc.closest_point(solid, None, points)
    plain = tc.closest_point(surface, None, points)
    np.testing.assert_array_equal(found.point[inside], points[inside])
    np.testing.assert_array_equal(found.distance[inside], 0.0)
    np.testing.assert_array_equal(found.status[inside], int(tc.Status.PENETRATING))
    np.testing.assert_array_equal(found.point[~inside], plain.point[~inside])
    np.testing.assert_array_equal(found.distance[~inside], plain.distance[~inside])
    np.testing.assert_allclose(plain.distance, surface_distance(vertices, faces, points), atol=1e-12)
    assert (plain.status != int(tc.Status.PENETRATING)).all()
    # the signed distance stays available: negative inside
    signed = tc.signed_distance_points(solid, None, points)
    np.testing.assert_allclose(signed[inside], -plain.distance[inside])
    one = tc.closest_point(solid, None, [0.0, 0.0, 0.5])
    assert one.status == tc.Status.PENETRATING and one.distance == 0.0


def test_inward_faces_and_unwelded_vertices_give_the_same_regions():
    """A solid may face inward (all triangles reversed) or repeat its vertices per face (welded
    for the topology); neither changes the regions, volumes or depths."""
    rng = np.random.default_rng(13)
    vertices, faces = MESHES["torus"]
    inward = tc.TriangleMesh(vertices, faces[:, ::-1], solid=True)
    unwelded = tc.TriangleMesh(vertices[faces].reshape(-1, 3), np.arange(3 * len(faces)).reshape(-1, 3), solid=True)
    plain, other = _solid("torus"), _solid("u_shape")
    compared = 0
    for _ in range(6):
        pose_a, pose_b = _pose(rng, 0.4), _pose(rng, 0.4)
        reference = tc.contacts(plain, pose_a, other, pose_b)
        compared += reference.regions > 0
        for variant in (inward, unwelded):
            found = tc.contacts(variant, pose_a, other, pose_b)
            assert found.regions == reference.regions
            np.testing.assert_allclose(found.region_volume, reference.region_volume, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(found.region_depth, reference.region_depth, rtol=1e-12, atol=1e-15)
            assert tc.intersection_volume(other, pose_b, variant, pose_a) == pytest.approx(
                tc.intersection_volume(plain, pose_a, other, pose_b), rel=1e-12, abs=1e-15)
    assert compared >= 3


def test_axis_aligned_placements_on_a_grid():
    """Not in general position on purpose: boxes, slabs and bridges turned by quarter turns and
    moved on a 0.25 grid within 1 (faces in common planes, vertices on faces, edges through
    edges). The volume against manifold3d (1e-9 relative); the regions with a volume are groups
    of manifold3d's components; the others are faces resting on faces (depth 0, volume 0)."""
    MESHES["unit"] = _arrays(trimesh.creation.box([1.0, 1.0, 1.0]))
    MESHES["slab"] = _arrays(trimesh.creation.box([2.0, 0.5, 0.5]))
    rng = np.random.default_rng(0)
    names = ["unit", "slab", "u_shape"]
    overlapping = joined = 0
    for _ in range(40):
        name_a, name_b = rng.choice(names, 2)
        turn = int(rng.integers(0, 4))
        pose_b = np.eye(4)
        pose_b[:2, :2] = np.round([[np.cos(turn * np.pi / 2), -np.sin(turn * np.pi / 2)],
                                   [np.sin(turn * np.pi / 2), np.cos(turn * np.pi / 2)]])
        pose_b[:3, 3] = rng.integers(-4, 5, 3) * 0.25
        a, b = _solid(name_a), _solid(name_b)
        total, parts = _reference(name_a, np.eye(4), name_b, pose_b)
        volume = tc.intersection_volume(a, None, b, pose_b)
        assert volume == pytest.approx(total, rel=1e-9, abs=1e-12)
        found = tc.contacts(a, None, b, pose_b)
        solid_parts = [p for p in parts if p > 1e-12]
        with_volume = found.region_volume > 1e-12
        # regions are components of the closed intersection: overlaps joined by faces resting
        # on faces are one region (manifold3d splits them): each region is a group of parts
        left = list(solid_parts)
        for region_volume in sorted(found.region_volume[with_volume]):
            group = next(g for k in range(1, len(left) + 1) for g in itertools.combinations(range(len(left)), k)
                         if abs(sum(left[i] for i in g) - region_volume) <= 1e-9 * region_volume)
            left = [p for i, p in enumerate(left) if i not in group]
        assert left == []
        assert (found.region_depth[~with_volume] <= 1e-12).all()
        overlapping += total > 1e-12
        joined += with_volume.sum() < len(solid_parts)
    assert overlapping >= 10
    assert joined >= 1  # the case of the docs: two overlaps joined by a face contact


def test_contacts_of_a_batch_are_the_single_calls():
    a, b = _solid("box"), _solid("ico")
    poses = np.stack([np.eye(4), _translation(5.0, 0.0, 0.0), _translation(0.3, 0.1, 0.0)])
    batch = tc.contacts(a, poses, b, None, max_points=6)
    assert isinstance(batch, list) and len(batch) == 3
    for pose, found in zip(poses, batch):
        one = tc.contacts(a, pose, b, None, max_points=6)
        assert (found.status, found.regions, found.count) == (one.status, one.regions, one.count)
        np.testing.assert_array_equal(found.points, one.points)
        np.testing.assert_array_equal(found.depths, one.depths)
    assert batch[0].status == tc.Status.PENETRATING and batch[1].status == tc.Status.SEPARATED
    with pytest.raises(GeometryError, match="empty"):  # as every pose argument
        tc.contacts(a, poses[:0], b, None)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_a_margin_adds_one_speculative_contact_to_a_pair_apart_within_it(scale):
    """The speculative contact is the pair's closest points (touche.distance), depth -distance;
    beyond the margin nothing; a pair in contact is answered as without a margin."""
    box = trimesh.creation.box([1.0, 1.0, 1.0])
    ico = trimesh.creation.icosphere(2, 0.5)
    a = tc.TriangleMesh(np.asarray(box.vertices) * scale, box.faces, solid=True)
    b = tc.TriangleMesh(np.asarray(ico.vertices) * scale, ico.faces, solid=True)
    rng = np.random.default_rng(3)
    for _ in range(5):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        pose = np.eye(4)
        pose[:3, 3] = direction * 1.6 * scale  # apart: 1.6 > 0.5 * sqrt(3) + 0.5
        gap = tc.distance(a, None, b, pose)
        assert gap.status == tc.Status.SEPARATED
        found = tc.contacts(a, None, b, pose, margin=1.01 * gap.distance)
        assert (found.status, found.regions, found.count) == (tc.Status.SEPARATED, 1, 1)
        assert found.depths[0] == -gap.distance and found.region_depth[0] == -gap.distance
        np.testing.assert_allclose(found.point_a[0], gap.point_a, atol=1e-12 * scale)
        np.testing.assert_allclose(found.point_b[0], gap.point_b, atol=1e-12 * scale)
        np.testing.assert_allclose(found.points[0], 0.5 * (gap.point_a + gap.point_b), atol=1e-12 * scale)
        np.testing.assert_allclose(found.normals[0], gap.normal, atol=1e-12)
        np.testing.assert_allclose(found.normal, gap.normal, atol=1e-12)
        assert found.region_volume[0] == 0.0
        # beyond the margin: no contact
        beyond = tc.contacts(a, None, b, pose, margin=0.99 * gap.distance)
        assert beyond.count == 0 and beyond.regions == 0
    inside = _translation(0.3 * scale, 0.0, 0.0)
    plain, with_margin = tc.contacts(a, None, b, inside), tc.contacts(a, None, b, inside, margin=0.5 * scale)
    assert with_margin.status == plain.status == tc.Status.PENETRATING
    np.testing.assert_array_equal(with_margin.points, plain.points)
