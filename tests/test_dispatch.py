"""The dispatch registry (touche/dispatch.py), tested from its own entries.

Every registered (verb, kind_a, kind_b) runs on seeded random instances of the two kinds and is
checked against the slow references (tests/naive/pairs.py for distances and closest points,
tests/naive/toi.py for first contacts) where they reach, and everywhere for consistency with the
other verbs: distance > 0 exactly when the shapes do not intersect, closest points at the
reported distance and on their shapes, ray hits exactly where the Ray shape intersects, contact
and intersection points on both shapes, mirrored pairs giving mirrored answers. Every
(verb, kind_a, kind_b) the registry does not list raises UnsupportedQuery naming the verb and
the shapes. The kernels' own guards (pairs.is_supported, manifold.contact_supported) and the
kind-code ranges the pair engine compares agree with the registry's categories.
"""
import contextlib
import zlib

import numpy as np
import pytest

from naive import pairs as NP
import touche as tc
from naive.toi import first_contact_by_sampling
from touche import dispatch
from touche._kernels import kinds as K

# how far a witness point may lie outside its shape, and how far apart two computations of one
# distance may be (shapes are about 1 in size)
ON_SHAPE = 1e-6
SAME = 1e-6
# signed distances closer to 0 than this are "touching": either intersects answer is right
TOUCHING_BAND = 1e-7
POSES_PER_PAIR = 6
T_MAX = 2.0


def _instances(seed):
    """One shape of every kind, sizes and placements drawn from ``seed``."""
    rng = np.random.default_rng(seed)

    def size(low=0.3, high=0.8):
        return float(rng.uniform(low, high))

    def unit():
        v = rng.normal(size=3)
        return v / np.linalg.norm(v)

    def near(scale=0.3):
        return rng.normal(size=3) * scale

    sides = 5
    angles = np.sort(rng.uniform(0.0, 2.0 * np.pi, sides))
    polygon = np.column_stack([np.cos(angles), np.sin(angles), np.zeros(sides)]) * size(0.5, 0.9)
    reach = np.diag(rng.uniform(0.5, 0.9, 3))
    octahedron = np.vstack([reach, -reach])  # +x, +y, +z, -x, -y, -z
    faces = [[0, 1, 2], [1, 3, 2], [3, 4, 2], [4, 0, 2], [1, 0, 5], [3, 1, 5], [4, 3, 5], [0, 4, 5]]
    shapes = [
        tc.Point(near()),
        tc.Sphere(size(), center=near(0.1)),
        tc.Segment(near(0.5), near(0.5)),
        tc.Capsule(size(0.2, 0.4), size(0.5, 1.0)),
        tc.Ray(near(), unit()),
        tc.Line(near(), unit()),
        tc.Triangle(*(rng.normal(size=(3, 3)) * 0.6)),
        tc.Tetrahedron(*(rng.normal(size=(4, 3)) * 0.6)),
        tc.Box(rng.uniform(0.5, 1.4, 3)),
        tc.ConvexPolygon(polygon),
        tc.ConvexPolyhedron(rng.normal(size=(12, 3)) * 0.5),
        tc.Cylinder(size(0.3, 0.5), size(0.6, 1.2)),
        tc.Cone(size(0.3, 0.6), size(0.6, 1.2)),
        tc.Ellipsoid(rng.uniform(0.3, 0.7, 3)),
        tc.RoundedBox(rng.uniform(0.6, 1.4, 3), size(0.05, 0.25)),
        tc.TaperedCapsule(size(0.2, 0.5), size(0.1, 0.4), size(0.4, 1.0)),
        tc.Plane(unit(), float(rng.uniform(-0.2, 0.2))),
        tc.HalfSpace(unit(), float(rng.uniform(-0.2, 0.2))),
        tc.TriangleMesh(octahedron, faces),
    ]
    by_kind = {shape.kind: shape for shape in shapes}
    assert sorted(by_kind) == list(range(K.NUM_KINDS))
    return by_kind


FIRST = _instances(17)  # the A side of a pair
SECOND = _instances(29)  # the B side: another instance, so same-kind pairs are two shapes
NAMES = {kind: type(shape).__name__ for kind, shape in FIRST.items()}


