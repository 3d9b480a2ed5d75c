"""Robot configuration checks: touche.robot vs pinocchio + coal, same URDF / SRDF / pairs / scene.

    .venv/bin/python benchmarks/bench_robot.py [--quick] [--count 10000] [--repeats 5]

Robots: Panda and UR5 from example-robot-data (``pip install pin example-robot-data``), their
SRDFs' disabled pairs, collision meshes as triangle meshes on both sides (coal: BVHModelOBBRSS).
Scene: a shelf of four boxes in front of the robot. Both libraries check exactly the same pairs
(touche's self pairs after its allowed-collision matrix, plus every link against every box:
pinocchio's pair list is set from touche's).

Rows (microseconds per configuration, median of interleaved repeats; ratio = touche / peer):
- batch booleans (self + environment, stop at the first colliding pair): one
  ``robot.in_collision(q (n, dof), shelf)`` call vs ``pinocchio.computeCollisions(..., True)``
  per configuration from a Python loop (pinocchio's documented way; its
  ``computeCollisionsInParallel`` needs a GeometryPool and is not timed here);
- single configuration from Python: ``robot.in_collision(q (dof,), shelf)`` per configuration vs
  the same pinocchio call;
- distances (every pair, witness points): ``robot.distances`` batch vs
  ``pinocchio.computeDistances`` per configuration, on the first 200 configurations.
Agreement: colliding flags per pair compared on every configuration, distances on the separated
pairs of the distance workload (max absolute difference).
"""
from __future__ import annotations

import argparse
import site
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import touche as tc  # noqa: E402
from touche import robot  # noqa: E402

ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf", [0.55, 0.0, 0.0]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf", [0.0, 0.55, 0.0]),
}


def example_robot_data():
    for folder in site.getsitepackages():
        share = Path(folder) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if share.is_dir():
            return share
    sys.exit("example-robot-data is not installed: pip install pin example-robot-data")


def shelf(front):
    """Four boards of a shelf whose front faces the robot at ``front`` (x or y direction)."""
    front = np.asarray(front)
    across = np.array([-front[1], front[0], 0.0]) / np.linalg.norm(front)
    board = [0.3, 0.8, 0.02] if front[0] else [0.8, 0.3, 0.02]  # deep along ``front``, wide across it
    boards = [(board, front + [0.0, 0.0, height]) for height in (0.15, 0.5, 0.85)]
    boards.append(([0.3, 0.02, 0.9] if front[0] else [0.02, 0.3, 0.9], front + across * 0.4 + [0.0, 0.0, 0.5]))
    return [(tc.Box(size), tc.Pose.from_translation(center)) for size, center in boards]


def pinocchio_setup(pin, coal, urdf, share, model, scene):
    pmodel, gmodel = pin.buildModelsFromUrdf(str(urdf), package_dirs=[str(share.parent.parent)],
                                             geometry_types=pin.GeometryType.COLLISION)
    ids = {}
    for geometry in model.geometries:
        index = 0 if "[" not in geometry.name else int(geometry.name.split("[")[1][:-1])
        ids[geometry.name] = gmodel.getGeometryId(f"{geometry.link}_{index}")
    boxes = []
    for k, (box, pose) in enumerate(scene):
        placement = pin.SE3(pose.matrix[:3, :3].copy(), pose.matrix[:3, 3].copy())
        shape = coal.Box(*(2.0 * box.half_extents))
        boxes.append(gmodel.addGeometryObject(pin.GeometryObject(f"board{k}", 0, placement, shape)))
    gmodel.removeAllCollisionPairs()
    for a, b in model.self_pairs:
        gmodel.addCollisionPair(pin.CollisionPair(ids[model.geometries[a].name], ids[model.geometries[b].name]))
    for geometry in model.geometries:
        for box in boxes:
            gmodel.addCollisionPair(pin.CollisionPair(ids[geometry.name], box))
    return pmodel, gmodel


def pinocchio_configurations(pin, pmodel, model, q):
    out = np.tile(pin.neutral(pmodel), (len(q), 1))
    for column, joint in enumerate(model.joint_names):
        out[:, pmodel.joints[pmodel.getJointId(joint)].idx_q] = q[:, column]
    if "panda_finger_joint2" in [pmodel.names[i] for i in range(pmodel.njoints)]:  # the mimic
        out[:, pmodel.joints[pmodel.getJointId("panda_finger_joint2")].idx_q] = q[:, model.joint_names.index(
            "panda_finger_joint1")]
    return out


