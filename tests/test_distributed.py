"""touche.distributed and ``touche batch`` (issue 21): every verb over dask arrays gives the
single-machine answer bit for bit (same dtypes), on a local cluster of 2 worker processes and on
dask's threaded scheduler; a worker killed mid-job changes nothing; inputs read and results
written by the workers (from_npy, save_chunks) are the same answers; clearance_all equals a serial
loop over touche.clearance on every pair; an interrupted ``touche batch poses`` or ``touche batch
clearance`` does not redo its finished chunks (pair tasks), and either survives a worker killed
mid-job (for clearance: in the broad phase's group tasks, in its sweep, in a pair task); bad
input raises the single-machine verb's exception.

One cluster for the whole file (module fixture): LocalCluster(n_workers=2, processes=True,
threads_per_worker=1). Inputs are small; the file runs in ~60-100 s on 2 busy cores.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys

import numpy as np
import pytest

import touche as tc
from touche import robot
from touche.demo import uv_sphere

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
td = pytest.importorskip("touche.distributed")

MESH = tc.TriangleMesh(*uv_sphere(200))
SMALL_MESH = tc.TriangleMesh(*uv_sphere(60))
BOX = tc.Box([0.5, 0.6, 0.7])
SPHERE = tc.Sphere(0.4)
CAPSULE = tc.Capsule(0.2, 0.5)
ROWS = 600
CHUNK = 160  # 4 chunks, the last one short


def _poses(count, seed, spread=1.3):
    """Seeded rigid poses: random rotations, translations in [-spread, spread]^3."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    poses = np.repeat(np.eye(4)[None], count, axis=0)
    poses[:, :3, :3] = Rotation.from_rotvec(rng.uniform(-np.pi, np.pi, (count, 3))).as_matrix()
    poses[:, :3, 3] = rng.uniform(-spread, spread, (count, 3))
    return poses


POSES = _poses(ROWS, 1)
POSES_B = _poses(ROWS, 2)


@pytest.fixture(scope="module")
def client():
    import dask

    # the kill tests' workers are restarted by their nannies; on a busy machine a restart (a new
    # process importing touche and loading its kernels) can take longer than the cluster's
    # default 15 s, after which the cluster closes the nanny for good and later tests find one
    # worker
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"}):
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
        # not the default client: the "threads" runs below must see no client (dask's own scheduler)
        with distributed.Client(cluster, set_as_default=False) as connected:
            yield connected
        cluster.close()


@pytest.fixture(params=["cluster", "threads"])
def scheduler(request):
    """The 2-process cluster, or no client (dask's threaded scheduler)."""
    if request.param == "threads":
        return None
    return request.getfixturevalue("client")


def _same(got, expected, names):
    """Every field equal bit for bit (NaN where NaN) with the same dtype."""
    for name in names:
        a, b = np.asarray(getattr(got, name)), np.asarray(getattr(expected, name))
        assert a.dtype == b.dtype, (name, a.dtype, b.dtype)
        assert a.shape == b.shape, (name, a.shape, b.shape)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name


def _compute(array, scheduler):
    """A dask array from a verb given ``scheduler``: computed there (a Future of a shipped shape
    lives on that cluster; without a client, dask's threads)."""
    return scheduler.compute(array).result() if scheduler is not None else array.compute()


def _chunked(array, chunk=CHUNK):
    return da.from_array(array, chunks=(chunk,) + array.shape[1:])


DISTANCE_FIELDS = ("signed_distance", "point_a", "point_b", "normal", "status", "distance", "depth")


@pytest.mark.parametrize("a, b", [(BOX, MESH), (MESH, SMALL_MESH), (BOX, SPHERE), (CAPSULE, BOX)],
                         ids=["box-mesh", "mesh-mesh", "box-sphere", "capsule-box"])
def test_distance_and_intersects_equal_the_single_machine_call(scheduler, a, b):
    expected = tc.distance(a, POSES, b, None)
    result = td.distance(a, _chunked(POSES), b, None, client=scheduler)
    assert isinstance(result.signed_distance, da.Array) and result.point_a.shape == (ROWS, 3)
    _same(result.compute(), expected, DISTANCE_FIELDS)
    statuses = set(np.unique(expected.status).tolist())
    assert len(statuses) >= 2, statuses  # both apart and touching / penetrating rows
    # a derived field computed lazily, chunk by chunk, is the same too
    assert np.array_equal(_compute(result.distance, scheduler), expected.distance)
    # both poses batched (chunked differently: rechunked to match)
    both = td.distance(a, _chunked(POSES), b, _chunked(POSES_B, 250), client=scheduler).compute()
    _same(both, tc.distance(a, POSES, b, POSES_B), DISTANCE_FIELDS)
    hits = td.intersects(a, None, b, _chunked(POSES), client=scheduler)
    reference = tc.intersects(a, None, b, POSES)
    computed = _compute(hits, scheduler)
    assert computed.dtype == reference.dtype and np.array_equal(computed, reference)
    assert 0.02 < reference.mean() < 0.98


