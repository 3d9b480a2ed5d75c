"""BSP trees (touche.bsp, Ericson ch. 8) against the brute-force references of tests/naive/bsp.py
and touche's winding-number ``contains``; crack-free splitting; the solid mesh flag and solid
mesh pairs in ``touche.intersects`` (manifold3d's exact booleans as the reference).

Boundary convention under test (touche/bsp.py module doc): points on the surface are inside;
points outside within the "boundary band" (a few plane thicknesses, ~1e-9 of the mesh size) may
be reported inside; rays touching the closed solid (grazing an edge, running along a face) hit.
"""
from __future__ import annotations

import numpy as np
import pytest

import touche as tc
from touche import GeometryError
from touche import bsp
from touche._kernels import bsp_build as kernels

from naive import bsp as naive_bsp

MESHES = naive_bsp.test_meshes()
NAMES = sorted(MESHES)
BAND = 1e-7  # relative to the mesh size: a hundred plane thicknesses


def _size(vertices):
    return float(np.ptp(vertices, axis=0).max())


_TREES = {}


def _solid(name, scale=1.0, offset=0.0):
    key = (name, scale, offset)
    if key not in _TREES:
        vertices, faces = MESHES[name]
        vertices = vertices * scale + offset
        _TREES[key] = (vertices, faces, bsp.SolidBSP(vertices, faces))
    return _TREES[key]


def _box_points(vertices, count, rng, spread=1.3):
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    center, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * spread
    return center + rng.uniform(-1.0, 1.0, (count, 3)) * half


