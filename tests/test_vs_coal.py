"""Differential tests of ``touche.intersects`` / ``touche.distance`` against coal (ex hpp-fcl).

For every pair of sphere, capsule, box, cylinder, cone, triangle, plane, half-space that touche
answers (``touche.SUPPORTED_PAIRS``), N seeded random poses are drawn so that 30-70 % of them
collide (asserted), then:

- booleans agree with ``coal.collide``, except in the touching band (|signed distance| <= 1e-9 by
  coal or touche), which is counted and must stay small;
- separated distances agree with ``coal.distance`` to 1e-9 relative + 1e-12 absolute, except where
  coal's own answer is known to be less accurate (sphere-cone, see ``COAL_GJK_LOOSE``): there the
  analytic closed form is the judge and coal is compared at its observed accuracy;
- penetration depths (``-signed_distance``) agree with coal's EPA / analytic depth to 1e-6
  relative for the pairs where both sides compute an exact minimum translation distance;
- closest points: for sphere pairs (unique closest pair) touche's points match coal's nearest
  points; for all pairs touche's points lie on their shapes and ``|pa - pb| == distance``.

Pairs touche does not answer must raise ``touche.UnsupportedQuery``.

A second block (``test_gjk_*``) compares ``touche.convex.gjk`` / ``intersects`` (GJK / EPA) with
coal on 10,920 pairs of hulls (4-100 points, flat, duplicate points), polygons, triangles and
every convex primitive including cylinders, cones and ellipsoids, at random, touching and deep
poses; the comment above ``GJK_POSES`` says which bound judges which pair class.

Run ``python tests/test_vs_coal.py`` for the per-pair statistics table.
"""
from __future__ import annotations

import functools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

coal = pytest.importorskip("coal")

import coal_adapter as ca  # noqa: E402

import touche  # noqa: E402

NAMES = ("sphere", "capsule", "box", "cylinder", "cone", "triangle", "plane", "halfspace")
FLAT = ("plane", "halfspace")
ROUND = ("cylinder", "cone")
N = 2000
SEED = 20240611
BAND = 1e-9  # touching band: |signed distance| below this is not judged as a boolean
REL = 1e-9
ABS = 1e-12
DEPTH_REL = 1e-6
POINT_TOL = 1e-9

ALL_PAIRS = [(a, b) for i, a in enumerate(NAMES) for b in NAMES[i:]]


def _supported(a, b):
    return (ca.touche_shape(a).kind, ca.touche_shape(b).kind) in touche.SUPPORTED_PAIRS


def _through_gjk(a, b):
    """Curved solids against anything but a sphere or a plane now go to GJK / EPA; their coal
    comparison lives in tests/kernels/test_gjk.py (hulls and primitives), not in this calibrated table."""
    return (a in ROUND or b in ROUND) and not ({a, b} & {"sphere", "plane", "halfspace"})


SUPPORTED = [p for p in ALL_PAIRS if _supported(*p) and not _through_gjk(*p)]
UNSUPPORTED = [p for p in ALL_PAIRS if not _supported(*p)]

# Spread of the centre distance (finite pairs: uniform in [0, k * (Ra + Rb)]; a shape vs a plane:
# height above it uniform in [-k R, k R], [-0.3 k R, k R] for a half-space), calibrated with
# touche for a ~50 % hit rate; the test asserts 30-70 %.
SPREAD = {
    ("sphere", "sphere"): 2.01, ("sphere", "capsule"): 1.56, ("sphere", "box"): 1.69,
    ("sphere", "cylinder"): 1.82, ("sphere", "cone"): 1.50, ("sphere", "triangle"): 1.22,
    ("sphere", "plane"): 2.05, ("capsule", "capsule"): 1.28, ("capsule", "box"): 1.38,
    ("capsule", "triangle"): 1.01, ("capsule", "plane"): 1.45, ("box", "box"): 1.49,
    ("box", "triangle"): 1.10, ("box", "plane"): 1.68, ("cylinder", "plane"): 1.82,
    ("cone", "plane"): 1.44, ("triangle", "triangle"): 0.71, ("triangle", "plane"): 1.15,
}

# Pairs where coal's distance is GJK on a curved shape and measurably less accurate than 1e-9:
# the analytic closed form judges touche, and coal is compared at this relative tolerance.
# Observed (seed above, default DistanceRequest, gjk_tolerance 1e-6): sphere-cone separated
# distances differ from the closed form by up to 7.1e-4 relative / 1.6e-6 absolute (always longer:
# GJK stops early on the curved surface); with gjk_tolerance = 1e-14 still ~5e-9 relative. Sphere-cylinder is exact
# in coal (<1e-13), as are all the other pairs here (coal: analytic or GJK on polytopes).
# Pairs where coal runs GJK on polytopes / a capsule's segment: coal's distance can be off by a
# constant ~5e-11 absolute (e.g. box-box 0.00033572441480 vs the exact 0.00033572446862, a 1.6e-7
# relative error), and whether it is depends on the process's query history (the same query is
# exact in a fresh process: coal keeps some state between calls). With tiny separations this
# exceeds 1e-9 relative, so the closed form (vertex-solid and edge-edge minimum) judges touche and
# coal is held to 1e-9 relative + this absolute error (observed with this seed, run in pytest's
# order: box-box 1.3e-10 abs / 1.6e-7 rel, capsule-box and box-triangle 6.6e-11 abs; run first in
# a fresh process the same pairs agree to 2e-12 relative).
COAL_GJK_ABS = {p: 3e-10 for p in (("capsule", "box"), ("capsule", "triangle"), ("box", "box"),
                                   ("box", "triangle"), ("triangle", "triangle"))}
COAL_GJK_LOOSE = {("sphere", "cone"): 2e-3}

