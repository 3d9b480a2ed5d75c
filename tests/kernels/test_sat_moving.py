"""time_of_impact / intersection for translating convex polytopes (touche/_kernels/motion/sat_moving.py).

References (tests/naive/sat_moving.py): the ray t (v_a - v_b) against the Minkowski difference
built by Qhull; dense sampling + bisection of an LP overlap test (tests/naive/toi.py); scipy
HalfspaceIntersection for intersection volumes. Large random checks go through one batch call.
"""
import numpy as np
import pytest
from scipy.spatial import ConvexHull, HalfspaceIntersection
from scipy.spatial.transform import Rotation

import touche as tc
from naive.sat_moving import (
    hull_distance_lp,
    intersection_measure,
    minkowski_toi,
    planes_of,
    polygon_area,
    world_vertices,
)
from naive.toi import first_contact_by_sampling
from touche.impact import ImpactStatus, SetKind, intersection, time_of_impact
from touche.motion import Linear, Static

N_RANDOM = 10_000
N_RANDOM_HULLS = 2_500
T_MAX = 2.0


# ----------------------------------------------------------------------------------------------
# shapes and cases
def _hull(rng, count, radius=0.7):
    pts = rng.normal(size=(count, 3))
    pts *= radius / np.linalg.norm(pts, axis=1)[:, None]
    return tc.ConvexPolyhedron(pts * rng.uniform(0.7, 1.3, size=(1, 3)))


def _triangle(rng, size=1.0):
    return tc.Triangle(*(rng.normal(size=(3, 3)) * size))


def _hexagon(radius=0.6):
    angles = np.arange(6) * np.pi / 3
    return tc.ConvexPolygon(np.column_stack([radius * np.cos(angles), radius * np.sin(angles), np.zeros(6)]))


def _pair_shapes(name, rng):
    if name == "box-box":
        return tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2])
    if name == "tetra-box":
        return tc.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.3, 1.0]), tc.Box([0.8, 0.6, 1.2])
    if name == "hull-hull":
        return _hull(rng, 12), _hull(rng, 12)
    if name == "triangle-triangle":
        return _triangle(rng), _triangle(rng)
    if name == "triangle-box":
        return _triangle(rng), tc.Box([0.8, 0.6, 1.2])
    if name == "polygon-polyhedron":
        return _hexagon(), _hull(rng, 10)
    raise KeyError(name)


def _poses(rng, n, positions):
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = Rotation.random(n, random_state=rng).as_matrix()
    poses[:, :3, 3] = positions
    return poses


def _random_cases(rng, n):
    """A near the origin, B 0.5 .. 4 away, velocities aimed roughly at each other (mixed
    outcomes: already touching, hits, misses, hits after t_max)."""
    pos_a = rng.normal(scale=0.2, size=(n, 3))
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    pos_b = pos_a + direction * rng.uniform(0.5, 4.0, size=(n, 1))
    vel_a = rng.normal(scale=0.3, size=(n, 3))
    vel_b = vel_a + (pos_a - pos_b) / rng.uniform(0.8, 3.0, size=(n, 1)) + rng.normal(scale=0.6, size=(n, 3))
    return _poses(rng, n, pos_a), vel_a, _poses(rng, n, pos_b), vel_b


def _reference(a, b, poses_a, vel_a, poses_b, vel_b, t_max):
    times = np.empty(len(poses_a))
    lengths = np.empty(len(poses_a))
    for i in range(len(poses_a)):
        t, length, _ = minkowski_toi(world_vertices(a, poses_a[i]), world_vertices(b, poses_b[i]),
                                     vel_a[i], vel_b[i], t_max)
        times[i] = np.inf if t is None else t
        lengths[i] = length
    return times, lengths


def _poses_at(poses, velocities, times):
    out = poses.copy()
    out[:, :3, 3] += velocities * times[:, None]
    return out


def _check_contact_points(a, b, poses_a, vel_a, poses_b, vel_b, result, rows, scale):
    """Every contact point lies on both shapes at the reported time."""
    t = result.time[rows]
    pa = _poses_at(poses_a[rows], vel_a[rows], t)
    pb = _poses_at(poses_b[rows], vel_b[rows], t)
    point = tc.Point()
    worst = 0.0
    for k in range(result.points.shape[1]):
        has = result.count[rows] > k
        if not has.any():
            break
        at = np.tile(np.eye(4), (has.sum(), 1, 1))
        at[:, :3, 3] = result.points[rows][has, k]
        for shape, poses in ((a, pa), (b, pb)):
            d = tc.distance(point, at, shape, poses[has]).distance
            worst = max(worst, float(d.max()))
    assert worst <= 1e-9 * scale, worst


