"""Two overlapping boxes' SAT depth straight from the poses (pair_polytopes.box_box_separation / box_box_supports,
primitives/sat.obb_obb_depth_relative), against the general SAT on the boxes' world vertices
(sat_convex, what the polytope engine ran before) and the exact minimum translation distance of
the Minkowski difference (naive/pairs.minkowski_depth), on seeded random poses: general,
axis-aligned and face-parallel, touching, nearly flat boxes, tiny and huge scales. Separated
pairs: the face, edge-edge and corner distances (pair_polytopes.box_box_face_distance /
box_box_edge_distance / box_box_corner_distance) against the distance between the two corner
sets' hulls."""
import itertools

import numpy as np
import pytest

import naive as N
import touche as tc
from touche._kernels.narrow.pair_polytopes import box_box_corner_distance, box_box_edge_distance, box_box_face_distance
from touche._kernels.narrow.pair_polytopes import box_box_sat
from touche._kernels.narrow.pair_polytopes import box_box_separation, box_box_supports
from touche._kernels.primitives.sat import sat_convex

def _penetration(params_a, pose_a, params_b, pose_b):
    """(overlapping, separation, point_a, point_b, normal) as the polytope engine takes them."""
    separation, axis, R, _ = box_box_separation(params_a, pose_a, params_b, pose_b, True)
    if not separation <= 0.0:
        return False, separation, None, None, None
    return (True, separation) + box_box_supports(params_a, pose_a, params_b, pose_b, axis, R)


SIGNS = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))


def _random_rotations(rng, n):
    return tc.Pose.random(n, scale=0.0, seed=int(rng.integers(1 << 30))).matrix[:, :3, :3]


def _world_box(box, pose):
    center = np.asarray(box.center, float)
    half = np.asarray(box.half_extents, float)
    return (center + SIGNS * half) @ pose[:3, :3].T + pose[:3, 3], pose[:3, :3]