def _poses(rng, count, spread=1.0):
    poses = np.empty((count, 4, 4))
    for i in range(count):
        poses[i] = NP.pose(NP.random_rotation(rng), rng.uniform(-spread, spread, 3))
    return poses


def _rng(*key):
    """A generator seeded by the test's own key (the same instance on every run)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _entry_id(entry):
    verb, kind_a, kind_b = entry[:3]
    return f"{verb}-{NAMES[kind_a]}-{NAMES[kind_b]}"


def _within(shape, pose, point):
    """Distance from a world point to the posed shape (0 inside a solid)."""
    return tc.closest_point(shape, pose, point).distance


# ----------------------------------------------------------------------------------------------
# the table itself
def test_categories_are_the_code_ranges_the_pair_engine_compares():
    """pairs._core and fastpaths compare kind codes by range (kb <= SPHERE, <= LINE, ...): the
    registry's core categories must be those ranges, in that order, covering every kind once."""
    codes = []
    for category in dispatch.ENGINE_ORDER:
        span = sorted(category)
        assert span == list(range(span[0], span[-1] + 1)), category
        codes += span
    assert codes == list(range(K.NUM_KINDS))
    assert dispatch.FINITE_CONVEX | dispatch.UNBOUNDED | dispatch.MESHES == dispatch.ALL_KINDS
    assert not dispatch.FINITE_CONVEX & dispatch.UNBOUNDED
    assert dispatch.ROUNDED <= dispatch.RADIUS_PARAM <= dispatch.FINITE_CONVEX


def test_mirrors_are_registered_with_the_same_engine():
    for verb in dispatch.VERBS:
        if verb in (dispatch.CLOSEST_POINT, dispatch.RAYCAST):
            continue
        table = dispatch.routes(verb)
        for (kind_a, kind_b), route in table.items():
            mirror = table.get((kind_b, kind_a))
            assert mirror is not None and mirror.engine == route.engine, (verb, kind_a, kind_b)
            if kind_a == kind_b:
                assert not route.flip
            else:  # an engine with an order takes one of the two as given
                assert not (route.flip and mirror.flip), (verb, kind_a, kind_b)


def test_one_shape_verbs_are_keyed_on_their_query():
    assert {pair[0] for pair in dispatch.routes(dispatch.CLOSEST_POINT)} == {K.POINT}
    assert {pair[0] for pair in dispatch.routes(dispatch.RAYCAST)} == {K.RAY}


def test_supported_pairs_is_what_intersects_and_distance_answer():
    assert tc.SUPPORTED_PAIRS is dispatch.SUPPORTED_PAIRS
    for verb in (dispatch.INTERSECTS, dispatch.DISTANCE, dispatch.SIGNED_DISTANCE):
        assert set(dispatch.routes(verb)) == tc.SUPPORTED_PAIRS


def test_the_kernels_guards_agree_with_the_registry():
    """The compiled checks behind the Python ones: the pair engine answers every pair the
    registry sends to it (not mesh-mesh, which goes to touche.bvh), and the manifold kernel's
    own table is the registry's contacts table."""
    from touche._kernels import manifold, pairs

    for (kind_a, kind_b), route in dispatch.routes(dispatch.DISTANCE).items():
        expected = route.engine != dispatch.MESH_MESH
        assert pairs.is_supported(kind_a, kind_b) == expected, (kind_a, kind_b)
    contacts = dispatch.routes(dispatch.CONTACTS)
    for kind_a in range(K.NUM_KINDS):
        for kind_b in range(K.NUM_KINDS):
            assert manifold.contact_supported(kind_a, kind_b) == ((kind_a, kind_b) in contacts), (kind_a, kind_b)


