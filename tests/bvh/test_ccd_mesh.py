"""Time of impact of triangle meshes (touche/_kernels/motion/ccd_mesh.py): mesh-mesh, mesh-convex and
mesh-plane under Linear, Screw (fast spins), Keyframes, Integrated and CallableMotion.

The claims under test (as tests/kernels/test_ccd.py): never MISS when the shapes touch somewhere in
[0, t_max], never report a time after the first contact, the time within 1e-9 t_max of the
first contact (or, where earlier, a real contact to 1e-10 at the reported time). Reference:
dense sampling of a static test plus bisection (tests/naive/ccd.py ``first_contact``), the
static test being touche.bvh.intersects for two meshes (itself tested against all-pairs
triangle tests and python-fcl in tests/bvh/test_bvh.py) and, for a convex or a plane, numpy
brute force over the triangles. Meshes are surfaces: a mesh inside another touches nothing.
"""
import numpy as np
import pytest
import trimesh

from naive import ccd as R
import touche as tc
from touche import _parallel
from touche.impact import ImpactStatus, time_of_impact
from touche.motion import CallableMotion, Integrated, Keyframes, QuadraticMatrix, Screw

HIT, MISS, TOUCH = int(ImpactStatus.HIT), int(ImpactStatus.MISS), int(ImpactStatus.ALREADY_TOUCHING)


def _mesh(loaded):
    return tc.TriangleMesh(np.asarray(loaded.vertices), np.asarray(loaded.faces))


def _plate(width=1.0, depth=0.3):
    """A flat rectangle of two triangles (zero thickness) in the local xz plane."""
    x, z = width / 2, depth / 2
    return tc.TriangleMesh([[-x, 0, -z], [x, 0, -z], [x, 0, z], [-x, 0, z]], [[0, 1, 2], [0, 2, 3]])


TORUS = _mesh(trimesh.creation.torus(major_radius=0.6, minor_radius=0.18, major_sections=16, minor_sections=8))
BALL = _mesh(trimesh.creation.icosphere(subdivisions=1, radius=0.35))
PLATE = _plate()


def _rotations(rng, n):
    from scipy.spatial.transform import Rotation

    return Rotation.random(n, random_state=rng).as_matrix()


def _poses(rotations, translations):
    out = np.tile(np.eye(4), (len(translations), 1, 1))
    out[:, :3, :3] = rotations
    out[:, :3, 3] = translations
    return out


def _radius(mesh):
    return float(np.linalg.norm(mesh.vertices, axis=1).max())


def _mesh_oracles(mesh_a, path, mesh_b, pose_b):
    """(separation for the sampling: -1 touching / +1 apart, distance for the gap checks, cull)
    of moving mesh A (``path(t, rows)`` -> poses) against mesh B at pose_b."""
    reach = _radius(mesh_a) + _radius(mesh_b)

    def separation(t, rows):
        touching = tc.bvh.intersects(mesh_a, np.ascontiguousarray(path(t, rows)), mesh_b, pose_b)
        return np.where(np.atleast_1d(touching), -1.0, 1.0)

    def distance(t, rows):
        return np.atleast_1d(tc.bvh.distance(mesh_a, np.ascontiguousarray(path(t, rows)), mesh_b, pose_b).distance)

    def cull(t, rows):
        return np.linalg.norm(path(t, rows)[:, :3, 3] - pose_b[:3, 3], axis=1) - reach

    return separation, distance, cull


def _convex_oracles(mesh, screws, convex, convex_reach):
    """(signed distance, cull) for the sampling reference of a mesh moving by the screw batch
    ``screws`` = (pose, v, w, center) against a convex solid at the origin (touche.distance: mesh
    vs convex by brute force over the triangles), convex_reach bounding the solid."""
    pose, v, w, center = screws

    def path(t, rows):
        return R.screw_poses(pose[rows], v[rows], w[rows], center[rows], t)

    def distance(t, rows):
        return np.atleast_1d(tc.distance(mesh, np.ascontiguousarray(path(t, rows)), convex, None).signed_distance)

    def cull(t, rows):
        return np.linalg.norm(path(t, rows)[:, :3, 3], axis=1) - _radius(mesh) - convex_reach

    return distance, cull


