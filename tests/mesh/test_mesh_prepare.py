"""touche.mesh preparation (Ericson ch. 12) against naive references."""
import numpy as np
import pytest

from touche import mesh as tm
from touche.errors import GeometryError

from naive import mesh as naive


def _sphere(subdivisions=2):
    trimesh = pytest.importorskip("trimesh")
    s = trimesh.creation.icosphere(subdivisions=subdivisions)
    return np.asarray(s.vertices), np.asarray(s.faces)


# ---------------------------------------------------------------------------- 12.1 welding
@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_weld_tolerance_matches_naive(scale):
    rng = np.random.default_rng(11)
    base = rng.uniform(-1, 1, size=(150, 3))
    # clusters of near copies, some exact copies, negative coordinates included
    points = np.concatenate([base, base[:60] + rng.normal(scale=2e-4, size=(60, 3)), base[:30]]) * scale
    points = points[rng.permutation(len(points))]
    tolerance = 1e-3 * scale
    from touche._kernels import meshprep

    remap, kept = meshprep.weld_tolerance(points, tolerance, 2 * tolerance)
    ref_remap, ref_kept = naive.weld_sequential(points, tolerance)
    np.testing.assert_array_equal(kept, ref_kept)
    np.testing.assert_array_equal(remap, ref_remap)
    assert 150 <= len(kept) < len(points)  # both outcomes exercised
    # drift bounded by the tolerance; kept vertices are further apart than it (Ericson's check)
    assert np.linalg.norm(points - points[kept][remap], axis=1).max() <= tolerance
    kept_points = points[kept]
    d = np.linalg.norm(kept_points[:, None] - kept_points[None], axis=2)
    np.fill_diagonal(d, np.inf)
    assert d.min() > tolerance


def test_weld_exact_matches_naive_and_signed_zero():
    rng = np.random.default_rng(5)
    points = rng.integers(-2, 3, size=(400, 3)).astype(float) * 0.5
    points[::7] *= -1.0  # -0.0 appears where the value is 0
    from touche._kernels import meshprep

    remap, kept = meshprep.weld_exact((points + 0.0).view(np.int64))
    ref_remap, ref_kept = naive.weld_exact(points)
    np.testing.assert_array_equal(kept, ref_kept)
    np.testing.assert_array_equal(remap, ref_remap)


def test_weld_mesh_soup_and_bad_tolerance():
    v, f = _sphere(1)
    soup = v[f].reshape(-1, 3)
    wv, wf = tm.weld(soup, np.arange(len(soup)).reshape(-1, 3))
    assert len(wv) == len(v) and len(wf) == len(f)
    np.testing.assert_array_equal(wv[wf], v[f])
    with pytest.raises(GeometryError):
        tm.weld(v, f, tolerance=-1)
    with pytest.raises(GeometryError, match="too small"):
        tm.weld(v * 1e12, f, tolerance=1e-9)
    # tolerance welding collapses a sliver face and drops it
    v2 = np.concatenate([v, v[:1] + 1e-7])
    f2 = np.concatenate([f, [[0, 1, len(v)]]])
    wv, wf = tm.weld(v2, f2, tolerance=1e-6)
    assert len(wv) == len(v) and len(wf) == len(f)


# ---------------------------------------------------------------------------- 12.2 adjacency
def _random_soup_mesh(seed):
    """Several spheres with random faces removed and duplicated: boundary, manifold and
    non-manifold edges, several components."""
    rng = np.random.default_rng(seed)
    v, f = _sphere(1)
    parts_v, parts_f = [], []
    for k in range(3):
        keep = rng.random(len(f)) > 0.2
        parts_f.append(f[keep] + k * len(v))
        parts_v.append(v + 3 * k)
    faces = np.concatenate(parts_f)
    faces = np.concatenate([faces, faces[rng.choice(len(faces), 5)][:, [0, 2, 1]]])  # non-manifold
    return np.concatenate(parts_v), faces


