"""Batch jobs on Dask: touche's verbs over dask arrays, and assembly clearance at scale.

    import dask.array as da
    from distributed import Client
    import touche as tc
    from touche import distributed as td

    client = Client("tcp://scheduler:8786")          # or no client: dask's threads on this machine
    poses = da.from_array(np.load("poses.npy", mmap_mode="r"), chunks=(100_000, 4, 4))
    r = td.distance(mesh, None, tc.Box([1, 1, 1]), poses, client=client)
    r.signed_distance                                 # a dask array (n,)
    answer = r.compute()                              # a touche.DistanceResult, equal bit for bit to
                                                      # tc.distance(mesh, None, box, poses)
    table = td.clearance_all(parts, 0.5, client=client)   # every pair of parts closer than 0.5

Verbs: :func:`intersects`, :func:`distance`, :func:`closest_point`, :func:`raycast`,
:func:`time_of_impact`, :func:`robot_in_collision`, :func:`robot_distances`; each takes the
single-machine verb's arguments where any batch argument may be a dask array chunked along its
first axis (the other arguments are single values, given to every chunk), plus ``client``
(a ``distributed.Client``; None: the default client if one exists, else dask's default
scheduler). Each returns a :class:`ChunkedResult` (or a dask bool array for the booleans):
the single-machine result's fields as dask arrays, and ``compute()`` giving the single-machine
result object itself. Every chunk runs the single-machine verb on its rows, so the answers are
the single-machine answers, bit for bit, whatever the chunks and the scheduler.

How the known traps are avoided:

- shapes go to the workers ONCE PER WORKER: :func:`share` scatters them with ``broadcast=True``
  under a key made from their contents, and every task receives that one in-memory object (a
  mesh carries its BVH, built once on the client, so no worker rebuilds it; a part prepared for
  clearance carries its tree);
- compiled kernels are never pickled: tasks name touche's public functions (pickled by module
  and name), so each worker process loads the kernels from the shared on-disk cache on first
  use; :func:`warm` loads them up front on every worker, and on workers that join later;
- Dask gives the parallelism (one task per worker thread): inside a task touche runs the chunk
  in that thread only (``touche._parallel.serial``), instead of a second pool on the same cores.

Errors: the single-machine verb's, from the public boundary: at graph build for what can be
checked without the data (shapes, pairs, the trailing shape and dtype of a dask array, single
poses), at compute for the values (NaN poses, joint values out of limits), the same exception
class with the chunk's rows added to the message.

Importing this module imports dask (``pip install 'touche[distributed]'``); ``import touche``
does not.
"""
from __future__ import annotations

import hashlib
import math
import os
import pickle
import sys
import time

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as _missing:  # pragma: no cover - the extra is not installed
    raise ImportError("touche.distributed needs dask: pip install 'touche[distributed]' "
                      "(dask[array] and distributed)") from _missing

from . import _parallel
from .errors import GeometryError

try:
    from distributed import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - dask without distributed: the threaded scheduler only
    _WorkerPlugin = object

# Rows per chunk when a batch arrives as a numpy array (a dask array keeps its own chunks). At
# the box-mesh distance cost measured by benchmarks/bench_distributed.py (~4 us a pose) a chunk
# of 100,000 poses computes in ~0.4 s, against a few milliseconds of Dask overhead per task.
DEFAULT_CHUNK_ROWS = 100_000

# The warmup steps (touche._warmup.STEPS names) that :func:`warm` runs on every worker by
# default: the kernels behind the batch verbs, clearance and robots. With a warm on-disk cache
# they load in ~2 s per worker process.
DEFAULT_WARM_STEPS = (
    "distance / intersects: batches",
    "meshes: BVH pairs and rays",
    "closed-form pairs (points, spheres, capsules, boxes)",
    "closest points and rays",
    "time of impact",
    "STL clearance",
    "robots",
)


# ------------------------------------------------------------------------------------------------
# the client, and values shipped once per worker
def _resolve_client(client):
    """``client``, else the default distributed client when one exists, else None (dask's default
    scheduler)."""
    if client is not None:
        return client
    if "distributed" in sys.modules:
        from distributed import default_client

        try:
            return default_client()
        except ValueError:
            return None
    return None


