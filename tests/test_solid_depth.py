"""Solid meshes (issue 19 item 2): penetration depth, directional separation, convex shapes held
by a solid mesh (touche/solids.py; docs/solids.md).

References, written here, numpy over ALL vertices / edges / triangles (no tree):

- the vertex depth: every vertex of one mesh classified by its winding number against the other
  (solid-angle sum, Van Oosterom-Strackee), its distance to the other's surface the minimum
  over every triangle (plane projection when it falls inside, else the nearest edge);
- the last contact along a direction: every vertex of A against every triangle of B, every
  vertex of B against every triangle of A (Cramer's rule on the line p + s d) and every edge of
  A against every edge of B (the 3 x 3 system p + u e + s d = r + w f), the largest s;
- overlap: manifold3d's exact intersection volume (float32) > 0.
"""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

import touche as tc
from touche.errors import GeometryError

# ---------------------------------------------------------------------------------------------
# meshes


def _arrays(mesh):
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


def _l_block():
    import manifold3d

    union = manifold3d.Manifold.cube([2.0, 1.0, 1.0]) + manifold3d.Manifold.cube([1.0, 2.0, 1.0])
    mesh = union.to_mesh()
    vertices = np.asarray(mesh.vert_properties, dtype=np.float64)[:, :3] - [0.8, 0.8, 0.5]
    return vertices, np.asarray(mesh.tri_verts, dtype=np.int64)


MESHES = {
    "box": _arrays(trimesh.creation.box([1.0, 0.7, 0.5])),
    "ico": _arrays(trimesh.creation.icosphere(1, 0.6)),
    "torus": _arrays(trimesh.creation.torus(0.6, 0.22, major_sections=14, minor_sections=7)),
    "l_block": _l_block(),
}


def _placed(vertices, pose):
    return vertices @ pose[:3, :3].T + pose[:3, 3]


def _random_poses(count, rng, spread):
    rotations = tc.Pose.random(count, seed=int(rng.integers(1 << 30))).matrix.copy()
    rotations[:, :3, 3] = rng.uniform(-spread, spread, size=(count, 3))
    return rotations


# ---------------------------------------------------------------------------------------------
# slow references


def _winding(vertices, faces, points):
    a = vertices[faces[:, 0]][None] - points[:, None]
    b = vertices[faces[:, 1]][None] - points[:, None]
    c = vertices[faces[:, 2]][None] - points[:, None]
    la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
    numerator = np.einsum("pfi,pfi->pf", a, np.cross(b, c))
    denominator = la * lb * lc + np.einsum("pfi,pfi->pf", a, b) * lc + np.einsum("pfi,pfi->pf", a, c) * lb \
        + np.einsum("pfi,pfi->pf", b, c) * la
    return (2.0 * np.arctan2(numerator, denominator)).sum(axis=1) / (4.0 * np.pi)


def _segment_distance(p, a, b):
    ab = b - a
    t = np.clip(np.einsum("pfi,pfi->pf", p - a, ab) / np.maximum(np.einsum("pfi,pfi->pf", ab, ab), 1e-300), 0, 1)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=2)


def _surface_distance(vertices, faces, points):
    a = vertices[faces[:, 0]][None]
    b = vertices[faces[:, 1]][None]
    c = vertices[faces[:, 2]][None]
    p = points[:, None]
    normal = np.cross(b - a, c - a)
    length = np.linalg.norm(normal, axis=2)
    unit = normal / np.maximum(length, 1e-300)[..., None]
    height = np.einsum("pfi,pfi->pf", p - a, unit)
    q = p - height[..., None] * unit
    inside = np.ones(height.shape, dtype=bool)
    for x, y in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("pfi,pfi->pf", np.cross(y - x, q - x), unit) >= 0.0
    inside &= length > 0.0
    edges = np.minimum(np.minimum(_segment_distance(p, a, b), _segment_distance(p, b, c)), _segment_distance(p, c, a))
    return np.where(inside, np.abs(height), edges).min(axis=1)