@pytest.mark.parametrize("seed", [0, 1])
def test_edge_table_vertex_faces_components_match_naive(seed):
    v, f = _random_soup_mesh(seed)
    table = tm.edge_table(v, f)
    reference = naive.edge_faces(f)
    assert len(table.edges) == len(reference)
    for i, (a, b) in enumerate(table.edges):
        assert table.faces[table.start[i]:table.start[i + 1]].tolist() == sorted(reference[(a, b)])
    for face in range(len(f)):
        for k in range(3):
            a, b = f[face, k], f[face, (k + 1) % 3]
            assert tuple(table.edges[table.face_edges[face, k]]) == (min(a, b), max(a, b))
    counts = np.array([len(x) for x in reference.values()])
    assert (counts == 1).any() and (counts == 2).any() and (counts > 2).any()
    start, faces = tm.vertex_faces(v, f)
    reference_vf = naive.vertex_faces(f, len(v))
    for i in range(len(v)):
        assert faces[start[i]:start[i + 1]].tolist() == reference_vf[i]
    labels = tm.connected_components(v, f)
    np.testing.assert_array_equal(labels, naive.components(f))
    assert labels.max() + 1 >= 3
    # by vertex: two triangles touching at one vertex only are one component
    touching = np.concatenate([f, [[0, len(v), len(v) + 1]]])
    v_extra = np.concatenate([v, [[9, 9, 9], [9, 9, 8]]])
    by_vertex = tm.connected_components(v_extra, touching, by="vertex")
    np.testing.assert_array_equal(by_vertex, naive.components_by_vertex(touching))
    by_edge = tm.connected_components(v_extra, touching)
    np.testing.assert_array_equal(by_edge, naive.components(touching))
    assert by_vertex[-1] == by_vertex[0] and by_edge[-1] != by_edge[0]
    assert by_edge.max() > by_vertex.max()  # vertex-only contacts exist in these meshes


@pytest.mark.parametrize("seed", [0, 1])
def test_euler_counts_match_naive(seed):
    v, f = _random_soup_mesh(seed)
    report = tm.euler(v, f)
    nv, ne, nf, nb = naive.euler_counts(f)
    assert (report.vertices, report.edges, report.faces, report.boundary_edges) == (nv, ne, nf, nb)
    assert report.characteristic == nv - ne + nf
    assert not report.consistent and report.problems


def test_euler_closed_meshes_and_genus():
    v, f = naive.cube()
    report = tm.euler(v, f)
    assert report.closed and report.consistent and report.genus == 0 and report.characteristic == 2
    trimesh = pytest.importorskip("trimesh")
    torus = trimesh.creation.torus(1.0, 0.3, major_sections=16, minor_sections=8)
    report = tm.euler(torus.vertices, torus.faces)
    assert report.closed and report.consistent and report.genus == 1 and report.characteristic == 0
    # two cubes: C = 2, V - E + F = 4
    v2 = np.concatenate([v, v + 5])
    report = tm.euler(v2, np.concatenate([f, f + 8]))
    assert report.components == 2 and report.genus == 0 and report.characteristic == 4


# Ericson Figures 12.28 / 12.29 as polygon meshes (SEED-NOTES acceptance 7)
_CUBE_QUADS = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]]  # naive.cube


def _house():
    """A cube without its top face plus a four-sided roof: V, F, E = 9, 9, 16 (Figure 12.28a)."""
    return [q for q in _CUBE_QUADS if q != [1, 3, 7, 5]] + [[1, 5, 8], [5, 7, 8], [7, 3, 8], [3, 1, 8]]


def _square_torus(n=4):
    """n x n quads on a torus: V, F, E = 16, 16, 32 for n = 4, genus 1 (Figure 12.28b)."""
    index = lambda i, j: (i % n) * n + (j % n)  # noqa: E731
    return [[index(i, j), index(i + 1, j), index(i + 1, j + 1), index(i, j + 1)] for i in range(n) for j in range(n)]


def _nine_vertex_cubes():
    """Figure 12.29: vertex 8 on the top edge 1-5 (naive.cube numbering, top z = 1: 1, 3, 5, 7).
    Good: the front face (y = 0: 0, 4, 5, 1) and the top are each a quad plus a triangle through
    vertex 8 (6 quads, 2 triangles). Bad: the front face stays a quad that skips vertex 8 while the
    top is three triangles (5 quads, 3 triangles): a T-junction."""
    others = [q for q in _CUBE_QUADS if q not in ([0, 1, 5, 4], [1, 3, 7, 5])]
    good = others + [[0, 4, 5, 8], [0, 8, 1], [8, 5, 7, 3], [1, 8, 3]]
    bad = others + [[0, 1, 5, 4], [1, 8, 3], [8, 5, 7], [8, 7, 3]]
    return good, bad


