"""The pair engine (touche.distance / touche.intersects, touche/_kernels/narrow/pairs.py) against the slow
references in naive/pairs.py, for every pair in touche.SUPPORTED_PAIRS.

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
from touche import dispatch
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

SMOOTH = tuple(sorted(dispatch.SMOOTH))  # the support-mapped solids (cylinder .. tapered capsule)


def routed_to_gjk(kind_a, kind_b):
    """Pairs with a smooth solid and no closed form go to GJK / EPA (and smooth solids vs meshes
    to GJK per triangle): test_convex_dispatch.py checks those, against references built from
    the smooth solid's support function."""
    low, high = sorted((kind_a, kind_b))
    if low in SMOOTH and high == K.MESH:
        return True
    # a point / sphere against a cylinder or cone has a closed form (pair_closed.point_vs_round)
    return high in SMOOTH and not (low <= K.SPHERE and high in (K.CYLINDER, K.CONE))


PAIRS = [
    (a, b)
    for i, a in enumerate(NAMES)
    for b in NAMES[i:]
    if (SHAPES[a].kind, SHAPES[b].kind) in tc.SUPPORTED_PAIRS
    and not routed_to_gjk(SHAPES[a].kind, SHAPES[b].kind)
    and not (a == b == "TriangleMesh")  # mesh-mesh (surfaces, no depth): tests/mesh/test_mesh_public.py
]


def test_pair_list_covers_supported_pairs():
    covered = {(SHAPES[a].kind, SHAPES[b].kind) for a, b in PAIRS}
    covered |= {(y, x) for x, y in covered}
    # ellipsoid pairs (the naive references have no ellipsoid) are in test_convex_dispatch.py;
    # Rounded shapes and tapered capsules against planes in test_dispatch.py, test_rounded.py and
    # test_tapered_capsule.py
    elsewhere = {K.ELLIPSOID, K.ROUNDED, K.TAPERED_CAPSULE}
    expected = {
        pair for pair in tc.SUPPORTED_PAIRS
        if not routed_to_gjk(*pair) and not elsewhere & set(pair) and pair != (K.MESH, K.MESH)
    }
    assert covered == expected


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
        both_half = a == b == "HalfSpace"  # parallel + same side always meet: favour the others
        if a in PLANES and b in PLANES and rng.random() < (0.9 if both_half else 0.5):
            Rb = Ra @ rot_z(rng.uniform(0, 2 * np.pi))  # parallel (exactly: R e_z is a column)
            if rng.random() < (0.8 if both_half else 0.5):
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


def config_size(a, b, Ta, Tb, scale=1.0):
    return scale * (bounding_radius(a) + bounding_radius(b)) + np.abs(Ta[:3, 3]).max() + np.abs(Tb[:3, 3]).max()


def check_distance(a, b, Ta, Tb, res, hits_out, i, shapes=None, scale=1.0):
    """Compare one engine result (res: signed, pa, pb, normal, status) with the reference;
    returns the reference signed distance. ``shapes`` overrides SHAPES[a], SHAPES[b]."""
    A, B = shapes if shapes is not None else (SHAPES[a], SHAPES[b])
    ga, gb = N.world(A, Ta), N.world(B, Tb)
    ref = N.ref_signed(ga, gb)
    S = config_size(a, b, Ta, Tb, scale)
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


# The contributor's fast tier (pytest -m "not slow") keeps one shape per code path of the engine
# (point core, linear, polytope, triangle, smooth solid, planes, mesh); CI runs every pair.
FAST_TIER_SHAPES = {"Sphere", "Capsule", "Ray", "Triangle", "Box", "ConvexPolyhedron", "Cylinder", "Plane",
                    "HalfSpace", "TriangleMesh"}


def _tiered(pairs):
    return [
        pytest.param(a, b, id=f"{a}-{b}",
                     marks=() if {a, b} <= FAST_TIER_SHAPES else pytest.mark.slow)
        for a, b in pairs
    ]