def _compare(name, a, b, cases, t_max, scale=4.0, unresolved=None):
    """Kernel vs minkowski_toi on a batch; ``unresolved`` marks rows the reference cannot decide
    (checked by the caller another way)."""
    poses_a, vel_a, poses_b, vel_b = cases
    result = time_of_impact(a, Linear(vel_a, poses_a), b, Linear(vel_b, poses_b), t_max)
    ref, length = _reference(a, b, poses_a, vel_a, poses_b, vel_b, t_max)
    status = result.status
    hit = status == ImpactStatus.HIT
    touching = status == ImpactStatus.ALREADY_TOUCHING
    miss = status == ImpactStatus.MISS
    # agreement where the reference resolves it: not a graze (contact interval > 1e-9) and not
    # within 1e-9 of t_max
    clear = (length > 1e-9) & (np.abs(ref - t_max) > 1e-9)
    resolved = clear | np.isinf(ref) & (length < -1e-9)
    if unresolved is not None:
        resolved &= ~unresolved
    assert (touching[resolved] == (ref[resolved] == 0.0)).all(), name
    assert (miss[resolved] == np.isinf(ref[resolved])).all(), name
    rows = np.flatnonzero(hit & resolved)
    error = np.abs(result.time[rows] - ref[rows]) / np.maximum(1.0, ref[rows])
    assert error.max(initial=0.0) <= 1e-9, (name, error.max())
    # unresolved cases (grazes): a kernel HIT must really touch at its time
    graze_hits = np.flatnonzero(hit & ~resolved)
    hit_rows = np.flatnonzero(hit)
    _check_contact_points(a, b, poses_a, vel_a, poses_b, vel_b, result, hit_rows, scale)
    if len(graze_hits):
        _check_contact_points(a, b, poses_a, vel_a, poses_b, vel_b, result, graze_hits, scale)
    return result, ref


# ----------------------------------------------------------------------------------------------
# Eberly's worked example (S0 section 5), in 3D with unit cubes
@pytest.mark.parametrize("delta", [0.25, 0.5, 0.75, 1.0, 1.5])
def test_eberly_unit_cubes(delta):
    cube = tc.AABB([0, 0, 0], [1, 1, 1])
    start = np.eye(4)
    start[1, 3] = 1.0 + delta
    r = time_of_impact(cube, Static(), cube, Linear([1.0, -1.0, 0.0], start), 10.0)
    if delta > 1.0:
        assert r.status == ImpactStatus.MISS and r.time == np.inf and r.kind == SetKind.EMPTY
        assert len(r.points) == 0
        return
    assert r.status == ImpactStatus.HIT
    assert abs(r.time - delta) <= 1e-15 * 4
    assert abs(r.last_time - 1.0) <= 1e-11  # the x axis closes at t = 1 (exit keeps the tolerance)
    np.testing.assert_allclose(r.normal, [0.0, 1.0, 0.0], atol=1e-15)
    if delta < 1.0:
        # B's bottom face meets A's top face in the rectangle [delta, 1] x {1} x [0, 1]
        assert r.kind == SetKind.POLYGON and len(r.points) == 4
        expected = {(delta, 1.0, 0.0), (delta, 1.0, 1.0), (1.0, 1.0, 0.0), (1.0, 1.0, 1.0)}
        got = {tuple(np.round(p, 12)) for p in r.points}
        assert got == {tuple(np.round(p, 12)) for p in expected}
        assert abs(polygon_area(r.points) - (1.0 - delta)) <= 1e-12
        np.testing.assert_allclose(r.point, [(1 + delta) / 2, 1.0, 0.5], atol=1e-12)
    else:
        # edge contact: the segment x = 1, y = 1, z in [0, 1]
        assert r.kind == SetKind.SEGMENT and len(r.points) == 2
        np.testing.assert_allclose(sorted(map(tuple, r.points)), [(1, 1, 0), (1, 1, 1)], atol=1e-12)