def test_points_rays_and_time_of_impact_equal_the_single_machine_call(scheduler):
    rng = np.random.default_rng(7)
    points = rng.uniform(-1.5, 1.5, (ROWS, 3))
    _same(td.closest_point(MESH, None, _chunked(points), client=scheduler).compute(),
          tc.closest_point(MESH, None, points), ("point", "distance", "status"))
    _same(td.closest_point(BOX, _chunked(POSES), _chunked(points, 100), client=scheduler).compute(),
          tc.closest_point(BOX, POSES, points), ("point", "distance", "status"))
    origins = points * 2.0
    directions = -origins + rng.normal(size=(ROWS, 3))  # mostly towards the mesh: hits and misses
    limits = rng.uniform(0.5, 4.0, ROWS)
    expected = tc.raycast(MESH, None, origins, directions, limits)
    got = td.raycast(MESH, None, _chunked(origins), _chunked(directions, 100), _chunked(limits), client=scheduler)
    _same(got.compute(), expected, ("hit", "t", "point", "normal", "face"))
    assert 0.05 < expected.hit.mean() < 0.95
    _same(td.raycast(BOX, None, _chunked(origins), [-1.0, 0.0, 0.0], client=scheduler).compute(),
          tc.raycast(BOX, None, origins, [-1.0, 0.0, 0.0]), ("hit", "t", "point", "normal", "face"))
    velocities = rng.normal(size=(ROWS, 3))
    expected = tc.time_of_impact(BOX, None, SMALL_MESH, tc.Linear(velocities, POSES), 2.0)
    got = td.time_of_impact(BOX, None, SMALL_MESH, td.motion(tc.Linear, _chunked(velocities), _chunked(POSES)), 2.0,
                            client=scheduler).compute()
    names = [name for name in ("status", "time", "last_time", "normal", "point", "points", "kind", "count", "triangles")
             if getattr(expected, name) is not None]
    _same(got, expected, names)
    assert len(set(np.unique(expected.status).tolist())) >= 2


ARM = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.4 0.4 0.1"/></geometry></collision></link>
  <link name="l1"><collision><origin xyz="0 0 0.25"/><geometry><capsule radius="0.05" length="0.4"/></geometry></collision></link>
  <link name="l2"><collision><origin xyz="0.2 0 0"/><geometry><box size="0.4 0.08 0.06"/></geometry></collision></link>
  <link name="l3"><collision><geometry><sphere radius="0.06"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.05"/><axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.45"/><axis xyz="0 1 0"/><limit lower="-3" upper="3"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3"/></joint>
