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
  ``pinocchio.computeDistances`` per configuration, on the first 200 configurations; and one
  configuration per ``robot.distances`` call (the first 50), as an optimiser calls it.
Agreement: colliding flags per pair compared on every configuration, distances on the separated
pairs of the distance workload (max absolute difference). Where the flags differ, both
libraries' distances of that pair referee: "coal's boolean against both distances" counts
differences where touche's flag follows the sign of a distance both libraries agree on (coal's
collision call reporting a collision at a positive distance, or none at a penetration);
"unexplained" counts the rest.

``--robots`` takes any of ROBOTS: panda and ur5 are the arms the defaults were tuned on; kinova,
xarm7, z1, baxter, so101, tiago and talos_arm re-measure on arms nothing was tuned on (mimic
joints are set on pinocchio's side from the URDF; arms without an SRDF check every non-adjacent
pair). ``--no-motion`` skips the motion section.

Motion segments (Panda, ``--segments`` seeded segments, the shelf, self-collision too; ``--motion``
runs this part alone): ``robot.check_motion`` (certified, conservative advancement) one segment per
call from Python and all segments in one call, against the discrete check a planner runs instead:
100 configurations per segment (s = k / 99) with ``pinocchio.computeCollisions(..., True)``,
stopping at the first colliding sample. Segments start at collision-free configurations and have
joint-space length ``--length`` (radians, clipped to the limits). Misses: grazing segments built so
that a vertex of a link passes through a thin plate (2 x 2 x 0.5 mm) between two of the 100
samples; each side counts how many it reports free.
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
from touche.robot.urdf import read_urdf  # noqa: E402

ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", "panda_description/srdf/panda.srdf", [0.55, 0.0, 0.0]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf", [0.0, 0.55, 0.0]),
    # not used to tune anything: --robots kinova,xarm7,z1 re-measures on arms the defaults are not
    "kinova": ("kinova_description/robots/kinova.urdf", "kinova_description/srdf/kinova.srdf", [0.55, 0.0, 0.0]),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", "xarm_description/srdf/xarm7.srdf", [0.55, 0.0, 0.0]),
    "z1": ("z1_description/urdf/z1.urdf", "z1_description/srdf/z1.srdf", [0.0, 0.45, 0.0]),
    "baxter": ("baxter_description/urdf/baxter.urdf", "baxter_description/srdf/baxter_manipulation.srdf",
               [0.75, 0.0, 0.0]),
    "so101": ("so_arm_description/urdf/so101.urdf", None, [0.25, 0.0, 0.0]),
    "tiago": ("tiago_description/robots/tiago.urdf", None, [0.7, 0.0, 0.0]),
    "talos_arm": ("talos_data/robots/talos_left_arm.urdf", None, [0.55, 0.0, 0.0]),
}
DEFAULT_ROBOTS = "panda,ur5"


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


def pinocchio_configurations(pin, pmodel, model, q, urdf):
    """touche configurations (its actuated joints) as pinocchio's: continuous joints as (cos, sin),
    and every mimic joint (pinocchio loads it as a joint of its own) set from its master."""
    out = np.tile(pin.neutral(pmodel), (len(q), 1))

    def set_joint(name, values):
        frame = pmodel.joints[pmodel.getJointId(name)]
        if frame.nq == 2:  # a continuous joint: pinocchio stores (cos, sin) of its angle
            out[:, frame.idx_q] = np.cos(values)
            out[:, frame.idx_q + 1] = np.sin(values)
        else:
            out[:, frame.idx_q] = values

    for column, joint in enumerate(model.joint_names):
        set_joint(joint, q[:, column])
    pinocchio_names = {pmodel.names[i] for i in range(pmodel.njoints)}
    for joint, (master, multiplier, offset) in model._resolve_mimics(read_urdf(urdf).joints, urdf).items():
        if joint in pinocchio_names:
            set_joint(joint, multiplier * q[:, model.joint_names.index(master)] + offset)
    return out