def test_motion_families():
    start = tc.Pose.from_translation([1.0, 0.0, 0.0])
    linear, static = tc.Linear([1.0, 0.0, 0.0], start), tc.Static()
    screw = tc.Screw([1.0, 0.0, 0.0], [0.0, 0.0, 1.0], start)
    keyframes = tc.Keyframes([0.0, 1.0], np.stack([np.eye(4), start.matrix]))
    function = tc.CallableMotion(lambda t: np.eye(4), 1.0)
    quadratic = tc.QuadraticMatrix.from_motion(linear)
    family = dispatch.motion_family
    assert family(linear, static) == family(static, static) == dispatch.TRANSLATION
    assert family(screw, static) == family(linear, keyframes) == dispatch.RIGID
    assert family(function, screw) == family(static, function) == dispatch.CALLABLE
    assert family(quadratic, function) == family(linear, quadratic) == dispatch.QUADRATIC


# ----------------------------------------------------------------------------------------------
# the verbs run the engine the registry names (the answers alone cannot tell: the pair engine's
# brute force gives what the mesh trees give, and a declined closed form falls back to the engine)
class _Recorder:
    """Stands for a kernel module: records which of its functions a verb took."""

    def __init__(self, module):
        self.module = module
        self.taken = set()

    def __getattr__(self, name):
        self.taken.add(name)
        return getattr(self.module, name)


# the closed forms have a general entry and small ones for two families (point cores, two boxes)
_CLOSED_FORM_ENTRIES = {"checked_fast_intersects", "checked_point_core_intersects", "checked_box_box_intersects",
                        "checked_fast_distance_into", "checked_point_core_distance_into"}
_PAIR_ENTRY_POINTS = {
    (dispatch.INTERSECTS, dispatch.CLOSED_FORM): {"checked_fast_intersects", "checked_point_core_intersects",
                                                  "checked_box_box_intersects"},
    (dispatch.INTERSECTS, dispatch.PAIR_ENGINE): {"checked_intersects_one"},
    (dispatch.DISTANCE, dispatch.CLOSED_FORM): {"checked_fast_distance_into", "checked_point_core_distance_into"},
    (dispatch.DISTANCE, dispatch.PAIR_ENGINE): {"checked_distance_into", "checked_engine_distance_into"},
    (dispatch.INTERSECTS, dispatch.MESH_SHAPE): {"checked_mesh_intersects_one"},
    (dispatch.DISTANCE, dispatch.MESH_SHAPE): {"checked_mesh_distance_into"},
}


@pytest.mark.parametrize("verb", [dispatch.INTERSECTS, dispatch.DISTANCE, dispatch.SIGNED_DISTANCE])
def test_pair_verbs_run_the_routed_engine(verb, monkeypatch):
    from touche import bvh, query
    from touche._kernels import batch, bvh_shape

    engines, trees = _Recorder(batch), _Recorder(bvh_shape)
    monkeypatch.setattr(query, "_kernels", lambda: engines)
    monkeypatch.setattr(query, "_mesh_shape_kernels", lambda: trees)
    # no single-pair plans from earlier tests (they hold their kernels): each pair's first call
    # below takes the checked path, through the recorders
    for plans in ("_INTERSECTS_PLANS", "_DISTANCE_PLANS", "_MESH_SHAPE_PLANS"):
        monkeypatch.setattr(query, plans, {})
    mesh_pairs = []

    def reached_bvh(*args):
        mesh_pairs.append(args)
        raise LookupError("reached touche.bvh")  # stops distance there (intersects returns)

    monkeypatch.setattr(bvh, "intersects", lambda *args: mesh_pairs.append(args) or True)
    monkeypatch.setattr(bvh, "_distance_arrays", reached_bvh)
    monkeypatch.setattr(bvh, "_distance_pair", reached_bvh)  # one pose pair's compiled call
    entry_verb = dispatch.INTERSECTS if verb == dispatch.INTERSECTS else dispatch.DISTANCE
    for (kind_a, kind_b), route in dispatch.routes(verb).items():
        engines.taken.clear(), trees.taken.clear(), mesh_pairs.clear()
        a, b = FIRST[kind_a], SECOND[kind_b]
        if route.engine == dispatch.MESH_MESH:
            stops = pytest.raises(LookupError) if entry_verb == dispatch.DISTANCE else contextlib.nullcontext()
            with stops:
                getattr(tc, verb)(a, None, b, tc.Pose.from_translation([0.3, 0.0, 0.0]))
            assert len(mesh_pairs) == 1
            continue
        getattr(tc, verb)(a, None, b, tc.Pose.from_translation([0.3, 0.0, 0.0]))
        taken = engines.taken | trees.taken
        expected = _PAIR_ENTRY_POINTS[(entry_verb, route.engine)]
        assert len(expected & taken) == 1 and not mesh_pairs, (kind_a, kind_b, taken)
        if route.engine == dispatch.MESH_SHAPE:
            # the tree is searched for the mesh, whichever side it was given on
            assert not engines.taken
        elif route.engine == dispatch.PAIR_ENGINE:
            assert not (taken & _CLOSED_FORM_ENTRIES) and not trees.taken


