"""touche.robot: URDF reading, forward kinematics, allowed-collision matrix, collision and distance
checks with gradients, bad input.

References: tests/naive/robot.py (a separate URDF walk with scipy rotations; pair-by-pair checks
with touche's single-pair verbs), pybullet's forward kinematics (getLinkState), pinocchio + coal
(collision pairs and distances on example-robot-data's Panda with its SRDF; skipped without
``pin``), finite differences for the gradients.
"""
from pathlib import Path

import numpy as np
import pytest

import touche as tc
from touche import GeometryError, RobotModelError, robot

from naive import robot as N

pybullet_data = pytest.importorskip("pybullet_data")
DATA = Path(pybullet_data.getDataPath())
PANDA_BULLET = DATA / "franka_panda" / "panda.urdf"
KUKA = DATA / "kuka_iiwa" / "model.urdf"


ERD = robot.example_robot_data()
needs_erd = pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed (pip install example-robot-data)")


def _random_configurations(model, count, seed):
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return lower + (upper - lower) * rng.random((count, model.dof))


# ------------------------------------------------------------------------------------------------
# a synthetic robot: a branching tree with every joint type, mimic, unnormalised axes, rpy
# origins and every URDF geometry (mesh scaled and mirrored)
def _synthetic_urdf(mesh_path):
    return f"""<robot name="synthetic">
  <link name="base"><collision><geometry><box size="0.4 0.4 0.1"/></geometry></collision></link>
  <link name="arm1">
    <collision><origin xyz="0 0 0.25" rpy="0 0 0"/><geometry><capsule radius="0.05" length="0.4"/></geometry></collision>
  </link>
  <link name="slider">
    <collision><origin xyz="0.1 0 0" rpy="0.3 -0.2 0.1"/><geometry><box size="0.2 0.08 0.06"/></geometry></collision>
  </link>
  <link name="wheel">
    <collision><origin xyz="0 0 0.05" rpy="1.5707963 0 0"/><geometry><cylinder radius="0.08" length="0.05"/></geometry></collision>
    <collision><origin xyz="0.1 0 0.0"/><geometry><sphere radius="0.04"/></geometry></collision>
  </link>
  <link name="branch">
    <collision><origin xyz="0 0.1 0.1" rpy="0.2 0.4 -0.3"/><geometry><mesh filename="{mesh_path}" scale="0.1 -0.15 0.12"/></geometry></collision>
  </link>
  <link name="twin"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="tip"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="arm1"/><origin xyz="0 0 0.05" rpy="0 0 0.3"/>
    <axis xyz="0 0 2"/><limit lower="-2.5" upper="2.5" effort="1" velocity="1"/>
  </joint>
  <joint name="j2" type="prismatic">
    <parent link="arm1"/><child link="slider"/><origin xyz="0 0 0.45" rpy="0.1 0.2 0.3"/>
    <axis xyz="1 0 0"/><limit lower="-0.1" upper="0.3"/>
  </joint>
  <joint name="j3" type="continuous">
    <parent link="slider"/><child link="wheel"/><origin xyz="0.2 0 0" rpy="-0.4 0 0.2"/>
    <axis xyz="0 1 1"/>
  </joint>
  <joint name="j4" type="revolute">
    <parent link="arm1"/><child link="branch"/><origin xyz="0 0 0.2" rpy="0 0.5 0"/>
    <axis xyz="1 1 0"/><limit lower="-1.5" upper="1.5"/>
  </joint>
  <joint name="j5" type="revolute">
    <parent link="arm1"/><child link="twin"/><origin xyz="0.05 0.1 0.3"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3"/><mimic joint="j4" multiplier="-0.7" offset="0.2"/>
  </joint>
  <joint name="fixed_tip" type="fixed">
    <parent link="wheel"/><child link="tip"/><origin xyz="0 0 0.1" rpy="0 0 1"/>
  </joint>
</robot>"""


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    mesh_path = folder / "tetra.stl"
    tetra = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    tc.mesh.save(tetra, mesh_path)
    text = _synthetic_urdf("tetra.stl")
    urdf = folder / "synthetic.urdf"
    urdf.write_text(text)
    return robot.load_urdf(urdf), text


