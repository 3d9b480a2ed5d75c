"""The allocation-light fast paths (touche/_kernels/narrow/fastpaths.py) must agree with the general
engine (pairs.py) on every pair they take over, in both argument orders."""
import numpy as np
import pytest

import touche as tc
from touche._kernels.narrow.fastpaths import fast_intersects

from engines import engine_answer

SHAPES = {
    "point": tc.Point([0.1, -0.2, 0.3]),
    "sphere": tc.Sphere(0.6, center=[0.1, 0.0, -0.2]),
    "segment": tc.Segment([-0.5, 0.1, 0.0], [0.7, -0.3, 0.2]),
    "capsule": tc.Capsule(0.3, 1.2),
    "zero-length capsule": tc.Capsule(0.4, 0.0),
    "box": tc.Box([1.0, 0.6, 1.4]),
    "aabb": tc.AABB([0.2, -0.1, 0.0], [1.0, 0.5, 0.7]),
}
FAST_PAIRS = [
    ("point", "box"), ("sphere", "box"), ("sphere", "aabb"), ("box", "box"), ("box", "aabb"),
    ("capsule", "capsule"), ("segment", "capsule"), ("sphere", "capsule"),
    ("zero-length capsule", "capsule"),
]


@pytest.mark.parametrize("name_a, name_b", FAST_PAIRS)
def test_fast_intersects_equals_engine(name_a, name_b):
    a, b = SHAPES[name_a], SHAPES[name_b]
    rng = np.random.default_rng([len(name_a), len(name_b), ord(name_a[0]), ord(name_b[0])])
    scale = 0.4 * (a.scale + b.scale)
    poses_a = tc.Pose.random(3000, scale=scale, seed=rng.integers(1 << 30)).matrix
    poses_b = tc.Pose.random(3000, scale=scale, seed=rng.integers(1 << 30)).matrix
    hits = 0
    for order in ((a, poses_a, b, poses_b), (b, poses_b, a, poses_a)):
        x, px, y, py = order
        for i in range(len(px)):
            handled, fast = fast_intersects(*x._packed[:3], px[i], *y._packed[:3], py[i])
            assert handled
            engine = engine_answer(x, px[i], y, py[i], True)[0] <= 0.0
            if fast != engine:
                # only allowed inside the touching band, where the two algorithms' round-off differs
                gap = tc.distance(x, px[i], y, py[i]).signed_distance
                assert abs(gap) < 1e-12, (name_a, name_b, i, gap)
            hits += fast
    rate = hits / (2 * len(poses_a))
    assert 0.15 < rate < 0.85, rate


def test_fast_paths_decline_other_pairs():
    tri = tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0])
    box = SHAPES["box"]
    handled, _ = fast_intersects(*tri._packed[:3], np.eye(4), *box._packed[:3], np.eye(4))
    assert not handled


def test_obb_touching_faces_and_parallel_axes():
    box = tc.Box([2.0, 2.0, 2.0])
    for offset, expected in ((2.0, True), (2.0 + 1e-9, False), (1.999, True)):
        pose = np.eye(4)
        pose[0, 3] = offset
        assert tc.intersects(box, None, box, pose) is expected
    # identical axes, rotated: the case that needs the 4.4.2 epsilon (near-zero cross products)
    rotation = tc.Pose.from_rotvec([0.3, 0.2, -0.4]).matrix
    shifted = rotation.copy()
    shifted[:3, 3] = rotation[:3, :3] @ [2.5, 0.0, 0.0]
    assert not tc.intersects(box, rotation, box, shifted)
    shifted[:3, 3] = rotation[:3, :3] @ [1.5, 0.5, 0.0]
    assert tc.intersects(box, rotation, box, shifted)


DISTANCE_PAIRS = FAST_PAIRS[:3] + [("capsule", "box"), ("segment", "aabb")] + FAST_PAIRS[5:]