def test_one_shape_verbs_run_the_routed_engine(monkeypatch):
    from touche import meshquery, query
    from touche._kernels import batch

    engines = _Recorder(batch)
    monkeypatch.setattr(query, "_kernels", lambda: engines)
    trees = []
    monkeypatch.setattr(meshquery, "closest_arrays", lambda *args: trees.append("closest"))
    monkeypatch.setattr(meshquery, "raycast_arrays", lambda *args: trees.append("raycast"))
    for plans in ("_CLOSEST_POINT_PLANS", "_RAYCAST_PLANS"):  # first calls: the checked path
        monkeypatch.setattr(query, plans, {})
    for (_, kind), route in dispatch.routes(dispatch.CLOSEST_POINT).items():
        for points, entry in (([0.0, 0.0, 2.0], "checked_closest_point_into"), ([[0.0, 0.0, 2.0]], "closest_points_many")):
            engines.taken.clear(), trees.clear()
            tc.closest_point(FIRST[kind], None, points)  # one point / a batch of one
            assert (trees == ["closest"]) == (route.engine == dispatch.MESH_TREE)
            assert (entry in engines.taken) == (route.engine == dispatch.PAIR_ENGINE)
    for (_, kind), route in dispatch.routes(dispatch.RAYCAST).items():
        for origins, entry in (([0.0, 0.0, 3.0], "checked_raycast_into"), ([[0.0, 0.0, 3.0]], "raycast_many")):
            engines.taken.clear(), trees.clear()
            tc.raycast(FIRST[kind], None, origins, [0.0, 0.0, -1.0])
            assert (trees == ["raycast"]) == (route.engine == dispatch.MESH_TREE)
            assert (entry in engines.taken) == (route.engine == dispatch.RAY_KERNEL)


_TIME_OF_IMPACT_HANDLERS = {
    dispatch.MESH_ADVANCEMENT: "_mesh_time_of_impact",
    dispatch.MESH_PYTHON_ADVANCEMENT: "_mesh_time_of_impact",
    dispatch.QUADRATIC_SAT: "_quadratic_time_of_impact",
    dispatch.PYTHON_ADVANCEMENT: "_callable_time_of_impact",
    dispatch.ADVANCEMENT: "_advancement_time_of_impact",
    dispatch.SAT: "_translational",
    dispatch.GJK_CAST: "_translational",
    dispatch.ALIGNED_BOXES_OR_SAT: "_translational",  # the boxes below turn: the SAT
    dispatch.SPHERE_SPHERE_CAST: "_analytic_time_of_impact",
    dispatch.CONVEX_PLANE_CAST: "_analytic_time_of_impact",
    dispatch.SPHERE_TRIANGLE_CAST: "_analytic_time_of_impact",
    dispatch.SPHERE_POLYGON_CAST: "_analytic_time_of_impact",
    dispatch.SPHERE_BOX_CAST: "_analytic_time_of_impact",
}