# ----------------------------------------------------------------------------------------------
PAIR_TYPES = ["box-box", "tetra-box", "hull-hull", "triangle-triangle", "triangle-box", "polygon-polyhedron"]


@pytest.mark.slow
@pytest.mark.parametrize("name", PAIR_TYPES)
def test_random_first_contact_vs_minkowski(name):
    rng = np.random.default_rng(PAIR_TYPES.index(name) + 11)
    a, b = _pair_shapes(name, rng)
    # the reference's cost grows with the vertex pairs of the Minkowski difference (144 for two
    # 12-vertex hulls, 64 for two boxes): fewer cases for the hulls keep this test near the others'
    cases = _random_cases(rng, N_RANDOM_HULLS if name == "hull-hull" else N_RANDOM)
    result, ref = _compare(name, a, b, cases, T_MAX)
    fractions = [np.mean(result.status == s) for s in ImpactStatus]
    assert min(fractions[:2]) >= 0.1, fractions  # hits and misses both exercised
    assert fractions[2] > 0.0, fractions


def test_parallel_faces():
    """Same orientation, motion along a face normal: face-face contact at the exact time."""
    rng = np.random.default_rng(1)
    n = 500
    a, b = tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2])
    rot = Rotation.random(n, random_state=rng).as_matrix()
    poses_a = np.tile(np.eye(4), (n, 1, 1))
    poses_b = np.tile(np.eye(4), (n, 1, 1))
    poses_a[:, :3, :3] = rot
    poses_b[:, :3, :3] = rot
    gap = rng.uniform(0.1, 1.0, size=n)
    lateral = rng.uniform(-0.5, 0.5, size=(n, 2))
    local = np.column_stack([lateral[:, 0], 0.75 + 0.3 + gap, lateral[:, 1]])  # B above A's +y face
    poses_b[:, :3, 3] = np.einsum("nij,nj->ni", rot, local)
    speed = rng.uniform(0.5, 2.0, size=n)
    vel_b = -rot[:, :, 1] * speed[:, None]
    vel_a = np.zeros((n, 3))
    result, ref = _compare("parallel", a, b, (poses_a, vel_a, poses_b, vel_b), 10.0)
    assert (result.status == ImpactStatus.HIT).all()
    np.testing.assert_allclose(result.time, gap / speed, rtol=1e-12)
    assert (result.kind == SetKind.POLYGON).all()
    normal_local = np.einsum("nji,nj->ni", rot, result.normal)
    np.testing.assert_allclose(normal_local, np.tile([0, 1, 0], (n, 1)), atol=1e-12)


def _touching_cases(rng, a, b, n):
    """Random poses with B moved along the distance normal until it just touches A."""
    pos_a = rng.normal(scale=0.2, size=(n, 3))
    d = rng.normal(size=(n, 3))
    pos_b = pos_a + 2.5 * d / np.linalg.norm(d, axis=1)[:, None]
    poses_a, poses_b = _poses(rng, n, pos_a), _poses(rng, n, pos_b)
    # the exact feature-enumeration engine (not GJK, whose witness normal on edge / vertex
    # contacts is only ~1e-9 accurate): moving along its normal touches to round-off
    from touche._kernels.narrow.pairs import engine_pair_distance

    normal = np.empty((n, 3))
    for i in range(n):
        signed, _, _, normal[i], _ = engine_pair_distance(*a._packed, poses_a[i], *b._packed, poses_b[i], 0.0)
        poses_b[i, :3, 3] -= normal[i] * signed
    return poses_a, poses_b, normal


def test_touching_at_zero():
    rng = np.random.default_rng(2)
    for a, b in [(tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2])), (_hull(rng, 12), _triangle(rng))]:
        n = 1000
        poses_a, poses_b, normal = _touching_cases(rng, a, b, n)
        vel_b = rng.normal(size=(n, 3))
        result = time_of_impact(a, Static(poses_a), b, Linear(vel_b, poses_b), 1.0)
        assert (result.status == ImpactStatus.ALREADY_TOUCHING).all()
        assert (result.time == 0.0).all()
        assert (result.kind != SetKind.EMPTY).all()
        # the contact points lie on both shapes
        zeros = np.zeros((n, 3))
        _check_contact_points(a, b, poses_a, zeros, poses_b, zeros, result, np.arange(n), 4.0)


