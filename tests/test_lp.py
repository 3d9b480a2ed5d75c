"""touche.lp: Seidel LP, Chebyshev feasible point, Fourier-Motzkin, polytope intersection by LP
and Chung-Wang, against scipy (HiGHS), the V-representation LP, the worked examples of Ericson
9.4.1 (SEED-NOTES section 2, #4 and #5) and the SAT engine (touche.intersects)."""
from fractions import Fraction

import numpy as np
import pytest

import touche
from touche import lp
from naive import lp as N

# Ericson 9.4.1, Figure 9.7: A = (1,0),(5,-1),(4,3) and B = (0,0),(4,1),(1,4) as halfspaces.
TRIANGLES_A = np.array([[-1.0, 1.0], [-1.0, -4.0], [4.0, 1.0], [-4.0, 1.0], [1.0, -4.0], [1.0, 1.0]])
TRIANGLES_B = np.array([-1.0, -1.0, 19.0, 0.0, 0.0, 5.0])


# ------------------------------------------------------------------------ worked examples
def test_worked_example_4_maximize_x():
    for seed in range(10):
        result = lp.linprog([1.0, 0.0], TRIANGLES_A, TRIANGLES_B, seed=seed)
        assert result.status == lp.LPStatus.OPTIMAL
        assert result.value == pytest.approx(4.0, abs=1e-12)
        np.testing.assert_allclose(result.x, [4.0, 1.0], atol=1e-12)


def test_worked_example_4_intersection_polygon():
    """The intersection polygon is (4/3, 1/3), (3, 2), (4, 1): maximizing along directions
    that single out each vertex returns it."""
    for direction, vertex in (([-1.0, -1.0], (4 / 3, 1 / 3)), ([0.0, 1.0], (3.0, 2.0)), ([1.0, -0.2], (4.0, 1.0))):
        result = lp.linprog(direction, TRIANGLES_A, TRIANGLES_B)
        assert result.status == lp.LPStatus.OPTIMAL
        np.testing.assert_allclose(result.x, vertex, atol=1e-12)
    # every direction's optimum is one of the three vertices: the polygon has no other vertex
    vertices = np.array([[4 / 3, 1 / 3], [3.0, 2.0], [4.0, 1.0]])
    for angle in np.linspace(0, 2 * np.pi, 37)[:-1]:
        c = np.array([np.cos(angle), np.sin(angle)])
        result = lp.linprog(c, TRIANGLES_A, TRIANGLES_B)
        assert result.value == pytest.approx((vertices @ c).max(), abs=1e-12)


def test_worked_example_4_separating_line_infeasible():
    """Separating line a x + b y + c: f(A_i) <= 0, f(B_i) > 0 (made f(B_i) >= 1 by scaling) has
    no solution: the triangles intersect."""
    A_vertices = [(1, 0), (5, -1), (4, 3)]
    B_vertices = [(0, 0), (4, 1), (1, 4)]
    rows = [[x, y, 1.0] for x, y in A_vertices] + [[-x, -y, -1.0] for x, y in B_vertices]
    rhs = [0.0] * 3 + [-1.0] * 3
    result = lp.linprog([1.0, 0.0, 0.0], rows, rhs)
    assert result.status == lp.LPStatus.INFEASIBLE
    assert np.isnan(result.x).all() and result.value == -np.inf
    # and the same LP for the triangle B moved far away is feasible
    moved = [[-(x + 10), -y, -1.0] for x, y in B_vertices]
    assert lp.linprog([0.0, 0.0, 1.0], rows[:3] + moved, rhs).status == lp.LPStatus.OPTIMAL


