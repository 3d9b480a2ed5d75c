"""Meshes through the public verbs (touche.intersects / distance / signed_distance).

- A mesh against every primitive and convex shape goes through the mesh's BVH
  (touche/_kernels/narrow/bvh_shape.py). Its reference is the per-triangle brute force of the pair
  engine (pairs.py, reached here through batch.distance_many / intersects_many directly): the
  results must be IDENTICAL (bit for bit: same triangle terms, same lowest-index tie rule), for
  both argument orders, single calls and batches, on seeded random poses with both outcomes
  common, and on touching / coplanar / degenerate configurations and at scales 1e-6 and 1e6.
  The brute force itself is checked against naive references in test_pairs.py.
- Mesh against mesh goes to touche.bvh (surfaces: distance 0 where they meet, status TOUCHING),
  checked here against an all-pairs triangle reference (tests/naive/bvh.py).
"""
from __future__ import annotations

import os
import zlib

import numpy as np
import pytest
from scipy.spatial.transform import Rotation


from naive import bvh as naive_bvh  # noqa: E402

import touche as tc  # noqa: E402
from touche import _parallel  # noqa: E402
from touche._kernels import batch as B  # noqa: E402
from touche._kernels import kinds as K  # noqa: E402

trimesh = pytest.importorskip("trimesh")


def _shapes(s=1.0):
    rng = np.random.default_rng(7)
    return {
        "Point": tc.Point([0.1 * s, -0.2 * s, 0.05 * s]),
        "Sphere": tc.Sphere(0.3 * s, center=[0.1 * s, 0.0, 0.2 * s]),
        "Segment": tc.Segment([-0.4 * s, 0.1 * s, 0.0], [0.3 * s, -0.2 * s, 0.3 * s]),
        "Capsule": tc.Capsule(0.15 * s, 0.6 * s),
        "Ray": tc.Ray([0.2 * s, 0.0, 0.0], [1.0, 0.3, -0.2]),
        "Line": tc.Line([0.0, 0.1 * s, 0.0], [0.2, 1.0, 0.1]),
        "Triangle": tc.Triangle([0.0, 0.0, 0.0], [0.6 * s, 0.05 * s, 0.0], [0.15 * s, 0.45 * s, 0.05 * s]),
        "Tetrahedron": tc.Tetrahedron([0, 0, 0], [0.5 * s, 0.05 * s, 0], [0.1 * s, 0.45 * s, 0.05 * s],
                                      [0.15 * s, 0.1 * s, 0.4 * s]),
        "Box": tc.Box([0.5 * s, 0.3 * s, 0.7 * s]),
        "AABB": tc.AABB([-0.1 * s, -0.25 * s, -0.15 * s], [0.3 * s, 0.2 * s, 0.25 * s]),
        "ConvexPolygon": tc.ConvexPolygon(np.array([[0.3, 0, 0], [0.1, 0.27, 0.0], [-0.22, 0.17, 0],
                                                    [-0.25, -0.15, 0], [0.05, -0.3, 0]]) * s),
        "ConvexPolyhedron": tc.ConvexPolyhedron(rng.normal(size=(12, 3)) * [0.35, 0.25, 0.3] * s),
        "Cylinder": tc.Cylinder(0.2 * s, 0.6 * s),
        "Cone": tc.Cone(0.25 * s, 0.5 * s),
        "Ellipsoid": tc.Ellipsoid([0.35 * s, 0.2 * s, 0.15 * s]),
        "Plane": tc.Plane([0.0, 0.0, 1.0], 0.1 * s),
        "HalfSpace": tc.HalfSpace([0.0, 0.0, 1.0], -0.2 * s),
        "degenerate Triangle": tc.Triangle([0.0, 0.0, 0.0], [0.5 * s, 0.1 * s, 0.0], [0.25 * s, 0.05 * s, 0.0]),
        "zero Segment": tc.Segment([0.1 * s, 0.1 * s, 0.1 * s], [0.1 * s, 0.1 * s, 0.1 * s]),
    }


def _meshes(s=1.0):
    sphere = trimesh.creation.icosphere(2, radius=0.8)
    rng = np.random.default_rng(3)
    soup = rng.normal(size=(90, 3, 3)) * 0.5
    soup[::9, 2] = soup[::9, 0]  # zero-area triangles
    soup[::13] = soup[4]  # duplicates
    soup[5, 1] = soup[5, 0] + 1e-9 * (soup[5, 1] - soup[5, 0])  # a needle
    return {
        "icosphere": tc.TriangleMesh(sphere.vertices * s, sphere.faces),
        "soup": tc.TriangleMesh(soup.reshape(-1, 3) * s, np.arange(270).reshape(-1, 3)),
    }


UNBOUNDED = {"Ray", "Line", "Plane", "HalfSpace"}
MEASURE_ZERO = {"Point", "zero Segment"}  # a point meets a surface with probability 0


def _poses_near(mesh, n, rng, reach):
    """Shape poses aimed at random points of the mesh surface, offset by up to ``reach``."""
    tri = np.asarray(mesh.vertices)[np.asarray(mesh.faces)]
    pick = tri[rng.integers(len(tri), size=n)]
    weights = rng.dirichlet(np.ones(3), size=n)
    anchors = np.einsum("ki,kij->kj", weights, pick)
    offsets = rng.normal(size=(n, 3))
    offsets *= (rng.uniform(0.0, 1.0, n) * reach / np.linalg.norm(offsets, axis=1))[:, None]
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=int(rng.integers(1 << 30))).as_matrix()
    poses[:, :3, 3] = anchors + offsets
    return poses