</robot>"""


def test_robot_checks_equal_the_single_machine_call(scheduler):
    model = robot.load_urdf(text=ARM)
    q = np.random.default_rng(3).uniform(-3, 3, (ROWS, model.dof))
    obstacles = [(SMALL_MESH, tc.Pose.from_translation([0.4, 0.0, 0.5]))]
    expected = model.in_collision(q, obstacles)
    got = td.robot_in_collision(model, _chunked(q), obstacles, client=scheduler)
    got = _compute(got, scheduler)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert 0.05 < expected.mean() < 0.95
    expected = model.distances(q, obstacles, gradients=True)
    result = td.robot_distances(model, _chunked(q), obstacles, gradients=True, client=scheduler)
    assert result.pairs == expected.pairs
    _same(result.compute(), expected,
          ("signed_distance", "point_a", "point_b", "normal", "status", "gradient", "distance", "minimum", "closest_pair"))
    assert np.array_equal(_compute(result.minimum, scheduler), expected.minimum)


def test_shapes_travel_once_per_worker_not_per_task(client):
    """The mesh (with its BVH) is scattered to both workers once; the task graph of an 8-chunk
    job refers to it by key and holds no copy of it."""
    mesh = tc.TriangleMesh(*uv_sphere(2000))
    shared = td.share(mesh, client)
    assert mesh._bvh is not None  # built on the client: it travels with the mesh
    holders = client.who_has(shared.ref)[shared.ref.key]
    assert len(holders) == 2
    result = td.distance(BOX, _chunked(POSES, 75), shared, None, client=client)
    graph_bytes = len(pickle.dumps(dict(result.records.__dask_graph__()), protocol=5))
    mesh_bytes = len(pickle.dumps(mesh, protocol=5))
    assert graph_bytes < mesh_bytes / 2, (graph_bytes, mesh_bytes)
    # the workers hold the very object of the key (one per worker), BVH included
    built = client.run(lambda dask_worker: sum(type(v).__name__ == "TriangleMesh" and v._bvh is not None
                                               for v in dask_worker.data.values()))
    assert all(count >= 1 for count in built.values())
    _same(result.compute(), tc.distance(BOX, POSES, mesh, None), DISTANCE_FIELDS)


def _kill_once(block, marker, victim_chunk, block_info=None):
    """Runs before the chunk's query: the first time chunk ``victim_chunk`` runs, its worker
    process dies (os._exit), as on a machine failure; the marker file makes it happen once."""
    if block_info[0]["chunk-location"][0] == victim_chunk and not os.path.exists(marker):
        with open(marker, "w") as handle:
            handle.write(str(os.getpid()))
        os._exit(1)
    return block


def test_a_worker_killed_mid_job_changes_nothing(client, tmp_path):
    # both workers up first: scattered shapes (touche.distributed.share) live on the workers that
    # were there when they were shipped, and cannot be recomputed if those all die
    client.wait_for_workers(2, timeout=240)
    marker = str(tmp_path / "killed")
    poses = _chunked(POSES, 60).map_blocks(_kill_once, marker, 5, dtype=np.float64)
    result = td.distance(MESH, None, SMALL_MESH, poses, client=client).compute()
    with open(marker) as handle:  # the worker did die: its process id
        killed_pid = int(handle.read())
    _same(result, tc.distance(MESH, None, SMALL_MESH, POSES), DISTANCE_FIELDS)
    client.wait_for_workers(2, timeout=240)
    assert killed_pid not in client.run(os.getpid).values()  # its process is gone (the nanny started another)


def _no_writing_here(*args, **kwargs):
    raise AssertionError("a chunk read or written by the client process")


def test_files_are_read_and_written_by_the_workers(client, tmp_path, monkeypatch):
    """from_npy + save_chunks: the task graph holds the file's path, not its poses; each chunk
    is read and written by a worker process (not this one), atomically (no temporary file left);
    the chunks are the single-machine answer bit for bit; only the chunks asked for are
    computed; a pose file changed after the graph was built is refused by the worker."""
    path = tmp_path / "poses.npy"
    np.save(path, POSES)
    poses = td.from_npy(path, CHUNK)
    assert poses.shape == POSES.shape and poses.chunks[0] == (160, 160, 160, 120)
    result = td.distance(MESH, None, SMALL_MESH, poses, client=client)
    graph_bytes = len(pickle.dumps(dict(result.records.__dask_graph__()), protocol=5))
    assert graph_bytes < POSES.nbytes / 10, (graph_bytes, POSES.nbytes)
    folder = tmp_path / "chunks"
    folder.mkdir()
    done = dict(td.save_chunks(result, folder, indices=[3, 1], client=client))
    assert done == {1: 160, 3: 120}
    assert sorted(os.listdir(folder)) == ["chunk-000001.npz", "chunk-000003.npz"]
    done.update(td.save_chunks(result, folder, indices=[0, 2], client=client))
    expected = tc.distance(MESH, None, SMALL_MESH, POSES)
    pieces = [np.load(folder / f"chunk-{k:06d}.npz") for k in range(4)]
    merged = type("Loaded", (), {name: np.concatenate([piece[name] for piece in pieces]) for name in pieces[0].files})
    _same(merged, expected, ("signed_distance", "point_a", "point_b", "normal", "status"))
    # the writers are the worker processes: this process cannot write a chunk file here
    hits = td.intersects(MESH, None, SMALL_MESH, poses, client=client)
    with monkeypatch.context() as patched:
        patched.setattr(td, "_write_atomically", _no_writing_here)
        patched.setattr(td, "_read_rows", _no_writing_here)
        dict(td.save_chunks(hits, folder, template="hits-{:06d}.npz", column="intersects", client=client))
    assert np.array_equal(np.concatenate([np.load(folder / f"hits-{k:06d}.npz")["intersects"] for k in range(4)]),
                          tc.intersects(MESH, None, SMALL_MESH, POSES))
    assert not [name for name in os.listdir(folder) if name.endswith(".tmp")]
    # on dask's threaded scheduler too
    threaded = tmp_path / "threaded"
    threaded.mkdir()
    local = td.distance(MESH, None, SMALL_MESH, td.from_npy(path, 250))
    assert dict(td.save_chunks(local, threaded)) == {0: 250, 1: 250, 2: 100}
    assert np.array_equal(np.load(threaded / "chunk-000002.npz")["signed_distance"], expected.signed_distance[500:])
    # the file changed after the graph was built: refused, not mixed
    np.save(path, POSES_B)
    os.utime(path, ns=(1, 1))
    with pytest.raises(RuntimeError, match="changed after the job was built"):
        dict(td.save_chunks(result, folder, indices=[0], client=client))


def test_columns_are_filled_in_place_by_the_workers(client, tmp_path, monkeypatch):
    """create_columns + save_columns: each worker writes its chunk's rows straight into the
    column files (this process writes nothing), in any order of chunks, then marks the chunk
    done; the columns are the single-machine answer bit for bit, with derived columns."""
    path = tmp_path / "poses.npy"
    np.save(path, POSES)
    result = td.distance(MESH, None, SMALL_MESH, td.from_npy(path, CHUNK), client=client)
    layout = td.column_layout(result)
    assert set(layout) == {"signed_distance", "point_a", "point_b", "normal", "status"}
    layout["distance"] = (np.dtype(np.float64), ())
    folder = tmp_path / "columns"
    td.create_columns(folder, layout, len(POSES))
    assert td.chunks_done(folder, 4) == []
    with monkeypatch.context() as patched:  # the writers are the worker processes
        patched.setattr(td, "_write_atomically", _no_writing_here)
        done = dict(td.save_columns(result, folder, indices=[3, 1], derived=_distance_of, client=client))
    assert done == {1: 160, 3: 120} and td.chunks_done(folder, 4) == [1, 3]
    dict(td.save_columns(result, folder, indices=[0, 2], derived=_distance_of, client=client))
    assert td.chunks_done(folder, 4) == [0, 1, 2, 3]
    expected = tc.distance(MESH, None, SMALL_MESH, POSES)
    loaded = type("Loaded", (), {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in layout})
    _same(loaded, expected, ("signed_distance", "point_a", "point_b", "normal", "status", "distance"))
    hits = td.intersects(MESH, None, SMALL_MESH, td.from_npy(path, CHUNK), client=client)
    assert td.column_layout(hits, "intersects") == {"intersects": (np.dtype(np.bool_), ())}
    td.create_columns(tmp_path / "hits", td.column_layout(hits, "intersects"), len(POSES))
    dict(td.save_columns(hits, tmp_path / "hits", column="intersects", client=client))
    assert np.array_equal(np.load(tmp_path / "hits" / "intersects.npy"), tc.intersects(MESH, None, SMALL_MESH, POSES))
    with pytest.raises(FileNotFoundError, match="create_columns"):
        td.save_columns(result, tmp_path, client=client)


def _no_mesh_reading_here(*args, **kwargs):
    raise AssertionError("this process read a mesh file")


def test_mesh_files_are_read_by_the_workers(scheduler, tmp_path, monkeypatch):
    """mesh_file: the workers read the mesh and build its tree (this process reads neither),
    and the answers are the single-machine call's on the loaded meshes, bit for bit; a
    malformed file is reported before any chunk runs; a file changed after the job was built is
    refused; a missing file or a folder is refused at once."""
    path_a, path_b = tmp_path / "a.stl", tmp_path / "b.stl"
    tc.mesh.save(MESH, path_a)
    tc.mesh.save(SMALL_MESH, path_b)
    loaded_a, loaded_b = tc.mesh.load(path_a), tc.mesh.load(path_b)
    file_a, file_b = td.mesh_file(path_a), td.mesh_file(path_b)
    assert pickle.loads(pickle.dumps(file_a)) == file_a and len(pickle.dumps(file_a)) < 300
    poses = _chunked(POSES)
    with monkeypatch.context() as patched:
        if scheduler is not None:  # worker processes: this one must not read the files
            patched.setattr(tc.mesh, "load", _no_mesh_reading_here)
        result = td.distance(file_a, None, file_b, poses, client=scheduler)
        hits = td.intersects(file_a, poses, loaded_b, None, client=scheduler)
        assert td.read_mesh_files([file_a, file_b], scheduler) == [len(loaded_a.faces), len(loaded_b.faces)]
        got = scheduler.compute(result.records).result() if scheduler is not None else result.records.compute()
        hit = _compute(hits, scheduler)
    expected = tc.distance(loaded_a, None, loaded_b, POSES)
    _same(type("Got", (), {name: got[name] for name in got.dtype.names}), expected,
          ("signed_distance", "point_a", "point_b", "normal", "status"))
    assert np.array_equal(hit, tc.intersects(loaded_a, POSES, loaded_b, None))
    # malformed: reported by the worker that reads it, when the job is made
    broken = tmp_path / "broken.stl"
    broken.write_bytes(b"solid x\nfacet normal 0 0 1\n outer loop\n vertex 0 0\n")
    with pytest.raises(tc.MeshFormatError, match="broken.stl"):
        td.distance(td.mesh_file(broken), None, file_b, poses, client=scheduler)
    # changed after the job was built: refused, not mixed
    changed = tmp_path / "changed.stl"
    tc.mesh.save(SMALL_MESH, changed)
    late = td.intersects(file_a, poses, td.mesh_file(changed), None, client=scheduler)
    tc.mesh.save(MESH, changed)
    os.utime(changed, ns=(1, 1))
    with pytest.raises(RuntimeError, match="changed after the job was built"):
        _compute(late, scheduler)
    with pytest.raises(tc.MeshFormatError, match="missing.stl"):
        td.mesh_file(tmp_path / "missing.stl")
    with pytest.raises(tc.MeshFormatError, match="directory"):
        td.mesh_file(tmp_path)


def _distance_of(columns):
    return {"distance": np.where(columns["status"] == 2, 0.0, np.maximum(columns["signed_distance"], 0.0))}


# ------------------------------------------------------------------------------------------------
# clearance_all
def _box_mesh(low, high):
    (x0, y0, z0), (x1, y1, z1) = low, high
    vertices = np.array([[x, y, z] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)], dtype=np.float64)
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    return tc.TriangleMesh(vertices, faces)


def _assembly(seed=11, count=36):
    """Seeded spheres scattered in a box, plus boxes placed on purpose: two touching face to
    face, two exactly THRESHOLD apart, one a hair beyond it, one far from everything."""
    rng = np.random.default_rng(seed)
    parts, poses = [], []
    for _ in range(count):
        vertices, faces = uv_sphere(int(rng.integers(40, 120)))
        parts.append(tc.TriangleMesh(vertices * rng.uniform(0.3, 0.7), faces))
        pose = np.eye(4)
        pose[:3, 3] = rng.uniform(0.0, 6.0, 3)
        poses.append(pose)
    placed = [_box_mesh((10, 0, 0), (11, 1, 1)), _box_mesh((11, 0, 0), (12, 1, 1)),       # touching
              _box_mesh((20, 0, 0), (21, 1, 1)), _box_mesh((21.25, 0, 0), (22, 1, 1)),    # exactly 0.25
              _box_mesh((30, 0, 0), (31, 1, 1)), _box_mesh((31.25 + 1e-9, 0, 0), (32, 1, 1)),  # just beyond
              _box_mesh((50, 50, 50), (51, 51, 51))]                                       # far
    parts += placed
    poses += [np.eye(4)] * len(placed)
    return parts, np.array(poses)


THRESHOLD = 0.25


def _naive_clearance(parts, poses, threshold):
    """Every pair, one touche.clearance call each: the rows within the threshold."""
    from touche.clearance import clearance

    rows = []
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            r = clearance(parts[i], poses[i], parts[j], poses[j], max_distance=threshold)
            if r.distance <= threshold:
                rows.append((i, j, r.intersecting, r.distance, r.point_a, r.point_b, r.triangle_a, r.triangle_b))
    return rows


def test_clearance_all_equals_a_serial_loop_over_every_pair(scheduler):
    parts, poses = _assembly()
    expected = _naive_clearance(parts, poses, THRESHOLD)
    calls = []
    table = td.clearance_all(parts, THRESHOLD, poses=poses, client=scheduler, parts_per_group=8, pairs_per_task=6,
                             progress=lambda done, total: calls.append((done, total)))
    assert table.dtype == td.CLEARANCE_DTYPE
    assert len(table) == len(expected)
    for row, (i, j, hit, dist, point_a, point_b, tri_a, tri_b) in zip(table, expected):
        assert (row["part_a"], row["part_b"]) == (i, j)
        assert row["intersecting"] == hit and row["distance"] == dist  # bit for bit
        assert np.array_equal(row["point_a"], point_a) and np.array_equal(row["point_b"], point_b)
        assert (row["triangle_a"], row["triangle_b"]) == (tri_a, tri_b)
    count = len(parts) - 7
    pairs = {(int(a), int(b)) for a, b in zip(table["part_a"], table["part_b"])}
    assert (count, count + 1) in pairs and table["intersecting"][list(zip(table["part_a"], table["part_b"])).index(
        (count, count + 1))]
    assert (count + 4, count + 5) not in pairs and not any(count + 6 in p for p in pairs)
    assert 0 < table["intersecting"].sum() < len(table)  # both intersecting and merely close pairs
    assert calls and calls[-1][0] == calls[-1][1]  # progress reached the end


def test_clearance_all_bad_input():
    parts, poses = _assembly(count=4)
    with pytest.raises(tc.GeometryError, match="threshold"):
        td.clearance_all(parts, -1.0, poses=poses)
    with pytest.raises(tc.GeometryError, match="poses"):
        td.clearance_all(parts, 0.1, poses=poses[:3])


# ------------------------------------------------------------------------------------------------
# the command line
def _batch(*args):
    from click.testing import CliRunner

    from touche.cli import cli

    result = CliRunner().invoke(cli, ["batch", *map(str, args)], catch_exceptions=False)
    return result.exit_code, result.output


def test_batch_poses_resumes_without_redoing_finished_chunks(client, tmp_path):
    address = client.scheduler.address
    poses_path = tmp_path / "poses.npy"
    np.save(poses_path, POSES)
    a, b = tc.mesh.save(MESH, tmp_path / "a.stl"), tc.mesh.save(SMALL_MESH, tmp_path / "b.stl")
    output = str(tmp_path / "out.npz")
    common = [poses_path, a, b, "--chunk-rows", 100, "--scheduler", address]
    code, text = _batch("poses", *common, "-o", output, "--max-chunks", 2, "--keep-chunks")
    assert code == 0 and "2 chunks computed, 0 done earlier, 4 left" in text, text
    folder = output + ".chunks"
    first = {name: os.stat(os.path.join(folder, name)).st_mtime_ns for name in os.listdir(folder) if name.startswith("chunk")}
    assert len(first) == 2 and not os.path.exists(output)
    # a temporary file left by a writer killed mid-write (os.replace never came) does not stop the
    # end of a later run from removing the folder
    leftover = os.path.join(output + ".chunks", ".chunk-000005.npz.999.deadbeef.tmp")
    with open(leftover, "wb") as handle:
        handle.write(b"partial")
    code, text = _batch("poses", *common, "-o", output, "--keep-chunks")
    assert code == 0 and "(4 computed, 2 done earlier)" in text, text
    for name, stamp in first.items():  # finished chunks were not rewritten
        assert os.stat(os.path.join(folder, name)).st_mtime_ns == stamp
    whole = str(tmp_path / "whole.npz")
    code, text = _batch("poses", *common, "-o", whole)
    assert code == 0 and "(6 computed, 0 done earlier)" in text and not os.path.exists(whole + ".chunks")
    os.makedirs(whole + ".chunks")
    with open(os.path.join(whole + ".chunks", ".chunk-000001.npz.999.deadbeef.tmp"), "wb") as handle:
        handle.write(b"partial")
    os.remove(whole)
    code, text = _batch("poses", *common, "-o", whole)
    assert code == 0 and not os.path.exists(whole + ".chunks"), text
    resumed, uninterrupted = np.load(output), np.load(whole)
    assert resumed.files == uninterrupted.files
    for name in resumed.files:
        assert np.array_equal(resumed[name], uninterrupted[name])
    _same(type("Loaded", (), {k: resumed[k] for k in resumed.files}),
          tc.distance(tc.mesh.load(a), None, tc.mesh.load(b), POSES),
          ("signed_distance", "point_a", "point_b", "normal", "status", "distance"))
    # another job's chunks are refused, not mixed in
    code, text = _batch("poses", poses_path, a, b, "--chunk-rows", 50, "--scheduler", address, "-o", output)
    assert code == 3 and "another job" in text
    # a malformed mesh file: said at once (a worker read it), and nothing written
    broken = tmp_path / "broken.stl"
    broken.write_bytes(b"solid x\nfacet normal 0 0 1\n")
    fresh = str(tmp_path / "fresh.npz")
    code, text = _batch("poses", poses_path, a, broken, "--scheduler", address, "-o", fresh)
    assert code == 3 and "broken.stl" in text, text
    assert not os.path.exists(fresh) and not os.path.exists(fresh + ".chunks")


def test_batch_poses_columns_equal_the_merged_file_and_resume(client, tmp_path):
    """--columns: OUTPUT is a folder of one .npy per field that the workers fill in place; an
    interrupted job resumes from its chunk markers; the columns equal the .npz of the same job;
    an existing output folder is refused, not overwritten."""
    address = client.scheduler.address
    poses_path = tmp_path / "poses.npy"
    np.save(poses_path, POSES)
    a, b = tc.mesh.save(MESH, tmp_path / "a.stl"), tc.mesh.save(SMALL_MESH, tmp_path / "b.stl")
    common = [poses_path, a, b, "--chunk-rows", 100, "--scheduler", address]
    for verb in ("distance", "intersects"):
        output = str(tmp_path / f"{verb}-columns")
        code, text = _batch("poses", *common, "--verb", verb, "-o", output, "--columns", "--max-chunks", 2)
        assert code == 0 and "2 chunks computed, 0 done earlier, 4 left" in text, text
        assert not os.path.exists(output) and len(os.listdir(os.path.join(output + ".partial", ".done"))) == 2
        code, text = _batch("poses", *common, "--verb", verb, "-o", output, "--columns")
        assert code == 0 and "(4 computed, 2 done earlier)" in text, text
        assert not os.path.exists(output + ".partial")
        merged = str(tmp_path / f"{verb}.npz")
        code, text = _batch("poses", *common, "--verb", verb, "-o", merged)
        assert code == 0, text
        whole = np.load(merged)
        assert sorted(os.listdir(output)) == sorted(f"{name}.npy" for name in whole.files)
        for name in whole.files:
            column = np.load(os.path.join(output, f"{name}.npy"), mmap_mode="r")
            assert column.dtype == whole[name].dtype and np.array_equal(column, whole[name], equal_nan=True), name
        code, text = _batch("poses", *common, "--verb", verb, "-o", output, "--columns")
        assert code == 3 and "exists" in text
    # a chunk layout's folder and a column layout's never mix: another job's folder is refused
    os.makedirs(tmp_path / "mixed.partial")
    with open(tmp_path / "mixed.partial" / "job.json", "w") as handle:
        handle.write('{"verb": "distance"}')
    code, text = _batch("poses", *common, "-o", tmp_path / "mixed", "--columns")
    assert code == 3 and "another job" in text


def test_batch_poses_on_its_own_local_cluster(tmp_path):
    """Without --scheduler, `touche batch` starts a local cluster of its own: same answers, and a
    worker lost on a busy machine has 300 s to come back (distributed's default 15 s closed it
    for good while its replacement was still loading touche's kernels)."""
    import dask

    poses_path = tmp_path / "poses.npy"
    np.save(poses_path, POSES[:300])
    a, b = tc.mesh.save(MESH, tmp_path / "a.stl"), tc.mesh.save(SMALL_MESH, tmp_path / "b.stl")
    output = str(tmp_path / "out.npz")
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "15s"}):
        code, text = _batch("poses", poses_path, a, b, "--chunk-rows", 100, "--workers", 1, "-o", output)
        assert code == 0, text
        assert dask.config.get("distributed.deploy.lost-worker-timeout") == "300s"
    found = np.load(output)
    _same(type("Loaded", (), {k: found[k] for k in found.files}),
          tc.distance(tc.mesh.load(a), None, tc.mesh.load(b), POSES[:300]),
          ("signed_distance", "point_a", "point_b", "normal", "status", "distance"))


