"""touche.robot's compiled pair table (touche/_kernels/narrow/pair_table.py, robot/_pairs.py):
every route against touche.intersects on the very same poses (exact equality: the table must
answer what the verb answers), and against the naive pair-by-pair reference (tests/naive/robot.py,
its own kinematics); touching shapes near and far from the origin; tables that follow the
allowed-collision matrix and the obstacle list.
"""
import numpy as np
import pytest

import touche as tc
from touche import robot
from touche.robot._common import as_obstacles

from naive import robot as N

from test_robot import _random_configurations, _synthetic_urdf


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pairs")
    tetra = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    tc.mesh.save(tetra, folder / "tetra.stl")
    text = _synthetic_urdf("tetra.stl")
    (folder / "synthetic.urdf").write_text(text)
    return robot.load_urdf(folder / "synthetic.urdf"), text


def _icosphere(radius, subdivisions=1):
    trimesh = pytest.importorskip("trimesh")
    sphere = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    return sphere.vertices, sphere.faces


def _every_kind_of_obstacle():
    """Obstacles that reach every route of the table: convex shapes (closed forms, polytopes,
    GJK), surface meshes (shape-mesh and mesh-mesh), a solid mesh and a height field (left to
    touche.intersects), a half-space (unbounded: never culled)."""
    vertices, faces = _icosphere(0.12)
    small_vertices, small_faces = _icosphere(0.08)
    heights = np.array([[0.0, 0.02, 0.0], [0.03, 0.05, 0.01], [0.0, 0.02, 0.04]])
    return [
        (tc.Box([0.2, 0.2, 0.2]), tc.Pose.from_translation([0.4, 0.0, 0.45])),
        (tc.Sphere(0.1), tc.Pose.from_translation([-0.25, 0.25, 0.5])),
        (tc.Capsule(0.05, 0.4), tc.Pose.from_rotvec([0.0, 1.2, 0.0], [0.0, -0.3, 0.6])),
        (tc.Cylinder(0.08, 0.3), tc.Pose.from_translation([0.1, 0.35, 0.3])),
        (tc.Rounded(tc.Box([0.1, 0.1, 0.05]), 0.02), tc.Pose.from_translation([-0.3, -0.2, 0.35])),
        (tc.TriangleMesh(small_vertices, small_faces), tc.Pose.from_translation([0.15, 0.1, 0.35])),
        (tc.TriangleMesh(vertices, faces, solid=True), tc.Pose.from_translation([0.3, -0.2, 0.55])),
        (tc.HeightField(heights, spacing=0.2, origin=(-0.2, -0.2)), tc.Pose.from_translation([0.0, 0.0, -0.3])),
        (tc.HalfSpace([0.0, -1.0, 0.0], -0.45), None),
    ]


def test_every_route_answers_as_intersects(synthetic):
    model, _ = synthetic
    obstacles = _every_kind_of_obstacle()
    entries = as_obstacles(obstacles)
    table = model._checked_pairs(entries, True)
    from touche._kernels import pair_table as K

    routes = set(table.pairs[:, K.ROUTE].tolist())
    assert routes == {K.ROUTE_PYTHON, K.ROUTE_MESH_MESH, K.ROUTE_SHAPE_MESH, K.ROUTE_CONVEX}, routes
    q = _random_configurations(model, 300, seed=11)
    report = model.collisions(q, obstacles)
    poses = model.geometry_poses(q)  # (geometries, n, 4, 4)
    expected = np.zeros_like(report.colliding)
    for p, (a, b) in enumerate(zip(table.pair_a, table.pair_b)):
        shape_b, pose_b = (model.geometries[b].shape, poses[b]) if b >= 0 else entries[-b - 1][:2]
        expected[:, p] = tc.intersects(model.geometries[a].shape, poses[a], shape_b, pose_b)
    np.testing.assert_array_equal(report.colliding, expected)
    for route in (K.ROUTE_PYTHON, K.ROUTE_MESH_MESH, K.ROUTE_SHAPE_MESH, K.ROUTE_CONVEX):
        columns = table.pairs[:, K.ROUTE] == route
        assert expected[:, columns].any(), f"route {route}: no colliding pair exercised"
    hits = model.in_collision(q, obstacles)
    np.testing.assert_array_equal(hits, expected.any(axis=1))
    assert 0.2 <= hits.mean() < 1.0, hits.mean()
    # one configuration at a time (no thread pool, the single-configuration path)
    for i in range(0, len(q), 37):
        assert model.in_collision(q[i], obstacles) is bool(expected[i].any())
        np.testing.assert_array_equal(model.collisions(q[i], obstacles).colliding, expected[i])