class Shared:
    """A value shipped once to every worker: ``value`` the local object, ``ref`` what the tasks
    receive (a ``distributed.Future`` of the broadcast copy, or the value itself without a
    client)."""

    __slots__ = ("value", "ref")

    def __init__(self, value, ref):
        self.value = value
        self.ref = ref

    def __repr__(self):
        return f"Shared({type(self.value).__name__}, {'scattered' if self.ref is not self.value else 'local'})"


def _build_derived(value):
    """Build what the workers would otherwise build once per task or per process: a mesh's BVH
    (it pickles with the mesh), the BVHs of a robot's mesh geometries."""
    from .shapes import TriangleMesh

    if isinstance(value, TriangleMesh):
        value.bvh  # noqa: B018  (built and kept on the mesh)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _build_derived(item)
    elif hasattr(value, "geometries"):  # a touche.robot.Robot
        for geometry in value.geometries:
            _build_derived(geometry.shape)


def _content_digest(value):
    """A hash of ``value``'s contents: equal contents share one key on the cluster."""
    from .shapes import Shape

    digest = hashlib.sha1()
    if isinstance(value, Shape):
        digest.update(type(value).__name__.encode())
        for array in value._packed[1:]:
            digest.update(np.ascontiguousarray(array).view(np.uint8))
    else:
        digest.update(pickle.dumps(value, protocol=5))
    return digest.hexdigest()


def share(value, client=None):
    """Ship ``value`` (a shape, a ClearancePart, a robot, ...) once to every worker and return
    a :class:`Shared` (pass it to the verbs in place of the value to reuse one copy over many
    calls). Without a client, nothing is shipped. A mesh's BVH is built first, here, so that it
    travels with the mesh."""
    if isinstance(value, Shared):
        return value
    client = _resolve_client(client)
    _build_derived(value)
    if client is None:
        return Shared(value, value)
    key = f"touche-{type(value).__name__}-{_content_digest(value)}"
    future = client.scatter({key: value}, broadcast=True)[key]
    return Shared(value, future)


def _local(value):
    return value.value if isinstance(value, Shared) else value


# ------------------------------------------------------------------------------------------------
# warming the kernels on every worker
def _run_warm_steps(names):
    from . import _warmup

    wanted = [index for index, (name, _) in enumerate(_warmup.STEPS) if name in names]
    unknown = set(names) - {_warmup.STEPS[index][0] for index in wanted}
    if unknown:
        raise ValueError(f"unknown warmup steps: {sorted(unknown)}")
    started = time.perf_counter()
    _warmup.run(jobs=1, progress=False, steps=wanted)
    return time.perf_counter() - started


class WarmKernels(_WorkerPlugin):
    """A Dask worker plugin: on every worker (those there now and those that join or restart
    later) load the kernels of the given warmup steps from the on-disk cache."""

    name = "touche-warm-kernels"

    def __init__(self, steps=DEFAULT_WARM_STEPS):
        self.steps = tuple(steps)

    def setup(self, worker):
        _run_warm_steps(self.steps)


def warm(client=None, steps=DEFAULT_WARM_STEPS):
    """Load the kernels of ``steps`` (names of ``touche._warmup.STEPS``) in every worker process
    of ``client`` now and in every worker that starts later (a worker plugin); without a client,
    in this process. Loading from a warm on-disk cache takes ~2 s per process for the default
    steps; on an empty cache the first worker compiles (minutes) -- run ``touche warmup`` once
    per machine (or shared cache directory) first."""
    client = _resolve_client(client)
    if client is None:
        _run_warm_steps(tuple(steps))
        return
    client.register_plugin(WarmKernels(steps))


# ------------------------------------------------------------------------------------------------
# chunks
def _verb(name):
    """The single-machine function a chunk runs, looked up in the worker by name."""
    import touche

    if name == "robot_in_collision":
        return lambda robot, *args, **kwargs: robot.in_collision(*args, **kwargs)
    if name == "robot_distances":
        return lambda robot, *args, **kwargs: robot.distances(*args, **kwargs)
    return getattr(touche, name)


_MOTION = "__touche_motion__"  # tags a motion to build in the chunk: (tag, class, args, kwargs)


def _build_motions(value):
    if isinstance(value, tuple) and len(value) == 4 and value[0] == _MOTION:
        return value[1](*value[2], **value[3])
    return value


