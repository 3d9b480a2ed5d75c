"""Bad and degenerate mesh input through every mesh query (issue 4, section 4): empty meshes,
NaN / inf vertices, out-of-range or non-integer face indices raise touche.GeometryError at the
boundary (never a numba error, a crash or a wrong answer); zero-area and duplicate triangles are
kept and never produce NaN; inside / outside on an open mesh raises a clear error."""
from __future__ import annotations

import numpy as np
import pytest

import touche as tc
import touche.bvh as bvh

trimesh = pytest.importorskip("trimesh")

GOOD_V = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
GOOD_F = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]


@pytest.mark.parametrize("vertices, faces, message", [
    (np.zeros((0, 3)), np.zeros((0, 3), dtype=int), "vertices"),
    (GOOD_V, np.zeros((0, 3), dtype=int), "faces"),
    ([[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]], [[0, 1, 2]], "NaN|finite|inf"),
    ([[0, 0, 0], [1, 0, 0], [np.inf, 1, 0]], [[0, 1, 2]], "NaN|finite|inf"),
    (GOOD_V, [[0, 1, 4]], "range"),
    (GOOD_V, [[0, -1, 2]], "range"),
    (GOOD_V, [[0, 1.5, 2]], "integer"),
    (GOOD_V, [[0, 1, 2, 3]], "faces"),
    (np.zeros((4, 2)), [[0, 1, 2]], "vertices"),
    (GOOD_V, [["a", "b", "c"]], "integer"),
])
def test_malformed_meshes_raise_geometry_error(vertices, faces, message):
    with pytest.raises(tc.GeometryError, match=message):
        tc.TriangleMesh(vertices, faces)


def test_trimesh_input_is_validated_too():
    bad = trimesh.Trimesh(vertices=[[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]], faces=[[0, 1, 2]], process=False)
    good = tc.TriangleMesh(GOOD_V, GOOD_F)
    for call in (lambda: tc.intersects(bad, None, good, None), lambda: tc.distance(good, None, bad, None),
                 lambda: tc.raycast(bad, None, [0, 0, 5], [0, 0, -1]), lambda: tc.contains(bad, None, [0, 0, 0]),
                 lambda: bvh.distance(bad, None, good, None)):
        with pytest.raises(tc.GeometryError):
            call()


def _degenerate_meshes():
    rng = np.random.default_rng(4)
    points = rng.normal(size=(30, 3))
    zero_area = np.concatenate([np.arange(30)[:, None], np.arange(30)[:, None], (np.arange(30)[:, None] + 1) % 30],
                               axis=1)  # every triangle has a repeated vertex
    collinear_v = np.array([[0.0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3], [0.5, 0.5, 0.5]])
    box = trimesh.creation.box([1.0, 1.0, 1.0])
    duplicated = np.concatenate([box.faces, box.faces, box.faces[:3]])
    with_slivers = np.concatenate([box.faces, [[0, 0, 0], [1, 1, 2], [3, 4, 3]]])
    return {
        "all zero-area": tc.TriangleMesh(points, zero_area),
        "collinear": tc.TriangleMesh(collinear_v, [[0, 1, 2], [1, 2, 3], [0, 4, 3], [4, 4, 4]]),
        "duplicated box": tc.TriangleMesh(box.vertices, duplicated),
        "box with slivers": tc.TriangleMesh(box.vertices, with_slivers),
    }


@pytest.mark.parametrize("name", list(_degenerate_meshes()))
def test_zero_area_and_duplicate_triangles_never_give_nan(name):
    mesh = _degenerate_meshes()[name]
    rng = np.random.default_rng(9)
    poses = np.tile(np.eye(4), (40, 1, 1))
    poses[:, :3, 3] = rng.normal(size=(40, 3)) * 0.8
    others = [tc.Sphere(0.3), tc.Box([0.4, 0.3, 0.2]), tc.Capsule(0.1, 0.5), tc.Segment([0, 0, 0], [0.3, 0.2, 0.1]),
              tc.Cylinder(0.2, 0.4), tc.ConvexPolyhedron(rng.normal(size=(10, 3)) * 0.3), mesh,
              tc.TriangleMesh(GOOD_V, GOOD_F)]
    for other in others:
        result = tc.distance(other, poses, mesh, None)
        assert not np.isnan(result.signed_distance).any(), type(other).__name__
        assert not np.isnan(result.point_a).any() and not np.isnan(result.normal).any()
        hits = tc.intersects(mesh, None, other, poses)
        assert np.array_equal(hits, result.signed_distance <= 0.0) or type(other) is tc.TriangleMesh
    origins = rng.normal(size=(200, 3)) * 2.0
    rays = tc.raycast(mesh, None, origins, -origins)
    assert not np.isnan(rays.t[rays.hit]).any() and not np.isnan(rays.point[rays.hit]).any()
    closest = tc.closest_point(mesh, None, origins)
    assert np.all(np.isfinite(closest.point)) and np.all(np.isfinite(closest.distance))
    winding = tc.winding_number(mesh, None, origins)
    assert np.all(np.isfinite(winding))
    pair = bvh.CoherentPair(mesh, mesh)
    for pose in poses[:5]:
        assert np.isfinite(pair.distance(None, pose).distance)
    collided = bvh.collide(mesh, None, mesh, poses[0])
    assert np.all(np.isfinite(collided.segments[~collided.node_pairs.any(axis=1)]))


def test_inside_outside_on_open_meshes_raises_clearly():
    open_mesh = tc.TriangleMesh(GOOD_V, GOOD_F[:3])
    with pytest.raises(tc.GeometryError, match="closed"):
        tc.contains(open_mesh, None, [0.1, 0.1, 0.1])
    with pytest.raises(tc.GeometryError, match="closed"):
        tc.signed_distance_points(open_mesh, None, [[0.1, 0.1, 0.1]])
    # duplicate triangles make a mesh non-closed too (edges used four times)
    box = trimesh.creation.box([1.0, 1.0, 1.0])
    doubled = tc.TriangleMesh(box.vertices, np.concatenate([box.faces, box.faces]))
    with pytest.raises(tc.GeometryError, match="closed"):
        tc.contains(doubled, None, [0.0, 0.0, 0.0])
    # the documented escape hatch: winding number >= 0.5
    assert tc.contains(open_mesh, None, [0.1, 0.1, 0.1], open_ok=True) in (True, False)


def test_bad_poses_and_queries_name_the_argument():
    mesh = tc.TriangleMesh(GOOD_V, GOOD_F)
    nan_pose = np.full((4, 4), np.nan)
    sheared = np.eye(4)
    sheared[0, 1] = 0.5
    for verb in (tc.intersects, tc.distance):
        for other in (mesh, tc.Sphere(1.0)):
            with pytest.raises(tc.GeometryError, match="pose_a"):
                verb(mesh, nan_pose, other, None)
            with pytest.raises(tc.GeometryError, match="pose_b"):
                verb(mesh, None, other, sheared)
    with pytest.raises(tc.GeometryError):
        tc.raycast(mesh, None, [0, 0, 1], [0, 0, 0])  # zero direction
    with pytest.raises(tc.GeometryError):
        tc.closest_point(mesh, None, [[np.nan, 0, 0]])
    with pytest.raises(tc.GeometryError):
        tc.winding_number(mesh, nan_pose, [0.0, 0.0, 0.0])