def _screw_cases(rng, n, spin_turns, start=(1.0, 1.9), miss=0.45):
    """Start poses around the origin, velocities roughly towards it, spins up to ``spin_turns``
    turns per time unit about random axes through points near the start."""
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    translation = direction * rng.uniform(*start, (n, 1))
    pose = _poses(_rotations(rng, n), translation)
    v = -translation * rng.uniform(0.3, 1.3, (n, 1)) + rng.normal(size=(n, 3)) * miss
    w = rng.normal(size=(n, 3))
    w *= (2 * np.pi * rng.uniform(0.0, spin_turns, n) / np.linalg.norm(w, axis=1))[:, None]
    center = translation + rng.normal(size=(n, 3)) * 0.2
    return pose, v, w, center


# ----------------------------------------------------------------------------------------------
# the kernel's assumptions about the tree
def test_tree_layout_and_boxes_hold_their_triangles():
    """ccd_mesh reads the OBB of every node (bvh_volumes layout) and relies on it holding the
    node's triangles (the projection gaps) within h0 + h1 + h2 of its centre (the reach)."""
    from touche._kernels import bvh_volumes, ccd_node_bounds

    assert (ccd_node_bounds.OBB_CENTER, ccd_node_bounds.OBB_AXES, ccd_node_bounds.OBB_HALF,
            ccd_node_bounds.SPHERE_RADIUS) == (
        bvh_volumes.OBB_CENTER, bvh_volumes.OBB_AXES, bvh_volumes.OBB_HALF, bvh_volumes.SPHERE_RADIUS)
    for mesh in (TORUS, BALL, PLATE):
        tree = mesh.bvh
        for node in range(tree.node_count):
            first, count, _ = tree.node_index[node]
            corners = tree.tri_vertices[first:first + count].reshape(-1, 3)
            row = tree.node_bounds[node]
            axes = row[9:18].reshape(3, 3)
            local = (corners - row[6:9]) @ axes.T
            assert (np.abs(local) <= row[18:21] + 1e-12).all()
            np.testing.assert_allclose(axes @ axes.T, np.eye(3), atol=1e-12)


# ----------------------------------------------------------------------------------------------
# worked examples
def test_box_meshes_agree_with_the_exact_engines():
    """A box as a 12-triangle mesh against a box: the first contact of a Linear motion equals the
    moving-SAT engine's (exact) time; under a Screw it equals conservative advancement on the
    convex pair. Known answer: unit boxes 5 apart closing at speed 1 touch at t = 4."""
    box = tc.Box([1.0, 1.0, 1.0])
    cube = _mesh(trimesh.creation.box(extents=[1.0, 1.0, 1.0]))
    start = tc.Pose.from_translation([5.0, 0.2, 0.1])
    # contact is declared at a distance <= the touching tolerance (~1e-12 x size): at closing
    # speed 1 the time may be that much early, never late; the bound is 1e-9 t_max
    result = time_of_impact(cube, tc.Linear([-1.0, 0, 0], start), cube, None, 10.0)
    assert result.status == ImpactStatus.HIT and 4.0 - 1e-11 <= result.time <= 4.0
    np.testing.assert_allclose(result.normal, [-1, 0, 0], atol=1e-9)
    assert abs(result.point[0] - 0.5) <= 1e-9 and result.triangles.shape == (2,) and (result.triangles >= 0).all()
    for pair in [(cube, box), (box, cube)]:
        r = time_of_impact(pair[0], tc.Linear([-1.0, 0, 0], start), pair[1], None, 10.0)
        assert r.status == ImpactStatus.HIT and 4.0 - 1e-11 <= r.time <= 4.0
        np.testing.assert_allclose(r.normal, [-1, 0, 0], atol=1e-9)
    rng = np.random.default_rng(4)
    n = 300
    pose, v, w, center = _screw_cases(rng, n, 2.0, start=(1.5, 2.5), miss=1.0)
    motion = Screw(v, w, pose, center)
    exact = time_of_impact(box, motion, box, None, 1.0)
    meshed = time_of_impact(cube, motion, cube, None, 1.0)
    mixed = time_of_impact(cube, motion, box, None, 1.0)
    hits = exact.status == HIT
    assert 0.2 <= hits.mean() <= 0.8
    np.testing.assert_array_equal(meshed.status, exact.status)
    np.testing.assert_array_equal(mixed.status, exact.status)
    # both sides report d <= eps ~ 1e-11: the times agree to that over the closing speed
    np.testing.assert_allclose(meshed.time[hits], exact.time[hits], rtol=0, atol=1e-9)
    np.testing.assert_allclose(mixed.time[hits], exact.time[hits], rtol=0, atol=1e-9)