def test_euler_formula_seed_examples():
    house = tm.euler_polygons(_house())
    assert (house.vertices, house.faces, house.edges) == (9, 9, 16)
    assert house.characteristic == 2 and house.closed and house.consistent and house.genus == 0
    torus = tm.euler_polygons(_square_torus())
    assert (torus.vertices, torus.faces, torus.edges) == (16, 16, 32)
    assert torus.characteristic == 0 and torus.consistent and torus.genus == 1
    good, bad = (tm.euler_polygons(p) for p in _nine_vertex_cubes())
    assert (good.vertices, good.quads, good.triangles, good.edges) == (9, 6, 2, 15)
    assert good.characteristic == 2 and good.edges_from_sides == 15.0 and good.consistent and good.genus == 0
    assert (bad.vertices, bad.quads, bad.triangles, bad.edges) == (9, 5, 3, 16)
    assert bad.characteristic == 1 and bad.edges_from_sides == 14.5 and not bad.consistent
    assert any("14.5 is not a whole number" in p for p in bad.problems)
    assert any("V + F - E = 1" in p for p in bad.problems)
    # triangulated, the good cube is a closed triangle mesh (T = 2V - 4); the bad one is open
    fan = lambda polygons: np.array([[p[0], p[i], p[i + 1]] for p in polygons for i in range(1, len(p) - 1)])  # noqa: E731
    vertices = np.concatenate([naive.cube()[0], [[0.5, 0.0, 1.0]]])
    good_tri = tm.euler(vertices, fan(_nine_vertex_cubes()[0]))
    assert good_tri.consistent and good_tri.faces == 2 * good_tri.vertices - 4
    assert not tm.euler(vertices, fan(_nine_vertex_cubes()[1])).closed
    with pytest.raises(GeometryError):
        tm.euler_polygons([[0, 1]])


@pytest.mark.parametrize("seed", [0, 1])
def test_euler_polygons_counts_match_naive(seed):
    rng = np.random.default_rng(seed)
    polygons = [list(rng.choice(30, size=int(rng.integers(3, 7)), replace=False)) for _ in range(60)]
    report = tm.euler_polygons(polygons)
    edges = {}
    for p in polygons:
        for i in range(len(p)):
            key = (min(p[i], p[(i + 1) % len(p)]), max(p[i], p[(i + 1) % len(p)]))
            edges[key] = edges.get(key, 0) + 1
    vertices = {x for p in polygons for x in p}
    assert (report.vertices, report.edges, report.faces) == (len(vertices), len(edges), len(polygons))
    assert report.boundary_edges == sum(1 for c in edges.values() if c == 1)
    assert report.nonmanifold_edges == sum(1 for c in edges.values() if c > 2)
    assert report.edges_from_sides == sum(len(p) for p in polygons) / 2
    assert report.characteristic == len(vertices) - len(edges) + len(polygons)


# ---------------------------------------------------------------------------- 12.3 holes, T-junctions
def test_cube_missing_face_hole_detected_and_filled():
    v, f = naive.cube()
    open_f = f[:-2]  # remove the z = 1 face (two triangles)
    loops = tm.boundary_loops(v, open_f)
    assert len(loops) == 1 and sorted(loops[0].tolist()) == [1, 3, 5, 7]
    before = tm.euler(v, open_f)
    assert not before.closed and before.boundary_edges == 4
    v2, f2, filled = tm.fill_holes(v, open_f)
    assert filled == 1 and len(f2) == 12
    after = tm.euler(v2, f2)
    assert after.closed and after.consistent and after.genus == 0
    assert tm.signed_volume(v2, f2) == pytest.approx(1.0)  # filled with outward winding