def _obstacles():
    return [
        (tc.Box([0.2, 0.2, 0.2]), tc.Pose.from_translation([0.4, 0.0, 0.45])),
        (tc.Sphere(0.1), tc.Pose.from_translation([-0.25, 0.25, 0.5])),
    ]


# ------------------------------------------------------------------------------------------------
# reading
def test_synthetic_robot_is_read_as_written(synthetic):
    model, _ = synthetic
    assert model.name == "synthetic"
    assert model.link_names[0] == "base"
    assert model.joint_names == ["j1", "j2", "j3", "j4"]  # j5 mimics j4; the fixed joint is no column
    assert model.dof == 4
    np.testing.assert_array_equal(model.lower, [-2.5, -0.1, -np.inf, -1.5])
    np.testing.assert_array_equal(model.upper, [2.5, 0.3, np.inf, 1.5])
    names = [g.name for g in model.geometries]
    assert names == ["base", "arm1", "slider", "wheel[0]", "wheel[1]", "branch", "twin"]
    kinds = [type(g.shape).__name__ for g in model.geometries]
    assert kinds == ["Box", "Capsule", "Box", "Cylinder", "Sphere", "TriangleMesh", "Sphere"]
    # the mesh scale (with a mirroring factor) is applied to the vertices
    branch = model.geometries[5].shape
    np.testing.assert_allclose(branch.vertices.max(axis=0), [0.1, 0.0, 0.12])
    np.testing.assert_allclose(branch.vertices.min(axis=0), [0.0, -0.15, 0.0])


def test_package_paths_resolve_against_a_given_root_and_the_urdf_folder(tmp_path):
    mesh = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    (tmp_path / "pkgroot" / "my_pkg" / "meshes").mkdir(parents=True)
    tc.mesh.save(mesh, tmp_path / "pkgroot" / "my_pkg" / "meshes" / "m.stl")
    text = """<robot name="r"><link name="a"><collision><geometry>
      <mesh filename="package://my_pkg/meshes/m.stl"/></geometry></collision></link></robot>"""
    with pytest.raises(RobotModelError, match="package 'my_pkg'"):
        robot.load_urdf(text=text)
    for dirs in (tmp_path / "pkgroot", [str(tmp_path / "pkgroot")], {"my_pkg": tmp_path / "pkgroot" / "my_pkg"},
                 tmp_path / "pkgroot" / "my_pkg"):
        model = robot.load_urdf(text=text, package_dirs=dirs)
        assert isinstance(model.geometries[0].shape, tc.TriangleMesh)
    # pybullet's style: package://meshes/... next to the URDF
    (tmp_path / "pkgroot" / "my_pkg" / "r.urdf").write_text(text.replace("package://my_pkg/", "package://meshes/"
                                                                          ).replace("meshes/meshes", "meshes"))
    assert len(robot.load_urdf(tmp_path / "pkgroot" / "my_pkg" / "r.urdf").geometries) == 1


def test_convex_meshes_are_hulls():
    model = robot.load_urdf(KUKA, meshes="convex")
    assert all(isinstance(g.shape, tc.ConvexPolyhedron) for g in model.geometries)


# ------------------------------------------------------------------------------------------------
# forward kinematics
def _check_fk_against_naive(model, text, configurations):
    batch = model.forward_kinematics(configurations)
    assert batch.shape == (len(configurations), len(model.link_names), 4, 4)
    for i, q in enumerate(configurations):
        reference = N.forward_kinematics(text, dict(zip(model.joint_names, q)))
        for k, link in enumerate(model.link_names):
            np.testing.assert_allclose(batch[i, k], reference[link], atol=1e-12, err_msg=f"{link} at {i}")
    single = model.forward_kinematics(configurations[0])
    assert single.shape == (len(model.link_names), 4, 4)
    np.testing.assert_array_equal(single, batch[0])


def test_forward_kinematics_synthetic_against_naive(synthetic):
    model, text = synthetic
    _check_fk_against_naive(model, text, _random_configurations(model, 40, seed=1))


@pytest.mark.parametrize("path", [PANDA_BULLET, KUKA], ids=["panda", "kuka"])
def test_forward_kinematics_against_naive_pybullet_data(path):
    model = robot.load_urdf(path)
    _check_fk_against_naive(model, path.read_text(), _random_configurations(model, 25, seed=2))