def _rays(vertices, count, rng):
    """Origins on a sphere around the mesh, aimed at random points of its box: about half hit."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    center = 0.5 * (lo + hi)
    radius = np.linalg.norm(hi - lo)
    origins = rng.normal(size=(count, 3))
    origins = center + origins / np.linalg.norm(origins, axis=1)[:, None] * radius
    targets = center + (rng.random((count, 3)) - 0.5) * (hi - lo) * 1.3
    return origins, targets - origins


# ---------------------------------------------------------------------------------------------
# point containment
@pytest.mark.parametrize("name", NAMES)
def test_contains_agrees_with_winding_number_contains_except_in_the_boundary_band(name):
    vertices, faces, tree = _solid(name)
    rng = np.random.default_rng(19)
    points = _box_points(vertices, 10_000, rng, spread=1.1)
    ours = tree.contains(points)
    theirs = tc.contains(tc.TriangleMesh(vertices, faces), None, points)
    assert 0.2 < theirs.mean() < 0.8  # both outcomes exercised
    differ = np.flatnonzero(ours != theirs)
    if len(differ):
        gap = naive_bsp.surface_distance(vertices, faces, points[differ])
        assert gap.max() <= BAND * _size(vertices), (name, differ[:5], gap.max())
    assert len(differ) <= 5


@pytest.mark.parametrize("name", ["torus", "l_block", "icosphere"])
def test_contains_agrees_with_the_solid_angle_reference(name):
    vertices, faces, tree = _solid(name)
    points = _box_points(vertices, 600, np.random.default_rng(7))
    np.testing.assert_array_equal(tree.contains(points), naive_bsp.inside(vertices, faces, points))


@pytest.mark.parametrize("name", NAMES)
def test_points_on_faces_edges_and_vertices_are_inside_and_just_off_the_surface_are_classified(name):
    vertices, faces, tree = _solid(name)
    rng = np.random.default_rng(3)
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    pick = rng.integers(0, len(faces), 400)
    w = rng.dirichlet([1.0, 1.0, 1.0], 400)
    on_faces = w[:, :1] * a[pick] + w[:, 1:2] * b[pick] + w[:, 2:] * c[pick]
    s = rng.random((400, 1))
    on_edges = (1 - s) * a[pick] + s * b[pick]
    assert tree.contains(on_faces).all()
    assert tree.contains(on_edges).all()
    assert tree.contains(vertices).all()
    # 1e-6 of the size off the surface (far outside the band): off the faces' interiors along
    # the normal, compared with the reference (near a concave edge the outside point may be inside)
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    centroids = (a + b + c)[pick] / 3.0
    step = 1e-6 * _size(vertices)
    for sign in (1.0, -1.0):
        probe = centroids + sign * step * normal[pick]
        np.testing.assert_array_equal(tree.contains(probe), naive_bsp.inside(vertices, faces, probe))


@pytest.mark.parametrize("scale, offset", [(1e-6, 0.0), (1e6, 0.0), (1.0, 1e5), (1e-6, 1e5 * 1e-6 * 3)])
@pytest.mark.parametrize("name", ["torus", "l_block"])
def test_tiny_huge_and_far_meshes(name, scale, offset):
    vertices, faces, tree = _solid(name, scale, offset)
    rng = np.random.default_rng(11)
    points = _box_points(vertices, 2000, rng)
    theirs = tc.contains(tc.TriangleMesh(vertices, faces), None, points)
    differ = np.flatnonzero(tree.contains(points) != theirs)
    if len(differ):
        assert naive_bsp.surface_distance(vertices, faces, points[differ]).max() <= BAND * _size(vertices)
    origins, directions = _rays(vertices, 300, rng)
    t_ref, _ = naive_bsp.first_hit(vertices, faces, origins, directions)
    hits = tree.raycast(origins, directions)
    np.testing.assert_array_equal(hits.hit, np.isfinite(t_ref))
    both = np.isfinite(t_ref)
    # t is in units of the direction (|d| ~ the mesh size): compare positions along the ray
    length = np.linalg.norm(directions, axis=1)
    assert np.abs(hits.t[both] - t_ref[both]).max() * length.max() <= 1e-9 * _size(vertices)
    # spheres: exact answers away from the touching band
    centers = _box_points(vertices, 300, rng, spread=1.4)
    radii = rng.uniform(0.0, 0.2, 300) * _size(vertices)
    gap = naive_bsp.surface_distance(vertices, faces, centers)
    clear = np.abs(gap - radii) > 1e-9 * _size(vertices)
    expected = naive_bsp.sphere_meets_solid(vertices, faces, centers, radii)
    np.testing.assert_array_equal(tree.sphere_intersects(centers, radii)[clear], expected[clear])


# ---------------------------------------------------------------------------------------------
# rays
@pytest.mark.parametrize("name", NAMES)
def test_solid_raycast_matches_the_first_triangle_hit(name):
    vertices, faces, tree = _solid(name)
    rng = np.random.default_rng(5)
    origins, directions = _rays(vertices, 1000, rng)
    t_ref, face = naive_bsp.first_hit(vertices, faces, origins, directions)
    hits = tree.raycast(origins, directions)
    assert 0.2 < np.isfinite(t_ref).mean() < 0.95
    np.testing.assert_array_equal(hits.hit, np.isfinite(t_ref))
    both = np.isfinite(t_ref)
    np.testing.assert_allclose(hits.t[both], t_ref[both], rtol=0, atol=1e-12)
    # the normal is the hit face's (coplanar neighbours share it), facing the ray
    a, b, c = (vertices[faces[face[both], i]] for i in range(3))
    face_normal = np.cross(b - a, c - a)
    face_normal /= np.linalg.norm(face_normal, axis=1)[:, None]
    np.testing.assert_allclose(hits.normal[both], face_normal, atol=1e-9)
    assert (np.einsum("ij,ij->i", hits.normal[both], directions[both]) < 0).all()
    # segments: max_t cuts the hits off
    limited = tree.raycast(origins, directions, 0.5 * np.where(both, t_ref, 1.0))
    assert not limited.hit[both].any()


def test_solid_raycast_from_inside_is_t0_and_grazing_rays_touch():
    vertices, faces, tree = _solid("cube")  # [-0.5, 0.5]^3
    hits = tree.raycast([[0.0, 0.0, 0.0], [0.1, 0.2, -0.3]], [1.0, 0.0, 0.0])
    assert (hits.t == 0.0).all() and (hits.normal == 0.0).all()
    # along the top face z = 0.5, starting outside: touches at x = -0.5
    along = tree.raycast([-2.0, 0.0, 0.5], [1.0, 0.0, 0.0])
    assert along.t[0] == pytest.approx(1.5, abs=1e-12)
    # through an edge (x = y = 0.5 edge) and a vertex, from outside at 45 degrees
    edge = tree.raycast([1.5, -0.5, 0.0], [-1.0, 1.0, 0.0])
    assert edge.t[0] == pytest.approx(1.0, abs=1e-12)
    corner = tree.raycast([1.5, 1.5, 1.5], [-1.0, -1.0, -1.0])
    assert corner.t[0] == pytest.approx(1.0, abs=1e-12)
    # just past the edge (1e-6 outside): a miss
    miss = tree.raycast([1.5, -0.5 + 2e-6, 0.0], [-1.0, 1.0, 0.0])
    assert not miss.hit[0]
    # a ray along a face of the concave L block (its inner corner)
    l_vertices, l_faces, l_tree = _solid("l_block")
    inner = l_tree.raycast([3.0, 1.0, 0.5], [-1.0, 0.0, 0.0])  # along the plane y = 1 of the inner step
    assert inner.t[0] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", [bsp.NodeBSP, bsp.LeafBSP])
@pytest.mark.parametrize("name", ["torus", "coplanar_faces", "capsule"])
def test_surface_trees_raycast_matches_brute_force(kind, name):
    vertices, faces = MESHES[name]
    tree = kind(vertices, faces)
    rng = np.random.default_rng(23)
    origins, directions = _rays(vertices, 3000, rng)
    t_ref, face_ref = naive_bsp.first_hit(vertices, faces, origins, directions)
    hits = tree.raycast(origins, directions)
    np.testing.assert_array_equal(hits.hit, np.isfinite(t_ref))
    both = np.isfinite(t_ref)
    np.testing.assert_allclose(hits.t[both], t_ref[both], rtol=0, atol=1e-12)
    # the face reported is hit at that t (the reference's face, or a neighbour through a shared edge)
    t_reported = naive_bsp.ray_triangle_pairs_t(vertices, faces[hits.face[both]], origins[both], directions[both])
    np.testing.assert_allclose(t_reported, t_ref[both], rtol=0, atol=1e-12)


def test_surface_trees_on_an_open_soup_and_origins_inside():
    rng = np.random.default_rng(29)
    vertices = rng.uniform(-1.0, 1.0, (240, 3))
    faces = np.arange(240).reshape(-1, 3)  # 80 random, intersecting triangles
    for kind in (bsp.NodeBSP, bsp.LeafBSP):
        tree = kind(vertices, faces)
        origins = rng.uniform(-1.5, 1.5, (2000, 3))
        directions = rng.normal(size=(2000, 3))
        t_ref, _ = naive_bsp.first_hit(vertices, faces, origins, directions)
        hits = tree.raycast(origins, directions)
        assert 0.2 < hits.hit.mean() < 0.95
        np.testing.assert_array_equal(hits.hit, np.isfinite(t_ref))
        np.testing.assert_allclose(hits.t[hits.hit], t_ref[hits.hit], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# building: crack-free splitting, fragments, plane selection
@pytest.mark.parametrize("kind", [bsp.SolidBSP, bsp.NodeBSP, bsp.LeafBSP])
@pytest.mark.parametrize("name", ["torus", "icosphere", "capsule"])
def test_fragments_tile_their_triangles_without_cracks(kind, name):
    vertices, faces = MESHES[name]
    tree = kind(vertices, faces)
    fragment_vertices, offsets, source = tree.fragments()
    assert len(source) > len(faces)  # some triangles were split
    # 1. areas: the fragments of each triangle add up to it (no overlap, no gap)
    area = np.zeros(len(faces))
    for f in range(len(source)):
        area[source[f]] += naive_bsp.polygon_area(fragment_vertices[offsets[f]:offsets[f + 1]])
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    expected = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    np.testing.assert_allclose(area, expected, rtol=1e-12)
    # 2. every fragment lies in its triangle's plane
    normal = np.cross(b - a, c - a) / (2 * expected)[:, None]
    rows = np.repeat(np.arange(len(source)), np.diff(offsets))
    height = np.einsum("ij,ij->i", fragment_vertices - a[source[rows]], normal[source[rows]])
    assert np.abs(height).max() <= 1e-12 * _size(vertices)
    # 3. cracks (8.3.5): two fragment vertices that should coincide but differ by rounding.
    # Group vertices that agree to 1e-9 of the size: each group must be bit-identical.
    key = np.round(fragment_vertices / (1e-9 * _size(vertices))).astype(np.int64)
    _, group = np.unique(key, axis=0, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")
    same_group = group[order][1:] == group[order][:-1]
    differs = (fragment_vertices[order][1:] != fragment_vertices[order][:-1]).any(axis=1)
    assert not (same_group & differs).any()


def test_split_vertex_is_the_same_bits_from_both_neighbours_and_naive_order_is_not():
    """Ericson 8.3.5: the shared edge cut as (front, back) by both triangles gives one vertex;
    cut in each triangle's own winding order (BC vs CB) it often does not (the crack)."""
    rng = np.random.default_rng(31)
    naive_differs = 0
    for _ in range(300):
        b, c, a, d = rng.normal(size=(4, 3))
        normal = rng.normal(size=3)
        normal /= np.linalg.norm(normal)
        offset = normal @ (0.5 * (b + c))  # the plane cuts the shared edge bc
        plane = np.append(normal, offset)
        front_side = (normal @ b - offset) > 0
        tri_1 = np.array([a, b, c])  # edge b -> c
        tri_2 = np.array([c, b, d])  # edge c -> b
        pieces = []
        for polygon in (tri_1, tri_2):
            front = np.empty((6, 3))
            back = np.empty((6, 3))
            kf, kb = kernels._split_polygon(polygon, 0, 3, *plane, 1e-12, front, back)
            pieces.append(np.concatenate([front[:kf], back[:kb]]))
        on_edge_1 = {tuple(p) for p in pieces[0] if abs(np.cross(p - b, c - b)).max() < 1e-9 and not
                     (p == b).all() and not (p == c).all()}
        on_edge_2 = {tuple(p) for p in pieces[1] if abs(np.cross(p - b, c - b)).max() < 1e-9 and not
                     (p == b).all() and not (p == c).all()}
        assert on_edge_1 and on_edge_1 == on_edge_2  # the same bits
        # the naive way: intersect each edge in its own direction
        def cut(p, q):
            t = (offset - normal @ p) / (normal @ (q - p))
            return p + t * (q - p)
        naive_differs += bool((cut(b, c) != cut(c, b)).any())
        assert front_side in (True, False)
    assert naive_differs > 30  # the test above can fail: naive cutting really differs