def test_batch_poses_survives_a_worker_killed_mid_job(client, tmp_path):
    """A worker process dies after the first chunk is written: Dask runs the chunks it held again
    (each reads its poses from the file), and the results equal the single-machine call."""
    import threading
    import time

    rows = 64_000  # 8 chunks of ~0.2 s each (a mesh against a mesh: ~23 us a pose)
    poses = _poses(rows, 5)
    poses_path = tmp_path / "poses.npy"
    np.save(poses_path, poses)
    big = tc.TriangleMesh(*uv_sphere(2000))
    a, b = tc.mesh.save(big, tmp_path / "a.stl"), tc.mesh.save(MESH, tmp_path / "b.stl")
    output = str(tmp_path / "out.npz")
    killed = []
    pids = client.run(os.getpid)  # this file's cluster: its worker processes, by id

    def kill_after_the_first_chunk():
        folder = output + ".chunks"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if os.path.isdir(folder) and any(name.startswith("chunk") for name in os.listdir(folder)):
                victim = sorted(pids)[0]
                os.kill(pids[victim], signal.SIGKILL)
                killed.append(os.path.exists(output))  # whether the job had already ended
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_after_the_first_chunk)
    killer.start()
    code, text = _batch("poses", poses_path, a, b, "--chunk-rows", 8000, "--scheduler", client.scheduler.address,
                        "-o", output)
    killer.join()
    assert code == 0, text
    assert killed == [False], killed  # killed mid-job
    assert "(8 computed, 0 done earlier)" in text
    result = np.load(output)
    _same(type("Loaded", (), {k: result[k] for k in result.files}),
          tc.distance(tc.mesh.load(a), None, tc.mesh.load(b), poses),
          ("signed_distance", "point_a", "point_b", "normal", "status", "distance"))
    client.wait_for_workers(2, timeout=240)


