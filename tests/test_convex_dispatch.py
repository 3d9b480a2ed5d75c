"""Convex pairs routed to GJK / EPA by the pair engine (touche.distance / intersects /
signed_distance): smooth solids (cylinder, cone, ellipsoid) against everything, rays and lines
against them, smooth solids against meshes, and the separated case of polytope pairs.

References (none of them runs the code under test on the same data):
- an ellipsoid with equal radii is a sphere, whose pairs have closed forms / the SAT engine;
- a fine inscribed hull of a smooth solid is within its Hausdorff distance H of the solid, and
  distances are 1-Lipschitz in H: |d(S, X) - d(hull, X)| <= H;
- the separated polytope distance from GJK equals the feature-enumeration engine
  (``pairs.engine_pair_distance``, itself checked against naive references in test_pairs.py);
- a ray / line against a bounded shape equals the long enough segment.
"""
import numpy as np
import pytest

import naive as N
import touche as tc
from touche._kernels import kinds as K
from engines import engine_answer

REL = 1e-9


def _poses(rng, n, spread):
    Ta = np.empty((n, 4, 4))
    Tb = np.empty((n, 4, 4))
    for i in range(n):
        Ta[i] = N.pose(N.random_rotation(rng), rng.uniform(-0.2, 0.2, 3))
        Tb[i] = N.pose(N.random_rotation(rng), rng.uniform(-spread, spread, 3))
    return Ta, Tb


PARTNERS = {
    "Point": tc.Point([0.1, -0.2, 0.05]),
    "Sphere": tc.Sphere(0.4, center=[0.1, 0.0, 0.2]),
    "Segment": tc.Segment([-0.6, 0.1, 0.0], [0.5, -0.2, 0.3]),
    "Capsule": tc.Capsule(0.3, 1.2),
    "Triangle": tc.Triangle([0.0, 0.0, 0.0], [1.2, 0.1, 0.0], [0.3, 0.9, 0.1]),
    "Tetrahedron": tc.Tetrahedron([0, 0, 0], [1.0, 0.1, 0], [0.2, 0.9, 0.1], [0.3, 0.2, 0.8]),
    "Box": tc.Box([1.0, 0.6, 1.4]),
    "ConvexPolygon": tc.ConvexPolygon([[0.6, 0, 0], [0.2, 0.55, 0.0], [-0.45, 0.35, 0], [-0.5, -0.3, 0]]),
    "ConvexPolyhedron": tc.ConvexPolyhedron(np.random.default_rng(7).normal(size=(12, 3)) * 0.6),
    "Cylinder": tc.Cylinder(0.4, 1.2),
    "Cone": tc.Cone(0.5, 1.0),
    "Ellipsoid": tc.Ellipsoid([0.7, 0.4, 0.3]),
}


def test_every_pair_is_supported():
    everything = {(a, b) for a in range(K.NUM_KINDS) for b in range(K.NUM_KINDS)}
    assert set(tc.SUPPORTED_PAIRS) == everything  # mesh-mesh through the BVH (issue 4)


@pytest.mark.parametrize("partner", sorted(PARTNERS))
def test_round_ellipsoid_equals_sphere(partner):
    """Ellipsoid(r, r, r) runs GJK / EPA with the ellipsoid support; Sphere(r) the closed forms
    or the SAT engine. Same distances, depths and points."""
    rng = np.random.default_rng(11)
    radius = 0.45
    Ta, Tb = _poses(rng, 300, 1.3)
    other = PARTNERS[partner]
    ellipsoid = tc.distance(tc.Ellipsoid([radius] * 3), Ta, other, Tb)
    sphere = tc.distance(tc.Sphere(radius), Ta, other, Tb)
    separated = sphere.signed_distance > 1e-9
    assert 0.2 <= separated.mean() <= 0.98
    np.testing.assert_allclose(ellipsoid.signed_distance, sphere.signed_distance, atol=1e-9)
    np.testing.assert_array_equal(ellipsoid.status, sphere.status)
    # witness points on a curved surface are only first-order accurate where the distance is
    # second-order: 1e-10 relative in distance allows ~1e-5 in the points
    np.testing.assert_allclose(ellipsoid.point_a[separated], sphere.point_a[separated], atol=1e-5)
    np.testing.assert_allclose(ellipsoid.point_b[separated], sphere.point_b[separated], atol=1e-5)
    hits = tc.intersects(tc.Ellipsoid([radius] * 3), Ta, other, Tb)
    clear = np.abs(sphere.signed_distance) > 1e-9
    np.testing.assert_array_equal(hits[clear], (sphere.signed_distance <= 0)[clear])


