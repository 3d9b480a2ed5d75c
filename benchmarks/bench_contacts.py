"""Contact manifolds, box-box: touche.contacts vs pybullet getContactPoints vs coal.collide.

    python benchmarks/bench_contacts.py            # n = 100,000 batch, 2,000 per-call samples
    python benchmarks/bench_contacts.py --quick    # n = 10,000, 500 per-call samples

Inputs (the same for every library): a 1.0 x 0.6 x 0.4 box B fixed at the origin and a
0.5 x 0.8 x 0.3 box A at n poses, half resting on B's top face (yaw random, tilt < 0.5 deg,
penetration 0..0.02) and half random orientations placed near B (mostly touching or
overlapping). Reported: touche batch time per pair (one call for all n), touche single call,
pybullet per call (resetBasePositionAndOrientation + performCollisionDetection +
getContactPoints, DIRECT mode), coal per call (coal.collide with num_max_contacts = 4), and the
ratios touche / peer. Counts of points are printed for a sanity comparison (coal's box-box
returns one contact per call; bullet's box-box detector up to 4).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy.spatial.transform import Rotation

import touche
from touche.contacts import contacts

HALF_A = np.array([0.25, 0.4, 0.15])
HALF_B = np.array([0.5, 0.3, 0.2])


def make_poses(n, rng):
    poses = np.tile(np.eye(4), (n, 1, 1))
    half = n // 2
    yaw = Rotation.from_euler("z", rng.uniform(-np.pi, np.pi, (half, 1)))
    tilt = Rotation.from_rotvec(rng.normal(size=(half, 3)) * np.deg2rad(0.5) / np.sqrt(3))
    poses[:half, :3, :3] = (tilt * yaw).as_matrix()
    poses[:half, 0, 3] = rng.uniform(-0.4, 0.4, half)
    poses[:half, 1, 3] = rng.uniform(-0.25, 0.25, half)
    poses[:half, 2, 3] = HALF_A[2] + HALF_B[2] - rng.uniform(0.0, 0.02, half)
    poses[half:, :3, :3] = Rotation.random(n - half, random_state=rng).as_matrix()
    direction = rng.normal(size=(n - half, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    poses[half:, :3, 3] = direction * rng.uniform(0.2, 0.6, (n - half, 1))
    return poses


def best_of(func, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 10_000 if args.quick else 100_000
    samples = 500 if args.quick else 2_000
    rng = np.random.default_rng(2026)
    poses = make_poses(n, rng)
    subset = poses[np.linspace(0, n - 1, samples).astype(int)]
    box_a = touche.Box(2 * HALF_A)
    box_b = touche.Box(2 * HALF_B)

    contacts(box_a, poses[:2], box_b, None)  # compile / load the kernels
    contacts(box_a, poses[0], box_b, None)
    batch_time = best_of(lambda: contacts(box_a, poses, box_b, None), 5) / n
    result = contacts(box_a, poses, box_b, None)
    singles = [np.ascontiguousarray(p) for p in subset]

    def touche_loop():
        for p in singles:
            contacts(box_a, p, box_b, None)

    single_time = best_of(touche_loop, 5) / samples
    rows = [("touche batch (per pair)", batch_time), ("touche single call", single_time)]
    counts = {"touche": np.bincount(result.count, minlength=5)}

    try:
        import pybullet

        client = pybullet.connect(pybullet.DIRECT)
        sa = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=HALF_A.tolist(), physicsClientId=client)
        sb = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=HALF_B.tolist(), physicsClientId=client)
        body_a = pybullet.createMultiBody(1, sa, physicsClientId=client)
        body_b = pybullet.createMultiBody(0, sb, physicsClientId=client)
        quats = Rotation.from_matrix(subset[:, :3, :3]).as_quat().tolist()
        positions = subset[:, :3, 3].tolist()
        bullet_counts = np.zeros(samples, dtype=int)

        def bullet_loop():
            for i in range(samples):
                pybullet.resetBasePositionAndOrientation(body_a, positions[i], quats[i], physicsClientId=client)
                pybullet.performCollisionDetection(physicsClientId=client)
                bullet_counts[i] = len(pybullet.getContactPoints(body_a, body_b, physicsClientId=client))

        bullet_time = best_of(bullet_loop, 3) / samples
        rows.append(("pybullet getContactPoints (per call)", bullet_time))
        counts["pybullet"] = np.bincount(np.minimum(bullet_counts, 4), minlength=5)
        pybullet.disconnect(client)
    except ImportError:
        bullet_time = None

    try:
        import coal

        geom_a = coal.Box(*(2 * HALF_A))
        geom_b = coal.Box(*(2 * HALF_B))
        tf_b = coal.Transform3s()
        transforms = [coal.Transform3s(np.ascontiguousarray(p[:3, :3]), np.ascontiguousarray(p[:3, 3])) for p in subset]
        request = coal.CollisionRequest()
        request.num_max_contacts = 4
        coal_counts = np.zeros(samples, dtype=int)

        def coal_loop():
            for i in range(samples):
                res = coal.CollisionResult()
                coal.collide(geom_a, transforms[i], geom_b, tf_b, request, res)
                coal_counts[i] = res.numContacts()

        coal_time = best_of(coal_loop, 5) / samples
        rows.append(("coal.collide, 4 contacts max (per call)", coal_time))
        counts["coal"] = np.bincount(np.minimum(coal_counts, 4), minlength=5)
    except ImportError:
        coal_time = None

    print(f"box-box contact manifolds, n = {n:,} batch, {samples:,} per-call samples")
    print(f"{'':42s} {'time':>10s} {'vs bullet':>10s} {'vs coal':>10s}")
    for label, value in rows:
        r_bullet = f"{value / bullet_time:10.3f}" if bullet_time else " " * 10
        r_coal = f"{value / coal_time:10.3f}" if coal_time else " " * 10
        print(f"{label:42s} {value * 1e6:8.2f} us {r_bullet} {r_coal}")
    print("\npoints per pair (0, 1, 2, 3, 4) on the per-call subset (touche: whole batch):")
    for name, hist in counts.items():
        print(f"  {name:9s} {hist.tolist()}")


if __name__ == "__main__":
    main()