def test_time_of_impact_runs_the_routed_engine_in_its_order(monkeypatch):
    """Each entry reaches its handler, with the shapes in the engine's order (``flip``)."""
    from touche import impact

    calls = []
    for name in set(_TIME_OF_IMPACT_HANDLERS.values()):
        monkeypatch.setattr(impact, name, lambda *args, _name=name: calls.append((_name, args)))
    turned = NP.pose(NP.random_rotation(np.random.default_rng(3)), [2.0, 0.0, 0.0])
    for family, verb in dispatch.TIME_OF_IMPACT.items():
        for (kind_a, kind_b), route in dispatch.routes(verb).items():
            calls.clear()
            a, b = FIRST[kind_a], SECOND[kind_b]
            tc.time_of_impact(a, _moving(family, turned, [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]), b, None, T_MAX)
            assert len(calls) == 1 and calls[0][0] == _TIME_OF_IMPACT_HANDLERS[route.engine], (verb, kind_a, kind_b)
            name, args = calls[0]
            if name == "_translational":
                assert args[-1] == (dispatch.GJK_CAST if route.engine == dispatch.GJK_CAST else dispatch.SAT)
                continue
            if name == "_quadratic_time_of_impact":  # box-box: one order
                continue
            # (a, motion_a, b, motion_b, ..., flip): the shapes in the order the engine takes them
            assert args[-1] == route.flip
            first, second = (args[2], args[0]) if route.flip else (args[0], args[2])
            if route.engine == dispatch.CONVEX_PLANE_CAST:
                assert first.kind in dispatch.FINITE_CONVEX and second.kind in dispatch.PLANES
            elif name == "_analytic_time_of_impact":
                assert first.kind == K.SPHERE
            elif name == "_mesh_time_of_impact":
                assert first.kind == K.MESH
            else:
                assert first.kind in dispatch.FINITE_CONVEX


# ----------------------------------------------------------------------------------------------
# every registered entry on random instances
REGISTERED = list(dispatch.entries())
UNREGISTERED = [
    (verb, kind_a, kind_b)
    for verb in dispatch.VERBS
    for kind_a in range(K.NUM_KINDS)
    for kind_b in range(K.NUM_KINDS)
    if dispatch.route(verb, kind_a, kind_b) is None
    # the one-shape verbs can only be asked with their own query kind
    and not (verb == dispatch.CLOSEST_POINT and kind_a != K.POINT)
    and not (verb == dispatch.RAYCAST and kind_a != K.RAY)
]


def _in_reference_scope(kind_a, kind_b):
    """Pairs naive_pairs.ref_signed answers: no ellipsoid (no world description), a cylinder /
    cone / tapered capsule only against a point / sphere or a plane, not mesh-mesh."""
    pair = {kind_a, kind_b}
    if K.ELLIPSOID in pair or pair == {K.MESH}:
        return False
    for round_kind in (K.CYLINDER, K.CONE, K.TAPERED_CAPSULE):
        if round_kind in pair:
            other = (pair - {round_kind}) or {round_kind}
            if not other <= (dispatch.POINT_CORE | dispatch.PLANES):
                return False
    return True


def _check_distance_pair(verb, kind_a, kind_b):
    a, b = FIRST[kind_a], SECOND[kind_b]
    rng = _rng(verb, kind_a, kind_b)
    poses_a, poses_b = _poses(rng, POSES_PER_PAIR), _poses(rng, POSES_PER_PAIR, 0.3)
    batch = tc.distance(a, poses_a, b, poses_b)
    batch_hits = tc.intersects(a, poses_a, b, poses_b)
    np.testing.assert_array_equal(tc.signed_distance(a, poses_a, b, poses_b), batch.signed_distance)
    reference_ok = _in_reference_scope(kind_a, kind_b)
    for i, (pa, pb) in enumerate(zip(poses_a, poses_b)):
        one = tc.distance(a, pa, b, pb)
        hit = tc.intersects(a, pa, b, pb)
        assert hit == batch_hits[i]
        np.testing.assert_array_equal(one.signed_distance, batch.signed_distance[i])
        assert tc.signed_distance(a, pa, b, pb) == one.signed_distance or np.isnan(one.signed_distance)
        if one.status in (tc.Status.MAX_ITERATIONS, tc.Status.DEGENERATE):
            continue
        signed = one.signed_distance
        if signed > TOUCHING_BAND:
            assert one.status == tc.Status.SEPARATED and not hit
            # closest points at the reported distance, each on its shape
            assert abs(np.linalg.norm(one.point_b - one.point_a) - signed) <= SAME
            assert _within(a, pa, one.point_a) <= ON_SHAPE
            assert _within(b, pb, one.point_b) <= ON_SHAPE
        elif not signed >= -TOUCHING_BAND:  # penetrating (or an unknown depth: NaN)
            assert one.status == tc.Status.PENETRATING and hit
        # the mirrored pair: the same distance, the points swapped, the normal reversed
        mirror = tc.distance(b, pb, a, pa)
        assert tc.intersects(b, pb, a, pa) == hit
        if np.isfinite(signed):
            assert abs(mirror.signed_distance - signed) <= SAME * max(1.0, abs(signed))
        else:
            np.testing.assert_array_equal(mirror.signed_distance, signed)
        if signed > TOUCHING_BAND:
            np.testing.assert_allclose(mirror.normal, -one.normal, atol=1e-5)
            assert _within(a, pa, mirror.point_b) <= ON_SHAPE and _within(b, pb, mirror.point_a) <= ON_SHAPE
        if reference_ok:
            expected = NP.ref_signed(NP.world(a, pa), NP.world(b, pb))
            if expected > 10 * TOUCHING_BAND:
                assert abs(signed - expected) <= SAME, (signed, expected)
            elif expected < -10 * TOUCHING_BAND:
                assert hit and one.status == tc.Status.PENETRATING