def _inscribed_hull(shape, resolution=24):
    """Points on the surface of a smooth solid (local frame) and the Hausdorff distance bound
    between the solid and their hull (max over many directions of support gap, plus margin)."""
    u = np.linspace(0, 2 * np.pi, 2 * resolution, endpoint=False)
    if shape.kind == K.ELLIPSOID:
        v = np.linspace(0, np.pi, resolution + 1)
        uu, vv = np.meshgrid(u, v)
        unit = np.stack([np.cos(uu) * np.sin(vv), np.sin(uu) * np.sin(vv), np.cos(vv)], -1).reshape(-1, 3)
        points = unit * shape.radii
    else:
        ring = np.stack([np.cos(u), np.sin(u), np.zeros_like(u)], -1) * shape.radius
        half = 0.5 * shape.length
        if shape.kind == K.CYLINDER:
            points = np.concatenate([ring + [0, 0, -half], ring + [0, 0, half]])
        else:
            points = np.concatenate([ring + [0, 0, -half], [[0, 0, half]]])
    directions = np.random.default_rng(0).normal(size=(20000, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    from touche._kernels.narrow.pair_closed import support

    kind, params, pts = shape._packed[:3]
    exact = np.array([d @ support(kind, params, pts, d) for d in directions])
    hull = (directions @ points.T).max(1)
    bound = (exact - hull).max() * 1.05 + 1e-12
    return tc.ConvexPolyhedron(points), bound


@pytest.mark.slow
@pytest.mark.parametrize("smooth", ["Cylinder", "Cone", "Ellipsoid"])
@pytest.mark.parametrize("partner", ["Segment", "Capsule", "Triangle", "Box", "ConvexPolyhedron", "Cylinder", "Cone", "Ellipsoid"])
def test_smooth_solid_within_tessellation_error_of_its_hull(smooth, partner):
    shape = PARTNERS[smooth]
    hull, bound = _inscribed_hull(shape)
    other = PARTNERS[partner]
    other_hull, other_bound = (other, 0.0)
    if other.kind in (K.CYLINDER, K.CONE, K.ELLIPSOID):
        other_hull, other_bound = _inscribed_hull(other)
    rng = np.random.default_rng(hash((smooth, partner)) % 2**32)
    Ta, Tb = _poses(rng, 120, 1.0)
    exact = tc.distance(shape, Ta, other, Tb)
    approx = tc.distance(hull, Ta, other_hull, Tb)
    # every pose converges (2,880 over the parametrisation; EPA between two curved solids used
    # to stop at MAX_ITERATIONS on some cone / cylinder rims before the EPA face-normal fix)
    converged = exact.status <= tc.Status.PENETRATING
    assert converged.all(), np.bincount(exact.status)
    gap = np.abs(exact.signed_distance - approx.signed_distance)[converged]
    assert gap.max() <= bound + other_bound + 1e-9, (gap.max(), bound, other_bound)
    # the inscribed hull is inside the solid: never farther apart
    assert (exact.signed_distance <= approx.signed_distance + 1e-9)[converged].all()
    separated = (exact.signed_distance > 1e-9) & converged
    assert 0.05 <= separated.mean() <= 0.97
    # witness points: distance == |pb - pa| and the points are on the shapes (support test)
    d = exact.point_b[separated] - exact.point_a[separated]
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), exact.signed_distance[separated], atol=1e-9)
    # reversed pair: same signed distance, flipped normal
    reverse = tc.distance(other, Tb, shape, Ta)
    both = converged & (reverse.status <= tc.Status.PENETRATING)
    np.testing.assert_allclose(reverse.signed_distance[both], exact.signed_distance[both], atol=1e-9)
    # signed_distance verb agrees
    np.testing.assert_allclose(tc.signed_distance(shape, Ta, other, Tb), exact.signed_distance, atol=0)