@pytest.mark.parametrize("a,b", _tiered(PAIRS))
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
        S = config_size(a, b, Ta[i], Tb[i])
        if abs(ref) > REL * S:
            assert bool(hit[i]) == (ref <= 0), (a, b, i, ref)
        # the reversed pair: same signed distance, points swapped, normal negated
        np.testing.assert_array_equal(rev.status[i], res.status[i])
        if np.isfinite(res.signed_distance[i]):
            assert abs(rev.signed_distance[i] - res.signed_distance[i]) <= 1e-12 * S
            if res.signed_distance[i] > REL * S:
                # closest points may form a set (parallel features); their difference is unique
                np.testing.assert_allclose(rev.point_a[i] - rev.point_b[i], res.point_b[i] - res.point_a[i], atol=1e-9 * S)
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


# ------------------------------------------------------------------------------------------------
# touching, parallel, coplanar, degenerate configurations (exact inputs, identity poses)
I4 = np.eye(4)


def translated(t):
    return N.pose(None, t)


TOUCHING = {
    "box face-face": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.AABB([1, 0.25, 0.5], [2, 1.5, 1.5]), I4),
    "box edge-edge": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.AABB([1, 1, 0.25], [2, 2, 2]), I4),
    "box corner-corner": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.AABB([1, 1, 1], [2, 2, 2]), I4),
    "tet vertex-face": (tc.Tetrahedron([0.5, 0.5, 1], [0, 0, 2], [1, 0, 2], [0, 1, 2]), I4,
                        tc.AABB([0, 0, 0], [1, 1, 1]), I4),
    "tet edge-edge": (tc.Tetrahedron([0, 0.5, 1], [1, 0.5, 1], [0.5, 0, 2], [0.5, 1, 2]), I4,
                      tc.Tetrahedron([0.5, 0, 1], [0.5, 1, 1], [0, 0.5, 0], [1, 0.5, 0]), I4),
    "polyhedron face-face": (tc.ConvexPolyhedron([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]]), I4,
                             tc.Box([1, 1, 1]), translated([0.25, 0.25, -0.5])),
    "segment crossing": (tc.Segment([0, 0, 0], [2, 0, 0]), I4, tc.Segment([1, -1, 0], [1, 1, 0]), I4),
    "point on segment": (tc.Point([0.5, 0, 0]), I4, tc.Segment([0, 0, 0], [1, 0, 0]), I4),
    "point on triangle": (tc.Point([0.25, 0.25, 0]), I4, tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]), I4),
    "point on box": (tc.Point([1, 0.5, 0.25]), I4, tc.AABB([0, 0, 0], [1, 1, 1]), I4),
    "sphere-sphere": (tc.Sphere(1.0), I4, tc.Sphere(1.0), translated([2, 0, 0])),
    "sphere-box face": (tc.Sphere(0.5), translated([0.5, 0.5, 1.5]), tc.AABB([0, 0, 0], [1, 1, 1]), I4),
    "capsule-box face": (tc.Capsule.from_points([0, 0, 2], [1, 0, 2], 1.0), I4, tc.AABB([0, -1, 0], [1, 1, 1]), I4),
    "capsule-capsule parallel": (tc.Capsule(0.5, 2.0), I4, tc.Capsule(0.5, 2.0), translated([1, 0, 0.5])),
    "segment on triangle edge": (tc.Segment([0.25, 0, 1], [0.5, 0, -1]), I4,
                                 tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]), I4),
    "triangle-triangle edge": (tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]), I4,
                               tc.Triangle([0.25, 0, 0], [0.75, 0, 0], [0.5, -1, 1]), I4),
    "triangle vertex on box": (tc.Triangle([0.5, 0.5, 1], [0, 0, 2], [1, 0, 3]), I4, tc.AABB([0, 0, 0], [1, 1, 1]), I4),
    "polygon on box face": (tc.ConvexPolygon([[0, 0, 1], [2, 0, 1], [2, 2, 1], [0, 2, 1]]), I4,
                            tc.AABB([0.5, 0.5, 0], [1, 1, 1]), I4),
    "box on plane": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.Plane([0, 0, 1], 1.0), I4),
    "box on half-space": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.HalfSpace([0, 0, 1], 0.0), I4),
    "cylinder on plane": (tc.Cylinder(0.5, 2.0), I4, tc.Plane([0, 0, 1], 1.0), I4),
    "cone on half-space": (tc.Cone(0.5, 2.0), I4, tc.HalfSpace([0, 0, 1], -1.0), I4),
    "sphere on cylinder": (tc.Sphere(0.5), translated([1.0, 0, 0.25]), tc.Cylinder(0.5, 2.0), I4),
    "point on cone base": (tc.Point([0.25, 0, -1]), I4, tc.Cone(0.5, 2.0), I4),
    "mesh on box": (tc.TriangleMesh([[0, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 3]], [[0, 1, 2], [0, 2, 3]]), I4,
                    tc.AABB([0, 0, 0], [1, 1, 1]), I4),
    "capsule on mesh": (tc.Capsule.from_points([0.25, 0.25, 0.5], [0.5, 0.25, 0.5], 0.5), I4,
                        tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]), I4),
    "parallel planes": (tc.Plane([0, 0, 1], 1.0), I4, tc.HalfSpace([0, 0, -1], -1.0), I4),
}


