"""touche.distributed on a local Dask cluster: scaling, overhead per chunk, memory per worker, and
the scheduler's cost per task (the numbers docs/DISTRIBUTED.md's "simulated scale" uses).

    python benchmarks/bench_distributed.py [--poses 10_000_000] [--parts 2000] [--repeats 3]

Prints, each measured ``--repeats`` times (min / median), with the machine's load (``uptime``)
before each section (other processes share the cores: the figures are what this machine gave):

1. distance job: ``--poses`` capsule-box poses (generated chunk by chunk on the workers from a
   seed and kept there before the clock starts, so that the client's network is not what is
   measured; the results stay on the workers, ``persist``) on 1 worker process vs 2 (threads_per_worker=1), wall time and speed-up; the
   compute time of each chunk inside its worker (Dask's task stream) against the wall time per
   chunk (job wall x workers / chunks): the overhead per chunk at the default chunk size; the
   size of one chunk's results and the time to gather it to the client;
2. clearance job: ``--parts`` meshes (uv spheres of ``--part-triangles`` triangles and boxes, seeded placement)
   through ``touche.distributed.clearance_all``, 1 worker vs 2, and its serial single-machine
   reference time (touche.clearance.clearance_all on the same candidate pairs, one thread), and
   a control without Dask: the job's pair tasks (groups prepared on first use) in one plain
   process, then split between two plain processes run at once as two workers split them (what
   the machine's cores give this work, whatever Dask does);
3. memory: each worker's RSS before and after a 100k-triangle mesh is shared, and after a
   20-chunk job on it (each worker should grow by about one mesh, not one per chunk);
4. scheduler: tasks per second for tiny tasks (the per-task cost that bounds how many workers a
   scheduler can keep busy);
5. client traffic and memory (``--sections io``): ``touche batch poses`` on a ``--io-poses`` pose
   file (a 12-triangle box against a 240-triangle sphere, ``--io-sphere-triangles``; chunks of 250,000) run in a fresh
   client process against a fresh scheduler and 2 single-threaded worker processes: the bytes that process writes to the
   scheduler and to the workers and the bytes it receives (distributed's TCP comm), and its peak
   RSS (after the imports, before the chunk files are merged, at the end); ``--io-columns`` also runs
   it with ``--columns`` (the workers write column files in place: no merge).
   ``--code DIR`` runs the command, the scheduler and the workers from another checkout of
   touche (a before / after comparison).
"""
from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import touche as tc  # noqa: E402
from touche.demo import uv_sphere  # noqa: E402

CAPSULE = tc.Capsule(0.2, 0.5)
BOX = tc.Box([0.3, 0.3, 0.3])


def load():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def random_poses_block(block, seed):
    """(rows, 4, 4) poses for the chunk at ``block_info``: translations in [-1.5, 1.5]^3 and a
    rotation about z, from a seed per chunk (made on the worker)."""
    rows = block.shape[0]
    rng = np.random.default_rng(seed + int(block[0]) if rows else seed)
    angle = rng.uniform(-np.pi, np.pi, rows)
    poses = np.zeros((rows, 4, 4))
    poses[:, 0, 0] = poses[:, 1, 1] = np.cos(angle)
    poses[:, 0, 1] = -np.sin(angle)
    poses[:, 1, 0] = np.sin(angle)
    poses[:, 2, 2] = poses[:, 3, 3] = 1.0
    poses[:, :3, 3] = rng.uniform(-1.5, 1.5, (rows, 3))
    return poses


def pose_array(count, chunk_rows, seed=0):
    import dask.array as da

    starts = da.arange(count, chunks=chunk_rows, dtype=np.int64)
    return starts.map_blocks(random_poses_block, seed, dtype=np.float64, new_axis=[1, 2],
                             chunks=(starts.chunks[0], (4,), (4,)))


def cluster(workers):
    from distributed import Client, LocalCluster

    local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(local)  # the default client: distributed.wait needs one
    return local, client


def task_times(client, prefix):
    """Compute seconds of the tasks whose key starts with ``prefix`` (Dask's task stream)."""
    seconds = []
    for record in client.get_task_stream():
        key = record["key"]
        name = key[0] if isinstance(key, tuple) else key
        if not str(name).startswith(prefix):
            continue
        for part in record["startstops"]:
            if part["action"] == "compute":
                seconds.append(part["stop"] - part["start"])
    return seconds