@pytest.mark.slow
def test_thin_plate_spinning_through_a_thin_plate_is_caught():
    """Two zero-thickness plates: A spins at 50 turns per time unit about its own centre while
    drifting onto B. Sampling at 200 steps misses most such contacts; advancement never does."""
    rng = np.random.default_rng(8)
    n = 1000
    translation = np.column_stack([rng.uniform(-0.2, 0.2, n), rng.uniform(0.3, 0.8, n), rng.uniform(-0.2, 0.2, n)])
    pose = _poses(_rotations(rng, n), translation)
    v = np.column_stack([rng.normal(size=n) * 0.8, -translation[:, 1] * rng.uniform(0.0, 1.4, n), rng.normal(size=n) * 0.8])
    w = rng.normal(size=(n, 3))
    w *= (2 * np.pi * 50 / np.linalg.norm(w, axis=1))[:, None]
    result = time_of_impact(PLATE, Screw(v, w, pose, translation), PLATE, None, 1.0)

    def path(t, rows):
        return R.screw_poses(pose[rows], v[rows], w[rows], translation[rows], t)

    separation, distance, cull = _mesh_oracles(PLATE, path, PLATE, np.eye(4))
    reference = R.first_contact(separation, n, 1.0, samples=4000, cull=cull)
    R.check_times(result, reference, distance, 1.0, label="spinning plates")
    coarse = R.first_contact(separation, n, 1.0, samples=200, iterations=0, cull=cull)
    assert (np.isfinite(reference) & ~np.isfinite(coarse)).sum() > 0.05 * n  # 200 samples tunnel


def test_grazing_mesh_contact_at_a_known_time():
    """A box mesh spinning about z reaches a half-space only with its corners: contact at the
    known instant (double root: the time is fixed to ~sqrt(eps)); never late, within 1e-4."""
    cube = _mesh(trimesh.creation.box(extents=[2.0, 1.0, 0.4]))
    omega = 2 * np.pi * 5
    reach = np.hypot(1.0, 0.5)
    result = time_of_impact(cube, Screw([0, 0, 0], [0, 0, -omega]), tc.HalfSpace([-1, 0, 0], -reach), None, 1.0)
    expected = np.arctan2(0.5, 1.0) / omega
    assert result.status == ImpactStatus.HIT
    assert result.time <= expected + 1e-12 and expected - result.time < 1e-4
    near = time_of_impact(cube, Screw([0, 0, 0], [0, 0, -omega]), tc.HalfSpace([-1, 0, 0], -reach - 1e-6), None, 1.0)
    assert near.status == ImpactStatus.MISS


# ----------------------------------------------------------------------------------------------
# randomized against dense sampling
def _screw_against_sampling(mesh_a, screws, mesh_b, t_max, label):
    """time_of_impact of mesh A moving by the screw batch (pose, v, w, center) past static mesh
    B, checked against dense sampling of the static test + bisection; returns the result."""
    pose, v, w, center = screws
    result = time_of_impact(mesh_a, Screw(v, w, pose, center), mesh_b, None, t_max)

    def path(t, rows):
        return R.screw_poses(pose[rows], v[rows], w[rows], center[rows], t)

    separation, distance, cull = _mesh_oracles(mesh_a, path, mesh_b, np.eye(4))
    reference = R.first_contact(separation, len(pose), t_max, samples=1000, cull=cull)
    R.check_times(result, reference, distance, t_max, label=label)
    return result


@pytest.mark.slow
def test_mesh_mesh_screw_fast_spins():
    """10,000 screw motions of a small closed mesh spinning at up to 10 turns per time unit
    past a torus (non-convex: passing through the hole is a miss)."""
    rng = np.random.default_rng(2026)
    n, t_max = 10_000, 1.0
    pose, v, w, center = _screw_cases(rng, n, 10.0)
    result = _screw_against_sampling(BALL, (pose, v, w, center), TORUS, t_max, "mesh-mesh screw")
    contact = (result.status == HIT) | (result.status == TOUCH)
    assert (result.triangles[contact] >= 0).all() and (result.triangles[~contact] == -1).all()