def test_holes_touching_at_a_vertex_are_separate_loops():
    v, f = naive.cube()
    open_f = np.delete(f, [0, 4], axis=0)  # [0, 1, 3] and [0, 4, 5]: two holes meeting at vertex 0
    loops = tm.boundary_loops(v, open_f)
    assert sorted(sorted(loop.tolist()) for loop in loops) == [[0, 1, 3], [0, 4, 5]]
    v2, f2, filled = tm.fill_holes(v, open_f)
    assert filled == 2 and tm.euler(v2, f2).consistent
    assert tm.signed_volume(v2, f2) == pytest.approx(1.0)
    # a walk through a repeated vertex splits into simple cycles
    cycles = tm.prepare._simple_cycles(np.array([1, 2, 3, 4, 2, 5, 6]))
    assert [c.tolist() for c in cycles] == [[2, 3, 4], [1, 2, 5, 6]]


def test_sphere_with_two_holes_filled():
    v, f = _sphere(2)
    ring = np.flatnonzero(v[:, 2] > 0.8)
    cut = np.isin(f, ring).any(axis=1) | (v[f][:, :, 2] < -0.85).any(axis=1)
    open_f = f[~cut]
    assert len(tm.boundary_loops(v, open_f)) == 2
    v2, f2, filled = tm.fill_holes(v, open_f)
    assert filled == 2
    report = tm.euler(v2, f2)
    assert report.closed and report.consistent and report.genus == 0
    assert tm.signed_volume(v2, f2) > 0


def _t_junction_cube():
    """Unit cube whose top face is split into two quads by a vertex at the middle of the edge
    (0,1,1)-(1,1,1) but the neighbouring side face does not use that vertex: a crack."""
    v, f = naive.cube()
    v = np.concatenate([v, [[0.5, 1.0, 1.0], [0.5, 0.0, 1.0]]])  # 8 on edge 3-7, 9 on edge 1-5
    top = np.array([[1, 9, 8], [1, 8, 3], [9, 5, 7], [9, 7, 8]])  # z = 1, CCW from above
    side_y0 = np.array([[0, 4, 5], [0, 5, 9], [0, 9, 1]])  # y = 0 uses vertex 9: no crack there
    keep = [0, 1, 2, 3, 6, 7, 8, 9]  # x faces, y = 1 face (without vertex 8!), z = 0
    return v, np.concatenate([f[keep], side_y0, top])


def test_t_junction_detected_and_repaired():
    v, f = _t_junction_cube()
    found = tm.t_junctions(v, f)
    assert found.vertex.tolist() == [8]
    assert sorted(found.edge[0].tolist()) == [3, 7] and found.t[0] == pytest.approx(0.5)
    assert not tm.euler(v, f).closed
    v2, f2, cracked = tm.repair_t_junctions(v, f)
    assert cracked == 1
    report = tm.euler(v2, f2)
    assert report.closed and report.consistent and report.genus == 0
    assert tm.signed_volume(v2, f2) == pytest.approx(1.0)
    # no T-junction in a clean mesh
    assert len(tm.t_junctions(*naive.cube()).vertex) == 0


def test_t_junctions_on_a_seam_match_naive():
    """Two grid patches meet at x = 1 with 4 and 8 cells along the seam: the 4 odd seam vertices
    of the fine patch are T-vertices on the coarse patch's edges (and nothing else is)."""
    v1, f1 = naive.grid(3, 4, 0.0, 1.0)
    v2, f2 = naive.grid(5, 8, 1.0, 2.0)
    v, f = tm.weld(np.concatenate([v1, v2]), np.concatenate([f1, f2 + len(v1)]))
    found = tm.t_junctions(v, f)
    reference = naive.t_junctions(v, f, 1e-9 * 2.0)
    ours = sorted((int(p), int(min(e)), int(max(e))) for p, e in zip(found.vertex, found.edge))
    assert ours == [(p, min(a, b), max(a, b)) for p, a, b in reference]
    assert len(ours) == 4
    np.testing.assert_allclose(v[found.vertex, 0], 1.0)
    v2_, f2_, cracked = tm.repair_t_junctions(v, f)
    assert cracked == 4 and len(tm.t_junctions(v2_, f2_).vertex) == 0
    # the seam is closed: only the outer rectangle remains as boundary
    assert len(tm.boundary_loops(v2_, f2_)) == 1
    assert tm.orient(v2_, f2_)[1] == 0  # cracking kept the winding