def referee(pin, pmodel, pdata, gmodel, gdata, model, scene, q, pq, differing, ours):
    """Where the two booleans differ, both libraries' distances of the pair decide: how many
    differences coal's own distance contradicts (its boolean says colliding at a distance > 0, or
    free at a penetration), how many lie in the 1e-9 band, and how many are left unexplained."""
    contradicted = band = unexplained = 0
    for i in np.flatnonzero(differing.any(axis=1)):
        pin.computeDistances(pmodel, pdata, gmodel, gdata, pq[i])
        ours_distance = model.distances(q[i], scene).signed_distance
        for k in np.flatnonzero(differing[i]):
            coal_distance = gdata.distanceResults[int(k)].min_distance
            agree = abs(ours_distance[k] - coal_distance) <= 1e-6 * max(1.0, abs(coal_distance))
            if abs(ours_distance[k]) <= 1e-9:
                band += 1
            elif agree and ours[i, k] == (ours_distance[k] <= 0.0):
                contradicted += 1
            else:
                unexplained += 1
    return (f"coal's boolean against both distances: {contradicted}, within 1e-9: {band}, "
            f"unexplained: {unexplained}")


def referee_distances(pin, pmodel, pdata, gmodel, gdata, pq, ours, theirs, apart, model, q, scene, relative=1e-9):
    """Separated pairs whose distances differ by more than ``relative`` (x max(1, |d|)): coal
    again with GJK / EPA tolerances of 1e-12 (its default GJK tolerance is 1e-6) decides; where
    that still differs, a third referee: both shapes finely tessellated (a cylinder as a
    200,000-gon prism, a box as its 12 triangles; tessellation() says what it takes) and their
    mesh distance, within the tessellation's error. Returns the counts."""
    differ = apart & (np.abs(ours - theirs) > relative * np.maximum(1.0, np.abs(theirs)))
    if not differ.any():
        return f"distances differing by > {relative:g} relative: 0"
    saved = [(r.gjk_tolerance, r.epa_tolerance, r.gjk_max_iterations) for r in gdata.distanceRequests]
    for request in gdata.distanceRequests:
        request.gjk_tolerance = 1e-12
        request.epa_tolerance = 1e-12
        request.gjk_max_iterations = 1000
    undecided = []
    try:
        for i in np.flatnonzero(differ.any(axis=1)):
            pin.computeDistances(pmodel, pdata, gmodel, gdata, pq[i])
            for k in np.flatnonzero(differ[i]):
                tight = gdata.distanceResults[int(k)].min_distance
                if not (abs(tight) < 1e300 and abs(ours[i, k] - tight) <= relative * max(1.0, abs(tight))):
                    undecided.append((i, k))
    finally:
        for request, (gjk, epa, iterations) in zip(gdata.distanceRequests, saved):
            request.gjk_tolerance, request.epa_tolerance, request.gjk_max_iterations = gjk, epa, iterations
    agreed = wrong = unrefereed = 0
    largest = 0.0
    from touche.robot._pairs import checked_pairs

    pair_a, pair_b = checked_pairs(model, len(scene), True)  # the order of the distance columns
    shapes = [g.shape for g in model.geometries]
    for i, k in undecided:
        a, b = pair_a[k], pair_b[k]
        poses = np.asarray(model.geometry_poses(q[i]))
        first = (shapes[a], poses[a])
        second = (shapes[b], poses[b]) if b >= 0 else (scene[-b - 1][0], scene[-b - 1][1].matrix)
        meshes = [tessellation(shape) for shape, _ in (first, second)]
        if meshes[0] is None or meshes[1] is None:
            unrefereed += 1
            continue
        fine = float(np.ravel(tc.distance(meshes[0][0], tc.Pose(first[1]), meshes[1][0],
                                          tc.Pose(second[1])).signed_distance)[0])
        error = meshes[0][1] + meshes[1][1] + relative * max(1.0, abs(fine))
        gap = abs(ours[i, k] - fine)
        largest = max(largest, gap)
        if gap <= error:
            agreed += 1
        else:
            wrong += 1
    return (f"distances differing by > {relative:g} relative: {int(differ.sum())}; coal at 1e-12 tolerances agrees "
            f"with touche on {int(differ.sum()) - len(undecided)}; on the other {len(undecided)} a fine tessellation "
            f"agrees with touche on {agreed}, differs on {wrong}, cannot judge {unrefereed} (largest |touche - "
            f"tessellation| {largest:.1e})")