@pytest.mark.slow
def test_convex_meshes_end_at_the_hull_contact():
    """Two convex meshes (an icosphere spinning at up to 10 turns per time unit past a finer,
    flattened one): the hulls touch on the meshes' own triangles, so nearly every hit ends at
    the hull prefix's time (the hull-contact shortcut, no leaf pair advanced). Checked like the
    tree against dense sampling: never missed, never late, within the tolerance."""
    rng = np.random.default_rng(2027)
    n, t_max = 5000, 1.0
    egg = trimesh.creation.icosphere(subdivisions=3, radius=0.4)
    egg.vertices *= [1.0, 0.6, 1.3]
    egg = _mesh(egg)
    pose, v, w, center = _screw_cases(rng, n, 10.0)
    result = _screw_against_sampling(BALL, (pose, v, w, center), egg, t_max, "convex meshes")
    # the shortcut fired: compare with the kernel's counters (no leaf pair advanced)
    from touche._kernels import ccd_mesh
    from touche.impact import _ball, _mesh_hull

    rows = np.ascontiguousarray(Screw(v, w, pose, center).packed())
    status = np.empty(n, dtype=np.int8)
    out = np.empty((n, ccd_mesh.OUT_SIZE))
    hull_a, hull_b = _mesh_hull(BALL), _mesh_hull(egg)
    _parallel.run(ccd_mesh.mesh_toi_many, n, *BALL.bvh._arrays(), _ball(BALL), rows, 0, *egg.bvh._arrays(),
                  *egg._packed[:3], _ball(egg), np.ascontiguousarray(tc.Static().packed()), t_max,
                  max(BALL.scale, egg.scale), 1e-9, 2_000_000, ccd_mesh.DESCEND, *hull_a[:3], *hull_b[:3],
                  ccd_mesh.HANDOVER, hull_a[3] + hull_b[3], status, out, grain=1)
    np.testing.assert_array_equal(status, result.status)
    hit = status == HIT
    assert (out[hit, 11] == 0).mean() > 0.97, (out[hit, 11] == 0).mean()


@pytest.mark.parametrize("scale", [1e-4, 1e4])
def test_scaled_scenes_give_the_same_times(scale):
    """The same screw scenes (the convex ball: the hull-contact path; the torus: the tree) scaled
    by 1e-4 and 1e4 (lengths and linear velocities; angles and times unchanged): same statuses,
    normals and points alike, times within 1e-9 t_max at 1e4; at 1e-4 the touching tolerance's
    absolute floor (touche.tolerance: 1e-12, i.e. 1e-8 of these meshes) may end a query earlier,
    never later, and the contact is real at that tolerance."""
    from touche.tolerance import touching_tolerance

    rng = np.random.default_rng(31)
    n, t_max = 1500, 1.0
    pose, v, w, center = _screw_cases(rng, n, 4.0)
    for other in (BALL, TORUS):
        unit = time_of_impact(BALL, Screw(v, w, pose, center), other, None, t_max)
        big_pose = pose.copy()
        big_pose[:, :3, 3] *= scale
        scaled_a = tc.TriangleMesh(BALL.vertices * scale, BALL.faces)
        scaled_b = tc.TriangleMesh(other.vertices * scale, other.faces)
        result = time_of_impact(scaled_a, Screw(v * scale, w, big_pose, center * scale), scaled_b, None, t_max)
        np.testing.assert_array_equal(result.status, unit.status)
        hit = (unit.status == HIT) | (unit.status == TOUCH)
        assert 0.2 < hit.mean() < 0.9
        if scale > 1.0:
            assert np.abs(result.time[hit] - unit.time[hit]).max() <= 1e-9 * t_max
        else:
            assert (result.time[hit] <= unit.time[hit] + 1e-9 * t_max).all()
            rows = np.flatnonzero(hit)
            moved = R.screw_poses(big_pose[rows], v[rows] * scale, w[rows], center[rows] * scale, result.time[rows])
            gap = tc.bvh.distance(scaled_a, np.ascontiguousarray(moved), scaled_b, np.eye(4)).distance
            assert (gap <= 4.0 * touching_tolerance(scale * 4.0)).all(), gap.max()
        cosine = np.einsum("ij,ij->i", result.normal[hit], unit.normal[hit])
        assert np.median(cosine) > 1.0 - 1e-9 and cosine.min() > 0.5, cosine.min()
        # the contact point: the same up to rounding, except where the closest points are not
        # unique (parallel features: any point of the touching patch, ~0.1 of the mesh size)
        offset = np.linalg.norm(result.point[hit] - unit.point[hit] * scale, axis=1) / scale
        assert (offset <= 1e-6).mean() > 0.99 and offset.max() < 0.2, offset.max()


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["cylinder", "capsule", "cone"])
def test_convex_mesh_against_round_convex(shape):
    """A convex mesh spinning past a rounded convex solid (the hull step's supports along
    n + h u include the rounding radius): dense sampling of touche.distance + bisection."""
    convex = {"cylinder": tc.Cylinder(0.25, 0.7), "capsule": tc.Capsule(0.2, 0.5), "cone": tc.Cone(0.3, 0.6)}[shape]
    rng = np.random.default_rng(100 + len(shape))
    n, t_max = 600, 1.0
    pose, v, w, center = _screw_cases(rng, n, 8.0)
    result = time_of_impact(BALL, Screw(v, w, pose, center), convex, None, t_max)
    distance, cull = _convex_oracles(BALL, (pose, v, w, center), convex, 0.6)
    reference = R.first_contact(distance, n, t_max, samples=500, cull=cull)
    R.check_times(result, reference, distance, t_max, label=f"ball mesh-{shape}")


