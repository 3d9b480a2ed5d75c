"""Issue 23, finding 11: extreme magnitudes are answered or refused at the public boundary.

touche accepts coordinates, translations and sizes with |x| <= 1e75 and non-zero sizes >= 1e-75
(touche.tolerance.MAX_COORDINATE / MIN_SIZE: products of four lengths stay inside float64's
normal range). Inside that range a scene scaled by s answers as the unit scene, scaled; outside
it construction (or the call, for raw pose arrays and query points) raises a GeometryError
naming the argument and its value. Before: unit spheres 1e160 apart were at distance inf, a ray
direction of 1e200 missed everything, and sizes of 1e-163 ended in a ZeroDivisionError inside a
kernel."""
import numpy as np
import pytest

import touche as tc
from touche import tolerance

BIG = tolerance.MAX_COORDINATE
SMALL = tolerance.MIN_SIZE
GAP = 0.22  # the unit scene's gap between each shape (+x extent 0.5) and the partner sphere


def _octahedron(s):
    vertices = np.array([[0.5, 0, 0], [-0.5, 0, 0], [0, 0.5, 0], [0, -0.5, 0], [0, 0, 0.5], [0, 0, -0.5]]) * s
    faces = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]]
    return tc.TriangleMesh(vertices, faces)


_HULL_POINTS = np.random.default_rng(1).normal(size=(30, 3))
_HULL_POINTS = 0.5 * _HULL_POINTS / np.abs(_HULL_POINTS[:, 0]).max()

# every shape class at scale s; each reaches x = 0.5 s (where it meets the partner sphere)
SHAPES = {
    "Point": lambda s: tc.Point([0.5 * s, 0, 0]),
    "Sphere": lambda s: tc.Sphere(0.5 * s),
    "Box": lambda s: tc.Box([s, s, s]),
    "AABB": lambda s: tc.AABB([-0.5 * s] * 3, [0.5 * s] * 3),
    "Capsule": lambda s: tc.Capsule.from_points([0, 0, -0.3 * s], [0, 0, 0.3 * s], 0.5 * s),
    "Cylinder": lambda s: tc.Cylinder(0.5 * s, s),
    "Cone": lambda s: tc.Cone(0.5 * s, s),
    "Ellipsoid": lambda s: tc.Ellipsoid([0.5 * s, 0.4 * s, 0.3 * s]),
    "Segment": lambda s: tc.Segment([0.5 * s, -0.5 * s, 0], [0.5 * s, 0.5 * s, 0.1 * s]),
    "Triangle": lambda s: tc.Triangle([0.5 * s, 0, 0], [-0.5 * s, 0.5 * s, 0], [-0.5 * s, -0.4 * s, 0.2 * s]),
    "Tetrahedron": lambda s: tc.Tetrahedron([0.5 * s, 0, 0], [-0.5 * s, 0.5 * s, 0], [-0.5 * s, -0.4 * s, 0.2 * s],
                                            [-0.3 * s, 0, -0.5 * s]),
    "ConvexPolygon": lambda s: tc.ConvexPolygon(np.array([[0.5, 0, 0], [0, 0.5, 0.1], [-0.5, 0, 0.2], [0, -0.5, 0.1]]) * s),
    "ConvexPolyhedron": lambda s: tc.ConvexPolyhedron(_HULL_POINTS * s),
    "TriangleMesh": _octahedron,
    "HalfSpace": lambda s: tc.HalfSpace([1, 0, 0], 0.5 * s),
    "Plane": lambda s: tc.Plane([1, 0, 0], 0.5 * s),
}

# At the small edge every gap and depth of the scene is far below the absolute touching tolerance
# (touche.tolerance.ABSOLUTE = 1e-12, documented: gaps below it count as touching at any scale),
# so every status is TOUCHING. Where an iterative method decides by that tolerance the documented
# outcome is checked instead of the scaled unit answer: GJK / EPA on an ellipsoid stop as soon
# as the pair is within it (a distance or depth below ABSOLUTE), and GJK shape casting reports
# contact no later than the true first contact (ALREADY_TOUCHING at t = 0 here). Closed forms,
# the separating-axis engine, booleans and ray casts stay exact at that scale.
_TOLERANCE_DECIDES_WHEN_SMALL = {
    ("Ellipsoid", "distance"), ("Ellipsoid", "closest_point"), ("Ellipsoid", "contacts"),
    ("Ellipsoid", "signed_distance"),
    *((name, "time_of_impact") for name in
      ("Point", "Capsule", "Cylinder", "Cone", "Ellipsoid", "Segment", "Tetrahedron", "ConvexPolyhedron")),
}