def test_grazing_slides():
    """B touches A (vertex-face or edge-edge, found by touche.distance) when moving tangentially:
    started back along the motion, it first touches at (or before, sliding) the touching time."""
    rng = np.random.default_rng(3)
    a, b = tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2])
    n = 2000
    poses_a, poses_b, normal = _touching_cases(rng, a, b, n)
    tangent = np.cross(normal, rng.normal(size=(n, 3)))
    tangent /= np.linalg.norm(tangent, axis=1)[:, None]
    t0 = rng.uniform(0.2, 1.0, size=n)
    start = poses_b.copy()
    start[:, :3, 3] -= tangent * t0[:, None]
    zeros = np.zeros((n, 3))
    # The ray t v lies in a facet plane of M by construction, so Qhull's round-off decides the
    # Minkowski reference either way (it reports clear misses of configurations that are reached):
    # these rows are checked with touche.distance instead.
    result = time_of_impact(a, Static(poses_a), b, Linear(tangent, start), 2.0)
    # the touching configuration at t0 is reached: never a MISS, first contact no later than t0
    assert (result.status != ImpactStatus.MISS).all()
    assert (result.time <= t0 + 1e-9).all()
    start_distance = tc.distance(a, poses_a, b, start).signed_distance
    assert (result.status[start_distance > 1e-9] != ImpactStatus.ALREADY_TOUCHING).all()
    assert (result.status[np.abs(start_distance) <= 1e-13] == ImpactStatus.ALREADY_TOUCHING).all()
    # the contact points lie on both shapes at the reported time
    _check_contact_points(a, b, poses_a, zeros, start, tangent, result, np.arange(n), 4.0)
    # and the shapes are apart shortly before it
    hit = np.flatnonzero(result.status == ImpactStatus.HIT)
    before = _poses_at(start[hit], tangent[hit], result.time[hit] * (1 - 1e-6))
    assert (tc.distance(a, poses_a[hit], b, before).signed_distance > 0.0).all()


def test_coplanar_triangles_moving_in_plane():
    rng = np.random.default_rng(4)
    n = 1000
    base = _poses(rng, n, rng.normal(size=(n, 3)))
    a = tc.Triangle([0, 0, 0], [1, 0, 0], [0.3, 0.8, 0])
    b = tc.Triangle([0, 0, 0], [0.7, 0.2, 0], [0.1, 0.9, 0])
    # B in A's plane: rotation about A's normal (local z) and an in-plane offset
    angle = rng.uniform(0, 2 * np.pi, size=n)
    spin = np.tile(np.eye(4), (n, 1, 1))
    spin[:, 0, 0] = spin[:, 1, 1] = np.cos(angle)
    spin[:, 0, 1], spin[:, 1, 0] = -np.sin(angle), np.sin(angle)
    offset = rng.uniform(-3, 3, size=(n, 2))
    spin[:, 0, 3], spin[:, 1, 3] = offset[:, 0], offset[:, 1]
    poses_a = base
    poses_b = base @ spin
    target = rng.uniform(-0.3, 0.6, size=(n, 2)) - offset
    vel_local = np.column_stack([target, np.zeros(n)]) / rng.uniform(0.5, 2.0, size=(n, 1))
    vel_b = np.einsum("nij,nj->ni", base[:, :3, :3], vel_local)
    vel_a = np.zeros((n, 3))
    result, ref = _compare("coplanar", a, b, (poses_a, vel_a, poses_b, vel_b), T_MAX)
    hits = result.status == ImpactStatus.HIT
    assert 0.2 <= hits.mean() <= 0.95, hits.mean()
    # in-plane contacts: a point or a segment (a polygon only when already overlapping)
    assert set(np.unique(result.kind[hits])) <= {SetKind.POINT, SetKind.SEGMENT}