def _check_closest_point(kind):
    shape = FIRST[kind]
    rng = _rng("closest", kind)
    pose = _poses(rng, 1)[0]
    points = rng.uniform(-1.5, 1.5, (20, 3))
    found = tc.closest_point(shape, pose, points)
    assert np.all(found.distance >= 0.0)
    np.testing.assert_allclose(np.linalg.norm(found.point - points, axis=1), found.distance, atol=SAME)
    for point, on_shape, dist in zip(points, found.point, found.distance):
        if kind == K.ELLIPSOID:  # no naive description: the point must lie on (or be) the ellipsoid
            local = (on_shape - pose[:3, 3]) @ pose[:3, :3] - shape.center
            level = np.sum((local / shape.radii) ** 2)
            assert (dist == 0.0 and level <= 1.0 + 1e-9) or abs(level - 1.0) <= 1e-7
            assert dist <= np.linalg.norm(point - pose[:3, 3] - pose[:3, :3] @ shape.center) + SAME
        else:
            assert abs(dist - NP.ref_point_distance(NP.world(shape, pose), point)) <= SAME


def _check_raycast(kind):
    """A hit exactly where the Ray shape from the same origin intersects the shape (a peer: the
    pair engine), at the reported t, on the shape's boundary."""
    shape = FIRST[kind]
    rng = _rng("raycast", kind)
    pose = _poses(rng, 1, 0.3)[0]
    origins = rng.normal(size=(16, 3))
    origins *= 3.0 / np.linalg.norm(origins, axis=1, keepdims=True)
    # towards points of the shape, give or take (hits and misses), the first four away from it
    targets = tc.closest_point(shape, pose, rng.normal(size=(16, 3)) * 0.5).point + rng.normal(size=(16, 3)) * 0.1
    directions = targets - origins
    directions[:4] = origins[:4]
    result = tc.raycast(shape, pose, origins, directions)
    assert result.hit.any() and (kind in dispatch.PLANES or not result.hit.all())
    for i in range(len(origins)):
        ray = tc.Ray(origins[i], directions[i])
        gap = tc.distance(ray, None, shape, pose).signed_distance
        if abs(gap) > TOUCHING_BAND or np.isnan(gap):
            assert bool(result.hit[i]) == tc.intersects(ray, None, shape, pose), i
        if result.hit[i]:
            unit = directions[i] / np.linalg.norm(directions[i])
            np.testing.assert_allclose(result.point[i], origins[i] + result.t[i] * unit, atol=SAME)
            assert _within(shape, pose, result.point[i]) <= ON_SHAPE


