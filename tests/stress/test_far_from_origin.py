"""Issue 23, finding 10: the answer of a pair must not depend on where the pair sits in the world.

The same scene (a unit shape 0.22 from a box, and a 1e-9 gap) is queried at the origin and moved
as a whole by offsets 1e0 .. 1e12: distances agree to within the rounding of the coordinates
(a few units in the last place of the offset), statuses agree, and a real gap is never TOUCHING."""
import numpy as np
import pytest

import touche as tc

GAP = 0.22
OFFSETS = [1e0, 1e4, 1e8, 1e12]


def _round_shapes():
    return {
        "sphere": tc.Sphere(0.5),
        "cylinder": tc.Cylinder(0.5, 1.0),
        "cone": tc.Cone(0.5, 1.0),
        "ellipsoid": tc.Ellipsoid([0.5, 0.4, 0.3]),
        "capsule": tc.Capsule(0.5, 1.0),
        "box": tc.Box([1.0, 1.0, 1.0]),
    }


def _scene(offset, gap):
    """Pose of a shape whose +x extent is 0.5 (all shapes above) `gap` left of a unit box, both moved by offset."""
    shift = np.array([offset, -offset, 0.5 * offset])
    pose_shape = tc.Pose.from_translation(shift + [-1.0 - gap, 0.0, 0.0])
    pose_box = tc.Pose.from_translation(shift)
    return pose_shape, pose_box


@pytest.mark.parametrize("name", sorted(_round_shapes()))
@pytest.mark.parametrize("offset", OFFSETS)
def test_gap_far_from_origin_equals_the_gap_at_the_origin(name, offset):
    shape = _round_shapes()[name]
    box = tc.Box([1.0, 1.0, 1.0])
    at_origin = tc.distance(shape, *_scene(0.0, GAP)[:1], box, _scene(0.0, GAP)[1])
    pose_shape, pose_box = _scene(offset, GAP)
    far = tc.distance(shape, pose_shape, box, pose_box)
    rounding = 64 * np.spacing(offset)  # what the input coordinates themselves carry
    assert at_origin.distance == pytest.approx(GAP, abs=1e-9)
    assert far.status == tc.Status.SEPARATED
    assert abs(far.distance - at_origin.distance) <= rounding + 1e-9
    assert not tc.intersects(shape, pose_shape, box, pose_box)


@pytest.mark.parametrize("offset", [1e0, 1e2, 1e4])
def test_a_nanometre_gap_is_seen_at_moderate_offsets(offset):
    # coordinates near 1e4 carry ~1.8e-12 of rounding: a 1e-9 gap is far above it
    pose_sphere, pose_box = _scene(offset, 1e-9)
    result = tc.distance(tc.Sphere(0.5), pose_sphere, tc.Box([1.0, 1.0, 1.0]), pose_box)
    assert result.status == tc.Status.SEPARATED
    assert result.distance == pytest.approx(1e-9, rel=1e-2)


def test_touching_band_does_not_grow_with_the_translation():
    from touche import tolerance

    assert tolerance.touching_tolerance(1.0, 1e12) < 0.05
    assert tolerance.touching_tolerance(1.0, 1e12) > 64 * np.spacing(1e12) - 1e-12
    assert tolerance.touching_tolerance(1.0) == pytest.approx(tolerance.ABSOLUTE + tolerance.RELATIVE)


def test_batch_statuses_far_from_origin_match_single_calls():
    shape, box = tc.Cylinder(0.5, 1.0), tc.Box([1.0, 1.0, 1.0])
    poses = []
    for offset in OFFSETS:
        pose_shape, pose_box = _scene(offset, GAP)
        poses.append(np.linalg.inv(pose_box.matrix) @ pose_shape.matrix)
    # the batch side: the box at one far pose, the shape at several far poses relative to it
    far_box = _scene(1e12, GAP)[1].matrix
    batch = tc.distance(shape, np.array([far_box @ p for p in poses]), box, far_box)
    assert (batch.status == int(tc.Status.SEPARATED)).all()
    assert np.allclose(batch.distance, GAP, atol=64 * np.spacing(1e12))