@pytest.mark.slow
def test_degenerate_triangles():
    """Zero-area triangles behave as their segment / point (reference: sampling + LP)."""
    rng = np.random.default_rng(5)
    segment_tri = tc.Triangle([0, 0, 0], [1, 0, 0], [0.5, 0, 0])
    point_tri = tc.Triangle([0, 0, 0], [0, 0, 0], [0, 0, 0])
    for a, b in [(segment_tri, tc.Box([0.8, 0.6, 1.2])), (segment_tri, _triangle(rng)),
                 (point_tri, tc.Box([0.8, 0.6, 1.2])), (segment_tri, segment_tri)]:
        n = 12
        poses_a, vel_a, poses_b, vel_b = _random_cases(rng, n)
        vel_b = vel_b + rng.normal(scale=0.05, size=(n, 3))
        result = time_of_impact(a, Linear(vel_a, poses_a), b, Linear(vel_b, poses_b), T_MAX)
        for i in range(n):
            va, vb = world_vertices(a, poses_a[i]), world_vertices(b, poses_b[i])
            ours = result.time[i] if result.status[i] != ImpactStatus.MISS else None
            # exact reference where M is at least 2D (all but point-point / parallel segments)
            exact, length, _ = minkowski_toi(va, vb, vel_a[i], vel_b[i], T_MAX)
            if abs(length) > 1e-9:  # not a graze
                assert (exact is None) == (ours is None), (a, b, i, exact, ours)
                if exact is not None:
                    assert abs(ours - exact) <= 1e-9 * max(1.0, exact), (ours, exact)

            # sampling + LP static test: HiGHS solves to ~1e-7 feasibility, so this reference
            # resolves times to ~1e-6 only
            def overlaps(t):
                return hull_distance_lp(va + t * vel_a[i], vb + t * vel_b[i]) <= 1e-9

            ref = first_contact_by_sampling(overlaps, T_MAX, samples=400, tolerance=1e-10)
            if ref is None:
                if ours is not None:  # a graze between samples: verify it
                    assert hull_distance_lp(va + ours * vel_a[i], vb + ours * vel_b[i]) <= 1e-7
                continue
            assert ours is not None, (a, b, i)
            assert abs(ours - ref) <= 1e-6 * max(1.0, ref), (ours, ref)
    # segment vs crossing segment: a point contact
    cross = tc.Triangle([0.5, -1, 1], [0.5, 1, 1], [0.5, 0, 1])
    r = time_of_impact(segment_tri, Static(), cross, Linear([0, 0, -2.0]), 1.0)
    assert r.status == ImpactStatus.HIT and abs(r.time - 0.5) <= 1e-15
    assert r.kind == SetKind.POINT
    np.testing.assert_allclose(r.point, [0.5, 0, 0], atol=1e-12)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_scales(scale):
    cube = tc.AABB([0, 0, 0], [scale, scale, scale])
    start = np.eye(4)
    start[1, 3] = 1.25 * scale
    r = time_of_impact(cube, Static(), cube, Linear([scale, -scale, 0.0], start), 10.0)
    assert r.status == ImpactStatus.HIT and abs(r.time - 0.25) <= 1e-12
    assert r.kind == SetKind.POLYGON and abs(polygon_area(r.points) - 0.75 * scale**2) <= 1e-9 * scale**2


# ----------------------------------------------------------------------------------------------
# intersection sets
@pytest.mark.parametrize("name", ["box-box", "tetra-box", "hull-hull"])
def test_intersection_volume(name):
    rng = np.random.default_rng(20 + PAIR_TYPES.index(name))
    a, b = _pair_shapes(name, rng)
    n = 300
    poses_a = _poses(rng, n, rng.normal(scale=0.1, size=(n, 3)))
    poses_b = _poses(rng, n, rng.normal(scale=0.4, size=(n, 3)))
    result = intersection(a, poses_a, b, poses_b)
    checked = 0
    for i in range(n):
        ref = intersection_measure(a, poses_a[i], b, poses_b[i])
        if ref is None or ref < 1e-6:
            continue
        assert result.kind[i] == SetKind.POLYHEDRON
        points = result.points[i, : result.count[i]]
        volume = ConvexHull(points).volume
        assert abs(volume - ref) <= 1e-9 * max(1.0, ref), (volume, ref)
        # reported points are hull vertices (no interior or mid-edge points)
        assert len(ConvexHull(points).vertices) == len(points)
        checked += 1
    assert checked >= n // 3
    one = intersection(a, poses_a[0], b, poses_b[0])
    assert one.kind == SetKind(int(result.kind[0])) and one.faces is not None or one.kind != SetKind.POLYHEDRON


