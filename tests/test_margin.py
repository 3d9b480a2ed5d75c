"""Safety margins (``touche.intersects(..., margin=d)``) and certified lower bounds
(``touche.distance(..., lower_bound_only=True)``), issue 19 item 3, for every registered pair.

References (tests/naive/margin.py): ``distance <= margin`` and ``0 <= L <= distance`` from
today's exact ``touche.distance``; coal's ``CollisionRequest.security_margin`` where coal has
the pair. The instances are test_dispatch's (one shape of every kind, two draws).
"""
import zlib

import numpy as np
import pytest

from naive import margin as NM
from naive import pairs as NP
import touche as tc
from test_dispatch import FIRST, NAMES, SECOND
from touche import dispatch
from touche._kernels import kinds as K

POSES_PER_PAIR = 10
# two computations of one distance (the margin test's route and the reference) agree to this
# relative amount; margins closer than this to the distance are not compared
BOUNDARY = 1e-9
BAND = 1e-7  # random margins this close (relative) to the distance are not compared
SLACK = 1e-12  # a lower bound may exceed the exact distance by the rounding of either

PAIRS = sorted(dispatch.routes(dispatch.INTERSECTS))


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _poses(rng, count, spread):
    poses = np.empty((count, 4, 4))
    for i in range(count):
        poses[i] = NP.pose(NP.random_rotation(rng), rng.uniform(-spread, spread, 3))
    return poses


def _pair_id(pair):
    return f"{NAMES[pair[0]]}-{NAMES[pair[1]]}"


def _pair_poses(pair):
    rng = _rng("margin", pair)
    return FIRST[pair[0]], SECOND[pair[1]], _poses(rng, POSES_PER_PAIR, 0.3), _poses(rng, POSES_PER_PAIR, 1.8)


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_margin_is_distance_within_margin(pair):
    """Random margins, single and batch, against distance <= margin; then margins a relative
    1e-9 either side of each separated pose's distance."""
    a, b, poses_a, poses_b = _pair_poses(pair)
    rng = _rng("margins", pair)
    exact = NM.exact_distances(a, poses_a, b, poses_b)
    signed = tc.distance(a, poses_a, b, poses_b).signed_distance
    margins = rng.uniform(0.0, 0.8, POSES_PER_PAIR)
    compared = 0
    for i, margin in enumerate(margins):
        expected = not (signed[i] > margin)
        if abs(exact[i] - margin) <= BAND * max(1.0, margin):
            continue
        got = tc.intersects(a, poses_a[i], b, poses_b[i], margin=float(margin))
        assert got is expected, (i, margin, exact[i])
        compared += 1
    assert compared >= POSES_PER_PAIR // 2
    # the batch with one margin equals its single calls
    margin = float(np.median(margins))
    batch = tc.intersects(a, poses_a, b, poses_b, margin=margin)
    assert batch.dtype == np.bool_ and batch.shape == (POSES_PER_PAIR,)
    singles = [tc.intersects(a, poses_a[i], b, poses_b[i], margin=margin) for i in range(POSES_PER_PAIR)]
    assert batch.tolist() == singles
    # at the boundary: distance (1 +- 1e-9)
    for i in np.flatnonzero(exact > 1e-3):
        d = exact[i]
        assert tc.intersects(a, poses_a[i], b, poses_b[i], margin=d * (1.0 + BOUNDARY)), (i, d)
        assert not tc.intersects(a, poses_a[i], b, poses_b[i], margin=d * (1.0 - BOUNDARY)), (i, d)


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_lower_bound_is_certified(pair):
    """0 <= L <= the exact distance; L > 0 when clearly apart; L = 0 only when touching or
    overlapping; single equals batch."""
    a, b, poses_a, poses_b = _pair_poses(pair)
    exact = NM.exact_distances(a, poses_a, b, poses_b)
    result = tc.distance(a, poses_a, b, poses_b, lower_bound_only=True)
    bound = result.distance
    assert bound.shape == (POSES_PER_PAIR,) and result.status.dtype == np.int8
    assert NM.is_certified_lower_bound(bound, exact, SLACK * (1.0 + exact)).all(), (bound, exact)
    assert (bound[exact > 0.05] > 0.0).all(), (bound, exact)
    assert (exact[bound == 0.0] <= 1e-7).all(), (bound, exact)
    assert np.array_equal(result.status == tc.Status.SEPARATED, bound > 0.0) or not np.isnan(result.point_a).all()
    for i in range(0, POSES_PER_PAIR, 3):
        single = tc.distance(a, poses_a[i], b, poses_b[i], lower_bound_only=True)
        assert isinstance(single.distance, float)
        assert single.distance == bound[i]