def test_batch_clearance_writes_the_table(client, tmp_path):
    folder = tmp_path / "parts"
    names, _ = _parts_folder(folder)
    output = tmp_path / "table.csv"
    code, text = _batch("clearance", folder, "--threshold", THRESHOLD, "-o", output, "--scheduler",
                        client.scheduler.address)
    assert code == 0, text
    lines = output.read_text().splitlines()
    loaded = [tc.mesh.load(folder / name) for name in names]
    expected = _naive_clearance(loaded, [np.eye(4)] * len(loaded), THRESHOLD)
    assert len(lines) == 1 + len(expected) and len(expected) > 0
    for line, (i, j, hit, dist, *_rest) in zip(lines[1:], expected):
        fields = line.split(",")
        assert (int(fields[0]), int(fields[1]), fields[2], fields[3]) == (i, j, names[i], names[j])
        assert float(fields[5]) == dist and int(fields[4]) == int(hit)


def test_clearance_results_resume_from_the_plan_and_skip_finished_tasks(scheduler):
    """clearance_results: the plan handed to on_plan, then (index, rows) a task at a time; a
    second run given the plan (no broad phase) and the finished tasks computes only the others,
    and the rows of both runs make clearance_all's table bit for bit."""
    parts, poses = _assembly(seed=3, count=14)
    options = dict(poses=poses, client=scheduler, parts_per_group=4, pairs_per_task=3)
    expected = td.clearance_all(parts, THRESHOLD, **options)
    plans = []
    first = dict(td.clearance_results(parts, THRESHOLD, max_tasks=2, on_plan=plans.append, **options))
    assert len(plans) == 1 and len(first) == 2
    plan = plans[0]
    assert len(plan) >= 4, plan  # enough tasks to stage
    assert sorted(first) == [0, 1]  # the first tasks in plan order
    stored = td.ClearancePlan.load(_saved(plan))  # as the command line stores it
    assert np.array_equal(stored.pairs, plan.pairs) and np.array_equal(stored.offsets, plan.offsets)
    rest = dict(td.clearance_results(parts, THRESHOLD, plan=stored, skip=first, on_plan=plans.append, **options))
    assert len(plans) == 1 and sorted(rest) == list(range(2, len(plan)))  # no second plan, nothing redone
    table = td.clearance_table(list(first.values()) + list(rest.values()))
    assert table.dtype == expected.dtype and table.tobytes() == expected.tobytes()
    # a plan of another job is refused
    with pytest.raises(tc.GeometryError, match="another job"):
        td.clearance_results(parts, THRESHOLD * 2, plan=stored, **options)
    # closing early (break) stops the job and hands nothing more back
    results = td.clearance_results(parts, THRESHOLD, **options)
    next(iter(results))
    results.close()