def test_split_polygon_follows_table_8_2():
    plane = (0.0, 0.0, 1.0, 0.0)
    # quad with two opposite vertices on the plane: front F1, on O1, behind B1, on O2
    quad = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, -1.0], [-1.0, 0.0, 0.0]])
    front = np.empty((6, 3))
    back = np.empty((6, 3))
    kf, kb = kernels._split_polygon(quad, 0, 4, *plane, 1e-9, front, back)
    assert {tuple(p) for p in front[:kf]} == {tuple(quad[i]) for i in (0, 1, 3)}
    assert {tuple(p) for p in back[:kb]} == {tuple(quad[i]) for i in (1, 2, 3)}
    # a triangle straddling with one vertex on the plane: F, B, on -> one cut, no overlap
    tri = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    kf, kb = kernels._split_polygon(tri, 0, 3, *plane, 1e-9, front, back)
    assert kf == 3 and kb == 3
    assert naive_bsp.polygon_area(front[:kf]) + naive_bsp.polygon_area(back[:kb]) == pytest.approx(
        naive_bsp.polygon_area(tri), rel=1e-14)


def test_thick_plane_classification_counts_near_points_as_on():
    polygon = np.array([[0.0, 0.0, 1e-10], [1.0, 0.0, -1e-10], [0.0, 1.0, 0.0]])
    assert kernels._classify_polygon(polygon, 0, 3, 0.0, 0.0, 1.0, 0.0, 1e-9) == kernels.ON
    assert kernels._classify_polygon(polygon, 0, 3, 0.0, 0.0, 1.0, 0.0, 1e-11) == kernels.STRADDLING
    polygon[0, 2] = 1.0  # one vertex in front, the others on the thick plane (Figure 8.10, DEF)
    assert kernels._classify_polygon(polygon, 0, 3, 0.0, 0.0, 1.0, 0.0, 1e-9) == kernels.FRONT