def test_inspect_matches_trimesh_on_real_meshes():
    trimesh = pytest.importorskip("trimesh")
    pybullet_data = pytest.importorskip("pybullet_data")
    import os

    for name in ("differential/diff_ring.stl", "bunny.obj", "teddy2_VHACD_CHs.obj", "torus/torus_textured.obj"):
        path = os.path.join(pybullet_data.getDataPath(), name)
        ours = tm.load(path)
        peer = trimesh.Trimesh(ours.vertices, ours.faces, process=False)
        report = tm.inspect(ours)
        assert report.euler_characteristic == peer.euler_number, name
        assert report.watertight == peer.is_watertight, name
        assert report.components == len(trimesh.graph.connected_components(peer.face_adjacency, nodes=np.arange(len(peer.faces)))), name
        assert report.volume == pytest.approx(peer.volume, rel=1e-9), name
        assert report.flipped_faces == 0 and peer.is_winding_consistent, name
    # STL welding agrees with trimesh's vertex merge on a closed STL
    path = os.path.join(pybullet_data.getDataPath(), "differential/diff_ring.stl")
    assert len(tm.load(path).vertices) == len(trimesh.load(path).vertices)


# ---------------------------------------------------------------------------- orientation
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_orient_fixes_flipped_faces(seed):
    rng = np.random.default_rng(seed)
    v, f = _sphere(2)
    flipped = f.copy()
    chosen = rng.random(len(f)) < 0.3
    flipped[chosen] = flipped[chosen][:, ::-1]
    if seed == 2:
        flipped = flipped[:, ::-1]  # mostly inward
    fixed, count, conflicts = tm.orient(v, flipped)
    assert conflicts == 0
    assert tm.signed_volume(v, fixed) == pytest.approx(tm.signed_volume(v, f))
    assert tm.signed_volume(v, fixed) > 0
    np.testing.assert_array_equal(tm.face_normals(v, fixed), tm.face_normals(v, f))
    assert count == (chosen.sum() if seed != 2 else (~chosen).sum())


def test_orient_reports_moebius_conflict():
    n = 12
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    centre = np.stack([np.cos(angles), np.sin(angles), np.zeros(n)], axis=1)
    half = np.stack([np.cos(angles / 2) * np.cos(angles), np.cos(angles / 2) * np.sin(angles),
                     np.sin(angles / 2)], axis=1) * 0.2
    v = np.concatenate([centre + half, centre - half])
    faces = []
    for i in range(n):
        j = (i + 1) % n
        a, b = i, n + i
        c, d = (j, n + j) if j else (n + j, j)  # the half twist
        faces += [[a, b, d], [a, d, c]]
    _, _, conflicts = tm.orient(v, np.array(faces))
    assert conflicts > 0


# ---------------------------------------------------------------------------- 12.4 planarity
def _star(k):
    return np.array([(1, 1, 1), (6, 6 - k, 1), (11, 1, 1), (6 + k, 6, 1), (11, 11, 1), (6, 6 + k, 1),
                     (1, 11, 1), (6 - k, 6, 1)], dtype=float)


def test_summed_vertex_normals_fail_where_newell_does_not():
    """SEED-NOTES acceptance 6 (Ericson 12.4.1, Figure 12.16): the summed per-vertex cross
    products give z = -124, -56, 4, 56 for K = 1..4 and vanish at K = 10 - sqrt(50) ~ 2.928932;
    Newell's normal stays 40 K there."""
    def summed(v):
        return sum(np.cross(v[(i + 1) % len(v)] - v[i], v[i - 1] - v[i]) for i in range(len(v)))

    for k, expected in zip((1, 2, 3, 4), (-124, -56, 4, 56)):
        assert summed(_star(k)).tolist() == [0.0, 0.0, float(expected)]
    k0 = 10 - np.sqrt(50.0)
    assert k0 == pytest.approx(2.928932, abs=1e-6)
    assert abs(summed(_star(k0))[2]) < 1e-12
    assert tm.newell_normal(_star(k0)).tolist() == pytest.approx([0.0, 0.0, 40 * k0], rel=1e-14)


