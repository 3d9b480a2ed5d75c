"""GJK / EPA / shape cast (touche/_kernels/convex/gjk.py, touche/convex.py) against slow references
(tests/naive/gjk.py), the exact SAT pair engine (touche.distance), coal, and metamorphic
relations. All inputs are seeded."""
from __future__ import annotations

import numpy as np
import pytest

import touche
from touche import convex
from touche._kernels import kinds

from naive.gjk import (
    fine_hull,
    minkowski_signed,
    random_poses,
    random_rotation,
    support_signed,
    world_vertices,
)
from naive.toi import first_contact_by_sampling

try:
    import coal
except ImportError:  # pragma: no cover
    coal = None

DIST_TOL = 1e-9  # relative to model size (the target for polytopes)
DEPTH_TOL = 1e-6  # relative


def _hull(rng, k, scale=1.0):
    return touche.ConvexPolyhedron(rng.normal(size=(k, 3)) * scale)


def _flat_hull(rng, k):
    """Nearly coplanar points (thickness 1e-7 of the size): a sliver polyhedron."""
    pts = rng.normal(size=(k, 3))
    pts[:, 2] = 1e-7 * rng.normal(size=k)
    return touche.ConvexPolyhedron(pts)


def _duplicate_hull(rng, k):
    pts = rng.normal(size=(k, 3))
    pts = np.concatenate([pts, pts[: k // 2], pts[:2] + 1e-15])
    return touche.ConvexPolyhedron(pts)


def _polygon(k, r=0.8):
    angle = np.linspace(0, 2 * np.pi, k, endpoint=False)
    return touche.ConvexPolygon(np.column_stack([r * np.cos(angle), r * np.sin(angle), np.zeros(k)]))


def _polytope_pairs(rng):
    """Pairs for the exact-engine comparison: hulls, flat/degenerate hulls and primitives."""
    tri = touche.Triangle([0, 0, 0], [1.2, 0.1, 0], [0.3, 0.9, 0])
    return [
        (_hull(rng, 8), _hull(rng, 10)),
        (_hull(rng, 5), _hull(rng, 30)),
        (_hull(rng, 40), _hull(rng, 40)),
        (touche.Box([1.0, 0.7, 0.5]), _hull(rng, 12)),
        (touche.Box([1.0, 0.7, 0.5]), touche.Box([0.3, 1.5, 0.8])),
        (tri, _hull(rng, 9)),
        (tri, touche.Triangle([0, 0, 0], [0.7, 0.2, 0.1], [-0.2, 0.6, 0.3])),
        (_polygon(6), touche.Box([0.8, 0.8, 0.8])),
        (_polygon(5), _polygon(7, 0.5)),
        (_flat_hull(rng, 10), _hull(rng, 8)),
        (_duplicate_hull(rng, 9), touche.Box([0.5, 0.6, 0.7])),
        (touche.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]), _hull(rng, 7)),
        (touche.Segment([0, 0, -0.6], [0.2, 0.1, 0.7]), _hull(rng, 10)),
        (touche.Point([0.1, 0.2, 0.0]), _hull(rng, 10)),
        (touche.Sphere(0.4), _hull(rng, 10)),
        (touche.Capsule(0.3, 0.9), touche.Box([0.6, 0.9, 0.4])),
        (touche.Capsule(0.2, 0.5), touche.Capsule(0.35, 1.1)),
        (touche.Sphere(0.4), touche.Segment([0, 0, 0], [1, 0, 0])),
    ]


def _scale_of(a, b, ta, tb):
    return max(a.scale, b.scale, 1.0)


@pytest.fixture(scope="module")
def polytope_runs():
    """Every pair at 700 random poses: 12,600 pairs, each through one batch call of GJK/EPA
    and one of the exact engine."""
    rng = np.random.default_rng(20261122)
    runs = []
    for a, b in _polytope_pairs(rng):
        n = 700
        ta = random_poses(rng, n, 0.9)
        tb = random_poses(rng, n, 0.9)
        got = convex.gjk(a, ta, b, tb)
        ref = touche.distance(a, ta, b, tb)
        runs.append((a, b, ta, tb, got, ref))
    return runs


def test_polytopes_against_exact_engine(polytope_runs):
    total = 0
    hits = 0
    for a, b, ta, tb, got, ref in polytope_runs:
        name = f"{type(a).__name__}-{type(b).__name__}"
        assert set(np.unique(got.status)) <= {0, 1, 2}, name  # no iteration limit / stall here
        sep = ref.signed_distance > 1e-9
        pen = ref.signed_distance < -1e-9
        total += len(sep)
        hits += int((~sep).sum())
        scale = _scale_of(a, b, ta, tb)
        err = np.abs(got.signed_distance - ref.signed_distance)
        assert err[sep].max(initial=0) <= DIST_TOL * scale, name
        depth = -ref.signed_distance[pen]
        assert (err[pen] <= DEPTH_TOL * np.maximum(depth, 1e-3 * scale)).all(), name
        # witness consistency: |pa - pb| = distance, normal from A to B, depth = (pa - pb).n
        gap = np.einsum("ij,ij->i", got.point_b - got.point_a, got.normal)
        assert np.allclose(gap, got.signed_distance, atol=1e-9 * scale), name
        assert np.allclose(np.linalg.norm(got.normal, axis=1), 1.0, atol=1e-12), name
        sep_got = got.signed_distance > 0
        lengths = np.linalg.norm(got.point_b - got.point_a, axis=1)
        assert np.allclose(lengths[sep_got], got.signed_distance[sep_got], atol=1e-9 * scale), name
        # witness points lie on their shapes
        for shape, poses, points in ((a, ta, got.point_a), (b, tb, got.point_b)):
            if shape.kind in (kinds.POLYGON, kinds.TRIANGLE, kinds.POINT, kinds.SEGMENT) or shape.kind > kinds.POLYHEDRON:
                continue
            on = touche.closest_point(shape, poses, points)
            assert on.distance.max() <= 1e-9 * scale, name
    assert total >= 10_000
    assert 0.3 <= hits / total <= 0.7, hits / total


def test_boolean_gjk_matches_exact_engine(polytope_runs):
    for a, b, ta, tb, got, ref in polytope_runs:
        boolean = convex.intersects(a, ta, b, tb)
        clear = np.abs(ref.signed_distance) > 1e-9
        assert (boolean[clear] == (ref.signed_distance[clear] < 0)).all()


def test_small_hulls_against_minkowski_reference():
    rng = np.random.default_rng(5)
    seen = 0
    for _ in range(300):
        a = _hull(rng, int(rng.integers(4, 9)))
        b = _hull(rng, int(rng.integers(4, 9)))
        ta = random_poses(rng, 1, 1.2)[0]
        tb = random_poses(rng, 1, 1.2)[0]
        got = convex.gjk(a, ta, b, tb)
        ref, _ = minkowski_signed(world_vertices(a, ta), world_vertices(b, tb))
        scale = max(a.scale, b.scale, 1.0)
        if ref >= 0:
            assert abs(got.signed_distance - ref) <= DIST_TOL * scale
        else:
            assert abs(got.signed_distance - ref) <= DEPTH_TOL * max(-ref, 1e-3)
        seen += ref < 0
    assert 0.2 <= seen / 300 <= 0.8


SMOOTH = [
    lambda rng: touche.Cylinder(0.5, 1.2),
    lambda rng: touche.Cone(0.6, 1.0),
    lambda rng: touche.Ellipsoid([0.7, 0.4, 0.3]),
    lambda rng: touche.Capsule(0.3, 0.8),
    lambda rng: _hull(rng, 12),
    lambda rng: touche.Box([0.9, 0.5, 0.4]),
]


@pytest.mark.slow
def test_smooth_shapes_against_support_function_reference():
    """Every smooth kind against every other and polytopes: GJK/EPA vs -min_u h_A(u) + h_B(-u).
    The reference is a sampled + restarted Nelder-Mead minimum (agrees to ~2e-12 here)."""
    rng = np.random.default_rng(11)
    worst = 0.0
    hits = 0
    count = 0
    for i, make_a in enumerate(SMOOTH):
        for make_b in SMOOTH[i:]:
            a, b = make_a(rng), make_b(rng)
            if a.kind <= kinds.POLYHEDRON and b.kind <= kinds.POLYHEDRON and a.kind != kinds.CAPSULE and b.kind != kinds.CAPSULE:
                continue
            for _ in range(4):
                ta = random_poses(rng, 1, 0.8)[0]
                tb = random_poses(rng, 1, 0.8)[0]
                got = convex.gjk(a, ta, b, tb)
                assert got.status in (convex.GJKStatus.SEPARATED, convex.GJKStatus.TOUCHING, convex.GJKStatus.PENETRATING)
                ref, _ = support_signed(a, ta, b, tb)
                err = abs(got.signed_distance - ref)
                worst = max(worst, err)
                assert err <= 1e-9, (type(a).__name__, type(b).__name__, got.signed_distance, ref)
                hits += ref < 0
                count += 1
    assert 0.2 <= hits / count <= 0.8


# ----------------------------------------------------------------------------------------------
# metamorphic relations
def test_zero_length_capsule_is_a_sphere():
    rng = np.random.default_rng(3)
    others = [touche.Box([0.5, 0.6, 0.7]), _hull(rng, 20), touche.Cylinder(0.3, 0.9), touche.Ellipsoid([0.5, 0.3, 0.4])]
    p = np.array([0.1, -0.2, 0.3])
    capsule = touche.Capsule.from_points(p, p, 0.45)
    sphere = touche.Sphere(0.45, p)
    for other in others:
        ta = random_poses(rng, 300, 0.8)
        tb = random_poses(rng, 300, 0.8)
        r1 = convex.gjk(capsule, ta, other, tb)
        r2 = convex.gjk(sphere, ta, other, tb)
        assert np.allclose(r1.signed_distance, r2.signed_distance, atol=1e-9)


def test_box_equals_its_corner_hull():
    rng = np.random.default_rng(4)
    box = touche.Box([0.9, 0.4, 0.6])
    corners = np.array([[x, y, z] for x in (-0.45, 0.45) for y in (-0.2, 0.2) for z in (-0.3, 0.3)])
    hull = touche.ConvexPolyhedron(corners)
    other = _hull(rng, 15)
    ta = random_poses(rng, 2000, 0.8)
    tb = random_poses(rng, 2000, 0.8)
    r1 = convex.gjk(box, ta, other, tb)
    r2 = convex.gjk(hull, ta, other, tb)
    assert np.allclose(r1.signed_distance, r2.signed_distance, atol=1e-9)


@pytest.mark.parametrize("shape", [touche.Cylinder(0.5, 1.2), touche.Cone(0.6, 1.0), touche.Ellipsoid([0.7, 0.4, 0.3])])
def test_round_shape_equals_fine_hull_within_tessellation(shape):
    rng = np.random.default_rng(6)
    hull, error = fine_hull(shape)
    other = touche.Box([0.5, 0.3, 0.8])
    ta = random_poses(rng, 1000, 0.9)
    tb = random_poses(rng, 1000, 0.9)
    exact = convex.gjk(shape, ta, other, tb).signed_distance
    inscribed = convex.gjk(hull, ta, other, tb).signed_distance
    # the hull is inside the shape and within `error` of it: signed distances differ by [0, error]
    assert (inscribed >= exact - 1e-9).all()
    assert (inscribed <= exact + error + 1e-9).all()
    assert 0.2 <= (exact < 0).mean() <= 0.8


def test_warm_start_same_answer_fewer_iterations():
    rng = np.random.default_rng(8)
    a = _hull(rng, 60)
    b = touche.Cylinder(0.4, 1.0)
    n = 500
    ta = random_poses(rng, n, 1.2)
    tb = random_poses(rng, n, 1.2)
    first = convex.gjk(a, ta, b, tb)
    moved = ta.copy()
    moved[:, :3, 3] += rng.normal(size=(n, 3)) * 1e-3
    cold = convex.gjk(a, moved, b, tb)
    warm = convex.gjk(a, moved, b, tb, warm_start=first.warm_start)
    assert np.allclose(cold.signed_distance, warm.signed_distance, atol=1e-10)  # measured 2.8e-12
    # the smooth cylinder's own convergence dominates the count: warm starting saves ~20 % here
    assert warm.iterations.sum() < 0.9 * cold.iterations.sum()
    assert (warm.iterations <= cold.iterations).mean() > 0.9
    # single-pair tokens too
    one = convex.gjk(a, ta[0], b, tb[0])
    again = convex.gjk(a, moved[0], b, tb[0], warm_start=one.warm_start)
    assert abs(again.signed_distance - cold.signed_distance[0]) <= 1e-10


def test_scales():
    rng = np.random.default_rng(9)
    for scale in (1e-6, 1e6):
        a = _hull(rng, 10, scale)
        b = touche.Box([0.8 * scale, 0.5 * scale, 0.9 * scale])
        ta = random_poses(rng, 400, 0.9)
        tb = random_poses(rng, 400, 0.9)
        ta[:, :3, 3] *= scale
        tb[:, :3, 3] *= scale
        got = convex.gjk(a, ta, b, tb)
        ref = touche.distance(a, ta, b, tb)
        pen = ref.signed_distance < 0
        assert np.abs(got.signed_distance - ref.signed_distance)[~pen].max() <= DIST_TOL * max(a.scale, b.scale)
        assert (np.abs(got.signed_distance - ref.signed_distance)[pen] <= DEPTH_TOL * -ref.signed_distance[pen] + 1e-9 * a.scale).all()


def test_touching_and_deep_cases():
    rng = np.random.default_rng(10)
    a = _hull(rng, 12)
    b = _hull(rng, 9)
    n = 400
    ta = random_poses(rng, n, 1.5)
    tb = random_poses(rng, n, 1.5)
    first = convex.gjk(a, ta, b, tb)
    sep = first.signed_distance > 0
    # move B along -normal by the distance: touching
    touch = tb.copy()
    touch[:, :3, 3] -= first.normal * first.signed_distance[:, None]
    got = convex.gjk(a, ta[sep], b, touch[sep])
    assert np.abs(got.signed_distance).max() <= 1e-9
    assert (got.status == convex.GJKStatus.TOUCHING).mean() > 0.9
    assert convex.intersects(a, ta[sep], b, touch[sep]).mean() > 0.9
    # deep: same centre
    deep = tb.copy()
    deep[:, :3, 3] = ta[:, :3, 3]
    got = convex.gjk(a, ta, b, deep)
    ref = touche.distance(a, ta, b, deep)
    assert (got.status == convex.GJKStatus.PENETRATING).all()
    assert np.allclose(got.signed_distance, ref.signed_distance, rtol=DEPTH_TOL, atol=0)


def test_degenerate_flat_pairs():
    """Coplanar flat shapes: the Minkowski difference is flat; EPA reports depth 0 along it."""
    square = _polygon(4, 1.0)
    tri = touche.Triangle([0, 0, 0], [0.5, 0, 0], [0, 0.5, 0])
    r = convex.gjk(square, None, tri, None)
    assert r.status == convex.GJKStatus.TOUCHING and abs(r.signed_distance) <= 1e-12
    seg = touche.Segment([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    r = convex.gjk(seg, np.eye(4), touche.Point([0.0, 0.0, 0.0]), None)
    assert abs(r.signed_distance) <= 1e-12
    r = convex.gjk(seg, None, touche.Point([3.0, 4.0, 0.0]), None)
    assert abs(r.signed_distance - 5.0) <= 1e-12 and np.allclose(r.normal, [0.6, 0.8, 0.0])


def test_max_iterations_is_reported():
    from touche._kernels import gjk as kernel

    rng = np.random.default_rng(12)
    a = _hull(rng, 60)
    b = touche.Ellipsoid([0.5, 0.3, 0.2])
    ta = random_poses(rng, 1, 3.0)[0]
    tb = np.eye(4)
    full = convex.gjk(a, ta, b, tb)
    assert full.status == convex.GJKStatus.SEPARATED and full.iterations > 2
    warm = np.zeros(kernel.WARM_SIZE)
    signed, _, _, _, status, iterations = kernel.gjk_pair_distance_limited(
        *a._packed[:3], ta, *b._packed[:3], tb, 1e-12, warm, 2
    )
    assert status == kinds.GJK_MAX_ITERATIONS and iterations == 2
    assert signed >= full.signed_distance - 1e-12  # an upper bound, flagged as unconverged


# ----------------------------------------------------------------------------------------------
# shape cast
def _overlap_at(a, ta, va, b, tb, vb):
    def at(t):
        pa = ta.copy()
        pb = tb.copy()
        pa[:3, 3] += va * t
        pb[:3, 3] += vb * t
        return bool(touche.intersects(a, pa, b, pb))
    return at


def test_shape_cast_against_sampling():
    rng = np.random.default_rng(13)
    shapes = [touche.Box([0.8, 0.5, 0.4]), _hull(rng, 12), touche.Sphere(0.4), touche.Capsule(0.3, 0.6),
              touche.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0])]
    outcomes = {kinds.MISS: 0, kinds.HIT: 0, kinds.ALREADY_TOUCHING: 0}
    for i in range(60):
        a = shapes[i % len(shapes)]
        b = shapes[(i // len(shapes) + i) % len(shapes)]
        ta = random_poses(rng, 1, 2.5)[0]
        tb = random_poses(rng, 1, 2.5)[0]
        va = rng.normal(size=3)
        vb = rng.normal(size=3) + 0.8 * (ta[:3, 3] - tb[:3, 3])
        got = convex.shape_cast(a, ta, va, b, tb, vb, 2.0)
        ref = first_contact_by_sampling(_overlap_at(a, ta, va, b, tb, vb), 2.0, samples=400)
        outcomes[int(got.status)] += 1
        if ref is None:
            assert got.status == convex.CastStatus.MISS or got.t <= 2.0  # a graze between samples
            continue
        if ref == 0.0:
            assert got.status == convex.CastStatus.ALREADY_TOUCHING
            continue
        assert got.status == convex.CastStatus.HIT
        assert abs(got.t - ref) <= 1e-7
        pa = ta.copy()
        pb = tb.copy()
        pa[:3, 3] += va * got.t
        pb[:3, 3] += vb * got.t
        at = touche.distance(a, pa, b, pb)
        assert abs(at.signed_distance) <= 1e-9
        assert np.allclose(got.normal, at.normal, atol=1e-5) or at.status == touche.Status.TOUCHING
        on_a = touche.closest_point(a, pa, got.point)
        assert on_a.distance <= 1e-9
    assert min(outcomes.values()) >= 5, outcomes


def test_shape_cast_batch_matches_single_and_touching_start():
    rng = np.random.default_rng(14)
    a = touche.Cylinder(0.4, 1.0)
    b = _hull(rng, 30)
    n = 200
    ta = random_poses(rng, n, 2.0)
    tb = random_poses(rng, n, 2.0)
    va = rng.normal(size=(n, 3))
    vb = np.zeros(3)
    batch = convex.shape_cast(a, ta, va, b, tb, vb, 3.0)
    for i in range(0, n, 20):
        one = convex.shape_cast(a, ta[i], va[i], b, tb[i], vb, 3.0)
        assert int(one.status) == batch.status[i]
        assert one.t == batch.t[i] or abs(one.t - batch.t[i]) <= 1e-12
    hit = batch.status == kinds.HIT
    assert 0.1 < hit.mean() < 0.9
    # at the reported time the shapes touch (within tolerance) and not before
    moved = ta[hit].copy()
    moved[:, :3, 3] += va[hit] * batch.t[hit][:, None]
    # measured 8.4e-12 (a cylinder: GJK near a curved contact converges to ~1e-12 since the
    # sub-algorithm fix; it used to stall at ~1e-7)
    assert np.abs(convex.gjk(a, moved, b, tb[hit]).signed_distance).max() <= 1e-9
    early = ta[hit].copy()
    early[:, :3, 3] += va[hit] * (batch.t[hit][:, None] - 1e-6)
    assert (convex.gjk(a, early, b, tb[hit]).signed_distance > 0).all()
    overlapping = batch.status == kinds.ALREADY_TOUCHING
    assert (convex.gjk(a, ta[overlapping], b, tb[overlapping]).signed_distance <= 1e-9).all()


# ----------------------------------------------------------------------------------------------
# coal
def _coal_geometry(shape):
    if isinstance(shape, touche.Box):
        return coal.Box(*shape.extents)
    if isinstance(shape, touche.Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, touche.Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, touche.Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    if isinstance(shape, touche.Cone):
        return coal.Cone(shape.radius, shape.length)
    if isinstance(shape, touche.Ellipsoid):
        return coal.Ellipsoid(*shape.radii)
    vertices = coal.StdVec_Vec3s()
    for p in shape.vertices:
        vertices.append(np.array(p, dtype=np.float64))
    triangles = coal.StdVec_Triangle()
    for f in shape.triangles:
        triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(vertices, triangles)


def coal_signed(ga, ta, gb, tb, tolerance=1e-12):
    request = coal.DistanceRequest()
    request.gjk_tolerance = tolerance
    request.epa_tolerance = tolerance
    request.gjk_max_iterations = 1000
    request.epa_max_iterations = 1000
    result = coal.DistanceResult()
    transform_a = coal.Transform3s(np.ascontiguousarray(ta[:3, :3]), np.ascontiguousarray(ta[:3, 3]))
    transform_b = coal.Transform3s(np.ascontiguousarray(tb[:3, :3]), np.ascontiguousarray(tb[:3, 3]))
    return coal.distance(ga, transform_a, gb, transform_b, request, result)


@pytest.mark.slow
@pytest.mark.skipif(coal is None, reason="coal not installed")
def test_against_coal():
    """Same random pairs through coal (tight tolerances). Where the two differ by more than the
    targets, the Minkowski / support-function reference decides who is right; touche must be."""
    rng = np.random.default_rng(15)
    shapes = [_hull(rng, 10), _hull(rng, 25), touche.Box([0.9, 0.6, 0.5]), touche.Sphere(0.45),
              touche.Capsule(0.3, 0.8), touche.Cylinder(0.4, 0.9), touche.Cone(0.45, 1.0),
              touche.Ellipsoid([0.6, 0.4, 0.3])]
    total = 0
    hits = 0
    disagreements = []
    for i, a in enumerate(shapes):
        for b in shapes[i:]:
            ga, gb = _coal_geometry(a), _coal_geometry(b)
            n = 60
            ta = random_poses(rng, n, 0.9)
            tb = random_poses(rng, n, 0.9)
            ours = convex.gjk(a, ta, b, tb).signed_distance
            for k in range(n):
                theirs = coal_signed(ga, ta[k], gb, tb[k])
                total += 1
                hits += ours[k] < 0
                limit = DIST_TOL if theirs > 0 else DEPTH_TOL * max(-theirs, 1e-3)
                if abs(ours[k] - theirs) > max(limit, 1e-9):
                    disagreements.append((a, b, ta[k], tb[k], ours[k], theirs))
    assert 0.3 <= hits / total <= 0.7
    touche_right = 0
    for a, b, ta, tb, ours, theirs in disagreements[:40]:
        polytopes = a.kind <= kinds.POLYHEDRON and b.kind <= kinds.POLYHEDRON and kinds.TRIANGLE <= min(a.kind, b.kind)
        if polytopes:
            ref, _ = minkowski_signed(world_vertices(a, ta), world_vertices(b, tb))
        else:
            ref, _ = support_signed(a, ta, b, tb)
        touche_right += abs(ours - ref) <= abs(theirs - ref) + 1e-7
    print(f"\ncoal vs touche: {total} pairs, {len(disagreements)} beyond the targets; "
          f"touche closer to the reference in {touche_right} of {min(40, len(disagreements))} checked")
    assert touche_right == min(40, len(disagreements))


# ----------------------------------------------------------------------------------------------
# bad input
def test_bad_input():
    box = touche.Box([1, 1, 1])
    with pytest.raises(touche.UnsupportedQuery):
        convex.gjk(touche.Plane(), None, box, None)
    with pytest.raises(touche.UnsupportedQuery):
        convex.shape_cast(touche.Ray([0, 0, 0], [1, 0, 0]), None, np.zeros(3), box, None, np.zeros(3), 1.0)
    bad = np.eye(4)
    bad[0, 3] = np.nan
    with pytest.raises(touche.GeometryError):
        convex.gjk(box, bad, box, None)
    with pytest.raises(touche.GeometryError):
        convex.gjk(box, np.zeros((3, 4, 4)) + np.eye(4), box, np.zeros((2, 4, 4)) + np.eye(4))
    with pytest.raises(touche.GeometryError):
        convex.shape_cast(box, None, [np.nan, 0, 0], box, None, np.zeros(3), 1.0)
    with pytest.raises(touche.GeometryError):
        convex.shape_cast(box, None, np.zeros(3), box, None, np.zeros(3), -1.0)
    with pytest.raises(touche.GeometryError):
        convex.gjk(box, None, box, None, warm_start=np.zeros(5))


@pytest.mark.skipif(coal is None, reason="coal not installed")
def test_hill_climbing_hulls_against_coal():
    """Hulls above support.HILL_CLIMB_MIN_VERTICES take their support points by hill climbing on the
    vertex adjacency (Ericson 9.5.4): same answers as coal (tight tolerances, exact on polytopes)
    against a box, a cylinder's fine hull neighbour and another climbing hull."""
    import coal_adapter as ca
    from touche._kernels import support as kernel

    rng = np.random.default_rng(21)
    points = rng.normal(size=(400, 3))
    points /= np.linalg.norm(points, axis=1)[:, None]
    big = touche.ConvexPolyhedron(points * 0.6)
    assert len(big.vertices) > kernel.HILL_CLIMB_MIN_VERTICES
    others = [touche.Box([0.9, 0.5, 0.4]), big, _hull(rng, 30)]
    hits = 0
    total = 0
    for other in others:
        ta = random_poses(rng, 150, 0.8)
        tb = random_poses(rng, 150, 0.8)
        got = convex.gjk(big, ta, other, tb)
        ref, _, _, _ = ca.coal_signed(ca.coal_geometry(big), ta, ca.coal_geometry(other), tb)
        assert set(np.unique(got.status)) <= {0, 1, 2}
        sep = ref > 0
        assert np.abs(got.signed_distance - ref)[sep].max(initial=0.0) <= DIST_TOL
        assert (np.abs(got.signed_distance - ref)[~sep] <= DEPTH_TOL * np.maximum(-ref[~sep], 1e-3)).all()
        hits += int((~sep).sum())
        total += len(ref)
    assert 0.2 <= hits / total <= 0.8


def test_distance_within_stops_only_beyond_the_cutoff():
    """gjk_distance_within (a mesh search's triangle test): with no cutoff it gives
    gjk_pair_distance's numbers bit for bit; with a cutoff it stops (BEYOND_CUTOFF) only for
    pairs farther than the cutoff, and otherwise gives the same numbers again."""
    from touche._kernels.convex import gjk

    rng = np.random.default_rng(31)
    shapes = [touche.Box([0.6, 0.3, 0.9]), touche.Cylinder(0.4, 1.0), touche.Cone(0.5, 0.8),
              touche.Ellipsoid([0.5, 0.3, 0.2]), touche.Capsule(0.2, 0.7), _hull(rng, 30),
              touche.Triangle([0, 0, 0], [1.0, 0.1, 0], [0.2, 0.9, 0.1])]
    m, s, hints = np.empty((4, 4)), np.empty((4, 10)), np.zeros(2, dtype=np.int64)
    stopped = checked = 0
    for a in shapes:
        for b in shapes:
            ka, pa, pta = a._packed[:3]
            kb, pb, ptb = b._packed[:3]
            for ta, tb in zip(random_poses(rng, 12, 2.0), random_poses(rng, 12, 2.0)):
                ref = gjk.gjk_pair_distance(ka, pa, pta, ta, kb, pb, ptb, tb, 0.0)
                ref_numbers = np.concatenate([[ref[0]], ref[1], ref[2], ref[3]])
                got = gjk.gjk_distance_within(ka, pa, pta, ta, kb, pb, ptb, tb, 0.0, np.inf, m, s, hints)
                if got[0] == gjk.CORES_OVERLAP:
                    assert ref[0] <= 0.0 and np.isnan(got[1])
                    continue
                assert got[0] == gjk.WITHIN
                assert np.array_equal(np.array(got[1:11]), ref_numbers) and got[11] == ref[4]
                distance = ref[0]
                if distance <= 0.0:
                    continue
                for cutoff in (0.5 * distance, 0.999 * distance, 1.001 * distance, 3.0 * distance):
                    again = gjk.gjk_distance_within(ka, pa, pta, ta, kb, pb, ptb, tb, 0.0, cutoff, m, s, hints)
                    checked += 1
                    if again[0] == gjk.BEYOND_CUTOFF:
                        assert distance > cutoff and np.isnan(again[1])
                        stopped += 1
                    else:
                        assert again[0] == gjk.WITHIN
                        assert np.array_equal(np.array(again[1:11]), ref_numbers)
    # the stop does happen: half the cutoffs lie below the distance, and GJK proves (nearly) all
    # of them (measured: every one)
    assert stopped >= 0.45 * checked, (stopped, checked)