def test_autopartitioning_alone_makes_a_convex_mesh_a_chain_and_axis_cuts_fix_it():
    """Ericson 8.3.1, Figure 8.7: autopartitioning a convex mesh gives depth n; general cuts
    give O(log n); both trees answer the same."""
    vertices, faces = MESHES["icosphere"]
    chain = bsp.SolidBSP(vertices, faces, axis_cuts=False)
    balanced = bsp.SolidBSP(vertices, faces)
    assert chain.depth == len(faces)  # one node per face on the path to the last leaf
    assert balanced.depth < 40
    points = _box_points(vertices, 2000, np.random.default_rng(2))
    np.testing.assert_array_equal(chain.contains(points), balanced.contains(points))


def test_split_weight_trades_splits_for_balance_and_the_seed_fixes_the_tree():
    vertices, faces = MESHES["torus"]
    few_splits = bsp.SolidBSP(vertices, faces, split_weight=1.0, axis_cuts=False)
    balanced = bsp.SolidBSP(vertices, faces, split_weight=0.0, axis_cuts=False)
    assert len(few_splits.fragment_source) < len(balanced.fragment_source)
    assert few_splits.depth > balanced.depth
    again = bsp.SolidBSP(vertices, faces, split_weight=1.0, axis_cuts=False)
    np.testing.assert_array_equal(few_splits.node_planes, again.node_planes)
    other_seed = bsp.SolidBSP(vertices, faces, seed=5)
    assert not np.array_equal(other_seed.node_planes.shape, again.node_planes.shape) or not np.array_equal(
        other_seed.node_planes, again.node_planes)
    points = _box_points(vertices, 3000, np.random.default_rng(4))
    reference = naive_bsp.inside(vertices, faces, points[:300])
    for tree in (few_splits, balanced, other_seed, bsp.SolidBSP(vertices, faces, max_candidates=1)):
        np.testing.assert_array_equal(tree.contains(points[:300]), reference)