def _check_contacts(kind_a, kind_b):
    a, b = FIRST[kind_a], SECOND[kind_b]
    rng = _rng("contacts", kind_a, kind_b)
    poses_a, poses_b = _poses(rng, POSES_PER_PAIR), _poses(rng, POSES_PER_PAIR, 0.3)
    for pa, pb in zip(poses_a, poses_b):
        found = tc.contacts(a, pa, b, pb)
        assert found.status == tc.distance(a, pa, b, pb).status
        assert (found.count > 0) == (found.status != tc.Status.SEPARATED)
        for point, depth in zip(found.points, found.depths):
            assert _within(a, pa, point + 0.5 * depth * found.normal) <= ON_SHAPE
            assert _within(b, pb, point - 0.5 * depth * found.normal) <= ON_SHAPE
        mirror = tc.contacts(b, pb, a, pa)
        assert mirror.status == found.status and (mirror.count > 0) == (found.count > 0)


def _check_intersection(kind_a, kind_b):
    a, b = FIRST[kind_a], SECOND[kind_b]
    rng = _rng("intersection", kind_a, kind_b)
    poses_a, poses_b = _poses(rng, POSES_PER_PAIR), _poses(rng, POSES_PER_PAIR, 0.3)
    for pa, pb in zip(poses_a, poses_b):
        found = tc.intersection(a, pa, b, pb)
        signed = tc.distance(a, pa, b, pb).signed_distance
        if abs(signed) > TOUCHING_BAND:
            assert (found.kind == tc.SetKind.EMPTY) == (signed > 0.0)
        for point in found.points:
            assert _within(a, pa, point) <= ON_SHAPE and _within(b, pb, point) <= ON_SHAPE
        mirror = tc.intersection(b, pb, a, pa)
        assert mirror.kind == found.kind and mirror.count == found.count


def _moving(family, start, velocity, spin):
    """A motion of ``family`` from ``start`` with this velocity (and spin when it turns)."""
    if family == dispatch.TRANSLATION:
        return tc.Linear(velocity, start)
    if family == dispatch.RIGID:
        return tc.Screw(velocity, spin, start)
    if family == dispatch.CALLABLE:
        from scipy.spatial.transform import Rotation

        def pose_at(t):
            pose = np.array(start)
            pose[:3, :3] = Rotation.from_rotvec(np.asarray(spin) * t).as_matrix() @ start[:3, :3]
            pose[:3, 3] = start[:3, 3] + np.asarray(velocity) * t
            return pose

        return tc.CallableMotion(pose_at, float(np.linalg.norm(velocity)), float(np.linalg.norm(spin)))
    return tc.QuadraticMatrix.from_motion(tc.Linear(velocity, start))


def _check_time_of_impact(family, kind_a, kind_b):
    """The moving shape (A, unless A is a plane: a plane must not turn) heads for the other's
    neighbourhood; the first contact is compared with dense sampling of tc.intersects."""
    a, b = FIRST[kind_a], SECOND[kind_b]
    rng = _rng("time_of_impact", family, kind_a, kind_b)
    move_b = kind_a in dispatch.PLANES
    target = rng.uniform(-0.5, 0.5, 3)
    direction = rng.normal(size=3)
    start = NP.pose(NP.random_rotation(rng), target + 2.5 * direction / np.linalg.norm(direction))
    velocity = (target - start[:3, 3]) / T_MAX * 1.6
    spin = rng.normal(size=3) * (0.0 if family in (dispatch.TRANSLATION, dispatch.QUADRATIC) else 1.0)
    motion = _moving(family, start, velocity, spin)
    fixed = NP.pose(NP.random_rotation(rng), [0.0, 0.0, 0.0]) if family != dispatch.QUADRATIC else np.eye(4)
    if move_b:
        motion_a, motion_b = tc.Static(fixed), motion
    else:
        motion_a, motion_b = motion, tc.Static(fixed)
    found = tc.time_of_impact(a, motion_a, b, motion_b, T_MAX)

    def poses(t):
        return np.asarray(motion_a.pose_at(t), dtype=float), np.asarray(motion_b.pose_at(t), dtype=float)

    def overlaps_at(t):
        pa, pb = poses(t)
        return tc.intersects(a, pa, b, pb)

    first = first_contact_by_sampling(overlaps_at, T_MAX, samples=100)
    status = found.status
    if status == tc.ImpactStatus.MAX_ITERATIONS:
        return
    if status == tc.ImpactStatus.MISS:
        assert first is None, first
    else:
        # a real contact at the reported time, never after the sampled first one
        assert 0.0 <= found.time <= T_MAX
        pose_a, pose_b = poses(found.time)
        assert tc.distance(a, pose_a, b, pose_b).distance <= 1e-5
        if first is not None:
            assert found.time <= first + 1e-6
        assert (status == tc.ImpactStatus.ALREADY_TOUCHING) == (found.time == 0.0)
    mirror = tc.time_of_impact(b, motion_b, a, motion_a, T_MAX)
    assert mirror.status == status
    if status != tc.ImpactStatus.MISS:
        assert abs(mirror.time - found.time) <= 1e-6