@needs_erd
@pytest.mark.parametrize("name", ["panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf"])
def test_forward_kinematics_against_naive_example_robot_data(name):
    model = robot.load_urdf(ERD / name)
    _check_fk_against_naive(model, (ERD / name).read_text(), _random_configurations(model, 25, seed=3))


@pytest.mark.parametrize("path", [PANDA_BULLET, KUKA], ids=["panda", "kuka"])
def test_forward_kinematics_against_pybullet(path):
    pybullet = pytest.importorskip("pybullet")
    model = robot.load_urdf(path)
    configurations = _random_configurations(model, 30, seed=4)
    poses = model.forward_kinematics(configurations)
    client = pybullet.connect(pybullet.DIRECT)
    try:
        body = pybullet.loadURDF(str(path), useFixedBase=True, physicsClientId=client)
        joints = [pybullet.getJointInfo(body, j, physicsClientId=client) for j in
                  range(pybullet.getNumJoints(body, physicsClientId=client))]
        for i, q in enumerate(configurations):
            values = dict(zip(model.joint_names, q))
            values["panda_finger_joint2"] = values.get("panda_finger_joint1", 0.0)  # the mimic, set by hand
            for j, info in enumerate(joints):
                pybullet.resetJointState(body, j, values.get(info[1].decode(), 0.0), physicsClientId=client)
            for j, info in enumerate(joints):
                state = pybullet.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=client)
                expected = tc.Pose.from_quaternion(state[5], state[4], order="xyzw").matrix
                link = model.link_index(info[12].decode())
                np.testing.assert_allclose(poses[i, link], expected, atol=1e-6)
    finally:
        pybullet.disconnect(client)


# ------------------------------------------------------------------------------------------------
# allowed-collision matrix
def test_adjacent_and_rigidly_attached_links_are_allowed(synthetic):
    model, _ = synthetic
    assert model.is_allowed("base", "arm1")  # a joint between them
    assert model.is_allowed("arm1", "slider") and model.is_allowed("slider", "wheel")
    assert model.is_allowed("wheel", "tip")  # a fixed joint
    assert not model.is_allowed("base", "slider")
    assert not model.is_allowed("branch", "twin")  # siblings
    pairs = model.self_pairs
    links = [(model.geometries[a].link, model.geometries[b].link) for a, b in pairs]
    assert ("base", "slider") in links and ("branch", "twin") in links
    assert all(a != b for a, b in links)  # never two geometries of one link
    assert model.allowed_collisions.shape == (len(model.link_names),) * 2
    assert (model.allowed_collisions == model.allowed_collisions.T).all()


def test_nearest_ancestor_with_geometry_is_adjacent():
    """Panda: link7 -> link8 (no geometry) -> hand: link7 and hand are adjacent (as MoveIt says)."""
    model = robot.load_urdf(PANDA_BULLET)
    assert model.is_allowed("panda_link7", "panda_hand")
    assert not model.is_allowed("panda_link5", "panda_hand")


def test_user_additions_and_environment(synthetic):
    model, _ = synthetic
    before = len(model.self_pairs)
    model.allow("base", "slider")
    assert model.is_allowed("slider", "base") and len(model.self_pairs) == before - 1
    model.forbid("base", "slider")
    assert len(model.self_pairs) == before
    q = np.zeros(model.dof)
    obstacle = (tc.Sphere(5.0), None)  # swallows the robot: every geometry is checked against it
    assert len(model.distances(q, [obstacle], self_collision=False).pairs) == len(model.geometries)
    model.allow("base", robot.ENVIRONMENT)
    try:
        names = model.distances(q, [obstacle], self_collision=False).pairs
        assert len(names) == len(model.geometries) - 1 and ("base", "obstacle 0") not in names
        assert model.is_allowed(robot.ENVIRONMENT, "base")
    finally:
        model.forbid("base", robot.ENVIRONMENT)
    with pytest.raises(GeometryError, match="no link 'nope'"):
        model.allow("base", "nope")
    with pytest.raises(GeometryError):
        model.allow("base", "base")