def _answers(name, s, offset):
    """Every verb's answer for the scene scaled by s and moved by (offset, -offset, offset / 2),
    lengths divided by s and measured from the moved origin (so equal to the unit answers)."""
    shift = np.array([offset, -offset, 0.5 * offset])
    shape = SHAPES[name](s)
    partner = tc.Sphere(0.5 * s)
    place = tc.Pose.from_translation(shift)
    apart = tc.Pose.from_translation(shift + [(1.0 + GAP) * s, 0, 0])
    overlapping = tc.Pose.from_translation(shift + [0.9 * s, 0.05 * s, 0])
    out = {}
    result = tc.distance(shape, place, partner, apart)
    out["distance"] = (result.status, np.r_[result.distance, (result.point_a - shift), (result.point_b - shift)] / s)
    out["intersects"] = (None, np.array([tc.intersects(shape, place, partner, apart),
                                         tc.intersects(shape, place, partner, overlapping)], dtype=float))
    out["signed_distance"] = (None, np.array([tc.signed_distance(shape, place, partner, overlapping)]) / s)
    near = tc.closest_point(shape, place, shift + np.array([2.0, 0.1, 0.2]) * s)
    out["closest_point"] = (near.status, np.r_[near.distance, near.point - shift] / s)
    try:
        ray = tc.raycast(shape, place, shift + np.array([-3.0, 0.05, 0.02]) * s, [1.0, 0.0, 0.0])
        out["raycast"] = (None, np.r_[float(ray.hit), ray.t / s, (ray.point - shift) / s if ray.hit else []])
    except tc.UnsupportedQuery:
        out["raycast"] = (None, "unsupported")
    try:
        manifold = tc.contacts(shape, place, partner, overlapping)
        out["contacts"] = (manifold.status, np.r_[manifold.count, np.sort(manifold.depths) / s])
    except tc.UnsupportedQuery:
        out["contacts"] = (None, "unsupported")
    hit = tc.time_of_impact(shape, tc.Static(place), partner,
                            tc.Linear([-s, 0, 0], tc.Pose.from_translation(shift + [3.0 * s, 0, 0])), t_max=5.0)
    out["time_of_impact"] = (hit.status, np.array([hit.time]))  # times are not lengths: unscaled
    return out


def _same(got, expected, atol):
    if isinstance(expected, str) or isinstance(got, str):
        return got == expected
    return got.shape == expected.shape and bool(np.all(np.isclose(got, expected, rtol=1e-9, atol=atol) |
                                                           (np.isnan(got) & np.isnan(expected))))


_UNIT = {}


def _unit(name):
    if name not in _UNIT:
        _UNIT[name] = _answers(name, 1.0, 0.0)
    return _UNIT[name]


@pytest.mark.parametrize("name", sorted(SHAPES))
# the scene reaches 3 s from its origin, its smallest size is 0.3 s: both inside the range
@pytest.mark.parametrize("scale", [BIG / 4, 4 * SMALL], ids=["2.5e74", "4e-75"])
def test_scene_at_the_edges_of_the_range_is_the_unit_scene_scaled(name, scale):
    unit = _unit(name)
    got = _answers(name, scale, 0.0)
    for verb, (status, values) in got.items():
        unit_status, unit_values = unit[verb]
        if scale < 1.0 and (name, verb) in _TOLERANCE_DECIDES_WHEN_SMALL:
            if verb == "time_of_impact":  # a contact, never after the first contact
                assert status in (tc.ImpactStatus.HIT, tc.ImpactStatus.ALREADY_TOUCHING)
                assert values[0] <= unit_values[0] * (1 + 1e-9)
            else:  # the distance (contacts: the depths) reported is within the tolerance band
                lengths = values[1:] if verb == "contacts" else values[:1]
                assert np.all(np.abs(lengths * scale) <= tolerance.ABSOLUTE), verb
        else:
            assert _same(values, unit_values, 1e-9), (verb, values, unit_values)
        if scale < 1.0 and unit_status in (tc.Status.SEPARATED, tc.Status.PENETRATING):
            assert status == tc.Status.TOUCHING, verb
        elif verb != "time_of_impact" or (name, verb) not in _TOLERANCE_DECIDES_WHEN_SMALL or scale > 1.0:
            assert status == unit_status, verb


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_scene_at_the_largest_offset_is_the_unit_scene(name):
    offset = 0.99 * BIG  # translations (offset, -offset, offset / 2) + 3 scale: inside |t| <= 1e75
    scale = 1e-3 * offset
    unit = _unit(name)
    got = _answers(name, scale, offset)
    rounding = 64 * np.spacing(offset) / scale  # what the coordinates carry, in units of the scene
    for verb, (status, values) in got.items():
        unit_status, unit_values = unit[verb]
        atol = 1e-6 if verb == "time_of_impact" else 1e-9 + rounding
        if name == "Ellipsoid" and verb in ("distance", "closest_point"):
            # GJK on the ellipsoid (no closed form) stops within its tolerance: distances agree to
            # it, witness points only to about its square root
            assert _same(values[:1], unit_values[:1], atol), (verb, values, unit_values)
            assert _same(values[1:], unit_values[1:], 1e-6), (verb, values, unit_values)
        else:
            assert _same(values, unit_values, atol), (verb, values, unit_values)
        assert status == unit_status, verb