def test_leaf_storing_tree_cells_hold_their_polygons():
    vertices, faces = MESHES["torus"]
    tree = bsp.LeafBSP(vertices, faces, leaf_size=6)
    sizes = tree.leaf_fragments[:, 1]
    assert sizes.sum() == len(tree.fragment_source) and tree.num_leaves > 10
    # walk every leaf's path: its fragments lie on the leaf's side of each plane (thick)
    paths = {tree.root: []}
    stack = [tree.root]
    while stack:
        node = stack.pop()
        if node < 0:
            continue
        for side, child in ((1.0, tree.node_children[node, 0]), (-1.0, tree.node_children[node, 1])):
            paths[child] = paths[node] + [(node, side)]
            stack.append(child)
    fragment_vertices, offsets, _ = tree.fragments()
    local = fragment_vertices - tree.center
    for leaf in range(tree.num_leaves):
        for f in tree.leaf_polygons(leaf):
            polygon = local[offsets[f]:offsets[f + 1]]
            for node, side in paths[-1 - leaf]:
                distance = side * (polygon @ tree.node_planes[node, :3] - tree.node_planes[node, 3])
                assert distance.min() >= -tree.eps * 1.01
    # locate: the leaf of a fragment's centroid nudged off the plane to its front is that leaf
    # or a neighbour; every point gets a valid leaf
    leaves = tree.locate(_box_points(vertices, 1000, np.random.default_rng(8)))
    assert leaves.min() >= 0 and leaves.max() < tree.num_leaves


# ---------------------------------------------------------------------------------------------
# volume queries
@pytest.mark.parametrize("name", ["torus", "l_block", "icosphere", "coplanar_faces"])
def test_sphere_intersects_matches_brute_force(name):
    vertices, faces, tree = _solid(name)
    rng = np.random.default_rng(13)
    centers = _box_points(vertices, 1500, rng, spread=1.4)
    radii = rng.uniform(0.0, 0.25, 1500) * _size(vertices)
    expected = naive_bsp.sphere_meets_solid(vertices, faces, centers, radii)
    assert 0.2 < expected.mean() < 0.8
    ours = tree.sphere_intersects(centers, radii)
    gap = naive_bsp.surface_distance(vertices, faces, centers)
    clear = np.abs(gap - radii) > 1e-9 * _size(vertices)
    np.testing.assert_array_equal(ours[clear], expected[clear])
    # touching: radius = the exact gap counts
    outside = ~naive_bsp.inside(vertices, faces, centers)
    assert tree.sphere_intersects(centers[outside], gap[outside] * (1 + 1e-12)).all()
    assert not tree.sphere_intersects(centers[outside], gap[outside] * (1 - 1e-6)).any()


def _random_poses(count, rng, spread, scale):
    from scipy.spatial.transform import Rotation

    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, :3, :3] = Rotation.random(count, random_state=rng.integers(1 << 31)).as_matrix()
    poses[:, :3, 3] = rng.uniform(-spread, spread, (count, 3)) * scale
    return poses


@pytest.mark.parametrize("name, spread", [("torus", 0.6), ("l_block", 0.8), ("cube", 1.1)])
def test_polytope_intersects_matches_brute_force(name, spread):
    vertices, faces, tree = _solid(name)
    rng = np.random.default_rng(17)
    size = _size(vertices)
    center = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
    hull_points = rng.normal(size=(12, 3)) * 0.15 * size
    for shape in (tc.Box(np.array([0.3, 0.2, 0.1]) * size), tc.ConvexPolyhedron(hull_points)):
        poses = _random_poses(150, rng, spread, size)
        poses[:, :3, 3] += center
        ours = tree.polytope_intersects(shape, poses)
        _, params, points, triangles, edges = shape.packed()
        nv, npl = int(params[0]), int(params[1])
        planes = np.column_stack([points[nv:nv + npl], params[4:4 + npl]])
        expected = np.array([naive_bsp.polytope_meets_solid(vertices, faces, points[:nv], planes, triangles, edges, p)
                             for p in poses])
        assert 0.2 < expected.mean() < 0.9
        np.testing.assert_array_equal(ours, expected)
    # a box holding the whole solid, and one inside a hole of the torus, and one inside the solid
    big = tc.Box([3.0 * size] * 3)
    assert tree.polytope_intersects(big, tc.Pose.from_translation(center))