def distance_job(workers, count, chunk_rows):
    from distributed import wait

    from touche import distributed as td

    local, client = cluster(workers)
    try:
        td.warm(client, steps=("distance / intersects: batches",))
        # the poses are made on the workers first and kept there (as a job reading its input
        # from the workers' disks would have it): the timing is the touche job alone
        poses = client.persist(pose_array(count, chunk_rows))
        wait(poses)
        client.get_task_stream()  # starts the scheduler's task-stream recorder (first call)
        started_at = time.time()
        started = time.perf_counter()
        result = td.distance(CAPSULE, poses, BOX, None, client=client)
        records = client.persist(result.records)
        wait(records)
        wall = time.perf_counter() - started
        chunk_seconds = []
        for record in client.get_task_stream(start=started_at):
            key = record["key"]
            if str(key[0] if isinstance(key, tuple) else key).startswith("touche-distance"):
                chunk_seconds.append(sum(p["stop"] - p["start"] for p in record["startstops"] if p["action"] == "compute"))
        first = records.blocks[0]
        started = time.perf_counter()
        one = client.compute(first).result()
        gather = time.perf_counter() - started
        del records, poses
        return {"wall": wall, "chunks": len(result.records.chunks[0]), "chunk_compute": chunk_seconds,
                "result_bytes": one.nbytes, "gather_seconds": gather}
    finally:
        client.close()
        local.close()


def _plain_process(chunk_rows, chunks, out):
    from touche import _parallel

    poses = random_poses_block(np.arange(chunk_rows), 0)
    with _parallel.serial():
        tc.distance(CAPSULE, poses[:10], BOX, None)
        started = time.perf_counter()
        for _ in range(chunks):
            tc.distance(CAPSULE, poses, BOX, None)
    out.put((time.perf_counter() - started) / chunks)


def machine_control(chunk_rows, chunks=10):
    """The same chunks in 1 plain process, then in 2 at once (no Dask): seconds per chunk. What
    two processes get from this machine's cores at the moment, whatever Dask does."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    result = {}
    for processes in (1, 2):
        out = context.Queue()
        workers = [context.Process(target=_plain_process, args=(chunk_rows, chunks, out)) for _ in range(processes)]
        for worker in workers:
            worker.start()
        result[processes] = [out.get() for _ in workers]
        for worker in workers:
            worker.join()
    return result


def plain_chunk_seconds(chunk_rows, repeats=3):
    """The same chunk's verb call in this process, no Dask (one thread)."""
    from touche import _parallel

    poses = random_poses_block(np.arange(chunk_rows), 0)
    with _parallel.serial():
        tc.distance(CAPSULE, poses[:10], BOX, None)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            tc.distance(CAPSULE, poses, BOX, None)
            times.append(time.perf_counter() - started)
    return min(times)


def assembly(count, seed=0, triangles=320):
    """``count`` parts: uv spheres (``triangles`` triangles) and boxes, radius ~0.5, placed in a
    cube so that each part has a few neighbours within 0.2."""
    rng = np.random.default_rng(seed)
    sphere_v, sphere_f = uv_sphere(triangles)
    box_v = np.array([[x, y, z] for x in (-0.4, 0.4) for y in (-0.4, 0.4) for z in (-0.4, 0.4)])
    box_f = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    side = (count * 1.6) ** (1.0 / 3.0)  # ~1.6 volume units per part
    parts, poses = [], []
    for k in range(count):
        scale = rng.uniform(0.35, 0.55)
        parts.append(tc.TriangleMesh(sphere_v * scale, sphere_f) if k % 3 else tc.TriangleMesh(box_v * scale / 0.4, box_f))
        pose = tc.Pose.from_rotvec(rng.normal(size=3), rng.uniform(0, side, 3))
        poses.append(np.asarray(pose.matrix))
    order = np.lexsort(np.array(poses)[:, :3, 3].T[::-1])  # neighbours near each other in the list
    return [parts[k] for k in order], np.array(poses)[order]