def interleaved(functions, repeats):
    times = [[] for _ in functions]
    for _ in range(repeats):
        for k, function in enumerate(functions):
            started = time.perf_counter()
            function()
            times[k].append(time.perf_counter() - started)
    return [float(np.median(t)) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 configurations, 3 repeats")
    args = parser.parse_args()
    if args.quick:
        args.count, args.repeats = 1000, 3
    import coal
    import pinocchio as pin

    share = example_robot_data()
    print(f"touche threads: {tc.get_num_threads()}; {args.count:,} configurations; median of {args.repeats}")
    print(f"{'robot':<6} {'workload':<34} {'touche us/cfg':>14} {'pin+coal us/cfg':>16} {'ratio':>7}")
    for name, (urdf_name, srdf_name, front) in ROBOTS.items():
        urdf, srdf = share / urdf_name, share / srdf_name
        model = robot.load_urdf(urdf, srdf)
        scene = shelf(front)
        rng = np.random.default_rng(0)
        q = model.lower + (model.upper - model.lower) * rng.random((args.count, model.dof))
        pmodel, gmodel = pinocchio_setup(pin, coal, urdf, share, model, scene)
        pdata, gdata = pmodel.createData(), gmodel.createData()
        pq = pinocchio_configurations(pin, pmodel, model, q)

        # agreement first (and warm both)
        report = model.collisions(q, scene)
        theirs = np.zeros_like(report.colliding)
        for i in range(len(q)):
            pin.computeCollisions(pmodel, pdata, gmodel, gdata, pq[i], False)
            theirs[i] = [r.isCollision() for r in gdata.collisionResults]
        hits = model.in_collision(q, scene)
        assert (hits == report.in_collision).all()
        differ = int(np.count_nonzero(theirs != report.colliding))

        def pin_booleans():
            out = np.empty(len(q), dtype=bool)
            for i in range(len(q)):
                out[i] = pin.computeCollisions(pmodel, pdata, gmodel, gdata, pq[i], True)
            return out

        def touche_singles():
            for i in range(len(q)):
                model.in_collision(q[i], scene)

        touche_batch, pin_time = interleaved([lambda: model.in_collision(q, scene), pin_booleans], args.repeats)
        single = len(q) if args.count <= 2000 else 2000  # the Python loop: a subset is enough
        singles_q = q[:single]

        def touche_singles_subset():
            for i in range(single):
                model.in_collision(singles_q[i], scene)

        def pin_subset():
            for i in range(single):
                pin.computeCollisions(pmodel, pdata, gmodel, gdata, pq[i], True)

        touche_single, pin_single = interleaved([touche_singles_subset, pin_subset], args.repeats)
        unit = 1e6 / len(q)
        print(f"{name:<6} {'batch booleans (self + shelf)':<34} {touche_batch * unit:14.2f} {pin_time * unit:16.2f} "
              f"{touche_batch / pin_time:7.3f}")
        print(f"{name:<6} {'single configuration from Python':<34} {touche_single * 1e6 / single:14.2f} "
              f"{pin_single * 1e6 / single:16.2f} {touche_single / pin_single:7.3f}")

        few = q[:200]

        def pin_distances():
            for i in range(len(few)):
                pin.computeDistances(pmodel, pdata, gmodel, gdata, pq[i])

        touche_distance, pin_distance = interleaved([lambda: model.distances(few, scene), pin_distances],
                                                    max(1, args.repeats // 2))
        result = model.distances(few, scene)
        coal_distances = np.zeros_like(result.signed_distance)
        for i in range(len(few)):
            pin.computeDistances(pmodel, pdata, gmodel, gdata, pq[i])
            coal_distances[i] = [r.min_distance for r in gdata.distanceResults]
        apart = (result.signed_distance > 0) & (coal_distances > 0)
        worst = float(np.abs(result.signed_distance - coal_distances)[apart].max())
        print(f"{name:<6} {'distances, every pair (200 cfg)':<34} {touche_distance * 1e6 / len(few):14.1f} "
              f"{pin_distance * 1e6 / len(few):16.1f} {touche_distance / pin_distance:7.3f}")
        print(f"       {len(report.pairs)} pairs; colliding configurations {report.in_collision.mean():.1%}; "
              f"pair flags differing from coal: {differ} of {theirs.size:,}; "
              f"max |distance difference| on separated pairs: {worst:.2e}")


if __name__ == "__main__":
    main()