def test_mesh_mesh_linear_is_exact():
    rng = np.random.default_rng(11)
    n, t_max = 3000, 2.0
    pose, v, w, center = _screw_cases(rng, n, 0.0)
    result = time_of_impact(PLATE, tc.Linear(v, pose), TORUS, None, t_max)

    def path(t, rows):
        moved = pose[rows].copy()
        moved[:, :3, 3] += np.asarray(t)[..., None] * v[rows] if np.ndim(t) else t * v[rows]
        return moved

    separation, distance, cull = _mesh_oracles(PLATE, path, TORUS, np.eye(4))
    reference = R.first_contact(separation, n, t_max, samples=2000, cull=cull)
    R.check_times(result, reference, distance, t_max, label="mesh-mesh linear")


@pytest.mark.slow
def test_mesh_mesh_keyframes_and_integrated():
    rng = np.random.default_rng(12)
    n, k, t_max = 3000, 4, 1.0
    times = np.array([0.0, 0.3, 0.55, 1.0])
    start = rng.normal(size=(n, 3))
    start *= (rng.uniform(1.2, 2.2, n) / np.linalg.norm(start, axis=1))[:, None]
    drift = -start * rng.uniform(0.1, 1.4, (n, 1))
    trans = start[:, None] + times[None, :, None] * drift[:, None] + rng.normal(size=(n, k, 3)) * 0.2
    poses = np.tile(np.eye(4), (n, k, 1, 1))
    poses[..., :3, :3] = _rotations(rng, n * k).reshape(n, k, 3, 3)
    poses[..., :3, 3] = trans
    result = time_of_impact(PLATE, Keyframes(times, poses), TORUS, None, t_max)
    path = R.KeyframePath(times, poses)
    separation, distance, cull = _mesh_oracles(PLATE, path.at, TORUS, np.eye(4))
    reference = R.first_contact(separation, n, t_max, samples=1000, cull=cull)
    R.check_times(result, reference, distance, t_max, label="mesh-mesh keyframes")
    # Integrated motions are keyframes through their RK4 nodes: a batch of 200
    m = 200
    speeds = -start[:m] * rng.uniform(0.1, 1.2, (m, 1)) + rng.normal(size=(m, 3)) * 0.5
    motions = [Integrated(lambda t, v0=v0, w0=w0: (v0 * (1 - 0.3 * t), w0), tc.Pose.from_rotvec(r0, p0), t_end=t_max, steps=16)
               for v0, w0, r0, p0 in zip(speeds, rng.normal(size=(m, 3)) * 8, rng.normal(size=(m, 3)), start[:m])]
    nodes = np.stack([motion.poses for motion in motions])
    batch = time_of_impact(PLATE, Keyframes(motions[0].times, nodes), TORUS, None, t_max)
    for i in range(0, m, 40):
        single = time_of_impact(PLATE, motions[i], TORUS, None, t_max)
        assert int(single.status) == int(batch.status[i]) and (single.time == batch.time[i] or single.status == MISS)
    path = R.KeyframePath(motions[0].times, nodes)
    separation, distance, cull = _mesh_oracles(PLATE, path.at, TORUS, np.eye(4))
    reference = R.first_contact(separation, m, t_max, samples=1000, cull=cull)
    R.check_times(batch, reference, distance, t_max, label="mesh-mesh integrated")


