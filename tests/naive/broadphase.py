"""Obviously-correct O(n^2) references for the broad-phase tests, and the seeded scenes."""
import numpy as np


def naive_pairs(boxes, ids=None):
    """All (i, j), i < j (by id), whose closed boxes overlap on all three axes; sorted rows."""
    boxes = np.asarray(boxes, dtype=np.float64)
    n = boxes.shape[0]
    ids = np.arange(n) if ids is None else np.asarray(ids)
    out = []
    for i in range(n):
        lo_ok = (boxes[i, :3] <= boxes[:, 3:]).all(axis=1)
        hi_ok = (boxes[:, :3] <= boxes[i, 3:]).all(axis=1)
        for j in np.flatnonzero(lo_ok & hi_ok):
            if j > i:
                a, b = sorted((int(ids[i]), int(ids[j])))
                out.append((a, b))
    out.sort()
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def naive_query_aabb(boxes, ids, q):
    q = np.asarray(q, dtype=np.float64)
    hit = (boxes[:, :3] <= q[3:]).all(axis=1) & (q[:3] <= boxes[:, 3:]).all(axis=1)
    return np.sort(np.asarray(ids)[hit])


def naive_query_sphere(boxes, ids, center, radius):
    closest = np.clip(center, boxes[:, :3], boxes[:, 3:])
    d2 = ((closest - center) ** 2).sum(axis=1)
    return np.sort(np.asarray(ids)[d2 <= radius * radius])


def naive_query_ray(boxes, ids, origin, direction, max_t):
    """Closed slab test per box, written independently with a per-box Python loop."""
    hits = []
    for box, i in zip(boxes, ids):
        t0, t1 = 0.0, max_t
        ok = True
        for k in range(3):
            if direction[k] == 0.0:
                if origin[k] < box[k] or origin[k] > box[k + 3]:
                    ok = False
                continue
            ta = (box[k] - origin[k]) / direction[k]
            tb = (box[k + 3] - origin[k]) / direction[k]
            t0, t1 = max(t0, min(ta, tb)), min(t1, max(ta, tb))
        if ok and t0 <= t1:
            hits.append(int(i))
    return np.sort(np.array(hits, dtype=np.int64))


def scene(kind, n, rng):
    """Seeded boxes (n, 6) of one of the scene kinds used by the tests and benchmarks."""
    if kind == "uniform":
        size = 0.6 * n ** (-1.0 / 3.0)
        centers = rng.uniform(0, 1, (n, 3))
        half = rng.uniform(0.2, 1.0, (n, 3)) * size / 2
    elif kind == "mixed":  # sizes log-uniform over 1:1000
        centers = rng.uniform(-50, 50, (n, 3))
        half = np.exp(rng.uniform(np.log(0.01), np.log(10.0), (n, 1))) * rng.uniform(0.5, 1.0, (n, 3))
    elif kind == "clustered":
        hubs = rng.uniform(-100, 100, (5, 3))
        centers = hubs[rng.integers(0, 5, n)] + rng.normal(0, 1.0, (n, 3))
        half = rng.uniform(0.05, 0.3, (n, 3))
    elif kind == "identical":
        centers = np.zeros((n, 3)) + 3.0
        half = np.ones((n, 3))
    elif kind == "touching":  # a lattice of unit cubes sharing faces, edges and corners
        side = int(np.ceil(n ** (1 / 3)))
        grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n]
        centers = grid.astype(float) + 0.5
        half = np.full((n, 3), 0.5)
    elif kind == "negative":  # all coordinates negative, around -1e3
        centers = rng.uniform(-1010, -1000, (n, 3))
        half = rng.uniform(0.1, 0.8, (n, 3))
    elif kind == "flat":  # zero-thickness boxes and points on a plane
        centers = rng.uniform(0, 10, (n, 3))
        centers[:, 2] = 0.0
        half = rng.uniform(0.0, 0.6, (n, 3))
        half[:, 2] = 0.0
        half[: n // 4] = 0.0
    else:
        raise ValueError(kind)
    return np.hstack([centers - half, centers + half])


SCENES = ["uniform", "mixed", "clustered", "identical", "touching", "negative", "flat"]


def naive_world_step(objects, dt, time=0.0):
    """Brute-force reference of CollisionWorld.step: every pair (i < j) passing the group/mask
    filter goes to the narrow phase directly (no broad phase, no batching). ``objects``: list of
    dicts with shape, pose (4, 4) (the pose at world time ``time``), velocity (3,) or None,
    motion (a touche motion other than Linear / Static, or None), start (world time at which the
    motion was attached), group, mask. A pair with a moving object goes to time_of_impact over
    [0, dt] with the motions re-based to ``time`` (touche.world.shifted_motion, itself checked
    against pose_at in test_world.py); others to intersects at the current poses. Returns sorted
    (time, i, j) tuples and advances the poses in place, as the world does (Linear: pose += v dt;
    other motions: pose_at(time + dt - start))."""
    import touche
    from touche.motion import Linear, Static
    from touche.world import shifted_motion

    def over_step(o):
        if o["velocity"] is not None:
            return Linear(o["velocity"], o["pose"])
        if o.get("motion") is not None:
            return shifted_motion(o["motion"], time - o["start"])
        return Static(o["pose"])

    found = []
    for i in range(len(objects)):
        for j in range(i + 1, len(objects)):
            a, b = objects[i], objects[j]
            if not (a["group"] & b["mask"] and b["group"] & a["mask"]):
                continue
            moving = a["velocity"] is not None or b["velocity"] is not None or a.get("motion") or b.get("motion")
            if dt > 0 and moving:
                r = touche.time_of_impact(a["shape"], over_step(a), b["shape"], over_step(b), dt)
                if int(r.status) != int(touche.ImpactStatus.MISS):
                    t = 0.0 if int(r.status) == int(touche.ImpactStatus.ALREADY_TOUCHING) else float(r.time)
                    found.append((t, i, j))
            elif touche.intersects(a["shape"], a["pose"], b["shape"], b["pose"]):
                found.append((0.0, i, j))
    if dt > 0:
        for o in objects:
            if o["velocity"] is not None:
                o["pose"] = o["pose"].copy()
                o["pose"][:3, 3] += o["velocity"] * dt
            elif o.get("motion") is not None:
                o["pose"] = np.asarray(o["motion"].pose_at(time + dt - o["start"]), dtype=np.float64)
    return sorted(found)