def test_the_edges_themselves_are_accepted():
    tc.Sphere(BIG)
    tc.Sphere(SMALL)
    tc.Box([SMALL, BIG, 1.0])
    tc.Capsule(SMALL, 0.0)  # a zero length stays allowed
    tc.Segment([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])  # so does a zero-length segment
    tc.Triangle([0, 0, 0], [0, 0, 0], [0, 0, 0])
    tc.Point([BIG, -BIG, BIG])
    pose = tc.Pose.from_translation([BIG, -BIG, BIG])
    # (radius 1e70: coordinates of 1e75 carry ~1e61 of rounding, a depth of 2 would be TOUCHING)
    assert tc.distance(tc.Sphere(1e70), pose, tc.Sphere(1e70), pose).status == tc.Status.PENETRATING


# ----------------------------------------------------------------------------------------------
# just outside the range: refused with the argument and its value named
_OUT = 1.01e75  # just above MAX_COORDINATE (literals: the messages print the exact value)
_TINY = 9.9e-76  # just below MIN_SIZE


@pytest.mark.parametrize("build, message", [
    (lambda: tc.Sphere(_OUT), r"radius is 1\.01e\+75, outside touche's range: sizes must be within \[1e-75, 1e\+75\]"),
    (lambda: tc.Sphere(_TINY), r"radius is 9\.9e-76, outside touche's range"),
    (lambda: tc.Sphere(1.0, center=[0, _OUT, 0]), r"center has a value of magnitude 1\.01e\+75"),
    (lambda: tc.Point([0, 0, -_OUT]), r"position has a value of magnitude 1\.01e\+75.*\|x\| <= 1e\+75"),
    (lambda: tc.Box([1.0, _TINY, 1.0]), r"extents\[y\] is 9\.9e-76"),
    (lambda: tc.Box([1.0, 1.0, _OUT]), r"extents has a value of magnitude 1\.01e\+75"),
    (lambda: tc.Box.from_half_extents([7.5e74, 1.0, 1.0]), r"extents has a value of magnitude 1\.5e\+75"),
    (lambda: tc.AABB([0, 0, 0], [1.0, 1.0, _TINY]), r"max - min along z is 9\.9e-76"),
    (lambda: tc.Capsule(1.0, _TINY), r"length is 9\.9e-76, outside touche's range: sizes must be 0 or within"),
    (lambda: tc.Capsule(_TINY, 1.0), r"radius is 9\.9e-76"),
    (lambda: tc.Capsule.from_points([0, 0, 0], [0, 0, _TINY], 1.0), r"a and b span 9\.9e-76"),
    (lambda: tc.Cylinder(1.0, _OUT), r"length is 1\.01e\+75"),
    (lambda: tc.Cone(_TINY, 1.0), r"radius is 9\.9e-76"),
    (lambda: tc.Ellipsoid([1.0, 1.0, _TINY]), r"radii\[z\] is 9\.9e-76"),
    (lambda: tc.Segment([0, 0, 0], [_TINY, 0, 0]), r"a and b span 9\.9e-76"),
    (lambda: tc.Triangle([0, 0, 0], [_TINY, 0, 0], [0, _TINY, 0]), r"vertices a, b, c span 9\.9e-76"),
    (lambda: tc.Tetrahedron([0, 0, 0], [_TINY, 0, 0], [0, _TINY, 0], [0, 0, _TINY]), r"span 9\.9e-76"),
    (lambda: tc.ConvexPolygon([[0, 0, 0], [_TINY, 0, 0], [0, _TINY, 0]]), r"vertices span 9\.9e-76"),
    (lambda: tc.ConvexPolyhedron(_HULL_POINTS * 2 * _OUT), r"points has a value of magnitude"),
    (lambda: tc.TriangleMesh([[0, 0, 0], [_OUT, 0, 0], [0, 1, 0]], [[0, 1, 2]]), r"vertices has a value of magnitude 1\.01e\+75"),
    (lambda: tc.TriangleMesh([[0, 0, 0], [_TINY, 0, 0], [0, _TINY, 0]], [[0, 1, 2]]), r"vertices span 9\.9e-76"),
    (lambda: tc.Plane([0, 0, 1], _OUT), r"offset has a value of magnitude 1\.01e\+75"),
    (lambda: tc.Ray([_OUT, 0, 0], [1, 0, 0]), r"origin has a value of magnitude 1\.01e\+75"),
])
def test_shapes_just_outside_the_range_are_refused(build, message):
    with pytest.raises(tc.GeometryError, match=message):
        build()