def test_newell_normal_star_polygon_seed_example():
    # SEED-NOTES acceptance 6: Newell gives z = 40, 80, 120, 160 for K = 1..4
    for k, expected in zip((1, 2, 3, 4), (40, 80, 120, 160)):
        star = np.array([(1, 1, 1), (6, 6 - k, 1), (11, 1, 1), (6 + k, 6, 1), (11, 11, 1),
                         (6, 6 + k, 1), (1, 11, 1), (6 - k, 6, 1)], dtype=float)
        assert tm.newell_normal(star).tolist() == [0.0, 0.0, float(expected)]
        assert tm.is_planar(star, 1e-12)
    bent = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0.01], [0, 1, 0]], dtype=float)
    assert tm.is_planar(bent, 0.01) and not tm.is_planar(bent, 0.001)


def test_merge_coplanar_tessellated_box():
    trimesh = pytest.importorskip("trimesh")
    box = trimesh.creation.box(extents=[1, 2, 3])
    fine = box.subdivide().subdivide()
    v, f = np.asarray(fine.vertices), np.asarray(fine.faces)
    groups = tm.coplanar_groups(v, f)
    assert groups.max() + 1 == 6
    v2, f2, patches = tm.merge_coplanar(v, f)
    # interior vertices go; the 3 subdivision vertices on each box edge stay (the neighbouring
    # patch uses them: dropping them would create T-junctions): 16-gon per side -> 14 triangles
    assert patches == 6 and len(f2) == 6 * 14 and len(v2) == 8 + 12 * 3
    assert len(tm.t_junctions(v2, f2).vertex) == 0
    assert tm.signed_volume(v2, f2) == pytest.approx(6.0)
    assert tm.euler(v2, f2).consistent
    # a sphere has no coplanar neighbours
    sv, sf = _sphere(1)
    assert tm.coplanar_groups(sv, sf).max() + 1 == len(sf)


# ---------------------------------------------------------------------------- 12.5.1 ear cutting
def _check_triangulation(points, triangles, rings):
    area = sum(naive.polygon_area(r) for r in rings)  # holes are clockwise: negative area
    tri_area = [naive.polygon_area(points[t]) for t in triangles]
    assert min(tri_area) >= -1e-12  # counter-clockwise
    assert sum(tri_area) == pytest.approx(area, rel=1e-9)
    centroids = points[triangles].mean(axis=1)
    for c in centroids:  # every triangle inside the outer ring and outside the holes
        assert naive.point_in_polygon(c, rings[0])
        assert not any(naive.point_in_polygon(c, h) for h in rings[1:])


@pytest.mark.parametrize("seed", range(6))
def test_earcut_random_simple_polygons(seed):
    rng = np.random.default_rng(seed)
    outer = naive.star_polygon(rng, int(rng.integers(5, 40)))
    triangles = tm.triangulate_polygon(outer)
    assert len(triangles) == len(outer) - 2
    _check_triangulation(outer, triangles, [outer])
    # clockwise input: same triangles, clockwise
    cw = tm.triangulate_polygon(outer[::-1])
    assert len(cw) == len(outer) - 2


@pytest.mark.parametrize("seed", range(4))
def test_earcut_with_holes(seed):
    rng = np.random.default_rng(100 + seed)
    outer = np.array([[0, 0], [10, 0], [10, 6], [5, 8], [0, 6]], dtype=float)
    holes = [naive.star_polygon(rng, 8, 0.3, 0.9, center=(2.5, 3))[::-1],
             naive.star_polygon(rng, 9, 0.3, 0.9, center=(7.5, 3))]  # one given CCW: reoriented
    triangles = tm.triangulate_polygon(outer, holes)
    points = np.concatenate([outer, *holes])
    rings = [outer] + [h if naive.polygon_area(h) < 0 else h[::-1] for h in holes]
    _check_triangulation(points, triangles, rings)
    assert len(triangles) == len(points) + 2 * len(holes) - 2


