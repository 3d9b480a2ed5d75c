"""Continuous collision under translation + rotation: touche vs python-fcl continuousCollide.

    .venv/bin/python benchmarks/bench_ccd.py [--n 2000] [--quick]          # convex pairs
    .venv/bin/python benchmarks/bench_ccd.py --mesh [--mesh-n 200]          # two 9,048-triangle meshes
    .venv/bin/python benchmarks/bench_ccd.py --mesh --mesh-file differential/diff_pinion.stl   # a gear

Meshes (--mesh): pybullet_data's soccerball.obj (9,048 triangles, closed) twice, or any mesh of
pybullet_data (--mesh-file, centred on its bounding sphere); A moves from T0 to T1 over [0, 1] by
the screw motion (fcl CCDM_SCREW = touche Screw), B stays at the origin; start 3-4.8 radii away,
random end, up to ~pi of rotation, so about half the cases touch, at times spread over [0, 1].
Rounds are interleaved (touche then fcl on a case, then the next case, the order alternating) in
one process. fcl runs CCDC_NAIVE with 200 steps (toc_err = 1/200; its time is the first
colliding sample, i.e. up to 1/199 late) and, for the record, its conservative advancement. The
reference is dense sampling (--mesh-samples) of touche.bvh.intersects plus 50 bisections. The
ratio is touche total time / fcl total time. ``--tolerance 1e-6`` runs touche at the issue's
accuracy for this benchmark (1e-6 of t_max; the default is 1e-9): the tolerance only moves the
coarse acceptance after the step budget, so both figures are nearly equal (the measured times
stay ~1e-11 from the reference either way).
Where the cost goes (touche/_kernels/motion/ccd_mesh.py): the bounding balls then the convex hulls
advance to the hulls' contact (misses end there, ~5 steps); where the hulls touch on the meshes'
own triangles (the soccer ball: 117 of its 126 hits) that is the first contact, found by a static
search of ~30 node pairs; elsewhere (seams, the gear's teeth) the trees prove the front near the
contact clear (~1,000-2,000 node pairs, ~40-70 leaf pairs): the gear's hits cost that.

Motion: each pair moves A from a start pose T0 to an end pose T1 over [0, 1] by fcl's screw
motion (CCDM_SCREW: constant rotation about a fixed axis and a slide along it), given to touche
as the equal ``Screw`` (``screw_between``). B stays.
Workloads: box-box (one of them a 1e-3 thick plate) and two 30-vertex hulls (fcl.Convex), A
spinning up to ~3 turns over the interval.

Accuracy: both are compared with a dense reference (tests/naive/ccd.py: 4,000 samples of a static
test plus bisection; boxes by the numpy 15-axis test, hulls by touche.intersects). Columns:
missed = reference contacts reported as none; false = reported contacts the reference does not
see and that are not contacts at the reported time; |dt| = time error on common hits (median /
max). touche runs as one batch call (per pair time) and as single calls; fcl as its Python
per-pair API (one call per pair). ratio = touche single-call time / fcl time per pair.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from naive import ccd as R  # noqa: E402

import touche as tc  # noqa: E402
from touche.impact import ImpactStatus, time_of_impact  # noqa: E402
from touche.motion import Keyframes, Screw  # noqa: E402

SOLVERS = [
    ("CCDC_NAIVE", "GST_LIBCCD", 200),
    ("CCDC_NAIVE", "GST_INDEP", 200),
    ("CCDC_CONSERVATIVE_ADVANCEMENT", "GST_LIBCCD", 10),
    ("CCDC_CONSERVATIVE_ADVANCEMENT", "GST_INDEP", 10),
]


def cases(rng, n):
    """Start / end poses of A passing by B (at the origin) while spinning."""
    start = rng.normal(size=(n, 3))
    start *= (rng.uniform(1.5, 3.0, n) / np.linalg.norm(start, axis=1))[:, None]
    end = -start * rng.uniform(0.2, 1.5, (n, 1)) + rng.normal(size=(n, 3)) * 0.6
    r0 = Rotation.random(n, random_state=rng)
    spin = rng.normal(size=(n, 3))
    spin *= (rng.uniform(0.0, 3.0, n) * np.pi / np.linalg.norm(spin, axis=1))[:, None]  # < pi: slerp keeps it
    r1 = Rotation.from_rotvec(spin) * r0
    t0 = np.tile(np.eye(4), (n, 1, 1))
    t1 = np.tile(np.eye(4), (n, 1, 1))
    t0[:, :3, :3], t0[:, :3, 3] = r0.as_matrix(), start
    t1[:, :3, :3], t1[:, :3, 3] = r1.as_matrix(), end
    return t0, t1


def screw_between(t0, t1):
    """touche Screw motions equal to fcl's ScrewMotion(T0, T1) (CCDM_SCREW): rotation by the
    angle theta of R1 R0^T about the axis a through p = (T0 + T1 + a x o / tan(theta / 2)) / 2,
    o = T1 - T0 (translations), sliding (o . a) a. fcl's CCDM_LINEAR (InterpMotion) is not used:
    python-fcl's fcl builds it with the constructor that never calls computeVelocity(), so its
    velocities are uninitialised (its contact times disagree with the poses it was given)."""
    rotvec = Rotation.from_matrix(t1[:, :3, :3] @ np.swapaxes(t0[:, :3, :3], 1, 2)).as_rotvec()
    theta = np.linalg.norm(rotvec, axis=1)
    if (theta < 1e-6).any():
        raise ValueError("screw cases need a rotation (fcl's zero-angle branch mis-scales the slide)")
    axis = rotvec / theta[:, None]
    o = t1[:, :3, 3] - t0[:, :3, 3]
    p = 0.5 * (t0[:, :3, 3] + t1[:, :3, 3] + np.cross(axis, o) / np.tan(theta / 2)[:, None])
    slide = (o * axis).sum(1)[:, None] * axis
    motion = Screw(slide, rotvec, t0, p)
    if not np.allclose(motion.pose_at(1.0), t1, atol=1e-9):
        raise AssertionError("screw parameters do not reach T1")
    return slide, rotvec, p


def fcl_geometry(fcl, shape):
    if isinstance(shape, tc.Box):
        return fcl.Box(*shape.extents)
    vertices = np.asarray(shape.vertices, dtype=np.float64)
    faces = ConvexHull(vertices).simplices
    flat = np.column_stack([np.full(len(faces), 3), faces]).ravel()
    return fcl.Convex(vertices, len(faces), flat)


def run_fcl(fcl, a, b, t0, t1, solver, gjk, iterations):
    ga, gb = fcl_geometry(fcl, a), fcl_geometry(fcl, b)
    request = fcl.ContinuousCollisionRequest(
        num_max_iterations=iterations,
        ccd_motion_type=fcl.CCDMotionType.CCDM_SCREW,
        gjk_solver_type=getattr(fcl.GJKSolverType, gjk),
        ccd_solver_type=getattr(fcl.CCDSolverType, solver),
    )
    identity = fcl.Transform()
    times = np.empty(len(t0))
    start = time.perf_counter()
    for i in range(len(t0)):
        ta = fcl.Transform(t0[i, :3, :3], t0[i, :3, 3])
        ta_end = fcl.Transform(t1[i, :3, :3], t1[i, :3, 3])
        oa = fcl.CollisionObject(ga, ta)
        ob = fcl.CollisionObject(gb, identity)
        result = fcl.ContinuousCollisionResult()
        fcl.continuousCollide(oa, ta_end, ob, identity, request, result)
        times[i] = result.time_of_contact if result.is_collide else np.inf
    return times, (time.perf_counter() - start) / len(t0)


class ScrewPath:
    """Screw poses by the independent formula of tests/naive/ccd.py."""

    def __init__(self, t0, slide, spin, centre):
        self.t0, self.slide, self.spin, self.centre = t0, slide, spin, centre

    def at(self, t, rows):
        return R.screw_poses(self.t0[rows], self.slide[rows], self.spin[rows], self.centre[rows], t)


def reference(a, b, t0, slide, spin, centre, samples):
    n = len(t0)
    path = ScrewPath(t0, slide, spin, centre)
    if isinstance(a, tc.Box) and isinstance(b, tc.Box):
        half_a, half_b = a.half_extents, b.half_extents
        eye = np.eye(4)[None]

        def separation(t, rows):
            pa = path.at(t, rows)
            cb, eb = R.parallelepiped(np.repeat(eye, len(rows), 0), np.zeros(3), half_b)
            return R.box_box_separation(pa[:, :3, 3], np.swapaxes(pa[:, :3, :3], 1, 2) * half_a[:, None], cb, eb)
    else:
        def separation(t, rows):
            touching = tc.intersects(a, np.ascontiguousarray(path.at(t, rows)), b, None)
            return np.where(touching, -1.0, 1.0)

    radius = np.linalg.norm(a.points, axis=1).max() + np.linalg.norm(b.points, axis=1).max()

    def cull(t, rows):
        return np.linalg.norm(path.at(t, rows)[:, :3, 3], axis=1) - radius

    return R.first_contact(separation, n, 1.0, samples=samples, cull=cull), separation


def accuracy(times, ref, separation):
    """(missed, false hits, median |dt|, max |dt|) against the reference; a reported contact
    the reference does not see counts as false unless the static test confirms it."""
    hit, ref_hit = np.isfinite(times), np.isfinite(ref)
    missed = int((ref_hit & ~hit).sum())
    extra = np.flatnonzero(hit & ~ref_hit)
    false = 0
    if len(extra):
        false = int((separation(np.clip(times[extra], 0, 1), extra) > 1e-9).sum())
    both = hit & ref_hit
    dt = np.abs(times[both] - ref[both])
    return missed, false, (np.median(dt) if len(dt) else np.nan), dt.max(initial=0.0)


def mesh_cases(rng, n, radius):
    """Start / end poses of A (a ball-like mesh of the given radius) around B at the origin."""
    start = rng.normal(size=(n, 3))
    start *= (rng.uniform(3.0, 4.8, n) * radius / np.linalg.norm(start, axis=1))[:, None]
    end = -start * rng.uniform(0.0, 1.2, (n, 1)) + rng.normal(size=(n, 3)) * 1.6 * radius
    r0 = Rotation.random(n, random_state=rng)
    spin = rng.normal(size=(n, 3))
    spin *= (rng.uniform(0.0, 0.95, n) * np.pi / np.linalg.norm(spin, axis=1))[:, None]
    r1 = Rotation.from_rotvec(spin) * r0
    t0 = np.tile(np.eye(4), (n, 1, 1))
    t1 = np.tile(np.eye(4), (n, 1, 1))
    t0[:, :3, :3], t0[:, :3, 3] = r0.as_matrix(), start
    t1[:, :3, :3], t1[:, :3, 3] = r1.as_matrix(), end
    return t0, t1


def mesh_benchmark(args):
    import fcl
    import pybullet_data
    import trimesh

    from touche._kernels import ccd_mesh
    from touche.impact import _mesh_hull

    tolerance = args.tolerance

    path = os.path.join(pybullet_data.getDataPath(), args.mesh_file)
    loaded = trimesh.load(path, force="mesh", process=False)
    vertices = np.ascontiguousarray(loaded.vertices, dtype=np.float64)
    faces = np.ascontiguousarray(loaded.faces, dtype=np.int64)
    mesh = tc.TriangleMesh(vertices, faces)
    # the part's origin at its bounding sphere's centre (the cases pass A around B's centre)
    vertices = np.ascontiguousarray(vertices - mesh.bvh.node_bounds[0, 27:30])
    mesh = tc.TriangleMesh(vertices, faces)
    radius = float(mesh.bvh.node_bounds[0, 30])

    def model():
        bvh = fcl.BVHModel()
        bvh.beginModel(len(vertices), len(faces))
        bvh.addSubModel(vertices, faces)
        bvh.endModel()
        return bvh

    ga, gb = model(), model()
    rng = np.random.default_rng(args.seed)
    n = args.mesh_n
    t0, t1 = mesh_cases(rng, n, radius)
    slide, spin, centre = screw_between(t0, t1)
    motions = [Screw(slide[i], spin[i], t0[i], centre[i]) for i in range(n)]
    naive = fcl.ContinuousCollisionRequest(num_max_iterations=200, toc_err=1.0 / 200,
                                           ccd_motion_type=fcl.CCDMotionType.CCDM_SCREW,
                                           ccd_solver_type=fcl.CCDSolverType.CCDC_NAIVE)
    advancement = fcl.ContinuousCollisionRequest(num_max_iterations=200, toc_err=1e-6,
                                                 ccd_motion_type=fcl.CCDMotionType.CCDM_SCREW,
                                                 ccd_solver_type=fcl.CCDSolverType.CCDC_CONSERVATIVE_ADVANCEMENT)
    identity = fcl.Transform()

    def fcl_once(i, request):
        oa = fcl.CollisionObject(ga, fcl.Transform(t0[i, :3, :3], t0[i, :3, 3]))
        ob = fcl.CollisionObject(gb, identity)
        result = fcl.ContinuousCollisionResult()
        fcl.continuousCollide(oa, fcl.Transform(t1[i, :3, :3], t1[i, :3, 3]), ob, identity, request, result)
        return result.time_of_contact if result.is_collide else np.inf

    time_of_impact(mesh, motions[0], mesh, None, 1.0, tolerance)  # compile / load (and build the hull)
    fcl_once(0, naive)
    ours = np.empty(n)
    steps = np.empty((n, 3))
    theirs = np.empty(n)
    ours_s = np.full(n, np.inf)
    theirs_s = np.full(n, np.inf)
    # rounds x cases, interleaved (touche then fcl on a case, the order alternating); the
    # per-case minimum over the rounds filters the scheduler stalls of a shared, loaded machine
    for round_ in range(args.rounds):
        for i in range(n):
            for turn in ((0, 1) if (i + round_) % 2 == 0 else (1, 0)):
                start = time.perf_counter()
                if turn == 0:
                    result = time_of_impact(mesh, motions[i], mesh, None, 1.0, tolerance)
                    ours_s[i] = min(ours_s[i], time.perf_counter() - start)
                    ours[i] = result.time if result.status != ImpactStatus.MISS else np.inf
                else:
                    theirs[i] = fcl_once(i, naive)
                    theirs_s[i] = min(theirs_s[i], time.perf_counter() - start)
    # kernel statistics (same queries, not timed)
    hull = _mesh_hull(mesh)
    hulls = (*hull[:3], *hull[:3], ccd_mesh.HANDOVER, 2.0 * hull[3])
    rows_b = tc.Static().packed()[0]
    out = np.empty(ccd_mesh.OUT_SIZE)
    tree = mesh.bvh
    for i in range(n):
        ball = np.ascontiguousarray(tree.node_bounds[0, 27:31])
        ccd_mesh.mesh_toi(*tree._arrays(), ball, motions[i].packed()[0], 0, *tree._arrays(), 0, np.zeros(1),
                          np.zeros((1, 3)), ball, rows_b, 1.0, mesh.scale, tolerance or 1e-9, 2_000_000,
                          ccd_mesh.DESCEND, *hulls, out)
        steps[i] = out[9:12]  # advancement steps, node pairs evaluated, leaf pairs
    k = min(n, args.fcl_ca_n)
    ca = np.empty(k)
    start = time.perf_counter()
    for i in range(k):
        ca[i] = fcl_once(i, advancement)
    ca_s = (time.perf_counter() - start) / max(k, 1)
    # reference: dense sampling of the static mesh test + bisection
    kpath = ScrewPath(t0, slide, spin, centre)

    def separation(t, rows):
        touching = tc.bvh.intersects(mesh, np.ascontiguousarray(kpath.at(t, rows)), mesh, np.eye(4))
        return np.where(np.atleast_1d(touching), -1.0, 1.0)

    def cull(t, rows):
        return np.linalg.norm(kpath.at(t, rows)[:, :3, 3], axis=1) - 2.0 * radius

    reference = R.first_contact(separation, n, 1.0, samples=args.mesh_samples, iterations=50, cull=cull)
    load = os.getloadavg()
    print(f"touche tolerance {tolerance or 1e-9:g} of t_max (time_of_impact(..., tolerance={tolerance}))")
    print(f"two {args.mesh_file} meshes ({len(faces)} triangles each), {n} cases, screw motions over [0, 1] "
          f"(translation + rotation up to ~pi); reference {args.mesh_samples} samples + bisection; "
          f"load average {load[0]:.2f} / {load[1]:.2f} on {os.cpu_count()} cores; times: per-case minimum "
          f"of {args.rounds} interleaved rounds")
    print(f"  reference: {np.isfinite(reference).mean():.2f} of the cases touch")
    header = f"  {'engine':34s} {'mean ms':>8s} {'median ms':>9s} {'missed':>6s} {'false':>6s} {'med |dt|':>9s} {'max |dt|':>9s} {'late':>6s}"
    print(header)
    for label, times, secs in (("touche time_of_impact", ours, ours_s), ("fcl NAIVE 200 steps", theirs, theirs_s),
                               (f"fcl CONSERVATIVE_ADV. (first {k})", ca, None)):
        count = len(times)
        missed, false, med, mx = accuracy(times, reference[:count], lambda t, rows: separation(t, rows))
        both = np.isfinite(times) & np.isfinite(reference[:count])
        late = int((times[both] > reference[:count][both] + 1e-9).sum())
        mean = np.mean(secs) * 1e3 if secs is not None else ca_s * 1e3
        median = np.median(secs) * 1e3 if secs is not None else np.nan
        print(f"  {label:34s} {mean:8.3f} {median:9.3f} {missed:6d} {false:6d} {med:9.1e} {mx:9.1e} {late:6d}")
    print(f"  ratio touche / fcl NAIVE (sum of per-case minima): {ours_s.sum() / theirs_s.sum():.3f}; "
          f"median of per-case ratios {np.median(ours_s / theirs_s):.3f}")
    hit = np.isfinite(ours)
    bins = [("misses", ~hit)] + [(f"hits t in [{lo:.2f}, {hi:.2f})", hit & (ours >= lo) & (ours < hi))
                                 for lo, hi in ((0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.01))]
    for name, rows in [("hits", hit)] + bins:
        if rows.any():
            print(f"    {name:22s} ({rows.sum():3d}): touche {ours_s[rows].mean() * 1e3:.3f} ms, fcl {theirs_s[rows].mean() * 1e3:.3f} ms, "
                  f"ratio {ours_s[rows].sum() / theirs_s[rows].sum():.3f}; kernel steps / node pairs / leaf pairs "
                  f"{np.round(steps[rows].mean(0)).astype(int).tolist()}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", action="store_true", help="the mesh-mesh benchmark instead")
    parser.add_argument("--mesh-n", type=int, default=200)
    parser.add_argument("--mesh-file", default="soccerball.obj",
                        help="--mesh: a mesh of pybullet_data (path inside it), e.g. differential/diff_pinion.stl "
                             "(a 14,800-triangle gear: non-convex)")
    parser.add_argument("--mesh-samples", type=int, default=2000)
    parser.add_argument("--tolerance", type=float, default=None,
                        help="--mesh: touche's time tolerance (fraction of t_max; default 1e-9); the issue's "
                             "benchmark asks for 1e-6")
    parser.add_argument("--fcl-ca-n", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (per-case minimum)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--fcl-n", type=int, default=500, help="pairs given to each fcl solver")
    parser.add_argument("--samples", type=int, default=4000, help="reference samples over [0, 1]")
    parser.add_argument("--quick", action="store_true", help="n = 300, fcl-n = 150, samples = 1000")
    args = parser.parse_args()
    if args.quick:
        args.n, args.fcl_n, args.samples = 300, 150, 1000
    if args.mesh:
        mesh_benchmark(args)
        return
    import fcl

    rng = np.random.default_rng(0)
    workloads = [
        ("box-plate", tc.Box([1.6, 1e-3, 0.6]), tc.Box([0.8, 0.6, 1.0])),
        ("box-box", tc.Box([1.0, 1.5, 0.7]), tc.Box([0.8, 0.6, 1.2])),
        ("hull-hull (30 pts)", tc.ConvexPolyhedron(rng.normal(size=(30, 3)) * 0.5),
         tc.ConvexPolyhedron(rng.normal(size=(30, 3)) * 0.5)),
    ]
    print(f"n = {args.n} pairs (fcl: first {args.fcl_n}), [0, 1], rotation + translation, "
          f"reference {args.samples} samples + bisection")
    header = (f"{'workload':20s} {'engine':44s} {'us/pair':>9s} {'ratio':>7s} {'missed':>7s} {'false':>6s} "
              f"{'med |dt|':>9s} {'max |dt|':>9s}")
    for name, a, b in workloads:
        t0, t1 = cases(rng, args.n)
        slide, spin, centre = screw_between(t0, t1)
        motion = Screw(slide, spin, t0, centre)
        time_of_impact(a, motion, b, None, 1.0)  # compile / load
        start = time.perf_counter()
        result = time_of_impact(a, motion, b, None, 1.0)
        batch_us = (time.perf_counter() - start) / args.n * 1e6
        singles = min(300, args.n)
        one = [Screw(slide[i], spin[i], t0[i], centre[i]) for i in range(singles)]
        time_of_impact(a, one[0], b, None, 1.0)
        start = time.perf_counter()
        for i in range(singles):
            time_of_impact(a, one[i], b, None, 1.0)
        single_us = (time.perf_counter() - start) / singles * 1e6
        ours = np.where(result.status == ImpactStatus.MISS, np.inf, result.time)
        ref, separation = reference(a, b, t0, slide, spin, centre, args.samples)
        print(header)
        m, f_, med, mx = accuracy(ours, ref, separation)
        print(f"{name:20s} {'touche batch (1 call)':44s} {batch_us:9.2f} {'':7s} {m:7d} {f_:6d} {med:9.1e} {mx:9.1e}")
        print(f"{'':20s} {'touche single call':44s} {single_us:9.2f}")
        k = min(args.fcl_n, args.n)
        for solver, gjk, iterations in SOLVERS:
            times, per_call = run_fcl(fcl, a, b, t0[:k], t1[:k], solver, gjk, iterations)
            m, f_, med, mx = accuracy(times, ref[:k], lambda t, rows: separation(t, rows))
            label = f"fcl {solver.replace('CCDC_', '')} {gjk} it={iterations}"
            print(f"{'':20s} {label:44s} {per_call * 1e6:9.2f} {single_us / (per_call * 1e6):7.3f} "
                  f"{m:7d} {f_:6d} {med:9.1e} {mx:9.1e}")
        print(f"  (reference hit rate {np.isfinite(ref).mean():.2f}; touche on the first {k}: "
              f"{accuracy(ours[:k], ref[:k], separation)[:2]} missed/false)\n")


if __name__ == "__main__":
    main()