def tessellation(shape):
    """(mesh, its distance error) of a fine tessellation of ``shape``, or None: a cylinder as a
    200,000-gon prism (inscribed: distances too large by at most r (1 - cos(pi / 200,000)) each,
    ~1.2e-10 r), a box exactly, a mesh as itself."""
    import trimesh

    if isinstance(shape, tc.TriangleMesh):
        return shape, 0.0
    if isinstance(shape, tc.Box):
        box = trimesh.creation.box(np.asarray(shape.extents, dtype=float))
        return tc.TriangleMesh(box.vertices + np.asarray(shape.center), box.faces), 0.0
    if isinstance(shape, tc.Cylinder):
        sections = 200_000
        prism = trimesh.creation.cylinder(radius=shape.radius, height=shape.length, sections=sections)
        return tc.TriangleMesh(prism.vertices, prism.faces), shape.radius * (1.0 - np.cos(np.pi / sections))
    return None


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
    parser.add_argument("--motion", action="store_true", help="only the motion-segment section")
    parser.add_argument("--no-motion", action="store_true", help="skip the motion-segment section")
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--length", type=float, default=1.0)
    parser.add_argument("--grazing", type=int, default=20)
    parser.add_argument("--robots", default=DEFAULT_ROBOTS, help=f"comma-separated, from {', '.join(ROBOTS)}")
    args = parser.parse_args()
    if args.quick:
        args.count, args.repeats = 1000, 3
    import coal
    import pinocchio as pin

    share = example_robot_data()
    if args.motion:
        motion_section(args, share, pin, coal)
        return
    print(f"touche threads: {tc.get_num_threads()}; {args.count:,} configurations; median of {args.repeats}")
    print(f"{'robot':<6} {'workload':<34} {'touche us/cfg':>14} {'pin+coal us/cfg':>16} {'ratio':>7}")
    for name in args.robots.split(","):
        urdf_name, srdf_name, front = ROBOTS[name]
        urdf, srdf = share / urdf_name, (share / srdf_name if srdf_name else None)
        model = robot.load_urdf(urdf, srdf)
        scene = shelf(front)
        rng = np.random.default_rng(0)
        lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)  # continuous joints: one turn
        upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
        q = lower + (upper - lower) * rng.random((args.count, model.dof))
        pmodel, gmodel = pinocchio_setup(pin, coal, urdf, share, model, scene)
        pdata, gdata = pmodel.createData(), gmodel.createData()
        pq = pinocchio_configurations(pin, pmodel, model, q, urdf)

        # agreement first (and warm both)
        report = model.collisions(q, scene)
        theirs = np.zeros_like(report.colliding)
        for i in range(len(q)):
            pin.computeCollisions(pmodel, pdata, gmodel, gdata, pq[i], False)
            theirs[i] = [r.isCollision() for r in gdata.collisionResults]
        hits = model.in_collision(q, scene)
        assert (hits == report.in_collision).all()
        differ = int(np.count_nonzero(theirs != report.colliding))
        refereed = referee(pin, pmodel, pdata, gmodel, gdata, model, scene, q, pq, theirs != report.colliding,
                           report.colliding)

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
        singles = q[:50]
        pq_singles = pq[:50]

        def touche_distance_singles():
            for i in range(len(singles)):
                model.distances(singles[i], scene)

        def pin_distance_singles():
            for i in range(len(singles)):
                pin.computeDistances(pmodel, pdata, gmodel, gdata, pq_singles[i])

        touche_distance_one, pin_distance_one = interleaved([touche_distance_singles, pin_distance_singles],
                                                            max(1, args.repeats // 2))
        result = model.distances(few, scene)
        coal_distances = np.zeros_like(result.signed_distance)
        for i in range(len(few)):
            pin.computeDistances(pmodel, pdata, gmodel, gdata, pq[i])
            coal_distances[i] = [r.min_distance for r in gdata.distanceResults]
        apart = (result.signed_distance > 0) & (coal_distances > 0)
        worst = float(np.abs(result.signed_distance - coal_distances)[apart].max())
        distance_referee = referee_distances(pin, pmodel, pdata, gmodel, gdata, pq[:len(few)],
                                             result.signed_distance, coal_distances, apart, model, few, scene)
        print(f"{name:<6} {'distances, every pair (200 cfg)':<34} {touche_distance * 1e6 / len(few):14.1f} "
              f"{pin_distance * 1e6 / len(few):16.1f} {touche_distance / pin_distance:7.3f}")
        print(f"{name:<6} {'distances, one configuration per call':<34} "
              f"{touche_distance_one * 1e6 / len(singles):14.1f} {pin_distance_one * 1e6 / len(singles):16.1f} "
              f"{touche_distance_one / pin_distance_one:7.3f}")
        print(f"       {len(report.pairs)} pairs; colliding configurations {report.in_collision.mean():.1%}; "
              f"pair flags differing from coal: {differ} of {theirs.size:,} ({refereed}); "
              f"max |distance difference| on separated pairs: {worst:.2e}; {distance_referee}")

    if not args.no_motion:
        motion_section(args, share, pin, coal)


def free_segments(model, scene, count, length, rng):
    """``count`` segments from collision-free configurations, joint-space length ``length``."""
    starts = model.lower + (model.upper - model.lower) * rng.random((20 * count, model.dof))
    starts = starts[~model.in_collision(starts, scene)][:count]
    direction = rng.normal(size=starts.shape)
    direction *= (length / np.linalg.norm(direction, axis=1))[:, None]
    return starts, np.clip(starts + direction, model.lower, model.upper)


def grazing_segments(model, count, rng):
    """(q0, q1, plate) whose plate a vertex of a link passes through between two of 100 samples
    (checked with touche's configuration check; the plate is the only obstacle)."""
    meshes = [g for g, geometry in enumerate(model.geometries) if isinstance(geometry.shape, tc.TriangleMesh)]
    found = []
    starts, ends = free_segments(model, None, 40 * count, 2.0, rng)
    samples = np.linspace(0.0, 1.0, 100)
    for q0, q1 in zip(starts, ends):
        if len(found) == count:
            break
        g = meshes[rng.integers(len(meshes) // 2, len(meshes))]
        middle = (rng.integers(10, 89) + rng.uniform(0.3, 0.7)) / 99.0
        here, later = model.geometry_poses(q0 + np.array([[middle], [middle + 1e-6]]) * (q1 - q0),
                                           allow_outside_limits=True)[g]
        vertices = model.geometries[g].shape.vertices
        world = vertices @ here[:3, :3].T + here[:3, 3]
        speed = (vertices @ later[:3, :3].T + later[:3, 3] - world) / 1e-6
        thin = speed[np.argmax(np.linalg.norm(speed, axis=1))]
        thin /= np.linalg.norm(thin)
        side = np.cross(thin, [1.0, 0.0, 0.0] if abs(thin[0]) < 0.9 else [0.0, 1.0, 0.0])
        side /= np.linalg.norm(side)
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = np.column_stack([side, np.cross(thin, side), thin]), world[np.argmax(world @ thin)]
        plate = [(tc.Box([0.002, 0.002, 0.0005]), tc.Pose.from_matrix(pose))]
        sampled = model.in_collision(q0 + samples[:, None] * (q1 - q0), plate, self_collision=False,
                                     allow_outside_limits=True)
        if not sampled.any():
            found.append((q0, q1, plate))
    return found


def pin_sampled(pin, pmodel, pdata, gmodel, gdata, pq0, pq1, steps=100):
    """Discrete check of one segment: the first colliding sample's index, or -1."""
    for k in range(steps):
        s = k / (steps - 1)
        if pin.computeCollisions(pmodel, pdata, gmodel, gdata, pq0 + s * (pq1 - pq0), True):
            return k
    return -1


def motion_section(args, share, pin, coal):
    name = "panda"
    urdf_name, srdf_name, front = ROBOTS[name]
    urdf, srdf = share / urdf_name, share / srdf_name
    model = robot.load_urdf(urdf, srdf)
    scene = shelf(front)
    rng = np.random.default_rng(7)
    q0, q1 = free_segments(model, scene, args.segments, args.length, rng)
    pmodel, gmodel = pinocchio_setup(pin, coal, urdf, share, model, scene)
    pdata, gdata = pmodel.createData(), gmodel.createData()
    pq0, pq1 = pinocchio_configurations(pin, pmodel, model, q0, urdf), pinocchio_configurations(pin, pmodel, model, q1, urdf)

    batch = model.check_motion(q0, q1, scene)  # warm, and the answers
    sampled = np.array([pin_sampled(pin, pmodel, pdata, gmodel, gdata, pq0[i], pq1[i]) for i in range(len(q0))])

    def touche_singles():
        for i in range(len(q0)):
            model.check_motion(q0[i], q1[i], scene)

    def pin_all():
        for i in range(len(q0)):
            pin_sampled(pin, pmodel, pdata, gmodel, gdata, pq0[i], pq1[i])

    single_time, batch_time, pin_time = interleaved(
        [touche_singles, lambda: model.check_motion(q0, q1, scene), pin_all], args.repeats)
    unit = 1e6 / len(q0)
    hits = batch.in_collision
    print(f"\nmotion segments: {name}, shelf + self-collision, {len(q0)} segments of length {args.length} rad "
          f"(seed 7), median of {args.repeats}")
    print(f"{'workload':<46} {'touche us/seg':>14} {'pin+coal 100-step us/seg':>25} {'ratio':>7}")
    print(f"{'check_motion, one segment per call':<46} {single_time * unit:14.0f} {pin_time * unit:25.0f} "
          f"{single_time / pin_time:7.3f}")
    print(f"{'check_motion, all segments in one call':<46} {batch_time * unit:14.0f} {pin_time * unit:25.0f} "
          f"{batch_time / pin_time:7.3f}")
    print(f"       certified contact on {hits.mean():.1%} of the segments, undecided "
          f"{int(np.count_nonzero(batch.status == 2))}; 100-step sampling found a contact on {np.mean(sampled >= 0):.1%}; "
          f"sampling hit where check_motion says free: {int(np.count_nonzero((sampled >= 0) & ~hits))}; "
          f"check_motion contact where 100-step sampling is free: {int(np.count_nonzero(hits & (sampled < 0)))}")
    for subset, label in ((hits, "colliding"), (~hits, "free")):
        if subset.any():
            print(f"       {label} segments: check_motion iterations median "
                  f"{np.median([model.check_motion(q0[i], q1[i], scene).iterations for i in np.flatnonzero(subset)[:50]]):.0f}")

    if args.grazing <= 0:
        return
    cases = grazing_segments(model, args.grazing, rng)
    touche_misses = pin_misses = 0
    touche_times, pin_times = [], []
    for a, b, plate in cases:
        started = time.perf_counter()
        result = model.check_motion(a, b, plate, self_collision=False)
        touche_times.append(time.perf_counter() - started)
        touche_misses += not result.in_collision
        pm, gm = pinocchio_setup(pin, coal, urdf, share, model, plate)
        gm.removeAllCollisionPairs()
        for geometry in model.geometries:  # the plate only, as touche's check above
            gm.addCollisionPair(pin.CollisionPair(gm.getGeometryId(f"{geometry.link}_{0 if '[' not in geometry.name else int(geometry.name.split('[')[1][:-1])}"),
                                                  gm.getGeometryId("board0")))
        pa, pb = pinocchio_configurations(pin, pm, model, a[None], urdf)[0], pinocchio_configurations(pin, pm, model, b[None], urdf)[0]
        pd, gd = pm.createData(), gm.createData()
        started = time.perf_counter()
        pin_misses += pin_sampled(pin, pm, pd, gm, gd, pa, pb) < 0
        pin_times.append(time.perf_counter() - started)
    print(f"       grazing segments (a link passes through a 2 x 2 x 0.5 mm plate between samples): {len(cases)}; "
          f"missed by check_motion: {touche_misses}; missed by pin+coal 100-step sampling: {pin_misses}; "
          f"median time per segment {np.median(touche_times) * 1e6:.0f} us vs {np.median(pin_times) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
