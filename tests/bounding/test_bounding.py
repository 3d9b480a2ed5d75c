"""touche.bounding: every fit contains its input, against slow references and peers."""
import numpy as np
import pytest

from touche import bounding as bv
from touche._kernels import bounding as kb
from touche._kernels import bounding_obb as kbo
from touche.errors import GeometryError

from naive import bounding as naive


def _rotated(rng, points):
    return points @ naive.random_rotation(rng).T


def _clouds():
    rng = np.random.default_rng(20261122)
    out = {
        "gaussian": rng.normal(size=(80, 3)) * [3.0, 1.0, 0.4],
        "uniform": rng.uniform(-1, 1, size=(80, 3)) * [1.0, 2.0, 0.5] + [5.0, -2.0, 1.0],
        "flat": _rotated(rng, np.column_stack([rng.uniform(-2, 2, (50, 2)), np.zeros(50)])) + 1.0,
        "collinear": rng.uniform(-3, 3, (30, 1)) * np.array([[0.3, -0.5, 0.8]]) + [1.0, 2.0, 3.0],
        "single": np.array([[1.5, -2.0, 0.25]]),
        "duplicates": np.repeat(rng.normal(size=(5, 3)), 7, axis=0),
        "two": np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]),
        "tiny": rng.normal(size=(60, 3)) * 1e-6,
        "huge": rng.normal(size=(60, 3)) * 1e6,
        "far_offset": rng.normal(size=(60, 3)) + 1e4,
        "sphere_surface": (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(rng.normal(size=(60, 3))),
    }
    return out


CLOUDS = _clouds()


def _tol(points):
    return 1e-9 * (np.abs(points).max() + np.ptp(points, axis=0).max())


POINT_FITS = [
    bv.aabb, bv.sphere_ritter, bv.sphere_iterative, bv.sphere_welzl, bv.sphere_pca, bv.obb_pca,
    bv.obb_hull_pca, bv.obb_min_volume, lambda p: bv.obb_brute_force(p, steps=5, refine_rounds=3),
    bv.capsule, bv.lozenge,
] + [lambda p, k=k: bv.kdop(p, k) for k in (6, 8, 14, 18, 26)]


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
@pytest.mark.parametrize("fit", range(len(POINT_FITS)))
def test_fit_contains_every_point(cloud, fit):
    points = CLOUDS[cloud]
    volume = POINT_FITS[fit](points)
    tol = _tol(points)
    assert volume.contains(points, tolerance=tol).all()
    assert np.isfinite(volume.volume()) and volume.volume() >= 0
    # contains() is not vacuous: a point well outside is rejected
    far = points.mean(axis=0) + 10.0 * (np.ptp(points, axis=0).max() + 1.0)
    assert not volume.contains(far, tolerance=tol)[0]