@needs_erd
def test_srdf_disabled_pairs_are_allowed():
    urdf = ERD / "panda_description" / "urdf" / "panda.urdf"
    srdf = ERD / "panda_description" / "srdf" / "panda.srdf"
    plain = robot.load_urdf(urdf)
    model = robot.load_urdf(urdf, srdf)
    disabled = N.__dict__  # noqa: F841 (the SRDF is read independently below)
    import xml.etree.ElementTree as ET

    for element in ET.parse(srdf).getroot().findall("disable_collisions"):
        assert model.is_allowed(element.get("link1"), element.get("link2"))
    assert len(model.self_pairs) < len(plain.self_pairs)
    assert not model.is_allowed("panda_link1", "panda_link5")  # not disabled by the SRDF


# ------------------------------------------------------------------------------------------------
# checks against brute force
def test_collisions_against_brute_force_synthetic(synthetic):
    model, text = synthetic
    configurations = _random_configurations(model, 150, seed=5)
    obstacles = _obstacles()
    pairs, expected = N.brute_force_collisions(model, text, configurations, robot.as_obstacles(obstacles))
    report = model.collisions(configurations, obstacles)
    assert len(report.pairs) == len(pairs)
    np.testing.assert_array_equal(report.colliding, expected)
    hits = model.in_collision(configurations, obstacles)
    np.testing.assert_array_equal(hits, expected.any(axis=1))
    assert 0.2 <= hits.mean() <= 0.8, hits.mean()  # both outcomes exercised
    assert 0.05 <= expected[:, : len(model.self_pairs)].any(axis=1).mean()  # self-collisions occur
    # one configuration: a bool, and (pairs,) rows
    assert model.in_collision(configurations[0], obstacles) is bool(expected[0].any())
    single = model.collisions(configurations[0], obstacles)
    np.testing.assert_array_equal(single.colliding, expected[0])
    assert single.colliding_pairs() == [report.pairs[p] for p in np.flatnonzero(expected[0])]


def test_collisions_against_brute_force_panda_meshes():
    model = robot.load_urdf(PANDA_BULLET)
    configurations = _random_configurations(model, 60, seed=6)
    obstacles = [(tc.Box([0.4, 0.4, 0.4]), tc.Pose.from_translation([0.45, 0.0, 0.5]))]
    pairs, expected = N.brute_force_collisions(model, PANDA_BULLET.read_text(), configurations,
                                               robot.as_obstacles(obstacles))
    np.testing.assert_array_equal(model.collisions(configurations, obstacles).colliding, expected)
    hits = model.in_collision(configurations, obstacles)
    np.testing.assert_array_equal(hits, expected.any(axis=1))
    assert 0.2 <= hits.mean() <= 0.8, hits.mean()


def test_distances_against_brute_force(synthetic):
    model, text = synthetic
    configurations = _random_configurations(model, 40, seed=7)
    obstacles = _obstacles()
    pairs, signed, point_a, point_b = N.brute_force_distances(model, text, configurations,
                                                              robot.as_obstacles(obstacles))
    result = model.distances(configurations, obstacles)
    assert result.signed_distance.shape == (40, len(pairs))
    assert result.point_a.shape == result.normal.shape == (40, len(pairs), 3)
    np.testing.assert_allclose(result.signed_distance, signed, atol=1e-9)
    # witness points: the brute force's, or (where the closest points are not unique, e.g. two
    # parallel faces, and the batch driver picks another pair) other points as good
    same = np.isclose(result.point_a, point_a, atol=1e-9).all(axis=2) & np.isclose(result.point_b, point_b,
                                                                                     atol=1e-9).all(axis=2)
    assert same.mean() > 0.97
    obstacles_list = robot.as_obstacles(obstacles)
    poses = model.geometry_poses(configurations)
    for i, p in zip(*np.nonzero(~same)):
        a, b = pairs[p]
        shape_b, pose_b = (model.geometries[b].shape, poses[b, i]) if b >= 0 else obstacles_list[-b - 1][:2]
        gap = result.point_b[i, p] - result.point_a[i, p]
        assert abs(gap @ result.normal[i, p] - result.signed_distance[i, p]) < 1e-9
        for shape, pose, point in ((model.geometries[a].shape, poses[a, i], result.point_a[i, p]),
                                   (shape_b, pose_b, result.point_b[i, p])):
            assert tc.closest_point(shape, pose, point).distance < 1e-9  # on (or in) its shape
    np.testing.assert_allclose(result.minimum, signed.min(axis=1), atol=1e-9)
    np.testing.assert_array_equal(result.signed_distance[np.arange(40), result.closest_pair], result.minimum)
    # collisions agree with the sign of the distance, away from touching
    colliding = model.collisions(configurations, obstacles).colliding
    clear = np.abs(signed) > 1e-9
    np.testing.assert_array_equal(colliding[clear], (signed <= 0)[clear])
    one = model.distances(configurations[3], obstacles)
    assert isinstance(one.minimum, float) and one.signed_distance.shape == (len(pairs),)
    np.testing.assert_array_equal(one.signed_distance, result.signed_distance[3])