def _check_registered(verb, kind_a, kind_b):
    if verb in (dispatch.INTERSECTS, dispatch.DISTANCE, dispatch.SIGNED_DISTANCE):
        _check_distance_pair(verb, kind_a, kind_b)
    elif verb == dispatch.CLOSEST_POINT:
        _check_closest_point(kind_b)
    elif verb == dispatch.RAYCAST:
        _check_raycast(kind_b)
    elif verb == dispatch.CONTACTS:
        _check_contacts(kind_a, kind_b)
    elif verb == dispatch.INTERSECTION:
        _check_intersection(kind_a, kind_b)
    else:
        family = next(family for family, name in dispatch.TIME_OF_IMPACT.items() if name == verb)
        _check_time_of_impact(family, kind_a, kind_b)


@pytest.mark.parametrize("entry", REGISTERED, ids=_entry_id)
def test_registered_entry_answers(entry):
    verb, kind_a, kind_b, _ = entry
    _check_registered(verb, kind_a, kind_b)


# ----------------------------------------------------------------------------------------------
# every other (verb, kind_a, kind_b) raises
def _ask(verb, a, b):
    """The public call behind (verb, a, b)."""
    start = tc.Pose.from_translation([2.0, 0.0, 0.0])
    if verb == dispatch.CLOSEST_POINT:
        return tc.closest_point(b, None, [0.0, 0.0, 1.0])
    if verb == dispatch.RAYCAST:
        return tc.raycast(b, None, [0.0, 0.0, 3.0], [0.0, 0.0, -1.0])
    if verb in (dispatch.INTERSECTS, dispatch.DISTANCE, dispatch.SIGNED_DISTANCE, dispatch.CONTACTS,
                dispatch.INTERSECTION):
        return getattr(tc, verb)(a, None, b, start)
    family = next(family for family, name in dispatch.TIME_OF_IMPACT.items() if name == verb)
    return tc.time_of_impact(a, _moving(family, start.matrix, [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]), b, None, T_MAX)


@pytest.mark.parametrize("entry", UNREGISTERED, ids=_entry_id)
def test_unregistered_entry_raises_naming_the_pair(entry):
    verb, kind_a, kind_b = entry
    a, b = FIRST[kind_a], SECOND[kind_b]
    with pytest.raises(tc.UnsupportedQuery) as caught:
        _ask(verb, a, b)
    message = str(caught.value)
    assert f"touche.{dispatch.public_name(verb, kind_a, kind_b)} is not supported for" in message
    if verb in dispatch.TIME_OF_IMPACT.values():  # the motions are named when they are the reason
        elsewhere = any(dispatch.supported(other, kind_a, kind_b) for other in dispatch.TIME_OF_IMPACT.values())
        assert ("time_of_impact (" in message) == elsewhere
    named = (type(b).__name__,) if verb in (dispatch.CLOSEST_POINT, dispatch.RAYCAST) else (
        type(a).__name__, type(b).__name__)
    assert all(name in message for name in named), message


def test_every_verb_has_entries_and_refusals_where_expected():
    """The counts the registry holds (a changed registration shows up here first)."""
    counts = {verb: len(dispatch.routes(verb)) for verb in dispatch.VERBS}
    assert counts == {
        "intersects": 361, "distance": 361, "signed_distance": 361, "closest_point": 19, "raycast": 15,
        "contacts": 252, "intersection": 25, "time_of_impact[translation]": 285,
        "time_of_impact[rigid]": 285, "time_of_impact[callable]": 285, "time_of_impact[quadratic]": 1,
    }