def _cases(seed, half_a, half_b, count):
    """Poses of A around B (B at a random pose): random, axis-aligned and face-parallel."""
    rng = np.random.default_rng(seed)
    reach = float(np.linalg.norm(half_a) + np.linalg.norm(half_b))
    poses_a = np.tile(np.eye(4), (count, 1, 1))
    poses_a[:, :3, :3] = _random_rotations(rng, count)
    poses_a[: count // 4, :3, :3] = np.eye(3)  # axis-aligned with each other below
    quarter = np.tile(np.eye(3), (count // 4, 1, 1))
    angle = rng.uniform(0, 2 * np.pi, count // 4)  # face-parallel: a turn about z only
    quarter[:, 0, 0] = quarter[:, 1, 1] = np.cos(angle)
    quarter[:, 0, 1] = -np.sin(angle)
    quarter[:, 1, 0] = np.sin(angle)
    poses_a[count // 4 : count // 2, :3, :3] = quarter
    poses_a[:, :3, 3] = rng.uniform(-0.5, 0.5, (count, 3)) * reach
    pose_b = np.eye(4)
    if seed % 2:  # B posed too; the axis-aligned / face-parallel poses then follow B's frame
        pose_b[:3, :3] = _random_rotations(rng, 1)[0]
        poses_a[: count // 2, :3, :3] = pose_b[:3, :3] @ poses_a[: count // 2, :3, :3]
    pose_b[:3, 3] = rng.uniform(-0.1, 0.1, 3) * reach
    return poses_a, pose_b


BOX_PAIRS = [
    ([0.25, 0.4, 0.15], [0.5, 0.3, 0.2]),
    ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]),  # equal cubes: many ties
    ([0.1, 1.5, 0.005], [1.0, 0.025, 0.25]),  # slabs and rods
    ([0.3, 0.2, 1e-9], [0.4, 0.4, 0.1]),  # a nearly flat box
]


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
@pytest.mark.parametrize("pair", range(len(BOX_PAIRS)))
def test_box_box_penetration_is_the_sat_depth(pair, scale):
    half_a, half_b = (np.asarray(h) * scale for h in BOX_PAIRS[pair])
    a = tc.Box(2 * half_a, center=[0.1 * scale, -0.05 * scale, 0.02 * scale])
    b = tc.Box(2 * half_b)
    poses_a, pose_b = _cases(pair * 7 + int(np.log10(scale)) + 20, half_a, half_b, 400)
    size = float(np.linalg.norm(half_a) + np.linalg.norm(half_b))
    overlapping_count = 0
    for pose_a in poses_a:
        overlapping, separation, point_a, point_b, normal = _penetration(
            a._packed[1], pose_a, b._packed[1], pose_b)
        verts_a, axes_a = _world_box(a, pose_a)
        verts_b, axes_b = _world_box(b, pose_b)
        general, general_axis = sat_convex(verts_a, axes_a.T.copy(), axes_a.T.copy(),
                                           verts_b, axes_b.T.copy(), axes_b.T.copy())
        assert overlapping == (separation <= 0.0)
        if not overlapping:  # the early out: some separating face axis's gap, at most the SAT's
            assert general > 0.0 and separation <= general + 1e-12 * size
            continue
        assert separation == pytest.approx(general, abs=1e-12 * size)
        overlapping_count += 1
        exact = N.minkowski_depth(verts_a, verts_b)
        if exact is not None:  # a flat difference has no facet depth
            assert separation == pytest.approx(exact, abs=1e-9 * size)
        assert np.linalg.norm(normal) == pytest.approx(1.0, abs=1e-12)
        if abs(general - separation) < 1e-13 * size and np.dot(normal, general_axis) < 1 - 1e-9:
            # two axes tie: either is the depth's axis
            assert (verts_a @ general_axis).max() - (verts_b @ general_axis).min() == pytest.approx(
                (verts_a @ normal).max() - (verts_b @ normal).min(), abs=1e-12 * size)
        # support points: a vertex of each box, the farthest along the axis (B: against it)
        assert np.min(np.linalg.norm(verts_a - point_a, axis=1)) <= 1e-12 * size
        assert np.min(np.linalg.norm(verts_b - point_b, axis=1)) <= 1e-12 * size
        assert point_a @ normal == pytest.approx((verts_a @ normal).max(), abs=1e-12 * size)
        assert point_b @ normal == pytest.approx((verts_b @ normal).min(), abs=1e-12 * size)
        # oriented from A to B: moving B by -separation along the normal separates them
        assert (verts_b @ normal).min() - (verts_a @ normal).max() == pytest.approx(separation, abs=1e-12 * size)
    assert overlapping_count > 30


def test_touching_boxes_are_overlapping_at_zero_depth():
    box = tc.Box([1.0, 1.0, 1.0])
    for axis in range(3):
        pose = np.eye(4)
        pose[axis, 3] = 1.0  # face to face
        overlapping, separation, point_a, point_b, normal = _penetration(
            box._packed[1], np.eye(4), box._packed[1], pose)
        assert overlapping
        assert separation == 0.0
        assert abs(normal[axis]) == 1.0
    pose = np.eye(4)
    pose[0, 3] = 1.0 + 1e-12
    assert not _penetration(box._packed[1], np.eye(4), box._packed[1], pose)[0]


def test_public_distance_of_overlapping_boxes_takes_the_sat_depth():
    """touche.distance, single and batch: the same depth, normal and support points as the kernel."""
    a = tc.Box([0.5, 0.8, 0.3])
    b = tc.Box([1.0, 0.6, 0.4], center=[0.0, 0.1, 0.0])
    poses = tc.Pose.random(300, scale=0.5, seed=3).matrix
    batch = tc.distance(a, poses, b, None)
    overlapping_count = 0
    for i, pose in enumerate(poses):
        overlapping, separation, point_a, point_b, normal = _penetration(
            a._packed[1], pose, b._packed[1], np.eye(4))
        single = tc.distance(a, pose, b, None)
        if overlapping:
            overlapping_count += 1
            for signed, pa, pb, n in ((single.signed_distance, single.point_a, single.point_b, single.normal),
                                      (batch.signed_distance[i], batch.point_a[i], batch.point_b[i], batch.normal[i])):
                assert signed == separation
                np.testing.assert_array_equal(pa, point_a)
                np.testing.assert_array_equal(pb, point_b)
                np.testing.assert_array_equal(n, normal)
        else:
            assert single.signed_distance > 0.0
    assert overlapping_count > 50


def _on_box(point, box, pose, size):
    """Whether a world point lies in a posed box (within rounding), in the box's own frame (not
    from corner differences, whose directions a nearly flat box's rounding tilts)."""
    local = pose[:3, :3].T @ (point - pose[:3, 3]) - np.asarray(box.center, float)
    return bool(np.all(np.abs(local) <= np.asarray(box.half_extents, float) + 1e-12 * size))


def _separated_cases(pair, scale, seed):
    """Boxes A (off its frame's origin) and B of BOX_PAIRS[pair] at ``scale``, 300 poses of A
    around B (mostly apart), B's pose, and the size that scales the tolerances."""
    half_a, half_b = (np.asarray(h) * scale for h in BOX_PAIRS[pair])
    a = tc.Box(2 * half_a, center=[0.1 * scale, -0.05 * scale, 0.02 * scale])
    b = tc.Box(2 * half_b)
    poses_a, pose_b = _cases(seed, half_a, half_b, 300)
    poses_a[:, :3, 3] *= 2.0  # mostly separated
    return a, b, poses_a, pose_b, float(np.linalg.norm(half_a) + np.linalg.norm(half_b))


def _hull_distance(a, pose_a, b, pose_b):
    """The reference distance of two separated boxes: between their corner sets' hulls."""
    verts_a, _ = _world_box(a, pose_a)
    verts_b, _ = _world_box(b, pose_b)
    with np.errstate(divide="ignore", invalid="ignore"):  # the reference's parallel edges
        return N.core_distance(verts_a, verts_b)


def _assert_closest_points(distance, point_a, point_b, normal, a, pose_a, b, pose_b, size):
    """``distance`` is the reference's; the points lie on the boxes, the distance apart along the normal."""
    assert distance == pytest.approx(_hull_distance(a, pose_a, b, pose_b), abs=1e-9 * size)
    assert np.linalg.norm(point_b - point_a) == pytest.approx(distance, abs=1e-12 * size)
    np.testing.assert_allclose(point_b - point_a, distance * normal, atol=1e-12 * size)
    assert _on_box(point_a, a, pose_a, size) and _on_box(point_b, b, pose_b, size)


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
@pytest.mark.parametrize("pair", range(len(BOX_PAIRS)))
def test_box_box_face_distance_is_the_distance(pair, scale):
    """A separated pair whose nearest corner lies over the separating face: the gap is the
    distance (the reference: the distance between the two corner sets' hulls) and the points
    lie on the boxes, |point_b - point_a| the gap; other pairs are declined (GJK's)."""
    a, b, poses_a, pose_b, size = _separated_cases(pair, scale, pair * 11 + int(np.log10(scale)) + 50)
    found_count = declined = 0
    for pose_a in poses_a:
        separation, axis, R, by_face = box_box_separation(a._packed[1], pose_a, b._packed[1], pose_b, True)
        if not by_face:
            continue
        found, point_a, point_b, normal = box_box_face_distance(a._packed[1], pose_a, b._packed[1], pose_b, axis, R)
        if not found:
            declined += 1
            assert _hull_distance(a, pose_a, b, pose_b) >= separation - 1e-12 * size  # the gap: a lower bound
            continue
        found_count += 1
        _assert_closest_points(separation, point_a, point_b, normal, a, pose_a, b, pose_b, size)
    assert found_count > 5
    assert declined > 0 or pair >= 2  # random rotations put most nearest corners off the face


def test_box_box_distance_of_face_parallel_boxes():
    """Stacked boxes with parallel faces (the closest points are not unique): the face distance
    finds them (an edge parallel to the face takes its point nearest the face's centre) and
    the public distance is the reference's, with points on both boxes."""
    a = tc.Box([1.0, 1.0, 1.0])
    b = tc.Box([0.5, 2.0, 0.3])
    for offset in ([0.2, 0.1, 1.5], [0.0, 0.0, 0.65 + 1e-12], [1.7, 0.0, 0.0], [0.3, -0.2, -2.0]):
        pose = np.eye(4)
        pose[:3, 3] = offset
        separation, axis, R, by_face = box_box_separation(a._packed[1], np.eye(4), b._packed[1], pose, True)
        assert by_face and box_box_face_distance(a._packed[1], np.eye(4), b._packed[1], pose, axis, R)[0]
        result = tc.distance(a, None, b, pose)
        verts_a, _ = _world_box(a, np.eye(4))
        verts_b, _ = _world_box(b, pose)
        assert result.distance == pytest.approx(N.core_distance(verts_a, verts_b), abs=1e-12)
        assert np.linalg.norm(result.point_b - result.point_a) == pytest.approx(result.distance, abs=1e-12)
        assert _on_box(result.point_a, a, np.eye(4), 1.0) and _on_box(result.point_b, b, pose, 1.0)


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
@pytest.mark.parametrize("pair", range(len(BOX_PAIRS)))
def test_box_box_edge_distance_is_the_distance(pair, scale):
    """A separated pair whose best SAT axis is an edge pair's: the closest points of the two
    supporting edges, when accepted, give the distance (the reference: the distance between the
    corner sets' hulls), lie on the boxes and are the distance apart along the normal; a pair
    whose nearest features are not two edges is declined (GJK's), never answered wrong."""
    a, b, poses_a, pose_b, size = _separated_cases(pair, scale, pair * 13 + int(np.log10(scale)) + 70)
    found_count = declined = 0
    for pose_a in poses_a:
        separation, axis, R, by_face = box_box_separation(a._packed[1], pose_a, b._packed[1], pose_b, True)
        if not separation > 0.0:
            continue
        if by_face:
            separation, axis = box_box_sat(a._packed[1], b._packed[1], R)
        found, distance, point_a, point_b, normal = box_box_edge_distance(a._packed[1], pose_a, b._packed[1],
                                                                          pose_b, axis, R)
        if not found:
            declined += 1
            continue
        found_count += 1
        assert distance >= separation - 1e-12 * size  # the SAT's gap is a lower bound (equal for two edges' interiors)
        _assert_closest_points(distance, point_a, point_b, normal, a, pose_a, b, pose_b, size)
    assert found_count > 20 and declined > 0


def test_public_box_box_distance_matches_the_reference_on_every_separated_path():
    """tc.distance of separated boxes (face distance, edge distance or GJK, whichever answers)
    against the hulls' distance, singles and a batch: identical singles and batch, points on the
    boxes, the distance apart."""
    a = tc.Box([0.6, 0.3, 0.9], center=[0.05, 0.0, -0.1])
    b = tc.Box([0.4, 1.1, 0.2])
    poses_a, pose_b = _cases(91, np.array([0.3, 0.15, 0.45]), np.array([0.2, 0.55, 0.1]), 400)
    poses_a[:, :3, 3] *= 2.5
    batch = tc.distance(a, poses_a, b, pose_b)
    checked = 0
    for k, pose_a in enumerate(poses_a):
        verts_a, _ = _world_box(a, pose_a)
        verts_b, _ = _world_box(b, pose_b)
        if N.hulls_intersect_lp(verts_a, verts_b):  # core_distance is the separated pairs' reference
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            reference = N.core_distance(verts_a, verts_b)
        one = tc.distance(a, pose_a, b, pose_b)
        assert one.distance == batch.distance[k]
        assert one.distance == pytest.approx(reference, abs=1e-9)
        assert np.linalg.norm(one.point_b - one.point_a) == pytest.approx(one.distance, abs=1e-9)
        assert _on_box(one.point_a, a, pose_a, 1.0) and _on_box(one.point_b, b, pose_b, 1.0)
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
@pytest.mark.parametrize("pair", range(len(BOX_PAIRS)))
def test_box_box_corner_distance_is_the_distance(pair, scale):
    """Any separated pair: a corner of one box and its nearest point on the other, when accepted,
    give the distance (the reference: the corner sets' hulls), on both boxes and the distance
    apart along the normal; declined otherwise (edge-edge pairs), never answered wrong."""
    a, b, poses_a, pose_b, size = _separated_cases(pair, scale, pair * 17 + int(np.log10(scale)) + 90)
    found_count = declined = 0
    for pose_a in poses_a:
        separation, axis, R, by_face = box_box_separation(a._packed[1], pose_a, b._packed[1], pose_b, True)
        if not separation > 0.0:
            continue
        found, distance, point_a, point_b, normal = box_box_corner_distance(a._packed[1], pose_a, b._packed[1],
                                                                            pose_b, R)
        if not found:
            declined += 1
            continue
        found_count += 1
        _assert_closest_points(distance, point_a, point_b, normal, a, pose_a, b, pose_b, size)
    assert found_count > 20 and declined > 0


def test_box_box_corner_distance_of_a_corner_against_an_edge_and_a_corner():
    """Hand-made cases: B's corner nearest to A's edge (off every face), A's corner nearest to
    B's corner: the exact distance and points."""
    a = tc.Box([2.0, 2.0, 2.0])
    b = tc.Box([1.0, 1.0, 1.0])
    pose_b = np.eye(4)
    # B axis-aligned, diagonally beyond A's +x +y +z corner: corner to corner
    pose_b[:3, 3] = [1.0 + 0.5 + 0.3, 1.0 + 0.5 + 0.4, 1.0 + 0.5 + 0.5]
    separation, axis, R, _ = box_box_separation(a._packed[1], np.eye(4), b._packed[1], pose_b, True)
    found, distance, point_a, point_b, normal = box_box_corner_distance(a._packed[1], np.eye(4), b._packed[1],
                                                                        pose_b, R)
    assert found and distance == pytest.approx(np.sqrt(0.3 ** 2 + 0.4 ** 2 + 0.5 ** 2), abs=1e-15)
    np.testing.assert_allclose(point_a, [1.0, 1.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(point_b, [1.3, 1.4, 1.5], atol=1e-15)
    # B turned about z and tilted, its corner that leads along (1, 1, 0) placed just beyond A's
    # +x +y edge (the edge along z): a corner against an edge
    turn = np.eye(4)
    c, s_ = np.cos(np.pi / 4), np.sin(np.pi / 4)
    turn[:3, :3] = [[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]]
    tilt = np.eye(4)
    t2 = np.arctan(1 / np.sqrt(2))
    tilt[:3, :3] = [[1.0, 0.0, 0.0], [0.0, np.cos(t2), -np.sin(t2)], [0.0, np.sin(t2), np.cos(t2)]]
    pose_b = np.eye(4)
    pose_b[:3, :3] = turn[:3, :3] @ tilt[:3, :3]
    corners = (SIGNS * 0.5) @ pose_b[:3, :3].T
    nearest = corners[np.argmin(corners @ np.array([1.0, 1.0, 0.0]))]
    pose_b[:3, 3] = np.array([1.2, 1.2, 0.3]) - nearest  # that corner at (1.2, 1.2, 0.3)
    result = tc.distance(a, None, b, pose_b)
    verts_a, _ = _world_box(a, np.eye(4))
    verts_b, _ = _world_box(b, pose_b)
    reference = N.core_distance(verts_a, verts_b)
    assert result.distance == pytest.approx(reference, abs=1e-12)
    assert _on_box(result.point_a, a, np.eye(4), 1.0) and _on_box(result.point_b, b, pose_b, 1.0)
