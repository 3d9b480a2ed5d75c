"""touche vs coal vs python-fcl: one command, one process, the same inputs for every library.

    pip install -e '.[bench]'           # the peers: coal, python-fcl (and the other benchmarks' peers)
    python benchmarks/run.py            # full run (a few minutes; includes an empty-cache compile)
    python benchmarks/run.py --quick    # short run (< 60 s; smaller n, fewer repeats, no cold compile)

Workloads
  1. single call from Python, primitive pairs, intersects and distance, at a separated (near miss)
     and an overlapping pose: touche per-call time vs coal and python-fcl per-call time.
  2. batch: n poses on one side, the other side fixed: touche per-pair time (one batch call) vs
     coal / python-fcl per-call time in a Python loop (timed on a subset, scaled per call).
  3. cold start in fresh subprocesses: `import touche`; import + first `touche.distance` with a
     warm numba cache; the same with an empty cache (NUMBA_CACHE_DIR = a fresh temp dir).
  4. agreement of the answers between the libraries on the workload-2 inputs.

Every run appends its figures to benchmarks/results/results.csv (or --csv PATH; --no-csv: none).
That folder is not tracked by git (.gitignore): a run leaves the checkout clean. A full run
regenerates BENCHMARKS.md (the published figures); a --quick run only does so with --markdown (so
a quick check does not overwrite the full figures).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# the log of every run: untracked (.gitignore), so that running the benchmarks does not change the
# checkout; the runs logged while it was tracked are in git history (BENCHMARKS.md says where)
CSV_PATH = os.path.join(HERE, "results", "results.csv")
MD_PATH = os.path.join(ROOT, "BENCHMARKS.md")

BAND = 1e-9  # booleans are compared only where |signed distance| >= BAND
DIST_TOL = 1e-6  # distances must agree within this

SINGLE_TARGET = 2.0  # touche single call <= 2x coal
BATCH_TARGET = 0.25  # touche batch per pair <= 0.25x coal per call
IMPORT_TARGET = 0.5  # s
FIRST_QUERY_TARGET = 1.0  # s

# Shapes: (kind, *sizes) in coal conventions (Box full sides, Capsule(radius, full length)).
SHAPES = {
    "sphere_a": ("sphere", 0.5),
    "sphere_b": ("sphere", 0.35),
    "box_a": ("box", (1.0, 0.6, 0.4)),
    "box_b": ("box", (0.5, 0.8, 0.3)),
    "capsule_a": ("capsule", 0.3, 1.0),
    "capsule_b": ("capsule", 0.2, 0.8),
}
# (name, posed shape A, fixed shape B, half-width of the cube of A's random translations)
PAIRS = [
    ("sphere-sphere", "sphere_a", "sphere_b", 0.95),
    ("sphere-box", "sphere_a", "box_a", 1.05),
    ("box-box", "box_b", "box_a", 1.05),
    ("capsule-capsule", "capsule_a", "capsule_b", 1.0),
    ("capsule-box", "capsule_a", "box_a", 1.15),
]
VERBS = ("intersects", "distance")


# --------------------------------------------------------------------------------------------
# helpers
def bounding_radius(spec):
    kind = spec[0]
    if kind == "sphere":
        return spec[1]
    if kind == "box":
        return 0.5 * float(np.linalg.norm(spec[1]))
    return spec[1] + 0.5 * spec[2]


def make_touche(tc, spec):
    kind = spec[0]
    if kind == "sphere":
        return tc.Sphere(spec[1])
    if kind == "box":
        return tc.Box(list(spec[1]))
    return tc.Capsule(spec[1], spec[2])


def make_coal(coal, spec):
    kind = spec[0]
    if kind == "sphere":
        return coal.Sphere(spec[1])
    if kind == "box":
        return coal.Box(*spec[1])
    return coal.Capsule(spec[1], spec[2])


def make_fcl(fcl, spec):
    kind = spec[0]
    if kind == "sphere":
        return fcl.Sphere(spec[1])
    if kind == "box":
        return fcl.Box(*spec[1])
    return fcl.Capsule(spec[1], spec[2])


def random_rotations(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def random_poses(rng, n, half_width, center):
    poses = np.zeros((n, 4, 4))
    poses[:, :3, :3] = random_rotations(rng, n)
    poses[:, :3, 3] = center + rng.uniform(-half_width, half_width, size=(n, 3))
    poses[:, 3, 3] = 1.0
    return poses


def per_call(stmt, namespace, min_time, repeats):
    """Median over `repeats` of the per-call time of `stmt` (timeit loops, calibrated number)."""
    timer = timeit.Timer(stmt, globals=namespace)
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            break
        number *= max(2, min(10, int(min_time / max(elapsed, 1e-9) * 1.2)))
    return statistics.median(timer.repeat(repeat=repeats, number=number)) / number


def median_time(func, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fmt_time(seconds):
    if seconds is None or not np.isfinite(seconds):
        return "n/a"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e9:.0f} ns"


def fmt_ratio(value):
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.2f}x"


# --------------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.n = args.n or (10_000 if self.quick else 100_000)
        self.subset = min(self.n, args.subset or (2_000 if self.quick else 10_000))
        self.repeats = 5
        self.min_time = 0.01 if self.quick else 0.05
        self.rows = []  # dicts for the CSV / markdown
        self.agreement = []  # per pair summaries
        self.notes = []

        try:
            import coal
            import fcl
        except ImportError as exc:  # the peers are not touche's dependencies: say how to get them
            raise SystemExit(f"benchmarks/run.py compares touche with coal and python-fcl: {exc}. "
                             f"Install them with: pip install -e '.[bench]'")
        import numba

        import touche as tc

        self.tc, self.coal, self.fcl, self.numba = tc, coal, fcl, numba
        self.date = datetime.datetime.now().isoformat(timespec="seconds")
        self.machine = (
            f"nproc={os.cpu_count()}; python={platform.python_version()}; numpy={np.__version__}; "
            f"numba={numba.__version__}; numba_threads={numba.config.NUMBA_NUM_THREADS}; "
            f"coal={getattr(coal, '__version__', '?')}; python-fcl={getattr(fcl, '__version__', '?')}; "
            f"touche={getattr(tc, '__version__', '?')}"
        )

    def record(self, workload, library, value, unit, ratio=None):
        self.rows.append(
            dict(date=self.date, machine=self.machine, workload=workload, library=library,
                 value=value, unit=unit, ratio=ratio)
        )

    # ---------------------------------------------------------------------------------------
    def prepare(self):
        """Shapes for every library, batch poses, and the peers' answers on every pose."""
        tc, coal, fcl = self.tc, self.coal, self.fcl
        rng = np.random.default_rng(20240607)
        self.data = {}
        t0 = time.perf_counter()
        for name, key_a, key_b, half_width in PAIRS:
            spec_a, spec_b = SHAPES[key_a], SHAPES[key_b]
            pose_b = random_poses(rng, 1, 0.2, np.zeros(3))[0]
            poses_a = random_poses(rng, self.n, half_width, pose_b[:3, 3])
            d = dict(
                spec_a=spec_a, spec_b=spec_b, pose_b=pose_b, poses_a=poses_a,
                tc_a=make_touche(tc, spec_a), tc_b=make_touche(tc, spec_b),
                coal_a=make_coal(coal, spec_a), coal_b=make_coal(coal, spec_b),
                coal_tb=coal.Transform3s(pose_b[:3, :3].copy(), pose_b[:3, 3].copy()),
                fcl_b=fcl.CollisionObject(make_fcl(fcl, spec_b), fcl.Transform(pose_b[:3, :3].copy(), pose_b[:3, 3].copy())),
            )
            d["fcl_a"] = fcl.CollisionObject(make_fcl(fcl, spec_a), fcl.Transform())
            d["coal_ta"] = [coal.Transform3s(p[:3, :3].copy(), p[:3, 3].copy()) for p in poses_a]
            d["fcl_ta"] = [fcl.Transform(p[:3, :3].copy(), p[:3, 3].copy()) for p in poses_a]
            self.data[name] = d
            self.peer_answers(name)
        print(f"prepared inputs and peer answers for {len(PAIRS)} pairs x {self.n:,} poses in "
              f"{time.perf_counter() - t0:.1f} s")

    def peer_answers(self, name):
        d = self.data[name]
        coal, fcl = self.coal, self.fcl
        creq = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
        dreq = coal.DistanceRequest()
        a, b, tb = d["coal_a"], d["coal_b"], d["coal_tb"]
        n = self.n
        c_hit = np.empty(n, dtype=bool)
        c_dist = np.empty(n)
        for i, ta in enumerate(d["coal_ta"]):
            c_hit[i] = coal.collide(a, ta, b, tb, creq, coal.CollisionResult()) > 0
            c_dist[i] = coal.distance(a, ta, b, tb, dreq, coal.DistanceResult())
        f_hit = np.empty(n, dtype=bool)
        f_dist = np.empty(n)
        fa, fb = d["fcl_a"], d["fcl_b"]
        freq, fdreq = fcl.CollisionRequest(), fcl.DistanceRequest()
        for i, ta in enumerate(d["fcl_ta"]):
            fa.setTransform(ta)
            f_hit[i] = fcl.collide(fa, fb, freq, fcl.CollisionResult()) > 0
            f_dist[i] = fcl.distance(fa, fb, fdreq, fcl.DistanceResult())
        d.update(c_hit=c_hit, c_dist=c_dist, f_hit=f_hit, f_dist=f_dist)
        # timing poses: a near miss (coal distance 0.05..0.2) and an overlap (depth 0.05..0.2)
        sep = np.flatnonzero((c_dist > 0.05) & (c_dist < 0.2))
        ovl = np.flatnonzero((c_dist < -0.05) & (c_dist > -0.2))
        d["case_index"] = {
            "separated": int(sep[0]) if len(sep) else int(np.argmin(np.where(c_dist > 0, c_dist, np.inf))),
            "overlapping": int(ovl[0]) if len(ovl) else int(np.argmax(np.where(c_dist < 0, c_dist, -np.inf))),
        }

    # ---------------------------------------------------------------------------------------
    def warm(self):
        """Load (or compile) touche's kernels for every pair and verb, single and batch, and time it."""
        tc = self.tc
        t0 = time.perf_counter()
        tc.warmup()
        for d in self.data.values():
            p = np.ascontiguousarray(d["poses_a"][:2])
            tc.intersects(d["tc_a"], p[0], d["tc_b"], d["pose_b"])
            tc.distance(d["tc_a"], p[0], d["tc_b"], d["pose_b"])
            tc.intersects(d["tc_a"], p, d["tc_b"], d["pose_b"])
            tc.distance(d["tc_a"], p, d["tc_b"], d["pose_b"])
        elapsed = time.perf_counter() - t0
        print(f"touche warm-up (numba cache load or compile) in this process: {elapsed:.2f} s")
        if elapsed > 10:
            self.notes.append(
                f"The in-process warm-up took {elapsed:.0f} s: the numba cache was stale (kernels "
                "recompiled), probably because touche's sources changed since the last run."
            )

    # ---------------------------------------------------------------------------------------
    def single_calls(self):
        print("\n== 1. single call from Python (median per call) ==")
        tc, coal, fcl = self.tc, self.coal, self.fcl
        header = f"{'pair':16} {'verb':10} {'case':11} {'touche':>10} {'coal':>10} {'fcl':>10} {'t/coal':>7} {'t/fcl':>7}"
        print(header)
        self.single = []
        for name, *_ in PAIRS:
            d = self.data[name]
            for verb in VERBS:
                for case, index in d["case_index"].items():
                    pose_a = np.ascontiguousarray(d["poses_a"][index])
                    fa = d["fcl_a"]
                    fa.setTransform(d["fcl_ta"][index])
                    ns = dict(
                        tc=tc, coal=coal, fcl=fcl, a=d["tc_a"], b=d["tc_b"], pa=pose_a, pb=d["pose_b"],
                        ca=d["coal_a"], cb=d["coal_b"], cta=d["coal_ta"][index], ctb=d["coal_tb"],
                        fa=fa, fb=d["fcl_b"],
                        creq=coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1),
                        dreq=coal.DistanceRequest(), freq=fcl.CollisionRequest(), fdreq=fcl.DistanceRequest(),
                        CR=coal.CollisionResult, DR=coal.DistanceResult,
                        FCR=fcl.CollisionResult, FDR=fcl.DistanceResult,
                        tc_verb=getattr(tc, verb),
                    )
                    if verb == "intersects":
                        stmts = {
                            "touche": "tc_verb(a, pa, b, pb)",
                            "coal": "coal.collide(ca, cta, cb, ctb, creq, CR())",
                            "python-fcl": "fcl.collide(fa, fb, freq, FCR())",
                        }
                    else:
                        stmts = {
                            "touche": "tc_verb(a, pa, b, pb)",
                            "coal": "coal.distance(ca, cta, cb, ctb, dreq, DR())",
                            "python-fcl": "fcl.distance(fa, fb, fdreq, FDR())",
                        }
                    times = {lib: per_call(s, ns, self.min_time, self.repeats) for lib, s in stmts.items()}
                    # the single-call answers must match the peers and touche's own batch answers
                    self.check_single(name, verb, d, index, pose_a)
                    workload = f"single {name} {verb} ({case})"
                    r_coal = times["touche"] / times["coal"]
                    r_fcl = times["touche"] / times["python-fcl"]
                    self.record(workload, "touche", times["touche"] * 1e6, "us/call")
                    self.record(workload, "coal", times["coal"] * 1e6, "us/call", r_coal)
                    self.record(workload, "python-fcl", times["python-fcl"] * 1e6, "us/call", r_fcl)
                    self.single.append(dict(pair=name, verb=verb, case=case, times=times, r_coal=r_coal, r_fcl=r_fcl))
                    print(f"{name:16} {verb:10} {case:11} {fmt_time(times['touche']):>10} {fmt_time(times['coal']):>10} "
                          f"{fmt_time(times['python-fcl']):>10} {r_coal:6.2f}x {r_fcl:6.2f}x")

    def check_single(self, name, verb, d, index, pose_a):
        tc = self.tc
        c_dist = d["c_dist"][index]
        if verb == "intersects":
            got = tc.intersects(d["tc_a"], pose_a, d["tc_b"], d["pose_b"])
            ok = got == bool(d["c_hit"][index]) or abs(c_dist) < BAND
        else:
            got = tc.distance(d["tc_a"], pose_a, d["tc_b"], d["pose_b"]).signed_distance
            ok = abs(got - c_dist) <= DIST_TOL
        if not ok:
            self.notes.append(f"single-call {name} {verb} at pose {index}: touche {got!r} vs coal {c_dist!r}")

    # ---------------------------------------------------------------------------------------
    def batches(self):
        print(f"\n== 2. batch of {self.n:,} poses (per pair; coal/fcl timed on {self.subset:,} calls in a Python loop) ==")
        tc, coal, fcl = self.tc, self.coal, self.fcl
        self.batch = []
        m = self.subset
        self.validation = None
        try:  # internal helper; how much of each batch call is pose checking (information only)
            from touche.pose import as_matrices

            poses = self.data[PAIRS[0][0]]["poses_a"]
            self.validation = median_time(lambda: as_matrices(poses, "pose_a"), self.repeats) / self.n
            self.record(f"batch n={self.n} pose validation (inside every touche batch call)", "touche",
                        self.validation * 1e6, "us/pair")
            print(f"(of which pose validation, touche.pose.as_matrices: {fmt_time(self.validation)} per pose)")
        except Exception as exc:  # noqa: BLE001 - the internal API may change
            print(f"(pose validation not timed: {exc!r})")
        print(f"{'pair':16} {'verb':10} {'touche':>10} {'coal':>10} {'fcl':>10} {'t/coal':>7} {'t/fcl':>7}")
        for name, *_ in PAIRS:
            d = self.data[name]
            a, b, poses, pose_b = d["tc_a"], d["tc_b"], d["poses_a"], d["pose_b"]
            ca, cb, ctb = d["coal_a"], d["coal_b"], d["coal_tb"]
            cta = d["coal_ta"][:m]
            fa, fb = d["fcl_a"], d["fcl_b"]
            fta = d["fcl_ta"][:m]
            creq = coal.CollisionRequest(coal.CollisionRequestFlag.NO_REQUEST, 1)
            dreq = coal.DistanceRequest()
            freq, fdreq = fcl.CollisionRequest(), fcl.DistanceRequest()
            CR, DR, FCR, FDR = coal.CollisionResult, coal.DistanceResult, fcl.CollisionResult, fcl.DistanceResult
            collide, cdistance = coal.collide, coal.distance
            fcollide, fdistance = fcl.collide, fcl.distance

            def coal_collide_loop():
                for t in cta:
                    collide(ca, t, cb, ctb, creq, CR())

            def coal_distance_loop():
                for t in cta:
                    cdistance(ca, t, cb, ctb, dreq, DR())

            def fcl_collide_loop():
                for t in fta:
                    fa.setTransform(t)
                    fcollide(fa, fb, freq, FCR())

            def fcl_distance_loop():
                for t in fta:
                    fa.setTransform(t)
                    fdistance(fa, fb, fdreq, FDR())

            hit = tc.intersects(a, poses, b, pose_b)
            res = tc.distance(a, poses, b, pose_b)
            d.update(t_hit=hit, t_signed=np.asarray(res.signed_distance), t_status=np.asarray(res.status),
                     t_distance=np.asarray(res.distance))
            loops = {
                "intersects": (lambda: tc.intersects(a, poses, b, pose_b), coal_collide_loop, fcl_collide_loop),
                "distance": (lambda: tc.distance(a, poses, b, pose_b), coal_distance_loop, fcl_distance_loop),
            }
            for verb, (t_fn, c_fn, f_fn) in loops.items():
                t_time = median_time(t_fn, self.repeats) / self.n
                c_time = median_time(c_fn, self.repeats) / m
                f_time = median_time(f_fn, self.repeats) / m
                workload = f"batch n={self.n} {name} {verb}"
                r_coal, r_fcl = t_time / c_time, t_time / f_time
                self.record(workload, "touche", t_time * 1e6, "us/pair")
                self.record(workload, "coal", c_time * 1e6, "us/call", r_coal)
                self.record(workload, "python-fcl", f_time * 1e6, "us/call", r_fcl)
                self.batch.append(dict(pair=name, verb=verb, times=dict(touche=t_time, coal=c_time, fcl=f_time),
                                       r_coal=r_coal, r_fcl=r_fcl, hit_fraction=float(d["c_hit"].mean())))
                print(f"{name:16} {verb:10} {fmt_time(t_time):>10} {fmt_time(c_time):>10} {fmt_time(f_time):>10} "
                      f"{r_coal:6.2f}x {r_fcl:6.2f}x")

    # ---------------------------------------------------------------------------------------
    def referee(self, name, indices):
        """coal with tight GJK/EPA tolerances (1e-12) on the given poses: the arbiter of mismatches."""
        coal = self.coal
        d = self.data[name]
        req = coal.DistanceRequest()
        req.gjk_tolerance = 1e-12
        req.gjk_max_iterations = 10_000
        req.epa_tolerance = 1e-12
        req.epa_max_iterations = 10_000
        out = np.empty(len(indices))
        for j, i in enumerate(indices):
            out[j] = coal.distance(d["coal_a"], d["coal_ta"][i], d["coal_b"], d["coal_tb"], req, coal.DistanceResult())
        return out

    def agree(self):
        print(f"\n== 4. agreement on the {self.n:,} batch inputs (booleans outside |d| < {BAND:g}; "
              f"distances within {DIST_TOL:g}; mismatches re-checked by coal at 1e-12 GJK/EPA tolerance) ==")
        Status = self.tc.Status
        for name, *_ in PAIRS:
            d = self.data[name]
            t_hit, t_signed, t_status = d["t_hit"], d["t_signed"], d["t_status"]
            c_hit, c_dist, f_hit, f_dist = d["c_hit"], d["c_dist"], d["f_hit"], d["f_dist"]
            outside = (np.abs(t_signed) >= BAND) & (np.abs(c_dist) >= BAND)
            t_pen = t_status == Status.PENETRATING
            s = dict(pair=name, n=self.n, collide_fraction=float(c_hit.mean()), outside=int(outside.sum()))
            masks = {}
            masks["bool_vs_coal"] = (t_hit != c_hit) & outside
            masks["bool_vs_fcl"] = (t_hit != f_hit) & outside
            s["bool_coal_vs_fcl"] = int(((c_hit != f_hit) & outside).sum())
            masks["intersects_vs_status"] = (t_hit != (t_status != Status.SEPARATED)) & outside
            sep = outside & (t_signed > 0) & (c_dist > 0)
            s["sep_count"] = int(sep.sum())
            diff = np.where(sep, np.abs(t_signed - c_dist), 0.0)
            s["sep_max_vs_coal"] = float(diff.max())
            masks["sep_vs_coal"] = diff > DIST_TOL
            fsep = sep & (f_dist >= 0)
            fdiff = np.where(fsep, np.abs(t_signed - f_dist), 0.0)
            s["sep_max_vs_fcl"] = float(fdiff.max())
            masks["sep_vs_fcl"] = fdiff > DIST_TOL
            pen = outside & t_pen & (c_dist < 0)
            s["pen_count"] = int(pen.sum())
            pdiff = np.where(pen, np.abs(t_signed - c_dist), 0.0)
            s["pen_max_vs_coal"] = float(pdiff.max())
            masks["pen_vs_coal"] = pdiff > DIST_TOL
            for key, mask in masks.items():
                s[key] = int(mask.sum())
            # every mismatch is re-checked against the tight-tolerance referee
            suspects = np.flatnonzero(np.logical_or.reduce([m for k, m in masks.items() if k != "intersects_vs_status"]))
            ref = self.referee(name, suspects)
            ref_sep = ref >= BAND
            bool_wrong = (t_hit[suspects] == ref_sep) & (np.abs(ref) >= BAND)
            is_dist = (masks["sep_vs_coal"] | masks["sep_vs_fcl"] | masks["pen_vs_coal"])[suspects]
            dist_wrong = is_dist & (np.abs(t_signed[suspects] - ref) > DIST_TOL)
            touche_wrong = bool_wrong | dist_wrong
            s["suspects"] = int(len(suspects))
            s["touche_wrong"] = int(touche_wrong.sum()) + s["intersects_vs_status"]
            s["worst"] = []
            for k in np.flatnonzero(touche_wrong)[:3]:
                i = int(suspects[k])
                s["worst"].append(dict(index=i, touche=float(t_signed[i]), touche_hit=bool(t_hit[i]),
                                       coal=float(c_dist[i]), fcl=float(f_dist[i]), referee=float(ref[k])))
            s["ok"] = s["touche_wrong"] == 0
            self.agreement.append(s)
            print(f"{name:16} collide {s['collide_fraction']:.0%}  bool mismatches vs coal {s['bool_vs_coal']}, "
                  f"vs fcl {s['bool_vs_fcl']} (coal vs fcl {s['bool_coal_vs_fcl']}); touche intersects vs its "
                  f"distance status {s['intersects_vs_status']}")
            print(f"{'':16} separated distance: max |touche-coal| {s['sep_max_vs_coal']:.1e} "
                  f"({s['sep_vs_coal']}/{s['sep_count']} > tol), max |touche-fcl| {s['sep_max_vs_fcl']:.1e} "
                  f"({s['sep_vs_fcl']} > tol); penetration depth max |touche-coal| {s['pen_max_vs_coal']:.1e} "
                  f"({s['pen_vs_coal']}/{s['pen_count']} > tol)")
            print(f"{'':16} {s['suspects']} mismatching poses re-checked: touche wrong on {s['touche_wrong']}"
                  f"  -> {'OK' if s['ok'] else 'TOUCHE DISAGREES'}")
            for worst in s["worst"]:
                print(f"{'':16} e.g. {worst}")
                self.notes.append(f"{name}: touche disagrees with the tight-tolerance coal referee: {worst}")
            self.record(f"agreement n={self.n} {name}", "touche-vs-coal", s["bool_vs_coal"] + s["sep_vs_coal"], "mismatches")
            self.record(f"agreement n={self.n} {name}", "touche-vs-fcl", s["bool_vs_fcl"] + s["sep_vs_fcl"], "mismatches")
            self.record(f"agreement n={self.n} {name} penetration depth", "touche-vs-coal", s["pen_vs_coal"], "mismatches")
            self.record(f"agreement n={self.n} {name}", "touche-vs-referee", s["touche_wrong"], "wrong answers")

    # ---------------------------------------------------------------------------------------
    def cold(self):
        print("\n== 3. cold start in fresh subprocesses ==")
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        repeats = 3 if self.quick else 5
        import_code = (
            "import time; t = time.perf_counter(); import touche; "
            "print(time.perf_counter() - t)"
        )
        first_code = r"""
import time, json
t = time.perf_counter()
import numpy as np
import touche
pose = np.eye(4); pose[0, 3] = 2.0
r = touche.distance(touche.Sphere(0.5), pose, touche.Box([1.0, 1.0, 1.0]), np.eye(4))
elapsed = time.perf_counter() - t
import sys
# every compiled entry point the query went through (the single-call path picks a short entry
# for fast-path pairs, so no single dispatcher can stand for "the" kernel)
hits = misses = 0
cache_path = ""
for name, module in list(sys.modules.items()):
    if not name.startswith("touche._kernels."):
        continue
    for value in vars(module).values():
        stats = getattr(value, "stats", None)
        if stats is None or not hasattr(stats, "cache_hits") or getattr(value, "__module__", "") != name:
            continue
        hits += sum(stats.cache_hits.values())
        misses += sum(stats.cache_misses.values())
        if sum(stats.cache_hits.values()) + sum(stats.cache_misses.values()):
            cache_path = stats.cache_path
print(json.dumps(dict(elapsed=elapsed, distance=float(r.distance), hits=hits, misses=misses, cache_path=cache_path)))
"""

        def child(code, child_env):
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], env=child_env, capture_output=True, text=True,
                                 cwd=tempfile.gettempdir())
            wall = time.perf_counter() - start
            if out.returncode != 0:
                raise RuntimeError(f"child failed: {out.stderr[-2000:]}")
            return out.stdout.strip().splitlines()[-1], wall

        imports, walls = [], []
        for _ in range(repeats):
            line, wall = child(import_code, env)
            imports.append(float(line))
            walls.append(wall)
        t_import = statistics.median(imports)
        self.cold_import = t_import
        self.cold_import_wall = statistics.median(walls)
        self.record("cold: import touche (in child)", "touche", t_import, "s")
        self.record("cold: python -c 'import touche' process wall time", "touche", self.cold_import_wall, "s")
        print(f"import touche: {t_import:.3f} s (whole child process incl. interpreter start: "
              f"{self.cold_import_wall:.3f} s)  target < {IMPORT_TARGET} s")

        # warm cache: one priming run (compiles if the cache is stale), then the measured runs
        prime, _ = child(first_code, env)
        prime = json.loads(prime)
        if prime["misses"]:
            print(f"  (priming run compiled the kernels: {prime['elapsed']:.1f} s)")
        firsts, warm_info = [], []
        for _ in range(repeats):
            line, _ = child(first_code, env)
            info = json.loads(line)
            firsts.append(info["elapsed"])
            warm_info.append(info)
        t_first = statistics.median(firsts)
        self.cold_first = t_first
        self.cold_first_info = warm_info[-1]
        if any(i["misses"] for i in warm_info) or not all(i["hits"] for i in warm_info):
            self.notes.append("A warm-cache first-query child did not load its kernels from the cache "
                              f"(stats: {warm_info}).")
        self.record("cold: import + first distance, warm numba cache", "touche", t_first, "s")
        print(f"import + first distance, warm cache: {t_first:.3f} s (cache hits {warm_info[-1]['hits']}, "
              f"misses {warm_info[-1]['misses']})  target < {FIRST_QUERY_TARGET} s")

        self.cold_empty = None
        self.cold_empty_info = None
        if self.quick and not self.args.cold_compile:
            print("import + first distance, empty cache: skipped in --quick (takes minutes; --cold-compile to run)")
            return
        cache_dir = tempfile.mkdtemp(prefix="touche-bench-numba-cache-")
        try:
            line, _ = child(first_code, dict(env, NUMBA_CACHE_DIR=cache_dir))
            info = json.loads(line)
            written = sum(len(files) for _, _, files in os.walk(cache_dir))
            info["files_written"] = written
            empty_ok = (info["hits"] == 0 and info["misses"] > 0 and info["cache_path"].startswith(cache_dir)
                        and written > 0)
            info["verified_empty"] = empty_ok
            self.cold_empty = info["elapsed"]
            self.cold_empty_info = info
            if not empty_ok:
                self.notes.append(f"The empty-cache child may not have had an empty cache: {info}")
            self.record("cold: import + first distance, empty numba cache", "touche", info["elapsed"], "s")
            print(f"import + first distance, empty cache: {info['elapsed']:.1f} s (cache hits {info['hits']}, "
                  f"misses {info['misses']}, {written} cache files written to the fresh NUMBA_CACHE_DIR; "
                  f"empty cache verified: {empty_ok})")
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)

    # ---------------------------------------------------------------------------------------
    def write_csv(self, path=CSV_PATH):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        new = not os.path.exists(path)
        with open(path, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["date", "machine", "workload", "library", "value", "unit", "ratio"])
            if new:
                writer.writeheader()
            for row in self.rows:
                row = dict(row)
                row["value"] = f"{row['value']:.6g}"
                row["ratio"] = "" if row["ratio"] is None else f"{row['ratio']:.4g}"
                writer.writerow(row)
        print(f"\nappended {len(self.rows)} rows to {os.path.relpath(path, ROOT)}")

    def summary(self):
        """Targets, printed and returned as lines for the markdown."""
        single_worst = max(self.single, key=lambda r: r["r_coal"])
        batch_worst = max(self.batch, key=lambda r: r["r_coal"])
        single_met = sum(r["r_coal"] <= SINGLE_TARGET for r in self.single)
        batch_met = sum(r["r_coal"] <= BATCH_TARGET for r in self.batch)
        agree_ok = all(s["ok"] for s in self.agreement)
        lines = [
            ("single call <= 2x coal", f"{single_met}/{len(self.single)} cases; worst "
             f"{single_worst['r_coal']:.2f}x ({single_worst['pair']} {single_worst['verb']}, {single_worst['case']}), "
             f"median {statistics.median(r['r_coal'] for r in self.single):.2f}x", single_met == len(self.single)),
            ("batch per pair <= 0.25x coal per call", f"{batch_met}/{len(self.batch)} cases; worst "
             f"{batch_worst['r_coal']:.2f}x ({batch_worst['pair']} {batch_worst['verb']}), median "
             f"{statistics.median(r['r_coal'] for r in self.batch):.3f}x", batch_met == len(self.batch)),
            ("import touche < 0.5 s", f"{self.cold_import:.3f} s", self.cold_import < IMPORT_TARGET),
            ("import + first query, warm cache < 1 s", f"{self.cold_first:.3f} s", self.cold_first < FIRST_QUERY_TARGET),
            ("import + first query, empty cache (no target)",
             "not measured (--quick)" if self.cold_empty is None else f"{self.cold_empty:.1f} s", None),
            ("answers agree (mismatches re-checked by a tight referee)", "yes" if agree_ok else "NO (see agreement table)", agree_ok),
        ]
        print("\n== targets ==")
        for what, value, met in lines:
            flag = "-" if met is None else ("MET" if met else "NOT MET")
            print(f"{what:45} {value:70} {flag}")
        for note in self.notes:
            print("note:", note)
        return lines

    # ---------------------------------------------------------------------------------------
    def write_markdown(self, target_lines):
        mode = "quick (`--quick`)" if self.quick else "full"
        out = []
        w = out.append
        w("# Benchmarks: touche vs coal vs python-fcl\n")
        w("Sections 1-4 are generated by `benchmarks/run.py` (it rewrites them and keeps the sections after them); "
          "do not edit them by hand. Reproduce with\n")
        w("```sh\n.venv/bin/python benchmarks/run.py          # full run, a few minutes; rewrites sections 1-4\n"
          ".venv/bin/python benchmarks/run.py --quick  # < 60 s sanity run (logs to benchmarks/results/ only)\n```\n"
          "The peers come with `.venv/bin/pip install -q -e '.[bench]'` (coal, python-fcl, ...).\n")
        w(f"Run: {self.date}, {mode}, batch n = {self.n:,}, peers timed on {self.subset:,} calls, "
          f"timeit median of {self.repeats} repeats.  \nMachine: {self.machine}.  \n"
          "Every figure of every run is appended to `benchmarks/results/results.csv` (not tracked by git; "
          "the runs of 2026-11-22 to 2026-11-24 logged while it was tracked: "
          "`git show db0e1b6:benchmarks/results.csv`).\n")
        w("> **Noise.** This is a shared 2-core machine: absolute times move by tens of percent between runs "
          "(and other jobs run alongside). All libraries run in the same process on the same inputs, so the "
          "**ratios (touche / peer)** are what matter; ratio < 1 means touche is faster.\n")

        w("## Targets met?\n")
        w("| target | measured | met? |\n|---|---|---|")
        for what, value, met in target_lines:
            w(f"| {what} | {value} | {'—' if met is None else ('yes' if met else '**no**')} |")
        w("")

        w("## 1. Single call from Python\n")
        w("Per-call time of one query, called from Python in a timeit loop. touche: "
          "`touche.intersects/distance(a, pose_a, b, pose_b)` with shapes and (4, 4) float64 pose arrays built "
          "once. coal: `coal.collide` with `CollisionRequest(NO_REQUEST, 1)` / `coal.distance`, `Transform3s` "
          "built once, a new result object per call. python-fcl: `fcl.collide` / `fcl.distance` on prepared "
          "`CollisionObject`s with default requests, a new result per call. Two poses per pair: a near miss "
          "(coal distance 0.05–0.2) and an overlap (depth 0.05–0.2). Target: touche ≤ 2× coal.\n")
        w("| pair | verb | pose | touche | coal | python-fcl | touche/coal | touche/fcl | ≤ 2× coal? |")
        w("|---|---|---|---:|---:|---:|---:|---:|---|")
        for r in self.single:
            t = r["times"]
            w(f"| {r['pair']} | {r['verb']} | {r['case']} | {fmt_time(t['touche'])} | {fmt_time(t['coal'])} | "
              f"{fmt_time(t['python-fcl'])} | {fmt_ratio(r['r_coal'])} | {fmt_ratio(r['r_fcl'])} | "
              f"{'yes' if r['r_coal'] <= SINGLE_TARGET else '**no**'} |")
        w("")

        w(f"## 2. Batch of {self.n:,} poses\n")
        w("One side posed by a (n, 4, 4) array, the other fixed; touche answers the whole batch in one call "
          "(pose validation included; parallel over the machine's cores). The peers have no batch API: a Python "
          f"loop over the first {self.subset:,} poses, scaled per call; coal gets its best case (the "
          "`Transform3s` objects are built before the timed loop), python-fcl must `setTransform` per pose "
          "(its `Transform`s are also prebuilt). Target: touche per pair ≤ 0.25× coal per call."
          + ("" if self.validation is None else f" Of touche's time, checking the poses (rigid, finite) "
             f"costs {fmt_time(self.validation)} per pose.") + "\n")
        w("| pair | verb | colliding | touche per pair | coal per call | python-fcl per call | touche/coal | "
          "touche/fcl | ≤ 0.25× coal? |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for r in self.batch:
            t = r["times"]
            w(f"| {r['pair']} | {r['verb']} | {r['hit_fraction']:.0%} | {fmt_time(t['touche'])} | "
              f"{fmt_time(t['coal'])} | {fmt_time(t['fcl'])} | {fmt_ratio(r['r_coal'])} | {fmt_ratio(r['r_fcl'])} | "
              f"{'yes' if r['r_coal'] <= BATCH_TARGET else '**no**'} |")
        w("")

        w("## 3. Cold start (fresh subprocesses)\n")
        w("| measurement | value | target | met? |\n|---|---:|---:|---|")
        w(f"| `import touche` (timed inside the child) | {self.cold_import:.3f} s | < {IMPORT_TARGET} s | "
          f"{'yes' if self.cold_import < IMPORT_TARGET else '**no**'} |")
        w(f"| `python -c 'import touche'`, whole process incl. interpreter start | {self.cold_import_wall:.3f} s | — | — |")
        w(f"| import + first `touche.distance`, warm numba cache | {self.cold_first:.3f} s | < {FIRST_QUERY_TARGET} s | "
          f"{'yes' if self.cold_first < FIRST_QUERY_TARGET else '**no**'} |")
        if self.cold_empty is None:
            w("| import + first `touche.distance`, empty numba cache | not measured (`--quick`) | — | — |")
        else:
            w(f"| import + first `touche.distance`, empty numba cache | {self.cold_empty:.1f} s | — (reported only) | — |")
        w("")
        w("Medians of several children (the empty-cache case: one child). Before the warm-cache runs a priming "
          "child fills the cache, so a stale cache does not count as warm. The empty-cache child runs with "
          "`NUMBA_CACHE_DIR` set to a fresh temporary directory; numba then neither reads nor writes the "
          "`__pycache__` next to touche's sources. The script checks this in the child from "
          "cache statistics summed over every compiled entry point in `touche._kernels` that the query used: "
          + ("no cache hits, a compile (cache miss), the cache path inside the temp dir, and "
             f"{self.cold_empty_info['files_written']} cache files written there "
             f"(verified: {'yes' if self.cold_empty_info['verified_empty'] else '**no**'})."
             if self.cold_empty_info else "(not run in this mode).")
          + f" Warm children: {self.cold_first_info['hits']} cache hits, {self.cold_first_info['misses']} misses.\n")

        w(f"## 4. Agreement on the {self.n:,} batch inputs\n")
        w(f"touche's batch answers against coal's and python-fcl's single calls on every pose of workload 2. "
          f"Booleans are compared where both touche's and coal's signed distance are at least {BAND:g} away from 0; "
          f"distances must agree within {DIST_TOL:g}: separated distances with both peers (python-fcl's default "
          "distance request returns -1 for overlapping pairs), penetration depths (touche `signed_distance` vs "
          "coal's negative `min_distance`) with coal. Every pose where touche differs from a peer is then "
          "re-checked by a referee, coal with GJK/EPA tolerances of 1e-12 instead of the default 1e-6: "
          "*touche wrong* counts the poses where touche also disagrees with the referee (plus any pose where "
          "touche's `intersects` and its own `distance` status disagree). A fast wrong answer cannot pass.\n")
        w("| pair | colliding | bool ≠ coal | bool ≠ fcl | bool coal ≠ fcl | max \\|d − coal\\| separated | "
          "max \\|d − fcl\\| separated | max \\|depth − coal\\| | poses re-checked | touche wrong | agree? |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for s in self.agreement:
            w(f"| {s['pair']} | {s['collide_fraction']:.0%} | {s['bool_vs_coal']} | {s['bool_vs_fcl']} | "
              f"{s['bool_coal_vs_fcl']} | {s['sep_max_vs_coal']:.1e} ({s['sep_vs_coal']}/{s['sep_count']} > tol) | "
              f"{s['sep_max_vs_fcl']:.1e} ({s['sep_vs_fcl']} > tol) | "
              f"{s['pen_max_vs_coal']:.1e} ({s['pen_vs_coal']}/{s['pen_count']} > tol) | {s['suspects']} | "
              f"{s['touche_wrong']} | {'yes' if s['ok'] else '**no**'} |")
        w("")
        if self.notes:
            w("## Notes from this run\n")
            for note in self.notes:
                w(f"- {note}")
            w("")
        w(GENERATED_END)
        text = "\n".join(out) + kept_sections()  # read before opening the file for writing empties it
        with open(MD_PATH, "w") as handle:
            handle.write(text)
        print(f"wrote {os.path.relpath(MD_PATH, ROOT)}")


# BENCHMARKS.md holds this script's tables up to this line and the other benchmarks' sections
# (written by hand from their runs) after it; a run rewrites only its own part.
GENERATED_END = "<!-- end of the benchmarks/run.py tables; the sections below are kept by it -->"


def kept_sections(path=MD_PATH):
    """Everything after GENERATED_END in the current file ("" when there is none)."""
    try:
        with open(path) as handle:
            text = handle.read()
    except FileNotFoundError:
        return ""
    at = text.find(GENERATED_END)
    return "" if at < 0 else text[at + len(GENERATED_END):]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short run (< 60 s): n=10,000, short timings, no empty-cache compile")
    parser.add_argument("--n", type=int, default=None, help="batch size (default 100,000; 10,000 with --quick)")
    parser.add_argument("--subset", type=int, default=None, help="calls timed for the peers' loops (default 10,000)")
    parser.add_argument("--cold-compile", action="store_true", help="with --quick: also time the empty-cache compile")
    parser.add_argument("--markdown", action="store_true", help="with --quick: also rewrite BENCHMARKS.md")
    parser.add_argument("--no-markdown", action="store_true", help="never rewrite BENCHMARKS.md")
    parser.add_argument("--csv", default=CSV_PATH, help="append the figures to this file (default: "
                        "benchmarks/results/results.csv, not tracked by git)")
    parser.add_argument("--no-csv", action="store_true", help="do not log the figures")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    bench = Bench(args)
    print(f"touche benchmarks ({'quick' if args.quick else 'full'}): {bench.machine}")
    bench.prepare()
    bench.warm()
    bench.single_calls()
    bench.batches()
    bench.agree()
    bench.cold()
    if not args.no_csv:
        bench.write_csv(args.csv)
    lines = bench.summary()
    if not args.no_markdown and (not args.quick or args.markdown):
        bench.write_markdown(lines)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