@pytest.mark.parametrize("smooth", ["Cylinder", "Cone", "Ellipsoid"])
@pytest.mark.parametrize("linear", ["Ray", "Line"])
def test_ray_and_line_against_smooth_solid_equal_a_long_segment(smooth, linear):
    shape = PARTNERS[smooth]
    rng = np.random.default_rng(5)
    origin = np.array([0.1, -2.0, 0.3])
    direction = np.array([0.05, 1.0, -0.1])
    unbounded = tc.Ray(origin, direction) if linear == "Ray" else tc.Line(origin, direction)
    unit = direction / np.linalg.norm(direction)
    start = origin if linear == "Ray" else origin - 50 * unit
    segment = tc.Segment(start, origin + 50 * unit)
    Ta, Tb = _poses(rng, 200, 1.5)
    got = tc.distance(unbounded, Ta, shape, Tb)
    want = tc.distance(segment, Ta, shape, Tb)
    separated = want.signed_distance > 1e-9
    assert 0.2 <= separated.mean() <= 0.95
    # both sides run GJK on a curved solid (measured: 1.3e-12 apart; before the sub-algorithm
    # fix the 100-long segment made GJK stall at ~1e-7)
    np.testing.assert_allclose(got.signed_distance[separated], want.signed_distance[separated], atol=1e-9)
    # witness points on a curved surface are only first-order accurate (measured 1.6e-6)
    np.testing.assert_allclose(got.point_b[separated], want.point_b[separated], atol=1e-5)
    # overlapping: PENETRATING with an unknown (NaN) depth, like rays through polytopes
    overlapping = want.signed_distance < -1e-9
    assert (got.status[overlapping] == tc.Status.PENETRATING).all()
    assert np.isnan(got.signed_distance[overlapping]).all()
    np.testing.assert_array_equal(tc.intersects(unbounded, Ta, shape, Tb)[separated | overlapping], overlapping[separated | overlapping])


def test_ray_behind_the_shape_keeps_its_origin_nearest():
    ray = tc.Ray([0.0, 0.0, 3.0], [0.0, 0.0, 1.0])  # pointing away from the ellipsoid
    result = tc.distance(ray, None, tc.Ellipsoid([1.0, 1.0, 2.0]), None)
    assert result.status == tc.Status.SEPARATED
    assert result.signed_distance == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(result.point_a, [0, 0, 3], atol=1e-12)


@pytest.mark.parametrize("smooth", ["Cylinder", "Cone", "Ellipsoid"])
def test_smooth_solid_vs_mesh_is_the_nearest_triangle(smooth):
    shape = PARTNERS[smooth]
    rng = np.random.default_rng(3)
    vertices = rng.normal(size=(9, 3)) * 0.8
    faces = np.array([[0, 1, 2], [1, 2, 3], [3, 4, 5], [5, 6, 7], [6, 7, 8], [0, 4, 8], [2, 2, 5]])  # + a zero-area one
    mesh = tc.TriangleMesh(vertices, faces)
    Ta, Tb = _poses(rng, 80, 1.2)
    got = tc.distance(shape, Ta, mesh, Tb)
    per_triangle = np.array([
        tc.distance(shape, Ta, tc.Triangle(*vertices[f]) if f[0] != f[1] else tc.Segment(vertices[f[0]], vertices[f[2]]), Tb).signed_distance
        for f in faces
    ])
    nearest = per_triangle.min(0)
    apart = nearest > 0
    np.testing.assert_allclose(got.signed_distance[apart], nearest[apart], atol=1e-9)
    # depths come from EPA on a curved solid: the 1e-6 relative target
    np.testing.assert_allclose(got.signed_distance[~apart], nearest[~apart], atol=1e-6)
    hits = tc.intersects(shape, Ta, mesh, Tb)
    clear = np.abs(per_triangle.min(0)) > 1e-9
    np.testing.assert_array_equal(hits[clear], (per_triangle.min(0) <= 0)[clear])


@pytest.mark.parametrize("smooth", ["Cylinder", "Cone", "Ellipsoid"])
@pytest.mark.parametrize("plane", ["Plane", "HalfSpace"])
def test_smooth_solid_vs_plane_uses_the_support_function(smooth, plane):
    shape = PARTNERS[smooth]
    flat = tc.Plane([0, 0, 1], 0.0) if plane == "Plane" else tc.HalfSpace([0, 0, 1], 0.0)
    rng = np.random.default_rng(8)
    Ta, _ = _poses(rng, 100, 0.0)
    Ta[:, 2, 3] = rng.uniform(-1.0, 1.0, 100)
    got = tc.distance(shape, Ta, flat, None)
    hull, bound = _inscribed_hull(shape, resolution=48)
    want = tc.distance(hull, Ta, flat, None)
    assert np.abs(got.signed_distance - want.signed_distance).max() <= bound + 1e-9