def _triangles_world(mesh, poses):
    corners = mesh.vertices[mesh.faces]  # (m, 3, 3)
    return np.einsum("nij,mcj->nmci", poses[:, :3, :3], corners) + poses[:, None, None, :3, 3]


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["sphere", "box", "capsule"])
def test_mesh_convex_screw(shape):
    """A spinning torus mesh against a convex solid at the origin (and the pair given in the
    other order: the normal flips, the triangle ids swap). Reference: touche.distance (mesh vs
    convex, brute force over the triangles) sampled + bisection."""
    convex = {"sphere": tc.Sphere(0.3), "box": tc.Box([0.5, 0.3, 0.6]), "capsule": tc.Capsule(0.15, 0.6)}[shape]
    rng = np.random.default_rng(len(shape))
    n, t_max = 400, 1.0
    pose, v, w, center = _screw_cases(rng, n, 5.0, start=(1.1, 2.0))
    motion = Screw(v, w, pose, center)
    result = time_of_impact(TORUS, motion, convex, None, t_max)
    flipped = time_of_impact(convex, None, TORUS, motion, t_max)
    np.testing.assert_array_equal(flipped.status, result.status)
    np.testing.assert_array_equal(flipped.time, result.time)
    hit = result.status == HIT
    np.testing.assert_allclose(flipped.normal[hit], -result.normal[hit])
    np.testing.assert_array_equal(flipped.triangles[:, ::-1], result.triangles)
    distance, cull = _convex_oracles(TORUS, (pose, v, w, center), convex, 0.5)
    reference = R.first_contact(distance, n, t_max, samples=500, cull=cull)
    R.check_times(result, reference, distance, t_max, label=f"mesh-{shape}")


@pytest.mark.slow
def test_mesh_halfspace_and_plane():
    rng = np.random.default_rng(21)
    n, t_max = 1000, 1.0
    pose, v, w, center = _screw_cases(rng, n, 8.0, start=(0.9, 1.6))
    motion = Screw(v, w, pose, center)
    plane_velocity = np.array([0.0, 0.0, 0.3])
    reach = _radius(TORUS)

    def path(t, rows):
        return R.screw_poses(pose[rows], v[rows], w[rows], center[rows], t)

    for kind in (tc.HalfSpace, tc.Plane):
        shape = kind([0.0, 0.0, 1.0], -0.8)
        result = time_of_impact(TORUS, motion, shape, tc.Linear(plane_velocity), t_max)

        def distance(t, rows):
            corners = _triangles_world(TORUS, path(t, rows)).reshape(len(rows), -1, 3)
            height = corners[..., 2] - (-0.8 + np.asarray(t).reshape(-1, 1) * 0.3)
            if kind is tc.HalfSpace:
                return height.min(1)
            lo, hi = height.min(1), height.max(1)
            return np.where(lo > 0, lo, np.where(hi < 0, -hi, -np.minimum(-lo, hi)))

        def cull(t, rows):
            return np.abs(path(t, rows)[:, 2, 3] - (-0.8 + t * 0.3)) - reach

        reference = R.first_contact(distance, n, t_max, samples=800, cull=cull)
        R.check_times(result, reference, distance, t_max, label=kind.__name__, band=(0.15, 0.85))


def test_callable_motion_meshes():
    rng = np.random.default_rng(31)
    n = 60
    agree = 0
    for _ in range(n):
        start = tc.Pose.from_rotvec(rng.normal(size=3), rng.normal(size=3) * 0.8 + [1.4, 0, 0])
        v = -start.translation * rng.uniform(0.4, 1.2) + rng.normal(size=3) * 0.3
        w = rng.normal(size=3) * 6
        screw = Screw(v, w, start)
        speed = np.linalg.norm(v)
        loose = CallableMotion(screw.pose_at, linear_speed=speed, angular_speed=np.linalg.norm(w))
        for other in (TORUS, tc.Sphere(0.3)):
            exact = time_of_impact(PLATE, screw, other, None, 1.0)
            python = time_of_impact(PLATE, loose, other, None, 1.0)
            assert python.status == exact.status
            if exact.status == ImpactStatus.HIT:
                agree += 1
                assert python.time <= exact.time + 1e-9 and exact.time - python.time < 1e-6
    assert 0.2 * 2 * n <= agree <= 0.8 * 2 * n


