"""The hull prefix of the mesh time of impact: the hull's slack (how far a mesh vertex reaches
outside the hull's facet planes) is the maximum over every (facet, vertex) pair, computed by the
pruned kernel of touche/_kernels/primitives/hull.py in a fraction of the old facets x vertices loop
(issue 23, finding 15: 15-22 s for an 82k-triangle sphere)."""

import numpy as np
import pytest
from scipy.spatial import ConvexHull

import touche as tc
from touche import impact


def every_pair(equations, points):
    """max(0, n . p + d) over every pair, elementwise in the kernel's order (no BLAS)."""
    a, b, c, d = (equations[:, k][:, None] for k in range(4))
    x, y, z = (points[:, k][None, :] for k in range(3))
    return max(0.0, float((((a * x + b * y) + c * z) + d).max()))


def blas_loop(equations, points):
    """The old computation (touche/impact.py before issue 23), for comparison."""
    slack = 0.0
    for lo in range(0, len(points), 1024):
        chunk = points[lo:lo + 1024]
        slack = max(slack, float((equations[:, :3] @ chunk.T + equations[:, 3:]).max()))
    return slack


def point_sets():
    rng = np.random.default_rng(23)
    for trial in range(30):
        n = int(rng.integers(4, 2500))
        points = rng.normal(size=(n, 3)) * 10.0 ** rng.uniform(-4, 4)
        if trial % 3 == 0:  # every point on a sphere: all of them on the hull, values near 0
            points /= np.linalg.norm(points, axis=1)[:, None]
        if trial % 4 == 1:  # far from the origin: larger rounding
            points += rng.normal(size=3) * 10.0 ** rng.uniform(2, 7)
        yield points


@pytest.mark.parametrize("points", list(point_sets()))
def test_slack_is_the_maximum_over_every_pair(points):
    hull = ConvexHull(points)
    fast = impact._hull_slack(hull.equations, points)
    assert fast == every_pair(hull.equations, points)
    # the old BLAS loop sums in its own order: equal within rounding of the coordinates
    assert abs(fast - blas_loop(hull.equations, points)) <= 4e-16 * np.abs(points).max()


def test_hull_packing_matches_the_old_adjacency():
    from touche.cli import _uv_sphere

    vertices, faces = _uv_sphere(3000)
    mesh = tc.TriangleMesh(vertices, faces)
    kind, params, hull_vertices, slack = impact._pack_hull(mesh)
    points = vertices[np.unique(faces)]
    hull = ConvexHull(points)
    assert np.array_equal(hull_vertices, points[hull.vertices])
    # CSR adjacency: each hull vertex's neighbours, ascending, from the hull's triangles
    count = len(hull.vertices)
    local = np.full(len(points), -1)
    local[hull.vertices] = np.arange(count)
    expected = [set() for _ in range(count)]
    for tri in local[hull.simplices]:
        for i in range(3):
            expected[tri[i]].add(tri[(i + 1) % 3])
            expected[tri[(i + 1) % 3]].add(tri[i])
    starts = params[4:4 + count + 1].astype(int)
    neighbours = params[4 + count + 1:].astype(int)
    assert params[0] == count
    for v in range(count):
        assert list(neighbours[starts[v]:starts[v + 1]]) == sorted(expected[v])
    assert slack == 2.0 * every_pair(hull.equations, points)


@pytest.mark.slow
def test_slack_of_a_fine_sphere_is_rounding_only():
    # Every vertex of this sphere is a hull vertex: no point lies off the hull by more than the
    # rounding of Qhull's plane equations (the time of this ~82k-facet case, once 15-20 s, is
    # measured by benchmarks/bench_first_toi.py, not here)
    from touche.cli import _uv_sphere

    vertices, faces = _uv_sphere(82_000)
    points = vertices[np.unique(faces)]
    hull = ConvexHull(points)
    slack = impact._hull_slack(hull.equations, points)
    assert 0.0 <= slack <= 1e-12 * np.abs(points).max()
    some = np.random.default_rng(3).choice(len(hull.equations), 200, replace=False)
    part = impact._hull_slack(hull.equations[some], points)
    assert part == every_pair(hull.equations[some], points) and part <= slack  # a max over more facets