# Penetration depths compared with coal: polytopes, spheres and capsules among themselves (touche:
# exact MTD by SAT / core distance), and any finite shape against a plane or half-space (both
# analytic). Not sphere-cylinder / sphere-cone: coal's depth there is wrong by up to ~40 % when the
# sphere centre is inside the cylinder (coal over-estimates; e.g. centre (-0.045, -0.038, -0.128)
# in a cylinder r=0.4, length 0.9: true depth 0.45 + 0.322 = 0.772, coal 0.7915), so those are
# judged against the analytic depth instead.
_POLY_ROUND = ("sphere", "capsule", "box", "triangle")
DEPTH_PAIRS = {
    (a, b) for (a, b) in SUPPORTED
    if (a in _POLY_ROUND and b in _POLY_ROUND) or (a not in FLAT and b in FLAT)
}


# --------------------------------------------------------------------------------------------
# poses
def _rotations(rng, n):
    from scipy.spatial.transform import Rotation

    return Rotation.random(n, random_state=rng).as_matrix()


def _rot_z(theta):
    c, s = np.cos(theta), np.sin(theta)
    out = np.zeros((len(theta), 3, 3))
    out[:, 0, 0] = c
    out[:, 0, 1] = -s
    out[:, 1, 0] = s
    out[:, 1, 1] = c
    out[:, 2, 2] = 1.0
    return out


def _unit_vectors(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]


def make_poses(a, b, n=N, seed=SEED):
    rng = np.random.default_rng([seed, NAMES.index(a), NAMES.index(b)])
    pose_a = np.tile(np.eye(4), (n, 1, 1))
    pose_b = pose_a.copy()
    pose_a[:, :3, :3] = _rotations(rng, n)
    pose_b[:, :3, :3] = _rotations(rng, n)
    pose_a[:, :3, 3] = rng.uniform(-3.0, 3.0, (n, 3))
    if a in FLAT and b in FLAT:
        # plane-type pairs: random orientations almost always meet, so most pairs are exactly
        # parallel (B's rotation = A's times a z-rotation, possibly flipped: the normals are then
        # exactly equal / opposite in floating point)
        generic, same = ({("plane", "plane"): (0.5, 0.25), ("plane", "halfspace"): (0.2, 0.4),
                          ("halfspace", "halfspace"): (0.1, 0.2)})[(a, b)]
        u = rng.uniform(size=n)
        flip = np.diag([1.0, -1.0, -1.0])
        parallel = _rot_z(rng.uniform(0, 2 * np.pi, n))
        opposite = u >= generic + same
        parallel[opposite] = flip @ parallel[opposite]
        is_parallel = u >= generic
        pose_b[is_parallel, :3, :3] = pose_a[is_parallel, :3, :3] @ parallel[is_parallel]
        normal = pose_a[:, :3, 2]
        h = rng.uniform(-1.0, 1.0, n)
        pose_b[:, :3, 3] = pose_a[:, :3, 3] + h[:, None] * normal + 0.5 * np.cross(normal, _unit_vectors(rng, n))
        return pose_a, pose_b, is_parallel
    if b in FLAT:
        k = SPREAD[(a, "plane")] * ca.bounding_radius(a)
        lo = -k if b == "plane" else -0.3 * k
        h = rng.uniform(lo, k, n)
        normal = pose_b[:, :3, 2]
        pose_b[:, :3, 3] = pose_a[:, :3, 3] - h[:, None] * normal + np.cross(normal, _unit_vectors(rng, n))
        return pose_a, pose_b, None
    k = SPREAD[(a, b)] * (ca.bounding_radius(a) + ca.bounding_radius(b))
    s = rng.uniform(0.0, k, n)
    pose_b[:, :3, 3] = pose_a[:, :3, 3] + s[:, None] * _unit_vectors(rng, n)
    return pose_a, pose_b, None


# --------------------------------------------------------------------------------------------
# analytic geometry (numpy, independent of touche's kernels)
def _to_local(poses, points):
    """World points (n, 3) into the local frames of poses (n, 4, 4)."""
    rot = poses[:, :3, :3]
    return np.einsum("nji,nj->ni", rot, points - poses[:, :3, 3])


def _point_segment_2d(p, a, b):
    """Closest points on the 2D segment a-b to points p (n, 2)."""
    ab = b - a
    t = np.clip(((p - a) @ ab) / (ab @ ab), 0.0, 1.0)
    return a + t[:, None] * ab


def round_closest(name, local):
    """Signed distance (negative inside) of local points (n, 3) to a cylinder / cone surface and the
    nearest surface point. In the meridian half-plane (rho >= 0, z) the solid's section is a
    rectangle / triangle; its surface is every section edge but the axis one, and by symmetry the
    nearest surface point lies in the point's own half-plane."""
    radius, length = ca.CYLINDER if name == "cylinder" else ca.CONE
    half = 0.5 * length
    rho = np.hypot(local[:, 0], local[:, 1])
    q = np.column_stack([rho, local[:, 2]])
    if name == "cylinder":
        corners = [(0.0, half), (radius, half), (radius, -half), (0.0, -half)]
    else:
        corners = [(0.0, half), (radius, -half), (0.0, -half)]
    corners = [np.array(c) for c in corners]
    best = np.full(len(q), np.inf)
    nearest = np.zeros_like(q)
    for a, b in zip(corners[:-1], corners[1:]):
        c = _point_segment_2d(q, a, b)
        d = np.linalg.norm(q - c, axis=1)
        better = d < best
        best[better] = d[better]
        nearest[better] = c[better]
    if name == "cylinder":
        inside = (rho <= radius) & (np.abs(local[:, 2]) <= half)
    else:
        inside = (np.abs(local[:, 2]) <= half) & (rho <= radius * (half - local[:, 2]) / length)
    with np.errstate(invalid="ignore", divide="ignore"):
        radial = np.where(rho[:, None] > 0, local[:, :2] / rho[:, None], np.array([1.0, 0.0]))
    point = np.column_stack([radial * nearest[:, :1], nearest[:, 1]])
    return np.where(inside, -best, best), point