def _check_independent_containment(volume, points, tol):
    """Re-check containment with the naive distance functions (not the types' own contains)."""
    if isinstance(volume, bv.Sphere):
        assert (np.linalg.norm(points - volume.center, axis=1) <= volume.radius + tol).all()
    elif isinstance(volume, bv.OBB):
        assert np.allclose(volume.axes @ volume.axes.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(volume.axes) > 0
        local = (points - volume.center) @ volume.axes.T
        assert (np.abs(local) <= volume.half_extents + tol).all()
    elif isinstance(volume, bv.Capsule):
        assert (naive.segment_distance(points, volume.p0, volume.p1) <= volume.radius + tol).all()
    elif isinstance(volume, bv.Lozenge):
        assert np.allclose(volume.axes @ volume.axes.T, np.eye(3), atol=1e-12)
        assert (volume.lengths >= 0).all()
        d = naive.rectangle_distance(points, volume.origin, volume.axes, volume.lengths)
        assert (d <= volume.radius + tol).all()


@pytest.mark.parametrize("cloud", ["gaussian", "flat", "collinear", "duplicates", "huge", "far_offset"])
def test_containment_by_naive_distances(cloud):
    points = CLOUDS[cloud]
    tol = _tol(points)
    for fit in (bv.sphere_ritter, bv.sphere_welzl, bv.obb_pca, bv.obb_hull_pca, bv.obb_min_volume,
                bv.capsule, bv.lozenge):
        _check_independent_containment(fit(points), points, tol)


# ---------------------------------------------------------------------------------------------
# spheres
def test_welzl_matches_brute_force_minimum_sphere():
    rng = np.random.default_rng(7)
    kinds_of_support = set()
    for trial in range(40):
        n = int(rng.integers(2, 10))
        points = rng.normal(size=(n, 3)) * rng.uniform(0.2, 2.0, size=3)
        if trial % 5 == 0:
            points[:, 2] = 0.0  # coplanar: circle support sets
        center, radius = naive.min_sphere(points)
        on_boundary = np.sum(np.abs(np.linalg.norm(points - center, axis=1) - radius) < 1e-7 * radius)
        kinds_of_support.add(int(min(on_boundary, 4)))
        for seed in (0, 3):
            ball = bv.sphere_welzl(points, seed=seed)
            assert ball.radius == pytest.approx(radius, rel=1e-9, abs=1e-12)
            assert np.allclose(ball.center, center, atol=1e-7 * radius)
    assert kinds_of_support >= {2, 3, 4}  # the test reached every support size


def test_sphere_heuristics_are_no_smaller_than_welzl_and_iteration_helps():
    rng = np.random.default_rng(11)
    ratios_ritter, ratios_iter = [], []
    for _ in range(10):
        points = rng.uniform(-1, 1, size=(200, 3)) * rng.uniform(0.3, 2.0, size=3)
        exact = bv.sphere_welzl(points).radius
        ritter = bv.sphere_ritter(points).radius
        iterative = bv.sphere_iterative(points, iterations=16).radius
        pca = bv.sphere_pca(points).radius
        for r in (ritter, iterative, pca):
            assert r >= exact * (1 - 1e-12)
        assert iterative <= ritter * (1 + 1e-12)
        ratios_ritter.append(ritter / exact)
        ratios_iter.append(iterative / exact)
    assert np.mean(ratios_iter) < np.mean(ratios_ritter)
    assert max(ratios_ritter) < 1.35


def test_welzl_agrees_with_trimesh_minimum_nsphere():
    nsphere = pytest.importorskip("trimesh.nsphere")
    rng = np.random.default_rng(5)
    ratios = []
    for _ in range(5):
        points = rng.normal(size=(300, 3)) * rng.uniform(0.5, 2.0, size=3)
        center, radius = nsphere.minimum_nsphere(points)
        assert np.linalg.norm(points - center, axis=1).max() <= radius * (1 + 1e-9)
        ours = bv.sphere_welzl(points)
        assert ours.contains(points, tolerance=0.0).all()
        # trimesh searches the furthest-site Voronoi vertices only (>= 4-point supports), so it
        # can be larger when the optimum has 2 or 3 support points; never smaller than exact
        assert ours.radius <= radius * (1 + 1e-12)
        ratios.append(ours.radius / radius)
    assert min(ratios) < 0.99 and max(ratios) > 1 - 1e-9  # both cases occurred


def test_welzl_large_cocircular_and_cospherical_sets_terminate():
    t = np.linspace(0, 2 * np.pi, 500, endpoint=False)
    circle = np.column_stack([np.cos(t), np.sin(t), np.zeros_like(t)]) * 1e3
    ball = bv.sphere_welzl(circle)
    assert ball.radius == pytest.approx(1e3, rel=1e-9)
    fib = CLOUDS["sphere_surface"]
    assert bv.sphere_welzl(fib).radius <= 1.0 + 1e-9


# ---------------------------------------------------------------------------------------------
# AABB, Arvo
def test_aabb_rotated_equals_aabb_of_rotated_corners():
    rng = np.random.default_rng(3)
    for _ in range(20):
        points = rng.normal(size=(40, 3)) * rng.uniform(0.1, 3, size=3)
        box = bv.aabb(points)
        rotation = naive.random_rotation(rng)
        translation = rng.normal(size=3) * 5
        moved = bv.aabb_rotated(box, rotation, translation)
        corners = box.corners() @ rotation.T + translation
        assert np.allclose(moved.min, corners.min(axis=0), atol=1e-12 * 10)
        assert np.allclose(moved.max, corners.max(axis=0), atol=1e-12 * 10)
        assert moved.contains(points @ rotation.T + translation).all()
        assert moved.volume() >= bv.aabb(points @ rotation.T + translation).volume() * (1 - 1e-12)


# ---------------------------------------------------------------------------------------------
# OBBs
def test_obb_min_volume_beats_pca_and_matches_brute_force():
    rng = np.random.default_rng(17)
    gaps = []
    for trial in range(6):
        points = rng.normal(size=(25, 3)) * rng.uniform(0.3, 2.0, size=3)
        points = points @ naive.random_rotation(rng).T
        best = bv.obb_min_volume(points)
        for other in (bv.obb_pca(points), bv.obb_hull_pca(points)):
            assert best.volume() <= other.volume() * (1 + 1e-12)
        brute = bv.obb_brute_force(points, steps=14, refine_rounds=10)
        assert best.volume() <= brute.volume() * 1.03
        sampled = naive.min_box_by_random_search(points, rng, samples=3000)
        assert best.volume() <= sampled * 1.0001
        gaps.append(best.volume() / min(bv.obb_pca(points).volume(), bv.obb_hull_pca(points).volume()))
    assert min(gaps) < 0.97  # the optimisation does improve on PCA somewhere


def test_obb_min_volume_recovers_a_rotated_box_exactly():
    rng = np.random.default_rng(23)
    rotation = naive.random_rotation(rng)
    half = np.array([3.0, 1.0, 0.5])
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
    inside = rng.uniform(-1, 1, size=(200, 3)) * half
    points = np.concatenate([corners, inside]) @ rotation.T + [1.0, 2.0, 3.0]
    best = bv.obb_min_volume(points)
    assert best.volume() == pytest.approx(8 * np.prod(half), rel=1e-9)
    assert np.allclose(np.sort(best.half_extents), np.sort(half), rtol=1e-9)


def test_obb_min_volume_against_trimesh_oriented_bounds():
    bounds = pytest.importorskip("trimesh.bounds")
    rng = np.random.default_rng(29)
    for _ in range(3):
        points = rng.normal(size=(200, 3)) * rng.uniform(0.3, 2.0, size=3)
        _transform, extents = bounds.oriented_bounds(points)
        ours = bv.obb_min_volume(points).volume()
        assert ours <= np.prod(extents) * 1.02


def test_obb_flat_input_has_zero_thickness_and_min_area_rectangle():
    rng = np.random.default_rng(31)
    rect = np.column_stack([rng.uniform(-2, 2, 100), rng.uniform(-0.5, 0.5, 100), np.zeros(100)])
    rect = np.concatenate([rect, [[-2, -0.5, 0], [2, -0.5, 0], [2, 0.5, 0], [-2, 0.5, 0]]])
    rotation = naive.random_rotation(rng)
    points = rect @ rotation.T
    box = bv.obb_min_volume(points)
    h = np.sort(box.half_extents)
    assert h[0] <= 1e-9
    assert h[1] * h[2] * 4 == pytest.approx(4.0, rel=1e-6)


def test_obb_pca_ignores_nothing_but_hull_pca_ignores_interior_clusters():
    rng = np.random.default_rng(37)
    half = np.array([2.0, 1.0, 0.5])
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
    cluster = rng.normal(size=(400, 3)) * 0.05 + [1.0, 0.5, 0.0] + rng.normal(size=3) * 0.01
    cluster[:, :2] += rng.normal(size=(400, 1)) * [0.8, 0.8]  # a diagonal interior streak
    cluster = np.clip(cluster, -half, half)
    points = np.concatenate([corners, cluster])
    hull_box = bv.obb_hull_pca(points)
    assert hull_box.volume() == pytest.approx(8 * np.prod(half), rel=1e-6)
    assert bv.obb_pca(points).volume() > hull_box.volume() * 1.05


# ---------------------------------------------------------------------------------------------
# the BVH kernels
def _mesh(rng, n_vertices=40, n_triangles=60, scale=1.0, offset=0.0):
    vertices = rng.normal(size=(n_vertices, 3)) * rng.uniform(0.2, 2.0, size=3) * scale + offset
    triangles = rng.integers(0, n_vertices, size=(n_triangles, 3)).astype(np.int64)
    return vertices, triangles


def test_triangle_covariance_matches_quadrature():
    rng = np.random.default_rng(41)
    for _ in range(4):
        vertices, triangles = _mesh(rng, 10, 6)
        ids = np.arange(triangles.shape[0], dtype=np.int64)
        cov = kb.triangle_covariance(vertices, triangles, ids)
        reference = naive.surface_covariance_by_quadrature(vertices, triangles, subdivisions=24)
        assert np.allclose(cov, reference, rtol=2e-2, atol=2e-3 * np.abs(reference).max())
    # a single triangle has a non-zero covariance (the seed S1 formula gives 0 here)
    one = np.array([[0, 1, 2]], dtype=np.int64)
    tri = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    cov = kb.triangle_covariance(tri, one, np.array([0], dtype=np.int64))
    reference = naive.surface_covariance_by_quadrature(tri, one, subdivisions=40)
    assert np.allclose(cov, reference, atol=1e-3 * np.abs(reference).max())
    assert np.abs(cov).max() > 0.01


@pytest.mark.parametrize("case", ["random", "subset", "zero_area", "one_point", "collinear", "tiny", "huge",
                                  "far", "regular"])
def test_bvh_kernels_frame_obb_rss(case):
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    vertices, triangles = _mesh(rng)
    ids = np.arange(triangles.shape[0], dtype=np.int64)
    if case == "subset":
        ids = np.sort(rng.choice(triangles.shape[0], 17, replace=False)).astype(np.int64)
    elif case == "zero_area":
        triangles[:, 2] = triangles[:, 1]
    elif case == "one_point":
        vertices[:] = [1.0, 2.0, 3.0]
    elif case == "collinear":
        vertices = rng.uniform(-1, 1, (40, 1)) * np.array([[1.0, 2.0, -0.5]])
    elif case == "tiny":
        vertices *= 1e-6
    elif case == "huge":
        vertices *= 1e6
    elif case == "far":
        vertices += 1e5
    elif case == "regular":  # isotropic: the cube's surface
        vertices = np.array([[x, y, z] for x in (-1.0, 1) for y in (-1.0, 1) for z in (-1.0, 1)])
        triangles = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                              [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], dtype=np.int64)
        ids = np.arange(12, dtype=np.int64)
    vertices = np.ascontiguousarray(vertices)
    axes = kb.triangle_covariance_frame(vertices, triangles, ids)
    assert np.isfinite(axes).all()
    assert np.allclose(axes @ axes.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(axes) == pytest.approx(1.0, abs=1e-12)
    corners = vertices[triangles[ids].ravel()]
    tol = _tol(corners)
    center, half = kb.fit_obb_in_frame(vertices, triangles, ids, axes)
    local = (corners - center) @ axes.T
    assert (np.abs(local) <= half + tol).all()
    # tight: every face of the box is touched
    assert np.allclose(np.abs(local).max(axis=0), half, atol=tol)
    origin, lengths, radius = kb.fit_rss_in_frame(vertices, triangles, ids, axes)
    assert (lengths >= 0).all() and radius >= 0
    d = naive.rectangle_distance(corners, origin, axes, lengths)
    assert (d <= radius + tol).all()
    # radius = half the spread along the normal; the rectangle is no larger than the box face
    assert radius == pytest.approx(half[2], abs=tol)
    assert (lengths <= 2 * half[:2] + tol).all()
    if case == "random":
        assert (d >= radius - tol).any()  # something touches the swept surface


def test_bvh_frame_follows_the_long_axis_of_a_mesh():
    rng = np.random.default_rng(43)
    vertices, triangles = _mesh(rng, 60, 100)
    vertices = np.ascontiguousarray(vertices * [10.0, 1.0, 0.1])
    axes = kb.triangle_covariance_frame(vertices, triangles, np.arange(100, dtype=np.int64))
    assert abs(axes[0, 0]) > 0.99 and abs(axes[2, 2]) > 0.99


def test_rss_shrinks_rectangle_at_rounded_corners():
    # points on a flat disc of radius 1 plus its two poles at z = +-0.5: the radius is 0.5 and
    # the rectangle must shrink below the disc's bounding square (2 x 2) while holding the disc
    t = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    points = np.concatenate([np.column_stack([np.cos(t), np.sin(t), np.zeros_like(t)]),
                             [[0, 0, 0.5], [0, 0, -0.5]]])
    origin, lengths, radius = kb.rss_fit_spheres(np.ascontiguousarray(points), np.zeros(len(points)), np.eye(3))
    assert radius == pytest.approx(0.5)
    assert (lengths < 2.0 - 0.5).all()
    assert (naive.rectangle_distance(points, origin, np.eye(3), lengths) <= radius + 1e-12).all()


# ---------------------------------------------------------------------------------------------
# k-DOPs
def test_kdop_directions_and_naive_extents():
    rng = np.random.default_rng(47)
    points = rng.normal(size=(50, 3))
    counts = {6: 3, 8: 4, 14: 7, 18: 9, 26: 13}
    for k, half in counts.items():
        dop = bv.kdop(points, k)
        assert dop.directions.shape == (half, 3)
        unit = dop.directions / np.linalg.norm(dop.directions, axis=1, keepdims=True)
        assert np.abs(unit @ unit.T - np.eye(half)).max() < 0.99  # no repeated / opposite direction
        lo, hi = naive.kdop_extents(points, dop.directions)
        assert np.allclose(dop.min, lo) and np.allclose(dop.max, hi)
    # the 8-DOP has no axis direction (Ericson ComputeDOP8 erratum: max must be updated too)
    dop8 = bv.kdop(points, 8)
    assert (np.abs(bv.KDOP_DIRECTIONS[8]).sum(axis=1) == 3).all()
    assert (dop8.max > dop8.min).all()
    # volumes: more slabs -> tighter (26 within 18 within 6; 14 within 6), all >= hull volume
    from scipy.spatial import ConvexHull

    hull_volume = ConvexHull(points).volume
    v = {k: bv.kdop(points, k).volume() for k in counts}
    assert hull_volume <= v[26] <= v[18] <= v[6] and v[14] <= v[6]
    assert v[6] == pytest.approx(bv.aabb(points).volume())


def test_kdop_2d_example_from_seed_notes():
    # SEED-NOTES check 3: 8-DOP (2D) of (3,1), (5,4), (1,5) on (1,0), (0,1), (1,1), (1,-1)
    points = np.array([[3.0, 1, 0], [5, 4, 0], [1, 5, 0]])
    dop = bv.kdop(points, 18)
    dirs = [tuple(d) for d in dop.directions]
    pick = [dirs.index(d) for d in [(1, 0, 0), (0, 1, 0), (1, 1, 0), (1, -1, 0)]]
    assert np.allclose(dop.min[pick], [1, 1, 4, -4]) and np.allclose(dop.max[pick], [5, 5, 9, 2])


# ---------------------------------------------------------------------------------------------
# capsules and lozenges
def test_capsule_and_lozenge_quality_on_a_cylinder_and_a_slab():
    rng = np.random.default_rng(53)
    t = rng.uniform(0, 2 * np.pi, 400)
    z = rng.uniform(-3, 3, 400)
    cyl = np.column_stack([np.cos(t), np.sin(t), z]) @ naive.random_rotation(rng).T
    cap = bv.capsule(cyl)
    assert cap.radius == pytest.approx(1.0, rel=1e-2)
    assert cap.volume() <= np.pi * 6 + 4 / 3 * np.pi * 1.01 + 0.1
    slab = np.column_stack([rng.uniform(-2, 2, 400), rng.uniform(-1, 1, 400), rng.uniform(-0.1, 0.1, 400)])
    loz = bv.lozenge(slab @ naive.random_rotation(rng).T)
    assert loz.radius == pytest.approx(0.1, rel=0.05)
    assert loz.volume() <= 2 * 4 * 2 * 0.1 * 1.1 + np.pi * 0.01 * 6 + 0.01


def test_swept_volume_formulas():
    cap = bv.Capsule(np.zeros(3), np.array([0, 0, 2.0]), 1.0)
    rng = np.random.default_rng(59)
    samples = rng.uniform(-1, 1, size=(200000, 3)) * [1, 1, 2] + [0, 0, 1]
    inside = cap.contains(samples, tolerance=0).mean() * 2 * 2 * 4
    assert cap.volume() == pytest.approx(inside, rel=2e-2)
    loz = bv.Lozenge(np.zeros(3), np.eye(3), np.array([2.0, 1.0]), 0.5)
    samples = rng.uniform(0, 1, size=(200000, 3)) * [3, 2, 1] + [-0.5, -0.5, -0.5]
    inside = loz.contains(samples, tolerance=0).mean() * 6
    assert loz.volume() == pytest.approx(inside, rel=2e-2)


# ---------------------------------------------------------------------------------------------
# merging
def _pair(rng, fit):
    a = rng.normal(size=(30, 3)) * rng.uniform(0.2, 2, 3) + rng.normal(size=3) * 3
    b = rng.normal(size=(30, 3)) * rng.uniform(0.2, 2, 3) + rng.normal(size=3) * 3
    return a, b, fit(a), fit(b)


@pytest.mark.parametrize("fit", [bv.aabb, bv.sphere_welzl, bv.obb_min_volume, bv.obb_pca, bv.capsule, bv.lozenge,
                                 lambda p: bv.kdop(p, 14)])
def test_merge_contains_both_inputs(fit):
    rng = np.random.default_rng(61)
    for _ in range(6):
        a, b, va, vb = _pair(rng, fit)
        merged = bv.merge(va, vb)
        assert type(merged) is type(va)
        for v in (va, vb):
            # the whole input volume, sampled on its boundary-defining features
            if isinstance(v, bv.Sphere):
                d = rng.normal(size=(200, 3))
                sample = v.center + v.radius * d / np.linalg.norm(d, axis=1, keepdims=True)
            elif isinstance(v, (bv.OBB, bv.AABB)):
                sample = v.corners()
            elif isinstance(v, bv.Capsule):
                d = rng.normal(size=(200, 3))
                d /= np.linalg.norm(d, axis=1, keepdims=True)
                s = rng.uniform(0, 1, (200, 1))
                sample = v.p0 + s * (v.p1 - v.p0) + v.radius * d
            elif isinstance(v, bv.Lozenge):
                d = rng.normal(size=(200, 3))
                d /= np.linalg.norm(d, axis=1, keepdims=True)
                st = rng.uniform(0, 1, (200, 2)) * v.lengths
                sample = v.origin + st @ v.axes[:2] + v.radius * d
            else:
                sample = np.concatenate([a, b])
            assert merged.contains(sample, tolerance=1e-9 * 100).all()
        assert merged.contains(np.concatenate([a, b]), tolerance=1e-9 * 100).all()
        assert merged.volume() >= max(va.volume(), vb.volume()) * (1 - 1e-9)


def test_merge_spheres_is_exact_and_obb_merge_is_reasonable():
    rng = np.random.default_rng(67)
    for _ in range(10):
        s1 = bv.Sphere(rng.normal(size=3), float(rng.uniform(0.1, 2)))
        s2 = bv.Sphere(rng.normal(size=3) * 3, float(rng.uniform(0.1, 2)))
        m = bv.merge(s1, s2)
        far = [s1.center + s1.radius * (s1.center - m.center) / max(np.linalg.norm(s1.center - m.center), 1e-300),
               s2.center + s2.radius * (s2.center - m.center) / max(np.linalg.norm(s2.center - m.center), 1e-300)]
        d = np.linalg.norm(np.array(far) - m.center, axis=1)
        assert np.max(d) == pytest.approx(m.radius, rel=1e-9)  # touched: cannot be smaller
    # nested spheres: the larger one
    big, small = bv.Sphere(np.zeros(3), 2.0), bv.Sphere(np.array([0.5, 0, 0]), 1.0)
    assert bv.merge(small, big) is big
    # merging an OBB with itself is itself (up to round-off)
    box = bv.obb_min_volume(rng.normal(size=(30, 3)))
    same = bv.merge(box, box)
    assert same.volume() == pytest.approx(box.volume(), rel=1e-9)


def test_merge_rejects_mixed_kinds():
    points = CLOUDS["gaussian"]
    with pytest.raises(GeometryError):
        bv.merge(bv.aabb(points), bv.sphere_welzl(points))
    with pytest.raises(GeometryError):
        bv.merge(bv.kdop(points, 14), bv.kdop(points, 18))


# ---------------------------------------------------------------------------------------------
# conversions and bad input
def test_conversions_to_touche_shapes():
    import touche as tc

    points = CLOUDS["gaussian"]
    box, pose = bv.obb_min_volume(points).to_box()
    assert isinstance(box, tc.Box)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    local_corners = box.center + signs * box.half_extents
    world_corners = local_corners @ pose.matrix[:3, :3].T + pose.matrix[:3, 3]
    fitted = bv.obb_min_volume(points)
    assert np.allclose(np.sort(world_corners, axis=0), np.sort(fitted.corners(), axis=0))
    assert isinstance(bv.sphere_welzl(points).to_shape(), tc.Sphere)
    cap = bv.capsule(points).to_shape()
    assert isinstance(cap, tc.Capsule)
    assert isinstance(bv.aabb(points).to_shape(), tc.AABB)
    with pytest.raises(GeometryError):
        bv.sphere_welzl(CLOUDS["single"]).to_shape()


@pytest.mark.parametrize("bad", [np.zeros((0, 3)), np.zeros((4, 2)), [[0, 0, np.nan]], [[np.inf, 0, 0]],
                                 "abc", np.zeros((2, 3, 3))])
def test_bad_input_raises(bad):
    for fit in (bv.aabb, bv.sphere_welzl, bv.sphere_ritter, bv.obb_pca, bv.obb_min_volume, bv.capsule,
                bv.lozenge, lambda p: bv.kdop(p, 8)):
        with pytest.raises(GeometryError):
            fit(bad)


def test_bad_arguments_raise():
    points = CLOUDS["gaussian"]
    for k in (10, "14", [14], None):
        with pytest.raises(GeometryError):
            bv.kdop(points, k)
    with pytest.raises(GeometryError):
        bv.obb_triangles(points, np.array([[0, 1, 80]]))
    with pytest.raises(GeometryError):
        bv.obb_triangles(points, np.array([[0.0, 1, 2]]))
    with pytest.raises(GeometryError):
        bv.aabb_rotated(bv.aabb(points), np.full((3, 3), np.nan))
    with pytest.raises(GeometryError):
        bv.obb_brute_force(points, steps=0)
    for seed in (-1, 2**40, "x"):
        with pytest.raises(GeometryError):
            bv.sphere_welzl(points, seed=seed)
    with pytest.raises(GeometryError):
        bv.sphere_iterative(points, iterations=-1)


def test_obb_triangles_public_wrapper():
    rng = np.random.default_rng(71)
    vertices, triangles = _mesh(rng)
    box = bv.obb_triangles(vertices, triangles)
    used = vertices[np.unique(triangles)]
    assert box.contains(used, tolerance=_tol(used)).all()
    expected = kb.triangle_covariance_frame(vertices, triangles, np.arange(len(triangles), dtype=np.int64))
    assert np.allclose(box.axes, expected)


def test_min_area_rectangle_rotating_calipers_vs_all_directions():
    rng = np.random.default_rng(73)
    for trial in range(30):
        n = int(rng.integers(3, 40))
        xy = rng.normal(size=(n, 2)) * rng.uniform(0.2, 3, size=2)
        if trial % 6 == 0:
            xy = np.round(xy * 2) / 2  # ties in x and collinear hull points
        if trial % 6 == 1:
            t = rng.uniform(0, 2 * np.pi, n)
            xy = np.column_stack([np.cos(t), np.sin(t)])
        angle, area = kbo.min_area_rectangle(np.ascontiguousarray(xy))
        u = np.array([np.cos(angle), np.sin(angle)])
        box_area = np.ptp(xy @ u) * np.ptp(xy @ np.array([-u[1], u[0]]))
        assert box_area == pytest.approx(area, rel=1e-9, abs=1e-12)
        assert area == pytest.approx(naive.min_area_rectangle(xy), rel=1e-9, abs=1e-12)
    # degenerate: one point, collinear points
    assert kbo.min_area_rectangle(np.zeros((5, 2)))[1] == 0.0
    line = np.column_stack([np.linspace(0, 1, 7), np.linspace(0, 2, 7)])
    assert kbo.min_area_rectangle(line)[1] == pytest.approx(0.0, abs=1e-12)


def test_bvh_kernels_empty_ids_and_int_subsets():
    rng = np.random.default_rng(79)
    vertices, triangles = _mesh(rng)
    empty = np.zeros(0, dtype=np.int64)
    assert np.array_equal(kb.triangle_covariance_frame(vertices, triangles, empty), np.eye(3))
    center, half = kb.fit_obb_in_frame(vertices, triangles, empty, np.eye(3))
    assert (half == 0).all()
    origin, lengths, radius = kb.fit_rss_in_frame(vertices, triangles, empty, np.eye(3))
    assert radius == 0 and (lengths == 0).all()
    # one triangle, repeated ids: the same frame as the single id
    one = np.array([5], dtype=np.int64)
    again = np.array([5, 5, 5], dtype=np.int64)
    assert np.allclose(kb.triangle_covariance_frame(vertices, triangles, one),
                       kb.triangle_covariance_frame(vertices, triangles, again))


def test_welzl_on_a_lattice_with_many_cospherical_ties():
    grid = np.array([[x, y, z] for x in range(5) for y in range(5) for z in range(5)], dtype=float)
    for seed in range(3):
        ball = bv.sphere_welzl(grid, seed=seed)
        assert ball.radius == pytest.approx(2 * np.sqrt(3), rel=1e-12)
        assert np.allclose(ball.center, [2, 2, 2], atol=1e-9)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=60, deadline=None, derandomize=True)
@given(arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3)),
              elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)))
def test_property_every_fit_contains_its_points(points):
    tol = _tol(points) + 1e-300
    for fit in (bv.sphere_ritter, bv.sphere_iterative, bv.sphere_welzl, bv.sphere_pca, bv.obb_pca,
                bv.obb_hull_pca, bv.obb_min_volume, bv.capsule, bv.lozenge):
        volume = fit(points)
        assert volume.contains(points, tolerance=tol).all(), fit
        _check_independent_containment(volume, points, tol)
    if len(points) <= 7:
        center, radius = naive.min_sphere(points)
        assert bv.sphere_welzl(points).radius <= radius * (1 + 1e-7) + 1e-9