def clearance_job(workers, parts, poses, threshold):
    from touche import distributed as td

    local, client = cluster(workers)
    try:
        td.warm(client, steps=("STL clearance",))
        started = time.perf_counter()
        table = td.clearance_all(parts, threshold, poses=poses, client=client)
        return time.perf_counter() - started, table
    finally:
        client.close()
        local.close()


def serial_clearance(parts, poses, threshold):
    """The single-machine reference on one thread: the candidate pairs from the same broad
    phase, touche.clearance.clearance_all on all of them."""
    from touche import _parallel
    from touche import distributed as td
    from touche.clearance import clearance_all, prepare

    started = time.perf_counter()
    with _parallel.serial():
        prepared = [prepare(p) for p in parts]  # as the workers do: each part's tree built once
        boxes = np.concatenate([td._prepare_group(f"bench-{k}", prepared[k:k + 64], poses[k:k + 64], 0.5 * threshold)[0]
                                for k in range(0, len(parts), 64)])
        pairs = td._candidate_pairs(boxes)
        table = clearance_all(prepared, poses, pairs=pairs, max_distance=threshold)
    td._forget_groups([f"bench-{k}" for k in range(0, len(parts), 64)])
    return time.perf_counter() - started, int((table.distance <= threshold).sum()), len(pairs)