def test_ray_grazing_polytope_is_overlap_of_unknown_depth():
    """Documented limitation: a ray / line meeting a polytope (even only touching it) reports
    an overlap without a depth (NaN, PENETRATING); the boolean is exact."""
    ray, box = tc.Ray([-1, 1, 0.5], [1, 0, 0]), tc.AABB([0, 0, 0], [1, 1, 1])
    assert abs(N.ref_signed(N.world(ray, I4), N.world(box, I4))) == 0.0
    assert tc.intersects(ray, I4, box, I4) is True
    res = tc.distance(ray, I4, box, I4)
    assert np.isnan(res.signed_distance) and res.status == tc.Status.PENETRATING
    assert tc.intersects(ray, translated([0, 1e-9, 0]), box, I4) is False


@pytest.mark.parametrize("case", list(TOUCHING))
def test_touching(case):
    A, Ta, B, Tb = TOUCHING[case]
    # the configuration really touches, by the reference
    assert abs(N.ref_signed(N.world(A, Ta), N.world(B, Tb))) <= 1e-15
    for X, TX, Y, TY in ((A, Ta, B, Tb), (B, Tb, A, Ta)):
        assert tc.intersects(X, TX, Y, TY) is True, case
        res = tc.distance(X, TX, Y, TY)
        assert abs(res.signed_distance) <= 1e-12, (case, res)
        assert res.distance <= 1e-12
        assert res.status == tc.Status.TOUCHING, (case, res)


@pytest.mark.parametrize("case", list(TOUCHING))
def test_near_touching(case):
    """Moved 1e-7 apart along the contact normal: separated by exactly that (the reference's
    normal: the direction that makes it separate)."""
    A, Ta, B, Tb = TOUCHING[case]
    ga = N.world(A, Ta)
    best = None
    for axis in np.vstack([np.eye(3), -np.eye(3)]):
        moved = Tb.copy()
        moved[:3, 3] += 1e-7 * axis
        ref = N.ref_signed(ga, N.world(B, moved))
        if best is None or ref > best[0]:
            best = (ref, moved)
    ref, moved = best
    assert ref > 1e-9
    assert tc.intersects(A, Ta, B, moved) is False, case
    res = tc.distance(A, Ta, B, moved)
    assert res.status == tc.Status.SEPARATED
    assert abs(res.signed_distance - ref) <= 1e-12, (case, res.signed_distance, ref)