def test_polytope_inside_the_solid_and_in_the_torus_hole():
    vertices, faces, tree = _solid("torus")  # major radius 1, minor 0.35
    small = tc.Box([0.1, 0.1, 0.1])
    assert tree.polytope_intersects(small, tc.Pose.from_translation([1.0, 0.0, 0.0]))  # inside the tube
    assert not tree.polytope_intersects(small, None)  # in the hole
    assert tree.sphere_intersects([1.0, 0.0, 0.0], 0.01)
    assert not tree.sphere_intersects([0.0, 0.0, 0.0], 0.5)
    assert tree.sphere_intersects([0.0, 0.0, 0.0], 0.7)


# ---------------------------------------------------------------------------------------------
# input handling
def test_single_and_batch_forms():
    vertices, faces, tree = _solid("cube")
    assert tree.contains([0.0, 0.0, 0.0]) is True
    assert tree.contains([[2, 0, 0], [0, 0, 0]]).tolist() == [False, True]
    assert tree.contains(np.zeros((3, 3), dtype=np.float32)).all()
    assert isinstance(tree.locate([0, 0, 0]), int)
    hits = tree.raycast([[-2, 0, 0]] * 3, [[1, 0, 0]], [10.0, 1.0, np.inf])
    assert hits.hit.tolist() == [True, False, True] and hits.t[0] == pytest.approx(1.5)
    np.testing.assert_allclose(hits.point[0], [-0.5, 0.0, 0.0])
    assert np.isnan(hits.point[1]).all()
    assert tree.sphere_intersects([[0, 0, 2.0]], [1.5]).tolist() == [True]
    assert tree.polytope_intersects(tc.Box([1, 1, 1]), np.eye(4)) is True
    assert len(tree.polytope_intersects(tc.Box([1, 1, 1]), [tc.Pose.from_translation([3, 0, 0]).matrix] * 2)) == 2
    mesh = tc.TriangleMesh(vertices, faces)
    assert bsp.SolidBSP.from_mesh(mesh).contains([0, 0, 0])
    import trimesh
    assert bsp.SolidBSP.from_mesh(trimesh.creation.box()).contains([0, 0, 0])
    inward = bsp.SolidBSP(vertices, faces[:, ::-1])  # an inward-facing mesh is turned outward
    assert inward.contains([0, 0, 0]) and not inward.contains([1, 0, 0])
    assert "SolidBSP" in repr(tree) and "fragments" in repr(tree)


def test_bad_input_raises_clear_errors():
    vertices, faces, tree = _solid("cube")
    with pytest.raises(GeometryError, match="NaN"):
        tree.contains([[np.nan, 0, 0]])
    with pytest.raises(GeometryError, match="shape"):
        tree.contains([[0, 0]])
    with pytest.raises(GeometryError, match="empty"):
        tree.contains(np.zeros((0, 3)))
    with pytest.raises(GeometryError, match="zero vector"):
        tree.raycast([0, 0, 0], [0, 0, 0])
    with pytest.raises(GeometryError, match="differ"):
        tree.raycast([[0, 0, 0]] * 2, [[1, 0, 0]] * 3)
    with pytest.raises(GeometryError, match="max_t"):
        tree.raycast([0, 0, 0], [1, 0, 0], -1.0)
    with pytest.raises(GeometryError, match="radii"):
        tree.sphere_intersects([0, 0, 0], -1.0)
    with pytest.raises(GeometryError, match="polytope"):
        tree.polytope_intersects(tc.Sphere(1.0), None)
    with pytest.raises(GeometryError):
        bsp.SolidBSP(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64))
    with pytest.raises(GeometryError, match="open"):
        bsp.SolidBSP(vertices, faces[:-1])
    with pytest.raises(GeometryError, match="split_weight"):
        bsp.SolidBSP(vertices, faces, split_weight=2.0)
    with pytest.raises(GeometryError, match="max_candidates"):
        bsp.NodeBSP(vertices, faces, max_candidates=0)
    with pytest.raises(GeometryError, match="leaf_size"):
        bsp.LeafBSP(vertices, faces, leaf_size=0)
    with pytest.raises(GeometryError, match="zero area"):
        bsp.NodeBSP(np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0.0]]), np.array([[0, 1, 2]]))
    with pytest.raises(GeometryError, match="mesh"):
        bsp.SolidBSP.from_mesh(tc.Sphere(1.0))