def _saved(plan):
    import io

    handle = io.BytesIO()
    plan.save(handle)
    handle.seek(0)
    return handle


def _parts_folder(folder, seed=5, count=10):
    """The seeded assembly written as STL files at their world coordinates: (names, paths)."""
    parts, poses = _assembly(seed=seed, count=count)
    folder.mkdir()
    names = []
    for k, (part, pose) in enumerate(zip(parts, poses)):
        names.append(f"part{k:02d}.stl")
        tc.mesh.save((part.vertices @ pose[:3, :3].T + pose[:3, 3], part.faces), folder / names[-1])
    return names, [str(folder / name) for name in names]


def test_batch_clearance_resumes_without_redoing_finished_tasks(client, tmp_path):
    from touche.cli import _clearance_csv

    folder = tmp_path / "parts"
    names, paths = _parts_folder(folder, count=16)
    common = ["--threshold", THRESHOLD, "--parts-per-group", 4, "--pairs-per-task", 2, "--scheduler",
              client.scheduler.address]
    whole = tmp_path / "whole.csv"
    code, text = _batch("clearance", folder, *common, "-o", whole)
    assert code == 0 and ", 0 done earlier)" in text, text
    assert not os.path.exists(str(whole) + ".chunks")  # removed after success
    output = tmp_path / "table.csv"
    chunks = str(output) + ".chunks"
    # a staged run: the plan and 2 pair tasks, then another task
    code, text = _batch("clearance", folder, *common, "-o", output, "--max-chunks", 2)
    assert code == 0 and "2 pair tasks computed, 0 done earlier" in text, text
    tasks = sorted(name for name in os.listdir(chunks) if name.startswith("task-"))
    assert tasks == ["task-000000.npy", "task-000001.npy"] and not output.exists()
    assert {"job.json", "plan.npz"} <= set(os.listdir(chunks))
    plan = td.ClearancePlan.load(os.path.join(chunks, "plan.npz"))
    assert len(plan) >= 5, plan
    code, text = _batch("clearance", folder, *common, "-o", output, "--max-chunks", 1)
    assert code == 0 and f"1 pair tasks computed, 2 done earlier, {len(plan) - 3} left" in text, text
    stamps = {name: os.stat(os.path.join(chunks, name)).st_mtime_ns for name in os.listdir(chunks)}
    # another job's folder is refused: another threshold, another part file, another cutting
    for other in (["--threshold", 0.3], ["--pairs-per-task", 3]):
        code, text = _batch("clearance", folder, *common, *other, "-o", output)
        assert code == 3 and "another job" in text and chunks in text, text
    original = (folder / names[0]).read_bytes()
    tc.mesh.save((tc.mesh.load(paths[0]).vertices + 0.01, tc.mesh.load(paths[0]).faces), paths[0])
    code, text = _batch("clearance", folder, *common, "-o", output)
    assert code == 3 and "another job" in text, text
    (folder / names[0]).write_bytes(original)
    # the rest: finished tasks and the plan are not rewritten
    code, text = _batch("clearance", folder, *common, "-o", output, "--keep-chunks")
    assert code == 0 and f"{len(plan)} pair tasks, {len(plan) - 3} computed, 3 done earlier" in text, text
    for name, stamp in stamps.items():
        assert os.stat(os.path.join(chunks, name)).st_mtime_ns == stamp, name
    assert output.read_bytes() == whole.read_bytes()  # the same bytes as one uninterrupted run
    # all done: the table again without a cluster, and the folder removed
    code, text = _batch("clearance", folder, *common, "-o", output)
    assert code == 0 and f"0 computed, {len(plan)} done earlier" in text and not os.path.exists(chunks), text
    assert output.read_bytes() == whole.read_bytes()
    # and the same table as touche.distributed.clearance_all and touche.clearance_all on the files
    table = td.clearance_all(paths, THRESHOLD, client=client)
    assert _clearance_csv(table, names).encode() == whole.read_bytes()
    single = tc.clearance_all(paths, max_distance=THRESHOLD)
    keep = single.distance <= THRESHOLD
    assert np.array_equal(single.pairs[keep], np.c_[table["part_a"], table["part_b"]])
    for name in ("intersecting", "distance", "point_a", "point_b", "facet_a", "facet_b"):
        assert np.array_equal(getattr(single, name)[keep], table[name]), name


