"""Cold start: what a new user and a contributor wait for before the first answer.

    .venv/bin/python benchmarks/bench_coldstart.py                 # everything (~15-25 min on 2 cores)
    .venv/bin/python benchmarks/bench_coldstart.py --only warmup   # or: demo, first, import
    .venv/bin/python benchmarks/bench_coldstart.py --jobs 1        # warmup in one process

Every measurement runs in fresh subprocesses, each on an EMPTY numba cache (a new temporary
NUMBA_CACHE_DIR; numba then reads and writes nothing else), except the warm-cache figures:
1. warmup: ``touche.warmup(jobs=N)``: wall seconds, CPU seconds of the whole process tree (user
   + sys), peak RSS of the largest single process, number of kernel specializations compiled,
   and the top 30 kernels by exclusive compile time (numba's compile events, recorded in every
   worker; a kernel's own time, not its callees').
2. demo: ``touche demo`` (the README's main command after ``pip install``): seconds to the first
   result line and to the end.
3. first queries: each snippet of FIRST_QUERIES alone in a fresh process and empty cache, no
   warmup: seconds from the start of the snippet to its answer (the import is timed apart).
4. import: ``import touche`` alone; import + a first distance on a warm cache (after 1, or on
   --warm-cache DIR).
Medians of --repeats runs for 4; one run each for 1-3 (each takes seconds to minutes).
Figures are printed as a markdown table; --markdown FILE also writes them there.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# One public call each (the README's quick start among them); names are the table's rows.
FIRST_QUERIES = {
    "sphere-sphere distance": (
        "tc.distance(tc.Sphere(1.0), tc.Pose.from_translation([3, 0, 0]), tc.Sphere(1.0), None)"),
    "box-box intersects": (
        "tc.intersects(tc.Box([1, 1, 1]), tc.Pose.from_translation([0.5, 0, 0]), tc.Box([1, 2, 3]), None)"),
    "capsule-box distance": (
        "tc.distance(tc.Capsule(0.3, 1.0), tc.Pose.from_rotvec([0, 0.4, 0], [1, 0.2, 0]), tc.Box([1, 2, 0.5]), None)"),
    "capsule-box distance, batch of 100": (
        "tc.distance(tc.Capsule(0.3, 1.0), tc.Pose.random(100, scale=2.0, seed=0), tc.Box([1, 2, 0.5]), None)"),
    "cylinder-box distance (GJK)": (
        "tc.distance(tc.Cylinder(0.5, 1.0), tc.Pose.from_translation([0.3, 0, 0]), tc.Box([1, 1, 1]), None)"),
    "box raycast": "tc.raycast(tc.Box([1, 1, 1]), None, [0.1, 0.2, 3.0], [0, 0, -1])",
    "box-box contacts": (
        "tc.contacts(tc.Box([1, 1, 1]), tc.Pose.from_translation([0.8, 0.1, 0]), tc.Box([1, 1, 1]), None)"),
    "box-box time of impact (Linear)": (
        "tc.time_of_impact(tc.Box([1, 1, 1]), tc.Linear([-1, 0, 0], tc.Pose.from_translation([3, 0, 0])), "
        "tc.Box([1, 1, 1]), tc.Static(), t_max=5.0)"),
    "box-box time of impact (Screw)": (
        "tc.time_of_impact(tc.Box([1, 1, 1]), tc.Screw([-1, 0, 0], [0, 0, 1], tc.Pose.from_translation([3, 0, 0])), "
        "tc.Box([1, 1, 1]), tc.Static(), t_max=5.0)"),
    "mesh-mesh distance": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.distance(m, None, m, tc.Pose.from_translation([2, 0, 0]))"),
    "box-mesh intersects": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.intersects(tc.Box([1, 1, 1]), tc.Pose.from_translation([0.5, 0, 0]), m, None)"),
    "capsule-mesh intersects": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.intersects(tc.Capsule(0.2, 0.8), tc.Pose.from_translation([0.5, 0, 0]), m, None)"),
    "sphere-mesh distance": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.distance(tc.Sphere(0.2), tc.Pose.from_translation([0.5, 0.5, 0.8]), m, None)"),
    "capsule-mesh distance": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.distance(tc.Capsule(0.2, 0.8), tc.Pose.from_translation([0.5, 0.5, 0.8]), m, None)"),
    "box-mesh distance": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.distance(tc.Box([0.3, 0.3, 0.3]), tc.Pose.from_translation([0.5, 0.5, 0.8]), m, None)"),
    "cylinder-mesh intersects": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.intersects(tc.Cylinder(0.2, 0.8), tc.Pose.from_translation([0.5, 0, 0]), m, None)"),
    "convex polyhedron-mesh intersects": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.intersects(tc.ConvexPolyhedron(np.random.default_rng(0).normal(size=(12, 3)) * 0.3), "
        "tc.Pose.from_translation([0.5, 0, 0]), m, None)"),
    "signed_distance_points": (
        "m = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]); "
        "tc.signed_distance_points(m, None, [[0.1, 0.1, 0.1]])"),
    "robot in_collision, 1,000 configurations and one": (
        "from touche import robot; "
        "arm = robot.load_urdf(text='<robot name=\"arm\"><link name=\"base\"><collision><geometry><box size=\"0.3 0.3 0.1\"/>"
        "</geometry></collision></link><link name=\"upper\"><collision><origin xyz=\"0 0 0.25\"/><geometry>"
        "<capsule radius=\"0.05\" length=\"0.4\"/></geometry></collision></link><link name=\"fore\"><collision>"
        "<origin xyz=\"0 0 0.2\"/><geometry><cylinder radius=\"0.04\" length=\"0.4\"/></geometry></collision></link>"
        "<joint name=\"shoulder\" type=\"revolute\"><parent link=\"base\"/><child link=\"upper\"/><origin xyz=\"0 0 0.05\"/>"
        "<axis xyz=\"0 1 0\"/><limit lower=\"-2.5\" upper=\"2.5\"/></joint><joint name=\"elbow\" type=\"revolute\">"
        "<parent link=\"upper\"/><child link=\"fore\"/><origin xyz=\"0 0 0.5\"/><axis xyz=\"0 1 0\"/>"
        "<limit lower=\"-2.8\" upper=\"2.8\"/></joint></robot>'); "
        "shelf = [(tc.Box([0.2, 0.6, 0.02]), tc.Pose.from_translation([0.5, 0.0, 0.6]))]; "
        "q = arm.lower + (arm.upper - arm.lower) * np.random.default_rng(0).random((1000, arm.dof)); "
        "arm.in_collision(q, shelf); arm.in_collision(q[0], shelf)"),
    "README quick start": (
        "text = open(os.path.join(ROOT, 'README.md')).read(); "
        "exec(text.split('```python', 1)[1].split('```', 1)[0], {})"),
}

_ANSWER = re.compile(r"\b(SEPARATED|TOUCHING|PENETRATING|HIT|MISS|ALREADY_TOUCHING)\b")


def _fresh_env(cache_dir):
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = cache_dir
    env.pop("TOUCHE_KEEP_NUMBA_CACHE", None)
    return env


def _run(args, env, timeout=3600, stdin=None):
    """Run a command; return (wall seconds, stdout, stderr)."""
    started = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    out, err = process.communicate(timeout=timeout)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{args} failed ({process.returncode}):\n{err[-3000:]}")
    return wall, out, err


_PROBE = """
import json, os, resource, sys, time
ROOT = {root!r}
sys.path.insert(0, ROOT)
started = time.perf_counter()
{body}
usage_self = resource.getrusage(resource.RUSAGE_SELF)
usage_children = resource.getrusage(resource.RUSAGE_CHILDREN)
print("PROBE " + json.dumps(dict(
    elapsed=time.perf_counter() - started,
    cpu=usage_self.ru_utime + usage_self.ru_stime + usage_children.ru_utime + usage_children.ru_stime,
    rss_mb=max(usage_self.ru_maxrss, usage_children.ru_maxrss) / 1024.0,
    **extra)))