SEPARATED = {
    # parallel faces / edges: the distance, unique value but a set of closest points
    "parallel faces": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.AABB([0.2, 0.3, 1.5], [1.2, 1.3, 2.5]), I4, 0.5),
    "parallel edges": (tc.Segment([0, 0, 0], [1, 0, 0]), I4, tc.Segment([0.5, 1, 0], [1.5, 1, 0]), I4, 1.0),
    "segment parallel to face": (tc.Segment([0.1, 0.1, 1], [0.3, 0.1, 1]), I4,
                                 tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]), I4, 1.0),
    "parallel box edges": (tc.AABB([0, 0, 0], [1, 1, 1]), I4, tc.AABB([1.5, 2, 0.25], [2, 3, 2]), I4, np.hypot(0.5, 1.0)),
    "coplanar triangles disjoint": (tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]), I4,
                                    tc.Triangle([1, 1, 0], [2, 1, 0], [1, 2, 0]), I4, np.sqrt(0.5)),
    "capsules parallel": (tc.Capsule(0.25, 2.0), I4, tc.Capsule(0.5, 1.0), translated([2, 0, 0.5]), 1.25),
    "line parallel to plane": (tc.Line([0, 0, 2], [1, 1, 0]), I4, tc.Plane([0, 0, 1], -1.0), I4, 3.0),
    "ray parallel to half-space": (tc.Ray([0, 0, 2], [1, 0, 0]), I4, tc.HalfSpace([0, 0, 1], 0.5), I4, 1.5),
    "line parallel to box face": (tc.Line([0, 0, 2], [0, 1, 0]), I4, tc.AABB([0, 0, 0], [1, 1, 1]), I4, 1.0),
    "polygon parallel to polygon": (tc.ConvexPolygon([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]), I4,
                                    tc.ConvexPolygon([[0.5, 0.5, 2], [2, 0.5, 2], [2, 2, 2]]), I4, 2.0),
}


@pytest.mark.parametrize("case", list(SEPARATED))
def test_parallel_separated(case):
    A, Ta, B, Tb, expected = SEPARATED[case]
    ref = N.ref_signed(N.world(A, Ta), N.world(B, Tb))
    assert abs(ref - expected) <= 1e-15 * max(1.0, expected)  # the hand value and the reference agree
    for X, TX, Y, TY in ((A, Ta, B, Tb), (B, Tb, A, Ta)):
        res = tc.distance(X, TX, Y, TY)
        assert res.status == tc.Status.SEPARATED
        assert abs(res.signed_distance - expected) <= 1e-12, (case, res)
        assert abs(np.linalg.norm(res.point_b - res.point_a) - expected) <= 1e-12
        assert N.ref_point_distance(N.world(X, TX), res.point_a) <= 1e-12
        assert N.ref_point_distance(N.world(Y, TY), res.point_b) <= 1e-12
        assert tc.intersects(X, TX, Y, TY) is False


def test_coplanar_triangles_overlapping():
    A = tc.Triangle([0, 0, 0], [2, 0, 0], [0, 2, 0])
    B = tc.Triangle([0.5, 0.25, 0], [3, 0.25, 0], [0.5, 2, 0])
    # flat Minkowski difference: the minimum translation is 0 (along the common normal)
    assert N.ref_signed(N.world(A, I4), N.world(B, I4)) == 0.0
    rng = np.random.default_rng(5)
    for k in range(20):
        # translations keep the common plane exact: the boolean is exact on exact inputs
        T = translated(rng.uniform(-1, 1, 3))
        assert tc.intersects(A, T, B, T)
        exact = tc.distance(A, T, B, T)
        assert exact.status == tc.Status.TOUCHING and abs(exact.signed_distance) <= 1e-12
        assert abs(abs(exact.normal[2]) - 1.0) <= 1e-12  # the common normal
        # rotated, the plane is only coplanar up to round-off: distance ~0, TOUCHING
        M = N.pose(N.random_rotation(rng), rng.uniform(-1, 1, 3))
        res = tc.distance(A, M, B, M)
        assert abs(res.signed_distance) <= 1e-12 and res.status == tc.Status.TOUCHING


# ------------------------------------------------------------------------------------------------
# degenerate shapes
FLAT_TRIANGLE = tc.Triangle([0.0, 0.0, 0.0], [0.5, 0.25, 0.125], [1.0, 0.5, 0.25])  # zero area
POINTLIKE_TRIANGLE = tc.Triangle([0.3, 0.2, 0.1], [0.3, 0.2, 0.1], [0.3, 0.2, 0.1])


@pytest.mark.parametrize("partner", ["Point", "Sphere", "Segment", "Capsule", "Ray", "Line", "Triangle",
                                     "Box", "ConvexPolyhedron", "Plane", "HalfSpace", "TriangleMesh"])