def _plane_area_reference(tri, pose_t, halfspaces_3d):
    """Area of triangle n (intersection of 3D half-spaces), in the triangle's plane."""
    v = world_vertices(tri, pose_t)
    o = v[0]
    u = v[1] - v[0]
    u /= np.linalg.norm(u)
    n = np.cross(v[1] - v[0], v[2] - v[0])
    n /= np.linalg.norm(n)
    w = np.cross(n, u)
    normals, offsets = halfspaces_3d
    two_d = np.column_stack([normals @ u, normals @ w])
    keep = np.linalg.norm(two_d, axis=1) > 1e-12  # the triangle's own +-n planes drop out
    two_d, off = two_d[keep], (offsets - normals @ o)[keep]
    from scipy.optimize import linprog

    norms = np.linalg.norm(two_d, axis=1)
    res = linprog([0, 0, -1], A_ub=np.column_stack([two_d, norms]), b_ub=off,
                  bounds=[(None, None)] * 2 + [(0, None)], method="highs")
    if res.status != 0 or res.x[2] <= 1e-9:
        return 0.0
    hs = HalfspaceIntersection(np.column_stack([two_d, -off]), res.x[:2])
    return ConvexHull(hs.intersections).volume  # area in 2D


def test_intersection_triangle_box_polygon():
    rng = np.random.default_rng(30)
    tri = _triangle(rng, 0.8)
    box = tc.Box([0.8, 0.6, 1.2])
    n = 300
    poses_t = _poses(rng, n, rng.normal(scale=0.3, size=(n, 3)))
    poses_b = _poses(rng, n, np.zeros((n, 3)))
    result = intersection(tri, poses_t, box, poses_b)
    checked = 0
    for i in range(n):
        nt, dt = planes_of(tri, poses_t[i])
        nb, db = planes_of(box, poses_b[i])
        ref = _plane_area_reference(tri, poses_t[i], (np.vstack([nt, nb]), np.concatenate([dt, db])))
        if ref < 1e-6:
            continue
        assert result.kind[i] == SetKind.POLYGON
        area = polygon_area(result.points[i, : result.count[i]])  # ordered: the shoelace works
        assert abs(area - ref) <= 1e-9, (area, ref)
        checked += 1
    assert checked >= n // 4


def test_intersection_coplanar_triangles_and_empty():
    a = tc.Triangle([0, 0, 0], [2, 0, 0], [0, 2, 0])
    b = tc.Triangle([1, 1, 0], [-1, 1, 0], [1, -1, 0])
    r = intersection(a, None, b, None)
    assert r.kind == SetKind.POLYGON
    assert abs(polygon_area(r.points) - 1.0) <= 1e-12  # the unit square
    far = np.eye(4)
    far[0, 3] = 10.0
    assert intersection(a, None, b, far).kind == SetKind.EMPTY
    # a triangle piercing another: a segment
    c = tc.Triangle([0.5, 0.5, -1], [0.5, 0.5, 1], [0.5, 3.0, 0.0])
    r = intersection(a, None, c, None)
    assert r.kind == SetKind.SEGMENT
    np.testing.assert_allclose(sorted(map(tuple, r.points)), [(0.5, 0.5, 0), (0.5, 1.5, 0)], atol=1e-12)


# ----------------------------------------------------------------------------------------------
# bad input
def test_bad_input():
    box = tc.Box([1, 1, 1])
    with pytest.raises(tc.GeometryError):
        Linear([np.nan, 0, 0])
    for t_max in (-1.0, np.nan, "x"):
        with pytest.raises(tc.GeometryError):
            time_of_impact(box, Static(), box, Linear([1, 0, 0]), t_max)
    with pytest.raises(tc.UnsupportedQuery):  # a mesh against a ray has no time of impact
        time_of_impact(tc.TriangleMesh(np.eye(3), [[0, 1, 2]]), Static(), tc.Ray([0, 0, 0], [1, 0, 0]), Linear([1, 0, 0]), 1.0)
    with pytest.raises(tc.UnsupportedQuery):
        intersection(box, None, tc.Capsule(1.0, 1.0), None)
    with pytest.raises(tc.GeometryError):
        time_of_impact(box, Linear(np.zeros((3, 3))), box, Linear(np.zeros((4, 3))), 1.0)
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(tc.GeometryError):
        time_of_impact(box, bad, box, Static(), 1.0)
