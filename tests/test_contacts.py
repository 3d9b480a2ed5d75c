"""Contact manifolds (touche.contacts, touche/_kernels/narrow/manifold.py) against tests/naive/contacts.py,
hand-built configurations, stability under jitter, and pybullet's box-box contacts."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import touche
from touche.contacts import ContactManifold, contacts

from naive import contacts as naive


def _pose(rotation=None, translation=(0.0, 0.0, 0.0)):
    m = np.eye(4)
    if rotation is not None:
        m[:3, :3] = rotation
    m[:3, 3] = translation
    return m


def _rot(rotvec):
    return Rotation.from_rotvec(rotvec).as_matrix()


def _check_surfaces(a, pose_a, b, pose_b, m, tol, tol_b=None):
    """Every point: A's surface point p + d/2 n on A's boundary, B's p - d/2 n on B's."""
    tol_b = tol if tol_b is None else tol_b
    for p, d in zip(m.points, m.depths):
        pa = p + 0.5 * d * m.normal
        pb = p - 0.5 * d * m.normal
        assert naive.surface_gap(a, pose_a, pa) <= tol, (p, d)
        assert naive.surface_gap(b, pose_b, pb) <= tol_b, (p, d)


# ----------------------------------------------------------------------------------------------
# hand-built configurations
def test_box_resting_on_box_four_corners():
    big = touche.Box([4.0, 4.0, 1.0])
    small = touche.Box([1.0, 2.0, 1.0])
    depth = 1e-3
    pose_small = _pose(translation=(0.3, -0.2, 1.0 - depth))
    m = contacts(big, None, small, pose_small)
    assert isinstance(m, ContactManifold) and m.count == 4 and m.status == touche.Status.PENETRATING
    np.testing.assert_allclose(m.normal, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(m.depths, depth, atol=1e-12)
    # the small box's bottom corners, halfway into the overlap
    corners = {(0.3 + sx * 0.5, -0.2 + sy * 1.0) for sx in (-1, 1) for sy in (-1, 1)}
    got = {(round(x, 9), round(y, 9)) for x, y in m.points[:, :2]}
    assert got == {(round(x, 9), round(y, 9)) for x, y in corners}
    np.testing.assert_allclose(m.points[:, 2], 0.5 - depth / 2, atol=1e-12)
    _check_surfaces(big, None, small, pose_small, m, 1e-12)


def test_box_overhanging_edge_gives_clip_points():
    """Small box half over the big box's +x edge: two corners and two clip points on the edge."""
    big = touche.Box([2.0, 2.0, 1.0])
    small = touche.Box([1.0, 1.0, 1.0])
    pose_small = _pose(translation=(1.0, 0.0, 0.999))
    m = contacts(big, None, small, pose_small)
    assert m.count == 4
    xs = sorted(set(np.round(m.points[:, 0], 12)))
    assert xs == [0.5, 1.0]  # the corners at x = 0.5 and the clip points at the edge x = 1
    np.testing.assert_allclose(sorted(np.abs(m.points[:, 1])), [0.5] * 4, atol=1e-12)
    # swapping A and B: same points, flipped normal
    m2 = contacts(small, pose_small, big, None)
    np.testing.assert_allclose(m2.normal, -m.normal, atol=1e-15)
    np.testing.assert_allclose(np.sort(m2.points, axis=0), np.sort(m.points, axis=0), atol=1e-12)