@pytest.mark.parametrize("degenerate", ["flat", "pointlike"])
def test_zero_area_triangle(degenerate, partner):
    tri = FLAT_TRIANGLE if degenerate == "flat" else POINTLIKE_TRIANGLE
    rng = np.random.default_rng(_seed(degenerate, partner))
    n = 60
    B = SHAPES[partner]
    Ta, Tb = make_poses("Segment", partner, rng, n)
    res = tc.distance(tri, Ta, B, Tb)
    hit = tc.intersects(tri, Ta, B, Tb)
    assert np.isfinite(res.signed_distance).all() or partner in ("Ray", "Line", "Plane", "HalfSpace")
    hits = []
    for i in range(n):
        ref = check_distance("Segment", partner, Ta[i], Tb[i], _rows(res, i), hits, i, shapes=(tri, B))
        if abs(ref) > REL * config_size("Segment", partner, Ta[i], Tb[i]):
            assert bool(hit[i]) == (ref <= 0)
    assert len(hits) >= 0.9 * n


@pytest.mark.parametrize("partner", NAMES)
def test_zero_length_capsule_is_sphere(partner):
    capsule, sphere = tc.Capsule(0.4, 0.0), tc.Sphere(0.4)
    segment, point = tc.Segment([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]), tc.Point([0.1, 0.2, 0.3])
    rng = np.random.default_rng(_seed("zero-length", partner))
    Ta, Tb = make_poses("Sphere", partner, rng, 100)
    B = SHAPES[partner]
    for degenerate, regular in ((capsule, sphere), (segment, point)):
        if (degenerate.kind, B.kind) not in tc.SUPPORTED_PAIRS:
            continue  # e.g. Capsule-Cylinder (needs GJK), while Sphere-Cylinder is supported
        got = tc.distance(degenerate, Ta, B, Tb)
        want = tc.distance(regular, Ta, B, Tb)
        assert np.array_equal(got.status, want.status)
        finite = np.isfinite(want.signed_distance)
        assert np.array_equal(finite, np.isfinite(got.signed_distance))
        # a capsule against a curved solid runs GJK (~1e-8 near contact); the sphere a closed form
        tolerance = 1e-7 if routed_to_gjk(degenerate.kind, B.kind) else 1e-12
        np.testing.assert_allclose(got.signed_distance[finite], want.signed_distance[finite], rtol=0, atol=tolerance)
        clear = np.abs(want.signed_distance) > tolerance
        assert np.array_equal(tc.intersects(degenerate, Ta, B, Tb)[clear], tc.intersects(regular, Ta, B, Tb)[clear])


# ------------------------------------------------------------------------------------------------
# scales
def scaled(shape, s):
    k = shape.kind
    if k == K.POINT:
        return tc.Point(shape.position * s)
    if k == K.SPHERE:
        return tc.Sphere(shape.radius * s, shape.center * s)
    if k == K.SEGMENT:
        return tc.Segment(shape.a * s, shape.b * s)
    if k == K.CAPSULE:
        return tc.Capsule.from_points(shape.a * s, shape.b * s, shape.radius * s)
    if k in (K.RAY, K.LINE):
        return type(shape)(shape.origin * s, shape.direction)
    if k == K.TRIANGLE:
        return tc.Triangle(*(shape.vertices * s))
    if k == K.TETRAHEDRON:
        return tc.Tetrahedron(*(shape.vertices * s))
    if isinstance(shape, tc.AABB):
        return tc.AABB(shape.min * s, shape.max * s)
    if k == K.BOX:
        return tc.Box(shape.extents * s, shape.center * s)
    if k == K.POLYGON:
        return tc.ConvexPolygon(shape.vertices * s)
    if k == K.POLYHEDRON:
        return tc.ConvexPolyhedron(shape.vertices * s)
    if k in (K.CYLINDER, K.CONE):
        return type(shape)(shape.radius * s, shape.length * s)
    if k in (K.PLANE, K.HALFSPACE):
        return type(shape)(shape.normal, shape.offset * s)
    return tc.TriangleMesh(shape.vertices * s, shape.faces)