def _vertex_depth(solid_v, solid_f, other_v):
    """The deepest vertex of ``other_v`` inside the solid: (depth, index) or (0, -1)."""
    inside = np.abs(_winding(solid_v, solid_f, other_v)) >= 0.5
    if not inside.any():
        return 0.0, -1
    depth = _surface_distance(solid_v, solid_f, other_v[inside])
    return float(depth.max()), int(np.flatnonzero(inside)[np.argmax(depth)])


def _line_triangle_params(origins, direction, vertices, faces):
    """Every s with origins[i] + s * direction on a triangle (both signs of s)."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    e1, e2 = b - a, c - a
    h = np.cross(direction, e2)
    det = np.einsum("fi,fi->f", e1, h)
    good = np.abs(det) > 1e-14 * np.linalg.norm(e1, axis=1) * np.linalg.norm(e2, axis=1)
    s_vec = origins[:, None] - a[None]
    u = np.einsum("pfi,fi->pf", s_vec, h) / np.where(good, det, 1.0)
    q = np.cross(s_vec, e1[None])
    v = np.einsum("pfi,i->pf", q, direction) / np.where(good, det, 1.0)
    t = np.einsum("pfi,fi->pf", q, e2) / np.where(good, det, 1.0)
    hit = good & (u >= 0) & (v >= 0) & (u + v <= 1)
    return t[hit]


def _edges(faces):
    pairs = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    return np.unique(pairs, axis=0)


def _edge_edge_params(va, ea, vb, eb, direction):
    p, e = va[ea[:, 0]][:, None], (va[ea[:, 1]] - va[ea[:, 0]])[:, None]
    r, f = vb[eb[:, 0]][None], (vb[eb[:, 1]] - vb[eb[:, 0]])[None]
    d = np.broadcast_to(direction, e.shape)
    rhs = r - p
    e, f = np.broadcast_to(e, rhs.shape), np.broadcast_to(f, rhs.shape)
    d = np.broadcast_to(direction, rhs.shape)
    det = np.einsum("...i,...i->...", e, np.cross(d, -f))
    scale = np.linalg.norm(e, axis=-1) * np.linalg.norm(f, axis=-1)
    good = np.abs(det) > 1e-12 * scale
    safe = np.where(good, det, 1.0)
    u = np.einsum("...i,...i->...", rhs, np.cross(d, -f)) / safe
    s = np.einsum("...i,...i->...", e, np.cross(rhs, -f)) / safe
    w = np.einsum("...i,...i->...", e, np.cross(d, rhs)) / safe
    hit = good & (u >= 0) & (u <= 1) & (w >= 0) & (w <= 1)
    return s[hit]


def _last_contact(va, fa, vb, fb, direction):
    d = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)
    candidates = [np.zeros(1), _line_triangle_params(va, d, vb, fb), _line_triangle_params(vb, -d, va, fa),
                  _edge_edge_params(va, _edges(fa), vb, _edges(fb), d)]
    return float(np.concatenate(candidates).max())


def _overlap_volume(va, fa, vb, fb):
    import manifold3d

    a = manifold3d.Manifold(manifold3d.Mesh(vert_properties=va.astype(np.float32), tri_verts=fa.astype(np.uint32)))
    b = manifold3d.Manifold(manifold3d.Mesh(vert_properties=vb.astype(np.float32), tri_verts=fb.astype(np.uint32)))
    return (a ^ b).volume()


# ---------------------------------------------------------------------------------------------
# penetration depth


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e4])
@pytest.mark.parametrize("names", [("torus", "l_block"), ("l_block", "ico"), ("torus", "torus"), ("box", "torus")])
def test_vertex_depth_matches_brute_force(names, scale):
    va, fa = MESHES[names[0]]
    vb, fb = MESHES[names[1]]
    va, vb = va * scale, vb * scale
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb, solid=True)
    rng = np.random.default_rng(hash(names) % 1000 + int(np.log10(scale)) + 50)
    poses = _random_poses(12, rng, 0.9 * scale)
    batch = tc.penetration_depth(a, None, b, poses)
    result_batch = tc.distance(a, None, b, poses)
    penetrating = 0
    for i, pose in enumerate(poses):
        moved = _placed(vb, pose)
        depth_a, _ = _vertex_depth(moved, fb, va)  # A's vertices in B
        depth_b, _ = _vertex_depth(va, fa, moved)  # B's vertices in A
        expected = max(depth_a, depth_b)
        one = tc.penetration_depth(a, None, b, pose)
        assert one.depth == pytest.approx(expected, abs=1e-9 * scale), (i, one)
        assert batch.depth[i] == pytest.approx(one.depth, abs=1e-12 * scale)
        assert result_batch.signed_distance[i] == pytest.approx(one.signed_distance, abs=1e-12 * scale)
        single = tc.distance(a, None, b, pose)
        assert single.signed_distance == pytest.approx(one.signed_distance, abs=1e-12 * scale)
        if one.depth > 0:
            penetrating += 1
            assert one.status == tc.Status.PENETRATING and single.status == tc.Status.PENETRATING
            assert tc.signed_distance(a, None, b, pose) == pytest.approx(-one.depth, abs=1e-12 * scale)
            # the witness: a vertex, its closest point on the other surface, the normal between
            np.testing.assert_allclose(one.point_b - one.point_a, -one.depth * one.normal, atol=1e-9 * scale)
            if one.side == "a_in_b":
                np.testing.assert_allclose(one.point_a, va[one.vertex], atol=1e-12 * scale)
                triangle = _placed(vb, pose)[fb[one.face]]
            else:
                assert one.side == "b_in_a"
                np.testing.assert_allclose(one.point_b, _placed(vb, pose)[one.vertex], atol=1e-9 * scale)
                triangle = va[fa[one.face]]
            face_point = one.point_b if one.side == "a_in_b" else one.point_a
            assert _surface_distance(triangle, np.array([[0, 1, 2]]), face_point[None])[0] < 1e-9 * scale
        else:
            assert one.status != tc.Status.PENETRATING
    assert penetrating >= 3


def test_one_solid_and_a_surface_count_one_direction_only():
    va, fa = MESHES["torus"]
    vb, fb = MESHES["l_block"]
    solid = tc.TriangleMesh(vb, fb, solid=True)
    surface = tc.TriangleMesh(va, fa)
    rng = np.random.default_rng(7)
    for pose in _random_poses(10, rng, 0.8):
        moved = _placed(vb, pose)
        expected, _ = _vertex_depth(moved, fb, va)  # only the surface's vertices inside the solid
        assert tc.penetration_depth(surface, None, solid, pose).depth == pytest.approx(expected, abs=1e-9)
        expected_b, _ = _vertex_depth(va, fa, moved)
        assert tc.penetration_depth(solid, pose, surface, None).depth == pytest.approx(expected, abs=1e-9)
        del expected_b


def test_nested_solids_penetrate_and_the_depth_is_the_inner_vertices():
    va, fa = MESHES["torus"]
    outer = tc.TriangleMesh(va * 4.0, fa, solid=True)
    inner_v, inner_f = MESHES["l_block"]
    inner = tc.TriangleMesh(inner_v * 0.25, inner_f, solid=True)
    rng = np.random.default_rng(11)
    for pose in _random_poses(6, rng, 0.02):
        pose[:3, 3] += [2.4, 0.0, 0.0]  # inside the torus' tube (radius 0.88 around the circle of radius 2.4)
        moved = _placed(inner_v * 0.25, pose)
        assert (np.abs(_winding(va * 4.0, fa, moved)) >= 0.5).all()
        surface = tc.bvh.distance(outer, None, inner, pose).distance
        assert surface > 0.0  # no surface contact: only the solid holds it
        expected, _ = _vertex_depth(va * 4.0, fa, moved)
        result = tc.distance(outer, None, inner, pose)
        assert result.status == tc.Status.PENETRATING
        assert -result.signed_distance == pytest.approx(expected, abs=1e-9)
        assert tc.intersects(outer, None, inner, pose)
        assert tc.distance(outer, None, inner, pose, lower_bound_only=True).distance == 0.0
        # declared a surface, the outer mesh holds nothing
        plain = tc.TriangleMesh(va * 4.0, fa)
        assert tc.distance(plain, None, inner.as_solid(), pose).status == tc.Status.SEPARATED


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e3])
def test_overlap_status_agrees_with_manifold3d(scale):
    va, fa = MESHES["l_block"]
    vb, fb = MESHES["torus"]
    va, vb = va * scale, vb * scale
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb, solid=True)
    rng = np.random.default_rng(int(3 + np.log10(scale)))
    poses = _random_poses(40, rng, 1.4 * scale)
    result = tc.distance(a, None, b, poses)
    overlaps = tc.intersects(a, None, b, poses)
    seen = set()
    for i, pose in enumerate(poses):
        volume = _overlap_volume(va, fa, _placed(vb, pose), fb)
        if volume > 1e-6 * scale ** 3:  # well above manifold3d's float32 rounding
            assert overlaps[i] and result.status[i] != tc.Status.SEPARATED, i
            seen.add("overlap")
        elif volume == 0.0 and result.signed_distance[i] > 1e-5 * scale:
            assert not overlaps[i] and result.status[i] == tc.Status.SEPARATED, i
            seen.add("apart")
        if result.status[i] == tc.Status.PENETRATING:
            assert volume > 0.0
    assert seen == {"overlap", "apart"}


def test_convex_solids_get_the_exact_depth_bounded_by_directional_separation():
    va, fa = MESHES["box"]
    vb, fb = MESHES["ico"]
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb, solid=True)
    hull_a, hull_b = tc.ConvexPolyhedron(va), tc.ConvexPolyhedron(vb)
    rng = np.random.default_rng(5)
    directions = rng.normal(size=(64, 3))
    checked = 0
    for pose in _random_poses(10, rng, 0.6):
        one = tc.penetration_depth(a, None, b, pose)
        epa = tc.distance(hull_a, None, hull_b, pose)
        if epa.status != tc.Status.PENETRATING:
            continue
        checked += 1
        assert one.side == "convex"
        assert one.depth == pytest.approx(-epa.signed_distance, rel=1e-9)
        # vertex depth <= the translational depth <= the separation along any direction, and
        # along the depth's own normal (B moves by +normal, i.e. A by -normal) they agree
        moved = _placed(vb, pose)
        assert one.depth >= max(_vertex_depth(moved, fb, va)[0], _vertex_depth(va, fa, moved)[0]) - 1e-12
        along = [tc.separating_translation(a, None, b, pose, d) for d in directions]
        assert min(along) >= one.depth - 1e-9
        assert tc.separating_translation(a, None, b, pose, -one.normal) == pytest.approx(one.depth, abs=1e-9)
    assert checked >= 4


def test_vertex_depth_is_not_the_edge_depth():
    """Two bars crossing edge through edge: no vertex inside the other, yet they
    interpenetrate (the docs' caveat): TOUCHING with depth 0, while moving one out takes a
    positive translation."""
    vertices, faces = _arrays(trimesh.creation.box([4.0, 0.4, 0.4]))
    solid = tc.TriangleMesh(vertices, faces, solid=True)
    surface = tc.TriangleMesh(vertices, faces)  # not solid: no convex shortcut, the vertex depth alone
    pose_a = tc.Pose.from_rotvec([np.pi / 4, 0.0, 0.0]).matrix
    pose_b = tc.Pose.from_rotvec([0.0, 0.0, np.pi / 2]).matrix @ tc.Pose.from_rotvec([np.pi / 4, 0.0, 0.0]).matrix
    pose_b[:3, 3] = [0.0, 0.0, 0.5]
    result = tc.penetration_depth(surface, pose_a, solid, pose_b)
    assert result.depth == 0.0 and result.status == tc.Status.TOUCHING
    along = tc.separating_translation(surface, pose_a, solid, pose_b, [0.0, 0.0, -1.0])
    assert along == pytest.approx(2 * 0.2 * np.sqrt(2) - 0.5, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# directional separation


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e5])
@pytest.mark.parametrize("names", [("torus", "l_block"), ("box", "ico"), ("torus", "torus")])
def test_separating_translation_is_the_last_contact(names, scale):
    va, fa = MESHES[names[0]]
    vb, fb = MESHES[names[1]]
    va, vb = va * scale, vb * scale
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb)  # solid or not: the same answer
    rng = np.random.default_rng(len(names[0]) * 31 + len(names[1]) + int(np.log10(scale)) + 7)
    poses = _random_poses(8, rng, 1.0 * scale)
    directions = rng.normal(size=(8, 3))
    batch = tc.separating_translation(a, None, b, poses, directions[0])
    positive = 0
    for pose, direction in zip(poses, directions):
        s = tc.separating_translation(a, None, b, pose, direction)
        expected = _last_contact(va, fa, _placed(vb, pose), fb, direction)
        assert s == pytest.approx(expected, abs=1e-9 * scale)
        assert s == pytest.approx(tc.separating_translation(a, None, b.as_solid(), pose, direction * 3.0), abs=1e-14 * scale)
        unit = direction / np.linalg.norm(direction)
        step = 1e-9 * scale
        after = tc.Pose.from_translation((s + step) * unit).matrix
        assert not tc.intersects(a, after, b.as_solid(), pose)
        if s > 0.0:
            positive += 1
            before = tc.Pose.from_translation((s - step) * unit).matrix
            assert tc.intersects(a, before, b.as_solid(), pose)
    assert positive >= 3
    expected_batch = [tc.separating_translation(a, None, b, pose, directions[0]) for pose in poses]
    np.testing.assert_array_equal(batch, expected_batch)


def test_separating_translation_against_time_of_impact():
    """The mesh time of impact is conservative advancement: moving A back from beyond B it
    reports a first contact never after the true one, so beyond - time >= the exact answer, by
    at most its time tolerance (1e-9 of t_max) plus the touching tolerance."""
    va, fa = MESHES["torus"]
    vb, fb = MESHES["l_block"]
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb, solid=True)
    rng = np.random.default_rng(19)
    for pose in _random_poses(6, rng, 0.8):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        exact = tc.separating_translation(a, None, b, pose, direction)
        beyond = 10.0
        start = tc.Pose.from_translation(beyond * direction)
        hit = tc.time_of_impact(a, tc.Linear(-direction, start), b, pose, t_max=2 * beyond)
        assert hit.status == tc.ImpactStatus.HIT
        conservative = beyond - hit.time
        assert exact - 1e-12 <= conservative <= exact + 1e-9 * 2 * beyond + 1e-9


def test_separating_translation_touching_faces_and_apart():
    vertices, faces = _arrays(trimesh.creation.box([1.0, 1.0, 1.0]))
    a = tc.TriangleMesh(vertices, faces, solid=True)
    side = tc.Pose.from_translation([1.0, 0.0, 0.0])  # face to face
    assert tc.separating_translation(a, None, a, side, [-1.0, 0.0, 0.0]) == 0.0
    assert tc.separating_translation(a, None, a, side, [1.0, 0.0, 0.0]) == pytest.approx(2.0)
    # sliding along the shared face: the contact lasts until the boxes meet edge to edge
    assert tc.separating_translation(a, None, a, side, [0.0, 1.0, 0.0]) == pytest.approx(1.0)
    far = tc.Pose.from_translation([5.0, 0.0, 0.0])
    assert tc.separating_translation(a, None, a, far, [0.0, 0.0, 1.0]) == 0.0
    assert tc.separating_translation(a, None, a, far, [1.0, 0.0, 0.0]) == pytest.approx(6.0)
    nested = tc.TriangleMesh(vertices * 0.25, faces, solid=True)
    assert tc.separating_translation(nested, None, a, None, [0.0, 0.0, 1.0]) == pytest.approx(0.625)


# ---------------------------------------------------------------------------------------------
# a convex shape inside a solid mesh


def test_shapes_inside_a_solid_mesh_overlap():
    va, fa = MESHES["torus"]
    outer_v = va * 5.0
    solid = tc.TriangleMesh(outer_v, fa, solid=True)
    surface = tc.TriangleMesh(outer_v, fa)
    rng = np.random.default_rng(23)
    shapes = [tc.Sphere(0.15), tc.Box([0.2, 0.1, 0.15]), tc.Capsule(0.08, 0.2), tc.Cylinder(0.1, 0.2),
              tc.Cone(0.1, 0.2), tc.Ellipsoid([0.1, 0.15, 0.05]), tc.Point([0.0, 0.0, 0.0])]
    angles = rng.uniform(0, 2 * np.pi, size=len(shapes))
    poses = _random_poses(len(shapes), rng, 0.05)
    poses[:, :3, 3] += np.stack([3.0 * np.cos(angles), 3.0 * np.sin(angles), np.zeros_like(angles)], axis=1)
    for shape, pose in zip(shapes, poses):
        assert tc.distance(shape, pose, surface, None).status == tc.Status.SEPARATED  # not touching the surface
        assert not tc.intersects(shape, pose, surface, None)
        assert tc.intersects(shape, pose, solid, None) and tc.intersects(solid, None, shape, pose)
        assert tc.intersects(shape, pose, solid, None, margin=0.01)
        result = tc.distance(shape, pose, solid, None)
        assert result.status == tc.Status.PENETRATING
        gap = tc.distance(shape, pose, surface, None).distance
        depth = -result.signed_distance
        # the reported point is the shape's, inside the solid, at the reported depth
        assert depth >= gap - 1e-12
        assert np.abs(_winding(outer_v, fa, result.point_a[None]))[0] >= 0.5
        assert _surface_distance(outer_v, fa, result.point_a[None])[0] == pytest.approx(depth, abs=1e-9)
        assert tc.distance(shape, pose, tc.Point(result.point_a), None).distance < 1e-9
        np.testing.assert_allclose(result.point_b - result.point_a, -depth * result.normal, atol=1e-9)
        mirrored = tc.distance(solid, None, shape, pose)
        assert mirrored.signed_distance == pytest.approx(result.signed_distance, abs=1e-12)
        np.testing.assert_allclose(mirrored.normal, -result.normal, atol=1e-12)
    batch = tc.distance(shapes[0], poses, solid, None)
    assert (batch.status == tc.Status.PENETRATING).all()
    assert tc.intersects(shapes[0], poses, solid, None).all()
    # outside the solid (in the torus' hole): still apart
    hole = tc.Pose.from_translation([0.0, 0.0, 0.0])
    assert not tc.intersects(tc.Sphere(0.15), hole, solid, None)
    assert tc.distance(tc.Sphere(0.15), hole, solid, None).status == tc.Status.SEPARATED


def test_sphere_depth_inside_a_box_is_the_exact_translation():
    vertices, faces = _arrays(trimesh.creation.box([4.0, 4.0, 4.0]))
    solid = tc.TriangleMesh(vertices, faces, solid=True)
    result = tc.distance(tc.Sphere(0.5), tc.Pose.from_translation([1.0, 0.2, -0.1]), solid, None)
    # the nearest wall is x = 2: the sphere leaves it after 2 - (1.0 - 0.5) = 1.5
    assert result.signed_distance == pytest.approx(-1.5, abs=1e-12)
    np.testing.assert_allclose(result.normal, [-1.0, 0.0, 0.0], atol=1e-12)


# ---------------------------------------------------------------------------------------------
# bad input


def test_bad_input_raises_clear_errors():
    va, fa = MESHES["box"]
    solid = tc.TriangleMesh(va, fa, solid=True)
    surface = tc.TriangleMesh(va, fa)
    with pytest.raises(GeometryError, match="needs a solid mesh"):
        tc.penetration_depth(surface, None, surface, None)
    with pytest.raises(GeometryError, match="two triangle meshes"):
        tc.penetration_depth(solid, None, tc.Sphere(1.0), None)
    with pytest.raises(GeometryError, match="not a solid"):
        tc.TriangleMesh(va, fa[:-1], solid=True)  # open
    with pytest.raises(GeometryError, match="not a solid"):
        tc.TriangleMesh(va, fa[:-1]).as_solid()
    for bad in ([np.nan, 0.0, 1.0], [0.0, 0.0, 0.0], [np.inf, 0.0, 0.0], [1.0, 0.0], "x"):
        with pytest.raises(GeometryError, match="direction"):
            tc.separating_translation(solid, None, surface, None, bad)
    with pytest.raises(GeometryError, match="two triangle meshes"):
        tc.separating_translation(tc.Box([1, 1, 1]), None, solid, None, [1.0, 0.0, 0.0])
    with pytest.raises(GeometryError):
        tc.separating_translation(solid, np.full((4, 4), np.nan), surface, None, [1.0, 0.0, 0.0])
    with pytest.raises(GeometryError, match="differ"):
        tc.penetration_depth(solid, tc.Pose.random(3, seed=1).matrix, solid, tc.Pose.random(2, seed=2).matrix)


def test_batch_results_pickle_and_name_their_sides():
    import pickle

    va, fa = MESHES["torus"]
    vb, fb = MESHES["l_block"]
    a = tc.TriangleMesh(va, fa, solid=True)
    b = tc.TriangleMesh(vb, fb, solid=True)
    poses = _random_poses(8, np.random.default_rng(29), 1.0)
    batch = tc.penetration_depth(a, None, b, poses)
    assert batch.side.shape == (8,) and set(batch.side) <= {"", "a_in_b", "b_in_a"}
    assert repr(batch) == "SolidPenetration(batch of 8)"
    for i, pose in enumerate(poses):
        one = tc.penetration_depth(a, None, b, pose)
        assert (one.side, one.vertex, one.face) == (batch.side[i], batch.vertex[i], batch.face[i])
    back = pickle.loads(pickle.dumps(tc.penetration_depth(a, None, b, poses[0])))
    assert back.depth == tc.penetration_depth(a, None, b, poses[0]).depth
    assert "depth=" in repr(back)


# ---------------------------------------------------------------------------------------------
# the compiled branch and bound (solid_depth.deepest_pairs) against the exhaustive path


def _dented_blob(level, radius):
    sphere = trimesh.creation.icosphere(level, radius)
    vertices = np.asarray(sphere.vertices).copy()
    vertices[:, 0] *= 1.0 + 0.3 * np.cos(3 * np.arctan2(vertices[:, 1], vertices[:, 2]))
    return vertices, np.asarray(sphere.faces, dtype=np.int64)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e4])
@pytest.mark.parametrize("solid_sides", ["both", "a", "b"])
def test_branch_and_bound_agrees_with_every_vertex_tested(scale, solid_sides):
    """The kernel's answer (solid_depth.deepest_pairs: vertex groups, the two sides bounding each
    other) equals the exhaustive path's (every vertex in the box classified, exact closest
    points in rounds) on seeded poses, single and batch, two solids or one."""
    from touche import solids

    torus = trimesh.creation.torus(1.0, 0.35, major_sections=40, minor_sections=12)
    va, fa = np.asarray(torus.vertices) * scale, np.asarray(torus.faces, dtype=np.int64)
    vb, fb = _dented_blob(3, 0.8 * scale)
    a = tc.TriangleMesh(va, fa, solid=solid_sides in ("both", "a"))
    b = tc.TriangleMesh(vb, fb, solid=solid_sides in ("both", "b"))
    rng = np.random.default_rng(7 + int(np.log10(scale)) + len(solid_sides))
    poses_b = _random_poses(16, rng, 0.6 * scale)
    poses_a = np.eye(4).reshape(1, 4, 4)
    if solid_sides == "both":  # both moving: neither frame is the world's
        poses_a = _random_poses(16, rng, 0.1 * scale)
    rows = np.arange(len(poses_b))
    fast = solids._depth_rows(a, poses_a, b, poses_b, rows)
    slow = solids._depth_rows_by_winding(a, poses_a, b, poses_b, rows)
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-12, atol=1e-15 * scale)
    assert (fast[0] > 0).sum() >= 8  # the poses interpenetrate: the search was exercised
    for i in rows:
        pose_a = poses_a[i if len(poses_a) > 1 else 0]
        one = solids._depth_rows(a, pose_a[None], b, poses_b[i:i + 1], np.arange(1))
        for got, batch in zip(one, fast):  # a batch row = the single call, bit for bit
            np.testing.assert_array_equal(got[0], batch[i])
        if fast[4][i] == solids.SIDE_NONE:
            assert fast[0][i] == 0.0 and fast[5][i] == -1 and fast[6][i] == -1
            continue
        # the witness: that vertex, at that depth from that face, the normal from A to B
        assert fast[4][i] == slow[4][i] and fast[5][i] == slow[5][i]  # (a face: any of those at the closest point)
        a_in_b = fast[4][i] == solids.SIDE_A_IN_B
        vertex_mesh, solid_mesh = (a, b) if a_in_b else (b, a)
        vertex_pose, solid_pose = (pose_a, poses_b[i]) if a_in_b else (poses_b[i], pose_a)
        vertex_point, closest = (fast[1][i], fast[2][i]) if a_in_b else (fast[2][i], fast[1][i])
        np.testing.assert_allclose(vertex_point, _placed(vertex_mesh._packed[2][fast[5][i]], vertex_pose), atol=1e-12 * scale)
        np.testing.assert_allclose(fast[1][i] - fast[2][i], fast[0][i] * fast[3][i], atol=1e-12 * scale)
        assert np.linalg.norm(fast[3][i]) == pytest.approx(1.0, abs=1e-12)
        triangle = _placed(solid_mesh._packed[2][solid_mesh._packed[3][fast[6][i]]], solid_pose)
        assert _surface_distance(triangle, np.array([[0, 1, 2]]), closest[None])[0] < 1e-9 * scale


def test_a_grazing_crossing_falls_back_to_the_winding_number():
    """A vertex whose crossing ray passes through an edge of the solid is not certified: the
    kernel marks the pose pair unsure and the answer comes from the exhaustive path (the same
    depth as the brute force)."""
    from touche import solids
    from touche.meshquery import _CROSSING_DIRECTION

    box = trimesh.creation.box([2.0, 2.0, 2.0])
    vb, fb = np.asarray(box.vertices, dtype=np.float64), np.asarray(box.faces, dtype=np.int64)
    # the diagonal of the +x face: the edge its two triangles share
    on_face = [f for f in fb if np.allclose(vb[f][:, 0], 1.0)]
    shared = sorted(set(on_face[0]) & set(on_face[1]))
    exit_point = 0.6 * vb[shared[0]] + 0.4 * vb[shared[1]]
    deepest = exit_point - 1.0 * _CROSSING_DIRECTION  # its ray leaves the box through that edge
    assert np.all(np.abs(deepest) < 1.0)
    others = deepest + np.array([[0.0, -0.2, 0.0], [0.0, -0.2, 0.1], [0.1, -0.25, 0.0]])
    # a surface (not solid): two convex solids would take the exact convex depth instead
    tetra = tc.TriangleMesh(np.vstack([deepest, others]), np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]))
    solid = tc.TriangleMesh(vb, fb, solid=True)
    identity = np.eye(4).reshape(1, 4, 4)
    depth, point_a, point_b, normal = np.zeros(1), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3))
    side, row, face = np.zeros(1, dtype=np.int8), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    unsure = np.zeros(1, dtype=np.bool_)
    solids._depth_kernels().deepest_pairs(
        *solids._depth_arguments(tetra), *solids._depth_arguments(solid), _CROSSING_DIRECTION, solids.SIDE_A_IN_B,
        identity, identity, depth, point_a, point_b, normal, side, row, face, unsure, 0, 1)
    assert unsure[0]  # the case under test: the ray through the edge is not certified
    expected, vertex = _vertex_depth(vb, fb, tetra._packed[2])
    assert vertex == 0 and expected == pytest.approx(1.0 - abs(deepest).max(), abs=1e-12)
    result = tc.penetration_depth(tetra, None, solid, None)
    assert result.depth == pytest.approx(expected, abs=1e-12)
    assert (result.side, result.vertex) == ("a_in_b", 0)