def _far_matrix(x):
    matrix = np.eye(4)
    matrix[0, 3] = x
    return matrix


def test_translations_just_outside_the_range_are_refused_wherever_poses_enter():
    sphere = tc.Sphere(1.0)
    with pytest.raises(tc.GeometryError, match=r"translation has a translation component of magnitude 1\.01e\+75"):
        tc.Pose.from_translation([0, _OUT, 0])
    with pytest.raises(tc.GeometryError, match=r"pose has a translation component of magnitude 1\.01e\+75"):
        tc.Pose(_far_matrix(-_OUT))
    # a raw (4, 4) array goes to the kernel unchecked (it checks it): the error names the argument
    for verb in (tc.distance, tc.intersects):
        with pytest.raises(tc.GeometryError, match=r"pose_b has a translation component of magnitude 1\.01e\+75"):
            verb(sphere, None, sphere, _far_matrix(_OUT))
    with pytest.raises(tc.GeometryError, match=r"pose_a has a translation component"):
        tc.contacts(sphere, _far_matrix(_OUT), sphere, None)
    # raw batches (one compiled pass) and Pose batches (one numpy pass)
    batch = np.tile(np.eye(4), (1000, 1, 1))
    batch[517, 2, 3] = _OUT
    with pytest.raises(tc.GeometryError, match=r"pose_a has a translation component of magnitude 1\.01e\+75"):
        tc.distance(sphere, batch, sphere, None)
    with pytest.raises(tc.GeometryError, match=r"pose has a translation component of magnitude 1\.01e\+75"):
        tc.Pose(batch)
    edge = tc.Pose.from_translation([BIG, 0, 0])
    with pytest.raises(tc.GeometryError, match="translation component"):
        edge @ edge  # a composition that leaves the range


def test_query_points_motions_and_margins_just_outside_the_range_are_refused():
    sphere = tc.Sphere(1.0)
    with pytest.raises(tc.GeometryError, match=r"points has a value of magnitude 1\.01e\+75"):
        tc.closest_point(sphere, None, [[0, 0, 0], [_OUT, 0, 0]])
    with pytest.raises(tc.GeometryError, match=r"origins has a value of magnitude 1\.01e\+75"):
        tc.raycast(sphere, None, [_OUT, 0, 0], [1, 0, 0])
    with pytest.raises(tc.GeometryError, match=r"velocity has a value of magnitude 1\.01e\+75"):
        tc.Linear([_OUT, 0, 0])
    with pytest.raises(tc.GeometryError, match=r"velocity has a value of magnitude 1\.01e\+75"):
        tc.Screw([_OUT, 0, 0])
    with pytest.raises(tc.GeometryError, match=r"margin is 1\.01e\+75"):
        tc.contacts(sphere, None, sphere, None, margin=_OUT)


def test_a_mesh_file_with_coordinates_outside_the_range_is_a_mesh_format_error(tmp_path):
    path = tmp_path / "huge.stl"
    path.write_text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1e300 0 0\nvertex 0 1 0\n"
                    "endloop\nendfacet\nendsolid x\n")
    with pytest.raises(tc.MeshFormatError, match=r"huge\.stl: vertices has a value of magnitude 1e\+300"):
        tc.mesh.load(path)


# ----------------------------------------------------------------------------------------------
# the issue's reproducers
def test_unit_spheres_1e160_from_the_origin_are_refused_not_infinitely_apart():
    with pytest.raises(tc.GeometryError, match=r"magnitude 1e\+160"):
        tc.distance(tc.Sphere(1.0), None, tc.Sphere(1.0), tc.Pose.from_translation([1e160, 0, 0]))
    with pytest.raises(tc.GeometryError, match=r"pose_b has a translation component of magnitude 1e\+160"):
        tc.distance(tc.Sphere(1.0), None, tc.Sphere(1.0), _far_matrix(1e160))