# ---------------------------------------------------------------------------------------------
# solid meshes: the flag and intersects
def test_solid_flag_rejects_what_does_not_bound_a_solid():
    vertices, faces = MESHES["cube"]
    assert tc.TriangleMesh(vertices, faces).solid is False
    assert tc.TriangleMesh(vertices, faces, solid=True).solid is True
    assert tc.TriangleMesh(vertices, faces).as_solid().solid is True
    with pytest.raises(GeometryError, match="open"):
        tc.TriangleMesh(vertices, faces[:-1], solid=True)
    flipped = faces.copy()
    flipped[0] = flipped[0, ::-1]
    with pytest.raises(GeometryError, match="inconsistent orientation"):
        tc.TriangleMesh(vertices, flipped).as_solid()
    # three cubes... simplest non-manifold edge: a fin triangle on an edge of the cube
    fin_vertices = np.vstack([vertices, [[2.0, 2.0, 2.0]]])
    edge = faces[0, :2]
    fin = np.vstack([faces, [[edge[0], edge[1], 8]], [[edge[1], edge[0], 8]]])
    with pytest.raises(GeometryError, match="non-manifold"):
        tc.TriangleMesh(fin_vertices, fin, solid=True)
    with pytest.raises(GeometryError, match="no volume"):
        tc.TriangleMesh(vertices, np.vstack([faces[:1], faces[:1, ::-1]]), solid=True)
    import pickle
    assert pickle.loads(pickle.dumps(tc.TriangleMesh(vertices, faces, solid=True))).solid is True


def _manifold_volume(va, fa, vb, fb):
    import manifold3d

    a = manifold3d.Manifold(manifold3d.Mesh(vert_properties=va.astype(np.float32), tri_verts=fa.astype(np.uint32)))
    b = manifold3d.Manifold(manifold3d.Mesh(vert_properties=vb.astype(np.float32), tri_verts=fb.astype(np.uint32)))
    return (a ^ b).volume()


def test_nested_solids_intersect_and_surfaces_alone_do_not():
    vertices, faces = MESHES["icosphere"]
    outer = tc.TriangleMesh(vertices, faces, solid=True)
    inner = tc.TriangleMesh(vertices * 0.3, faces, solid=True)
    rng = np.random.default_rng(41)
    poses = _random_poses(200, rng, 0.5, 1.0)  # the inner sphere (r 0.3) stays within r 0.95
    poses[:, :3, 3] *= 0.6 / np.maximum(np.linalg.norm(poses[:, :3, 3], axis=1), 1.0)[:, None]
    assert tc.intersects(outer, None, inner, poses).all()  # 0 misses
    assert tc.intersects(inner, poses, outer, None).all()
    assert tc.intersects(outer, None, inner, None) is True
    # the same meshes without the flag: surfaces, no contact
    plain_outer, plain_inner = tc.TriangleMesh(vertices, faces), tc.TriangleMesh(vertices * 0.3, faces)
    assert not tc.intersects(plain_outer, None, plain_inner, poses).any()
    # a surface mesh inside a solid intersects it; a solid inside a surface does not
    assert tc.intersects(outer, None, plain_inner, None) is True
    assert tc.intersects(plain_outer, None, inner, None) is False
    # disjoint
    far = tc.Pose.from_translation([3.0, 0.0, 0.0])
    assert tc.intersects(outer, None, inner, far) is False


def test_solid_pairs_agree_with_manifold3d_intersection_volume():
    va, fa = MESHES["torus"]
    vb, fb = MESHES["l_block"]
    vb = vb * 0.4
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb, solid=True)
    rng = np.random.default_rng(43)
    poses = _random_poses(80, rng, 1.3, 1.0)
    ours = tc.intersects(a, None, b, poses)
    expected = []
    for pose in poses:
        moved = vb @ pose[:3, :3].T + pose[:3, 3]
        expected.append(_manifold_volume(va, fa, moved, fb) > 1e-9)
    expected = np.array(expected)
    assert 0.2 < expected.mean() < 0.8
    # manifold3d works in float32: skip the poses whose overlap is within its rounding of zero
    np.testing.assert_array_equal(ours, expected)


