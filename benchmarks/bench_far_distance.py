"""Mesh–mesh distance on the whole benchmark panel (issue 18, far poses): touche single calls and
one batch call against python-fcl and coal, per mesh and range, in one process.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_far_distance.py [--poses 24] [--repeats 5]
                                  [--only soccerball ...] [--ranges overlap near far] [--json out.json]

The distance rows of bench_panel.py only (same peers, same interleaved best-of-rounds timing,
same poses), so that a change to the distance search can be measured before / after on every
mesh and range without the boolean and build rows. Ratios = touche time / peer time (< 1: touche
faster); absolute times on a shared machine are noise.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_panel  # noqa: E402
import panel  # noqa: E402

import touche as tc  # noqa: E402


def measure(m, n, repeats, ranges):
    mesh = tc.TriangleMesh(m.vertices, m.faces)
    tc.bvh.tree_of(mesh)
    peers = bench_panel.Peers(m.vertices, m.faces)
    out = {}
    for kind in ranges:
        poses = panel.poses(m, kind, n, seed=0)
        tf = peers.fcl_transforms(poses)
        tcoal = peers.coal_transforms(poses)
        bench_panel.touche_single_distance(mesh, poses[:2])
        tc.distance(mesh, None, mesh, poses[:2])
        times = bench_panel.rounds([lambda: bench_panel.touche_single_distance(mesh, poses),
                                    lambda: tc.distance(mesh, None, mesh, poses),
                                    lambda: peers.fcl_distance(tf), lambda: peers.coal_distance(tcoal)], repeats)
        t = dict(zip(("touche", "touche batch", "python-fcl", "coal"), (x / n for x in times)))
        # the answers agree with the peers (python-fcl reports -1 for colliding pairs)
        mine = tc.distance(mesh, None, mesh, poses).distance
        theirs = np.array(peers.coal_distance(tcoal))
        tol = 1e-9 * np.maximum(mine, 1e-3 * m.size)
        t["agree"] = int(np.sum((np.abs(np.maximum(theirs, 0.0) - mine) <= tol) | (mine == 0.0)))
        out[kind] = t
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--ranges", nargs="*", default=list(panel.RANGES))
    parser.add_argument("--json", help="write the per-call seconds here")
    args = parser.parse_args()
    load = os.getloadavg()
    results = {}
    for m in panel.meshes(only=set(args.only) if args.only else None):
        res = measure(m, args.poses, args.repeats, args.ranges)
        results[m.name] = {"triangles": len(m.faces), **res}
        cells = "  ".join(f"{k}: {res[k]['touche'] / res[k]['python-fcl']:.2f}x/{res[k]['touche batch'] / res[k]['python-fcl']:.2f}x"
                          f" ({res[k]['agree']}/{args.poses})" for k in args.ranges)
        print(f"{m.name:18s} {len(m.faces):8,d}  single/batch vs fcl  {cells}", flush=True)
    print(f"load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": [load[0], os.getloadavg()[0]], "results": results}, indent=1))


if __name__ == "__main__":
    main()
