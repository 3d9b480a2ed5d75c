"""The allocation-light fast paths (touche/_kernels/fastpaths.py) must agree with the general
engine (pairs.py) on every pair they take over, in both argument orders."""
import numpy as np
import pytest

import touche as tc
from touche._kernels.fastpaths import fast_intersects
from touche._kernels.pairs import pair_intersects

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
            handled, fast = fast_intersects(x.kind, x.params, x.points, px[i], y.kind, y.params, y.points, py[i])
            assert handled
            engine = pair_intersects(x.kind, x.params, x.points, x.triangles, x.edges, px[i],
                                     y.kind, y.params, y.points, y.triangles, y.edges, py[i])
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
    handled, _ = fast_intersects(tri.kind, tri.params, tri.points, np.eye(4), box.kind, box.params, box.points, np.eye(4))
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