def test_worked_example_5_fourier_motzkin():
    exact = lp.fourier_motzkin(TRIANGLES_A, TRIANGLES_B, exact=True)
    assert exact.status == lp.Feasibility.FEASIBLE
    assert exact.lower == Fraction(1, 3) and exact.upper == 2
    approx = lp.fourier_motzkin(TRIANGLES_A, TRIANGLES_B)
    assert approx.lower == pytest.approx(1 / 3, abs=1e-15) and approx.upper == pytest.approx(2.0, abs=1e-15)
    # at y = 2 the only feasible x is 3: (3, 2) is a vertex
    fixed = np.vstack([np.column_stack([TRIANGLES_A[:, 1], TRIANGLES_A[:, 0]]), [[1.0, 0.0], [-1.0, 0.0]]])
    at_y2 = lp.fourier_motzkin(fixed, np.concatenate([TRIANGLES_B, [2.0, -2.0]]), exact=True)
    assert at_y2.lower == 3 and at_y2.upper == 3


def test_fourier_motzkin_vs_seidel_random():
    rng = np.random.default_rng(11)
    for _ in range(60):
        d = int(rng.integers(2, 4))
        m = int(rng.integers(4, 9))
        A = rng.normal(size=(m, d))
        b = A @ rng.normal(size=d) + rng.uniform(-0.5, 1.0, m)
        fm = lp.fourier_motzkin(A, b)
        c = np.zeros(d)
        c[-1] = 1.0
        top, bottom = lp.linprog(c, A, b), lp.linprog(-c, A, b)
        if top.status == lp.LPStatus.INFEASIBLE:
            assert fm.status == lp.Feasibility.INFEASIBLE
            continue
        assert fm.status == lp.Feasibility.FEASIBLE
        if top.status == lp.LPStatus.UNBOUNDED:
            assert fm.upper == np.inf
        else:
            assert fm.upper == pytest.approx(top.value, abs=1e-9 * max(1, abs(top.value)))
        if bottom.status == lp.LPStatus.UNBOUNDED:
            assert fm.lower == -np.inf
        else:
            assert fm.lower == pytest.approx(-bottom.value, abs=1e-9 * max(1, abs(bottom.value)))