def _distances_pair_by_pair(model, q, obstacles, pair_a, pair_b):
    """touche.distance per pair over the configurations: what the distance table must equal."""
    entries = as_obstacles(obstacles)
    poses = model.geometry_poses(q)
    fields = [np.empty((len(q), len(pair_a)))] + [np.empty((len(q), len(pair_a), 3)) for _ in range(3)]
    fields.append(np.empty((len(q), len(pair_a)), dtype=np.int8))
    for p, (a, b) in enumerate(zip(pair_a, pair_b)):
        shape_b, pose_b = (model.geometries[b].shape, poses[b]) if b >= 0 else entries[-b - 1][:2]
        result = tc.distance(model.geometries[a].shape, poses[a], shape_b, pose_b)
        for field, value in zip(fields, (result.signed_distance, result.point_a, result.point_b, result.normal,
                                         result.status)):
            field[:, p] = value
    return fields


def test_distance_table_answers_as_distance_on_every_route(synthetic):
    """robot.distances runs one compiled table over the pairs (pair_table_distances_many): every
    field, bit for bit, equals touche.distance pair by pair on the same poses -- closed forms,
    polytopes, GJK, a shape against a mesh in either order, two meshes (apart and crossing: the
    face-normal branch), the solid mesh and height field it leaves to the verb -- for a batch
    and one configuration at a time."""
    model, _ = synthetic
    obstacles = _every_kind_of_obstacle()
    table = model._checked_pairs(as_obstacles(obstacles), True)
    from touche._kernels import pair_table as K

    q = _random_configurations(model, 120, seed=13)
    result = model.distances(q, obstacles)
    expected = _distances_pair_by_pair(model, q, obstacles, table.pair_a, table.pair_b)
    got = (result.signed_distance, result.point_a, result.point_b, result.normal, result.status)
    for name, mine, theirs in zip(("signed", "point_a", "point_b", "normal", "status"), got, expected):
        assert np.array_equal(mine, theirs, equal_nan=True), name
    routes = table.pairs[:, K.ROUTE]
    swapped = table.pairs[:, K.FIRST] != table.pair_a
    assert (swapped & (routes == K.ROUTE_SHAPE_MESH)).any() and (~swapped & (routes == K.ROUTE_SHAPE_MESH)).any()
    meshes = routes == K.ROUTE_MESH_MESH
    assert (result.signed_distance[:, meshes] == 0.0).any() and (result.signed_distance[:, meshes] > 0.0).any()
    for route in (K.ROUTE_PYTHON, K.ROUTE_SHAPE_MESH, K.ROUTE_CONVEX):
        assert (result.signed_distance[:, routes == route] <= 0.0).any(), f"route {route}: no contact exercised"
    for i in range(0, len(q), 29):
        one = model.distances(q[i], obstacles)
        assert np.array_equal(one.signed_distance, expected[0][i], equal_nan=True)
        assert np.array_equal(one.normal, expected[3][i], equal_nan=True)
        assert np.array_equal(one.status, expected[4][i])