@pytest.mark.slow
def test_separated_polytope_pairs_use_gjk_and_match_the_enumeration_engine():
    from touche._kernels.narrow.pairs import engine_pair_distance

    rng = np.random.default_rng(21)
    names = ["Triangle", "Tetrahedron", "Box", "ConvexPolygon", "ConvexPolyhedron"]
    checked = 0
    for i, a in enumerate(names):
        for b in names[i:]:
            A, B = PARTNERS[a], PARTNERS[b]
            Ta, Tb = _poses(rng, 60, 2.0)
            for k in range(len(Ta)):
                fast = engine_answer(A, Ta[k], B, Tb[k], False, 1e-12)  # what tc.distance runs
                oracle = engine_pair_distance(*A._packed, Ta[k], *B._packed, Tb[k], 1e-12)
                assert fast[4] == oracle[4], (a, b, k)
                assert abs(fast[0] - oracle[0]) <= REL * 4, (a, b, k, fast[0], oracle[0])
                if fast[4] == tc.Status.SEPARATED:
                    checked += 1
                    np.testing.assert_allclose(fast[2] - fast[1], oracle[2] - oracle[1], atol=1e-8)
    assert checked >= 300


def test_ellipsoid_raycast_matches_the_sphere_case_and_a_scaled_sphere():
    rng = np.random.default_rng(2)
    origins = rng.uniform(-3, 3, (500, 3))
    directions = -origins + rng.normal(size=(500, 3))  # aimed near the centre: hits and misses
    sphere = tc.raycast(tc.Sphere(0.8), None, origins, directions)
    round_ellipsoid = tc.raycast(tc.Ellipsoid([0.8] * 3), None, origins, directions)
    np.testing.assert_array_equal(round_ellipsoid.hit, sphere.hit)
    np.testing.assert_allclose(round_ellipsoid.t[sphere.hit], sphere.t[sphere.hit], atol=1e-12)
    np.testing.assert_allclose(round_ellipsoid.normal[sphere.hit], sphere.normal[sphere.hit], atol=1e-9)
    # a stretched ellipsoid: hit points satisfy the implicit equation, normals are its gradient
    radii = np.array([1.5, 0.5, 0.8])
    pose = tc.Pose.random(seed=4)
    result = tc.raycast(tc.Ellipsoid(radii), pose, origins, directions)
    assert 0.1 <= result.hit.mean() <= 0.9
    matrix = np.eye(4) if pose is None else pose.matrix
    entering = result.hit & (result.t > 0)  # t == 0: the origin is inside (solid), no surface point
    assert entering.sum() >= 0.8 * result.hit.sum()
    local = (result.point[entering] - matrix[:3, 3]) @ matrix[:3, :3]
    np.testing.assert_allclose(((local / radii) ** 2).sum(1), 1.0, atol=1e-9)
    gradient = (local / radii**2) @ matrix[:3, :3].T
    gradient /= np.linalg.norm(gradient, axis=1)[:, None]
    np.testing.assert_allclose(result.normal[entering], gradient, atol=1e-9)
    inside = result.hit & (result.t == 0)
    assert (((((origins[inside] - matrix[:3, 3]) @ matrix[:3, :3]) / radii) ** 2).sum(1) <= 1.0 + 1e-12).all()
    # misses never come within the ellipsoid: the closest approach of the ray is outside
    distances = tc.distance(tc.Ray(origins[0], directions[0]), None, tc.Ellipsoid(radii), pose)
    assert (distances.signed_distance > 0) == (not result.hit[0])


def test_closest_point_on_an_ellipsoid():
    ellipsoid = tc.Ellipsoid([2.0, 1.0, 0.5])
    result = tc.closest_point(ellipsoid, None, [[5.0, 0, 0], [0, 3.0, 0], [0.1, 0.1, 0.1]])
    np.testing.assert_allclose(result.point[:2], [[2.0, 0, 0], [0, 1.0, 0]], atol=1e-6)  # see the witness note above
    np.testing.assert_allclose(result.distance[:2], [3.0, 2.0], atol=1e-9)
    assert result.status[2] == tc.Status.PENETRATING


def test_non_convergence_is_a_status_not_a_silent_answer():
    assert tc.Status.MAX_ITERATIONS == K.GJK_MAX_ITERATIONS
    assert tc.Status.DEGENERATE == K.GJK_DEGENERATE