def test_no_pairs_and_no_obstacles(synthetic):
    model, _ = synthetic
    q = np.zeros((3, model.dof))
    result = model.distances(q, None, self_collision=False)
    assert result.signed_distance.shape == (3, 0) and (result.minimum == np.inf).all()
    assert (result.closest_pair == -1).all()
    assert model.in_collision(q, [], self_collision=False).tolist() == [False] * 3


def test_obstacle_forms(synthetic):
    model, _ = synthetic
    q = _random_configurations(model, 20, seed=8)
    box, pose = _obstacles()[0]
    expected = model.in_collision(q, [(box, pose)], self_collision=False)
    assert expected.any() and not expected.all()
    np.testing.assert_array_equal(model.in_collision(q, (box, pose), self_collision=False), expected)
    np.testing.assert_array_equal(model.in_collision(q, [(box, pose.matrix)], self_collision=False), expected)
    world = tc.CollisionWorld()
    world.add(box, pose)
    np.testing.assert_array_equal(model.in_collision(q, world, self_collision=False), expected)
    floor = tc.HalfSpace([0.0, 0.0, 1.0], 0.02)  # unbounded: never culled by the bounding spheres
    assert model.in_collision(np.zeros(model.dof), floor, self_collision=False)
    with pytest.raises(GeometryError):
        model.in_collision(q, [(box, np.stack([pose.matrix] * 2))])


@needs_erd
@pytest.mark.parametrize("name", ["panda", "ur5", "kinova"])
def test_against_pinocchio_and_coal(name):
    pin = pytest.importorskip("pinocchio")
    if name == "kinova":  # .dae collision meshes (trimesh reads them with pycollada); continuous joints
        pytest.importorskip("collada")
    files = {"panda": ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf"),
             "ur5": ("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf"),
             "kinova": ("kinova_description/robots/kinova.urdf", "kinova_description/srdf/kinova.srdf")}[name]
    urdf, srdf = ERD / files[0], ERD / files[1]
    model = robot.load_urdf(urdf, srdf)
    pmodel, gmodel = pin.buildModelsFromUrdf(str(urdf), package_dirs=[str(ERD.parent.parent)],
                                             geometry_types=pin.GeometryType.COLLISION)
    ids = {}
    for geometry in model.geometries:  # pinocchio names a link's k-th collision "<link>_<k>"
        index = 0 if "[" not in geometry.name else int(geometry.name.split("[")[1][:-1])
        ids[geometry.name] = gmodel.getGeometryId(f"{geometry.link}_{index}")
    gmodel.removeAllCollisionPairs()
    for a, b in model.self_pairs:
        gmodel.addCollisionPair(pin.CollisionPair(ids[model.geometries[a].name], ids[model.geometries[b].name]))
    gdata = gmodel.createData()
    pdata = pmodel.createData()
    configurations = _random_configurations(model, 200, seed=9)
    report = model.collisions(configurations)
    distances = model.distances(configurations[:30])
    agree = 0
    for i, q in enumerate(configurations):
        pq = pin.neutral(pmodel)
        for column, joint in enumerate(model.joint_names + (["panda_finger_joint2"] if name == "panda" else [])):
            value = q[model.joint_names.index("panda_finger_joint1")] if joint == "panda_finger_joint2" else q[column]
            frame = pmodel.joints[pmodel.getJointId(joint)]
            if frame.nq == 2:  # continuous: pinocchio keeps (cos, sin) of the angle
                pq[frame.idx_q], pq[frame.idx_q + 1] = np.cos(value), np.sin(value)
            else:
                pq[frame.idx_q] = value
        pin.computeCollisions(pmodel, pdata, gmodel, gdata, pq, False)
        theirs = np.array([r.isCollision() for r in gdata.collisionResults])
        ours = report.colliding[i]
        if i < 30:
            pin.computeDistances(pmodel, pdata, gmodel, gdata, pq)
            coal_distance = np.array([r.min_distance for r in gdata.distanceResults])
            apart = ~theirs & ~ours
            np.testing.assert_allclose(distances.signed_distance[i][apart], coal_distance[apart], atol=1e-6, rtol=1e-6)
        disagree = np.flatnonzero(theirs != ours)
        for p in disagree:  # only within a hair of touching
            a, b = model.self_pairs[p]
            pose = model.geometry_poses(q)
            gap = tc.distance(model.geometries[a].shape, pose[a], model.geometries[b].shape, pose[b]).distance
            assert gap < 1e-6, (i, report.pairs[p], gap)
        agree += len(ours) - len(disagree)
    assert agree >= 0.999 * report.colliding.size
    assert 0.02 < report.in_collision.mean() < 0.8