# ----------------------------------------------------------------------------------------------
# API
def test_batches_single_calls_and_touching():
    rng = np.random.default_rng(41)
    pose, v, w, center = _screw_cases(rng, 40, 3.0)
    batch = time_of_impact(BALL, Screw(v, w, pose, center), TORUS, None, 1.0)
    assert batch.time.shape == (40,) and batch.triangles.shape == (40, 2) and batch.points.shape == (40, 1, 3)
    for i in range(0, 40, 7):
        single = time_of_impact(BALL, Screw(v[i], w[i], pose[i], center[i]), TORUS, None, 1.0)
        assert int(single.status) == int(batch.status[i]) and (single.time == batch.time[i])
    # touching at t = 0: a plate lying across the torus's tube
    touching = time_of_impact(PLATE, tc.Linear([0, 1.0, 0], tc.Pose.from_translation([0.6, 0.0, 0.0])), TORUS, None, 1.0)
    assert touching.status == ImpactStatus.ALREADY_TOUCHING and touching.time == 0.0
    # a mesh moving away: a miss, with NaN normal / point and -1 triangles
    away = time_of_impact(BALL, tc.Linear([3.0, 0, 0], tc.Pose.from_translation([2, 0, 0])), TORUS, None, 5.0)
    assert away.status == ImpactStatus.MISS and away.time == np.inf and (away.triangles == -1).all()
    assert np.isnan(away.normal).all()


