"""Safety margins and lower bounds (issue 19 item 3): ``touche.intersects(..., margin=d)`` against
coal's ``collide`` with ``CollisionRequest.security_margin = d`` and against touche's own
``distance(...).distance <= d``; ``distance(..., lower_bound_only=True)`` against the exact
``distance``. Per pair family, single calls (a Python loop over poses) and batches.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_margin.py [--rounds 7] [--poses 400]
    PYTHONPATH=. .venv/bin/python benchmarks/bench_margin.py --zero-path   # margin=0 cost only

Figures are microseconds per pair (median over interleaved rounds: every method of a workload
runs once per round, in turn, so a busy shared machine slows them alike) and ratios in the same
process. coal has no batch call: its figure is always its per-pose loop. The margin of each
workload is the median distance of its poses, so about half the poses are within it.
``--zero-path`` times single ``intersects`` calls without a margin and with ``margin=0.0``
(run it with this tree and with a tree before the margins on PYTHONPATH to compare the two).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: --zero-path compares two trees through it
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import touche as tc  # noqa: E402

try:
    import coal
except ImportError:  # pragma: no cover
    coal = None


def _random_poses(rng, n, spread):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    poses = np.tile(np.eye(4), (n, 1, 1))
    poses[:, :3, :3] = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=1)
    poses[:, :3, 3] = rng.uniform(-spread, spread, (n, 3))
    return poses


def _coal_geometry(shape):
    if isinstance(shape, tc.TriangleMesh):
        model = coal.BVHModelOBBRSS()
        model.beginModel(len(shape.triangles), len(shape.vertices))
        vertices = coal.StdVec_Vec3s()
        for p in shape.vertices:
            vertices.append(np.array(p, dtype=np.float64))
        triangles = coal.StdVec_Triangle()
        for f in shape.triangles:
            triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
        model.addSubModel(vertices, triangles)
        model.endModel()
        return model
    from coal_adapter import coal_geometry

    return coal_geometry(shape)


def _coal_transform(matrix):
    return coal.Transform3s(np.ascontiguousarray(matrix[:3, :3]), np.ascontiguousarray(matrix[:3, 3]))


def workloads(count, seed=0):
    """(name, a, b, poses_a (n, 4, 4), poses_b (n, 4, 4))."""
    rng = np.random.default_rng(seed)
    hull_points = rng.normal(size=(60, 3))
    hull_points /= np.linalg.norm(hull_points, axis=1, keepdims=True)
    out = [
        ("box-box", tc.Box([1.0, 0.7, 0.5]), tc.Box([0.8, 1.1, 0.6]), 2.0),
        ("capsule-capsule", tc.Capsule(0.3, 0.8), tc.Capsule(0.25, 1.0), 1.8),
        ("capsule-box", tc.Capsule(0.3, 0.8), tc.Box([1.0, 0.7, 0.5]), 1.8),
        ("hull-hull (60 vertices)", tc.ConvexPolyhedron(hull_points * 0.6),
         tc.ConvexPolyhedron(rng.normal(size=(60, 3)) * 0.4), 2.0),
        ("cylinder-cone", tc.Cylinder(0.4, 0.9), tc.Cone(0.45, 1.0), 2.0),
    ]
    result = [(name, a, b, _random_poses(rng, count, 0.1), _random_poses(rng, count, spread))
              for name, a, b, spread in out]
    try:
        import panel
    except ImportError:  # pragma: no cover
        return result
    for mesh_name in ("duck", "diff_ring"):
        entry = panel.mesh(mesh_name)
        if entry is None:
            continue
        mesh = tc.TriangleMesh(entry.vertices, entry.faces)
        mesh_count = max(20, count // 10)
        poses = np.concatenate([panel.poses(entry, "near", mesh_count // 2, seed=seed),
                                panel.poses(entry, "far", mesh_count - mesh_count // 2, seed=seed)])
        result.append((f"mesh-mesh {mesh_name} ({len(entry.faces)} tri)", mesh, mesh,
                       np.tile(np.eye(4), (len(poses), 1, 1)), poses))
    return result


def _timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _interleaved(methods, rounds):
    """{name: median seconds} over ``rounds`` rounds, every method once per round in turn."""
    times = {name: [] for name in methods}
    for _ in range(rounds):
        for name, function in methods.items():
            times[name].append(_timed(function))
    return {name: float(np.median(values)) for name, values in times.items()}


def bench(rounds, count, only=None):
    print(f"{'workload':34s} {'method':46s} {'us/pair':>10s} {'ratio':>8s}")
    for name, a, b, poses_a, poses_b in workloads(count):
        if only is not None and only not in name:
            continue
        n = len(poses_a)
        exact = tc.distance(a, poses_a, b, poses_b).distance
        margin = float(np.median(exact))
        pairs = list(zip(poses_a, poses_b))
        coal_a = coal_b = None
        if coal is not None:
            coal_a, coal_b = _coal_geometry(a), _coal_geometry(b)
            coal_poses = [(_coal_transform(ta), _coal_transform(tb)) for ta, tb in pairs]

        def coal_loop():
            for ta, tb in coal_poses:
                request = coal.CollisionRequest()
                request.security_margin = margin
                coal.collide(coal_a, ta, coal_b, tb, request, coal.CollisionResult())

        margin_methods = {
            "intersects(margin) single": lambda: [tc.intersects(a, ta, b, tb, margin=margin) for ta, tb in pairs],
            "distance <= margin single": lambda: [tc.distance(a, ta, b, tb).distance <= margin for ta, tb in pairs],
            "intersects(margin) batch": lambda: tc.intersects(a, poses_a, b, poses_b, margin=margin),
            "distance <= margin batch": lambda: tc.distance(a, poses_a, b, poses_b).distance <= margin,
        }
        if coal is not None:
            margin_methods["coal collide(security_margin) per pose"] = coal_loop
        bound_methods = {
            "distance(lower_bound_only) single": lambda: [tc.distance(a, ta, b, tb, lower_bound_only=True)
                                                          for ta, tb in pairs],
            "distance single": lambda: [tc.distance(a, ta, b, tb) for ta, tb in pairs],
            "distance(lower_bound_only) batch": lambda: tc.distance(a, poses_a, b, poses_b, lower_bound_only=True),
            "distance batch": lambda: tc.distance(a, poses_a, b, poses_b),
        }
        for methods in (margin_methods, bound_methods):
            for function in methods.values():  # loads every kernel before timing
                function()
        margin_times = _interleaved(margin_methods, rounds)
        bound_times = _interleaved(bound_methods, rounds)
        within = tc.intersects(a, poses_a, b, poses_b, margin=margin).mean()
        bound = tc.distance(a, poses_a, b, poses_b, lower_bound_only=True).distance
        apart = exact > 0
        tightness = float(np.median(bound[apart] / exact[apart])) if apart.any() else float("nan")
        label = f"{name} (n={n})"
        print(f"{label:34s} margin={margin:.4g}: {within:.0%} within; lower bound / distance median {tightness:.3f}")
        base = margin_times["intersects(margin) single"]
        for method, seconds in margin_times.items():
            ratio = seconds / base if "single" in method or "coal" in method else seconds / margin_times[
                "intersects(margin) batch"]
            print(f"{'':34s} {method:46s} {1e6 * seconds / n:10.2f} {ratio:8.2f}")
        for kind in ("single", "batch"):
            fast = bound_times[f"distance(lower_bound_only) {kind}"]
            slow = bound_times[f"distance {kind}"]
            print(f"{'':34s} {'lower bound ' + kind:46s} {1e6 * fast / n:10.2f} {1.0:8.2f}")
            print(f"{'':34s} {'exact distance ' + kind:46s} {1e6 * slow / n:10.2f} {slow / fast:8.2f}")
    print("ratio: time / the first row of its group (margin single rows and coal: / intersects(margin) single; "
          "batch rows: / intersects(margin) batch; exact distance: / lower bound)")


def zero_path(rounds, count):
    """Single intersects calls without a margin and with margin=0.0 (ns per call)."""
    rng = np.random.default_rng(1)
    for name, a, b in (("sphere-sphere", tc.Sphere(0.5), tc.Sphere(0.4)), ("box-box", tc.Box([1, 1, 1]), tc.Box([1, 2, 1])),
                       ("cylinder-box", tc.Cylinder(0.4, 0.9), tc.Box([1, 1, 1]))):
        poses = _random_poses(rng, count, 1.5)
        pairs = [(None, p) for p in poses]
        try:
            tc.intersects(a, None, b, poses[0], margin=0.0)
            with_zero = True
        except TypeError:  # a tree before the margins
            with_zero = False
        methods = {"intersects": lambda: [tc.intersects(a, ta, b, tb) for ta, tb in pairs]}
        if with_zero:
            methods["intersects(margin=0.0)"] = lambda: [tc.intersects(a, ta, b, tb, margin=0.0) for ta, tb in pairs]
        for function in methods.values():
            function()
        times = _interleaved(methods, rounds)
        for method, seconds in times.items():
            print(f"{name:14s} {method:26s} {1e9 * seconds / count:10.0f} ns/call")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--poses", type=int, default=400)
    parser.add_argument("--zero-path", action="store_true")
    parser.add_argument("--only", default=None, help="run the workloads whose name contains this text")
    args = parser.parse_args()
    if args.zero_path:
        zero_path(args.rounds, args.poses * 5)
    else:
        bench(args.rounds, args.poses, args.only)


if __name__ == "__main__":
    main()
