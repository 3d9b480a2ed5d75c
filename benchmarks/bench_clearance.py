"""Clearance of two real STL parts: touche.clearance vs python-fcl (and touche.bvh.distance),
same parts, same poses, same process, interleaved rounds.

    python benchmarks/bench_clearance.py            # 2 part pairs, 400 poses, 5 rounds
    python benchmarks/bench_clearance.py --quick    # 150 poses, 3 rounds
    python benchmarks/bench_clearance.py --panel    # every panel mesh (benchmarks/panel.py) at 3 ranges

Parts from pybullet_data: kuka_iiwa link_1 (2,759 triangles) vs link_2 (1,449), and
differential/diff_ring.stl (57,640) against itself. Part B takes random poses (uniform rotations,
translations in a cube scaled to the parts so that some poses intersect and most are near misses).

Workloads, per pose (all times are medians over rounds of the mean per pose):
  * single calls from Python: ``touche.clearance(a, None, b, pose)`` (intersecting, distance,
    closest points, triangle ids) vs python-fcl ``fcl.distance`` with nearest points on the same
    OBBRSS models (its collide is not needed for the ratio: fcl.distance alone is timed), and vs
    ``touche.bvh.distance`` (the BVH module's distance, for reference);
  * batch: one ``touche.clearance(a, None, b, poses)`` call on all cores vs the fcl loop.
With ``--panel`` the meshes are those of the benchmark panel (benchmarks/panel.py, a mesh against
a second copy of itself at the panel's seeded "overlap", "near" and "far" poses; ``--max-triangles``
leaves out the larger ones): single calls of touche.clearance, python-fcl's distance and
touche.bvh.distance per mesh and range, best of ``--rounds`` round-robin rounds, and the worst and
median ratio over the panel.

Ratios are touche / peer (< 1: touche is faster). Every round runs every contender once, in a
rotating order, so load changes on this shared 2-core machine hit all of them alike; the 1-minute
load average before and after is printed. The answers are compared before timing: intersecting
flags against fcl.collide, distances against fcl.distance on the separated poses.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import touche as tc  # noqa: E402
import touche.bvh  # noqa: E402,F401
from touche.clearance import prepare  # noqa: E402

PAIRS = [  # (A, B, translation half-width / largest part size)
    ("kuka_iiwa/meshes/link_1.stl", "kuka_iiwa/meshes/link_2.stl", 0.7),
    ("differential/diff_ring.stl", "differential/diff_ring.stl", 0.8),
]


def _fcl_model(fcl, mesh):
    model = fcl.BVHModel()
    model.beginModel(len(mesh.vertices), len(mesh.faces))
    model.addSubModel(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64))
    model.endModel()
    return model


def _single_calls(fcl, part_a, part_b, mesh_a, mesh_b, poses, object_a, objects_b):
    """The timed single-call loops over ``poses``: touche.clearance, python-fcl's distance (the
    same poses as ``objects_b``) and touche.bvh.distance."""

    def touche_single():
        for p in poses:
            tc.clearance(part_a, None, part_b, p)

    def fcl_single():
        request = fcl.DistanceRequest(enable_nearest_points=True)
        for ob in objects_b:
            fcl.distance(object_a, ob, request, fcl.DistanceResult())

    def bvh_single():
        for p in poses:
            tc.bvh.distance(mesh_a, None, mesh_b, p)

    return touche_single, fcl_single, bvh_single


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--poses", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--panel", action="store_true", help="the benchmark panel's meshes instead")
    parser.add_argument("--max-triangles", type=int, default=130_000)
    args = parser.parse_args(argv)
    if args.panel:
        return panel_main(args)
    count = args.poses or (150 if args.quick else 400)
    rounds = args.rounds or (3 if args.quick else 5)
    import fcl
    import pybullet_data

    root = pybullet_data.getDataPath()
    load_before = os.getloadavg()[0]
    rows = []
    for name_a, name_b, spread in PAIRS:
        a = tc.mesh.load(os.path.join(root, name_a))
        b = a if name_b == name_a else tc.mesh.load(os.path.join(root, name_b))
        size = max(np.ptp(a.vertices, axis=0).max(), np.ptp(b.vertices, axis=0).max())
        poses = np.asarray(tc.pose.as_matrices(tc.Pose.random(count, scale=spread * size, seed=7)))
        started = time.perf_counter()
        part_a, part_b = prepare(a), prepare(b)
        build_touche = time.perf_counter() - started
        started = time.perf_counter()
        model_a = _fcl_model(fcl, a)
        model_b = model_a if b is a else _fcl_model(fcl, b)
        build_fcl = time.perf_counter() - started
        object_a = fcl.CollisionObject(model_a, fcl.Transform())
        objects_b = [fcl.CollisionObject(model_b, fcl.Transform(p[:3, :3], p[:3, 3])) for p in poses]
        tc.bvh.distance(a, None, b, poses[0])  # builds and keeps the BVH module's trees

        touche_single, fcl_single, bvh_single = _single_calls(fcl, part_a, part_b, a, b, poses, object_a, objects_b)

        def touche_batch():
            tc.clearance(part_a, None, part_b, poses)

        # the same answers first
        ours = tc.clearance(part_a, None, part_b, poses)
        collided = np.array([bool(fcl.collide(object_a, ob, fcl.CollisionRequest(), fcl.CollisionResult()))
                             for ob in objects_b])
        fcl_distance = np.array([fcl.distance(object_a, ob, fcl.DistanceRequest(enable_nearest_points=True),
                                              fcl.DistanceResult()) for ob in objects_b])
        assert (collided == ours.intersecting).all(), "intersection flags differ from fcl.collide"
        separated = ~collided
        worst = float(np.max(np.abs(ours.distance[separated] - fcl_distance[separated]) / size))
        assert worst < 1e-9, worst

        contenders = {"touche single": touche_single, "fcl single": fcl_single, "bvh single": bvh_single,
                      "touche batch": touche_batch}
        for fn in contenders.values():
            fn()  # warm-up
        times = {name: [] for name in contenders}
        names = list(contenders)
        for r in range(rounds):
            for k in range(len(names)):
                name = names[(r + k) % len(names)]
                start = time.perf_counter()
                contenders[name]()
                times[name].append((time.perf_counter() - start) / count)
        t = {name: float(np.median(v)) for name, v in times.items()}
        label = f"{os.path.basename(name_a)} ({len(a.faces):,}) vs {os.path.basename(name_b)} ({len(b.faces):,})"
        print(f"{label}: {count} poses, {collided.mean() * 100:.0f} % intersecting, max |d - d_fcl| / size "
              f"{worst:.1e}; build: touche {build_touche * 1e3:.0f} ms, fcl {build_fcl * 1e3:.0f} ms; "
              f"work per pose: {ours.work[:, 0].mean():.0f} node pairs, {ours.work[:, 1].mean():.0f} triangle pairs")
        rows += [
            (f"{label}: single call", "python-fcl distance", t["touche single"], t["fcl single"]),
            (f"{label}: single call", "touche.bvh.distance", t["touche single"], t["bvh single"]),
            (f"{label}: batch (all cores) vs loop", "python-fcl distance", t["touche batch"], t["fcl single"]),
        ]
    load_after = os.getloadavg()[0]
    print(f"\n{'workload':<66} {'peer':<20} {'touche us':>10} {'peer us':>10} {'ratio':>7}")
    for name, peer, ours_t, peer_t in rows:
        print(f"{name:<66} {peer:<20} {ours_t * 1e6:>10.1f} {peer_t * 1e6:>10.1f} {ours_t / peer_t:>7.2f}")
    print(f"load average (1 min) before {load_before:.2f}, after {load_after:.2f} on {os.cpu_count()} cores")


def panel_main(args):
    """touche.clearance vs python-fcl distance (and touche.bvh.distance) on the panel meshes."""
    import fcl

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import panel

    count = args.poses or 20
    rounds = args.rounds or 3
    load_before = os.getloadavg()[0]
    rows = []
    for m in panel.meshes(max_triangles=args.max_triangles):
        mesh = tc.TriangleMesh(m.vertices, m.faces)
        part = prepare(mesh)  # built once, outside the timings (as fcl's model)
        model = _fcl_model(fcl, mesh)
        object_a = fcl.CollisionObject(model, fcl.Transform())
        for kind in panel.RANGES:
            poses = panel.poses(m, kind, count, seed=0)
            objects_b = [fcl.CollisionObject(model, fcl.Transform(p[:3, :3], p[:3, 3])) for p in poses]
            ours = tc.clearance(part, None, part, poses)
            fcl_distance = np.array([fcl.distance(object_a, ob, fcl.DistanceRequest(enable_nearest_points=True),
                                                  fcl.DistanceResult()) for ob in objects_b])
            separated = ~ours.intersecting
            worst = float(np.max(np.abs(ours.distance[separated] - fcl_distance[separated]), initial=0.0) / m.size)

            contenders = _single_calls(fcl, part, part, mesh, mesh, poses, object_a, objects_b)
            for fn in contenders:
                fn()
            best = [np.inf] * len(contenders)
            for _ in range(rounds):
                for k, fn in enumerate(contenders):
                    start = time.perf_counter()
                    fn()
                    best[k] = min(best[k], (time.perf_counter() - start) / count)
            rows.append((m.name, len(m.faces), kind, int(ours.intersecting.sum()), worst, *best))
    load_after = os.getloadavg()[0]
    print(f"{'mesh':<18} {'triangles':>9} {'range':<8} {'hits':>4} {'|d-fcl|/size':>12} {'clearance us':>12} "
          f"{'fcl us':>9} {'bvh us':>9} {'vs fcl':>7} {'vs bvh':>7}")
    for name, faces, kind, hits, worst, ours_t, fcl_t, bvh_t in rows:
        print(f"{name:<18} {faces:>9,} {kind:<8} {hits:>4} {worst:>12.1e} {ours_t * 1e6:>12.1f} {fcl_t * 1e6:>9.1f} "
              f"{bvh_t * 1e6:>9.1f} {ours_t / fcl_t:>7.2f} {ours_t / bvh_t:>7.2f}")
    vs_fcl = np.array([r[5] / r[6] for r in rows])
    vs_bvh = np.array([r[5] / r[7] for r in rows])
    print(f"clearance / fcl distance: worst {vs_fcl.max():.2f}, median {np.median(vs_fcl):.2f}; "
          f"clearance / touche.bvh.distance: worst {vs_bvh.max():.2f}, median {np.median(vs_bvh):.2f} "
          f"({len(rows)} mesh-range cases, {count} poses each)")
    print(f"load average (1 min) before {load_before:.2f}, after {load_after:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