def test_routes_against_the_naive_reference(synthetic):
    model, text = synthetic
    obstacles = _every_kind_of_obstacle()
    q = _random_configurations(model, 60, seed=12)
    _, expected = N.brute_force_collisions(model, text, q, as_obstacles(obstacles))
    np.testing.assert_array_equal(model.collisions(q, obstacles).colliding, expected)


def _one_box_robot(offset, scale=1.0):
    return robot.load_urdf(text=f"""<robot name="block">
  <link name="base"><collision><origin xyz="{offset} 0 0"/><geometry><box size="{0.4 * scale} {0.4 * scale} {0.1 * scale}"/>
  </geometry></collision></link>
  <link name="arm"><collision><origin xyz="{offset} 0 {0.5 * scale}"/><geometry><sphere radius="{0.05 * scale}"/></geometry>
  </collision></link>
  <joint name="j" type="prismatic"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1"/></joint>
</robot>""")


@pytest.mark.parametrize("offset, scale", [(0.0, 1.0), (1.0e4, 1.0), (-3.0e5, 1.0), (0.0, 1e-5), (2.0e-3, 1e-5),
                                           (0.0, 1e4), (5.0e6, 1e3)])
@pytest.mark.parametrize("obstacle", ["box", "mesh"])
def test_touching_shapes_are_never_culled(offset, scale, obstacle):
    """A box face on the base's top face: touching counts, at the origin and far from it, where
    rounding in the world transforms is largest (the culling boxes grow by 1e-9 of the
    coordinates, so they never separate touching shapes), for micrometre and kilometre parts;
    a gap of 1e-7 of the coordinates is seen as one."""
    model = _one_box_robot(offset, scale)
    box = tc.Box([0.2 * scale, 0.2 * scale, 0.2 * scale])
    # a surface mesh of the same box: the shape-mesh route
    shape = box if obstacle == "box" else tc.TriangleMesh(box.points[:8], box.triangles)
    q = np.zeros((2, 1))
    gap = 1e-7 * max(scale, abs(offset))
    for z, colliding in ((0.15 * scale, True), (0.15 * scale + gap, False), (0.15 * scale - gap, True)):
        pose = tc.Pose.from_translation([offset, 0.0, z])
        assert tc.intersects(model.geometries[0].shape, model.geometry_poses(q[0])[0], shape, pose) == colliding
        assert model.in_collision(q[0], (shape, pose)) == colliding, (z, offset)
        assert model.in_collision(q, (shape, pose)).tolist() == [colliding] * 2


@pytest.mark.parametrize("offset, scale", [(0.0, 1.0), (1.0e4, 1.0), (-3.0e5, 1.0), (0.0, 1e-5), (5.0e6, 1e3)])
def test_touching_bounding_spheres_are_never_culled(offset, scale):
    """A sphere link touching a sphere obstacle: their bounding spheres are the shapes and touch
    exactly, and the table places a geometry's sphere from its link's frame (a rounding away
    from the geometry's pose): the sphere cull's pad keeps the pair, at the origin and far from
    it: the table answers as touche.intersects does on the pair (which, at touching distance,
    may say either: the obstacle's centre is rounded); a gap of 1e-7 of the coordinates is seen
    as one, an overlap of as much as one."""
    model = _one_box_robot(offset, scale)
    arm = model.geometry_poses(np.zeros(1))[1]
    center = np.asarray(arm)[:3, 3]
    ball = tc.Sphere(0.05 * scale)
    gap = 1e-7 * max(scale, abs(offset))
    for dx, colliding in ((0.1 * scale, None), (0.1 * scale + gap, False), (0.1 * scale - gap, True)):
        pose = tc.Pose.from_translation(center + [dx, 0.0, 0.0])
        verb = tc.intersects(model.geometries[1].shape, arm, ball, pose)
        assert colliding is None or verb == colliding
        assert model.in_collision(np.zeros(1), (ball, pose)) == verb, (dx, offset)
    # exactly touching where the coordinates are exact: the table keeps the pair
    exact = tc.Pose.from_translation(center + [0.125 * scale, 0.0, 0.0]) if offset == 0.0 and scale == 1.0 else None
    if exact is not None:
        small = tc.Sphere(0.075 * scale)
        assert tc.intersects(model.geometries[1].shape, arm, small, exact)
        assert model.in_collision(np.zeros(1), (small, exact))