def _pack(result, fields):
    """The records (one per row) of a verb's result: the fields side by side in one array."""
    if fields is None:
        return np.asarray(result)
    columns = [np.asarray(getattr(result, name)) for name, _, _ in fields]
    records = np.empty(len(columns[0]), dtype=[(name, dtype, shape) for name, dtype, shape in fields])
    for (name, _, _), column in zip(fields, columns):
        records[name] = column
    return records


def _run_chunk(verb, fields, rows, args, kwargs):
    """One chunk: the single-machine verb on its rows (in this thread only), packed as records.
    ``rows`` (first, end) name the chunk in an error."""
    args = [_build_motions(value) for value in args]
    kwargs = {key: _build_motions(value) for key, value in kwargs.items()}
    with _parallel.serial():
        try:
            result = _verb(verb)(*args, **kwargs)
        except GeometryError as error:
            raise type(error)(f"{error} (in the chunk of rows {rows[0]} to {rows[1] - 1})") from None
    return _pack(result, fields)


class _Batch:
    """A batch argument: a dask array chunked along its first axis only."""

    __slots__ = ("array", "name")

    def __init__(self, array, name):
        self.array = array
        self.name = name


class _Job:
    """Collects a verb's arguments (batches, shipped shapes, single values), checks them with
    the single-machine verb on an empty batch, and builds the chunked graph."""

    def __init__(self, verb, client, chunk_rows):
        self.verb = verb
        self.client = _resolve_client(client)
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
            raise GeometryError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
        self.chunk_rows = int(chunk_rows)
        self.batches = []

    def batch(self, value, name, trailing, dtype=np.float64):
        """A dask array (or a numpy batch of more than one row) becomes a batch; anything else is
        a single value given to every chunk (the single-machine verb then checks it)."""
        if isinstance(value, da.Array):
            if value.ndim != 1 + len(trailing) or tuple(value.shape[1:]) != tuple(trailing):
                return _WrongShape(value, name, trailing)
            if not (np.issubdtype(value.dtype, np.number) or np.issubdtype(value.dtype, np.bool_)):
                raise GeometryError(f"{name} must be numeric, got a dask array of dtype {value.dtype}")
            if any(math.isnan(c) for c in value.chunks[0]):
                raise GeometryError(f"{name}: the dask array's chunk sizes are unknown (call compute_chunk_sizes())")
            array = value.astype(dtype) if value.dtype != dtype else value
            array = array.rechunk({axis: -1 for axis in range(1, value.ndim)})
        elif isinstance(value, np.ndarray) and value.ndim == 1 + len(trailing) and len(value) > 1 \
                and tuple(value.shape[1:]) == tuple(trailing):
            array = da.from_array(np.asarray(value, dtype=dtype), chunks=(self.chunk_rows,) + tuple(trailing))
        else:
            return value
        marker = _Batch(array, name)
        self.batches.append(marker)
        return marker

    def check(self, function, *args, **kwargs):
        """The single-machine verb on the arguments with every batch emptied: its exceptions for
        wrong pairs, shapes and single values, and its (empty) result for the field layout."""
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, _WrongShape):
                value.raise_like(function, args, kwargs, self)
        return function(*[self._empty(v) for v in args], **{k: self._empty(v) for k, v in kwargs.items()})

    def _empty(self, value):
        if isinstance(value, _Batch):
            return np.zeros((0,) + value.array.shape[1:], dtype=value.array.dtype)
        if isinstance(value, tuple) and len(value) == 4 and value[0] == _MOTION:
            return value[1](*[self._empty(v) for v in value[2]], **{k: self._empty(v) for k, v in value[3].items()})
        return _local(value)

    def length(self):
        """The common batch length (checked), and the chunks: the first batch's."""
        if not self.batches:
            raise GeometryError(f"touche.distributed.{self.verb}: no argument is a batch (give a dask array)")
        first = self.batches[0]
        n = first.array.shape[0]
        for other in self.batches[1:]:
            if other.array.shape[0] != n:
                raise GeometryError(f"batches differ in length: {first.name} has {n}, {other.name} has "
                                    f"{other.array.shape[0]}")
        chunks = first.array.chunks[0]
        for other in self.batches:
            if other.array.chunks[0] != chunks:
                other.array = other.array.rechunk({0: chunks})
        return n, chunks

    def run(self, args, kwargs, fields, out_dtype, row_shape=()):
        """The chunked result: a dask array of records (``fields``) or of ``out_dtype`` rows."""
        n, chunks = self.length()
        args = [self._ship(v) for v in args]
        kwargs = {k: self._ship(v) for k, v in kwargs.items()}
        blocks = {id(b): b.array.to_delayed().reshape(-1) for b in self.batches}
        pieces = []
        first = 0
        for index, rows in enumerate(chunks):
            def pick(value):
                if isinstance(value, _Batch):
                    return blocks[id(value)][index]
                if isinstance(value, tuple) and len(value) == 4 and value[0] == _MOTION:
                    return (_MOTION, value[1], tuple(pick(v) for v in value[2]),
                            {k: pick(v) for k, v in value[3].items()})
                return value
            task = dask.delayed(_run_chunk, pure=True)(
                self.verb, fields, (first, first + rows), tuple(pick(v) for v in args), {k: pick(v) for k, v in kwargs.items()})
            dtype = out_dtype if fields is None else np.dtype([(name, d, s) for name, d, s in fields])
            pieces.append(da.from_delayed(task, shape=(rows,) + tuple(row_shape), dtype=dtype))
            first += rows
        if not pieces:
            dtype = out_dtype if fields is None else np.dtype([(name, d, s) for name, d, s in fields])
            return da.zeros((0,) + tuple(row_shape), dtype=dtype)
        return da.concatenate(pieces, axis=0) if len(pieces) > 1 else pieces[0]

    def _ship(self, value):
        """Large values once per worker (Shared); motions' large parts stay as they are (small)."""
        from .shapes import Shape

        if isinstance(value, Shared):
            return value.ref
        if isinstance(value, _ShippedObstacles):
            return None if value.obstacles is None else share(value.obstacles, self.client).ref
        if isinstance(value, Shape) or hasattr(value, "geometries"):
            return share(value, self.client).ref
        return value