# ------------------------------------------------------------------------ Seidel vs HiGHS
def _unit_rows(rng, m, d):
    rows = rng.normal(size=(m, d))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _random_lp(rng, d):
    """One random LP from a mix of families; returns (c, A, b, family)."""
    family = rng.choice(["bounded", "infeasible", "unbounded", "duplicate", "parallel", "one_point", "tie", "scaled"])
    scale = 10.0 ** rng.uniform(-3, 3)
    center = rng.normal(size=d) * scale
    m = int(rng.integers(d + 1, 30))
    A = _unit_rows(rng, m, d) * rng.uniform(0.2, 5.0, (m, 1))
    b = A @ center + rng.uniform(0.05, 1.0, m) * scale
    c = rng.normal(size=d)
    if family == "infeasible":
        b = A @ center - rng.uniform(0.05, 1.0, m) * scale
        if rng.random() < 0.5:  # or one pair of opposite halfspaces with a gap
            a = _unit_rows(rng, 1, d)[0]
            A = np.vstack([A[: m // 2], a, -a])
            b = np.concatenate([A[: m // 2] @ center + scale, [a @ center, -(a @ center) - 0.1 * scale]])
    elif family == "unbounded":
        u = _unit_rows(rng, 1, d)[0]
        A = A - np.outer(A @ u, u) - rng.uniform(0.1, 1.0, (m, 1)) * u  # every row has a.u < 0
        b = A @ center + rng.uniform(0.05, 1.0, m) * scale
        c = u + 0.3 * rng.normal(size=d)
    elif family == "duplicate":
        pick = rng.integers(0, m, m // 2)
        A = np.vstack([A, A[pick] * rng.uniform(0.5, 2.0, (len(pick), 1))])
        b = np.concatenate([b, b[pick] * (A[m:, 0] / A[pick, 0])])
    elif family == "parallel":  # equality pairs and parallel halfspaces
        pick = rng.integers(0, m, 2)
        A = np.vstack([A, -A[pick[0]], A[pick[1]]])
        b = np.concatenate([b, [-b[pick[0]], b[pick[1]] + 0.5 * scale]])
        if rng.random() < 0.5:
            A = np.vstack([A, -A[pick[1]]])
            b = np.concatenate([b, [-b[pick[1]] + 0.25 * scale]])  # a slab (infeasible: width < 0)
    elif family == "one_point":  # many constraints through one point
        k = int(rng.integers(d + 1, m + 1))
        b[:k] = A[:k] @ center
    elif family == "tie":  # the objective is the normal of a constraint
        c = A[int(rng.integers(0, m))] * rng.uniform(0.5, 2.0)
    elif family == "scaled":
        factor = 10.0 ** rng.uniform(-6, 6)
        A, b = A * factor, b * factor
    return c, A, b, family


@pytest.mark.parametrize("d", [2, 3])
def test_seidel_vs_highs(d):
    rng = np.random.default_rng(100 + d)
    counts = {N.OPTIMAL: 0, N.INFEASIBLE: 0, N.UNBOUNDED: 0}
    families = set()
    for case in range(1100):
        c, A, b, family = _random_lp(rng, d)
        ref_status, ref_value = N.reference_lp(c, A, b)
        result = lp.linprog(c, A, b, seed=case)
        assert int(result.status) == ref_status, (case, family, result, ref_status, ref_value)
        counts[ref_status] += 1
        families.add(family)
        if ref_status == N.OPTIMAL:
            assert abs(result.value - ref_value) <= 1e-9 * max(1.0, abs(ref_value)), (case, family, result.value, ref_value)
            # the point is feasible within the tolerance and attains the value
            slack = (A @ result.x - b) / np.linalg.norm(A, axis=1)
            assert slack.max() <= 1e-9 * max(1.0, np.abs(b / np.linalg.norm(A, axis=1)).max())
    assert len(families) == 8
    assert min(counts.values()) >= 100, counts


def test_seidel_order_independent():
    rng = np.random.default_rng(5)
    for _ in range(50):
        c, A, b, _ = _random_lp(rng, 3)
        values = {lp.linprog(c, A, b, seed=s).status for s in range(5)}
        assert len(values) == 1
        results = [lp.linprog(c, A, b, seed=s) for s in range(5)]
        if results[0].status == lp.LPStatus.OPTIMAL:
            assert np.ptp([r.value for r in results]) <= 1e-9 * max(1, abs(results[0].value))


def test_seidel_edge_cases():
    # no constraints: unbounded unless c = 0
    assert lp.linprog([1.0, 0.0], np.zeros((0, 2)), np.zeros(0)).status == lp.LPStatus.UNBOUNDED
    zero = lp.linprog([0.0, 0.0, 0.0], np.zeros((0, 3)), np.zeros(0))
    assert zero.status == lp.LPStatus.OPTIMAL and zero.value == 0.0
    # a zero row: 0 <= b
    assert lp.linprog([1.0, 0.0], [[0.0, 0.0], [1.0, 0.0]], [-1.0, 1.0]).status == lp.LPStatus.INFEASIBLE
    assert lp.linprog([1.0, 0.0], [[0.0, 0.0], [1.0, 0.0]], [1.0, 1.0]).value == 1.0
    # bounded value on an unbounded region (a tie along an infinite edge)
    tie = lp.linprog([1.0, 1.0], [[1.0, 1.0]], [1.0])
    assert tie.status == lp.LPStatus.OPTIMAL and tie.value == pytest.approx(1.0)
    # an exact point (four halfspaces meeting in one point), at scales 1e-6 .. 1e6
    for scale in (1e-6, 1.0, 1e6):
        A = np.array([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
        b = np.array([1, -1, 2, -2, 3, -3]) * scale
        result = lp.linprog([1.0, 1.0, 1.0], A, b)
        assert result.status == lp.LPStatus.OPTIMAL
        np.testing.assert_allclose(result.x, np.array([1, 2, 3]) * scale, rtol=1e-12)
        shrunk = b.copy()
        shrunk[1] -= 1e-6 * max(scale, 1e-3)  # x >= 1 + gap and x <= 1 (gap above ABSOLUTE = 1e-12)
        assert lp.linprog([1.0, 1.0, 1.0], A, shrunk).status == lp.LPStatus.INFEASIBLE


def test_feasible_point():
    # the Chebyshev centre of the unit square [0,1]^2 is its middle, radius 1/2
    square = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    result = lp.feasible_point(square, [1.0, 0, 1, 0])
    assert result.status == lp.Feasibility.FEASIBLE
    np.testing.assert_allclose(result.x, [0.5, 0.5], atol=1e-12)
    assert result.radius == pytest.approx(0.5)
    # Figure 9.7's triangles overlap in a polygon with interior
    inside = lp.feasible_point(TRIANGLES_A, TRIANGLES_B)
    assert inside.radius > 0.1 and (TRIANGLES_A @ inside.x <= TRIANGLES_B).all()
    # flat set (a segment): feasible, radius 0
    flat = lp.feasible_point([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]], [1.0, -1.0, 2.0, 0.0])
    assert flat.status == lp.Feasibility.FEASIBLE and abs(flat.radius) <= 1e-12
    assert flat.x[1] == pytest.approx(1.0) and 0.0 <= flat.x[0] <= 2.0
    assert lp.feasible_point(square, [1.0, -2.0, 1.0, 0.0]).status == lp.Feasibility.INFEASIBLE
    # random 3D systems: radius agrees with HiGHS's Chebyshev LP
    rng = np.random.default_rng(3)
    for _ in range(100):
        A = _unit_rows(rng, 12, 3)
        b = A @ rng.normal(size=3) + rng.uniform(-0.3, 1.0, 12)
        result = lp.feasible_point(A, b)
        reference = N.chebyshev_slack(A, b, cap=1.0 + np.abs(b).max())
        if reference < -1e-9:
            assert result.status == lp.Feasibility.INFEASIBLE
        elif reference > 1e-9:
            assert result.status == lp.Feasibility.FEASIBLE
            assert result.radius == pytest.approx(reference, abs=1e-9)
            assert (A @ result.x - b).max() <= -result.radius + 1e-9


def test_bad_input():
    with pytest.raises(touche.GeometryError):
        lp.linprog([1.0, np.nan], np.eye(2), [1.0, 1.0])
    with pytest.raises(touche.GeometryError):
        lp.linprog([1.0, 0.0], [[1.0, np.inf]], [1.0])
    with pytest.raises(touche.GeometryError):
        lp.linprog([1.0, 0.0], np.eye(2), [1.0, 1.0, 1.0])
    with pytest.raises(touche.GeometryError):
        lp.linprog([1.0, 0.0, 0.0], np.eye(2), [1.0, 1.0])
    with pytest.raises(touche.GeometryError):
        lp.linprog([1.0], [[1.0]], [1.0])  # dimension 1
    with pytest.raises(touche.GeometryError):
        lp.feasible_point(np.ones((3, 4)), np.ones(3))  # dimension 4
    with pytest.raises(touche.GeometryError):
        lp.feasible_point(np.ones(3), np.ones(3))
    with pytest.raises(touche.GeometryError):
        lp.fourier_motzkin([[1.0, "x"]], [1.0])
    box = touche.Box([1, 1, 1])
    with pytest.raises(touche.GeometryError):
        lp.polytopes_intersect(box, np.full((4, 4), np.nan), box, None)
    with pytest.raises(touche.GeometryError):
        lp.polytopes_intersect(box, np.tile(np.eye(4), (3, 1, 1)), box, np.tile(np.eye(4), (2, 1, 1)))
    with pytest.raises(touche.GeometryError):
        lp.polytopes_intersect(box, None, box, None, method="simplex")
    with pytest.raises(touche.GeometryError):
        lp.separating_vector(box, None, box, None, initial=[0.0, 0.0, 0.0])
    with pytest.raises(touche.UnsupportedQuery):
        lp.polytopes_intersect(touche.Sphere(1.0), None, box, None)


# ------------------------------------------------------------------------ polytopes
def _shapes(rng):
    hulls = [touche.ConvexPolyhedron(rng.normal(size=(30, 3)) * rng.uniform(0.3, 0.7, 3)) for _ in range(2)]
    tets = [touche.Tetrahedron(*(rng.normal(size=(4, 3)) * 0.6)) for _ in range(2)]
    boxes = [touche.Box(rng.uniform(0.3, 1.2, 3)), touche.Box(rng.uniform(0.3, 1.2, 3))]
    return boxes + tets + hulls


def test_polytopes_vs_sat_engine_batch():
    """>= 10,000 random box / tetrahedron / hull pairs in batches, LP and Chung-Wang against
    touche.intersects. Disagreements are allowed only inside the 1e-9 band around touching
    (decided by HiGHS's Chebyshev slack, a lower bound of the distance to touching)."""
    rng = np.random.default_rng(2024)
    shapes = _shapes(rng)
    per_pair = 300
    total = hits = 0
    cw_status = np.zeros(3, dtype=np.int64)
    for a in shapes:
        for b in shapes:
            pa = N.random_poses(rng, per_pair, 0.1)
            pb = N.random_poses(rng, per_pair, 0.85)
            expected = touche.intersects(a, pa, b, pb)
            by_lp = lp.polytopes_intersect(a, pa, b, pb)
            by_cw = lp.polytopes_intersect(a, pa, b, pb, method="chung-wang")
            separation = lp.separating_vector(a, pa, b, pb)
            cw_status += np.bincount(separation.status, minlength=3)
            for got in (by_lp, by_cw):
                for i in np.flatnonzero(got != expected):
                    slack = N.pair_slack(a, pa[i], b, pb[i])
                    assert abs(slack) < 1e-9, (type(a).__name__, type(b).__name__, i, got[i], expected[i], slack)
            # Chung-Wang never reports SEPARATED for an intersecting pair, never INTERSECTING for a
            # separated one
            assert not (expected & (separation.status == lp.SeparationStatus.SEPARATED)).any()
            assert not (~expected & (separation.status == lp.SeparationStatus.INTERSECTING)).any()
            total += per_pair
            hits += int(expected.sum())
    assert total >= 10_000
    assert 0.3 <= hits / total <= 0.7, hits / total
    # the sub-algorithm decides most intersecting pairs; the cap is rare
    assert cw_status[lp.SeparationStatus.MAX_ITERATIONS] <= 0.05 * total, cw_status


def test_polytopes_vs_naive_lp():
    """LP and Chung-Wang against the V-representation LP and the H-representation slack (HiGHS)
    on a few hundred pairs, single-pose calls."""
    rng = np.random.default_rng(77)
    shapes = _shapes(rng)
    used = hits = 0
    for _ in range(240):
        a, b = shapes[rng.integers(0, 6)], shapes[rng.integers(0, 6)]
        pa = N.random_poses(rng, 1, 0.1)[0]
        pb = N.random_poses(rng, 1, 1.1)[0]
        slack = N.pair_slack(a, pa, b, pb)
        if abs(slack) < 1e-9:
            continue
        expected = slack > 0
        assert N.vertices_intersect(N.world_vertices(a, pa), N.world_vertices(b, pb)) == expected
        hit, witness = lp.polytopes_intersect(a, pa, b, pb, return_witness=True)
        assert hit == expected
        if hit:  # the witness lies in both (within the tolerance)
            for shape, pose in ((a, pa), (b, pb)):
                normals, offsets = N.world_planes(shape, pose)
                assert (normals @ witness - offsets).max() <= 1e-9
        assert lp.polytopes_intersect(a, pa, b, pb, method="chung-wang") == expected
        used += 1
        hits += expected
    assert used >= 200 and 0.2 <= hits / used <= 0.8


def test_separating_vector_really_separates():
    rng = np.random.default_rng(9)
    shapes = _shapes(rng)
    separated = 0
    for a in shapes:
        for b in shapes:
            pa = N.random_poses(rng, 200, 0.1)
            pb = N.random_poses(rng, 200, 1.2)
            result = lp.separating_vector(a, pa, b, pb)
            assert result.vector.shape == (200, 3) and result.status.dtype == np.int8
            np.testing.assert_allclose(np.linalg.norm(result.vector, axis=1), 1.0, rtol=1e-12)
            for i in np.flatnonzero(result.status == lp.SeparationStatus.SEPARATED):
                va, vb = N.world_vertices(a, pa[i]), N.world_vertices(b, pb[i])
                assert N.separation_margin(va, vb, result.vector[i]) > 0.0
                separated += 1
            # warm start: the found vector separates at once (0 iterations)
            done = result.status == lp.SeparationStatus.SEPARATED
            again = lp.separating_vector(a, pa[done], b, pb[done], initial=result.vector[done])
            assert (again.status == lp.SeparationStatus.SEPARATED).all() and (again.iterations == 0).all()
    assert separated > 2000
    single = lp.separating_vector(shapes[0], None, shapes[1], touche.Pose.from_translation([5.0, 0, 0]))
    assert single.status == lp.SeparationStatus.SEPARATED and isinstance(single.iterations, int)
    assert single.vector @ [1.0, 0, 0] > 0.5


def _rot90(axis, k):
    """Exact rotations by multiples of 90 degrees (integer matrices)."""
    c, s = [1, 0, -1, 0][k % 4], [0, 1, 0, -1][k % 4]
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def _pose(R=np.eye(3), t=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_exact_touching(scale):
    """Exactly touching boxes / tetrahedra (face-face, edge-edge, vertex-vertex, vertex-face)
    intersect (closed sets) by both methods; a gap of 1e-6 of the size separates them."""
    box = touche.Box(np.array([2.0, 2.0, 2.0]) * scale)
    tet = touche.Tetrahedron(*(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]) * scale))
    cases = [
        (box, _pose(), box, _pose(t=np.array([2.0, 0.5, 0.25]) * scale), np.array([1.0, 0, 0])),  # face-face
        (box, _pose(), box, _pose(_rot90(2, 1), np.array([2.0, 2.0, 0.0]) * scale), np.array([1.0, 1, 0])),  # edge-edge
        (box, _pose(), box, _pose(t=np.array([2.0, 2.0, 2.0]) * scale), np.array([1.0, 1, 1])),  # vertex-vertex
        (tet, _pose(t=np.array([1.0, -0.25, -0.25]) * scale), box, _pose(), np.array([-1.0, 0, 0])),  # vertex on face
        (tet, _pose(_rot90(1, 2), np.array([-1.0, -0.1, -0.2]) * scale), box, _pose(), np.array([1.0, 0, 0])),
        (tet, _pose(), tet, _pose(_rot90(0, 2), np.array([0.0, 0.0, 0.0])), np.array([0.0, 0.0, -1.0])),  # shared vertex
    ]
    for a, pa, b, pb, away in cases:  # ``away`` moves B away from A
        assert touche.intersects(a, pa, b, pb)
        for method in ("lp", "chung-wang"):
            assert lp.polytopes_intersect(a, pa, b, pb, method=method), method
            assert lp.polytopes_intersect(b, pb, a, pa, method=method), method
        assert lp.separating_vector(a, pa, b, pb).status != lp.SeparationStatus.SEPARATED
        # 1e-6 of the size (1e-9 absolute at scale 1e-6: ABSOLUTE = 1e-12 counts as touching)
        step = away / np.linalg.norm(away) * 1e-6 * max(scale, 1e-3)
        gap = pb.copy()
        gap[:3, 3] += step
        overlap = pb.copy()
        overlap[:3, 3] -= step
        wide = pb.copy()
        wide[:3, 3] += 1e4 * step
        for method in ("lp", "chung-wang"):
            assert not lp.polytopes_intersect(a, pa, b, gap, method=method), method
            assert lp.polytopes_intersect(a, pa, b, overlap, method=method), method
        # Chung-Wang converges slowly on a tiny gap (it may stop at the cap, never INTERSECTING);
        # a gap of 1 % of the size separates at once
        assert lp.separating_vector(a, pa, b, gap).status != lp.SeparationStatus.INTERSECTING
        assert lp.separating_vector(a, pa, b, overlap).status != lp.SeparationStatus.SEPARATED
        assert lp.separating_vector(a, pa, b, wide).status == lp.SeparationStatus.SEPARATED


def test_flat_shapes():
    """Triangles and polygons carry a front and a back plane with opposite offsets (an
    equality): the LP still decides them, also against the SAT engine on random poses."""
    tri = touche.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0])
    square = touche.ConvexPolygon([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    box = touche.Box([1, 1, 1])
    P = touche.Pose.from_translation
    for method in ("lp", "chung-wang"):
        assert lp.polytopes_intersect(tri, None, tri, P([0.5, 0, 0]), method=method)  # coplanar overlap
        assert lp.polytopes_intersect(tri, None, tri, P([1.0, 0, 0]), method=method)  # coplanar, touching at a vertex
        assert not lp.polytopes_intersect(tri, None, tri, P([1.0 + 1e-9, 0, 0]), method=method)
        assert not lp.polytopes_intersect(tri, None, tri, P([0.25, 0, 1e-9]), method=method)  # parallel planes
        assert lp.polytopes_intersect(tri, None, box, P([0.5, 0.5, 0.5]), method=method)  # on a box face
        assert lp.polytopes_intersect(square, None, box, P([1.5, 0.5, 0.0]), method=method)  # edge on a face
        assert not lp.polytopes_intersect(square, None, box, P([1.5 + 1e-9, 0.5, 0.0]), method=method)
    # a zero-area triangle is the segment it is
    needle = touche.Triangle([-2, 0.1, 0.2], [2, 0.1, 0.2], [0, 0.1, 0.2])
    assert lp.polytopes_intersect(needle, None, box, None)
    assert not lp.polytopes_intersect(needle, None, box, P([0, 0.65, 0]))
    assert lp.polytopes_intersect(needle, None, box, P([0, 0.4, 0]), method="chung-wang")
    # random poses against the SAT engine
    rng = np.random.default_rng(4)
    hull = touche.ConvexPolyhedron(rng.normal(size=(20, 3)) * 0.5)
    for a, b in ((tri, tri), (square, tri), (tri, box), (square, hull), (needle, hull)):
        pa = N.random_poses(rng, 400, 0.1)
        pb = N.random_poses(rng, 400, 0.9)
        expected = touche.intersects(a, pa, b, pb)
        for method in ("lp", "chung-wang"):
            got = lp.polytopes_intersect(a, pa, b, pb, method=method)
            for i in np.flatnonzero(got != expected):
                va, vb = N.world_vertices(a, pa[i]), N.world_vertices(b, pb[i])
                assert N.vertices_intersect(va, vb) == got[i], (type(a).__name__, type(b).__name__, method, i)
        assert 0.05 <= expected.mean() <= 0.95


def test_far_from_origin_and_scales():
    """Boxes of size 1e-6 .. 1e6 placed up to 1e6 from the origin (the tolerance is relative to
    the plane offsets, so a 1e-6 box 1e6 away would be below it: not asked)."""
    rng = np.random.default_rng(8)
    for scale, offset in ((1e-6, 0.0), (1e-6, 1e-6), (1.0, 1e3), (1e6, 0.0), (1e6, 1e6)):
        box = touche.Box(np.array([1.0, 2.0, 3.0]) * scale)
        pa = N.random_poses(rng, 300, 0.1 * scale)
        pb = N.random_poses(rng, 300, 2.5 * scale)
        pa[:, :3, 3] += offset
        pb[:, :3, 3] += offset
        expected = touche.intersects(box, pa, box, pb)
        assert 0.2 <= expected.mean() <= 0.8
        for method in ("lp", "chung-wang"):
            got = lp.polytopes_intersect(box, pa, box, pb, method=method)
            for i in np.flatnonzero(got != expected):
                slack = N.pair_slack(box, pa[i], box, pb[i])
                assert abs(slack) < 1e-9 * max(scale, offset), (scale, offset, method, slack)
