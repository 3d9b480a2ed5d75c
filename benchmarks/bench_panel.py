"""Mesh-mesh workloads on every panel mesh (benchmarks/panel.py): touche vs python-fcl and coal
in the same process on the same inputs, judged by the worst mesh (issue 18).

    .venv/bin/python benchmarks/bench_panel.py [--poses 24] [--repeats 3] [--only diff_ring ...]
                                               [--write]   # replace the panel section of BENCHMARKS.md

Per mesh, two copies (A at the identity, B at the panel's poses, ranges overlap / near / far):
- distance, one call per pose: ``touche.distance(mesh, None, mesh, pose)`` vs
  ``fcl.distance`` (prepared CollisionObjects, ``setTransform`` per pose, new request / result)
  and ``coal.distance`` (prebuilt Transform3s, new result per call);
- distance, batch: one ``touche.distance`` call on the (n, 4, 4) poses (2 threads on this
  machine) per pose, against the peers' per-call time (they have no batch API);
- boolean, one call / batch: ``touche.intersects`` vs ``fcl.collide`` (default request) and
  ``coal.collide`` (``CollisionRequest(NO_REQUEST, 1)``);
- BVH build: ``touche.bvh.BVH(vertices, faces)`` (mesh checks and packing included) vs coal
  ``BVHModelOBBRSS`` and python-fcl ``BVHModel`` begin / add / endModel.
Timing: the contenders run in interleaved rounds (same background load), best of the rounds;
ratio = touche time / peer time (< 1: touche faster). Absolute times on this shared machine are
noise; the ratios are the result.
Agreement: on every pose, touche's distance against both peers (within 1e-9 relative, floor
1e-3 of the size as tests/mesh/test_mesh_peers.py) and booleans; a disagreement goes to the referee
(tests/naive/bvh.py: exact pair tests on every candidate triangle pair) and counts as touche wrong
only if the referee sides with the peer.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import coal  # noqa: E402
import fcl  # noqa: E402
import panel  # noqa: E402

import touche as tc  # noqa: E402

REL = 1e-9
TARGETS = {  # workload: (peer, target ratio)
    "distance, one call": (("python-fcl", "coal"), 0.5),
    "distance, batch": (("python-fcl", "coal"), 0.25),
    "boolean, one call": (("python-fcl",), 0.5),
    "boolean, batch": (("python-fcl",), 0.1),
    "BVH build": (("coal",), 0.5),
}
SECTION_START = "<!-- bench_panel:start -->"
SECTION_END = "<!-- bench_panel:end -->"


class Peers:
    """python-fcl and coal models of one mesh (built once, outside the timings)."""

    def __init__(self, vertices, faces):
        self.vertices = np.ascontiguousarray(vertices)
        self.faces = np.ascontiguousarray(faces)
        self.fcl_model = self.build_fcl()
        self.coal_model = self.build_coal()
        self.fcl_a = fcl.CollisionObject(self.fcl_model, fcl.Transform())
        self.fcl_b = fcl.CollisionObject(self.fcl_model, fcl.Transform())
        self.identity = coal.Transform3s()
        self.bool_request = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
        self.distance_request = coal.DistanceRequest()

    def build_fcl(self):
        model = fcl.BVHModel()
        model.beginModel(len(self.vertices), len(self.faces))
        model.addSubModel(self.vertices, self.faces)
        model.endModel()
        return model

    def build_coal(self):
        model = coal.BVHModelOBBRSS()
        model.beginModel(len(self.faces), len(self.vertices))
        model.addVertices(self.vertices)
        model.addTriangles(self.faces)
        model.endModel()
        return model

    def fcl_transforms(self, poses):
        return [fcl.Transform(p[:3, :3], p[:3, 3]) for p in poses]

    def coal_transforms(self, poses):
        return [coal.Transform3s(p[:3, :3], p[:3, 3]) for p in poses]

    def fcl_distance(self, transforms):
        a, b = self.fcl_a, self.fcl_b
        out = []
        for t in transforms:
            b.setTransform(t)
            out.append(fcl.distance(a, b, fcl.DistanceRequest(), fcl.DistanceResult()))
        return out

    def coal_distance(self, transforms):
        out = []
        for t in transforms:
            result = coal.DistanceResult()
            coal.distance(self.coal_model, self.identity, self.coal_model, t, self.distance_request, result)
            out.append(result.min_distance)
        return out

    def fcl_collide(self, transforms):
        a, b = self.fcl_a, self.fcl_b
        out = []
        for t in transforms:
            b.setTransform(t)
            out.append(fcl.collide(a, b, fcl.CollisionRequest(), fcl.CollisionResult()) > 0)
        return out

    def coal_collide(self, transforms):
        out = []
        for t in transforms:
            result = coal.CollisionResult()
            coal.collide(self.coal_model, self.identity, self.coal_model, t, self.bool_request, result)
            out.append(result.isCollision())
        return out


def rounds(functions, repeats):
    """Best (smallest) wall time of each function, timed round-robin: on this shared machine the
    other jobs only ever add time, and the median of a few rounds still moved by 2x between runs."""
    times = [[] for _ in functions]
    for _ in range(repeats):
        for k, fn in enumerate(functions):
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    return [float(min(t)) for t in times]


def touche_single_distance(mesh, poses):
    return [tc.distance(mesh, None, mesh, p).distance for p in poses]


def touche_single_intersects(mesh, poses):
    return [tc.intersects(mesh, None, mesh, p) for p in poses]


def measure_mesh(m, n, repeats, ranges):
    """Per-call seconds of every workload on mesh m, and the agreement counts."""
    mesh = tc.TriangleMesh(m.vertices, m.faces)
    tc.bvh.tree_of(mesh)  # built once, outside the query timings (as the peers' models)
    peers = Peers(m.vertices, m.faces)
    out = {"build": None, "ranges": {}, "agreement": {"poses": 0, "refereed": 0, "touche wrong": 0,
                                                      "fcl wrong": 0, "coal wrong": 0}}
    build = rounds([lambda: tc.bvh.BVH(m.vertices, m.faces), peers.build_coal, peers.build_fcl], repeats)
    out["build"] = dict(zip(("touche", "coal", "python-fcl"), build))
    for kind in ranges:
        poses = panel.poses(m, kind, n, seed=0)
        tf = peers.fcl_transforms(poses)
        tcoal = peers.coal_transforms(poses)
        # every entry compiled / loaded before timing
        touche_single_distance(mesh, poses[:2])
        touche_single_intersects(mesh, poses[:2])
        tc.distance(mesh, None, mesh, poses[:2])
        tc.intersects(mesh, None, mesh, poses[:2])
        times = rounds([lambda: touche_single_distance(mesh, poses), lambda: tc.distance(mesh, None, mesh, poses),
                        lambda: peers.fcl_distance(tf), lambda: peers.coal_distance(tcoal)], repeats)
        dist = dict(zip(("touche", "touche batch", "python-fcl", "coal"), (t / n for t in times)))
        times = rounds([lambda: touche_single_intersects(mesh, poses), lambda: tc.intersects(mesh, None, mesh, poses),
                        lambda: peers.fcl_collide(tf), lambda: peers.coal_collide(tcoal)], repeats)
        boolean = dict(zip(("touche", "touche batch", "python-fcl", "coal"), (t / n for t in times)))
        out["ranges"][kind] = {"distance": dist, "boolean": boolean}
        agree(m, mesh, peers, poses, tf, tcoal, out["agreement"])
    return out


def agree(m, mesh, peers, poses, tf, tcoal, counts):
    from naive import bvh as naive_bvh

    hits = tc.intersects(mesh, None, mesh, poses)
    dist = tc.distance(mesh, None, mesh, poses).distance
    single = np.array(touche_single_distance(mesh, poses))
    peer_hits = {"fcl": np.array(peers.fcl_collide(tf)), "coal": np.array(peers.coal_collide(tcoal))}
    peer_dist = {"fcl": np.array(peers.fcl_distance(tf)), "coal": np.array(peers.coal_distance(tcoal))}
    counts["poses"] += len(poses)
    for k in range(len(poses)):
        tol = REL * max(dist[k], 1e-3 * m.size)
        wrong_peer = []
        for name in ("fcl", "coal"):
            # python-fcl's default distance is -1 for colliding pairs, coal's a negative depth
            peer = 0.0 if peer_hits[name][k] else peer_dist[name][k]
            if peer_hits[name][k] != hits[k] or abs(peer - dist[k]) > tol:
                wrong_peer.append(name)
        touche_self = single[k] == dist[k] and hits[k] == (dist[k] == 0.0)
        if not wrong_peer and touche_self:
            continue
        counts["refereed"] += 1
        truth_hit = naive_bvh.referee_overlap(mesh, None, mesh, poses[k])
        if truth_hit:
            truth = 0.0
        else:
            upper = max([dist[k]] + [peer_dist[p][k] for p in ("fcl", "coal") if not peer_hits[p][k]])
            truth = naive_bvh.referee_distance(mesh, None, mesh, poses[k], upper)
        tol = REL * max(truth, 1e-3 * m.size)
        if hits[k] != truth_hit or abs(dist[k] - truth) > tol or not touche_self:
            counts["touche wrong"] += 1
        for name in wrong_peer:
            peer = 0.0 if peer_hits[name][k] else peer_dist[name][k]
            counts[f"{name} wrong"] += peer_hits[name][k] != truth_hit or abs(peer - truth) > tol


def fmt_time(seconds):
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def tables(results, ranges):
    """Markdown: the summary (worst mesh per workload) and one table per workload."""
    ratios = {w: [] for w in TARGETS}  # (ratio, mesh, range, peer)
    lines = []
    detail = []
    workloads = (("distance, one call", "distance", "touche"), ("distance, batch", "distance", "touche batch"),
                 ("boolean, one call", "boolean", "touche"), ("boolean, batch", "boolean", "touche batch"))
    for workload, verb, key in workloads:
        peers_of, _ = TARGETS[workload]
        head = "| mesh | triangles | " + " | ".join(
            f"{kind}: touche | {kind}: /fcl | {kind}: /coal" for kind in ranges) + " | worst ratio |"
        detail += [f"### {workload}", "", head, "|---|---:|" + "---:|---:|---:|" * len(ranges) + "---:|"]
        for name, tris, res in results:
            cells = []
            worst = 0.0
            for kind in ranges:
                t = res["ranges"][kind][verb]
                rf = t[key] / t["python-fcl"]
                rc = t[key] / t["coal"]
                cells += [fmt_time(t[key]), f"{rf:.2f}x", f"{rc:.2f}x"]
                for peer, ratio in (("python-fcl", rf), ("coal", rc)):
                    if peer in peers_of:
                        ratios[workload].append((ratio, name, kind, peer))
                        worst = max(worst, ratio)
            detail.append(f"| {name} | {tris:,} | " + " | ".join(cells) + f" | {worst:.2f}x |")
        detail.append("")
    detail += ["### BVH build", "", "| mesh | triangles | touche | coal | python-fcl | /coal | /fcl |",
               "|---|---:|---:|---:|---:|---:|---:|"]
    for name, tris, res in results:
        b = res["build"]
        ratios["BVH build"].append((b["touche"] / b["coal"], name, "-", "coal"))
        detail.append(f"| {name} | {tris:,} | {fmt_time(b['touche'])} | {fmt_time(b['coal'])} | "
                      f"{fmt_time(b['python-fcl'])} | {b['touche'] / b['coal']:.2f}x | "
                      f"{b['touche'] / b['python-fcl']:.2f}x |")
    detail.append("")
    lines += ["| workload | target | worst mesh | worst ratio | median | meshes meeting it | met? |",
              "|---|---|---|---:|---:|---:|---|"]
    for workload, (peers_of, target) in TARGETS.items():
        rows = ratios[workload]
        if not rows:
            continue
        worst = max(rows)
        per_mesh = {}
        for ratio, name, _, _ in rows:
            per_mesh[name] = max(per_mesh.get(name, 0.0), ratio)
        meeting = sum(r <= target for r in per_mesh.values())
        where = f"{worst[1]} ({worst[2]}, vs {worst[3]})" if worst[2] != "-" else f"{worst[1]} (vs {worst[3]})"
        lines.append(f"| {workload} | ≤ {target}x {' and '.join(peers_of)} | {where} | {worst[0]:.2f}x | "
                     f"{np.median([r[0] for r in rows]):.2f}x | {meeting}/{len(per_mesh)} | "
                     f"{'yes' if worst[0] <= target else '**no**'} |")
    lines.append("")
    return lines + detail


def agreement_table(results):
    lines = ["| mesh | poses | refereed | touche wrong | python-fcl wrong | coal wrong |", "|---|---:|---:|---:|---:|---:|"]
    for name, _, res in results:
        a = res["agreement"]
        lines.append(f"| {name} | {a['poses']} | {a['refereed']} | {a['touche wrong']} | {a['fcl wrong']} | "
                     f"{a['coal wrong']} |")
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=24, help="poses per mesh and range")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="panel mesh names")
    parser.add_argument("--ranges", nargs="*", default=list(panel.RANGES))
    parser.add_argument("--write", action="store_true", help="replace the panel section of BENCHMARKS.md")
    parser.add_argument("--label", default="", help="a line saying which tree this is (commit, change)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    results = []
    for m in panel.meshes(only=set(args.only) if args.only else None):
        t = time.perf_counter()
        res = measure_mesh(m, args.poses, args.repeats, args.ranges)
        results.append((m.name, len(m.faces), res))
        near = res["ranges"].get("near", next(iter(res["ranges"].values())))
        print(f"{m.name:18s} {len(m.faces):8,d} tris  distance/fcl {near['distance']['touche'] / near['distance']['python-fcl']:.2f}x"
              f" batch {near['distance']['touche batch'] / near['distance']['python-fcl']:.2f}x"
              f"  boolean/fcl {near['boolean']['touche'] / near['boolean']['python-fcl']:.2f}x"
              f" batch {near['boolean']['touche batch'] / near['boolean']['python-fcl']:.2f}x"
              f"  build/coal {res['build']['touche'] / res['build']['coal']:.2f}x  (near; {time.perf_counter() - t:.0f} s)",
              flush=True)
    load_after = os.getloadavg()
    import numba

    command = "PYTHONPATH=. .venv/bin/python benchmarks/bench_panel.py " + " ".join(sys.argv[1:])
    header = [f"Run {started}: `{command.replace(' --write', '')}`; {args.poses} poses per mesh and range, "
              f"best of {args.repeats} interleaved rounds.  ",
              f"Machine: nproc={os.cpu_count()}, load average {load_before[0]:.2f} before / {load_after[0]:.2f} after; "
              f"python={platform.python_version()}; numba={numba.__version__}; numba threads={numba.get_num_threads()}; "
              f"coal={coal.__version__ if hasattr(coal, '__version__') else '?'}; "
              f"python-fcl={getattr(fcl, '__version__', '?')}.  "]
    if args.label:
        header.append(f"Tree: {args.label}.  ")
    body = header + [""] + tables(results, args.ranges) + ["### Agreement (every timed pose)", ""] + agreement_table(results)
    text = "\n".join(body)
    print(text)
    if args.write:
        write_section(text)


def write_section(text):
    path = ROOT / "BENCHMARKS.md"
    doc = path.read_text()
    intro = ("## Mesh panel (benchmarks/bench_panel.py)\n\n"
             "Mesh–mesh workloads on every mesh of `benchmarks/panel.py` (15 real meshes of pybullet_data and "
             "example-robot-data, 902 to 124,706 triangles), two copies of the mesh, poses at three ranges: "
             "**overlap** (surfaces cross), **near** (apart by at most 1 % of the mesh size), **far** (about "
             "25–100 % of the size). Ratios are touche time / peer time in the same process (< 1: touche "
             "faster); batches are touche's per-pose time in one call (2 threads) against the peer's per-call "
             "time. Judged by the worst mesh. Written by `bench_panel.py --write`.\n\n")
    section = f"{SECTION_START}\n{intro}{text}\n{SECTION_END}"
    if SECTION_START in doc:
        doc = re.sub(re.escape(SECTION_START) + ".*?" + re.escape(SECTION_END), lambda _: section, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(doc)


if __name__ == "__main__":
    main()