# ------------------------------------------------------------------------------------------------
# gradients
def test_gradients_against_finite_differences(synthetic):
    model, _ = synthetic
    configurations = _random_configurations(model, 25, seed=10)
    # keep the configurations strictly inside the limits for the differences
    configurations = np.clip(configurations, model.lower + 1e-3, model.upper - 1e-3)
    obstacles = _obstacles()
    result = model.distances(configurations, obstacles, gradients=True)
    assert result.gradient.shape == (25, len(result.pairs), model.dof)
    step = 1e-6
    checked = kinks = 0
    for j in range(model.dof):
        shift = np.zeros(model.dof)
        shift[j] = step
        plus = model.distances(configurations + shift, obstacles).signed_distance
        minus = model.distances(configurations - shift, obstacles).signed_distance
        forward = (plus - result.signed_distance) / step
        backward = (result.signed_distance - minus) / step
        smooth = np.abs(forward - backward) < 1e-4  # differentiable here (not at a kink)
        smooth &= result.status != tc.Status.TOUCHING
        kinks += np.count_nonzero(~smooth)
        central = (plus - minus) / (2 * step)
        np.testing.assert_allclose(result.gradient[..., j][smooth], central[smooth], atol=2e-5)
        checked += np.count_nonzero(smooth)
    assert checked > 0.9 * (checked + kinks)


def test_gradients_panda_meshes_against_finite_differences():
    model = robot.load_urdf(PANDA_BULLET)
    configurations = np.clip(_random_configurations(model, 4, seed=11), model.lower + 1e-3, model.upper - 1e-3)
    obstacle = [(tc.Sphere(0.1), tc.Pose.from_translation([0.4, 0.2, 0.6]))]
    result = model.distances(configurations, obstacle, gradients=True)
    separated = result.signed_distance > 1e-3
    step = 1e-6
    for j in range(model.dof):
        shift = np.zeros(model.dof)
        shift[j] = step
        central = (model.distances(configurations + shift, obstacle).signed_distance
                   - model.distances(configurations - shift, obstacle).signed_distance) / (2 * step)
        close = np.abs(result.gradient[..., j] - central) < 2e-5
        assert close[separated].mean() > 0.95, (j, close[separated].mean())


# ------------------------------------------------------------------------------------------------
# bad input
def _one_joint(joint_type="revolute", limit='<limit lower="-1" upper="1"/>', extra=""):
    return f"""<robot name="bad">
  <link name="a"/><link name="b"/>
  <joint name="hinge" type="{joint_type}"><parent link="a"/><child link="b"/>{limit}{extra}</joint>
</robot>"""