@pytest.mark.parametrize("length", [1e200, 1e-200, 1e300, 5e-324])
def test_ray_directions_of_any_magnitude_hit_like_a_unit_direction(length):
    shape = tc.Box([1.0, 2.0, 3.0])
    unit = tc.raycast(shape, None, [-5.0, 0.1, 0.2], [1.0, 0.0, 0.0])
    scaled = tc.raycast(shape, None, [-5.0, 0.1, 0.2], [length, 0.0, 0.0])
    assert unit.hit and scaled.hit
    assert scaled.t == unit.t == pytest.approx(4.5)  # t: a distance along the unit direction
    np.testing.assert_array_equal(scaled.point, unit.point)


_RAY_TARGETS = ("Sphere", "Cylinder", "Cone", "Ellipsoid", "Tetrahedron", "TriangleMesh", "ConvexPolygon", "Box")


@pytest.mark.parametrize("factor", [2.0 ** 700, 2.0 ** -700, 2.0 ** -1000, 1e200, 1e-200],
                         ids=["2^700", "2^-700", "2^-1000", "1e200", "1e-200"])
def test_oblique_ray_directions_of_any_magnitude_give_the_unit_answers(factor):
    direction = np.array([1.0, 2.0, 3.0])
    origins = np.array([[-1.0, -2.0, -3.0], [-0.9, -2.1, -2.9]])
    for name in _RAY_TARGETS:
        target = SHAPES[name](1.0)
        reference = tc.raycast(target, None, origins, direction)
        got = tc.raycast(target, None, origins, direction * factor)
        assert reference.hit.all(), name
        np.testing.assert_array_equal(got.hit, reference.hit)
        if np.log2(factor) % 1 == 0:  # a power of two scales exactly: the same bits as [1, 2, 3]
            np.testing.assert_array_equal(got.t, reference.t)
            np.testing.assert_array_equal(got.point, reference.point)
        else:  # 1e200 * [1, 2, 3] is [1, 2, 3] only to rounding
            np.testing.assert_allclose(got.t, reference.t, rtol=1e-14)


def test_max_t_keeps_its_meaning_for_scaled_directions():
    sphere = tc.Sphere(1.0)
    assert not tc.raycast(sphere, None, [-5.0, 0, 0], [1e200, 0, 0], max_t=3.9).hit
    assert tc.raycast(sphere, None, [-5.0, 0, 0], [1e200, 0, 0], max_t=4.0).hit
    assert tc.raycast(sphere, None, [-5.0, 0, 0], [1e-200, 0, 0], max_t=4.0).t == 4.0


def test_zero_directions_stay_an_error():
    with pytest.raises(tc.GeometryError, match="zero-length direction"):
        tc.raycast(tc.Sphere(1.0), None, [[0, 0, 5.0], [0, 0, 6.0]], [[0, 0, -1.0], [0.0, 0.0, 0.0]])
    with pytest.raises(tc.GeometryError, match="non-zero vector"):
        tc.Ray([0, 0, 0], [0, 0, 0])


def test_ray_shapes_and_plane_normals_of_any_magnitude_are_normalised():
    np.testing.assert_array_equal(tc.Ray([0, 0, 0], [0, 1e200, 0]).direction, [0.0, 1.0, 0.0])
    np.testing.assert_allclose(tc.Line([0, 0, 0], [3e-200, 4e-200, 0]).direction, [0.6, 0.8, 0.0], rtol=1e-15)
    np.testing.assert_array_equal(tc.Plane([0, 0, 1e-300], 2.0).normal, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("build", [
    lambda: tc.Sphere(1e-163),
    lambda: tc.Box([1e-163, 1e-163, 1e-163]),
    lambda: tc.Capsule(1e-163, 1e-163),
    lambda: tc.Cylinder(1e-163, 1e-163),
    lambda: tc.Cone(1e-163, 1e-163),
    lambda: tc.Ellipsoid([1e-163, 1e-163, 1e-163]),
    lambda: tc.Segment([0, 0, 0], [1e-163, 0, 0]),
    lambda: tc.TriangleMesh(np.eye(3) * 1e-163, [[0, 1, 2]]),
    lambda: tc.Sphere(1e160),
])
def test_sizes_of_the_issue_are_refused_at_construction(build):
    with pytest.raises(tc.GeometryError, match="outside touche's range"):
        build()