class _WrongShape:
    """A dask array whose trailing shape is not the verb's: the single-machine verb on a numpy
    array of that shape raises the error a user of the single-machine verb would see."""

    def __init__(self, array, name, trailing):
        self.array = array
        self.name = name
        self.trailing = trailing

    def raise_like(self, function, args, kwargs, job):
        sample = np.zeros((1,) + tuple(self.array.shape[1:]))

        def substitute(value):
            return sample if value is self else job._empty(value)

        function(*[substitute(v) for v in args], **{k: substitute(v) for k, v in kwargs.items()})
        raise GeometryError(f"{self.name} must be a dask array of shape (n, {', '.join(map(str, self.trailing))}), "
                            f"got {self.array.shape}")


def _fields(result, names):
    """(name, dtype, row shape) of each field of an (empty) single-machine batch result."""
    fields = []
    for name in names:
        column = np.asarray(getattr(result, name))
        fields.append((name, column.dtype, column.shape[1:]))
    return fields


# ------------------------------------------------------------------------------------------------
# results
class ChunkedResult:
    """The chunked form of a single-machine batch result (``kind``: its class).

    Each field of ``kind`` is a dask array (``r.signed_distance``, ``r.point_a``, ...), taken
    from ``records``, one dask array of records (a numpy structured dtype, one record per row:
    a chunk is computed once however many fields are asked for). Derived properties of
    ``kind`` (``distance``, ``depth``, ``minimum``, ...) are dask arrays too, computed chunk by
    chunk by ``kind``'s own code. ``compute()`` returns the ``kind`` object itself, with numpy
    arrays: the single-machine call's answer."""

    def __init__(self, kind, records, fields, build, client=None, extra=None):
        self.kind = kind
        self.records = records
        self.fields = tuple(name for name, _, _ in fields)
        self._build = build
        self._client = client
        self.extra = extra or {}

    def __getattr__(self, name):
        if name.startswith("_") or name in ("kind", "records", "fields", "extra"):
            raise AttributeError(name)
        if name in self.fields:
            return self.records[name]
        if name in self.extra:
            return self.extra[name]
        if isinstance(getattr(self.kind, name, None), property):
            sample = np.asarray(getattr(self._build(np.zeros(0, dtype=self.records.dtype)), name))
            return self.records.map_blocks(_derived_block, self._build, name, dtype=sample.dtype,
                                           chunks=(self.records.chunks[0],) + sample.shape[1:],
                                           new_axis=list(range(1, sample.ndim)) or None)
        raise AttributeError(f"{type(self).__name__} of {self.kind.__name__} has no field {name!r}")

    def __len__(self):
        return self.records.shape[0]

    def compute(self, **kwargs):
        """The single-machine result object (numpy arrays), computed on ``client`` (the one the
        verb was given or found) or dask's default scheduler."""
        if self._client is not None:
            records = self._client.compute(self.records, **kwargs).result()
        else:
            records = self.records.compute(**kwargs)
        return self._build(records)

    def persist(self):
        """Start computing (on the client) and keep the chunks in the workers' memory."""
        self.records = self._client.persist(self.records) if self._client is not None else self.records.persist()
        return self

    def __repr__(self):
        return (f"ChunkedResult({self.kind.__name__}, {self.records.shape[0]} rows in "
                f"{len(self.records.chunks[0])} chunks, fields {', '.join(self.fields)})")