def _segment_distance(p, a, b):
    ab = b - a
    t = np.clip(((p - a) @ ab) / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def outside_amount(name, local):
    """How far local points (n, 3) lie outside the solid (0 inside); for a plane, off the plane."""
    if name == "sphere":
        return np.maximum(np.linalg.norm(local, axis=1) - ca.SPHERE_R, 0.0)
    if name == "capsule":
        radius, length = ca.CAPSULE
        d = _segment_distance(local, np.array([0, 0, -0.5 * length]), np.array([0, 0, 0.5 * length]))
        return np.maximum(d - radius, 0.0)
    if name == "box":
        return np.linalg.norm(np.maximum(np.abs(local) - 0.5 * ca.BOX, 0.0), axis=1)
    if name in ROUND:
        return np.maximum(round_closest(name, local)[0], 0.0)
    if name == "triangle":
        t = ca.TRIANGLE
        normal = np.cross(t[1] - t[0], t[2] - t[0])
        normal /= np.linalg.norm(normal)
        height = (local - t[0]) @ normal
        flat = local - height[:, None] * normal
        inside = np.ones(len(local), dtype=bool)
        for i in range(3):
            inside &= (np.cross(t[(i + 1) % 3] - t[i], flat - t[i]) @ normal) >= 0.0
        edge = np.min([_segment_distance(local, t[i], t[(i + 1) % 3]) for i in range(3)], axis=0)
        return np.where(inside, np.abs(height), edge)
    normal, offset = ca.PLANE
    height = local @ normal - offset
    return np.abs(height) if name == "plane" else np.maximum(height, 0.0)


def segment_segment_distance(p1, q1, p2, q2):
    """Distance between segments p1-q1 and p2-q2 (rows; non-degenerate), Ericson 5.1.9."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = np.einsum("ij,ij->i", d1, d1)
    e = np.einsum("ij,ij->i", d2, d2)
    f = np.einsum("ij,ij->i", d2, r)
    c = np.einsum("ij,ij->i", d1, r)
    b = np.einsum("ij,ij->i", d1, d2)
    denom = a * e - b * b
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(denom > 1e-14 * a * e, np.clip((b * f - c * e) / denom, 0.0, 1.0), 0.0)
    t = (b * s + f) / e
    low, high = t < 0.0, t > 1.0
    s = np.where(low, np.clip(-c / a, 0.0, 1.0), np.where(high, np.clip((b - c) / a, 0.0, 1.0), s))
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(p1 + s[:, None] * d1 - p2 - t[:, None] * d2, axis=1)


_BOX_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
_BOX_EDGES = [(i, j) for i in range(8) for j in range(i + 1, 8) if np.sum(_BOX_CORNERS[i] != _BOX_CORNERS[j]) == 1]


def _features(name):
    """(vertices, edges, point distance function, radius) of a polytope core, in its local frame."""
    if name == "box":
        return _BOX_CORNERS * 0.5 * ca.BOX, _BOX_EDGES, lambda q: outside_amount("box", q), 0.0
    if name == "triangle":
        return ca.TRIANGLE, [(0, 1), (1, 2), (2, 0)], lambda q: outside_amount("triangle", q), 0.0
    radius, length = ca.CAPSULE
    ends = np.array([[0.0, 0.0, -0.5 * length], [0.0, 0.0, 0.5 * length]])
    return ends, [(0, 1)], lambda q: _segment_distance(q, ends[0], ends[1]), radius


def _world(poses, local):
    return np.einsum("nij,j->ni", poses[:, :3, :3], local) + poses[:, :3, 3]


def analytic_polytope_distance(a, b, pose_a, pose_b):
    """Closed-form distance of two disjoint convex polytope / segment cores minus their radii: the
    minimum over vertex-vs-solid and edge-vs-edge pairs (complete for disjoint convex polytopes)."""
    va, ea, dist_a, ra = _features(a)
    vb, eb, dist_b, rb = _features(b)
    best = np.full(len(pose_a), np.inf)
    for v in va:
        best = np.minimum(best, dist_b(_to_local(pose_b, _world(pose_a, v))))
    for v in vb:
        best = np.minimum(best, dist_a(_to_local(pose_a, _world(pose_b, v))))
    for i, j in ea:
        p1, q1 = _world(pose_a, va[i]), _world(pose_a, va[j])
        for k, m in eb:
            best = np.minimum(best, segment_segment_distance(p1, q1, _world(pose_b, vb[k]), _world(pose_b, vb[m])))
    return best - ra - rb


# --------------------------------------------------------------------------------------------
# one run per pair, shared by the tests
@functools.lru_cache(maxsize=None)
def run(a, b):
    pose_a, pose_b, parallel = make_poses(a, b)
    ta, tb = ca.touche_shape(a), ca.touche_shape(b)
    ga, gb = ca.coal_shape(a), ca.coal_shape(b)
    hit = touche.intersects(ta, pose_a, tb, pose_b)
    res = touche.distance(ta, pose_a, tb, pose_b)
    coal_hit = ca.coal_collide(ga, pose_a, gb, pose_b)
    coal_d, coal_pa, coal_pb = ca.coal_distance(ga, pose_a, gb, pose_b)
    signed = res.signed_distance
    band = (np.abs(coal_d) <= BAND) | (np.abs(signed) <= BAND)
    judged = ~band
    separated = judged & ~hit & ~coal_hit & (coal_d > BAND)
    return dict(
        pose_a=pose_a, pose_b=pose_b, parallel=parallel, hit=hit, res=res, coal_hit=coal_hit,
        coal_d=coal_d, coal_pa=coal_pa, coal_pb=coal_pb, band=band, judged=judged, separated=separated,
    )


def _rel_err(value, reference):
    return np.abs(value - reference) / np.maximum(np.abs(reference), 1e-300)


def stats(a, b):
    r = run(a, b)
    sep = r["separated"]
    dist_err = _rel_err(r["res"].distance[sep], r["coal_d"][sep])
    out = dict(
        n=len(r["hit"]), hit_rate=float(r["hit"].mean()), band=int(r["band"].sum()),
        bool_disagree=int((r["hit"] != r["coal_hit"])[r["judged"]].sum()),
        separated=int(sep.sum()), max_rel_dist=float(dist_err.max()) if sep.any() else 0.0,
    )
    pen = r["judged"] & r["hit"] & r["coal_hit"] & (r["coal_d"] < -BAND) & np.isfinite(r["res"].signed_distance)
    if (a, b) in DEPTH_PAIRS and pen.any():
        out["depth_checked"] = int(pen.sum())
        out["max_rel_depth"] = float(_rel_err(-r["res"].signed_distance[pen], -r["coal_d"][pen]).max())
    return out


# --------------------------------------------------------------------------------------------
# tests
@pytest.mark.parametrize("a,b", UNSUPPORTED, ids=[f"{a}-{b}" for a, b in UNSUPPORTED])
def test_unsupported_pairs_raise(a, b):
    pose_a, pose_b, _ = make_poses(a, b, n=3) if (a, b) in SPREAD else (np.eye(4), np.eye(4), None)
    ta, tb = ca.touche_shape(a), ca.touche_shape(b)
    for x, y in ((ta, tb), (tb, ta)):
        with pytest.raises(touche.UnsupportedQuery):
            touche.intersects(x, None, y, None)
        with pytest.raises(touche.UnsupportedQuery):
            touche.distance(x, None, y, np.tile(np.eye(4), (2, 1, 1)))
    # coal does answer these pairs (so they are a real gap, not a shared limitation)
    ga, gb = ca.coal_shape(a), ca.coal_shape(b)
    far = np.eye(4)
    far[:3, 3] = [5.0, 0.0, 0.0]
    d, _, _ = ca.coal_distance(ga, np.eye(4)[None], gb, far[None])
    assert np.isfinite(d[0]) and d[0] > 0


@pytest.mark.parametrize("a,b", SUPPORTED, ids=[f"{a}-{b}" for a, b in SUPPORTED])
def test_boolean_agreement(a, b):
    r = run(a, b)
    n = len(r["hit"])
    assert 0.3 <= r["hit"].mean() <= 0.7, f"hit rate {r['hit'].mean():.3f} outside 30-70 %"
    assert r["band"].sum() <= 0.01 * n, f"{r['band'].sum()} of {n} in the touching band"
    bad = np.where(r["judged"] & (r["hit"] != r["coal_hit"]))[0]
    assert len(bad) == 0, (
        f"{len(bad)} boolean disagreements, first index {bad[0]}: touche {r['hit'][bad[0]]}, "
        f"coal {r['coal_hit'][bad[0]]}, coal distance {r['coal_d'][bad[0]]!r}, "
        f"touche signed {r['res'].signed_distance[bad[0]]!r}"
    )
    # the distance verb agrees with the boolean verb outside the band
    status_hit = r["res"].status != touche.Status.SEPARATED
    assert np.array_equal(status_hit[r["judged"]], r["hit"][r["judged"]])


@pytest.mark.parametrize("a,b", SUPPORTED, ids=[f"{a}-{b}" for a, b in SUPPORTED])
def test_separated_distance(a, b):
    r = run(a, b)
    sep = r["separated"]
    if (a, b) in (("plane", "halfspace"), ("halfspace", "halfspace"), ("plane", "plane")):
        assert sep.sum() >= 0.15 * len(sep)
    else:
        assert sep.sum() >= 0.25 * len(sep)
    got = r["res"].distance[sep]
    ref = r["coal_d"][sep]
    if (a, b) in COAL_GJK_ABS:
        # judge: closed form; coal within its observed absolute error
        ref_exact = analytic_polytope_distance(a, b, r["pose_a"][sep], r["pose_b"][sep])
        assert np.all(np.abs(got - ref_exact) <= REL * ref_exact + ABS), _worst(got, ref_exact, sep)
        assert np.all(np.abs(ref - ref_exact) <= REL * ref_exact + COAL_GJK_ABS[(a, b)]), _worst(ref, ref_exact, sep)
    elif (a, b) in COAL_GJK_LOOSE:
        # judge: closed form; coal at its observed accuracy
        ref_exact = analytic_signed(a, b, r["pose_a"], r["pose_b"])[0][sep]
        assert np.all(np.abs(got - ref_exact) <= REL * ref_exact + ABS), _worst(got, ref_exact, sep)
        loose = COAL_GJK_LOOSE[(a, b)]
        assert np.all(np.abs(ref - ref_exact) <= loose * ref_exact + 1e-9), _worst(ref, ref_exact, sep)
        assert np.all(np.abs(got - ref) <= loose * ref_exact + 1e-9), _worst(got, ref, sep)
    else:
        assert np.all(np.abs(got - ref) <= REL * np.abs(ref) + ABS), _worst(got, ref, sep)
    # the reversed argument order gives the same distance
    back = touche.distance(ca.touche_shape(b), r["pose_b"], ca.touche_shape(a), r["pose_a"])
    assert np.allclose(back.distance, r["res"].distance, rtol=1e-12, atol=1e-12)


def _worst(got, ref, mask=None):
    err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
    i = int(np.argmax(err))
    where = i if mask is None else int(np.flatnonzero(mask)[i])
    return f"worst relative error {err[i]:.3e} at pose {where}: got {got[i]!r}, reference {ref[i]!r}"


def analytic_signed(a, b, pose_a, pose_b):
    """Closed-form signed distance and closest points of a sphere (a) against a cylinder / cone."""
    centre = pose_a[:, :3, 3]
    local = _to_local(pose_b, centre)
    core, nearest_local = round_closest(b, local)
    nearest = np.einsum("nij,nj->ni", pose_b[:, :3, :3], nearest_local) + pose_b[:, :3, 3]
    return core - ca.SPHERE_R, nearest


@pytest.mark.parametrize("b", ROUND)
def test_sphere_round_against_closed_form(b):
    """Sphere vs cylinder / cone: touche's signed distance (separated and penetrating) and the
    closest point on the round solid against the meridian-plane closed form."""
    r = run("sphere", b)
    exact, nearest = analytic_signed("sphere", b, r["pose_a"], r["pose_b"])
    signed = r["res"].signed_distance
    ok = r["judged"]
    assert np.all(np.abs(signed[ok] - exact[ok]) <= REL * np.abs(exact[ok]) + ABS), _worst(signed[ok], exact[ok], ok)
    sep = r["separated"]
    assert np.abs(r["res"].point_b[sep] - nearest[sep]).max() <= POINT_TOL


@pytest.mark.parametrize("a,b", sorted(DEPTH_PAIRS), ids=[f"{a}-{b}" for a, b in sorted(DEPTH_PAIRS)])
def test_penetration_depth(a, b):
    r = run(a, b)
    signed = r["res"].signed_distance
    pen = r["judged"] & r["hit"] & r["coal_hit"] & (r["coal_d"] < -BAND)
    assert pen.sum() >= 0.2 * len(pen)
    assert np.all(np.isfinite(signed[pen]))
    got = -signed[pen]
    ref = -r["coal_d"][pen]
    assert np.all(np.abs(got - ref) <= DEPTH_REL * ref + ABS), _worst(got, ref, pen)


@pytest.mark.parametrize("a,b", SUPPORTED, ids=[f"{a}-{b}" for a, b in SUPPORTED])
def test_separated_closest_points(a, b):
    r = run(a, b)
    sep = r["separated"]
    res = r["res"]
    pa, pb = res.point_a[sep], res.point_b[sep]
    dist = res.distance[sep]
    assert np.allclose(np.linalg.norm(pb - pa, axis=1), dist, rtol=1e-12, atol=1e-12)
    scale = 1.0 + np.abs(r["pose_a"][sep, :3, 3]).max()
    assert outside_amount(a, _to_local(r["pose_a"][sep], pa)).max(initial=0.0) <= POINT_TOL * scale
    assert outside_amount(b, _to_local(r["pose_b"][sep], pb)).max(initial=0.0) <= POINT_TOL * scale
    if a == "sphere" and (a, b) not in COAL_GJK_LOOSE:
        # a sphere's closest pair is unique: it must be coal's
        assert np.abs(pa - r["coal_pa"][sep]).max(initial=0.0) <= POINT_TOL * scale
        assert np.abs(pb - r["coal_pb"][sep]).max(initial=0.0) <= POINT_TOL * scale


# --------------------------------------------------------------------------------------------
# GJK / EPA pairs (issue 5): hulls, flat and duplicate-point hulls and every convex primitive
# against coal's GJK / EPA, 91 pair classes x 120 seeded poses = 10,920 pairs. Each class gets
# random poses (centre offset = the offset where the shapes meet along a random direction times
# a factor uniform in [0.5, 1.5]), touching poses (a separated pose with B moved back along
# touche's normal by touche's distance: the true distance is 0 up to rounding, since that
# distance is certified below) and deep poses (centres within 5 % of Ra + Rb).
#
# Every class is held to the issue's bounds, GJK_DIST (1e-9) on distances and GJK_DEPTH (1e-6
# relative) on depths ("curved" = a cylinder, cone or ellipsoid in the pair):
# - separated: |touche - coal| <= GJK_DIST, or coal is off and a referee that does not use coal
#   judges: touche's distance is CERTIFIED: its witness points lie on their shapes (closed-form
#   point tests), |pb - pa| (an upper bound of the true distance) equals it, and the gap between
#   the two supporting planes along its normal (closed-form support functions,
#   tests/naive/gjk.py; a lower bound of the true distance) is within GJK_DIST of it;
# - penetrating: |touche depth - coal depth| <= GJK_DEPTH * depth, or coal is off and the referee
#   judges: EPA's depth is the distance to a face of a polytope inside A - B (a lower bound of the
#   minimum translation distance) and the depth realised along its normal, h_A(n) + h_B(-n)
#   (closed form, an upper bound), is within GJK_DEPTH * depth of it; per curved class the pose
#   where coal is most off is also checked against the global minimum of h_A(u) + h_B(-u)
#   (sampling + Nelder-Mead; test_gjk_curved_depths_against_support_reference);
# - coal is off only in curved classes: there it runs with its default request (with tolerance
#   1e-12 its GJK / EPA on curved supports fails outright: DBL_MAX distances and depths off by
#   up to 100 % with this seed) and stops early, always on the unconverged side (its distances
#   too long, its depths too shallow; asserted) by at most COAL_CURVED_DIST / COAL_CURVED_DEPTH;
#   polytope and sphere / capsule classes run coal at 1e-12 and must agree outright. The counts
#   of coal-off poses are printed by test_gjk_vs_coal_counts_and_hit_rate (pytest -s) and by
#   ``python tests/test_vs_coal.py``;
# - touching poses: |signed distance| <= GJK_DIST with a converged status, in every class. A
#   curved class may instead report DEGENERATE (GJK stalled by rounding before its bounds met: a
#   cylinder's or cone's rim against an edge or face; 16 of the 1,638 touching poses with this
#   seed), with |signed distance| <= CURVED_TOUCH (measured 1.2e-7): an honest status, never a
#   converged status with a wrong number;
# - statuses: SEPARATED / TOUCHING / PENETRATING on the random and deep poses, except at most
#   one pose per class;
# - booleans agree with the sign outside the touching band (1e-9; the curved band of coal).
GJK_POSES = (84, 18, 18)  # random, touching, deep poses per pair class
GJK_SPREAD = 0.5
GJK_DIST = 1e-9
GJK_DEPTH = 1e-6
COAL_CURVED_DIST = 2e-6
COAL_CURVED_DEPTH = 5e-3
CURVED_TOUCH = 2e-7
CURVED = ("cylinder", "cone", "ellipsoid")


def _gjk_shapes():
    rng = np.random.default_rng([SEED, 5])
    sphere_points = rng.normal(size=(100, 3))
    sphere_points *= 0.6 / np.linalg.norm(sphere_points, axis=1)[:, None]
    flat = rng.normal(size=(12, 3)) * 0.5
    flat[:, 2] = 1e-7 * rng.normal(size=12)  # a sliver: thickness 1e-7 of its size
    dup = rng.normal(size=(9, 3)) * 0.4
    dup = np.concatenate([dup, dup[:5], dup[:2] + 1e-15, dup[3:4]])  # repeated and near-repeated points
    angle = np.linspace(0.0, 2.0 * np.pi, 6, endpoint=False)
    return {
        "hull4-10": touche.ConvexPolyhedron(rng.normal(size=(int(rng.integers(4, 11)), 3)) * 0.5),
        "hull11-40": touche.ConvexPolyhedron(rng.normal(size=(int(rng.integers(11, 41)), 3)) * 0.45),
        "hull100": touche.ConvexPolyhedron(sphere_points),
        "flat_hull": touche.ConvexPolyhedron(flat),
        "dup_hull": touche.ConvexPolyhedron(dup),
        "polygon": touche.ConvexPolygon(np.column_stack([0.5 * np.cos(angle), 0.4 * np.sin(angle), np.zeros(6)])),
        "triangle": touche.Triangle(*ca.TRIANGLE),
        "box": touche.Box(ca.BOX),
        "sphere": touche.Sphere(ca.SPHERE_R),
        "capsule": touche.Capsule(*ca.CAPSULE),
        "cylinder": touche.Cylinder(*ca.CYLINDER),
        "cone": touche.Cone(*ca.CONE),
        "ellipsoid": touche.Ellipsoid([0.6, 0.4, 0.3]),
    }


GJK_SHAPES = _gjk_shapes()
GJK_NAMES = tuple(GJK_SHAPES)
GJK_PAIRS = [(a, b) for i, a in enumerate(GJK_NAMES) for b in GJK_NAMES[i:]]


def _reach(shape):
    """Radius of a ball about the local origin holding the shape."""
    from naive.gjk import support_function

    return float(support_function(shape, np.eye(4), _unit_vectors(np.random.default_rng(0), 4000)).max())


def _inside_excess(shape, poses, points):
    """How far world points lie outside a shape placed by poses (closed forms: touche's
    point-vs-shape kernels (Ericson 5.1) for all but the ellipsoid, which is tested here)."""
    if isinstance(shape, touche.Ellipsoid):
        local = _to_local(poses, points) / shape.radii
        return (np.linalg.norm(local, axis=1) - 1.0) * shape.radii.min()
    return touche.closest_point(shape, poses, points).distance


def _gjk_poses(a, b):
    """Random, touching and deep poses for one pair class (vectorised); returns (pose_a,
    pose_b, kind) with kind 0 random, 1 touching, 2 deep."""
    sa, sb = GJK_SHAPES[a], GJK_SHAPES[b]
    rng = np.random.default_rng([SEED, 55, GJK_NAMES.index(a), GJK_NAMES.index(b)])
    n_random, n_touch, n_deep = GJK_POSES
    n = n_random + n_touch + n_deep
    reach = _reach(sa) + _reach(sb)
    pose_a = np.tile(np.eye(4), (n, 1, 1))
    pose_b = pose_a.copy()
    pose_a[:, :3, :3] = _rotations(rng, n)
    pose_b[:, :3, :3] = _rotations(rng, n)
    pose_a[:, :3, 3] = rng.uniform(-1.0, 1.0, (n, 3))
    direction = _unit_vectors(rng, n)
    # random poses: the centre offset at which the shapes meet along each direction (bisection on
    # touche's boolean GJK, one batch call per step), times a factor uniform in [0.5, 1.5]
    lo = np.zeros(n_random)
    hi = np.full(n_random, 1.01 * reach)
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        pose_b[:n_random, :3, 3] = pose_a[:n_random, :3, 3] + mid[:, None] * direction[:n_random]
        meet = convex.intersects(sa, pose_a[:n_random], sb, pose_b[:n_random])
        lo = np.where(meet, mid, lo)
        hi = np.where(meet, hi, mid)
    offset = np.empty(n)
    offset[:n_random] = hi * rng.uniform(1.0 - GJK_SPREAD, 1.0 + GJK_SPREAD, n_random)
    offset[n_random + n_touch:] = rng.uniform(0.0, 0.05 * reach, n_deep)
    # touching: start clearly separated, then slide B back along the normal by the distance
    offset[n_random:n_random + n_touch] = rng.uniform(1.05, 1.5, n_touch) * reach
    pose_b[:, :3, 3] = pose_a[:, :3, 3] + offset[:, None] * direction
    touch = slice(n_random, n_random + n_touch)
    first = convex.gjk(sa, pose_a[touch], sb, pose_b[touch])
    pose_b[touch, :3, 3] -= first.normal * first.signed_distance[:, None]
    kind = np.repeat([0, 1, 2], GJK_POSES)
    return pose_a, pose_b, kind


@functools.lru_cache(maxsize=None)
def gjk_run(a, b):
    sa, sb = GJK_SHAPES[a], GJK_SHAPES[b]
    pose_a, pose_b, kind = _gjk_poses(a, b)
    got = convex.gjk(sa, pose_a, sb, pose_b)
    hit = convex.intersects(sa, pose_a, sb, pose_b)
    # curved classes: coal's default request (tight tolerances make its GJK / EPA on curved
    # supports fail: DBL_MAX distances and depths off by up to 100 %, seen with this seed)
    tolerance = None if _curved(a, b) else 1e-12
    coal_d, _, _, _ = ca.coal_signed(ca.coal_geometry(sa), pose_a, ca.coal_geometry(sb), pose_b, tolerance)
    return dict(pose_a=pose_a, pose_b=pose_b, kind=kind, got=got, hit=hit, coal_d=coal_d)


def _curved(a, b):
    return a in CURVED or b in CURVED


from touche import convex  # noqa: E402


def _support_sum(sa, pose_a, sb, pose_b, normals, indices):
    """h_A(n) + h_B(-n) per pose (closed-form support functions of tests/naive/gjk.py)."""
    from naive.gjk import support_function

    return np.array([
        support_function(sa, pose_a[i], normals[k:k + 1])[0] + support_function(sb, pose_b[i], -normals[k:k + 1])[0]
        for k, i in enumerate(indices)
    ])


@functools.lru_cache(maxsize=None)
def gjk_judged(a, b):
    """One class's comparison with coal and the referee's numbers (see the comment above
    GJK_POSES): masks of separated / penetrating poses, touche's and coal's values there, the
    certificate of each separated distance (signed - supporting-plane gap along the normal) and
    the bracket of each depth (realised depth along the normal - depth), and which poses coal
    is off on."""
    r = gjk_run(a, b)
    sa, sb = GJK_SHAPES[a], GJK_SHAPES[b]
    got, coal_d, kind = r["got"], r["coal_d"], r["kind"]
    signed = got.signed_distance
    touch = kind == 1
    sep = (signed > BAND) & ~touch
    pen = (signed < -BAND) & (coal_d < -BAND) & ~touch
    sep_idx, pen_idx = np.flatnonzero(sep), np.flatnonzero(pen)
    plane_gap = -_support_sum(sa, r["pose_a"], sb, r["pose_b"], got.normal[sep], sep_idx)
    realised = _support_sum(sa, r["pose_a"], sb, r["pose_b"], got.normal[pen], pen_idx)
    depth, coal_depth = -signed[pen], -coal_d[pen]
    return dict(
        sep=sep, pen=pen, touch=touch, plane_gap=plane_gap, certificate=signed[sep] - plane_gap,
        depth=depth, coal_depth=coal_depth, realised=realised, bracket=realised - depth,
        sep_off=np.abs(signed[sep] - coal_d[sep]) > GJK_DIST,
        pen_off=np.abs(depth - coal_depth) > GJK_DEPTH * depth,
    )


def gjk_coal_tally():
    """(pairs, judged separated, coal off among them, judged penetrating, coal off among them)
    summed over the classes."""
    total = sep = sep_off = pen = pen_off = 0
    for a, b in GJK_PAIRS:
        j = gjk_judged(a, b)
        total += len(j["sep"])
        sep += int(j["sep"].sum())
        sep_off += int(j["sep_off"].sum())
        pen += int(j["pen"].sum())
        pen_off += int(j["pen_off"].sum())
    return total, sep, sep_off, pen, pen_off


def test_gjk_vs_coal_counts_and_hit_rate():
    total = 0
    hits = 0
    for a, b in GJK_PAIRS:
        r = gjk_run(a, b)
        total += len(r["kind"])
        judged = r["kind"] != 1
        rate = r["hit"][judged].mean()
        assert 0.2 <= rate <= 0.8, f"{a}-{b}: hit rate {rate:.2f}"
        hits += int(r["hit"][judged].sum())
    assert total == len(GJK_PAIRS) * sum(GJK_POSES) >= 10_000
    judged_total = total - len(GJK_PAIRS) * GJK_POSES[1]
    assert 0.3 <= hits / judged_total <= 0.7, hits / judged_total
    pairs, sep, sep_off, pen, pen_off = gjk_coal_tally()
    assert pairs == total and sep + pen >= 0.9 * judged_total
    # touching poses whose GJK stalled (DEGENERATE, curved classes only: see above): rare
    stalled = sum(int((gjk_run(a, b)["got"].status[gjk_run(a, b)["kind"] == 1] > 2).sum()) for a, b in GJK_PAIRS)
    assert stalled <= 0.02 * len(GJK_PAIRS) * GJK_POSES[1], stalled
    print(f"\nGJK vs coal: {pairs} pairs; separated {sep} judged, coal off by > {GJK_DIST:g} on {sep_off} "
          f"(refereed: touche certified); penetrating {pen} judged, coal off by > {GJK_DEPTH:g} relative on "
          f"{pen_off} (refereed: touche's depth bracket); touching poses reported DEGENERATE: {stalled}")


@pytest.mark.parametrize("a,b", GJK_PAIRS, ids=[f"{a}-{b}" for a, b in GJK_PAIRS])
def test_gjk_pair_vs_coal(a, b):
    r = gjk_run(a, b)
    j = gjk_judged(a, b)
    sa, sb = GJK_SHAPES[a], GJK_SHAPES[b]
    got, coal_d, kind = r["got"], r["coal_d"], r["kind"]
    signed = got.signed_distance
    pose_a, pose_b = r["pose_a"], r["pose_b"]
    curved = _curved(a, b)
    # booleans and statuses agree with the sign outside the touching band
    clear = np.abs(signed) > BAND
    assert np.array_equal(r["hit"][clear], signed[clear] < 0)
    both_clear = clear & (np.abs(coal_d) > (COAL_CURVED_DIST if curved else BAND))
    assert np.array_equal(signed[both_clear] < 0, coal_d[both_clear] < 0), _worst(signed, coal_d)
    # touching poses: converged to GJK_DIST; a stalled GJK (curved only) says so in its status
    touch = j["touch"]
    converged = got.status <= 2
    assert np.abs(signed[touch & converged]).max(initial=0.0) <= GJK_DIST, _worst(signed[touch], np.zeros(touch.sum()))
    stalled = touch & ~converged
    assert not stalled.any() or (curved and np.all(got.status[stalled] == touche.Status.DEGENERATE)), got.status[touch]
    assert np.abs(signed[stalled]).max(initial=0.0) <= CURVED_TOUCH
    assert np.abs(coal_d[touch]).max() <= (COAL_CURVED_DIST if curved else GJK_DIST)
    if not curved:
        assert r["hit"][touch].all()  # closed sets: touching counts
    # statuses: converged on every random and deep pose
    assert (got.status[~touch] > 2).sum() <= 1, np.bincount(got.status[~touch])
    # separated: the certificate (every pose), then coal
    sep = j["sep"]
    assert sep.sum() >= 3
    pa, pb = got.point_a[sep], got.point_b[sep]
    scale = 1.0 + np.abs(pose_a[sep, :3, 3]).max(initial=0.0) + np.abs(pose_b[sep, :3, 3]).max(initial=0.0)
    assert _inside_excess(sa, pose_a[sep], pa).max(initial=0.0) <= GJK_DIST * scale
    assert _inside_excess(sb, pose_b[sep], pb).max(initial=0.0) <= GJK_DIST * scale
    assert np.allclose(np.linalg.norm(pb - pa, axis=1), signed[sep], rtol=0, atol=GJK_DIST)
    assert np.all(np.abs(j["certificate"]) <= GJK_DIST * scale), _worst(j["plane_gap"], signed[sep])
    off = j["sep_off"]
    assert curved or not off.any(), _worst(signed[sep], coal_d[sep])
    # where coal is off it stopped early: its distance is too long, and not by much
    excess = coal_d[sep][off] - signed[sep][off]
    assert np.all((excess > 0) & (excess <= COAL_CURVED_DIST)), excess
    # penetrating: the depth bracket (every pose), then coal
    pen = j["pen"]
    assert pen.sum() >= 5
    depth, coal_depth = j["depth"], j["coal_depth"]
    assert np.all(depth <= j["realised"] + GJK_DIST), _worst(depth, j["realised"])
    assert np.all(j["bracket"] <= GJK_DEPTH * depth + GJK_DIST), _worst(depth, j["realised"])
    off = j["pen_off"]
    assert curved or not off.any(), _worst(depth, coal_depth)
    # where coal is off its EPA stopped early: too shallow, and not by much
    short = depth[off] - coal_depth[off]
    assert np.all((short > 0) & (short <= COAL_CURVED_DEPTH * depth[off])), short


@pytest.mark.slow
def test_gjk_curved_depths_against_support_reference():
    """Per curved class, the penetrating pose where coal is most off (else the first one)
    against the global minimum of h_A(u) + h_B(-u) over unit u (sampling + restarted
    Nelder-Mead; touche agrees to 1.3e-10 relative, coal is off by up to 1.7e-3 at these poses):
    an independent check of EPA's depth, whose lower-bound property the bracket in
    test_gjk_pair_vs_coal relies on."""
    from naive.gjk import support_signed

    checked = 0
    for a, b in GJK_PAIRS:
        if not _curved(a, b):
            continue
        r = gjk_run(a, b)
        j = gjk_judged(a, b)
        pen = np.flatnonzero(j["pen"])
        k = int(np.argmax(j["depth"] - j["coal_depth"]))
        i = pen[k]
        ref, _ = support_signed(GJK_SHAPES[a], r["pose_a"][i], GJK_SHAPES[b], r["pose_b"][i])
        got = r["got"].signed_distance[i]
        assert abs(got - ref) <= 1e-8 * max(1.0, -ref), (a, b, i, got, ref, r["coal_d"][i])
        if j["pen_off"].any():  # the referee sides with touche
            assert abs(got - ref) < abs(r["coal_d"][i] - ref), (a, b, i, got, ref, r["coal_d"][i])
        checked += 1
    assert checked >= 30


def _gjk_table():
    rows = []
    for a, b in GJK_PAIRS:
        r = gjk_run(a, b)
        j = gjk_judged(a, b)
        signed, coal_d, kind = r["got"].signed_distance, r["coal_d"], r["kind"]
        sep, pen = j["sep"], j["pen"]
        rel = np.abs(j["depth"] - j["coal_depth"]) / j["depth"]
        rows.append(
            f"{a + '-' + b:22s} hit={r['hit'][kind != 1].mean():.2f} "
            f"max|d-coal| sep={np.abs(signed[sep] - coal_d[sep]).max(initial=0):.1e} "
            f"(coal off {j['sep_off'].sum()}/{sep.sum()}, certificate {np.abs(j['certificate']).max(initial=0):.1e}) "
            f"max rel depth={rel.max(initial=0):.1e} (coal off {j['pen_off'].sum()}/{pen.sum()}, "
            f"bracket {(j['bracket'] / j['depth']).max(initial=0):.1e}) "
            f"touch max |d|={np.abs(signed[kind == 1]).max():.1e} coal {np.abs(coal_d[kind == 1]).max():.1e} "
            f"status {np.bincount(r['got'].status, minlength=5).tolist()} touch hit {r['hit'][kind == 1].mean():.2f}"
        )
    pairs, sep, sep_off, pen, pen_off = gjk_coal_tally()
    rows.append(f"total {pairs} pairs: separated {sep} (coal off {sep_off}), penetrating {pen} (coal off {pen_off})")
    return "\n".join(rows)


def _table():
    rows = []
    for a, b in SUPPORTED:
        s = stats(a, b)
        rows.append(
            f"{a + '-' + b:22s} n={s['n']} hit={s['hit_rate']:.3f} band={s['band']} "
            f"bool_disagree={s['bool_disagree']} separated={s['separated']} "
            f"max_rel_dist={s['max_rel_dist']:.2e}"
            + (f" depth_n={s['depth_checked']} max_rel_depth={s['max_rel_depth']:.2e}" if "depth_checked" in s else "")
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(_table())
    print(_gjk_table())
