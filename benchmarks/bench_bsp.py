"""Solid-leaf BSP trees (touche.bsp.SolidBSP) vs the BVH + winding-number path (issue 19).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_bsp.py [--points 100000] [--rays 20000]
        [--repeats 3] [--threads 1] [--max-build 10] [--only bunny torus ...]

Meshes: the CLOSED meshes of the benchmark panel (benchmarks/panel.py), smallest first; a mesh
that touche refuses as a solid (open, inconsistently oriented, or a surface crossing itself:
SolidBSP's face check) is reported and skipped; once a
build takes longer than --max-build seconds the larger meshes are skipped (said so in the output).

Per mesh, same process, same inputs, timed in interleaved rounds (--repeats, min and median):
- build: ``SolidBSP.from_mesh`` (default options) vs the BVH's build for the same queries
  (``meshquery.MeshTree`` + its topology + winding data, what ``touche.contains`` builds on
  first use, + the ray tree of ``touche.raycast``);
- points: ``SolidBSP.contains`` vs ``touche.contains`` on --points seeded points in 1.2x the
  mesh box; ratio = BSP throughput / winding-number throughput (>= 1: BSP faster);
- rays: ``SolidBSP.raycast`` (first entry into the solid) vs ``touche.raycast`` (first surface
  hit; the same for origins outside) on --rays rays from a sphere around the mesh toward its box;
  ratio as above. Agreement of answers is printed beside (points that differ, hit flags that
  differ, max |t| difference).
With --pairs: solid mesh pairs (issue 19 item 2): ``touche.intersects`` of a mesh with a copy of
itself at the panel's seeded poses ("far", "near", "overlap", 50 each), surface-only meshes vs
the same meshes declared solid (``as_solid()``: the surface test, then the containment test when
the surfaces do not meet), one call per pair ("single") and one call for the 50 ("batch");
ratio = solid time / surface time (the issue's target: <= 1.5).
Threads: --threads (default 1: the machine is shared, one thread gives the steadiest ratio).
The load average before / after is printed: absolute times are noise on a shared machine, the
ratios from the same rounds are the result.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import panel  # noqa: E402

import touche as tc  # noqa: E402
from touche import GeometryError, bsp, meshquery  # noqa: E402
from touche.shapes import solid_orientation  # noqa: E402


def rounds(functions, repeats):
    """{name: [seconds per round]}, the functions timed round-robin (the same load for all)."""
    times = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return times


def bvh_build(mesh):
    tree = meshquery.MeshTree(mesh._packed[2], mesh._packed[3], mesh.scale)
    tree.topology()
    tree.winding_data()
    tree.ray_tree()
    return tree


def solid_pairs(names, repeats):
    print(f"{'mesh':14s} {'poses':8s} {'call':6s} {'surface us/pair':>16s} {'solid us/pair':>14s} "
          f"{'ratio min/med':>14s}")
    for entry in panel.meshes(only=names):
        if not panel.is_closed(entry.faces):
            continue
        try:
            solid_orientation(entry.vertices, entry.faces)
        except GeometryError:
            continue
        plain = tc.TriangleMesh(entry.vertices, entry.faces)
        solid = plain.as_solid()
        for kind in ("far", "near", "overlap"):
            poses = panel.poses(entry, kind, 50, seed=0)
            tc.intersects(plain, None, plain, poses)
            tc.intersects(solid, None, solid, poses)
            for batch in (False, True):
                def run(mesh):
                    if batch:
                        tc.intersects(mesh, None, mesh, poses)
                    else:
                        for pose in poses:
                            tc.intersects(mesh, None, mesh, pose)
                times = rounds({"surface": lambda: run(plain), "solid": lambda: run(solid)}, repeats)
                per = {k: np.array(v) / len(poses) * 1e6 for k, v in times.items()}
                print(f"{entry.name:14s} {kind:8s} {'batch' if batch else 'single':6s} "
                      f"{min(per['surface']):8.1f}/{np.median(per['surface']):6.1f} "
                      f"{min(per['solid']):7.1f}/{np.median(per['solid']):6.1f} "
                      f"{min(per['solid']) / min(per['surface']):6.2f}/"
                      f"{np.median(per['solid']) / np.median(per['surface']):5.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--rays", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-build", type=float, default=10.0)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--pairs", action="store_true", help="time solid mesh pairs in intersects instead")
    args = parser.parse_args()
    tc.set_num_threads(args.threads)
    if args.pairs:
        print(f"load average before: {os.getloadavg()}; threads {args.threads}; repeats {args.repeats} (min / median)")
        solid_pairs(args.only or ["bunny", "torus", "solo12_hip", "duck", "soccerball"], args.repeats)
        print(f"load average after: {os.getloadavg()}")
        return
    print(f"load average before: {os.getloadavg()}; threads {args.threads}; points {args.points:,}; "
          f"rays {args.rays:,}; repeats {args.repeats} (min / median)")
    # compile / load every kernel once on a tiny mesh, outside the timings
    tiny = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    warm = bsp.SolidBSP.from_mesh(tiny)
    warm.contains(np.zeros((2, 3)))
    warm.raycast(np.zeros((2, 3)), [1.0, 0.0, 0.0])
    tc.contains(tiny, None, np.zeros((2, 3)))
    tc.raycast(tiny, None, np.zeros((2, 3)), [1.0, 0.0, 0.0])
    header = (f"{'mesh':14s} {'tris':>7s} {'frags':>7s} {'depth':>5s} | {'BSP build s':>13s} {'BVH build s':>13s} | "
              f"{'pts BSP/WN':>11s} {'(Mpts/s BSP, WN)':>17s} {'differ':>6s} | {'rays BSP/BVH':>12s} "
              f"{'(Mrays/s BSP, BVH)':>19s} {'hit≠':>4s} {'max|dt|':>8s}")
    print(header)
    too_slow = None
    for entry in panel.meshes():
        if not panel.is_closed(entry.faces):
            continue
        if args.only and entry.name not in args.only:
            continue
        if too_slow is not None:
            print(f"{entry.name:14s} {len(entry.faces):7,d} skipped: larger than {too_slow}, whose build took "
                  f"more than {args.max_build} s")
            continue
        try:
            solid_orientation(entry.vertices, entry.faces)
        except GeometryError as error:
            print(f"{entry.name:14s} {len(entry.faces):7,d} skipped: {error}")
            continue
        mesh = tc.TriangleMesh(entry.vertices, entry.faces)
        start = time.perf_counter()
        try:
            tree = bsp.SolidBSP.from_mesh(mesh)
        except GeometryError as error:  # a surface crossing itself: no solid-leaf tree represents it
            print(f"{entry.name:14s} {len(entry.faces):7,d} skipped: {str(error)[:90]}...")
            continue
        first_build = time.perf_counter() - start
        builds = rounds({"bsp": lambda: bsp.SolidBSP.from_mesh(mesh), "bvh": lambda: bvh_build(mesh)},
                        args.repeats if first_build < args.max_build / 2 else 1)
        rng = np.random.default_rng(0)
        lo, hi = entry.vertices.min(axis=0), entry.vertices.max(axis=0)
        center, half = 0.5 * (lo + hi), 0.6 * (hi - lo)
        points = center + rng.uniform(-1.0, 1.0, (args.points, 3)) * half
        radius = np.linalg.norm(hi - lo)
        origins = rng.normal(size=(args.rays, 3))
        origins = center + origins / np.linalg.norm(origins, axis=1)[:, None] * radius
        targets = center + (rng.random((args.rays, 3)) - 0.5) * (hi - lo) * 1.3
        directions = targets - origins
        directions /= np.linalg.norm(directions, axis=1)[:, None]
        tc.contains(mesh, None, points[:10])  # the BVH and its winding data, outside the timing
        tc.raycast(mesh, None, origins[:10], directions[:10])
        out = {}
        timing = rounds({
            "bsp_points": lambda: out.__setitem__("bsp_points", tree.contains(points)),
            "wn_points": lambda: out.__setitem__("wn_points", tc.contains(mesh, None, points)),
            "bsp_rays": lambda: out.__setitem__("bsp_rays", tree.raycast(origins, directions)),
            "bvh_rays": lambda: out.__setitem__("bvh_rays", tc.raycast(mesh, None, origins, directions)),
        }, args.repeats)
        differ = int((out["bsp_points"] != out["wn_points"]).sum())
        bsp_hit, bvh_hit = out["bsp_rays"].hit, np.asarray(out["bvh_rays"].hit)
        both = bsp_hit & bvh_hit
        dt = float(np.abs(out["bsp_rays"].t[both] - np.asarray(out["bvh_rays"].t)[both]).max()) if both.any() else 0.0

        def pair(values):
            return f"{min(values):6.3f}/{np.median(values):6.3f}"

        def ratio(fast, slow):  # throughput ratio = time slow / time fast, on min and median
            return f"{min(timing[slow]) / min(timing[fast]):5.2f}/{np.median(timing[slow]) / np.median(timing[fast]):5.2f}"

        rate_bsp = args.points / np.median(timing["bsp_points"]) / 1e6
        rate_wn = args.points / np.median(timing["wn_points"]) / 1e6
        ray_bsp = args.rays / np.median(timing["bsp_rays"]) / 1e6
        ray_bvh = args.rays / np.median(timing["bvh_rays"]) / 1e6
        print(f"{entry.name:14s} {len(entry.faces):7,d} {len(tree.fragment_source):7,d} {tree.depth:5d} | "
              f"{pair(builds['bsp']):>13s} {pair(builds['bvh']):>13s} | {ratio('bsp_points', 'wn_points'):>11s} "
              f"({rate_bsp:6.2f}, {rate_wn:6.2f}) {differ:6d} | {ratio('bsp_rays', 'bvh_rays'):>12s} "
              f"({ray_bsp:7.3f}, {ray_bvh:7.3f}) {int((bsp_hit != bvh_hit).sum()):4d} {dt:8.1e}", flush=True)
        if first_build > args.max_build:
            too_slow = entry.name
    print(f"load average after: {os.getloadavg()}")
    print("ratios are min/median over the rounds; throughput ratio >= 1 means the BSP is faster")


if __name__ == "__main__":
    main()