def _clearance_share(parts_count, triangles, threshold, share, shares, start, out):
    """In a plain process (no Dask): the clearance job's work that falls to worker ``share`` of
    ``shares`` when the groups are split in contiguous runs (as touche.distributed does): its
    pair tasks (those whose first group is its own), each group prepared once on first use, the
    packed groups unpickled as a worker does. Waits for ``start`` (all processes begin at once)
    and puts its seconds on ``out``."""
    from touche import _parallel
    from touche import distributed as td

    parts, poses = assembly(parts_count, triangles=triangles)
    group = td.DEFAULT_PARTS_PER_GROUP
    groups = -(-len(parts) // group)
    packed = [td._PackedGroup(parts[k * group:(k + 1) * group]) for k in range(groups)]
    boxes = td._grown_boxes(parts, poses, 0.5 * threshold)
    plan = td._plan_from_boxes(boxes, len(parts), threshold, group, td.DEFAULT_PAIRS_PER_TASK)
    mine = [index for index in range(len(plan))
            if plan.task(index)[1][0] * shares // groups == share]
    keys = [f"control-{k}" for k in range(groups)]
    with _parallel.serial():  # load the kernels: not timed
        td._clearance_task([f"warm-{k}" for k in range(groups)], packed, list(range(groups)),
                           [poses[k * group:(k + 1) * group] for k in range(groups)], group, plan.task(0)[0], threshold)
    start.wait()
    started = time.perf_counter()
    for index in mine:
        pairs, needed = plan.task(index)
        td._clearance_task([keys[g] for g in needed], [packed[g] for g in needed], needed,
                           [poses[g * group:(g + 1) * group] for g in needed], group, pairs, threshold)
    out.put(time.perf_counter() - started)


def clearance_control(parts_count, triangles, threshold):
    """The clearance job's work without Dask: all of it in one plain process, then split in two
    processes run at once as two workers would split it. (1 process seconds, [2 processes'
    seconds]): what this machine's cores give this work at the moment, whatever Dask does."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    result = {}
    for processes in (1, 2):
        out, start = context.Queue(), context.Barrier(processes)
        workers = [context.Process(target=_clearance_share,
                                   args=(parts_count, triangles, threshold, share, processes, start, out))
                   for share in range(processes)]
        for worker in workers:
            worker.start()
        result[processes] = [out.get() for _ in workers]
        for worker in workers:
            worker.join()
    return result[1][0], result[2]


def rss_of_workers(client):
    import psutil

    return client.run(lambda: psutil.Process().memory_info().rss)


def memory_job():
    import dask.array as da
    from distributed import wait

    from touche import distributed as td

    local, client = cluster(2)
    try:
        td.warm(client, steps=("distance / intersects: batches", "meshes: BVH pairs and rays"))
        mesh = tc.TriangleMesh(*uv_sphere(100_000))
        mesh.bvh  # noqa: B018
        mesh_bytes = len(pickle.dumps(mesh, protocol=5))
        before = rss_of_workers(client)
        shared = td.share(mesh, client)
        after_share = rss_of_workers(client)
        poses = np.repeat(np.eye(4)[None], 2000, axis=0)
        poses[:, :3, 3] = np.random.default_rng(0).uniform(-1.5, 1.5, (2000, 3))
        result = td.distance(BOX, da.from_array(poses, chunks=(100, 4, 4)), shared, None, client=client)
        records = client.persist(result.records)
        wait(records)
        after_job = rss_of_workers(client)
        del records
        return mesh_bytes, before, after_share, after_job
    finally:
        client.close()
        local.close()


def scheduler_rate(tasks=5000):
    local, client = cluster(2)
    try:
        client.gather(client.map(abs, range(200)))  # connections up
        started = time.perf_counter()
        client.gather(client.map(abs, range(-tasks, 0)))
        return tasks / (time.perf_counter() - started)
    finally:
        client.close()
        local.close()


# The client side of section 5, run as ``python -c IO_CHILD ADDRESS ARGS...`` in a fresh process
# (its peak RSS is the command's), PYTHONPATH naming the touche under test.
IO_CHILD = r"""
import json, sys, time
import distributed.comm.tcp as tcp
sent = {}
write = tcp.TCP.write
async def counting(self, msg, *args, **kwargs):
    nbytes = await write(self, msg, *args, **kwargs)
    sent[self.peer_address] = sent.get(self.peer_address, 0) + nbytes
    return nbytes
tcp.TCP.write = counting
received = [0]
read_bytes = tcp.read_bytes_rw
async def counting_read(stream, nbytes):
    received[0] += nbytes
    return await read_bytes(stream, nbytes)
tcp.read_bytes_rw = counting_read
import touche.cli
from touche.cli import main
import touche.distributed
def peak():
    # VmHWM, not ru_maxrss: ru_maxrss survives exec, so it would count the parent's RSS at fork
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
marks = {"after_imports": peak()}
merge = touche.cli._merge_chunks
def marked_merge(*args, **kwargs):
    marks["before_merge"] = peak()
    return merge(*args, **kwargs)
touche.cli._merge_chunks = marked_merge
address = sys.argv[1]
started = time.perf_counter()
code = main(["batch", *sys.argv[2:], "--scheduler", address])
seconds = time.perf_counter() - started
to_scheduler = sum(n for peer, n in sent.items() if peer == address)
print(json.dumps({"code": code, "seconds": seconds, "to_scheduler": to_scheduler,
                  "to_workers": sum(sent.values()) - to_scheduler, "received": received[0],
                  "peak_rss": peak(), **marks}))
"""


def client_io_job(count, code_dir, folder, columns=False, sphere_triangles=240):
    """Section 5: one ``touche batch poses`` job of ``count`` poses (files in ``folder``) from a
    fresh client process (see IO_CHILD) on a fresh scheduler and 2 single-threaded worker
    processes, all three running the touche of ``code_dir`` (its own folder as the working
    directory: nothing imports this checkout's touche); the child's counters."""
    import json
    import socket

    from distributed import Client

    poses_path, a_path, b_path = (os.path.join(folder, name) for name in ("poses.npy", "a.stl", "b.stl"))
    if not os.path.exists(poses_path):
        rows = pose_array(count, 250_000, seed=3).compute(scheduler="threads")
        np.save(poses_path, rows)
        tc.mesh.save(tc.TriangleMesh(*uv_sphere(sphere_triangles)), b_path)
        low, high = -0.3, 0.3
        vertices = np.array([[x, y, z] for x in (low, high) for y in (low, high) for z in (low, high)])
        faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                 [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
        tc.mesh.save(tc.TriangleMesh(vertices, faces), a_path)
    output = os.path.join(folder, "out-columns" if columns else "out.npz")
    if os.path.isdir(output):
        import shutil

        shutil.rmtree(output)
    elif os.path.exists(output):
        os.remove(output)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(code_dir))
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=str(code_dir))
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--dashboard-address", ":0"], **quiet)
    workers = None
    try:
        workers = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "2",
                                    "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], **quiet)
        with Client(address, timeout="60s") as watcher:
            watcher.wait_for_workers(2, timeout=120)
        run = subprocess.run([sys.executable, "-c", IO_CHILD, address, "poses", poses_path, a_path, b_path, "-o",
                              output] + (["--columns"] if columns else []), capture_output=True, text=True, env=env,
                             cwd=str(code_dir))
        if run.returncode != 0:
            raise RuntimeError(run.stderr)
        figures = json.loads(run.stdout.strip().splitlines()[-1])
        if columns:  # the same digest as the .npz's: the columns by name, in name order
            names = sorted(name[:-4] for name in os.listdir(output) if name.endswith(".npy"))
            figures["digest"] = __import__("hashlib").sha1(b"".join(
                np.ascontiguousarray(np.load(os.path.join(output, name + ".npy"))).tobytes()
                for name in names)).hexdigest()[:16]
            figures.setdefault("before_merge", figures["peak_rss"])  # no merge
        else:
            with np.load(output) as result:
                figures["digest"] = __import__("hashlib").sha1(b"".join(
                    np.ascontiguousarray(result[name]).tobytes() for name in sorted(result.files))).hexdigest()[:16]
        return figures
    finally:
        for process in (workers, scheduler):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()


def summary(values):
    return f"min {min(values):.2f}, median {statistics.median(values):.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=float, default=1e7)
    parser.add_argument("--chunk-rows", type=int, default=None)
    parser.add_argument("--parts", type=int, default=2000)
    parser.add_argument("--part-triangles", type=int, default=320)
    parser.add_argument("--threshold", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sections", default="distance,clearance,memory,scheduler,io")
    parser.add_argument("--io-columns", action="store_true",
                        help="io section: also run the job with --columns (column files written in place, no merge)")
    parser.add_argument("--io-poses", type=float, default=1e6)
    parser.add_argument("--io-sphere-triangles", type=int, default=240,
                        help="section 5's sphere mesh (B) size: a large one shows what the meshes cost the client")
    parser.add_argument("--io-folder", default=None, help="section 5's input files (default: a temporary folder)")
    parser.add_argument("--code", default=str(ROOT), help="section 5: the touche checkout whose command runs")
    args = parser.parse_args()
    from touche import distributed as td

    count = int(args.poses)
    chunk_rows = args.chunk_rows or td.DEFAULT_CHUNK_ROWS
    sections = args.sections.split(",")
    print(f"cores: {len(os.sched_getaffinity(0))}; touche.distributed.DEFAULT_CHUNK_ROWS = {td.DEFAULT_CHUNK_ROWS}")

    if "distance" in sections:
        print(f"\n1. distance, capsule-box, {count:,} poses in chunks of {chunk_rows:,}  [{load()}]")
        print(f"  one chunk's tc.distance in a plain process (no Dask, one thread): "
              f"{plain_chunk_seconds(chunk_rows) * 1e3:.1f} ms")
        walls = {1: [], 2: []}
        for repeat in range(args.repeats):
            control = machine_control(chunk_rows)
            alone, together = control[1][0], max(control[2])
            print(f"  control, no Dask: a chunk takes {alone * 1e3:.1f} ms in one process alone, "
                  f"{', '.join(f'{t * 1e3:.1f}' for t in control[2])} ms in each of two processes at once "
                  f"(the machine gives two processes {2 * alone / together:.2f}x one)  [{load()}]")
            for workers in (1, 2):
                job = distance_job(workers, count, chunk_rows)
                walls[workers].append(job["wall"])
                compute = job["chunk_compute"]
                wall_per_chunk = job["wall"] * workers / job["chunks"]
                mean_compute = statistics.mean(compute)
                print(f"  run {repeat + 1}, {workers} worker(s): {job['wall']:.2f} s wall, "
                      f"{count / job['wall'] / 1e6:.2f} M poses/s; per chunk: compute in the worker "
                      f"{mean_compute * 1e3:.1f} ms (median {statistics.median(compute) * 1e3:.1f}), "
                      f"wall per chunk x workers {wall_per_chunk * 1e3:.1f} ms -> overhead "
                      f"{100 * (wall_per_chunk / mean_compute - 1):.1f} % of compute; one chunk's results "
                      f"{job['result_bytes'] / 1e6:.1f} MB gathered in {job['gather_seconds'] * 1e3:.0f} ms  [{load()}]")
        speedups = [a / b for a, b in zip(walls[1], walls[2])]
        print(f"  1 worker: {summary(walls[1])} s; 2 workers: {summary(walls[2])} s; speed-up per run "
              f"{', '.join(f'{s:.2f}x' for s in speedups)} (min-to-min {min(walls[1]) / min(walls[2]):.2f}x)")

    if "clearance" in sections:
        parts, poses = assembly(args.parts, triangles=args.part_triangles)
        print(f"\n2. clearance, {args.parts} parts (uv spheres of {args.part_triangles} triangles and boxes), threshold "
              f"{args.threshold}  [{load()}]")
        serial_clearance(parts[:50], poses[:50], args.threshold)  # kernels loaded: not timed
        seconds, found, candidates = serial_clearance(parts, poses, args.threshold)
        print(f"  single machine, one thread: {seconds:.2f} s ({candidates} candidate pairs, {found} within the threshold)")
        walls = {1: [], 2: []}
        for repeat in range(args.repeats):
            alone, together = clearance_control(args.parts, args.part_triangles, args.threshold)
            print(f"  control, no Dask: the job's work takes {alone:.2f} s in one process, "
                  f"{', '.join(f'{t:.2f}' for t in together)} s split in two processes at once "
                  f"(the machine gives two processes {alone / max(together):.2f}x one on it)  [{load()}]")
            for workers in (1, 2):
                wall, table = clearance_job(workers, parts, poses, args.threshold)
                walls[workers].append(wall)
                assert len(table) == found
                print(f"  run {repeat + 1}, {workers} worker(s): {wall:.2f} s  [{load()}]")
        speedups = [a / b for a, b in zip(walls[1], walls[2])]
        print(f"  1 worker: {summary(walls[1])} s; 2 workers: {summary(walls[2])} s; speed-up per run "
              f"{', '.join(f'{s:.2f}x' for s in speedups)} (min-to-min {min(walls[1]) / min(walls[2]):.2f}x)")

    if "memory" in sections:
        print(f"\n3. memory per worker  [{load()}]")
        mesh_bytes, before, after_share, after_job = memory_job()
        print(f"  mesh of 100,000 triangles with its BVH: {mesh_bytes / 1e6:.1f} MB pickled")
        for address in before:
            print(f"  worker {address}: RSS {before[address] / 1e6:.0f} MB -> {after_share[address] / 1e6:.0f} MB "
                  f"after sharing the mesh (+{(after_share[address] - before[address]) / 1e6:.0f}) -> "
                  f"{after_job[address] / 1e6:.0f} MB after a 20-chunk job on it "
                  f"(+{(after_job[address] - after_share[address]) / 1e6:.0f})")

    if "scheduler" in sections:
        print(f"\n4. scheduler  [{load()}]")
        rates = [scheduler_rate() for _ in range(args.repeats)]
        print(f"  tiny tasks through a local scheduler and 2 workers: {summary(rates)} tasks/s "
              f"({1e3 / statistics.median(rates):.2f} ms per task)")

    if "io" in sections:
        import tempfile

        count = int(args.io_poses)
        print(f"\n5. client traffic and memory: touche batch poses, {count:,} poses ({count * 128 / 1e6:.0f} MB), "
              f"touche from {args.code}  [{load()}]")
        with tempfile.TemporaryDirectory(dir=args.io_folder) as folder:
            layouts = (False, True) if args.io_columns else (False,)
            for repeat, columns in ((repeat, columns) for repeat in range(args.repeats) for columns in layouts):
                job = client_io_job(count, args.code, folder, columns, args.io_sphere_triangles)
                print(f"  run {repeat + 1}{' --columns' if columns else ''}: {job['seconds']:.1f} s; "
                      f"client -> scheduler {job['to_scheduler'] / 1e6:.2f} MB, "
                      f"client -> workers {job['to_workers'] / 1e6:.2f} MB, received by the client "
                      f"{job['received'] / 1e6:.2f} MB; client peak RSS {job['after_imports'] / 1e6:.0f} MB after the "
                      f"imports, {job['before_merge'] / 1e6:.0f} MB before the final merge, "
                      f"{job['peak_rss'] / 1e6:.0f} MB at the end; results sha1 {job['digest']}  [{load()}]")

if __name__ == "__main__":
    main()