def test_earcut_3d_and_bad_input():
    square = np.array([[0, 0, 1], [0, 1, 1], [1, 1, 1], [1, 0, 1]], dtype=float)  # CW about +z
    triangles = tm.triangulate_polygon(square)
    normals = tm.face_normals(square, triangles)
    assert np.allclose(normals, [0, 0, -1])  # wound like the input ring
    with pytest.raises(GeometryError):
        tm.triangulate_polygon([[0, 0], [1, 1]])
    with pytest.raises(GeometryError):
        tm.triangulate_polygon([[0, 0], [1, 1], [2, 2]])
    with pytest.raises(GeometryError):
        tm.triangulate_polygon([[0, 0], [1, np.nan], [2, 0]])


# ---------------------------------------------------------------------------- 12.5.3, inspect
def _prism(polygon, height):
    """Closed prism over a simple CCW polygon (k, 2): ear-cut caps, quad sides."""
    k = len(polygon)
    v = np.concatenate([np.c_[polygon, np.zeros(k)], np.c_[polygon, np.full(k, height)]])
    cap = tm.triangulate_polygon(polygon)
    sides = [[i, (i + 1) % k, k + (i + 1) % k] for i in range(k)] + [[i, k + (i + 1) % k, k + i] for i in range(k)]
    return v, np.concatenate([cap[:, ::-1], cap + k, np.array(sides)])


def test_concave_edges_and_decomposition():
    l_polygon = np.array([[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]], dtype=float)
    v, f = _prism(l_polygon, 1.0)
    assert tm.euler(v, f).consistent and tm.signed_volume(v, f) == pytest.approx(5.0)
    edges, depth = tm.concave_edges(v, f)
    assert sorted(map(sorted, edges.tolist())) == [[3, 9]]  # the vertical edge at the inner corner
    assert (depth > 0).all()
    assert len(tm.concave_edges(*naive.cube())[0]) == 0
    hulls = tm.convex_decomposition(v, f)
    assert len(hulls) == 2
    volumes = sorted(float(np.prod(np.ptp(h.vertices, axis=0))) for h in hulls)  # boxes here
    assert sum(volumes) == pytest.approx(5.0)


def test_optional_backend_missing_is_a_clear_error(monkeypatch):
    import sys

    v, f = _prism(np.array([[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]], dtype=float), 1.0)
    for method, module in (("coacd", "coacd"), ("vhacd", "vhacdx")):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
        with pytest.raises(GeometryError, match=f"pip install {module}"):
            tm.convex_decomposition(v, f, method=method)
    with pytest.raises(GeometryError, match="method must be"):
        tm.convex_decomposition(v, f, method="magic")


def test_coacd_backend_covers_the_l_prism():
    pytest.importorskip("coacd")
    from scipy.spatial import ConvexHull

    v, f = _prism(np.array([[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]], dtype=float), 1.0)
    hulls = tm.convex_decomposition(v, f, method="coacd", seed=0)
    assert len(hulls) >= 2  # the L is not convex
    volume = sum(ConvexHull(h.vertices).volume for h in hulls)
    assert volume == pytest.approx(5.0, rel=0.05)  # approximate pieces, close to the L's volume
    # every point of the L (sampled) lies in some piece, up to coacd's tolerance
    rng = np.random.default_rng(0)
    samples = rng.uniform([0, 0, 0], [3, 3, 1], size=(4000, 3))
    inside_l = (samples[:, 0] <= 1) | (samples[:, 1] <= 1)
    samples = samples[inside_l]
    covered = np.zeros(len(samples), dtype=bool)
    for h in hulls:
        planes = ConvexHull(h.vertices).equations
        covered |= (samples @ planes[:, :3].T + planes[:, 3] <= 0.05).all(axis=1)
    assert covered.mean() > 0.99


def test_inspect_reports_problems():
    v, f = _t_junction_cube()
    report = tm.inspect(v, f)
    assert report.t_junctions == 1 and report.holes == 1 and not report.closed
    assert "T-junctions" in str(report)
    clean = tm.inspect(*naive.cube())
    assert clean.problems == [] and clean.watertight and clean.genus == 0
    assert clean.volume == pytest.approx(1.0)
    fixed = tm.repair(v, f)
    assert tm.inspect(fixed).problems == []
