"""Solid mesh pairs in ``touche.intersects``, single calls and batches, against a brute-force
reference: every triangle pair for "the surfaces meet", and the solid-angle winding number of
EVERY vertex of the other mesh for "a solid holds it" (the library tests one vertex per
connected component, prefiltered by bounding spheres and the solid's box in compiled code:
bvh_overlap.solid_tree_intersects_pair and solid_candidates_many)."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import touche as tc
from touche import GeometryError

from naive import bsp as naive_bsp
from naive.mesh import mesh_clearance_brute

MESHES = naive_bsp.test_meshes()


def _random_poses(count, rng, spread):
    from scipy.spatial.transform import Rotation

    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, :3, :3] = Rotation.random(count, random_state=rng.integers(1 << 31)).as_matrix()
    poses[:, :3, 3] = rng.uniform(-spread, spread, (count, 3))
    return poses


def _moved(vertices, pose):
    return vertices @ pose[:3, :3].T + pose[:3, 3]


def _reference(a, pose_a, b, pose_b):
    """None when the surfaces' gap is within rounding of zero (an ambiguous pose), else whether
    the pair intersects: the surfaces meet, or a solid holds a vertex of the other mesh."""
    va, vb = _moved(a.vertices, pose_a), _moved(b.vertices, pose_b)
    gap, hit, _ = mesh_clearance_brute(va, a.faces, vb, b.faces)
    if hit or gap == 0.0:
        return True
    if gap < 1e-9:
        return None
    held = (a.solid and naive_bsp.inside(va, a.faces, vb).any()) or (b.solid and naive_bsp.inside(vb, b.faces, va).any())
    return bool(held)


PAIRS = [
    # (mesh a, scale, solid?), (mesh b, scale, solid?), spread of b's translations
    (("torus", 1.0, True), ("icosphere", 0.25, True), 1.4),
    (("l_block", 1.0, True), ("capsule", 0.3, False), 1.0),
    (("cylinder", 1.0, False), ("cube", 3.0, True), 4.0),
    (("icosphere", 1.0, True), ("icosphere", 0.3, True), 1.5),
]


@pytest.mark.parametrize("first, second, spread", PAIRS, ids=lambda value: str(value))
def test_single_and_batch_equal_the_brute_force_reference(first, second, spread):
    meshes = []
    for name, scale, solid in (first, second):
        vertices, faces = MESHES[name]
        meshes.append(tc.TriangleMesh(vertices * scale, faces, solid=solid))
    a, b = meshes
    rng = np.random.default_rng(zlib.crc32(repr((first, second)).encode()))
    poses_b = _random_poses(60, rng, spread)
    # half of them centred on points inside a (rejection sampled in its box): nested poses
    box = rng.uniform(a.vertices.min(axis=0), a.vertices.max(axis=0), (2000, 3))
    deep = box[naive_bsp.inside(a.vertices, a.faces, box)]
    poses_b[::2, :3, 3] = deep[:30]
    pose_a = np.eye(4)
    expected = [_reference(a, pose_a, b, pose) for pose in poses_b]
    known = np.array([value is not None for value in expected])
    truth = np.array([bool(value) for value in expected])
    assert 0.1 < truth[known].mean() < 0.9  # both answers occur
    held_only = [k for k in range(len(poses_b)) if truth[k] and not tc.intersects(tc.TriangleMesh(a.vertices, a.faces), pose_a,
                                                                                   tc.TriangleMesh(b.vertices, b.faces), poses_b[k])]
    assert held_only  # and some poses intersect only by containment (no surface contact)
    single = np.array([tc.intersects(a, pose_a, b, pose) for pose in poses_b])
    batch = tc.intersects(a, pose_a, b, poses_b)  # a single pose against a batch: broadcast
    mirrored = tc.intersects(b, poses_b, a, pose_a)
    both_batches = tc.intersects(a, np.repeat(pose_a[None], len(poses_b), axis=0), b, poses_b)
    np.testing.assert_array_equal(single[known], truth[known])
    np.testing.assert_array_equal(batch, single)
    np.testing.assert_array_equal(mirrored, single)
    np.testing.assert_array_equal(both_batches, single)


def test_containment_is_found_whatever_the_prefilter_sees():
    """A small solid deep inside a large one (spheres reach, the representative is in the box,
    the surfaces never meet) and a small one inside the large one's box but outside the solid
    (the corner of a cube's box outside an inscribed sphere): the exact test decides."""
    vertices, faces = MESHES["icosphere"]  # radius 1
    outer = tc.TriangleMesh(vertices, faces, solid=True)
    inner = tc.TriangleMesh(vertices * 0.05, faces, solid=True)
    inside = tc.Pose.from_translation([0.3, -0.2, 0.1])
    corner = tc.Pose.from_translation([0.85, 0.85, 0.85])  # in the box [-1, 1]^3, outside the sphere
    assert tc.intersects(outer, None, inner, inside) is True
    assert tc.intersects(inner, inside, outer, None) is True
    assert tc.intersects(outer, None, inner, corner) is False
    assert tc.intersects(outer, None, inner, np.stack([inside.matrix, corner.matrix])).tolist() == [True, False]
    # the same inner mesh as a surface: held by the solid either way round
    surface = tc.TriangleMesh(vertices * 0.05, faces)
    assert tc.intersects(outer, None, surface, inside) is True
    assert tc.intersects(surface, inside, outer, None) is True
    # a solid inside a surface mesh: surfaces only, no contact
    assert tc.intersects(tc.TriangleMesh(vertices, faces), None, inner, inside) is False


def test_every_pose_form_reaches_the_same_answer():
    vertices, faces = MESHES["torus"]
    a = tc.TriangleMesh(vertices, faces, solid=True)
    b = tc.TriangleMesh(MESHES["cube"][0] * 0.2, MESHES["cube"][1], solid=True)
    matrix = tc.Pose.from_translation([1.0, 0.0, 0.0]).matrix  # in the torus' tube
    assert tc.intersects(a, None, b, matrix) is True
    readonly = np.array(matrix)
    readonly.setflags(write=False)
    strided = np.asfortranarray(matrix)
    for pose in (tc.Pose(matrix), readonly, strided, matrix.tolist()):
        assert tc.intersects(a, None, b, pose) is True
        assert tc.intersects(b, pose, a, None) is True


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_bad_pose_is_refused_on_the_solid_path(bad):
    vertices, faces = MESHES["icosphere"]
    a = tc.TriangleMesh(vertices, faces, solid=True)
    pose = np.eye(4)
    pose[0, 3] = bad
    with pytest.raises(GeometryError):
        tc.intersects(a, None, a, pose)
    with pytest.raises(GeometryError):
        tc.intersects(a, pose, a, None)
    scaled = np.eye(4)
    scaled[:3, :3] *= 2.0
    with pytest.raises(GeometryError):
        tc.intersects(a, None, a, scaled)
    with pytest.raises(GeometryError):
        tc.intersects(a, None, a, np.stack([np.eye(4), pose]))


def test_huge_and_tiny_scales():
    vertices, faces = MESHES["icosphere"]
    for scale in (1e-6, 1e6):
        outer = tc.TriangleMesh(vertices * scale, faces, solid=True)
        inner = tc.TriangleMesh(vertices * 0.2 * scale, faces, solid=True)
        inside = tc.Pose.from_translation([0.3 * scale, 0.0, 0.0])
        apart = tc.Pose.from_translation([3.0 * scale, 0.0, 0.0])
        assert tc.intersects(outer, None, inner, inside) is True
        assert tc.intersects(outer, None, inner, apart) is False
        assert tc.intersects(outer, None, inner, np.stack([inside.matrix, apart.matrix])).tolist() == [True, False]


def test_an_uncertified_crossing_count_falls_back_to_the_winding_number(monkeypatch):
    """The compiled containment test answers 2 when a representative's crossing count was not
    certified (a ray grazing an edge): the winding-number test then decides. Forced here for
    every pair, the answers equal the compiled path's on nested, boxed-but-outside and far poses."""
    from touche import solids

    vertices, faces = MESHES["torus"]
    a = tc.TriangleMesh(vertices, faces, solid=True)
    b = tc.TriangleMesh(MESHES["icosphere"][0] * 0.1, MESHES["icosphere"][1], solid=True)
    rng = np.random.default_rng(7)
    poses = _random_poses(40, rng, 1.3)
    poses[::3, :3, 3] = [1.0, 0.0, 0.0]  # in the torus' tube: held
    poses[1::3, :3, 3] = [0.0, 0.0, 0.0]  # in the hole: in the box, not held
    compiled_single = [tc.intersects(a, None, b, pose) for pose in poses]
    compiled_batch = tc.intersects(a, None, b, poses)
    compiled_margin = tc.intersects(a, None, b, poses, margin=1e-6)
    assert any(compiled_single) and not all(compiled_single)
    kernels = solids._overlap_kernels()

    def undecided_pair(*args):
        return 2

    def undecided_many(*args):
        args[-3][args[-2]:args[-1]] = 2

    winding_calls = []
    winding = solids._inside_any

    def counted_winding(*args):
        winding_calls.append(1)
        return winding(*args)

    monkeypatch.setattr(kernels, "solid_held_pair", undecided_pair)
    monkeypatch.setattr(kernels, "solid_held_many", undecided_many)
    monkeypatch.setattr(solids, "_inside_any", counted_winding)
    assert [tc.intersects(a, None, b, pose) for pose in poses] == compiled_single
    np.testing.assert_array_equal(tc.intersects(a, None, b, poses), compiled_batch)
    np.testing.assert_array_equal(tc.intersects(a, None, b, poses, margin=1e-6), compiled_margin)
    assert [tc.intersects(a, None, b, pose, margin=1e-6) for pose in poses] == compiled_margin.tolist()
    assert len(winding_calls) > 40  # the winding number answered (every single call in a box, and the batches)


def test_a_used_solid_mesh_pickles_without_its_kernel_arguments():
    import pickle

    vertices, faces = MESHES["icosphere"]
    outer = tc.TriangleMesh(vertices, faces, solid=True)
    inner = tc.TriangleMesh(vertices * 0.05, faces, solid=True)
    assert tc.intersects(outer, None, inner, None) is True  # the kernel arguments are kept now
    assert outer._pair_arguments is not None
    restored = pickle.loads(pickle.dumps(outer))
    assert restored.solid and getattr(restored, "_pair_arguments", None) is None
    assert tc.intersects(restored, None, inner, None) is True
    assert tc.intersects(restored, None, inner, tc.Pose.from_translation([5.0, 0.0, 0.0])) is False