def _die_once(marker, name):
    """In a worker process: the first task to start that runs ``touche.distributed.<name>`` (in
    any worker: the marker file is created atomically) kills its worker process, as on a
    machine failure. Tasks name the function by module and attribute, so the workers run this
    wrapper."""
    import touche.distributed as module

    original = getattr(module, name)
    original = getattr(original, "original", original)

    def dying(*args):
        try:
            handle = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return original(*args)
        os.write(handle, str(os.getpid()).encode())
        os.close(handle)
        os._exit(1)

    dying.original = original
    setattr(module, name, dying)


def _undo_die_once(name):
    import touche.distributed as module

    setattr(module, name, getattr(getattr(module, name), "original", getattr(module, name)))


# the stages of a clearance job: the broad phase's group tasks (read and prepare the parts, their
# boxes) and its sweep (the candidate pairs, the plan), then the pair tasks
STAGES = ("_prepare_group", "_broad_phase", "_clearance_task")


@pytest.mark.parametrize("stage", STAGES)
def test_batch_clearance_survives_a_worker_killed_mid_job(client, tmp_path, stage):
    """A worker process dies when it starts the first task of ``stage``: Dask runs again what
    it held (the parts travel as paths), and the table is the uninterrupted one."""
    from touche.cli import _clearance_csv

    client.wait_for_workers(2, timeout=240)
    folder = tmp_path / "parts"
    names, paths = _parts_folder(folder, count=16)
    marker = str(tmp_path / "killed")
    client.run(_die_once, marker, stage)
    try:
        code, text = _batch("clearance", folder, "--threshold", THRESHOLD, "--parts-per-group", 4,
                            "--pairs-per-task", 2, "--scheduler", client.scheduler.address, "-o", tmp_path / "t.csv")
    finally:
        client.run(_undo_die_once, stage)
    assert code == 0, text
    with open(marker) as handle:  # a worker did die, in that stage: its process id
        killed_pid = int(handle.read())
    client.wait_for_workers(2, timeout=240)
    assert killed_pid not in client.run(os.getpid).values()
    assert "0 done earlier" in text and not os.path.exists(str(tmp_path / "t.csv") + ".chunks")
    table = td.clearance_all(paths, THRESHOLD, client=client, parts_per_group=4, pairs_per_task=2)
    assert (tmp_path / "t.csv").read_bytes() == _clearance_csv(table, names).encode() and len(table) > 0