def test_mesh_bad_input():
    with pytest.raises(tc.UnsupportedQuery):
        time_of_impact(TORUS, QuadraticMatrix(np.eye(4), None, None), TORUS, None, 1.0)
    with pytest.raises(tc.UnsupportedQuery):
        time_of_impact(TORUS, None, tc.Ray([0, 0, 0], [1, 0, 0]), None, 1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(TORUS, None, tc.HalfSpace(), Screw([0, 0, 1], [0, 1, 0]), 1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(TORUS, Screw(np.zeros((3, 3))), TORUS, Screw(np.zeros((2, 3))), 1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(TORUS, CallableMotion(lambda t: np.eye(4), 1.0), TORUS, None, np.inf)
    with pytest.raises(tc.GeometryError):
        time_of_impact(TORUS, tc.Linear([1.0, 0, 0]), TORUS, None, -1.0)
    with pytest.raises(tc.GeometryError):
        time_of_impact(TORUS, CallableMotion(lambda t: np.full((4, 4), np.nan), 1.0), TORUS, None, 1.0)


# ----------------------------------------------------------------------------------------------
# the hull prefix (ccd_mesh_hulls.hull_advance): a valid start for the tree, and a MISS on its own
def _mesh_kernel(mesh_a, motion_a, mesh_b, t_max, hull):
    """The mesh-mesh kernel as time_of_impact calls it (B static), with or without the prefix."""
    from touche._kernels import ccd_mesh
    from touche.impact import _NO_HULL, MESH_BUDGET, _ball, _mesh_hull

    rows_a = np.ascontiguousarray(motion_a.packed())
    rows_b = np.ascontiguousarray(tc.Static().packed())
    hull_a = _mesh_hull(mesh_a) if hull else _NO_HULL
    hull_b = _mesh_hull(mesh_b) if hull else _NO_HULL
    status = np.empty(len(rows_a), dtype=np.int8)
    out = np.empty((len(rows_a), ccd_mesh.OUT_SIZE))
    _parallel.run(ccd_mesh.mesh_toi_many, len(rows_a), *mesh_a.bvh._arrays(), _ball(mesh_a), rows_a, 0,
                  *mesh_b.bvh._arrays(), *mesh_b._packed[:3], _ball(mesh_b), rows_b, t_max,
                  max(mesh_a.scale, mesh_b.scale), 1e-9, MESH_BUDGET, ccd_mesh.DESCEND, *hull_a[:3], *hull_b[:3],
                  ccd_mesh.HANDOVER, hull_a[3] + hull_b[3], status, out, grain=1)
    return status, out


@pytest.mark.parametrize("mesh_b", [TORUS, BALL], ids=["torus", "ball"])
def test_hull_prefix_agrees_with_the_tree_alone(mesh_b):
    """The tree started where the hulls' advancement stopped finds the same first contacts as
    the tree from t = 0 (non-convex torus: the hull overlaps long before the meshes touch;
    convex ball: the hulls touch where the meshes do); the misses far from B end in the prefix."""
    rng = np.random.default_rng(77)
    n, t_max = 2000, 1.0
    pose, v, w, center = _screw_cases(rng, n, 3.0, miss=0.8)
    motion = Screw(v, w, pose, center)
    with_hull, out_hull = _mesh_kernel(BALL, motion, mesh_b, t_max, True)
    tree, out_tree = _mesh_kernel(BALL, motion, mesh_b, t_max, False)
    hit = tree == HIT
    assert 0.2 < hit.mean() < 0.8, hit.mean()
    assert (with_hull == tree).all()
    # both report a time at which the pair is within eps (~1e-12) and was more than eps / 2
    # apart before; two different step sequences land at different points of that window
    assert np.abs(out_hull[hit, 0] - out_tree[hit, 0]).max() <= 1e-9
    # the same contact normal (A -> B, world): the hull shortcut's axis choice (hull direction,
    # SAT axes, face normals) against the leaf steps' last direction
    cosine = np.einsum("ij,ij->i", out_hull[hit, 4:7], out_tree[hit, 4:7])
    assert cosine.min() > 1.0 - 1e-6, cosine.min()
    resolved_by_hull = (tree == MISS) & (out_hull[:, 10] == 0)  # no node pair popped
    assert resolved_by_hull.sum() > 0.3 * (tree == MISS).sum(), (resolved_by_hull.sum(), (tree == MISS).sum())
    misses = tree == MISS
    assert out_hull[misses, 9].mean() < out_tree[misses, 9].mean()  # fewer advancement steps
    # hits where the hulls touch on the meshes' surfaces end at the hull's time, no leaf pair
    # advanced (the convex ball: all but the grazing fast spins whose hull advancement reaches
    # its step cap first, ~1 %; the torus: its hull spans the hole, hits through it need the tree)
    shortcut = hit & (out_hull[:, 11] == 0)
    if mesh_b is BALL:
        assert shortcut.sum() >= 0.97 * hit.sum(), (shortcut.sum(), hit.sum())
    else:
        assert 0 < shortcut.sum() < hit.sum()


def test_hull_packing_supports_and_degenerate_meshes():
    """The packed hull (vertices + adjacency, hill climbing above 256 vertices) gives the mesh's
    support in every direction; a flat mesh has none (the tree runs alone)."""
    from touche._kernels import kinds
    from touche._kernels.convex.support import support_local
    from touche.impact import _mesh_hull

    rng = np.random.default_rng(5)
    blob_points = rng.normal(size=(3000, 3)) * [1.0, 0.5, 0.2]
    blob = tc.TriangleMesh(blob_points, np.arange(3000).reshape(1000, 3))
    fine = _mesh(trimesh.creation.icosphere(subdivisions=4, radius=0.35))  # 2,562 hull vertices: hill climbing
    for mesh in (BALL, TORUS, blob, fine):
        kind, params, points, slack = _mesh_hull(mesh)
        assert kind == kinds.POLYHEDRON and 0.0 <= slack < 1e-12
        hints = np.zeros(2, dtype=np.int64)
        for d in rng.normal(size=(300, 3)):
            x = np.array(support_local(kind, params, points, d[0], d[1], d[2], hints, 0))
            assert abs(x @ d - (mesh.vertices @ d).max()) <= 1e-12 * np.abs(d).sum()
    assert _mesh_hull(PLATE)[0] == -1
    # a vertex no face uses is not part of the mesh: it stays out of the hull
    stray = tc.TriangleMesh(np.vstack([BALL.vertices, [[9.0, 9.0, 9.0]]]), BALL.faces)
    assert np.abs(_mesh_hull(stray)[2]).max() < 1.0