def _derived_block(records, build, name):
    return np.asarray(getattr(build(records), name))


def _column(records, name):
    return np.ascontiguousarray(records[name])


# ------------------------------------------------------------------------------------------------
# the verbs
def intersects(a, pose_a, b, pose_b, *, client=None, chunk_rows=DEFAULT_CHUNK_ROWS):
    """:func:`touche.intersects` over a batch: ``pose_a`` and / or ``pose_b`` a dask array
    ``(n, 4, 4)`` (or a numpy batch, chunked by ``chunk_rows``); the other a single pose or a
    batch of the same length. Returns a dask bool array ``(n,)``."""
    from .query import intersects as verb

    job = _Job("intersects", client, chunk_rows)
    args = (a, job.batch(pose_a, "pose_a", (4, 4)), b, job.batch(pose_b, "pose_b", (4, 4)))
    job.check(verb, *args)
    return job.run(args, {}, None, np.dtype(np.bool_))


def distance(a, pose_a, b, pose_b, *, client=None, chunk_rows=DEFAULT_CHUNK_ROWS):
    """:func:`touche.distance` over a batch (poses as for :func:`intersects`). Returns a
    :class:`ChunkedResult` of :class:`touche.DistanceResult`: ``signed_distance (n,)``,
    ``point_a``, ``point_b``, ``normal (n, 3)``, ``status (n,)`` int8, and ``distance`` /
    ``depth``."""
    from .query import DistanceResult, distance as verb

    names = ("signed_distance", "point_a", "point_b", "normal", "status")
    job = _Job("distance", client, chunk_rows)
    args = (a, job.batch(pose_a, "pose_a", (4, 4)), b, job.batch(pose_b, "pose_b", (4, 4)))
    fields = _fields(job.check(verb, *args), names)
    records = job.run(args, {}, fields, None)
    return ChunkedResult(DistanceResult, records, fields, _BUILD_DISTANCE, job.client)


def closest_point(shape, pose, points, *, client=None, chunk_rows=DEFAULT_CHUNK_ROWS):
    """:func:`touche.closest_point` over a batch: ``points`` a dask array ``(n, 3)`` and / or
    ``pose`` ``(n, 4, 4)``. Returns a :class:`ChunkedResult` of
    :class:`touche.ClosestPointResult`: ``point (n, 3)``, ``distance (n,)``, ``status (n,)``."""
    from .query import closest_point as verb

    job = _Job("closest_point", client, chunk_rows)
    args = (shape, job.batch(pose, "pose", (4, 4)), job.batch(points, "points", (3,)))
    fields = _fields(job.check(verb, *args), _CLOSEST_NAMES)
    records = job.run(args, {}, fields, None)
    return ChunkedResult(_closest_kind(), records, fields, _BUILD_CLOSEST, job.client)