def test_both_outcomes_are_exercised():
    """The random poses above put a fair share of pairs on both sides of the margins."""
    within = total = 0
    for pair in PAIRS[::7]:
        a, b, poses_a, poses_b = _pair_poses(pair)
        within += int(tc.intersects(a, poses_a, b, poses_b, margin=0.3).sum())
        total += POSES_PER_PAIR
    assert 0.2 <= within / total <= 0.8, within / total


def test_margin_zero_is_the_overlap_test():
    for pair in PAIRS[::5]:
        a, b, poses_a, poses_b = _pair_poses(pair)
        plain = tc.intersects(a, poses_a, b, poses_b)
        assert np.array_equal(tc.intersects(a, poses_a, b, poses_b, margin=0.0), plain)
        assert np.array_equal(tc.intersects(a, poses_a, b, poses_b, margin=0), plain)
        assert tc.intersects(a, poses_a[0], b, poses_b[0], margin=0.0) is bool(plain[0])


def test_touching_and_overlapping_are_within_every_margin():
    box = tc.Box([1.0, 1.0, 1.0])
    for offset in (1.0, 0.5, 0.0):  # face contact, overlap, same place
        pose = np.eye(4)
        pose[0, 3] = offset
        for margin in (0.0, 1e-12, 0.1, 10.0):
            assert tc.intersects(box, None, box, pose, margin=margin)
        assert tc.distance(box, None, box, pose, lower_bound_only=True).distance == 0.0


@pytest.mark.parametrize("scale", [1e-6, 1e6])
@pytest.mark.parametrize("names", [("Box", "Box"), ("Capsule", "Box"), ("Cylinder", "Cone"),
                                   ("ConvexPolyhedron", "Ellipsoid"), ("TriangleMesh", "TriangleMesh"),
                                   ("Box", "TriangleMesh")])
def test_margin_at_tiny_and_huge_scales(names, scale):
    shapes = {
        "Box": tc.Box(np.array([1.0, 0.6, 1.4]) * scale),
        "Capsule": tc.Capsule(0.3 * scale, 1.2 * scale),
        "Cylinder": tc.Cylinder(0.4 * scale, 1.2 * scale),
        "Cone": tc.Cone(0.5 * scale, 1.0 * scale),
        "ConvexPolyhedron": tc.ConvexPolyhedron(np.random.default_rng(7).normal(size=(12, 3)) * 0.6 * scale),
        "Ellipsoid": tc.Ellipsoid(np.array([0.7, 0.4, 0.3]) * scale),
        "TriangleMesh": tc.TriangleMesh(FIRST[K.MESH].vertices * scale, FIRST[K.MESH].triangles),
    }
    a, b = shapes[names[0]], shapes[names[1]]
    rng = _rng("scale", names, scale)
    poses_a = _poses(rng, 6, 0.3 * scale)
    poses_b = _poses(rng, 6, 2.0 * scale)
    exact = NM.exact_distances(a, poses_a, b, poses_b)
    bound = tc.distance(a, poses_a, b, poses_b, lower_bound_only=True).distance
    assert NM.is_certified_lower_bound(bound, exact, SLACK * (scale + exact)).all()
    for i in np.flatnonzero(exact > 1e-3 * scale):
        d = exact[i]
        assert tc.intersects(a, poses_a[i], b, poses_b[i], margin=d * (1.0 + BOUNDARY))
        assert not tc.intersects(a, poses_a[i], b, poses_b[i], margin=d * (1.0 - BOUNDARY))
        assert bound[i] > 0.0