def test_clearance_all_of_meshes_survives_a_worker_killed_mid_job(client, tmp_path):
    """In-memory meshes: the broad phase runs on the client and the groups are scattered, a group
    to a worker; a worker dying in its first pair task takes the groups only it held, which are
    scattered again, and the table is unchanged."""
    client.wait_for_workers(2, timeout=240)
    parts, poses = _assembly(seed=4, count=14)
    options = dict(poses=poses, parts_per_group=4, pairs_per_task=3)
    expected = td.clearance_all(parts, THRESHOLD, **options)  # dask's threads: no worker to lose
    marker = str(tmp_path / "killed")
    client.run(_die_once, marker, "_clearance_task")
    try:
        table = td.clearance_all(parts, THRESHOLD, client=client, **options)
    finally:
        client.run(_undo_die_once, "_clearance_task")
    with open(marker) as handle:
        killed_pid = int(handle.read())
    client.wait_for_workers(2, timeout=240)
    assert killed_pid not in client.run(os.getpid).values()
    assert table.tobytes() == expected.tobytes() and len(table) > 0


def test_clearance_all_of_meshes_plans_on_the_client(client):
    """In-memory meshes need no broad phase on the workers (no group tasks, no sweep task): the
    client sweeps the parts' boxes, and only pair tasks run; the progress counts those."""
    from distributed import get_task_stream

    client.wait_for_workers(2, timeout=240)
    parts, poses = _assembly(seed=5, count=20)
    for part in parts[::2]:
        part.bvh  # noqa: B018  (trees built on the client travel without them: the same answers)
    calls = []
    with get_task_stream(client) as stream:
        table = td.clearance_all(parts, THRESHOLD, poses=poses, client=client, parts_per_group=4, pairs_per_task=3,
                                 progress=lambda done, total: calls.append((done, total)))
    names = {str(record["key"][0] if isinstance(record["key"], tuple) else record["key"]) for record in stream.data}
    assert names and all(name.startswith("_clearance_task") for name in names), names
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == len(calls) - 1  # one call per pair task, and the start
    assert table.tobytes() == td.clearance_all(parts, THRESHOLD, poses=poses, parts_per_group=4,
                                               pairs_per_task=3).tobytes()


def test_pair_tasks_are_shared_when_one_worker_holds_every_group(client):
    """One group (every task's home is the same worker): the other worker takes tasks from its
    queue instead of idling, and the table is the same."""
    from distributed import get_task_stream

    client.wait_for_workers(2, timeout=240)
    parts, poses = _assembly(seed=6, count=30)
    with get_task_stream(client) as stream:
        table = td.clearance_all(parts, THRESHOLD, poses=poses, client=client, parts_per_group=64, pairs_per_task=1)
    workers = {record["worker"] for record in stream.data
               if str(record["key"][0] if isinstance(record["key"], tuple) else record["key"]).startswith("_clearance")}
    assert len(workers) == 2, workers
    assert len(table) > 5
    assert table.tobytes() == td.clearance_all(parts, THRESHOLD, poses=poses, parts_per_group=64,
                                               pairs_per_task=1).tobytes()


def test_a_packed_group_travels_without_the_meshes_trees():
    """A group of meshes travels as one pickled payload; a mesh whose BVH an earlier query built
    travels without it (the worker builds the same tree), and the caller's mesh keeps its own."""
    parts, _ = _assembly(seed=7, count=6)
    bare = len(td._PackedGroup(parts).payload)
    for part in parts:
        part.bvh  # noqa: B018  (built and kept on the mesh)
    packed = td._PackedGroup(parts)
    assert len(packed.payload) <= bare + 64 * len(parts)
    assert all(part._bvh is not None for part in parts)
    unpacked = pickle.loads(pickle.dumps(packed)).items()
    for mine, theirs in zip(parts, unpacked):
        assert theirs._bvh is None and type(theirs) is type(mine)
        assert np.array_equal(theirs.vertices, mine.vertices) and np.array_equal(theirs.faces, mine.faces)
    assert td._PackedGroup([("a.stl")]).items() == ["a.stl"]


# ------------------------------------------------------------------------------------------------
# bad input: the single-machine verb's exception
def test_wrong_shapes_raise_the_single_machine_error_at_graph_build():
    wrong = da.zeros((10, 3, 4), chunks=5)
    with pytest.raises(tc.GeometryError) as single:
        tc.distance(BOX, np.zeros((1, 3, 4)), SPHERE, None)
    with pytest.raises(tc.GeometryError) as chunked:
        td.distance(BOX, wrong, SPHERE, None)
    assert str(chunked.value) == str(single.value)
    with pytest.raises(tc.GeometryError, match="differ in length"):
        td.distance(BOX, _chunked(POSES), SPHERE, _chunked(POSES[:100]))
    with pytest.raises(tc.GeometryError, match="points"):
        td.closest_point(MESH, None, da.zeros((10, 2), chunks=5))
    with pytest.raises(tc.UnsupportedQuery, match="Plane and Plane"):
        td.time_of_impact(tc.Plane([0, 0, 1], 0.0), _chunked(POSES), tc.Plane([0, 0, 1], 1.0), None, 1.0)
    model = robot.load_urdf(text=ARM)
    with pytest.raises(tc.GeometryError, match="has 3 values"):
        td.robot_in_collision(model, da.zeros((10, 2), chunks=5))


def test_nan_poses_raise_the_single_machine_error_at_compute(scheduler):
    poses = POSES.copy()
    poses[250, 0, 3] = np.nan
    with pytest.raises(tc.GeometryError) as single:
        tc.distance(BOX, poses, MESH, None)
    result = td.distance(BOX, _chunked(poses), MESH, None, client=scheduler)  # builds: values unseen
    with pytest.raises(tc.GeometryError) as chunked:
        result.compute()
    message = str(chunked.value)
    assert str(single.value) in message and "rows 160 to 319" in message


def test_import_touche_does_not_import_dask():
    code = "import sys, touche; touche.distance; assert 'dask' not in sys.modules and 'distributed' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