SCALE_PAIRS = [("Sphere", "Box"), ("Capsule", "ConvexPolyhedron"), ("Box", "Box"), ("Triangle", "Triangle"),
               ("Segment", "TriangleMesh"), ("Tetrahedron", "ConvexPolygon"), ("Point", "Cone"),
               ("Sphere", "Cylinder"), ("Ray", "Box"), ("Capsule", "Capsule"), ("AABB", "HalfSpace"),
               ("Cylinder", "Plane"), ("ConvexPolyhedron", "TriangleMesh"), ("Line", "Capsule")]


@pytest.mark.parametrize("scale", [1e-6, 1e6])
@pytest.mark.parametrize("a,b", SCALE_PAIRS, ids=[f"{a}-{b}" for a, b in SCALE_PAIRS])
def test_scales(a, b, scale):
    """The same configurations scaled by 1e-6 / 1e6 (shapes and translations): tolerances are
    relative to the configuration size."""
    rng = np.random.default_rng(_seed(a, b, str(scale)))
    n = 60
    A, B = scaled(SHAPES[a], scale), scaled(SHAPES[b], scale)
    Ta, Tb = make_poses(a, b, rng, n, scale)
    res = tc.distance(A, Ta, B, Tb)
    hit = tc.intersects(A, Ta, B, Tb)
    hits = []
    for i in range(n):
        ref = check_distance(a, b, Ta[i], Tb[i], _rows(res, i), hits, i, shapes=(A, B), scale=scale)
        if abs(ref) > REL * config_size(a, b, Ta[i], Tb[i], scale):
            assert bool(hit[i]) == (ref <= 0)
    assert len(hits) >= 0.9 * n
    assert 0.1 <= np.mean(hits) <= 0.9


# ------------------------------------------------------------------------------------------------
# regressions (bugs found by the reference comparison)
@pytest.mark.parametrize("name", ["Segment", "Capsule", "Ray", "Line"])
def test_regression_linear_vs_single_triangle_mesh_equals_triangle(name):
    """Bug: linear element vs mesh tested a crossing by comparing the reconstructed closest point
    of the triangle with the crossing point for exact equality; round-off missed crossings and
    reported a positive distance (or a capsule depth of r only). A one-triangle mesh must
    answer like the Triangle."""
    tri = SHAPES["Triangle"]
    mesh = tc.TriangleMesh(tri.vertices, [[0, 1, 2]])
    rng = np.random.default_rng(11)
    Ta, Tb = make_poses(name, "Triangle", rng, 200)
    A = SHAPES[name]
    got, want = tc.distance(A, Ta, mesh, Tb), tc.distance(A, Ta, tri, Tb)
    assert np.array_equal(got.status, want.status)
    assert np.allclose(got.signed_distance, want.signed_distance, rtol=0, atol=1e-12, equal_nan=True)
    assert np.array_equal(tc.intersects(A, Ta, mesh, Tb), tc.intersects(A, Ta, tri, Tb))
    assert 0.2 <= np.mean(tc.intersects(A, Ta, tri, Tb)) <= 0.8


def test_regression_ray_crossing_plane_has_finite_depth():
    """Bug: a ray crossing a (two-sided) plane reported depth inf; moving the plane to the ray's
    origin separates them, so the depth is the origin's distance to the plane."""
    ray, plane = tc.Ray([0.0, 0.0, -1.0], [0.0, 0.6, 0.8]), tc.Plane([0.0, 0.0, 1.0], 0.0)
    for X, TX, Y, TY, sign in ((ray, I4, plane, I4, 1.0), (plane, I4, ray, I4, -1.0)):
        res = tc.distance(X, TX, Y, TY)
        assert res.signed_distance == -1.0 and res.status == tc.Status.PENETRATING
        np.testing.assert_array_equal(res.normal, [0.0, 0.0, -sign])
    line = tc.Line([0.0, 0.0, -1.0], [0.0, 0.6, 0.8])  # a line crossing is unbounded
    assert tc.distance(line, I4, plane, I4).signed_distance == -np.inf