"""


def _probe(body, env, timeout=3600):
    code = _PROBE.format(root=ROOT, body=body)
    wall, out, err = _run([sys.executable, "-c", code], env, timeout)
    for line in out.splitlines():
        if line.startswith("PROBE "):
            result = json.loads(line[6:])
            result["wall"] = wall
            return result, err
    raise RuntimeError(f"no result line:\n{out[-2000:]}\n{err[-2000:]}")


def measure_warmup(jobs, top):
    cache = tempfile.mkdtemp(prefix="touche-cold-")
    logs = tempfile.mkdtemp(prefix="touche-compile-log-")
    env = _fresh_env(cache)
    env["TOUCHE_COMPILE_LOG_DIR"] = logs
    body = (
        "import touche\n"
        f"touche.warmup(jobs={jobs}, progress=False)\n"
        "extra = {}\n"
    )
    try:
        result, _ = _probe(body, env)
        totals, count = {}, 0
        for name in os.listdir(logs):
            with open(os.path.join(logs, name)) as handle:
                for function, seconds, _args in json.load(handle):
                    seconds_so_far, specializations = totals.get(function, (0.0, 0))
                    totals[function] = (seconds_so_far + seconds, specializations + 1)
                    count += 1
        result["specializations"] = count
        result["compile_seconds"] = sum(seconds for seconds, _ in totals.values())
        result["top"] = sorted(totals.items(), key=lambda item: -item[1][0])[:top]
        result["cache"] = cache
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    return result


def measure_demo():
    cache = tempfile.mkdtemp(prefix="touche-cold-")
    env = _fresh_env(cache)
    touche_cli = os.path.join(os.path.dirname(sys.executable), "touche")
    command = [touche_cli, "demo"] if os.path.exists(touche_cli) else [sys.executable, "-m", "touche.cli", "demo"]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    first_result = None
    for line in process.stdout:
        # headers, notes and table headings come first; the first answer is the first line
        # that reports a status (a distance row)
        if first_result is None and _ANSWER.search(line):
            first_result = time.perf_counter() - started
    process.wait()
    total = time.perf_counter() - started
    shutil.rmtree(cache, ignore_errors=True)
    if process.returncode != 0:
        raise RuntimeError(f"touche demo exited {process.returncode}")
    return {"first_result": first_result, "total": total}


def measure_first_queries(names):
    rows = {}
    for name in names:
        cache = tempfile.mkdtemp(prefix="touche-cold-")
        body = (
            "import numpy as np\nimport touche as tc\n"
            "imported = time.perf_counter()\n"
            f"{FIRST_QUERIES[name]}\n"
            "extra = dict(query=time.perf_counter() - imported)\n"
        )
        result, _ = _probe(body, _fresh_env(cache))
        rows[name] = result
        shutil.rmtree(cache, ignore_errors=True)
        print(f"  first query, empty cache: {name}: {result['query']:.1f} s", flush=True)
    return rows


def measure_import(warm_cache, repeats):
    body_import = "import touche\nextra = {}\n"
    body_query = (
        "import touche as tc\n"
        "tc.distance(tc.Sphere(1.0), tc.Pose.from_translation([3, 0, 0]), tc.Sphere(1.0), None)\n"
        "extra = {}\n"
    )
    env = _fresh_env(warm_cache)
    _probe(body_query, env)  # untimed: a --warm-cache folder then holds what the query loads
    imports = [_probe(body_import, env)[0]["elapsed"] for _ in range(repeats)]
    queries = [_probe(body_query, env)[0]["elapsed"] for _ in range(repeats)]
    return {"import": statistics.median(imports), "import_and_query": statistics.median(queries)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["warmup", "demo", "first", "import"], action="append")
    parser.add_argument("--jobs", type=int, default=None, help="warmup worker processes (default: all cores)")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--queries", nargs="*", default=list(FIRST_QUERIES), help="names from FIRST_QUERIES")
    parser.add_argument("--markdown", help="also write the report to this file")
    parser.add_argument("--warm-cache", help="part 4 (import) on this NUMBA_CACHE_DIR instead of the warmup's "
                        "(no warmup for it; the folder is kept): e.g. one a `touche warmup` filled")
    args = parser.parse_args(argv)
    parts = args.only or ["warmup", "demo", "first", "import"]
    jobs = args.jobs if args.jobs else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    lines = [f"Cold start on {os.cpu_count()} cores, python {sys.version.split()[0]}; every figure on an empty "
             "numba cache (fresh NUMBA_CACHE_DIR) unless said.", ""]
    warm_cache = None
    if "warmup" in parts or ("import" in parts and not args.warm_cache):
        print(f"warmup, {jobs} job(s), empty cache ...", flush=True)
        warm = measure_warmup(jobs, args.top)
        warm_cache = warm["cache"]
        lines += [
            "| warmup | wall | CPU | peak RSS (largest process) | specializations compiled | compile time (sum) |",
            "|---|---:|---:|---:|---:|---:|",
            f"| touche.warmup(jobs={jobs}) | {warm['wall']:.1f} s | {warm['cpu']:.1f} s | {warm['rss_mb']:.0f} MB "
            f"| {warm['specializations']} | {warm['compile_seconds']:.1f} s |",
            "",
            f"Top {args.top} kernels by exclusive compile time (seconds, specializations):",
            "",
            "| kernel | seconds | specializations |",
            "|---|---:|---:|",
        ]
        lines += [f"| {name} | {seconds:.2f} | {count} |" for name, (seconds, count) in warm["top"]]
        lines.append("")
        print("\n".join(lines[-(len(warm["top"]) + 12):]), flush=True)
    if "import" in parts:
        figures = measure_import(args.warm_cache or warm_cache, args.repeats)
        source = f"NUMBA_CACHE_DIR={args.warm_cache}" if args.warm_cache else "after the warmup above"
        lines += [
            f"| warm cache ({source}) | median of {args.repeats} |",
            "|---|---:|",
            f"| import touche | {figures['import']:.3f} s |",
            f"| import + first sphere-sphere distance | {figures['import_and_query']:.3f} s |",
            "",
        ]
        print("\n".join(lines[-5:]), flush=True)
    if warm_cache:
        shutil.rmtree(warm_cache, ignore_errors=True)
    if "demo" in parts:
        print("touche demo, empty cache ...", flush=True)
        demo = measure_demo()
        lines += [
            "| touche demo (empty cache) | seconds |",
            "|---|---:|",
            f"| first result line | {demo['first_result']:.1f} |",
            f"| whole demo | {demo['total']:.1f} |",
            "",
        ]
        print("\n".join(lines[-5:]), flush=True)
    if "first" in parts:
        print("first queries, each in a fresh process on an empty cache ...", flush=True)
        rows = measure_first_queries(args.queries)
        lines += ["| first query, no warmup, empty cache | query | import |", "|---|---:|---:|"]
        lines += [f"| {name} | {row['query']:.1f} s | {row['elapsed'] - row['query']:.2f} s |" for name, row in rows.items()]
        lines.append("")
    report = "\n".join(lines)
    print()
    print(report)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(report + "\n")


if __name__ == "__main__":
    main()