@pytest.mark.parametrize("text, message", [
    (_one_joint("floating"), "joint 'hinge' has type 'floating', which touche does not support"),
    (_one_joint("hinge"), "joint 'hinge' has unknown type 'hinge'"),
    (_one_joint(limit='<limit lower="nan" upper="1"/>'), "joint 'hinge' <limit> must be finite"),
    (_one_joint(limit='<limit lower="2" upper="1"/>'), "lower 2.0 > upper 1.0"),
    (_one_joint(limit=""), "joint 'hinge' \\(revolute\\) has no <limit>"),
    (_one_joint(extra='<axis xyz="0 0 0"/>'), "joint 'hinge' has a zero <axis>"),
    (_one_joint(extra='<axis xyz="0 nan 1"/>'), "joint 'hinge' <axis xyz> must be finite"),
    (_one_joint(extra='<mimic joint="ghost"/>'), "joint 'hinge' mimics 'ghost', which is not a joint"),
    ("""<robot name="c"><link name="a"/><link name="b"/>
        <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
        <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>""",
     "every link has a parent joint: the joints form a cycle"),
    ("""<robot name="c"><link name="root"/><link name="a"/><link name="b"/>
        <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
        <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>""",
     "links \\['a', 'b'\\] are not reachable from the root 'root'"),
    ("""<robot name="c"><link name="a"/><link name="b"/><link name="c"/>
        <joint name="ac" type="fixed"><parent link="a"/><child link="c"/></joint>
        <joint name="bc" type="fixed"><parent link="b"/><child link="c"/></joint></robot>""",
     "link 'c' is the child of two joints, 'ac' and 'bc'"),
    ("""<robot name="c"><link name="a"/><joint name="ax" type="fixed"><parent link="a"/><child link="x"/></joint></robot>""",
     "joint 'ax' names link 'x', which is not defined"),
    ("""<robot name="m"><link name="a"><collision><geometry><mesh filename="missing.stl"/></geometry></collision></link></robot>""",
     "link 'a' <collision> 0: mesh 'missing.stl' not found"),
    ("""<robot name="m"><link name="a"><collision><geometry><mesh filename="package://nowhere_pkg/m.stl"/></geometry></collision></link></robot>""",
     "mesh 'package://nowhere_pkg/m.stl' not found: package 'nowhere_pkg'"),
    ("""<robot name="m"><link name="a"><collision><geometry><cone radius="1"/></geometry></collision></link></robot>""",
     "link 'a' <collision> 0: unknown geometry <cone>"),
    ("""<robot name="m"><link name="a"><collision><geometry><box size="1 -1 1"/></geometry></collision></link></robot>""",
     "link 'a' <collision> 0 <box size> must be finite and > 0"),
    ("<robot name='x'><link name='a'></robot>", "not well-formed XML"),
    ("<robot name='x'></robot>", "the robot has no <link>"),
])
def test_bad_urdf_names_the_element(text, message):
    with pytest.raises(RobotModelError, match=message):
        robot.load_urdf(text=text)


def test_mimic_cycle_and_bad_mesh_file(tmp_path):
    text = """<robot name="c"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><limit lower="-1" upper="1"/><mimic joint="j2"/></joint>
      <joint name="j2" type="revolute"><parent link="b"/><child link="c"/><limit lower="-1" upper="1"/><mimic joint="j1"/></joint>
    </robot>"""
    with pytest.raises(RobotModelError, match="mimic joints form a cycle"):
        robot.load_urdf(text=text)
    (tmp_path / "broken.stl").write_bytes(b"solid x\nfacet normal 0 0 1\nendsolid")
    urdf = tmp_path / "r.urdf"
    urdf.write_text("""<robot name="m"><link name="a"><collision><geometry><mesh filename="broken.stl"/></geometry>
      </collision></link></robot>""")
    with pytest.raises(RobotModelError, match="link 'a' <collision> 0: mesh cannot be read"):
        robot.load_urdf(urdf)
    with pytest.raises(RobotModelError, match="no such file"):
        robot.load_urdf(tmp_path / "absent.urdf")


def test_srdf_naming_an_unknown_link(synthetic, tmp_path):
    _, text = synthetic
    with pytest.raises(RobotModelError, match="names link 'ghost'"):
        robot.load_urdf(text=text.replace("tetra.stl", str(tmp_path / "none.stl")).replace(
            '<link name="branch">\n    <collision>', '<link name="branch">\n    <visual>').replace(
            'scale="0.1 -0.15 0.12"/></geometry></collision>', 'scale="0.1 -0.15 0.12"/></geometry></visual>'),
            srdf_text='<robot name="s"><disable_collisions link1="base" link2="ghost"/></robot>')


