"""The pair engine (touche.distance / touche.intersects, touche/_kernels/pairs.py) against the slow
references in naive_pairs.py, for every pair in touche.SUPPORTED_PAIRS.

Tolerances (S = size of the configuration: the shapes' bounding radii plus the translations):
- booleans must agree with the reference outside a band of 1e-9 S around touching;
- separated distances within 1e-9 S (the references are exact up to round-off, except the
  golden-section cylinder / cone distances, ~1e-15 relative);
- penetration depths within 1e-9 S of the exact minimum translation distance (Minkowski
  difference facets for polytopes; analytic for spheres, capsules, round solids, planes);
- closest / deepest points within 1e-9 S of their shapes, ``distance == |point_b - point_a|``
  within 1e-12 S, the normal unit within 1e-12.
"""
import zlib

import numpy as np
import pytest

import naive as N
import touche as tc
from touche._kernels import kinds as K

REL = 1e-9
NCASES = 200


# ------------------------------------------------------------------------------------------------
# representative shapes per class
def _polyhedron():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(12, 3)) * [0.7, 0.5, 0.6]
    return tc.ConvexPolyhedron(pts)


def _mesh():
    # a non-convex open surface: a folded strip, a fan and a zero-area triangle
    V = np.array([
        [-0.8, -0.4, 0.0], [-0.3, -0.4, 0.4], [0.2, -0.4, -0.1], [0.7, -0.4, 0.3],
        [-0.8, 0.4, 0.1], [-0.3, 0.4, 0.5], [0.2, 0.4, 0.0], [0.7, 0.4, 0.2],
        [0.0, 0.0, -0.6], [0.3, 0.3, -0.6], [0.6, 0.6, -0.6],
    ])
    F = np.array([[0, 1, 5], [0, 5, 4], [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [8, 2, 9], [8, 9, 10]])
    return tc.TriangleMesh(V, F)


SHAPES = {
    "Point": tc.Point([0.1, -0.2, 0.05]),
    "Sphere": tc.Sphere(0.6, center=[0.1, 0.0, 0.2]),
    "Segment": tc.Segment([-0.6, 0.1, 0.0], [0.5, -0.2, 0.3]),
    "Capsule": tc.Capsule(0.3, 1.2),
    "Ray": tc.Ray([0.2, 0.0, 0.0], [1.0, 0.3, -0.2]),
    "Line": tc.Line([0.0, 0.1, 0.0], [0.2, 1.0, 0.1]),
    "Triangle": tc.Triangle([0.0, 0.0, 0.0], [1.2, 0.1, 0.0], [0.3, 0.9, 0.1]),
    "Tetrahedron": tc.Tetrahedron([0, 0, 0], [1.0, 0.1, 0], [0.2, 0.9, 0.1], [0.3, 0.2, 0.8]),
    "Box": tc.Box([1.0, 0.6, 1.4]),
    "AABB": tc.AABB([-0.2, -0.5, -0.3], [0.6, 0.4, 0.5]),
    "ConvexPolygon": tc.ConvexPolygon([[0.6, 0, 0], [0.2, 0.55, 0.0], [-0.45, 0.35, 0], [-0.5, -0.3, 0], [0.1, -0.6, 0]]),
    "ConvexPolyhedron": _polyhedron(),
    "Cylinder": tc.Cylinder(0.4, 1.2),
    "Cone": tc.Cone(0.5, 1.0),
    "Plane": tc.Plane([0.0, 0.0, 1.0], 0.1),
    "HalfSpace": tc.HalfSpace([0.0, 0.0, 1.0], -0.2),
    "TriangleMesh": _mesh(),
}
NAMES = list(SHAPES)
UNBOUNDED = {"Ray", "Line", "Plane", "HalfSpace"}
PLANES = {"Plane", "HalfSpace"}
POLYTOPE_KINDS = range(K.TRIANGLE, K.POLYHEDRON + 1)

PAIRS = [
    (a, b)
    for i, a in enumerate(NAMES)
    for b in NAMES[i:]
    if (SHAPES[a].kind, SHAPES[b].kind) in tc.SUPPORTED_PAIRS
]


def test_pair_list_covers_supported_pairs():
    covered = {(SHAPES[a].kind, SHAPES[b].kind) for a, b in PAIRS}
    covered |= {(y, x) for x, y in covered}
    assert covered == set(tc.SUPPORTED_PAIRS)


def bounding_radius(name):
    shape = SHAPES[name]
    if name in UNBOUNDED:
        return 0.3
    if name == "Box" or name == "AABB":
        return float(np.linalg.norm(np.abs(shape.center) + shape.half_extents))
    if name in ("Cylinder", "Cone"):
        return float(np.hypot(shape.radius, 0.5 * shape.length))
    extra = getattr(shape, "radius", 0.0) if name in ("Sphere", "Capsule") else 0.0
    return float(np.linalg.norm(shape.points, axis=1).max()) + extra


def rot_z(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def anchor(name, rng):
    """A random point of the shape in its local frame (where B is aimed at A)."""
    shape = SHAPES[name]
    if name in ("Ray", "Line"):
        return shape.origin + rng.uniform(0.0, 0.5) * shape.direction
    if name in PLANES:
        return shape.normal * shape.offset
    if name in ("Cylinder", "Cone"):
        return np.array([0.0, 0.0, rng.uniform(-0.5, 0.5) * shape.length])
    if name == "TriangleMesh":
        tri = shape.vertices[shape.faces[rng.integers(len(shape.faces))]]
        return rng.dirichlet(np.ones(3)) @ tri
    if name in ("Box", "AABB"):
        return shape.center + rng.uniform(-1.0, 1.0, 3) * shape.half_extents
    verts = shape.points[: 1 if name in ("Point", "Sphere") else (2 if name in ("Segment", "Capsule") else int(shape.params[0]))]
    return rng.dirichlet(np.ones(len(verts))) @ verts


# B's anchor is placed at U(0, 1) * factor * (Ra + Rb) from A's anchor, in a random direction;
# factors chosen (with the reference only) so that both outcomes are common
FACTOR = {('Point', 'Sphere'): 1.0, ('Point', 'Capsule'): 0.7, ('Point', 'Box'): 0.7,
    ('Point', 'AABB'): 0.7, ('Point', 'Cylinder'): 1.0, ('Sphere', 'Sphere'): 1.4,
    ('Sphere', 'Segment'): 1.0, ('Sphere', 'Capsule'): 1.0, ('Sphere', 'Ray'): 1.4,
    ('Sphere', 'Line'): 1.4, ('Sphere', 'Triangle'): 0.7, ('Sphere', 'Tetrahedron'): 1.0,
    ('Sphere', 'Box'): 1.4, ('Sphere', 'AABB'): 1.4, ('Sphere', 'ConvexPolygon'): 1.0,
    ('Sphere', 'ConvexPolyhedron'): 1.0, ('Sphere', 'Cylinder'): 1.4, ('Sphere', 'Cone'): 1.4,
    ('Sphere', 'Plane'): 3.0, ('Sphere', 'HalfSpace'): 5.0, ('Sphere', 'TriangleMesh'): 1.0,
    ('Segment', 'Capsule'): 0.7, ('Segment', 'Triangle'): 0.25, ('Segment', 'Plane'): 1.0,
    ('Segment', 'HalfSpace'): 5.0, ('Capsule', 'Capsule'): 1.4, ('Capsule', 'Ray'): 0.7,
    ('Capsule', 'Line'): 0.7, ('Capsule', 'Tetrahedron'): 0.7, ('Capsule', 'Box'): 1.0,
    ('Capsule', 'AABB'): 1.0, ('Capsule', 'ConvexPolygon'): 0.7,
    ('Capsule', 'ConvexPolyhedron'): 0.7, ('Capsule', 'Plane'): 2.0, ('Capsule', 'HalfSpace'): 5.0,
    ('Capsule', 'TriangleMesh'): 0.7, ('Ray', 'Triangle'): 0.35, ('Ray', 'Box'): 1.0,
    ('Ray', 'AABB'): 0.7, ('Ray', 'ConvexPolyhedron'): 0.7, ('Ray', 'Plane'): 1.4,
    ('Ray', 'HalfSpace'): 5.0, ('Ray', 'TriangleMesh'): 0.35, ('Line', 'Box'): 1.0,
    ('Line', 'AABB'): 0.7, ('Line', 'ConvexPolyhedron'): 0.7, ('Triangle', 'Box'): 0.7,
    ('Triangle', 'Plane'): 1.4, ('Triangle', 'HalfSpace'): 5.0, ('Tetrahedron', 'Box'): 0.7,
    ('Tetrahedron', 'AABB'): 0.7, ('Tetrahedron', 'ConvexPolyhedron'): 0.7,
    ('Tetrahedron', 'Plane'): 2.0, ('Tetrahedron', 'HalfSpace'): 3.0, ('Box', 'Box'): 1.0,
    ('Box', 'AABB'): 0.7, ('Box', 'ConvexPolygon'): 1.0, ('Box', 'ConvexPolyhedron'): 0.7,
    ('Box', 'Plane'): 1.4, ('Box', 'HalfSpace'): 5.0, ('Box', 'TriangleMesh'): 1.0,
    ('AABB', 'AABB'): 0.7, ('AABB', 'ConvexPolygon'): 0.7, ('AABB', 'ConvexPolyhedron'): 0.7,
    ('AABB', 'Plane'): 1.4, ('AABB', 'HalfSpace'): 5.0, ('AABB', 'TriangleMesh'): 1.0,
    ('ConvexPolygon', 'ConvexPolyhedron'): 0.7, ('ConvexPolygon', 'Plane'): 1.0,
    ('ConvexPolygon', 'HalfSpace'): 3.0, ('ConvexPolyhedron', 'ConvexPolyhedron'): 0.7,
    ('ConvexPolyhedron', 'Plane'): 2.0, ('ConvexPolyhedron', 'HalfSpace'): 3.0,
    ('ConvexPolyhedron', 'TriangleMesh'): 0.7, ('Cylinder', 'Plane'): 3.0,
    ('Cylinder', 'HalfSpace'): 5.0, ('Cone', 'Plane'): 2.0, ('Cone', 'HalfSpace'): 5.0,
    ('Plane', 'TriangleMesh'): 2.0, ('HalfSpace', 'TriangleMesh'): 3.0}


def make_poses(a, b, rng, n, scale=1.0):
    """Seeded poses (n, 4, 4) for A and B with a mix of hits and misses."""
    ra, rb = bounding_radius(a), bounding_radius(b)
    Ta = np.empty((n, 4, 4))
    Tb = np.empty((n, 4, 4))
    for i in range(n):
        Ra = N.random_rotation(rng)
        Rb = N.random_rotation(rng)
        ta = rng.uniform(-0.5, 0.5, 3)
        if a in PLANES and b in PLANES and rng.random() < 0.5:
            Rb = Ra @ rot_z(rng.uniform(0, 2 * np.pi))  # parallel (exactly: R e_z is a column)
            if rng.random() < 0.5:
                Rb = Rb @ np.diag([1.0, -1.0, -1.0])
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        factor = FACTOR.get((a, b), 0.5)
        target = Ra @ anchor(a, rng) + ta + direction * rng.uniform(0.0, 1.0) * factor * (ra + rb)
        tb = target - Rb @ anchor(b, rng)
        Ta[i] = N.pose(Ra, ta * scale)
        Tb[i] = N.pose(Rb, tb * scale)
    return Ta, Tb


ALWAYS_MEET = {("Line", "Plane"), ("Line", "HalfSpace")}  # unless exactly parallel


def measure_zero_pair(a, b):
    """Pairs that meet with probability 0 at random poses (only by touching): no hit rate."""
    thin = {"Point", "Segment", "Ray", "Line"}
    flat = {"Triangle", "ConvexPolygon", "Plane", "TriangleMesh"}
    return (a in thin and b in thin) or ("Point" in (a, b) and (a in flat or b in flat))


def nan_depth_allowed(ga, gb):
    """Rays / lines through polytopes: the engine does not compute a depth (documented NaN)."""
    lin = ga["type"] == "linear" or gb["type"] == "linear"
    other = gb if ga["type"] == "linear" else ga
    return lin and (other["type"] == "mesh" or (other["type"] == "hull" and other["kind"] in POLYTOPE_KINDS))


def check_distance(a, b, Ta, Tb, res, hits_out, i, ref=None, size=None):
    """Compare one engine result (res: signed, pa, pb, normal, status) with the reference."""
    A, B = SHAPES[a], SHAPES[b]
    ga, gb = N.world(A, Ta), N.world(B, Tb)
    if ref is None:
        ref = N.ref_signed(ga, gb)
    S = size if size is not None else (bounding_radius(a) + bounding_radius(b)
                                        + np.abs(Ta[:3, 3]).max() + np.abs(Tb[:3, 3]).max())
    band = REL * S
    signed, pa, pb, normal, status = res
    ctx = (a, b, i, ref, signed, pa, pb, normal, status)
    if abs(ref) <= band:
        return ref
    if ref > band:
        hits_out.append(False)
        assert status == tc.Status.SEPARATED, ctx
        assert abs(signed - ref) <= REL * S, ctx
        assert abs(np.linalg.norm(pb - pa) - signed) <= 1e-12 * S, ctx
        assert abs(np.linalg.norm(normal) - 1.0) <= 1e-12, ctx
        np.testing.assert_allclose(normal * signed, pb - pa, atol=1e-12 * S, err_msg=str(ctx))
        assert N.ref_point_distance(ga, pa) <= REL * S, ctx
        assert N.ref_point_distance(gb, pb) <= REL * S, ctx
        return ref
    hits_out.append(True)
    assert status == tc.Status.PENETRATING, ctx
    if np.isnan(signed):
        assert nan_depth_allowed(ga, gb), ctx
        return ref
    if ref == -np.inf:
        assert signed == -np.inf, ctx
        return ref
    assert abs(signed - ref) <= REL * S, ctx
    depth = -signed
    assert abs(np.linalg.norm(normal) - 1.0) <= 1e-12, ctx
    assert N.ref_point_distance(ga, pa) <= REL * S, ctx
    assert N.ref_point_distance(gb, pb) <= REL * S, ctx
    assert abs((pa - pb) @ normal - depth) <= REL * S, ctx
    meshes = ga["type"] == "mesh" or gb["type"] == "mesh"
    planes = ga["type"] == "plane" or gb["type"] == "plane"
    if not meshes or planes:
        # B moved by depth along the normal just touches A: the normal is the MTD direction
        moved = Tb.copy()
        moved[:3, 3] += depth * normal
        after = N.ref_signed(ga, N.world(B, moved))
        assert abs(after) <= REL * S, ctx + (after,)
    if not meshes and not planes and ga["type"] != "linear" and gb["type"] != "linear":
        # deepest points: A's support along the normal, B's against it
        assert abs(N.ref_support(ga, normal)[1] - pa @ normal) <= REL * S, ctx
        assert abs(N.ref_support(gb, normal)[0] - pb @ normal) <= REL * S, ctx
    return ref


def _seed(*names):
    return zlib.crc32("-".join(names).encode())


def _count(a, b):
    if "TriangleMesh" in (a, b):
        return 120
    return NCASES


def _rows(result, i):
    return (result.signed_distance[i], result.point_a[i], result.point_b[i], result.normal[i],
            tc.Status(int(result.status[i])))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_pair_against_reference(a, b):
    rng = np.random.default_rng(_seed(a, b))
    n = _count(a, b)
    Ta, Tb = make_poses(a, b, rng, n)
    A, B = SHAPES[a], SHAPES[b]
    res = tc.distance(A, Ta, B, Tb)
    hit = tc.intersects(A, Ta, B, Tb)
    rev = tc.distance(B, Tb, A, Ta)
    hits = []
    for i in range(n):
        ref = check_distance(a, b, Ta[i], Tb[i], _rows(res, i), hits, i)
        S = bounding_radius(a) + bounding_radius(b) + np.abs(Ta[i][:3, 3]).max() + np.abs(Tb[i][:3, 3]).max()
        if abs(ref) > REL * S:
            assert bool(hit[i]) == (ref <= 0), (a, b, i, ref)
        # the reversed pair: same signed distance, points swapped, normal negated
        np.testing.assert_array_equal(rev.status[i], res.status[i])
        if np.isfinite(res.signed_distance[i]):
            assert abs(rev.signed_distance[i] - res.signed_distance[i]) <= 1e-12 * S
            if res.signed_distance[i] > REL * S:  # closest points are unique when separated
                np.testing.assert_allclose(rev.point_a[i], res.point_b[i], atol=1e-9 * S)
                np.testing.assert_allclose(rev.point_b[i], res.point_a[i], atol=1e-9 * S)
                np.testing.assert_allclose(rev.normal[i], -res.normal[i], atol=1e-9)
        else:
            assert np.array_equal(rev.signed_distance[i], res.signed_distance[i], equal_nan=True)
    assert len(hits) >= 0.9 * n
    rate = np.mean(hits)
    if measure_zero_pair(a, b):
        assert rate == 0.0
    elif (a, b) in ALWAYS_MEET:
        assert rate == 1.0
    else:
        assert 0.2 <= rate <= 0.8, (a, b, rate)
    # the single-call path equals the batch path
    for i in range(0, n, 20):
        one = tc.distance(A, Ta[i], B, Tb[i])
        assert np.array_equal(one.signed_distance, res.signed_distance[i], equal_nan=True)
        assert np.array_equal(one.point_a, res.point_a[i], equal_nan=True)
        assert np.array_equal(one.point_b, res.point_b[i], equal_nan=True)
        assert np.array_equal(one.normal, res.normal[i], equal_nan=True)
        assert one.status == res.status[i]
        assert tc.intersects(A, Ta[i], B, Tb[i]) == hit[i]