def test_edge_edge_crossed_boxes_single_point():
    a = touche.Box([1.0, 1.0, 1.0])
    b = touche.Box([1.0, 1.0, 1.0])
    ridge = np.sqrt(0.5)  # a unit box on its edge reaches sqrt(2)/2 above its centre
    pose_a = _pose(_rot([np.pi / 4, 0, 0]))  # top ridge along x
    pose_b = _pose(_rot([0, np.pi / 4, 0]), (0.1, -0.05, 2 * ridge - 0.01))  # bottom ridge along y
    m = contacts(a, pose_a, b, pose_b)
    assert m.count == 1
    np.testing.assert_allclose(m.normal, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(m.depths, [0.01], atol=1e-12)
    np.testing.assert_allclose(m.points[0], [0.1, 0.0, ridge - 0.005], atol=1e-12)


def test_vertex_face_single_point():
    a = touche.Box([3.0, 3.0, 1.0])
    b = touche.Box([1.0, 1.0, 1.0])
    # b stands on a corner: its body diagonal along z
    rot = Rotation.align_vectors([[0, 0, -1]], [[-1, -1, -1]])[0].as_matrix()
    corner_drop = np.sqrt(3) / 2
    pose_b = _pose(rot, (0.2, 0.1, 0.5 + corner_drop - 0.02))
    m = contacts(a, None, b, pose_b)
    assert m.count == 1
    np.testing.assert_allclose(m.depths, [0.02], atol=1e-12)
    np.testing.assert_allclose(m.points[0], [0.2, 0.1, 0.49], atol=1e-12)


def test_capsule_lying_on_box_two_points():
    box = touche.Box([4.0, 4.0, 1.0])
    capsule = touche.Capsule(0.25, 2.0)
    pose_c = _pose(_rot([0, np.pi / 2, 0]), (0.3, 0.4, 0.5 + 0.25 - 0.01))  # axis along x
    m = contacts(capsule, pose_c, box, None)
    assert m.count == 2
    np.testing.assert_allclose(m.normal, [0, 0, -1], atol=1e-15)
    np.testing.assert_allclose(m.depths, [0.01, 0.01], atol=1e-12)
    np.testing.assert_allclose(sorted(m.points[:, 0]), [-0.7, 1.3], atol=1e-12)
    _check_surfaces(capsule, pose_c, box, None, m, 1e-12)
    # the capsule hanging over the box's edge is clipped there
    pose_c[0, 3] = 2.0
    m = contacts(capsule, pose_c, box, None)
    assert m.count == 2
    np.testing.assert_allclose(sorted(m.points[:, 0]), [1.0, 2.0], atol=1e-12)


def test_sphere_single_point_and_parallel_capsules_two_points():
    box = touche.Box([2.0, 2.0, 2.0])
    sphere = touche.Sphere(0.5)
    m = contacts(box, None, sphere, _pose(translation=(0.3, 0.2, 1.4)))
    assert m.count == 1
    np.testing.assert_allclose(m.depths, [0.1], atol=1e-12)
    np.testing.assert_allclose(m.points[0], [0.3, 0.2, 0.95], atol=1e-12)
    c = touche.Capsule(0.5, 2.0)
    m = contacts(c, None, c, _pose(translation=(0.9, 0.0, 0.5)))  # side by side, shifted
    assert m.count == 2
    np.testing.assert_allclose(m.depths, [0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(sorted(m.points[:, 2]), [-0.5, 1.0], atol=1e-12)


def test_deep_penetration_is_sane():
    a = touche.Box([1.0, 1.0, 1.0])
    rng = np.random.default_rng(3)
    for _ in range(50):
        pose_b = _pose(Rotation.random(random_state=rng).as_matrix(), rng.uniform(-0.3, 0.3, 3))
        m = contacts(a, None, a, pose_b)
        engine = touche.distance(a, None, a, pose_b)
        assert 1 <= m.count <= 4
        assert np.isfinite(m.points).all() and np.isfinite(m.depths).all()
        assert abs(np.linalg.norm(m.normal) - 1) < 1e-12
        # depths are measured along the reference face normal, within 1 degree of the engine's
        # normal: they can exceed the minimum translation distance by the box's size * sin(1 deg)
        assert m.depths.max() <= engine.depth + np.sqrt(3) * np.sin(np.pi / 180) + 1e-12
        assert m.depths.max() >= 0.5 * engine.depth
        assert m.normal @ engine.normal >= np.cos(np.pi / 180) - 1e-12
    # coincident boxes
    m = contacts(a, None, a, None)
    assert m.count == 4 and np.allclose(m.depths, 1.0)


def test_halfspace_and_round_features():
    ground = touche.HalfSpace([0, 0, 1], 0.0)
    box = touche.Box([1.0, 1.0, 1.0])
    m = contacts(box, _pose(translation=(0, 0, 0.49)), ground, None)
    assert m.count == 4 and np.allclose(m.depths, 0.01) and np.allclose(m.normal, [0, 0, -1])
    # standing cylinder: the cap (32-gon) reduced to 4 rim points spanning a square
    cyl = touche.Cylinder(0.5, 2.0)
    pose = _pose(translation=(1.0, 2.0, 0.99))
    m = contacts(cyl, pose, ground, None)
    assert m.count == 4
    np.testing.assert_allclose(m.depths, 0.01, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(m.points[:, :2] - [1, 2], axis=1), 0.5, atol=1e-12)
    assert naive.hull_area(m.points, m.normal) == pytest.approx(0.5, rel=1e-9)  # square in r=0.5
    # lying cylinder: its side line, 2 points; leaning cylinder: 1 rim point
    m = contacts(cyl, _pose(_rot([np.pi / 2, 0, 0]), (0, 0, 0.48)), ground, None)
    assert m.count == 2 and np.allclose(m.depths, 0.02)
    m = contacts(cyl, _pose(_rot([0.3, 0, 0]), (0, 0, 0.9)), ground, None)
    assert m.count == 1
    cone = touche.Cone(0.5, 1.0)
    half_angle = np.arctan2(0.5, 1.0)
    lying = _rot([np.pi / 2 + half_angle, 0, 0])  # a generator line flat on the ground
    probe = contacts(cone, _pose(lying, (0, 0, 5.0)), ground, None, margin=10.0)
    assert probe.count == 2
    more = contacts(cone, _pose(translation=(0, 0, 0.49)), ground, None, max_points=8)
    assert more.count == 8 and np.allclose(more.depths, 0.01)


def test_margin_gives_speculative_contacts():
    a = touche.Box([1.0, 1.0, 1.0])
    pose_b = _pose(translation=(0.2, 0.0, 1.05))
    assert contacts(a, None, a, pose_b).count == 0
    m = contacts(a, None, a, pose_b, margin=0.1)
    assert m.count == 4 and m.status == touche.Status.SEPARATED
    np.testing.assert_allclose(m.depths, -0.05, atol=1e-12)
    _check_surfaces(a, None, a, pose_b, m, 1e-12)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_scales(scale):
    big = touche.Box(np.array([4.0, 4.0, 1.0]) * scale)
    small = touche.Box(np.array([1.0, 1.0, 1.0]) * scale)
    pose = _pose(_rot([0, 0, 0.3]), np.array([0.5, 0.1, 0.999]) * scale)
    m = contacts(big, None, small, pose)
    assert m.count == 4
    np.testing.assert_allclose(m.depths, 1e-3 * scale, rtol=1e-9)


# ----------------------------------------------------------------------------------------------
# stability
def _jitter(rng, n, base):
    angles = 10.0 ** rng.uniform(-9, -6, n)
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    poses = np.tile(base, (n, 1, 1))
    poses[:, :3, :3] = Rotation.from_rotvec(axes * angles[:, None]).as_matrix() @ base[:3, :3]
    poses[:, :3, 3] += rng.normal(scale=1e-9, size=(n, 3))
    return poses


@pytest.mark.parametrize("equal", [False, True])
def test_resting_box_does_not_flicker(equal):
    rng = np.random.default_rng(11 + equal)
    bottom = touche.Box([1.0, 1.0, 1.0] if equal else [3.0, 2.0, 1.0])
    top = touche.Box([1.0, 1.0, 1.0])
    base = _pose(translation=(0.0, 0.0, 1.0 - 1e-3))  # equal boxes: faces coincide (a tie)
    poses = _jitter(rng, 1000, base)
    m = contacts(bottom, None, top, poses)
    assert (m.count == 4).all()
    ref = contacts(bottom, None, top, base)
    np.testing.assert_allclose(np.sort(m.points[:, :, 0], axis=1), np.sort(np.tile(ref.points[:, 0], (1000, 1)), axis=1), atol=1e-5)
    np.testing.assert_allclose(m.depths, 1e-3, atol=1e-5)
    assert (m.normal @ [0, 0, 1] > 1 - 1e-11).all()
    # exactly touching boxes with a speculative margin: also always 4
    touching = _jitter(rng, 1000, _pose(translation=(0.0, 0.0, 1.0)))
    m = contacts(bottom, None, top, touching, margin=1e-3)
    assert (m.count == 4).all()


# ----------------------------------------------------------------------------------------------
# random cases against the naive reference
def _face_normals(shape):
    kind = shape.kind
    if kind == touche.Box([1, 1, 1]).kind:
        return np.concatenate([np.eye(3), -np.eye(3)])
    if isinstance(shape, touche.ConvexPolyhedron):
        return shape.face_planes[:, :3]
    if isinstance(shape, (touche.Triangle, touche.ConvexPolygon)):
        n = np.cross(shape.points[1] - shape.points[0], shape.points[2] - shape.points[0])
        n /= np.linalg.norm(n)
        return np.array([n, -n])
    return np.array([[1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0]])  # capsule: lying; sphere: any


def _align(u, v):
    """A rotation taking unit u to unit v."""
    axis = np.cross(u, v)
    s = np.linalg.norm(axis)
    c = u @ v
    if s < 1e-12:
        if c > 0:
            return np.eye(3)
        perp = np.cross(u, [1, 0, 0] if abs(u[0]) < 0.6 else [0, 1, 0])
        return Rotation.from_rotvec(np.pi * perp / np.linalg.norm(perp)).as_matrix()
    return Rotation.from_rotvec(axis / s * np.arctan2(s, c)).as_matrix()


def _random_cases(a, b, n, rng, size):
    """Poses of a near b: half face-aligned (tilt 0 / 1e-7 / 3e-3 / 0.01 / 0.03 rad), half random;
    signed distance driven to a random target in [-0.15, 0.05] * size."""
    rot_b = Rotation.random(n, random_state=rng).as_matrix()
    rot_a = Rotation.random(n, random_state=rng).as_matrix()
    start = np.empty((n, 3))
    na, nb = _face_normals(a), _face_normals(b)
    tilts = np.array([0.0, 1e-7, 3e-3, 0.01, 0.03])
    for i in range(n):
        fb = rot_b[i] @ nb[rng.integers(len(nb))]
        if i % 2 == 0:
            fa = na[rng.integers(len(na))]
            spin = Rotation.from_rotvec(fb * rng.uniform(0, 2 * np.pi)).as_matrix()
            tilt = Rotation.from_rotvec(rng.normal(size=3) * tilts[rng.integers(len(tilts))] / np.sqrt(3)).as_matrix()
            rot_a[i] = tilt @ spin @ _align(fa, -fb)
            lateral = rng.normal(size=3) * 0.3 * size
            start[i] = 3 * size * fb + lateral - (lateral @ fb) * fb
        else:
            start[i] = 3 * size * fb
    pose_a = np.tile(np.eye(4), (n, 1, 1))
    pose_b = np.tile(np.eye(4), (n, 1, 1))
    pose_a[:, :3, :3] = rot_a
    pose_b[:, :3, :3] = rot_b
    pose_a[:, :3, 3] = start
    targets = rng.uniform(-0.15, 0.05, n) * size
    for _ in range(6):
        r = touche.distance(a, pose_a, b, pose_b)
        pose_a[:, :3, 3] -= (targets - r.signed_distance)[:, None] * r.normal
    return pose_a, pose_b


def _hull():
    rng = np.random.default_rng(5)
    pts = rng.normal(size=(24, 3))
    pts /= np.linalg.norm(pts, axis=1)[:, None]
    pts = np.concatenate([pts * [0.8, 0.6, 0.5], [[0.6, 0.6, 0.6], [-0.6, 0.6, 0.6], [0.6, -0.6, 0.6], [-0.6, -0.6, 0.6]]])
    return touche.ConvexPolyhedron(pts)  # a flat facet on top (4 coplanar points) plus a blob


PAIRS = {
    "box/box": (touche.Box([1.0, 0.8, 0.6]), touche.Box([1.2, 1.0, 0.5])),
    "box/polyhedron": (touche.Box([0.9, 0.7, 0.5]), _hull()),
    "triangle/box": (touche.Triangle([0, 0, 0], [1.2, 0.1, 0], [0.3, 0.9, 0]), touche.Box([1.0, 0.8, 0.6])),
    "capsule/box": (touche.Capsule(0.2, 1.0), touche.Box([1.0, 0.8, 0.6])),
    "sphere/box": (touche.Sphere(0.4), touche.Box([1.0, 0.8, 0.6])),
    "polygon/polyhedron": (
        touche.ConvexPolygon([[0, 0, 0], [1, 0, 0], [1.3, 0.6, 0], [0.5, 1.0, 0], [-0.2, 0.5, 0]]),
        _hull(),
    ),
}


@pytest.mark.parametrize("name", list(PAIRS))
def test_against_naive(name):
    a, b = PAIRS[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32 if False else sorted(PAIRS).index(name) + 100)
    n = 1000
    size = 1.0
    pose_a, pose_b = _random_cases(a, b, n, rng, size)
    margin = 0.05
    full = contacts(a, pose_a, b, pose_b, max_points=64, margin=margin)
    four = contacts(a, pose_a, b, pose_b, max_points=4, margin=margin)
    engine = touche.distance(a, pose_a, b, pose_b)
    tol = 1e-9
    clipped = multi = 0
    for i in range(n):
        count = full.count[i]
        if engine.signed_distance[i] > margin:
            assert count == 0 and four.count[i] == 0
            continue
        assert count >= 1
        kind, points, depths, normal = naive.naive_manifold(
            a, pose_a[i], b, pose_b[i], engine.normal[i], engine.signed_distance[i], margin, 2.0
        )
        got_p = full.points[i, :count]
        got_d = full.depths[i, :count]
        got_n = full.normal[i]
        m = ContactManifold(got_p, got_d, got_n, count, None)
        tol_a = tol_b = 1e-8
        if kind[0] == "edge-a":
            tol_a += kind[1]
        elif kind[0] == "edge-b":
            tol_b += kind[1]
        _check_surfaces(a, pose_a[i], b, pose_b[i], m, tol_a, tol_b)
        if kind == "single":
            assert count == 1
            assert got_d[0] == pytest.approx(-engine.signed_distance[i], abs=1e-9)
            continue
        clipped += 1
        np.testing.assert_allclose(got_n, normal, atol=1e-12)
        want_p, want_d = naive.dedupe(points, depths, 1e-9)
        assert count == len(want_p), (i, got_p, want_p)
        for p, d in zip(want_p, want_d):
            j = np.argmin(np.abs(got_p - p).max(axis=1))
            assert np.abs(got_p[j] - p).max() <= tol and abs(got_d[j] - d) <= tol
        # reduction to 4: a subset with the deepest point and (nearly) the largest area
        k = four.count[i]
        assert k == min(count, 4) or (k < 4 and naive.hull_area(got_p, got_n) <= 1e-12)
        sub_p = four.points[i, :k]
        for p in sub_p:
            assert np.abs(got_p - p).max(axis=1).min() <= 1e-12
        assert four.depths[i, :k].max() == got_d.max()
        if count > 4:
            multi += 1
            best = naive.best_area_with_deepest(got_p, got_d, got_n, 4)
            assert naive.hull_area(sub_p, got_n) >= 0.7 * best - 1e-12
        assert np.isnan(four.points[i, k:]).all() and np.isnan(four.depths[i, k:]).all()
    # the aligned half must exercise the clipping path, and a fair share of the cases reduce
    assert clipped >= (150 if name != "sphere/box" else 0)


# ----------------------------------------------------------------------------------------------
def test_single_matches_batch():
    a, b = PAIRS["box/polyhedron"]
    rng = np.random.default_rng(9)
    pose_a, pose_b = _random_cases(a, b, 40, rng, 1.0)
    batch = contacts(a, pose_a, b, pose_b, margin=0.05)
    for i in range(40):
        one = contacts(a, pose_a[i], b, pose_b[i], margin=0.05)
        assert one.count == batch.count[i]
        np.testing.assert_array_equal(one.points, batch.points[i, : one.count])
        np.testing.assert_array_equal(one.depths, batch.depths[i, : one.count])
    broadcast = contacts(a, pose_a[0], b, pose_b[:1].repeat(3, 0), margin=0.05)
    assert (broadcast.count == batch.count[0]).all()


def test_bad_input():
    box = touche.Box([1, 1, 1])
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(touche.GeometryError):
        contacts(box, bad, box, None)
    with pytest.raises(touche.GeometryError):
        contacts(box, None, box, np.tile(bad, (3, 1, 1)))
    with pytest.raises(touche.GeometryError):
        contacts(box, 2 * np.eye(4), box, None)  # not rigid
    for value in (0, -1, 2.5, True, "4"):
        with pytest.raises(touche.GeometryError):
            contacts(box, None, box, None, max_points=value)
    for value in (-0.1, np.nan, np.inf, "x"):
        with pytest.raises(touche.GeometryError):
            contacts(box, None, box, None, margin=value)
    with pytest.raises(touche.GeometryError):
        contacts(box, np.tile(np.eye(4), (2, 1, 1)), box, np.tile(np.eye(4), (3, 1, 1)))
    mesh = touche.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    for other in (mesh, touche.Ray([0, 0, 0], [1, 0, 0])):
        with pytest.raises(touche.UnsupportedQuery):
            contacts(box, None, other, None)


def test_smooth_solids_get_manifolds_through_gjk():
    """Cylinders and ellipsoids against boxes are answered by GJK / EPA in the pair engine."""
    slab = touche.Box([4.0, 4.0, 1.0])  # top face at z = 0.5
    standing = contacts(touche.Cylinder(0.5, 1.0), touche.Pose.from_translation([0, 0, 0.999]), slab, None)
    assert standing.count == 4  # rim points of the inscribed disc polygon, clipped by the face
    np.testing.assert_allclose(standing.normal, [0, 0, -1], atol=1e-6)
    np.testing.assert_allclose(standing.depths, 1e-3, atol=1e-6)
    resting = contacts(touche.Ellipsoid([1.0, 0.5, 0.25]), touche.Pose.from_translation([0, 0, 0.749]), slab, None)
    assert resting.count == 1
    np.testing.assert_allclose(resting.depths, 1e-3, atol=1e-6)
    np.testing.assert_allclose(resting.points[0, :2], [0, 0], atol=1e-5)  # a witness point on a curved surface
    with pytest.raises(touche.UnsupportedQuery):
        contacts(touche.HalfSpace([0, 0, 1], 0), None, touche.Plane([0, 0, 1], 1), None)


# ----------------------------------------------------------------------------------------------
def test_against_pybullet_box_box():
    """Resting box-box configurations (face-aligned, small tilts, random overlaps): pybullet's
    box-box detector gives the same number of points (4 when the faces are flat within its
    collision margin) and the same maximum depth."""
    pybullet = pytest.importorskip("pybullet")
    client = pybullet.connect(pybullet.DIRECT)
    try:
        half_a = np.array([1.5, 1.0, 0.5])
        half_b = np.array([0.5, 0.4, 0.3])
        sa = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half_a.tolist(), physicsClientId=client)
        sb = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half_b.tolist(), physicsClientId=client)
        body_a = pybullet.createMultiBody(0, sa, physicsClientId=client)
        body_b = pybullet.createMultiBody(1, sb, physicsClientId=client)
        a = touche.Box(2 * half_a)
        b = touche.Box(2 * half_b)
        rng = np.random.default_rng(21)
        agree = 0
        trials = 200
        for _ in range(trials):
            depth = rng.uniform(1e-3, 0.05)
            yaw = rng.uniform(-np.pi, np.pi)
            rot = Rotation.from_euler("z", yaw)
            xy = rng.uniform(-1.0, 1.0, 2)
            pose_b = _pose(rot.as_matrix(), (xy[0], xy[1], half_a[2] + half_b[2] - depth))
            # far away first, so that bullet's persistent manifold is dropped (else it keeps and
            # merges the previous configuration's points)
            pybullet.resetBasePositionAndOrientation(body_b, [0, 0, 100], rot.as_quat().tolist(), physicsClientId=client)
            pybullet.performCollisionDetection(physicsClientId=client)
            pybullet.resetBasePositionAndOrientation(body_b, pose_b[:3, 3].tolist(), rot.as_quat().tolist(), physicsClientId=client)
            pybullet.performCollisionDetection(physicsClientId=client)
            found = pybullet.getContactPoints(body_a, body_b, physicsClientId=client)
            m = contacts(a, None, b, pose_b)
            bullet_depth = -min(point[8] for point in found)
            assert m.depths.max() == pytest.approx(bullet_depth, abs=1e-6)
            if len(found) == m.count:
                agree += 1
        assert agree >= 0.95 * trials
    finally:
        pybullet.disconnect(client)