def test_bad_configurations(synthetic):
    model, _ = synthetic
    with pytest.raises(GeometryError, match="has 4 values"):
        model.in_collision(np.zeros(3))
    with pytest.raises(GeometryError, match="has 4 values"):
        model.forward_kinematics(np.zeros((2, 5)))
    with pytest.raises(GeometryError, match="configuration 1: joint 'j2' is nan"):
        model.distances(np.array([[0, 0, 0, 0], [0, np.nan, 0, 0]]))
    outside = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0]])
    with pytest.raises(GeometryError, match="configuration 1: joint 'j2' = 0.5 is outside its limits"):
        model.in_collision(outside)
    with pytest.raises(GeometryError, match="outside its limits"):
        model.forward_kinematics(outside)
    # the flag lets them through; a continuous joint has no limits
    model.in_collision(outside, allow_outside_limits=True)
    assert model.forward_kinematics(outside, allow_outside_limits=True).shape == (2, len(model.link_names), 4, 4)
    model.forward_kinematics(np.array([0.0, 0.0, 100.0, 0.0]))


def test_geometry_poses_layout(synthetic):
    model, _ = synthetic
    q = _random_configurations(model, 5, seed=12)
    links = model.forward_kinematics(q)
    poses = model.geometry_poses(q)
    assert poses.shape == (len(model.geometries), 5, 4, 4)
    for g, geometry in enumerate(model.geometries):
        np.testing.assert_allclose(poses[g], links[:, model.link_index(geometry.link)] @ geometry.origin, atol=1e-15)
    np.testing.assert_array_equal(model.geometry_poses(q[2]), poses[:, 2])


# ------------------------------------------------------------------------------------------------
# the automatic "never / always in collision" pass
def test_sampled_allowed_collisions_against_brute_force(synthetic):
    model, text = synthetic
    fresh = robot.load_urdf(model._source)  # a model of its own: this test changes its matrix
    fresh.allow("base", "twin")  # a user's choice stays
    configurations = _random_configurations(fresh, 200, seed=13)
    before = {(fresh.geometries[a].link, fresh.geometries[b].link) for a, b in fresh.self_pairs}
    pairs, colliding = N.brute_force_collisions(fresh, text, configurations, [])
    expected = {}
    for p, (a, b) in enumerate(pairs):
        key = (fresh.geometries[a].link, fresh.geometries[b].link)
        expected[key] = expected.get(key, np.zeros(len(configurations), dtype=bool)) | colliding[:, p]
    result = fresh.sample_allowed_collisions(configurations=configurations, always_fraction=0.9, apply=False)
    assert result.samples == 200 and set(result.collision_fraction) == before
    for key, hits in expected.items():
        assert result.collision_fraction[key] == hits.mean()
    reasons = {(a, b): reason for a, b, reason in result.added}
    assert {key for key, hits in expected.items() if not hits.any()} == {k for k, r in reasons.items() if r == "never"}
    assert {key for key, hits in expected.items() if hits.mean() >= 0.9} == {k for k, r in reasons.items() if r == "always"}
    assert "never" in reasons.values() and len(reasons) < len(before)  # some pairs stay checked
    assert fresh.self_pairs and len(fresh.self_pairs) == len(pairs)  # apply=False changed nothing
    applied = fresh.sample_allowed_collisions(configurations=configurations, always_fraction=0.9)
    assert applied.added == result.added
    assert all(fresh.is_allowed(a, b) for a, b, _ in result.added) and fresh.is_allowed("base", "twin")
    remaining = {(fresh.geometries[a].link, fresh.geometries[b].link) for a, b in fresh.self_pairs}
    assert remaining == before - set(reasons)
    # seeded sampling is reproducible
    once = robot.load_urdf(PANDA_BULLET).sample_allowed_collisions(400, seed=3)
    again = robot.load_urdf(PANDA_BULLET).sample_allowed_collisions(400, seed=3)
    assert once.added == again.added and once.added and "never" in repr(once)
    with pytest.raises(GeometryError, match="always_fraction"):
        fresh.sample_allowed_collisions(10, always_fraction=0.0)
    with pytest.raises(GeometryError, match="n_samples"):
        fresh.sample_allowed_collisions(0)