def test_tables_follow_the_matrix_and_the_obstacles(synthetic, tmp_path):
    tc.mesh.save(tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                 [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]), tmp_path / "tetra.stl")
    model = robot.load_urdf(text=synthetic[1].replace("tetra.stl", str(tmp_path / "tetra.stl")))  # its own matrix
    q = _random_configurations(model, 200, seed=13)
    report = model.collisions(q, None)
    p = int(np.argmax(report.colliding.sum(axis=0)))
    (ga, gb) = report.pairs[p]
    link_a = next(g.link for g in model.geometries if g.name == ga)
    link_b = next(g.link for g in model.geometries if g.name == gb)
    only = report.colliding[:, p] & (report.colliding.sum(axis=1) == 1)
    assert only.any()
    model.allow(link_a, link_b)
    assert not model.in_collision(q[only], None).any()
    model.forbid(link_a, link_b)
    assert model.in_collision(q[only], None).all()
    # the same obstacle shape at another pose: poses are read call by call
    box = tc.Box([0.3, 0.3, 0.3])
    inside = model.in_collision(q[:20], (box, tc.Pose.from_translation([0.0, 0.0, 0.05])), self_collision=False)
    assert inside.all()
    far = model.in_collision(q[:20], (box, tc.Pose.from_translation([5.0, 0.0, 0.0])), self_collision=False)
    assert not far.any()
    model.allow("base", robot.ENVIRONMENT)
    assert model.collisions(q[:3], (box, None), self_collision=False).colliding.shape == (3, len(model.geometries) - 1)


def test_a_checked_robot_pickles_without_its_tables(synthetic):
    import pickle

    model, _ = synthetic
    q = _random_configurations(model, 40, seed=14)
    obstacles = _every_kind_of_obstacle()[:2]
    expected = model.in_collision(q, obstacles)  # builds a table
    copy = pickle.loads(pickle.dumps(model))
    assert "_tables" not in copy.__dict__
    np.testing.assert_array_equal(copy.in_collision(q, obstacles), expected)


def test_obstacles_given_again_are_read_again_when_they_can_change(synthetic):
    """The robot keeps the conversion of obstacle lists that cannot change (shapes, (shape, Pose)
    tuples); a pose array edited in place, an item replaced in the same list, or a configuration
    batch of another length are all seen."""
    model, _ = synthetic
    q = _random_configurations(model, 30, seed=15)
    box = tc.Box([0.3, 0.3, 0.3])
    inside, far = np.eye(4), np.eye(4)
    inside[:3, 3] = [0.0, 0.0, 0.05]
    far[:3, 3] = [5.0, 0.0, 0.0]
    matrix = inside.copy()
    obstacles = [(box, matrix)]  # an array pose: may change, never kept
    assert model.in_collision(q, obstacles, self_collision=False).all()
    matrix[:] = far
    assert not model.in_collision(q, obstacles, self_collision=False).any()
    kept = [(box, tc.Pose(inside))]  # immutable: kept
    assert model.in_collision(q, kept, self_collision=False).all()
    assert model.in_collision(q[0], kept, self_collision=False)
    kept[0] = (box, tc.Pose(far))  # the same list, another item
    assert not model.in_collision(q, kept, self_collision=False).any()
    assert not model.in_collision(q[:7], kept, self_collision=False).any()
    with pytest.raises(tc.GeometryError):  # a batch pose for one obstacle is still refused
        model.in_collision(q, [(box, tc.Pose(np.stack([inside, far])))])