@pytest.mark.parametrize("margin", [np.nan, np.inf, -np.inf, -1e-3, -0.0 - 1e-300, "1", None, True,
                                    np.array([0.1, 0.2]), [0.1], np.zeros((1, 1))])
def test_bad_margin_is_a_geometry_error(margin):
    box = tc.Box([1.0, 1.0, 1.0])
    poses = np.tile(np.eye(4), (2, 1, 1))
    with pytest.raises(tc.GeometryError, match="margin"):
        tc.intersects(box, None, box, None, margin=margin)
    with pytest.raises(tc.GeometryError, match="margin"):
        tc.intersects(box, poses, box, None, margin=margin)


def test_margin_accepts_numpy_scalars():
    box = tc.Box([1.0, 1.0, 1.0])
    pose = np.eye(4)
    pose[0, 3] = 1.25
    assert tc.intersects(box, None, box, pose, margin=np.float32(0.5))
    assert not tc.intersects(box, None, box, pose, margin=np.array(0.2))


def test_empty_batches():
    box = tc.Box([1.0, 1.0, 1.0])
    empty = np.zeros((0, 4, 4))
    assert tc.intersects(box, empty, box, None, margin=0.1).shape == (0,)
    assert tc.distance(box, empty, box, None, lower_bound_only=True).distance.shape == (0,)
    mesh = FIRST[K.MESH]
    assert tc.intersects(mesh, empty, mesh, None, margin=0.1).shape == (0,)
    assert tc.distance(mesh, empty, mesh, None, lower_bound_only=True).distance.shape == (0,)


# ----------------------------------------------------------------------------------------------
# coal: CollisionRequest.security_margin
coal = pytest.importorskip("coal")
import coal_adapter as CA  # noqa: E402


def _coal_collide_with_margin(ga, poses_a, gb, poses_b, margin):
    out = np.empty(len(poses_a), dtype=bool)
    for i, (ta, tb) in enumerate(zip(poses_a, poses_b)):
        request = coal.CollisionRequest()
        request.security_margin = margin
        result = coal.CollisionResult()
        out[i] = coal.collide(ga, CA.transform(ta), gb, CA.transform(tb), request, result) > 0
    return out


def _coal_mesh(mesh):
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(mesh.triangles), len(mesh.vertices))
    vertices = coal.StdVec_Vec3s()
    for p in mesh.vertices:
        vertices.append(np.array(p, dtype=np.float64))
    triangles = coal.StdVec_Triangle()
    for f in mesh.triangles:
        triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    model.addSubModel(vertices, triangles)
    model.endModel()
    return model


@pytest.mark.parametrize("names", [("sphere", "sphere"), ("sphere", "box"), ("box", "box"), ("capsule", "box"),
                                   ("capsule", "capsule"), ("mesh", "mesh"), ("box", "mesh")])
def test_margin_agrees_with_coal_security_margin(names):
    """coal collides two shapes when their distance is below security_margin (its narrow phase
    takes ``distance < margin``; both sides inflated by the margin as a whole, not each):
    away from the boundary the answers must be the same."""
    mesh = FIRST[K.MESH]
    touche_shapes = {name: (mesh if name == "mesh" else CA.touche_shape(name)) for name in names}
    coal_shapes = {name: (_coal_mesh(mesh) if name == "mesh" else CA.coal_shape(name)) for name in names}
    a, b = touche_shapes[names[0]], touche_shapes[names[1]]
    rng = _rng("coal", names)
    poses_a = _poses(rng, 60, 0.2)
    poses_b = _poses(rng, 60, 2.0)
    exact = NM.exact_distances(a, poses_a, b, poses_b)
    margin = float(np.median(exact))  # about half the poses within it
    ours = tc.intersects(a, poses_a, b, poses_b, margin=margin)
    theirs = _coal_collide_with_margin(coal_shapes[names[0]], poses_a, coal_shapes[names[1]], poses_b, margin)
    clear = np.abs(exact - margin) > 1e-6
    assert 0.2 <= ours[clear].mean() <= 0.8
    assert np.array_equal(ours[clear], theirs[clear]), np.flatnonzero(ours != theirs)