def raycast(shape, pose, origins, directions, max_t=np.inf, *, solid=True, mode="first", client=None,
            chunk_rows=DEFAULT_CHUNK_ROWS):
    """:func:`touche.raycast` over a batch: ``origins`` / ``directions`` dask arrays ``(n, 3)``,
    ``max_t`` a scalar or ``(n,)``, ``pose`` single or ``(n, 4, 4)``; ``mode`` "first" or "any"
    ("all" gives a ragged answer: use the single-machine verb per chunk). Returns a
    :class:`ChunkedResult` of :class:`touche.RayResult`: ``hit``, ``t``, ``point``, ``normal``,
    ``face``."""
    from .query import raycast as verb

    if mode == "all":
        raise GeometryError("touche.distributed.raycast: mode='all' gives a ragged answer; use mode 'first' or 'any'")
    job = _Job("raycast", client, chunk_rows)
    args = (shape, job.batch(pose, "pose", (4, 4)), job.batch(origins, "origins", (3,)),
            job.batch(directions, "directions", (3,)), job.batch(max_t, "max_t", ()))
    kwargs = {"solid": solid, "mode": mode}
    fields = _fields(job.check(verb, *args, **kwargs), _RAY_NAMES)
    records = job.run(args, kwargs, fields, None)
    return ChunkedResult(_ray_kind(), records, fields, _BUILD_RAY, job.client)


def motion(kind, *args, **kwargs):
    """A batch of motions for :func:`time_of_impact`: ``kind`` a touche motion class
    (``touche.Linear``, ``Screw``, ``Keyframes``, ...) and its arguments, of which any batch
    (velocities ``(n, 3)``, poses ``(n, 4, 4)``, ...) may be a dask array; each chunk builds
    ``kind(*args, **kwargs)`` on its rows."""
    return (_MOTION, kind, args, kwargs)


def time_of_impact(a, motion_a, b, motion_b, t_max, tolerance=None, *, client=None, chunk_rows=DEFAULT_CHUNK_ROWS):
    """:func:`touche.time_of_impact` over a batch of motions: ``motion_a`` / ``motion_b`` a
    touche motion (one, for every row), a pose, a dask array of poses ``(n, 4, 4)`` (static),
    or :func:`motion` ``(touche.Linear, velocities, poses)`` with dask arrays among its
    arguments. Returns a :class:`ChunkedResult` of :class:`touche.ImpactResult`."""
    from .impact import time_of_impact as verb

    job = _Job("time_of_impact", client, chunk_rows)

    def batched(value, name):
        if isinstance(value, tuple) and len(value) == 4 and value[0] == _MOTION:
            trailing = _MOTION_TRAILING.get(value[1].__name__, {})
            positional = tuple(_motion_argument(job, v, f"{name} argument {i}", trailing.get(i))
                               for i, v in enumerate(value[2]))
            named = {k: _motion_argument(job, v, f"{name} {k}", trailing.get(k)) for k, v in value[3].items()}
            return (_MOTION, value[1], positional, named)
        return job.batch(value, name, (4, 4))

    args = (a, batched(motion_a, "motion_a"), b, batched(motion_b, "motion_b"), t_max, tolerance)
    empty = job.check(verb, *args)
    names = tuple(name for name in _IMPACT_NAMES if getattr(empty, name, None) is not None)
    fields = _fields(empty, names)
    records = job.run(args, {}, fields, None)
    return ChunkedResult(_impact_kind(), records, fields, _impact_builder(names), job.client)


# the batch arguments of each motion class (position or keyword -> row shape)
_MOTION_TRAILING = {
    "Static": {0: (4, 4), "pose": (4, 4)},
    "Linear": {0: (3,), "velocity": (3,), 1: (4, 4), "pose": (4, 4)},
    "Screw": {0: (3,), "velocity": (3,), 1: (3,), "angular_velocity": (3,), 2: (4, 4), "pose": (4, 4)},
}


def _motion_argument(job, value, name, trailing):
    if isinstance(value, da.Array):
        if trailing is None:
            trailing = tuple(value.shape[1:])
        return job.batch(value, name, trailing)
    return value


def robot_in_collision(robot, q, obstacles=None, *, self_collision=True, allow_outside_limits=False, client=None,
                       chunk_rows=DEFAULT_CHUNK_ROWS):
    """:meth:`touche.robot.Robot.in_collision` over a dask array of configurations ``q``
    ``(n, dof)``; the robot and the obstacles go to each worker once. Returns a dask bool
    array ``(n,)``."""
    local = _local(robot)
    job = _Job("robot_in_collision", client, chunk_rows)
    batch = job.batch(q, "q", (local.dof,))
    _check_robot(local, batch, obstacles)
    kwargs = {"self_collision": self_collision, "allow_outside_limits": allow_outside_limits}
    return job.run((robot, batch, _ShippedObstacles(obstacles)), kwargs, None, np.dtype(np.bool_))