def _mesh_poses(n, rng, s):
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=int(rng.integers(1 << 30))).as_matrix()
    poses[:, :3, 3] = rng.uniform(-0.05, 0.05, size=(n, 3)) * s
    return poses


def _brute(a, ta, b, tb):
    """The pair engine's brute force over every triangle (pairs.py), bypassing the BVH route."""
    n = max(len(ta), len(tb))
    out = (np.empty(n), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)), np.empty(n, dtype=np.int8))
    _parallel.run(B.distance_many, n, B.engine_address(a.kind, a._packed[1], b.kind, b._packed[1]), *a._packed, a.scale, ta, *b._packed, b.scale, tb, *out, grain=16)
    hit = np.empty(n, dtype=np.bool_)
    _parallel.run(B.intersects_many, n, B.engine_address(a.kind, a._packed[1], b.kind, b._packed[1], True), *a._packed, ta, *b._packed, tb, hit, grain=16)
    return out, hit


def _same(x, y):
    return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)


def _check_identical(shape, mesh, ts, tm):
    """BVH route == brute force, both orders, batch and single calls."""
    (signed, pa, pb, normal, status), hit = _brute(shape, ts, mesh, tm)
    got = tc.distance(shape, ts, mesh, tm)
    assert _same(got.signed_distance, signed)
    assert _same(got.point_a, pa) and _same(got.point_b, pb) and _same(got.normal, normal)
    assert _same(got.status, status)
    assert _same(tc.intersects(shape, ts, mesh, tm), hit)
    flipped = tc.distance(mesh, tm, shape, ts)
    (rsigned, rpa, rpb, rnormal, rstatus), rhit = _brute(mesh, tm, shape, ts)
    assert _same(flipped.signed_distance, rsigned) and _same(flipped.point_a, rpa)
    assert _same(flipped.point_b, rpb) and _same(flipped.normal, rnormal) and _same(flipped.status, rstatus)
    assert _same(tc.intersects(mesh, tm, shape, ts), rhit)
    for k in range(0, len(ts), max(1, len(ts) // 8)):  # single calls take the other driver
        one = tc.distance(shape, ts[k], mesh, tm[k] if len(tm) > 1 else tm[0])
        assert _same(one.signed_distance, signed[k]) and _same(one.point_a, pa[k]) and _same(one.normal, normal[k])
        assert int(one.status) == int(status[k])
        assert tc.intersects(mesh, tm[k] if len(tm) > 1 else tm[0], shape, ts[k]) == bool(hit[k])
    return hit


@pytest.mark.parametrize("name", list(_shapes()))
@pytest.mark.parametrize("mesh_name", ["icosphere", pytest.param("soup", marks=pytest.mark.slow)])
def test_shape_vs_mesh_through_the_bvh_equals_brute_force(name, mesh_name):
    shape = _shapes()[name]
    mesh = _meshes()[mesh_name]
    rng = np.random.default_rng(zlib.crc32(f"{name}-{mesh_name}".encode()))
    n = 160
    factor = 2.0 if mesh_name == "icosphere" else 3.0  # calibrated for hit rates of 20-80 %
    reach = factor * (0.25 if name in UNBOUNDED else shape.scale)
    ts = _poses_near(mesh, n, rng, reach)
    tm = _mesh_poses(n, rng, 1.0)
    ts = np.ascontiguousarray(np.einsum("kij,kjl->kil", tm, ts))  # aim in the mesh's placed frame
    hit = _check_identical(shape, mesh, ts, tm)
    if name not in MEASURE_ZERO and name not in ("Line", "Plane", "HalfSpace"):  # those nearly always meet
        assert 0.2 <= hit.mean() <= 0.8, hit.mean()
    # one mesh pose broadcast against many shape poses
    _check_identical(shape, mesh, ts[:40], np.ascontiguousarray(tm[:1]))


@pytest.mark.parametrize("name", ["Capsule", "Box", "flat Box", "ConvexPolyhedron", "Cylinder", "Cone", "Triangle",
                                  "Ellipsoid"])
def test_shape_vs_mesh_far_and_near_equals_brute_force(name):
    """Separated shapes, from grazing to several mesh sizes away, flat and long ones turned every
    way: the tree prunes by the shape's own box and by the best pair's normal (bvh_shape.py);
    every answer stays bit-identical to the brute force."""
    shapes = dict(_shapes())
    shapes["flat Box"] = tc.Box([1.6, 0.6, 0.04])  # a shelf board: its axis-aligned box is nearly a cube
    shape = shapes[name]
    mesh = _meshes()["icosphere"]
    rng = np.random.default_rng(zlib.crc32(f"far-{name}".encode()))
    n = 120
    ts = _poses_near(mesh, n, rng, 1.0)
    direction = ts[:, :3, 3] / np.linalg.norm(ts[:, :3, 3], axis=1)[:, None]
    ts[:, :3, 3] += direction * rng.uniform(0.0, 4.0, size=(n, 1))  # pushed out to 4 sizes away
    tm = _mesh_poses(n, rng, 1.0)
    ts = np.ascontiguousarray(np.einsum("kij,kjl->kil", tm, ts))
    hit = _check_identical(shape, mesh, ts, tm)
    assert 0.02 <= hit.mean() <= 0.5, hit.mean()


@pytest.mark.parametrize("name", ["Box", "flat Box", "ConvexPolyhedron", "Cylinder"])
def test_shapes_sunk_deep_into_a_fine_mesh_equal_brute_force(name):
    """Shapes sunk into a 1,280-triangle sphere, most of them through many triangles: once the
    search holds a penetrating triangle, a polytope's triangles go straight to their SAT depth
    (pair_mesh.polytope_triangle_distance with a negative cutoff) and GJK stops on triangles
    it proves farther than the best: the answers stay bit-identical to the brute force."""
    shapes = dict(_shapes())
    shapes["flat Box"] = tc.Box([1.6, 0.6, 0.04])
    shape = shapes[name]
    sphere = trimesh.creation.icosphere(3, radius=0.8)
    mesh = tc.TriangleMesh(sphere.vertices, sphere.faces)
    rng = np.random.default_rng(zlib.crc32(f"deep-{name}".encode()))
    n = 80
    ts = _poses_near(mesh, n, rng, 0.05)
    ts[:, :3, 3] *= rng.uniform(0.6, 1.0, size=(n, 1))  # pushed inwards, up to 0.32 deep
    tm = _mesh_poses(n, rng, 1.0)
    ts = np.ascontiguousarray(np.einsum("kij,kjl->kil", tm, ts))
    hit = _check_identical(shape, mesh, ts, tm)
    assert hit.mean() >= 0.8, hit.mean()
    assert (tc.distance(shape, ts, mesh, tm).signed_distance < -0.01).mean() >= 0.5  # deep, not grazing


def _bore(inner_radius, length, sides=128, rings=48):
    """A tube's inner wall (the bore of a housing), finely cut: ``sides`` x ``rings`` quads."""
    angles = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    heights = np.linspace(-0.5 * length, 0.5 * length, rings + 1)
    vertices = np.array([[inner_radius * np.cos(a), inner_radius * np.sin(a), z] for z in heights for a in angles])
    faces = []
    for ring in range(rings):
        for side in range(sides):
            a, b = ring * sides + side, ring * sides + (side + 1) % sides
            faces += [[a, b, b + sides], [a, b + sides, a + sides]]
    return tc.TriangleMesh(vertices, np.array(faces))


@pytest.mark.parametrize("name", ["Cylinder", "Cone", "Capsule"])
def test_shapes_in_a_close_fitting_bore_equal_brute_force(name):
    """A link's cylinder inside a housing's bore, as robot models have them: thousands of
    triangles within a few percent of the radius, each proven apart by the capsule around the
    shape's axis before GJK (bvh_shape_boolean._triangle_apart); tilted and shifted until the shape
    touches the wall. Every answer bit-identical to the brute force, hits and misses both."""
    radius, length = 0.2, 0.6
    shape = {"Cylinder": tc.Cylinder(radius, length), "Cone": tc.Cone(radius, length),
             "Capsule": tc.Capsule(radius, length - 2 * radius)}[name]
    mesh = _bore(radius * 1.02, 1.5 * length)
    rng = np.random.default_rng(zlib.crc32(f"bore-{name}".encode()))
    n = 40
    ts = np.tile(np.eye(4), (n, 1, 1))
    tilt = rng.uniform(0.0, 0.06, n)  # radians: from coaxial to leaning on the wall
    axes = rng.normal(size=(n, 3))
    axes[:, 2] = 0.0
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    ts[:, :3, :3] = Rotation.from_rotvec(axes * tilt[:, None]).as_matrix()
    ts[:, :3, 3] = rng.normal(size=(n, 3)) * [0.002, 0.002, 0.05]
    tm = np.ascontiguousarray(np.tile(np.eye(4), (n, 1, 1)))
    hit = _check_identical(shape, mesh, np.ascontiguousarray(ts), tm)
    assert 0.1 <= hit.mean() <= 0.9, hit.mean()


@pytest.mark.parametrize("scale", [1e-6, 1e6])
@pytest.mark.parametrize("name", ["Sphere", "Capsule", "Box", "ConvexPolyhedron", "Cylinder", "Ray", "Triangle"])
def test_shape_vs_mesh_at_extreme_scales(scale, name):
    shape = _shapes(scale)[name]
    mesh = _meshes(scale)["icosphere"]
    rng = np.random.default_rng(19)
    n = 60
    ts = _poses_near(mesh, n, rng, 0.5 * scale)
    ts[:, :3, 3] += 3.0 * scale  # far from the origin too
    tm = _mesh_poses(n, rng, scale)
    tm[:, :3, 3] += 3.0 * scale
    hit = _check_identical(shape, mesh, ts, tm)
    if name != "Ray":
        assert 0.1 <= hit.mean() <= 0.9


def test_touching_coplanar_and_parallel_configurations():
    """Exact contacts: a box face on a mesh face, a triangle in a mesh face's plane, a segment
    along an edge, a sphere resting on a vertex; identical to the brute force, and touching."""
    box_mesh = trimesh.creation.box([1.0, 1.0, 1.0])
    mesh = tc.TriangleMesh(box_mesh.vertices, box_mesh.faces)
    up = lambda z: np.array([[1.0, 0, 0, 0.1], [0, 1, 0, -0.2], [0, 0, 1, z], [0, 0, 0, 1]])  # noqa: E731
    cases = [
        (tc.Box([0.4, 0.4, 0.4]), up(0.7)),  # face on face
        (tc.Triangle([0, 0, 0], [0.3, 0, 0], [0, 0.3, 0]), up(0.5)),  # coplanar with the top
        (tc.Segment([-0.5, 0.5, 0.5], [0.5, 0.5, 0.5]), np.eye(4)),  # along an edge
        (tc.Sphere(0.25), up(0.75)),  # resting on the top face
        (tc.Capsule(0.1, 0.4), np.array([[1.0, 0, 0, 0.6], [0, 1, 0, 0.0], [0, 0, 1, 0.0], [0, 0, 0, 1]])),
        (tc.ConvexPolygon([[0, 0, 0], [0.2, 0, 0], [0.2, 0.2, 0], [0, 0.2, 0]]), up(0.5)),
    ]
    for shape, pose in cases:
        ts = np.ascontiguousarray(pose[None])
        tm = np.ascontiguousarray(np.eye(4)[None])
        hit = _check_identical(shape, mesh, ts, tm)
        assert hit[0], type(shape).__name__
        result = tc.distance(shape, pose, mesh, None)
        assert abs(result.signed_distance) <= 1e-12
        assert result.status == tc.Status.TOUCHING


def _terrain(scale, cells=8):
    """A gently sloped, finely cut patch ``cells`` x ``cells`` (two triangles a cell), z = 0 along
    its middle row: boxes rest on it face down, edge down and corner down."""
    grid = np.linspace(-1.0, 1.0, cells + 1)
    x, y = np.meshgrid(grid, grid, indexing="ij")
    vertices = np.stack([x, y, 0.1 * x * (x > 0)], axis=-1).reshape(-1, 3) * scale
    faces = []
    for i in range(cells):
        for j in range(cells):
            a = i * (cells + 1) + j
            faces += [[a, a + cells + 1, a + 1], [a + 1, a + cells + 1, a + cells + 2]]
    return tc.TriangleMesh(vertices, np.array(faces))


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_box_intersects_takes_its_own_engine_and_agrees_with_brute_force(scale):
    """A box's intersects runs bvh_shape_boolean._local_box_boolean (the small engine a first box-mesh
    query compiles instead of the whole one); it must answer as the brute force does, on the cases
    its pruning could get wrong: a face resting on the flat part, lifted
    and sunk by a few ulps of the coordinates, edge down and corner down, and random poses over
    the patch with both answers common."""
    from touche._kernels import bvh_shape, bvh_shape_boolean

    mesh = _terrain(scale)
    assert bvh_shape_boolean.boolean_engine_address(K.BOX) == bvh_shape_boolean.MESH_BOX_BOOLEAN_ENGINE.address()
    assert bvh_shape_boolean.boolean_engine_address(K.BOX) != bvh_shape.MESH_POLYTOPE_DISTANCE_ENGINE.address()
    half = np.array([0.15, 0.1, 0.05]) * scale
    box = tc.Box(2 * half)
    eps = np.finfo(float).eps * scale
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T * half

    def resting(rotation, x, y, lift):
        """The box turned by ``rotation``, its lowest point at height ``lift`` over (x, y)."""
        pose = np.eye(4)
        pose[:3, :3] = rotation
        pose[:3, 3] = [x, y, -np.min(corners @ rotation.T, axis=0)[2] + lift]
        return pose

    edge_down = Rotation.from_euler("x", 45, degrees=True).as_matrix()  # the edge along x lowest
    poses = []
    for lift in (0.0, 4 * eps, -4 * eps, 1e-9 * scale, -1e-9 * scale):
        poses.append(resting(np.eye(3), -0.43 * scale, 0.21 * scale, lift))  # face down on the flat half
        poses.append(resting(edge_down, -0.5 * scale, -0.3 * scale, lift))
    rng = np.random.default_rng(41)
    for rotation in Rotation.random(20, random_state=5).as_matrix():  # a corner down
        poses.append(resting(rotation, rng.uniform(-0.8, -0.1) * scale, rng.uniform(-0.8, 0.8) * scale,
                             rng.choice([-1, 0, 1]) * 4 * eps))
    random = _poses_near(mesh, 120, rng, 0.3 * scale)
    ts = np.ascontiguousarray(np.concatenate([np.array(poses), random]))
    tm = np.ascontiguousarray(np.eye(4)[None])
    hit = _check_identical(box, mesh, ts, tm)
    assert hit[0]  # face down, resting exactly (representable: the face is at z = 0)
    assert not hit[6] and not hit[7] and hit[8] and hit[9]  # lifted / sunk by 1e-9 of the size
    assert 0.2 <= hit[len(poses):].mean() <= 0.8, hit[len(poses):].mean()
    _check_engine_batch(bvh_shape_boolean.MESH_BOX_BOOLEAN_ENGINE, box, mesh, ts, tm, hit)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_sphere_and_point_intersects_take_their_own_engine_and_agree_with_brute_force(scale):
    """Spheres and points against a mesh take bvh_shape_boolean._local_point_boolean: resting on the flat
    part (exactly, lifted and sunk by 1e-9 of the size), on a vertex and on an edge of the fold,
    and at random poses over the patch; answers as the brute force's. Their distances take
    bvh_shape._local_point_distance (_check_identical compares them with the brute force's too)."""
    from touche._kernels import bvh_shape, bvh_shape_boolean

    point_distance = bvh_shape.MESH_POINT_DISTANCE_ENGINE.address()
    assert (bvh_shape.distance_engine_address(K.SPHERE, tc.Sphere(1.0)._packed[1]) == point_distance
            == bvh_shape.distance_engine_address(K.POINT, tc.Point([0, 0, 0])._packed[1]))
    mesh = _terrain(scale)
    point_engine = bvh_shape_boolean.MESH_POINT_BOOLEAN_ENGINE.address()
    assert bvh_shape_boolean.boolean_engine_address(K.SPHERE) == point_engine == bvh_shape_boolean.boolean_engine_address(K.POINT)
    radius = 0.125 * scale
    sphere = tc.Sphere(radius)
    on_vertex = np.array([0.0, 0.0, 0.0])  # (0, 0) is a vertex of the fold line x = 0
    spots = [([-0.375 * scale, 0.3 * scale, radius], True), ([-0.375 * scale, 0.3 * scale, radius * (1 + 1e-9)], False),
             ([-0.375 * scale, 0.3 * scale, radius * (1 - 1e-9)], True),
             (on_vertex + [-radius * (1 + 1e-9), 0.0, 0.0], None), (on_vertex + [0.0, 0.0, radius * (1 - 1e-9)], True)]
    poses = []
    for center, expected in spots:
        pose = np.eye(4)
        pose[:3, 3] = center
        poses.append(pose)
    rng = np.random.default_rng(43)
    ts = np.ascontiguousarray(np.concatenate([np.array(poses), _poses_near(mesh, 120, rng, 0.6 * scale)]))
    tm = np.ascontiguousarray(np.eye(4)[None])
    hit = _check_identical(sphere, mesh, ts, tm)
    for k, (_, expected) in enumerate(spots):
        if expected is not None:
            assert hit[k] == expected, k
    assert 0.2 <= hit[len(spots):].mean() <= 0.8, hit[len(spots):].mean()
    point = tc.Point([0.0, 0.0, 0.0])  # on the patch (vertices and the flat part) or off it
    lifted = ts.copy()
    lifted[:len(spots), 2, 3] = [0.0, 1e-12 * scale, 0.0, 0.0, -1e-300]
    _check_identical(point, mesh, lifted[:40], tm)
    _check_engine_batch(bvh_shape_boolean.MESH_POINT_BOOLEAN_ENGINE, sphere, mesh, ts, tm, hit)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_linear_shapes_intersects_take_their_own_engine_and_agree_with_brute_force(scale):
    """Capsules, segments, rays and lines against a mesh take bvh_shape_boolean._local_linear_boolean: a
    capsule lying on the flat part (exactly, lifted and sunk by 1e-9 of the size), a segment
    along a mesh edge, rays and lines grazing the patch, and random poses; answers as the brute
    force's."""
    from touche._kernels import bvh_shape_boolean

    mesh = _terrain(scale)
    engine = bvh_shape_boolean.MESH_LINEAR_BOOLEAN_ENGINE.address()
    assert all(bvh_shape_boolean.boolean_engine_address(kind) == engine for kind in (K.SEGMENT, K.CAPSULE, K.RAY, K.LINE))
    radius = 0.05 * scale
    lying = Rotation.from_euler("y", 90, degrees=True).as_matrix()  # the capsule's z axis along x
    shapes = {"Capsule": (tc.Capsule(radius, 0.4 * scale), radius), "Segment": (tc.Segment([0, 0, 0], [0.5 * scale, 0, 0]), 0.0),
              "Ray": (tc.Ray([0, 0, 0], [1.0, 0.0, 0.0]), 0.0), "Line": (tc.Line([0, 0, 0], [1.0, 0.0, 0.0]), 0.0)}
    rng = np.random.default_rng(47)
    for name, (shape, r) in shapes.items():
        poses = []
        # lifted, a ray or line (unbounded along +x) meets the rising half; sunk, a capsule reaches
        # through the surface, a segment, ray or line passes under it
        unbounded = name in ("Ray", "Line")
        for lift, expected in ((0.0, True), (1e-9 * scale, unbounded), (-1e-9 * scale, r > 0.0)):
            pose = np.eye(4)
            pose[:3, :3] = lying if name == "Capsule" else np.eye(3)
            pose[:3, 3] = [-0.6 * scale, 0.25 * scale, r + lift]  # along x over the flat half, on mesh edges
            poses.append((pose, expected))
        ts = np.ascontiguousarray(np.concatenate([np.array([p for p, _ in poses]),
                                                  _poses_near(mesh, 60, rng, 0.3 * scale)]))
        tm = np.ascontiguousarray(np.eye(4)[None])
        hit = _check_identical(shape, mesh, ts, tm)
        for k, (_, expected) in enumerate(poses):
            if name in ("Capsule", "Segment") or k > 0:  # a ray or line in the patch's plane: no assertion
                assert hit[k] == expected, (name, k)
        _check_engine_batch(bvh_shape_boolean.MESH_LINEAR_BOOLEAN_ENGINE, shape, mesh, ts, tm, hit)


_POLYTOPE_ENGINE_SHAPES = ["Triangle", "degenerate Triangle", "Tetrahedron", "ConvexPolygon", "ConvexPolyhedron", "Plane",
                           "HalfSpace"]


def _check_engine_batch(engine, shape, mesh, ts, tm, hit):
    """The engine called through the batch driver by its address answers ``hit`` (the brute
    force's), and the distance engine refuses the same boolean query."""
    from touche._kernels import bvh_shape

    tree = (mesh.bvh.node_index, mesh.bvh.node_bounds, mesh.bvh.tri_vertices, mesh.bvh.tri_ids, mesh.bvh.depth)
    out = np.empty(len(ts), dtype=np.bool_)
    bvh_shape.mesh_intersects_many(engine.address(), *shape._packed, np.ascontiguousarray(ts), *mesh._packed[2:4],
                                   mesh.scale, tm, *tree, out, 0, len(ts))
    assert np.array_equal(out, hit)
    with pytest.raises(ValueError, match="distance engine answers"):
        bvh_shape.mesh_intersects_many(bvh_shape.distance_engine_address(shape.kind, shape._packed[1]), *shape._packed,
                                       np.ascontiguousarray(ts[:1]), *mesh._packed[2:4], mesh.scale, tm, *tree, out, 0, 1)


@pytest.mark.parametrize("name", _POLYTOPE_ENGINE_SHAPES + ["Cylinder", "Cone", "Ellipsoid", "Rounded", "TaperedCapsule"])
def test_other_shapes_intersects_take_the_polytope_or_curved_engine_and_agree_with_brute_force(name):
    """Every shape the small engines do not take answers intersects through
    bvh_shape_boolean._local_polytope_boolean (polytopes, planes, half-spaces: the SAT) or
    _local_curved_boolean (GJK's boolean; no GJK distance, no EPA in either): over the folded
    patch, lying on it (shapes lowered until their lowest point is at height 0) and at random
    poses, as the brute force's answers."""
    from touche._kernels import bvh_shape_boolean

    extra = {"Rounded": tc.Rounded(tc.ConvexPolyhedron(np.random.default_rng(3).normal(size=(9, 3)) * 0.15), 0.04),
             "TaperedCapsule": tc.TaperedCapsule(0.12, 0.05, 0.3)}
    shape = extra[name] if name in extra else _shapes()[name]
    mesh = _terrain(1.0)
    engine = (bvh_shape_boolean.MESH_POLYTOPE_BOOLEAN_ENGINE if name in _POLYTOPE_ENGINE_SHAPES
              else bvh_shape_boolean.MESH_CURVED_BOOLEAN_ENGINE)
    assert bvh_shape_boolean.boolean_engine_address(shape.kind) == engine.address()
    rng = np.random.default_rng(zlib.crc32(f"convex-{name}".encode()))
    ts = _poses_near(mesh, 60, rng, 0.6)
    ts[:, :3, 3] += [0.0, 0.0, 0.05]
    tm = np.ascontiguousarray(np.eye(4)[None])
    hit = _check_identical(shape, mesh, np.ascontiguousarray(ts), tm)
    if name not in ("Plane", "HalfSpace"):
        assert 0.1 <= hit.mean() <= 0.9, hit.mean()
    _check_engine_batch(engine, shape, mesh, ts, tm, hit)


def test_the_small_engines_refuse_what_they_do_not_answer():
    from touche._kernels import bvh_shape, bvh_shape_boolean

    mesh = _terrain(1.0)
    tree = (mesh.bvh.node_index, mesh.bvh.node_bounds, mesh.bvh.tri_vertices, mesh.bvh.tri_ids)
    stack, stack_lb = np.empty(mesh.bvh.depth + 2, dtype=np.int64), np.empty(mesh.bvh.depth + 2)
    mp = mesh._packed
    box, sphere, capsule = tc.Box([1, 1, 1]), tc.Sphere(0.5), tc.Capsule(0.2, 0.5)
    cases = [(bvh_shape_boolean._local_box_boolean, "box engine", box, False),
             (bvh_shape_boolean._local_box_boolean, "box engine", sphere, True),
             (bvh_shape_boolean._local_point_boolean, "point engine", sphere, False),
             (bvh_shape_boolean._local_point_boolean, "point engine", capsule, True),
             (bvh_shape_boolean._local_linear_boolean, "linear engine", capsule, False),
             (bvh_shape_boolean._local_linear_boolean, "linear engine", box, True),
             (bvh_shape_boolean._local_polytope_boolean, "polytope engine", tc.Tetrahedron(*np.eye(4)[:, :3]), False),
             (bvh_shape_boolean._local_polytope_boolean, "polytope engine", box, True),
             (bvh_shape_boolean._local_polytope_boolean, "polytope engine", tc.Cylinder(0.2, 0.5), True),
             (bvh_shape_boolean._local_curved_boolean, "curved engine", tc.Cylinder(0.2, 0.5), False),
             (bvh_shape_boolean._local_curved_boolean, "curved engine", tc.Tetrahedron(*np.eye(4)[:, :3]), True),
             (bvh_shape_boolean._local_curved_boolean, "curved engine", capsule, True),
             (bvh_shape._local_point_distance, "point distance engine", capsule, False),
             (bvh_shape._local_point_distance, "point distance engine", sphere, True),
             (bvh_shape._local_polytope_distance, "polytope distance engine", box, True),
             (bvh_shape._local_polytope_distance, "polytope distance engine", capsule, False),
             (bvh_shape._local_linear_distance, "linear distance engine", capsule, True),
             (bvh_shape._local_linear_distance, "linear distance engine", box, False),
             (bvh_shape._local_curved_distance, "curved distance engine", tc.Cylinder(0.2, 0.5), True),
             (bvh_shape._local_curved_distance, "curved distance engine", box, False)]
    for engine, message, shape, boolean in cases:
        with pytest.raises(ValueError, match=message):
            engine(*shape._packed, np.eye(4), mp[2], mp[3], np.eye(4), *tree, mesh.scale, boolean, stack, stack_lb)


def test_real_mesh_against_shapes_through_the_bvh():
    pybullet_data = pytest.importorskip("pybullet_data")
    m = trimesh.load(os.path.join(pybullet_data.getDataPath(), "duck.obj"), force="mesh", process=False)
    mesh = tc.TriangleMesh(m.vertices, m.faces)
    rng = np.random.default_rng(4)
    size = float(np.linalg.norm(m.extents))
    for shape in (tc.Sphere(0.08 * size), tc.Box([0.1 * size, 0.2 * size, 0.05 * size]),
                  tc.Segment([0, 0, 0], [0.3 * size, 0.1 * size, 0.0]), tc.Cylinder(0.05 * size, 0.2 * size)):
        ts = _poses_near(mesh, 30, rng, 0.4 * size)
        tm = np.ascontiguousarray(np.eye(4)[None])
        hit = _check_identical(shape, mesh, ts, tm)
        assert 0.2 <= hit.mean() <= 0.8


# ------------------------------------------------------------------------------------------------
# mesh-mesh through the public verbs
# ------------------------------------------------------------------------------------------------


def _small_pair():
    sphere = trimesh.creation.icosphere(1, radius=0.5)
    box = trimesh.creation.box([0.8, 0.5, 1.1])
    return tc.TriangleMesh(sphere.vertices, sphere.faces), tc.TriangleMesh(box.vertices, box.faces)


def test_mesh_mesh_distance_and_intersects_against_all_pairs():
    a, b = _small_pair()
    rng = np.random.default_rng(12)
    n = 80
    pa = _mesh_poses(n, rng, 1.0)
    pb = _mesh_poses(n, rng, 1.0)
    pb[:, :3, 3] += rng.normal(size=(n, 3)) * 0.5
    result = tc.distance(a, pa, b, pb)
    hits = tc.intersects(a, pa, b, pb)
    signed = tc.signed_distance(a, pa, b, pb)
    assert _same(signed, result.signed_distance)
    met = 0
    for k in range(n):
        expected = naive_bvh.min_distance(a, pa[k], b, pb[k])
        assert abs(result.signed_distance[k] - expected) <= 1e-12
        overlapping = bool(naive_bvh.all_overlapping_pairs(a, pa[k], b, pb[k]))
        assert bool(hits[k]) == overlapping or expected <= 1e-12
        assert np.linalg.norm(result.point_b[k] - result.point_a[k]) <= result.signed_distance[k] + 1e-12
        assert abs(np.linalg.norm(result.normal[k]) - 1.0) <= 1e-12
        if result.signed_distance[k] > 1e-12:
            assert result.status[k] == tc.Status.SEPARATED
            np.testing.assert_allclose(result.normal[k] * result.signed_distance[k],
                                       result.point_b[k] - result.point_a[k], atol=1e-12)
        else:
            met += 1
            assert result.status[k] == tc.Status.TOUCHING  # surfaces: never PENETRATING
            assert result.signed_distance[k] == 0.0 and result.distance[k] == 0.0 and result.depth[k] == 0.0
        single = tc.distance(a, pa[k], b, pb[k])
        assert single.signed_distance == result.signed_distance[k]
        assert _same(single.point_a, result.point_a[k]) and _same(single.normal, result.normal[k])
        assert single.status == result.status[k]
        assert tc.intersects(a, pa[k], b, pb[k]) == bool(hits[k])
    assert 0.2 <= met / n <= 0.8


def test_mesh_mesh_contact_normal_is_a_face_normal_of_a():
    a, b = _small_pair()
    pose = tc.Pose.from_translation([0.75, 0.1, 0.0])
    result = tc.distance(a, None, b, pose)
    assert result.status == tc.Status.TOUCHING and result.signed_distance == 0.0
    verts = np.asarray(a.vertices)[np.asarray(a.faces)]
    normals = np.cross(verts[:, 1] - verts[:, 0], verts[:, 2] - verts[:, 0])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    assert np.min(np.linalg.norm(normals - result.normal, axis=1)) <= 1e-12


def test_mesh_mesh_broadcast_and_pose_validation():
    a, b = _small_pair()
    poses = _mesh_poses(5, np.random.default_rng(1), 1.0)
    one = tc.distance(a, None, b, poses)
    other = tc.distance(b, poses, a, None)
    np.testing.assert_allclose(one.signed_distance, other.signed_distance, atol=1e-12)
    assert tc.intersects(a, None, b, poses).shape == (5,)
    bad = np.eye(4)
    bad[0, 0] = 2.0
    for verb in (tc.distance, tc.intersects):
        with pytest.raises(tc.GeometryError, match="pose_b"):
            verb(a, None, b, bad)
        with pytest.raises(tc.GeometryError, match="pose_a"):
            verb(a, np.full((4, 4), np.nan), b, None)
        with pytest.raises(tc.GeometryError, match="differ in length"):
            verb(a, poses, b, poses[:3])


def test_shape_mesh_pose_validation_names_the_argument():
    a, _ = _small_pair()
    sphere = tc.Sphere(0.3)
    bad = np.eye(4)
    bad[1, 1] = 3.0
    for verb in (tc.distance, tc.intersects):
        with pytest.raises(tc.GeometryError, match="pose_a"):
            verb(sphere, bad, a, None)
        with pytest.raises(tc.GeometryError, match="pose_b"):
            verb(sphere, None, a, bad)
        with pytest.raises(tc.GeometryError, match="pose_a"):
            verb(a, bad, sphere, None)
        with pytest.raises(tc.GeometryError, match="pose_b"):
            verb(a, None, sphere, np.tile(bad, (2, 1, 1)))


@pytest.mark.parametrize("name", ["Tetrahedron", "ConvexPolygon", "ConvexPolyhedron", "Triangle"])
def test_polytope_triangle_overlaps_is_the_triangle_terms_boolean(name):
    """pair_mesh.polytope_triangle_overlaps (the polytope engine's per-triangle test: the SAT
    stopping at the first separating axis, the triangle written into scratch) answers
    ``polytope_triangle_term(..., True)[0] <= 0`` -- the brute force's test -- on random
    triangles around the shape, on triangles laid flat on the shape's support plane along a
    random direction (touching, and moved off / into it by 4 ulps of the size), and on zero-area
    triangles (a point, a segment)."""
    from touche._kernels.narrow import pair_mesh

    shape = _shapes()[name]
    kind, params, points, tris, edges = shape._packed
    rng = np.random.default_rng(zlib.crc32(f"overlaps-{name}".encode()))
    scratch_params, scratch_points = np.empty(9), np.empty((11, 3))
    size = shape.scale
    eps = 4 * np.finfo(float).eps * size
    answers = []
    for k in range(300):
        if k % 3 == 0:  # random triangle near the shape
            a, b, c = rng.normal(size=(3, 3)) * size * 0.6
        else:  # flat on the support plane along n, lifted by -eps / 0 / eps
            n = rng.normal(size=3)
            n /= np.linalg.norm(n)
            height = float(np.max(np.asarray(shape.vertices) @ n))
            u = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
            u /= np.linalg.norm(u)
            w = np.cross(n, u)
            center = n * (height + rng.choice([-eps, 0.0, eps]))
            a, b, c = (center + size * (rng.normal() * u + rng.normal() * w) for _ in range(3))
        if k % 25 == 0:
            c = b.copy()  # zero area: a segment
        if k % 50 == 0:
            b = a.copy()
            c = a.copy()  # zero area: a point
        a, b, c = (np.ascontiguousarray(x, dtype=float) for x in (a, b, c))
        expected = pair_mesh.polytope_triangle_term(kind, params, points, tris, edges, a, b, c, True)[0] <= 0.0
        got = pair_mesh.polytope_triangle_overlaps(kind, params, points, tris, edges, a, b, c, scratch_params,
                                                   scratch_points)
        assert got == expected, k
        answers.append(got)
    assert 0.1 <= np.mean(answers) <= 0.9, np.mean(answers)


def test_each_shape_family_takes_its_own_distance_engine():
    """distance_engine_address: points and spheres, linear shapes (a zero-area triangle is its
    longest edge), polytopes with planes and half-spaces, curved shapes -- each family's engine
    compiles its own triangle term alone. (Their answers: the brute-force comparisons above,
    every shape kind through the public distance.)"""
    from touche._kernels import bvh_shape

    families = {bvh_shape.MESH_POINT_DISTANCE_ENGINE: ["Point", "Sphere"],
                bvh_shape.MESH_LINEAR_DISTANCE_ENGINE: ["Segment", "Capsule", "Ray", "Line", "degenerate Triangle",
                                                        "zero Segment"],
                bvh_shape.MESH_POLYTOPE_DISTANCE_ENGINE: ["Triangle", "Tetrahedron", "Box", "AABB", "ConvexPolygon",
                                                          "ConvexPolyhedron", "Plane", "HalfSpace"],
                bvh_shape.MESH_CURVED_DISTANCE_ENGINE: ["Cylinder", "Cone", "Ellipsoid"]}
    shapes = _shapes()
    assert sorted(sum(families.values(), [])) == sorted(shapes)
    for engine, names in families.items():
        for name in names:
            assert bvh_shape.distance_engine_address(shapes[name].kind, shapes[name]._packed[1]) == engine.address(), name
    for shape in (tc.TaperedCapsule(0.12, 0.05, 0.3), tc.RoundedBox([0.2, 0.3, 0.4], 0.05)):
        assert (bvh_shape.distance_engine_address(shape.kind, shape._packed[1])
                == bvh_shape.MESH_CURVED_DISTANCE_ENGINE.address())