def test_rays_do_not_hit_thick_sliver_cells_on_a_real_mesh():
    """Regression (found on the benchmark panel's torus): two nearly parallel dividing planes make
    a sliver cell whose eps-thick bands reach far along them; a ray crossing both bands reached
    the solid sliver 0.03 before the surface. Hits are now checked (touche/_kernels/trees/bsp_query.py,
    _ray_solid): every t is the brute-force first hit, within the boundary band."""
    pytest.importorskip("pybullet_data")
    from naive.mesh_queries import load_pybullet_mesh

    vertices, faces = load_pybullet_mesh("torus/torus_textured.obj")
    tree = bsp.SolidBSP(vertices, faces)
    origins, directions = _rays(vertices, 2000, np.random.default_rng(0))
    t_ref, _ = naive_bsp.first_hit(vertices, faces, origins, directions)
    hits = tree.raycast(origins, directions)
    np.testing.assert_array_equal(hits.hit, np.isfinite(t_ref))
    both = hits.hit
    length = np.linalg.norm(directions[both], axis=1)
    assert (np.abs(hits.t[both] - t_ref[both]) * length).max() <= 1e-7 * _size(vertices)


def test_containment_looks_at_every_component_and_respects_cavities():
    vertices, faces = MESHES["cube"]  # [-0.5, 0.5]^3, outward
    outer = tc.TriangleMesh(vertices * 4.0, faces, solid=True)
    # two small cubes in one mesh: one inside the big cube, one far outside; either order
    for first, second in (([0.0, 0.0, 0.0], [10.0, 0.0, 0.0]), ([10.0, 0.0, 0.0], [0.0, 0.0, 0.0])):
        pair = tc.TriangleMesh(np.vstack([vertices * 0.2 + first, vertices * 0.2 + second]),
                               np.vstack([faces, faces + len(vertices)]), solid=True)
        assert tc.intersects(outer, None, pair, None) is True
        assert tc.intersects(pair, None, outer, None) is True
        poses = np.tile(np.eye(4), (3, 1, 1))
        poses[:, 0, 3] = [0.0, 30.0, -10.0]  # both out at +30; at -10 the outside one comes in
        assert tc.intersects(outer, None, pair, poses).tolist() == [True, False, True]
    # a hollow solid: outer shell [-2, 2]^3 outward, cavity [-1, 1]^3 inward
    hollow = tc.TriangleMesh(np.vstack([vertices * 4.0, vertices * 2.0]), np.vstack([faces, faces[:, ::-1] + 8]),
                             solid=True)
    small = tc.TriangleMesh(vertices * 0.2, faces, solid=True)
    assert tc.intersects(hollow, None, small, None) is False  # in the cavity
    assert tc.intersects(hollow, None, small, tc.Pose.from_translation([1.5, 0.0, 0.0])) is True  # in the wall
    assert tc.intersects(hollow, None, small, tc.Pose.from_translation([5.0, 0.0, 0.0])) is False


def test_a_surface_crossing_itself_is_refused():
    """Two cubes passing through each other, as one closed, consistently oriented mesh: its
    surface crosses itself, autopartitioning mislabels cells, and the probe check refuses it."""
    vertices, faces = MESHES["cube"]
    crossing = (np.vstack([vertices, vertices + [0.5, 0.3, 0.2]]), np.vstack([faces, faces + 8]))
    tc.TriangleMesh(*crossing, solid=True)  # closed and oriented: the flag's check passes
    with pytest.raises(GeometryError, match="crosses itself"):
        bsp.SolidBSP(*crossing)
    tree = bsp.SolidBSP(*crossing, check_surface=False)
    assert tree.inconsistent_faces > 0
    assert _solid("torus")[2].inconsistent_faces == 0
    # the winding number still answers, and the solid pair test uses it
    assert tc.contains(tc.TriangleMesh(*crossing), None, [0.7, 0.5, 0.5])


def test_points_on_planes_near_sliver_cells_are_not_inside():
    """Regression (benchmark panel, diff_pinion): a ray crossing a dividing plane 0.1 away from
    the gear, next to a nearly parallel plane, was reported to enter the solid there: the
    book's "within eps of a plane: go back" point rule led its entry point into a solid sliver
    cell. Points now descend by the exact side (touche/_kernels/trees/bsp_query.py, _inside)."""
    pytest.importorskip("pybullet_data")
    from naive.mesh_queries import load_pybullet_mesh

    vertices, faces = load_pybullet_mesh("differential/diff_pinion.stl")
    tree = bsp.SolidBSP(vertices, faces)
    origin = np.array([23.6733745324396, 3.152067517665161, -101.86003930821006])
    direction = np.array([-0.3486825533272417, 0.23718601744199283, 0.9067321931723842])
    t_ref, _ = naive_bsp.first_hit(vertices, faces, origin[None], direction[None])
    hit = tree.raycast(origin, direction)
    assert hit.t[0] == pytest.approx(t_ref[0], abs=1e-6)
    # points of the ray up to the hit: outside, as the reference says
    ts = np.linspace(0.0, t_ref[0] - 1e-3, 200)
    assert not tree.contains(origin + ts[:, None] * direction).any()