def robot_distances(robot, q, obstacles=None, *, self_collision=True, gradients=False, allow_outside_limits=False,
                    client=None, chunk_rows=DEFAULT_CHUNK_ROWS):
    """:meth:`touche.robot.Robot.distances` over a dask array of configurations ``q``
    ``(n, dof)``. Returns a :class:`ChunkedResult` of :class:`touche.robot.RobotDistances`
    (``signed_distance (n, P)``, ``point_a`` / ``point_b`` / ``normal (n, P, 3)``,
    ``status (n, P)``, ``gradient (n, P, dof)`` with ``gradients=True``; ``pairs`` the P
    (name, name) pairs; ``distance``, ``minimum``, ``closest_pair``)."""
    from .robot.model import RobotDistances

    local = _local(robot)
    job = _Job("robot_distances", client, chunk_rows)
    batch = job.batch(q, "q", (local.dof,))
    _check_robot(local, batch, obstacles)
    kwargs = {"self_collision": self_collision, "gradients": gradients, "allow_outside_limits": allow_outside_limits}
    # one configuration inside the limits, on the client: the pair names and the row shapes
    sample = np.clip(np.zeros(local.dof), local.lower, local.upper)[None]
    example = local.distances(sample, _local(obstacles) if isinstance(obstacles, Shared) else obstacles,
                              self_collision=self_collision, gradients=gradients)
    names = tuple(name for name in _ROBOT_NAMES if getattr(example, name) is not None)
    fields = [(name, np.asarray(getattr(example, name)).dtype, np.asarray(getattr(example, name)).shape[1:])
              for name in names]
    records = job.run((robot, batch, _ShippedObstacles(obstacles)), kwargs, fields, None)
    build = _robot_builder(example.pairs, names)
    return ChunkedResult(RobotDistances, records, fields, build, job.client, extra={"pairs": example.pairs})


def _check_robot(robot, batch, obstacles):
    from .robot.model import as_obstacles

    if isinstance(batch, _WrongShape):
        robot.configurations(np.zeros((1,) + tuple(batch.array.shape[1:])))
        raise GeometryError(f"q must be a dask array of shape (n, {robot.dof}), got {batch.array.shape}")
    as_obstacles(_local(obstacles))


class _ShippedObstacles:
    """Marks the obstacles argument: shipped once per worker like a shape."""

    def __init__(self, obstacles):
        self.obstacles = obstacles


# ------------------------------------------------------------------------------------------------
# result layouts (records -> the single-machine result object)
_CLOSEST_NAMES = ("point", "distance", "status")
_RAY_NAMES = ("hit", "t", "point", "normal", "face")
_IMPACT_NAMES = ("status", "time", "last_time", "normal", "point", "points", "kind", "count", "triangles")
_ROBOT_NAMES = ("signed_distance", "point_a", "point_b", "normal", "status", "gradient")


def _closest_kind():
    from .query import ClosestPointResult

    return ClosestPointResult


def _ray_kind():
    from .query import RayResult

    return RayResult


def _impact_kind():
    from .impact import ImpactResult

    return ImpactResult


class _Columns:
    """records -> ``kind(**columns)`` for a result class named by ``module:name``; picklable
    (the derived-property blocks carry it to the workers)."""

    def __init__(self, module, name, names, fixed=None):
        self.module = module
        self.name = name
        self.names = tuple(names)
        self.fixed = fixed or {}

    def __call__(self, records):
        import importlib

        kind = getattr(importlib.import_module(self.module), self.name)
        return kind(**self.fixed, **{name: _column(records, name) for name in self.names})


_BUILD_DISTANCE = _Columns("touche.query", "DistanceResult", ("signed_distance", "point_a", "point_b", "normal", "status"))
_BUILD_CLOSEST = _Columns("touche.query", "ClosestPointResult", _CLOSEST_NAMES)
_BUILD_RAY = _Columns("touche.query", "RayResult", _RAY_NAMES)


def _impact_builder(names):
    fixed = {name: None for name in _IMPACT_NAMES if name not in names}
    return _Columns("touche.impact", "ImpactResult", names, fixed)


def _robot_builder(pairs, names):
    fixed = {"pairs": pairs}
    if "gradient" not in names:
        fixed["gradient"] = None
    return _Columns("touche.robot.model", "RobotDistances", names, fixed)