@pytest.mark.parametrize("name_a, name_b", [p for p in DISTANCE_PAIRS if p not in (("box", "box"), ("box", "aabb"))])
def test_fast_distance_equals_engine(name_a, name_b):
    from touche._kernels.narrow.fastpaths import fast_distance

    a, b = SHAPES[name_a], SHAPES[name_b]
    scale = 0.6 * (a.scale + b.scale)
    poses_a = tc.Pose.random(1500, scale=scale, seed=11).matrix
    poses_b = tc.Pose.random(1500, scale=scale, seed=12).matrix
    handled_count = 0
    for x, px, y, py in ((a, poses_a, b, poses_b), (b, poses_b, a, poses_a)):
        for i in range(len(px)):
            handled, signed, point_a, point_b, normal = fast_distance(*x._packed[:3], px[i], *y._packed[:3], py[i])
            if not handled:
                continue
            handled_count += 1
            reference = engine_answer(x, px[i], y, py[i], False, 1e-12)
            assert signed == pytest.approx(reference[0], rel=1e-12, abs=1e-14)
            if signed > 1e-9:  # closest points are unique only when separated
                np.testing.assert_allclose(point_a, reference[1], atol=1e-12)
                np.testing.assert_allclose(point_b, reference[2], atol=1e-12)
                np.testing.assert_allclose(normal, reference[3], atol=1e-9)
    assert handled_count > 0.3 * 2 * len(poses_a)


def test_fast_pair_tables_match_what_the_kernels_handle():
    """The registry sends exactly the pairs the closed forms handle to their short entries."""
    from touche import dispatch
    from touche._kernels import kinds
    from touche._kernels.narrow.fastpaths import fast_distance

    def fast(verb):
        return {pair for pair, route in dispatch.routes(verb).items() if route.engine == dispatch.CLOSED_FORM}

    fast_intersect_pairs, fast_distance_pairs = fast(dispatch.INTERSECTS), fast(dispatch.DISTANCE)
    assert fast_distance_pairs == fast(dispatch.SIGNED_DISTANCE) and fast_distance_pairs < fast_intersect_pairs

    shapes = {s.kind: s for s in SHAPES.values()}
    shapes[kinds.TRIANGLE] = tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0])
    far = np.eye(4)
    far[:3, 3] = [5.0, 1.0, 0.5]
    for ka, a in shapes.items():
        for kb, b in shapes.items():
            handled, _ = fast_intersects(*a._packed[:3], np.eye(4), *b._packed[:3], far)
            assert handled == ((ka, kb) in fast_intersect_pairs), (ka, kb)
            handled_distance = fast_distance(*a._packed[:3], np.eye(4), *b._packed[:3], far)[0]
            assert handled_distance == ((ka, kb) in fast_distance_pairs), (ka, kb)  # separated: handled iff listed


FAMILY_PAIRS = [("point", "sphere"), ("sphere", "sphere"), ("sphere", "point"), ("box", "box"), ("box", "aabb")]


@pytest.mark.parametrize("name_a, name_b", FAMILY_PAIRS)
def test_family_entries_equal_the_general_closed_form_entry(name_a, name_b):
    """The small entries a first query compiles alone (point cores, two boxes) answer as the
    general closed-form entry does, bit for bit, through the public verbs and directly."""
    from touche._kernels import batch

    a, b = SHAPES[name_a], SHAPES[name_b]
    rng = np.random.default_rng([len(name_a), len(name_b), 7])
    scale = 0.4 * (a.scale + b.scale)
    poses = tc.Pose.random(500, scale=scale, seed=int(rng.integers(1 << 30))).matrix
    pa, pb = a._packed, b._packed
    point_cores = {tc.Point, tc.Sphere}
    hits = 0
    for pose in poses:
        general = batch.checked_fast_intersects(pa[0], pa[1], pa[2], np.eye(4), pb[0], pb[1], pb[2], pose)
        assert general in (0, 1)
        hits += general
        assert tc.intersects(a, None, b, pose) == bool(general)
        if type(a) in point_cores and type(b) in point_cores:
            # the family entries read a sphere's radius from its params (a point has none)
            assert batch.checked_point_core_intersects(pa[1], pa[2], np.eye(4), pb[1], pb[2], pose) == general
            out_general, out_family = np.empty(10), np.empty(10)
            status_general = batch.checked_fast_distance_into(pa[0], pa[1], pa[2], a.scale, np.eye(4), pb[0], pb[1],
                                                              pb[2], b.scale, pose, out_general)
            status_family = batch.checked_point_core_distance_into(pa[1], pa[2], a.scale, np.eye(4), pb[1], pb[2],
                                                                   b.scale, pose, out_family)
            assert status_family == status_general
            if status_general != batch.NOT_HANDLED:
                assert np.array_equal(out_family, out_general)
        else:
            assert batch.checked_box_box_intersects(pa[1], np.eye(4), pb[1], pose) == general
    assert 0 < hits < len(poses)  # both answers occur
