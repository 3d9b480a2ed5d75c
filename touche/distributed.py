"""Batch jobs on Dask: touche's verbs over dask arrays, and assembly clearance at scale.

    import dask.array as da
    from distributed import Client
    import touche as tc
    from touche import distributed as td

    client = Client("tcp://scheduler:8786")          # or no client: dask's threads on this machine
    poses = da.from_array(np.load("poses.npy", mmap_mode="r"), chunks=(250_000, 4, 4))
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
  clearance carries its tree); or, for large meshes, :func:`mesh_file` sends only a path, and
  each worker process reads the file and builds the tree once, the client nothing;
- compiled kernels are never pickled: tasks name touche's public functions (pickled by module
  and name), so each worker process loads the kernels from the shared on-disk cache on first
  use; :func:`warm` loads them up front on every worker, and on workers that join later;
- Dask gives the parallelism (one task per worker thread): inside a task touche runs the chunk
  in that thread only (``touche._parallel.serial``), instead of a second pool on the same cores.

Files stay on the workers: :func:`from_npy` makes a dask array of a ``.npy`` file whose chunks
the workers read themselves (each memory-maps the file and copies its rows; the client reads the
header), and :func:`save_chunks` has each worker write the chunks it computed into a folder
(atomically), so that a job over files sends the scheduler its plan, not its data; the workers
must see the same files as the client (a shared filesystem). ``touche batch`` runs that way.

Errors: the single-machine verb's, from the public boundary: at graph build for what can be
checked without the data (shapes, pairs, the trailing shape and dtype of a dask array, single
poses), at compute for the values (NaN poses, joint values out of limits), the same exception
class with the chunk's rows added to the message.

Importing this module imports dask (``pip install 'touche[distributed]'``); ``import touche``
does not.
"""
from __future__ import annotations

import copy
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

# Rows per chunk when a batch arrives as a numpy array (a dask array keeps its own chunks). The
# cheapest pairs cost ~1-2 us a pose (capsule-box distance, benchmarks/bench_distributed.py), and
# Dask costs ~8-12 ms per chunk there (5-7 % of a 100,000-pose chunk): a chunk of 250,000 computes
# in 0.25-0.5 s, so that cost stays under ~3 %; costlier pairs (a box against a 2,000-triangle
# mesh: ~200 us a pose) only make it longer. Inputs and results: 32 MB and 20 MB a chunk.
DEFAULT_CHUNK_ROWS = 250_000

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


# futures of the values shipped lately, per client and content: a value shared again (the same
# mesh for the next job) is not shipped again. The oldest are released past the limit. Keys get a
# random suffix: a released key being forgotten by the scheduler while the same contents are
# scattered again under the same key would lose the new copy.
_SHIPPED = {}
_SHIPPED_LIMIT = 64


def share(value, client=None):
    """Ship ``value`` (a shape, a ClearancePart, a robot, ...) once to every worker and return
    a :class:`Shared` (pass it to the verbs in place of the value). Equal contents shared again
    on the same client reuse the copy already on the workers (the last 64 values shared are
    kept there). Without a client, nothing is shipped. A mesh's BVH is built first, here, so
    that it travels with the mesh."""
    import uuid

    if isinstance(value, Shared):
        return value
    client = _resolve_client(client)
    _build_derived(value)
    if client is None:
        return Shared(value, value)
    digest = _content_digest(value)
    cache_key = (client.id, digest)
    future = _SHIPPED.pop(cache_key, None)
    if future is None or future.status in ("lost", "error", "cancelled") or client.status != "running":
        key = f"touche-{type(value).__name__}-{digest[:16]}-{uuid.uuid4().hex[:8]}"
        future = client.scatter({key: value}, broadcast=True)[key]
    else:
        # scattered data cannot be recomputed: a worker that restarted since the last job has no
        # copy, and if the workers holding one then died the job would fail. Every job starts with
        # a copy on every worker (a no-op when they all have it).
        client.replicate([future])
    _SHIPPED[cache_key] = future  # most recent last
    while len(_SHIPPED) > _SHIPPED_LIMIT:
        _SHIPPED.pop(next(iter(_SHIPPED)))
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


class _Slot:
    """In an argument template: the k-th block ("block") or shipped value ("shipped") of the
    chunk's task."""

    __slots__ = ("kind", "index")

    def __init__(self, kind, index):
        self.kind = kind
        self.index = index

    def __reduce__(self):
        return (_Slot, (self.kind, self.index))

    def __dask_tokenize__(self):
        return ("touche-slot", self.kind, self.index)


def _is_future(value):
    return type(value).__name__ == "Future" and type(value).__module__.startswith("distributed")


def _fill(value, blocks, shipped):
    if isinstance(value, _Slot):
        return blocks[value.index] if value.kind == "block" else shipped[value.index]
    if isinstance(value, MeshFile):
        return _read_mesh_file(value)
    if isinstance(value, tuple) and len(value) == 4 and value[0] == _MOTION:
        return (_MOTION, value[1], tuple(_fill(v, blocks, shipped) for v in value[2]),
                {k: _fill(v, blocks, shipped) for k, v in value[3].items()})
    return value


def _run_blocks(verb, fields, arg_template, kwarg_template, block_count, *values):
    """The task of one chunk (see _Job.run): the blocks (the first: the rows' indices) and the
    shipped values put back into the verb's arguments, then :func:`_run_chunk`."""
    blocks, shipped = values[:block_count], values[block_count:]
    rows = blocks[0]
    first = int(rows[0]) if len(rows) else 0
    args = tuple(_fill(v, blocks, shipped) for v in arg_template)
    kwargs = {k: _fill(v, blocks, shipped) for k, v in kwarg_template.items()}
    return _run_chunk(verb, fields, (first, first + len(rows)), args, kwargs)


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
        # one worker reads each mesh file first: a malformed one raises here, before any chunk
        read_mesh_files([v for v in list(args) + list(kwargs.values()) if isinstance(v, MeshFile)], self.client)
        return function(*[self._empty(v) for v in args], **{k: self._empty(v) for k, v in kwargs.items()})

    def _empty(self, value):
        if isinstance(value, MeshFile):
            return mesh_stand_in()
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

    def run(self, args, kwargs, fields, out_dtype):
        """The chunked result: a dask array (n,) of records (``fields``) or of ``out_dtype``.

        One task per chunk (``dask.array.blockwise``; fused with the blockwise steps that make
        its inputs, e.g. a ``from_array`` or a ``map_blocks``): the batch arrays' blocks, the
        rows' first index (an ``arange`` block, for error messages) and the shipped values'
        futures are its top-level arguments; a template of the verb's arguments says where
        each goes."""
        n, chunks = self.length()
        dtype = np.dtype(out_dtype) if fields is None else np.dtype([(name, d, shape) for name, d, shape in fields])
        arrays = [da.arange(n, chunks=(chunks,), dtype=np.int64)] + [b.array for b in self.batches]
        slot_of_batch = {id(b): k + 1 for k, b in enumerate(self.batches)}
        shipped = []

        def template(value):
            if isinstance(value, _Batch):
                return _Slot("block", slot_of_batch[id(value)])
            if isinstance(value, tuple) and len(value) == 4 and value[0] == _MOTION:
                return (_MOTION, value[1], tuple(template(v) for v in value[2]),
                        {k: template(v) for k, v in value[3].items()})
            value = self._ship(value)
            if _is_future(value):  # a top-level argument: Dask makes it a dependency
                shipped.append(value)
                return _Slot("shipped", len(shipped) - 1)
            return value

        arg_template = tuple(template(v) for v in args)
        kwarg_template = {k: template(v) for k, v in kwargs.items()}
        letters = iter("abcdefghjklmnopqrstuvwxyz")  # every trailing axis its own index ('i': rows)
        array_arguments = []
        for array in arrays:
            array_arguments += [array, "i" + "".join(next(letters) for _ in range(array.ndim - 1))]
        return da.blockwise(
            _run_blocks, "i",
            self.verb, None, fields, None, arg_template, None, kwarg_template, None, len(arrays), None,
            *array_arguments, *[item for future in shipped for item in (future, None)],
            dtype=dtype, concatenate=True, meta=np.empty((0,), dtype=dtype), token=f"touche-{self.verb}",
        )

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
# files read and written by the workers
def _file_stamp(path):
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


def from_npy(path, chunk_rows=DEFAULT_CHUNK_ROWS):
    """The ``.npy`` array at ``path`` as a dask array chunked by ``chunk_rows`` along its first
    axis, each chunk read by the worker that computes it (``np.load(mmap_mode="r")``, its rows
    copied): the client reads the header only, and the task graph holds the path, not the data.
    The workers must see ``path`` (the same absolute path: a shared filesystem); a file changed
    after this call is refused by the worker that reads it (size and modification time)."""
    path = os.path.abspath(os.fspath(path))
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise GeometryError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    header = np.load(path, mmap_mode="r")
    shape, dtype = header.shape, header.dtype
    del header
    if len(shape) < 1:
        raise GeometryError(f"{path}: a batch needs a first axis, got an array of shape {shape}")
    # a read task per chunk that depends on nothing: the scheduler runs the chunk's verb task on
    # the worker that read its rows (where its largest input is), so the rows do not move
    chunks = da.core.normalize_chunks((int(chunk_rows),) + tuple(shape[1:]), shape)
    return da.map_blocks(_read_rows, path, _file_stamp(path), dtype=dtype, chunks=chunks,
                         meta=np.empty((0,) + tuple(shape[1:]), dtype=dtype))


def _check_unchanged(path, stamp):
    """In a worker: ``path`` is there and has the ``stamp`` it had when the job was built."""
    try:
        now = _file_stamp(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: not found on the worker {_where_am_i()} (the workers must see the "
                                "client's files: a shared filesystem)") from None
    if tuple(now) != tuple(stamp):
        raise RuntimeError(f"{path} changed after the job was built (size, modification time {now} against {stamp})")


def _read_rows(path, stamp, block_info=None):
    """In a worker: the rows of the .npy file ``path`` of the block ``block_info`` names."""
    _check_unchanged(path, stamp)
    first, end = block_info[None]["array-location"][0]
    return np.array(np.load(path, mmap_mode="r")[first:end])


class MeshFile:
    """A mesh file the workers read themselves (see :func:`mesh_file`): its absolute ``path``,
    ``stamp`` (size, modification time when the job was made) and the ``tolerance`` it is
    welded with (``touche.mesh.load``)."""

    __slots__ = ("path", "stamp", "tolerance")

    def __init__(self, path, stamp, tolerance=None):
        self.path = path
        self.stamp = tuple(stamp)
        self.tolerance = tolerance

    def __reduce__(self):
        return (MeshFile, (self.path, self.stamp, self.tolerance))

    def __dask_tokenize__(self):
        return ("touche-mesh-file", self.path, self.stamp, self.tolerance)

    def __eq__(self, other):
        return isinstance(other, MeshFile) and (self.path, self.stamp, self.tolerance) == (
            other.path, other.stamp, other.tolerance)

    def __hash__(self):
        return hash((self.path, self.stamp, self.tolerance))

    def __repr__(self):
        return f"MeshFile({self.path!r})"


def mesh_file(path, *, tolerance=None):
    """A mesh file (STL, or a format trimesh reads) that each worker reads and builds its tree
    for, once per worker process, instead of the client: pass it to the verbs in place of a
    mesh (a shape argument of intersects, distance, closest_point, raycast, time_of_impact; not
    inside a robot's obstacle list). The client reads nothing of it (its size and modification time only): neither the
    mesh nor its BVH is built or held here, nor shipped through the network. The workers must
    see ``path`` (the same absolute path: a shared filesystem), and a file changed after this
    call is refused by the worker that reads it. Each verb first has one worker read the file
    (so that a malformed file is reported before the chunks run: ``MeshFormatError``);
    ``tolerance`` is ``touche.mesh.load``'s welding tolerance."""
    path = os.path.abspath(os.fspath(path))
    try:
        stamp = _file_stamp(path)
    except OSError as error:
        from .errors import MeshFormatError

        raise MeshFormatError(f"{path}: {error.strerror or error}") from None
    if os.path.isdir(path):
        from .errors import MeshFormatError

        raise MeshFormatError(f"{path}: is a directory, not a mesh file")
    return MeshFile(path, stamp, tolerance)


# the meshes read by this process from MeshFile references (with their trees), per file and stamp
_MESH_FILES = {}
_MESH_FILES_LIMIT = 16


def _read_mesh_file(reference):
    """In a worker: the mesh of ``reference`` (a MeshFile) with its BVH, read once per process."""
    # checked on every use, a kept copy too: a file changed after the job was built fails the
    # job on every worker alike (one stat per chunk)
    _check_unchanged(reference.path, reference.stamp)
    key = (reference.path, reference.stamp, reference.tolerance)
    mesh = _MESH_FILES.get(key)
    if mesh is not None:
        return mesh
    from .mesh import load

    with _parallel.serial():
        mesh = load(reference.path, tolerance=reference.tolerance)
        mesh.bvh  # noqa: B018  (built and kept on the mesh)
    with _group_lock():
        mesh = _MESH_FILES.setdefault(key, mesh)  # a thread that read it first wins
        while len(_MESH_FILES) > _MESH_FILES_LIMIT:
            _MESH_FILES.pop(next(iter(_MESH_FILES)))
    return mesh


def _check_mesh_file(reference):
    """In a worker: read ``reference`` (kept for the job's chunks); its triangle count."""
    return len(_read_mesh_file(reference).faces)


def read_mesh_files(references, client=None):
    """Have a worker of ``client`` read each of ``references`` (MeshFile) now and return their
    triangle counts: a malformed or unreadable file raises here (``MeshFormatError``,
    ``FileNotFoundError`` on a worker that does not see it), before a job runs. Without a client
    (dask's local scheduler) this process reads them. The verbs do this themselves."""
    references = list(references)
    if not references:
        return []
    client = _resolve_client(client)
    if client is None:
        return [_check_mesh_file(reference) for reference in references]
    return client.gather([client.submit(_check_mesh_file, reference, pure=False) for reference in references])


# a stand-in for a MeshFile in the client's checks (pair supported, the result's fields): every
# mesh file is a TriangleMesh, whose answers have the same layout whatever its triangles
_STAND_IN_MESH = None


def mesh_stand_in():
    """A small TriangleMesh standing for a :class:`MeshFile` where only its kind matters (which
    pairs a verb supports, the fields of its result)."""
    global _STAND_IN_MESH
    if _STAND_IN_MESH is None:
        from .shapes import TriangleMesh

        _STAND_IN_MESH = TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                      [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    return _STAND_IN_MESH


def _write_atomically(path, save):
    """``save(handle)`` into a temporary file beside ``path`` (its name unique to this process and
    call), then renamed over ``path``: a reader sees the whole file or none, and a chunk written
    twice (a task run again after its worker died) is replaced whole by equal bytes."""
    import uuid

    folder, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(temporary, "wb") as handle:
            save(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _save_block(records, folder, template, column, block_id=None):
    """In a worker: chunk ``block_id`` written as ``folder/template.format(index)`` (.npz: one
    member per field of the records, or ``column`` for a plain array); its row count."""
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{folder}: not found on the worker {_where_am_i()} (the workers must see the "
                                "client's files: a shared filesystem)")
    names = records.dtype.names
    columns = {name: np.ascontiguousarray(records[name]) for name in names} if names else {column: records}
    _write_atomically(os.path.join(folder, template.format(block_id[0])), lambda handle: np.savez(handle, **columns))
    return np.array([len(records)], dtype=np.int64)


def save_chunks(result, folder, *, indices=None, template="chunk-{:06d}.npz", column="values", client=None):
    """Compute the chunks ``indices`` (None: all) of ``result`` (a :class:`ChunkedResult` or a
    verb's dask array) and have each worker write the chunks it computed into ``folder`` as
    ``template.format(index)`` (.npz: the result's fields, one member each, or ``column`` for a
    plain array such as :func:`intersects`'), atomically; nothing but the row counts comes back.
    With :func:`from_npy` inputs, no data goes through the client.

    Returns an iterator of ``(index, rows)`` as each chunk is written. A chunk lost with its
    worker is recomputed by Dask (its inputs are files, or shapes on every worker); one whose
    task fails with ``KilledWorker`` or is cancelled is sent again, at most 3 times. ``folder``
    must exist and be seen by the workers at the same path. Closing the iterator early cancels
    the chunks still running (the written ones stay)."""
    records = result.records if isinstance(result, ChunkedResult) else result
    if client is None and isinstance(result, ChunkedResult):
        client = result._client
    client = _resolve_client(client)
    folder = os.path.abspath(os.fspath(folder))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{folder}: no such folder")
    count = records.numblocks[0]
    indices = list(range(count)) if indices is None else [int(index) for index in indices]
    written = records.map_blocks(_save_block, folder, template, column, dtype=np.int64,
                                 chunks=((1,) * count,), meta=np.empty((0,), dtype=np.int64))
    blocks = written.to_delayed().ravel()
    return _saved_chunks(client, blocks, indices)


# Column files (save_columns): one .npy per field for the whole job, filled in place by the
# workers; a chunk's marker in DONE_FOLDER says its rows are written.
DONE_FOLDER = ".done"
DONE_FILE = "chunk-{:06d}"


def column_layout(result, column="values"):
    """``{name: (dtype, trailing shape)}`` of the fields of a verb's result (a
    :class:`ChunkedResult`'s fields, or ``column`` for a plain dask array such as
    :func:`intersects`'), known before anything is computed."""
    records = result.records if isinstance(result, ChunkedResult) else result
    names = records.dtype.names
    if not names:
        return {column: (records.dtype, ())}
    return {name: (records.dtype[name].base, records.dtype[name].shape) for name in names}


def create_columns(folder, layout, count):
    """The column files ``folder/<name>.npy`` of ``layout`` (``{name: (dtype, trailing shape)}``)
    for ``count`` rows, made before :func:`save_columns` fills them (sparse files: the rows take
    disk space as they are written), and the folder of chunk markers."""
    folder = os.fspath(folder)
    os.makedirs(os.path.join(folder, DONE_FOLDER), exist_ok=True)
    for name, (dtype, trailing) in layout.items():
        column = np.lib.format.open_memmap(os.path.join(folder, name + ".npy"), mode="w+", dtype=dtype,
                                           shape=(count,) + tuple(trailing))
        column.flush()
        del column


def _write_block_columns(records, folder, column, offsets, derived, block_id=None):
    """In a worker: chunk ``block_id``'s rows written in place into the column files of
    ``folder`` (rows ``offsets[index]`` onwards), flushed, then its marker; its row count. A
    chunk run twice (a retry after a lost worker) writes the same values again."""
    if not os.path.isdir(os.path.join(folder, DONE_FOLDER)):
        raise FileNotFoundError(f"{folder}: not found on the worker {_where_am_i()} (the workers must see the "
                                "client's files: a shared filesystem)")
    index = block_id[0]
    names = records.dtype.names
    columns = {name: np.ascontiguousarray(records[name]) for name in names} if names else {column: records}
    if derived is not None:
        columns.update(derived(columns))
    first = offsets[index]
    for name, values in columns.items():
        target = np.load(os.path.join(folder, name + ".npy"), mmap_mode="r+")
        if target.shape[1:] != values.shape[1:] or first + len(values) > len(target):
            raise ValueError(f"{name}.npy in {folder} holds {target.shape}, not rows {first}.. of {values.shape}")
        target[first:first + len(values)] = values
        target.flush()  # msync: on disk before the marker says so
        del target
    _write_atomically(os.path.join(folder, DONE_FOLDER, DONE_FILE.format(index)),
                      lambda handle: handle.write(str(len(records)).encode()))
    return np.array([len(records)], dtype=np.int64)


def chunks_done(folder, count):
    """The chunk indices below ``count`` whose rows :func:`save_columns` has written."""
    markers = os.path.join(os.fspath(folder), DONE_FOLDER)
    return [index for index in range(count) if os.path.exists(os.path.join(markers, DONE_FILE.format(index)))]


def save_columns(result, folder, *, indices=None, column="values", derived=None, client=None):
    """Compute the chunks ``indices`` (None: all) of ``result`` and have each worker write its rows
    in place into the column files of ``folder`` (made by :func:`create_columns` from
    :func:`column_layout`, plus the columns ``derived`` adds), then mark the chunk done
    (:func:`chunks_done`). Nothing but row counts comes back and nothing is merged afterwards:
    the column files are the result (each one ``np.load(..., mmap_mode="r")``-able).
    ``derived``: a picklable function of a chunk's ``{name: array}`` returning more columns (for
    example the ``distance`` of a distance job). Retries and the returned iterator as in
    :func:`save_chunks`; ``folder`` must be seen by the workers at the same path."""
    records = result.records if isinstance(result, ChunkedResult) else result
    if client is None and isinstance(result, ChunkedResult):
        client = result._client
    client = _resolve_client(client)
    folder = os.path.abspath(os.fspath(folder))
    if not os.path.isdir(os.path.join(folder, DONE_FOLDER)):
        raise FileNotFoundError(f"{folder}: no column files (touche.distributed.create_columns makes them)")
    count = records.numblocks[0]
    offsets = np.concatenate([[0], np.cumsum(records.chunks[0])]).astype(np.int64).tolist()
    indices = list(range(count)) if indices is None else [int(index) for index in indices]
    written = records.map_blocks(_write_block_columns, folder, column, offsets, derived, dtype=np.int64,
                                 chunks=((1,) * count,), meta=np.empty((0,), dtype=np.int64))
    return _saved_chunks(client, written.to_delayed().ravel(), indices)


def _saved_chunks(client, blocks, indices):
    if client is None:
        for index, rows in _finished_locally({index: blocks[index] for index in indices}):
            yield index, int(rows[0])
        return

    # one graph for all the chunks (one client.compute call, not one per chunk); a chunk sent
    # again after a failure goes alone
    first = dict(zip(indices, client.compute([blocks[index] for index in indices]))) if indices else {}

    def submit(index):
        future = first.pop(index, None)
        return future if future is not None else client.compute(blocks[index])

    for index, rows in _retrying(client, submit, indices, "chunk", lambda index: None):
        yield index, int(rows[0])


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
    return job.run(args, {}, None, np.bool_)


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
    return job.run((robot, batch, _ShippedObstacles(obstacles)), kwargs, None, np.bool_)


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


# ------------------------------------------------------------------------------------------------
# assembly clearance at scale
CLEARANCE_DTYPE = np.dtype([
    ("part_a", np.int64), ("part_b", np.int64), ("intersecting", np.bool_), ("distance", np.float64),
    ("point_a", np.float64, (3,)), ("point_b", np.float64, (3,)), ("triangle_a", np.int64), ("triangle_b", np.int64),
    ("facet_a", np.int64), ("facet_b", np.int64),
])
DEFAULT_PARTS_PER_GROUP = 64
DEFAULT_PAIRS_PER_TASK = 512


def _threshold(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise GeometryError(f"threshold must be a number, got {value!r}") from None
    if not (value >= 0.0 and math.isfinite(value)):
        raise GeometryError(f"threshold must be a finite distance >= 0, got {value!r}")
    return value


def _part_poses(poses, count):
    from .pose import as_matrices

    if poses is None:
        return np.repeat(np.eye(4)[None], count, axis=0)
    if isinstance(poses, (list, tuple)):
        if len(poses) != count:
            raise GeometryError(f"poses has {len(poses)} entries for {count} parts")
        return np.stack([np.asarray(as_matrices(p, f"poses[{i}]")).reshape(4, 4) for i, p in enumerate(poses)])
    matrices = np.asarray(as_matrices(poses, "poses"))
    if matrices.ndim != 3 or len(matrices) != count:
        raise GeometryError(f"poses must be ({count}, 4, 4) for {count} parts, got {matrices.shape}")
    return np.ascontiguousarray(matrices, dtype=np.float64)


# Each worker process prepares a group of parts (reads its files, builds each part's clearance
# tree) once and keeps it here, keyed by the group's key (the key under which the client
# scattered the group): the prepared parts are ~12x the size of the meshes (S3's per-triangle
# data and the tree; 6.2 MB against 0.5 MB for 64 spheres of 320 triangles), so a worker
# prepares a group it needs rather than fetching it prepared from another worker. The oldest
# groups are dropped past _GROUP_CACHE_BYTES; clearance_all forgets its groups when it ends.
_GROUP_CACHE = {}
_GROUP_CACHE_BYTES = 1 << 30
_GROUP_LOCK = None


def _group_lock():
    global _GROUP_LOCK
    if _GROUP_LOCK is None:
        import threading

        _GROUP_LOCK = threading.Lock()
    return _GROUP_LOCK


class _PackedGroup:
    """A group of parts pickled into one bytes object, the form in which a group of meshes
    travels to a worker. Dask serialises a list of meshes element by element (a header and a
    frame per array: 4,000 frames for 2,000 meshes), which made scattering the 24 MB of a
    2,000-part job take 0.7-0.9 s on this machine; as one bytes object per group the same
    scatter takes 0.06-0.15 s (measured in stop 40). The worker unpickles a group only when it
    prepares it."""

    __slots__ = ("payload",)

    def __init__(self, items):
        self.payload = pickle.dumps([_without_tree(item) for item in items], protocol=pickle.HIGHEST_PROTOCOL)

    def items(self):
        return pickle.loads(self.payload)

    def __reduce__(self):
        return _unpickle_packed_group, (self.payload,)


def _without_tree(item):
    """``item``, or for a TriangleMesh that carries its BVH (built by an earlier query; it pickles
    with the mesh) a copy of the mesh without it: the tree is ~18x the mesh's size (9.3
    MB against 0.5 MB for 64 spheres of 320 triangles), and the worker that prepares the part
    builds the same tree again (the build is deterministic) in a fraction of the time the copy
    takes to travel."""
    from .shapes import TriangleMesh

    if isinstance(item, TriangleMesh) and item._bvh is not None:
        item = copy.copy(item)
        object.__setattr__(item, "_bvh", None)
    return item


def _unpickle_packed_group(payload):
    group = _PackedGroup.__new__(_PackedGroup)
    group.payload = payload
    return group


def _prepared_group(key, items):
    """The prepared parts of group ``key`` in this process (prepared on first use); ``items``:
    the group's parts, or a :class:`_PackedGroup` of them."""
    from .clearance import prepare

    entry = _GROUP_CACHE.get(key)
    if entry is not None:
        return entry[0]
    if isinstance(items, _PackedGroup):
        items = items.items()
    with _parallel.serial():
        parts = [prepare(item) for item in items]
    size = sum(p.node_index.nbytes + p.node_bounds.nbytes + p.triangles.nbytes + p.mesh.points.nbytes for p in parts)
    with _group_lock():
        entry = _GROUP_CACHE.setdefault(key, (parts, size))  # a thread that prepared it first wins
        while len(_GROUP_CACHE) > 1 and sum(e[1] for e in _GROUP_CACHE.values()) > _GROUP_CACHE_BYTES:
            _GROUP_CACHE.pop(next(iter(_GROUP_CACHE)))
    return entry[0]


def _forget_groups(keys):
    with _group_lock():
        for key in keys:
            _GROUP_CACHE.pop(key, None)


def _where_am_i():
    """This worker's address (None outside a distributed worker)."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return None


def _prepare_group(key, items, poses, pad):
    """Prepare one group of parts (kept in this worker, see _prepared_group) and return their
    world boxes grown by ``pad`` on every side, and this worker's address."""
    parts = _prepared_group(key, items)
    return _grown_boxes([part.mesh for part in parts], poses, pad), _where_am_i()


def _grown_boxes(meshes, poses, pad):
    """(n, 6) world boxes (low, high) of the meshes at ``poses``, grown by ``pad`` and a relative
    slack: the same arithmetic wherever the broad phase runs (a group task, the client)."""
    boxes = np.empty((len(meshes), 6))
    for row, (mesh, pose) in enumerate(zip(meshes, poses)):
        world = mesh.vertices @ pose[:3, :3].T + pose[:3, 3]
        low, high = world.min(axis=0), world.max(axis=0)
        # the kernels place the vertices with their own arithmetic: a relative margin covers the
        # last bits, so that a pair at exactly the threshold is never culled
        slack = pad + 1e-9 * (1.0 + float(np.abs(world).max()))
        boxes[row, :3] = low - slack
        boxes[row, 3:] = high + slack
    return boxes


def _clearance_task(keys, item_groups, group_ids, group_poses, group_size, pairs, threshold, write_to=None,
                    index=None):
    """The clearance of ``pairs`` (global part indices, rows i < j) whose parts lie in the
    groups ``group_ids`` (their keys, items and poses): the single-machine
    touche.clearance.clearance_all on the parts these pairs use, the rows within the threshold
    kept, in global part indices. With ``write_to`` (a folder), the rows are written there as
    ``task-{index:06d}.npy`` (atomically) and their count returned instead."""
    from .clearance import clearance_all as clearance_pairs

    used = np.unique(pairs)
    local_index = np.searchsorted(used, pairs)
    position = {group_id: k for k, group_id in enumerate(group_ids)}
    parts, poses = [], np.empty((len(used), 4, 4))
    for row, part in enumerate(used):
        k = position[int(part) // group_size]
        parts.append(_prepared_group(keys[k], item_groups[k])[int(part) % group_size])
        poses[row] = group_poses[k][int(part) % group_size]
    with _parallel.serial():
        table = clearance_pairs(parts, poses, pairs=local_index, max_distance=threshold)
    keep = table.distance <= threshold
    rows = np.empty(int(keep.sum()), dtype=CLEARANCE_DTYPE)
    rows["part_a"], rows["part_b"] = pairs[keep, 0], pairs[keep, 1]
    for name in ("intersecting", "distance", "point_a", "point_b", "triangle_a", "triangle_b", "facet_a", "facet_b"):
        rows[name] = getattr(table, name)[keep]
    if write_to is None:
        return rows
    if not os.path.isdir(write_to):
        raise FileNotFoundError(f"{write_to}: not found on the worker {_where_am_i()} (the workers must see the "
                                "client's files: a shared filesystem)")
    _write_atomically(os.path.join(write_to, clearance_task_file(index)), lambda handle: np.save(handle, rows))
    return len(rows)


def clearance_task_file(index):
    """The file name of pair task ``index``'s rows in :func:`clearance_results`' ``write_to``."""
    return f"task-{int(index):06d}.npy"


def _broad_phase(group_results, count, threshold, group_size, pairs_per_task):
    """The broad phase, as a task: the group tasks' grown boxes swept for candidate pairs, cut
    into the job's :class:`ClearancePlan`; with the address of the worker that prepared each
    group."""
    boxes = [box for box, _ in group_results]
    plan = _plan_from_boxes(np.concatenate(boxes) if boxes else np.zeros((0, 6)), count, threshold, group_size,
                            pairs_per_task)
    return plan, [where for _, where in group_results]


def _plan_from_boxes(boxes, count, threshold, group_size, pairs_per_task):
    return _make_plan(_candidate_pairs(boxes), count, threshold, group_size, pairs_per_task)


def _candidate_pairs(boxes):
    """Every pair of parts whose grown boxes overlap (touching counts): (k, 2), i < j, sorted."""
    from .broadphase import SortAndSweep

    if len(boxes) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    sweep = SortAndSweep()
    sweep.rebuild(np.ascontiguousarray(boxes))
    return np.asarray(sweep.pairs(), dtype=np.int64).reshape(-1, 2)


class ClearancePlan:
    """The pair tasks of a clearance job: the candidate pairs of the broad phase over the parts'
    boxes, cut into tasks. The same parts, poses, threshold, ``parts_per_group`` and
    ``pairs_per_task`` always give the same plan, so a job can be resumed from its plan and the
    tasks it finished (``touche batch clearance`` stores both, see :func:`clearance_results`).

    ``pairs``: ``(k, 2)`` int64, every candidate pair (i < j, global part indices) in task
    order; ``offsets``: ``(tasks + 1,)``, task ``t`` holds ``pairs[offsets[t]:offsets[t + 1]]``;
    ``count``, ``threshold``, ``parts_per_group``, ``pairs_per_task``: the job it belongs to.
    ``save(file)`` / ``ClearancePlan.load(file)``: an ``.npz`` file."""

    __slots__ = ("pairs", "offsets", "count", "threshold", "parts_per_group", "pairs_per_task")

    def __init__(self, pairs, offsets, count, threshold, parts_per_group, pairs_per_task):
        self.pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.count = int(count)
        self.threshold = float(threshold)
        self.parts_per_group = int(parts_per_group)
        self.pairs_per_task = int(pairs_per_task)

    def __len__(self):
        return len(self.offsets) - 1

    def __repr__(self):
        return f"ClearancePlan({self.count} parts, {len(self.pairs)} candidate pairs in {len(self)} tasks)"

    def task(self, index):
        """(pairs, groups): task ``index``'s pairs and the groups of parts they use."""
        chunk = self.pairs[self.offsets[index]:self.offsets[index + 1]]
        return chunk, [int(g) for g in np.unique(chunk // self.parts_per_group)]

    def save(self, file):
        np.savez(file, pairs=self.pairs, offsets=self.offsets, threshold=np.float64(self.threshold),
                 settings=np.array([self.count, self.parts_per_group, self.pairs_per_task], dtype=np.int64))

    @classmethod
    def load(cls, file):
        with np.load(file) as stored:
            count, parts_per_group, pairs_per_task = (int(v) for v in stored["settings"])
            return cls(stored["pairs"], stored["offsets"], count, float(stored["threshold"]), parts_per_group,
                       pairs_per_task)

    def _check(self, count, threshold, parts_per_group, pairs_per_task):
        job = (count, threshold, parts_per_group, pairs_per_task)
        mine = (self.count, self.threshold, self.parts_per_group, self.pairs_per_task)
        if job != mine:
            raise GeometryError(f"the plan is of another job: (parts, threshold, parts_per_group, pairs_per_task) "
                                f"{mine} against {job}")


def _make_plan(pairs, count, threshold, group_size, pairs_per_task):
    """The pairs cut into tasks: grouped by the group of their first part, then of their second,
    at most ``pairs_per_task`` a task."""
    group_a, group_b = pairs[:, 0] // group_size, pairs[:, 1] // group_size
    order = np.lexsort((pairs[:, 1], pairs[:, 0], group_b, group_a))
    pairs = pairs[order]
    group_a = group_a[order]
    offsets = [0]
    starts = np.flatnonzero(np.r_[True, group_a[1:] != group_a[:-1]]) if len(pairs) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(pairs)]
    for start, end in zip(starts, ends):
        offsets += [min(end, first + pairs_per_task) for first in range(start, end, pairs_per_task)]
    return ClearancePlan(pairs, offsets, count, threshold, group_size, pairs_per_task)


def _pair_tasks(pairs, group_size, pairs_per_task):
    """The pairs cut into tasks, each ``(pairs, groups it needs)`` (see :class:`ClearancePlan`)."""
    plan = _make_plan(pairs, 0, 0.0, group_size, pairs_per_task)
    return [plan.task(index) for index in range(len(plan))]


_TASK_ATTEMPTS = 3  # a task lost with its worker (or its scattered inputs) is sent again, at most this many times


def clearance_table(pieces):
    """The rows of clearance tasks (arrays of :data:`CLEARANCE_DTYPE`, in any order) as one table
    sorted by (part_a, part_b): what :func:`clearance_all` returns."""
    pieces = list(pieces)
    table = np.concatenate(pieces) if pieces else np.zeros(0, dtype=CLEARANCE_DTYPE)
    return table[np.lexsort((table["part_b"], table["part_a"]))]


def clearance_all(parts, threshold, *, poses=None, client=None, parts_per_group=DEFAULT_PARTS_PER_GROUP,
                  pairs_per_task=DEFAULT_PAIRS_PER_TASK, progress=None):
    """Every pair of ``parts`` whose surfaces come within ``threshold`` of each other, on the
    workers of ``client`` (None: the default client if one exists, else dask's default
    scheduler on this machine).

    ``parts``: a list of N parts, each a ``TriangleMesh``, a ``ClearancePart``, ``(vertices,
    faces)`` or a mesh file path (read by the worker that prepares it: on a cluster the path
    must be readable there); ``poses``: None (all at the identity), ``(N, 4, 4)`` or a list of
    N poses; ``threshold``: a finite distance >= 0 (0 finds the parts that touch or
    intersect).

    Method: the parts are cut into groups of ``parts_per_group`` (in the given order: list
    neighbouring parts next to each other for fewer groups per task); each group travels once
    to the workers, as given (paths: small; meshes pickled together as one payload, without the
    trees earlier queries built on them), and each worker that needs a group prepares it once
    (reads the files, builds the trees) and keeps it for the whole job (a per-process cache
    keyed by the group's key; prepared parts are ~12x the meshes' size, so they are never
    shipped). The broad phase grows the parts' world boxes by ``threshold / 2``, sweeps them
    (touche.broadphase.SortAndSweep) for the candidate pairs and cuts those into tasks of at
    most ``pairs_per_task`` pairs grouped by the group of each member (a
    :class:`ClearancePlan`). When every part is in memory it runs on the client (a pass over
    the vertices); when some are files it is a task graph (a task per group prepares it and
    computes its boxes, one task sweeps them and sends the plan back). Each pair task belongs
    to the worker that holds the group of its first member; the tasks are sent a few per worker
    at a time, and a worker whose own tasks are all sent takes another's that needs the fewest
    groups it does not hold (so no worker idles while another has a queue). Each task runs
    ``touche.clearance.clearance_all`` on its pairs with ``max_distance=threshold``: the same
    numbers as ``touche.clearance(a, pose_a, b, pose_b, max_distance=threshold)`` on each
    pair, bit for bit. A task lost with a worker that died is sent again (its parts scattered
    again if they were lost too).

    ``progress``: None or ``progress(done, total)``, called as tasks finish (the group tasks
    and the pair tasks).

    Returns a numpy structured array of dtype :data:`CLEARANCE_DTYPE`, one row per pair within
    the threshold, sorted by (part_a, part_b): ``part_a < part_b`` (indices into ``parts``),
    ``intersecting``, ``distance``, ``point_a`` / ``point_b`` (world), ``triangle_a`` /
    ``triangle_b`` and ``facet_a`` / ``facet_b`` (the faces in the files' numbering), as in
    :class:`touche.clearance.ClearanceTable`.

    To resume an interrupted job, or hand each task's rows back as it finishes, use
    :func:`clearance_results` (this function is ``clearance_table`` of its rows).

    Errors: ``GeometryError`` for a bad threshold, poses, or part; ``MeshFormatError`` for a
    file that cannot be read (raised by the worker that reads it)."""
    results = clearance_results(parts, threshold, poses=poses, client=client, parts_per_group=parts_per_group,
                                pairs_per_task=pairs_per_task, progress=progress)
    return clearance_table(rows for _, rows in results)


def clearance_results(parts, threshold, *, poses=None, client=None, parts_per_group=DEFAULT_PARTS_PER_GROUP,
                      pairs_per_task=DEFAULT_PAIRS_PER_TASK, plan=None, skip=(), max_tasks=None, on_plan=None,
                      progress=None, write_to=None):
    """:func:`clearance_all` a task at a time, for jobs that are resumed: an iterator of
    ``(task index, rows)`` (rows: :data:`CLEARANCE_DTYPE`, unsorted) handed back as each pair
    task of the job's :class:`ClearancePlan` finishes; :func:`clearance_table` of all the
    tasks' rows is :func:`clearance_all`'s table, bit for bit.

    ``plan``: None (the broad phase makes it; then ``on_plan(plan)`` is called once, before any
    pair task runs: store it) or the plan stored by an earlier run of the same job (the same
    parts, poses, threshold, parts_per_group and pairs_per_task; the broad phase is skipped and
    each worker prepares the groups its tasks use). ``skip``: indices of the tasks finished
    earlier (not run again). ``max_tasks``: run at most this many of the others (the first in
    plan order; None: all), then stop. ``write_to``: None, or a folder (seen by the workers at
    the same path) where each pair task writes its rows itself, as
    ``clearance_task_file(index)`` (atomically), handing back ``(index, row count)``: the rows
    never go through the client. The other arguments are :func:`clearance_all`'s; they are
    checked now, the work starts when the iterator is first advanced. Closing the iterator
    early (``break``) cancels the tasks still running."""
    threshold = _threshold(threshold)
    parts = list(parts)
    count = len(parts)
    matrices = _part_poses(poses, count)
    for name, value in (("parts_per_group", parts_per_group), ("pairs_per_task", pairs_per_task)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise GeometryError(f"{name} must be an integer >= 1, got {value!r}")
    if max_tasks is not None and (isinstance(max_tasks, bool) or not isinstance(max_tasks, (int, np.integer))
                                  or max_tasks < 0):
        raise GeometryError(f"max_tasks must be None or an integer >= 0, got {max_tasks!r}")
    if plan is not None:
        if not isinstance(plan, ClearancePlan):
            raise GeometryError(f"plan must be a ClearancePlan, got {type(plan).__name__}")
        plan._check(count, threshold, int(parts_per_group), int(pairs_per_task))
    if write_to is not None:
        write_to = os.path.abspath(os.fspath(write_to))
        if not os.path.isdir(write_to):
            raise FileNotFoundError(f"{write_to}: no such folder")
    job = _ClearanceJob(parts, matrices, threshold, int(parts_per_group), int(pairs_per_task),
                        {int(index) for index in skip}, max_tasks, on_plan, progress, write_to)
    client = _resolve_client(client)
    return job.distributed(client, plan) if client is not None else job.local(plan)


class _Stopped(Exception):
    """Raised in dask's local scheduler to stop a clearance job whose results are no longer wanted."""


class _ClearanceJob:
    """One run of :func:`clearance_results`: the groups of parts, and the two ways to run them
    (dask's local scheduler, a distributed client). Both run the broad phase as a task graph:
    one task per group (prepare its parts, their grown boxes), then one task that sweeps the
    boxes and makes the plan."""

    def __init__(self, parts, matrices, threshold, group_size, pairs_per_task, skip, max_tasks, on_plan, progress,
                 write_to):
        self.parts = parts
        self.threshold = threshold
        self.group_size = group_size
        self.pairs_per_task = pairs_per_task
        self.skip = skip
        self.max_tasks = max_tasks
        self.on_plan = on_plan
        self.write_to = write_to
        self.report = progress if progress is not None else (lambda done, total: None)
        bounds = list(range(0, len(parts), group_size)) + [len(parts)]
        self.group_slices = [slice(bounds[k], bounds[k + 1]) for k in range(len(bounds) - 1)]
        self.matrices = matrices
        self.group_poses = [matrices[s] for s in self.group_slices]
        self.pad = 0.5 * threshold

    def _planned(self, plan):
        if self.on_plan is not None:
            self.on_plan(plan)
        return plan

    def _todo(self, plan):
        todo = [index for index in range(len(plan)) if index not in self.skip]
        return todo if self.max_tasks is None else todo[:self.max_tasks]

    def _pair_task_arguments(self, plan, index, keys, items):
        chunk, needed = plan.task(index)
        return ([keys[g] for g in needed], [items[g] for g in needed], needed, [self.group_poses[g] for g in needed],
                self.group_size, chunk, self.threshold, self.write_to, index), needed

    # -- dask's local scheduler (threads by default)
    def local(self, plan):
        import uuid

        keys = [f"touche-parts-{uuid.uuid4().hex}" for _ in self.group_slices]
        items = [self.parts[s] for s in self.group_slices]
        done = 0
        try:
            if plan is None:
                group_tasks = [dask.delayed(_prepare_group, pure=False)(keys[k], items[k], self.group_poses[k],
                                                                       self.pad)
                               for k in range(len(items))]
                broad = dask.delayed(_broad_phase, pure=False)(group_tasks, len(self.parts), self.threshold,
                                                              self.group_size, self.pairs_per_task)
                plan = self._planned(dask.compute(broad)[0][0])
                done = len(self.group_slices)
            todo = self._todo(plan)
            total = done + len(todo)
            self.report(done, total)
            tasks = {index: dask.delayed(_clearance_task, pure=False)(*self._pair_task_arguments(plan, index, keys,
                                                                                                 items)[0])
                     for index in todo}
            finished = _finished_locally(tasks)
            try:
                for index, rows in finished:
                    done += 1
                    self.report(done, total)
                    yield index, rows
            finally:
                finished.close()
        finally:
            _forget_groups(keys)

    def _client_broad_phase(self):
        """(parts to ship, grown world boxes) for parts all in memory: each part as a
        TriangleMesh (``(vertices, faces)`` and trimesh meshes converted, and checked, here:
        a bad part raises GeometryError before anything is sent) or as the ClearancePart given."""
        from .clearance import ClearancePart, _as_mesh

        sources = [part if isinstance(part, ClearancePart) else _as_mesh(part, "part") for part in self.parts]
        meshes = [part.mesh if isinstance(part, ClearancePart) else part for part in sources]
        return sources, _grown_boxes(meshes, self.matrices, self.pad)

    # -- a distributed client
    def distributed(self, client, plan):
        import uuid
        from concurrent.futures import CancelledError

        from distributed import KilledWorker, as_completed

        # Each worker gets a run of consecutive groups: neighbouring parts (listed together) are
        # then prepared by the same worker, which also gets the pairs between them. A group of
        # file paths travels in its tasks' arguments (a few bytes a part; Dask can re-run any task
        # that used it); a group of meshes is scattered once to its worker (scattered data cannot
        # be recomputed: see rescatter). The workers keep a prepared group under its own key (not
        # the scattered future's: a group scattered again after its worker died keeps the copies
        # the others prepared).
        groups = len(self.group_slices)
        addresses = sorted(client.scheduler_info()["workers"])
        if not addresses:  # none connected at this moment (e.g. nannies restarting them): wait for one
            client.wait_for_workers(1, timeout=120)
            addresses = sorted(client.scheduler_info()["workers"])
        owner = [addresses[k * len(addresses) // groups] for k in range(groups)]
        sources = self.parts
        done = 0
        if plan is None and not any(isinstance(part, (str, os.PathLike)) for part in self.parts):
            # every part is in memory here: the broad phase runs on the client (the parts' world
            # boxes are a pass over their vertices), so the pair tasks start at once and each
            # worker prepares a group when its first task needs it; the worker-side broad phase
            # below (a task per group, then the sweep) is for parts read from files on the workers
            # and cost a barrier: the worker that finished preparing first waited for the other,
            # then both for the sweep and the round trip of its plan (0.2-0.3 s of a 2 s job)
            sources, boxes = self._client_broad_phase()
            plan = self._planned(_plan_from_boxes(boxes, len(self.parts), self.threshold, self.group_size,
                                                  self.pairs_per_task))
        items = [sources[s] for s in self.group_slices]
        for address in addresses:
            mine = [k for k in range(groups) if owner[k] == address and not _all_paths(items[k])]
            if mine:
                packed = [_PackedGroup(items[k]) for k in mine]
                for k, future in zip(mine, client.scatter(packed, workers=[address], hash=False, direct=True)):
                    items[k] = future
        scattered = {k for k in range(groups) if _is_future(items[k])}
        keys = [f"touche-parts-{uuid.uuid4().hex}" for _ in range(groups)]
        home = list(owner)

        def rescatter(needed):
            # groups whose every copy died with their workers are scattered again (random keys: a
            # fresh copy, never a half-forgotten one)
            client.wait_for_workers(1, timeout=120)
            needed = [g for g in needed if g in scattered]
            alive = [g for g in needed if items[g].status == "finished"]
            holders = client.who_has([items[g] for g in alive]) if alive else {}
            for g in needed:
                if g not in alive or not holders.get(items[g].key):
                    items[g] = client.scatter([_PackedGroup(sources[self.group_slices[g]])], hash=False)[0]

        try:
            if plan is None:
                # the broad phase as one graph: a worker dying while it runs loses the tasks it
                # held, which Dask runs again (from the paths, or the copies of scattered groups
                # still alive); a graph that cannot finish (KilledWorker, or a scattered group
                # whose every copy died) is sent again after rescattering, at most _TASK_ATTEMPTS
                # times
                for attempt in range(_TASK_ATTEMPTS + 1):
                    group_futures = [client.submit(_prepare_group, keys[k], items[k], self.group_poses[k], self.pad,
                                                   pure=False, workers=[owner[k]], allow_other_workers=True)
                                     for k in range(groups)]
                    broad = client.submit(_broad_phase, group_futures, len(self.parts), self.threshold,
                                          self.group_size, self.pairs_per_task, pure=False)
                    try:
                        for finished, _ in enumerate(as_completed(group_futures, loop=client.loop), start=1):
                            if finished > done:  # a graph sent again reports from where the last one got
                                done = finished
                                self.report(done, groups)
                        plan, where = broad.result()
                        break
                    except (CancelledError, KilledWorker) as lost:
                        broad.cancel()
                        for future in group_futures:
                            future.cancel()
                        if attempt == _TASK_ATTEMPTS:
                            raise RuntimeError(f"the clearance broad phase failed {attempt + 1} times: {lost!r}") from lost
                        rescatter(range(groups))
                del group_futures, broad
                home = [address or owner[k] for k, address in enumerate(where)]
                plan = self._planned(plan)
                done = groups
            todo = self._todo(plan)
            total = done + len(todo)
            self.report(done, total)

            def submit_task(index, address):
                arguments, _ = self._pair_task_arguments(plan, index, keys, items)
                return client.submit(_clearance_task, *arguments, pure=False, workers=[address],
                                     allow_other_workers=True)

            def groups_of(index):
                return plan.task(index)[1]

            # each task belongs to the worker that holds the group of its first parts (prepared it
            # in the broad phase, or was sent it); a worker whose own tasks are all sent takes the
            # unsent task that needs the fewest groups it does not hold
            held = {}
            for group, address in enumerate(home):
                held.setdefault(address, set()).add(group)
            for index, rows in _balanced(client, submit_task, todo, lambda index: home[groups_of(index)[0]], groups_of,
                                         held, "clearance pair task", lambda index: rescatter(groups_of(index))):
                done += 1
                self.report(done, total)
                yield index, rows
        finally:
            client.run(_forget_groups, keys)


def _all_paths(items):
    return all(isinstance(item, (str, os.PathLike)) for item in items)


_TASKS_IN_FLIGHT = 2  # per worker thread, in _balanced: one running, one waiting


def _balanced(client, submit, indices, home_of, groups_of, held, what, on_lost):
    """``(index, result)`` of every task in ``indices`` as each finishes, sent to the workers a
    few at a time (:data:`_TASKS_IN_FLIGHT` per worker thread) rather than all at once.

    Why: a task's cost is mostly its groups of parts, which a worker prepares once and keeps,
    so each task is meant for the worker ``home_of(index)`` that holds its groups; but a worker
    given all its tasks up front keeps them, and one with fewer tasks (or faster ones) idles at
    the end (Dask's work stealing runs once a second and cannot see what preparing a group
    costs). Here the tasks wait on the client, in order, in a queue per home worker; a worker
    whose queue is empty takes, from the front or the back of another queue, the task that needs
    the fewest groups not in ``held[address]`` (the groups it holds; updated as tasks are sent).
    ``submit(index, address)`` returns the task's future (loosely restricted to ``address``).

    A task lost with its worker (KilledWorker, or cancelled because its scattered inputs died
    with their worker) is sent again, first, after ``on_lost(index)``, at most _TASK_ATTEMPTS
    times; the queue of a worker that died is taken by the others; other errors are raised.
    Closing the iterator cancels the tasks still running."""
    from collections import deque
    from concurrent.futures import CancelledError

    from distributed import KilledWorker, as_completed

    queues = {}
    for index in indices:
        queues.setdefault(home_of(index), deque()).append(index)
    retry = deque()
    in_flight = {}
    pending = {}  # future key -> (index, address it was sent to, future)
    running = as_completed(loop=client.loop)
    attempts = {}

    def take(address):
        if retry:
            return retry.popleft()
        own = queues.get(address)
        if own:
            return own.popleft()
        mine = held.get(address, set())
        best = None
        for queue in queues.values():
            for end in ((0, -1) if len(queue) > 1 else (0,) if queue else ()):
                index = queue[end]
                missing = sum(1 for group in groups_of(index) if group not in mine)
                if best is None or missing < best[0]:
                    best = (missing, queue, end)
        if best is None:
            return None
        _, queue, end = best
        return queue.popleft() if end == 0 else queue.pop()

    # client.scheduler_info() is a round trip to the scheduler carrying every worker's record:
    # asked again at most once a second, and when a task was lost or nothing is running
    known = {"workers": {}, "at": -math.inf}

    def workers(refresh=False):
        now = time.monotonic()
        if refresh or now - known["at"] > 1.0:
            known["workers"], known["at"] = client.scheduler_info()["workers"], now
        return known["workers"]

    def fill(refresh=False):
        for address, info in sorted(workers(refresh).items()):
            while in_flight.get(address, 0) < _TASKS_IN_FLIGHT * max(1, int(info.get("nthreads", 1))):
                index = take(address)
                if index is None:
                    return
                future = submit(index, address)
                pending[future.key] = (index, address, future)
                in_flight[address] = in_flight.get(address, 0) + 1
                held.setdefault(address, set()).update(groups_of(index))
                running.add(future)

    try:
        fill()
        while pending or retry or any(queues.values()):
            if not pending:  # no worker to send to (all gone, their nannies restarting them)
                client.wait_for_workers(1, timeout=120)
                fill(refresh=True)
                continue
            future = next(running)
            index, address, _ = pending.pop(future.key)
            in_flight[address] -= 1
            try:
                result = future.result()
            except (CancelledError, KilledWorker) as lost:
                future.release()
                _count_lost(attempts, index, _TASK_ATTEMPTS, lost, f"{what} {index}")
                on_lost(index)
                retry.append(index)
                fill(refresh=True)
                continue
            future.release()
            fill()  # the worker's next task is on its way before this result is handed back
            yield index, result
    finally:
        for _, _, future in pending.values():
            future.cancel()


def _retrying(client, submit, indices, what, on_lost):
    """``(index, result)`` of ``submit(index)`` for every index, as each finishes. A task lost
    with its worker (KilledWorker, or cancelled because its scattered inputs died with their
    worker) is submitted again after ``on_lost(index)``, at most _TASK_ATTEMPTS times; other
    errors are raised. Closing the iterator cancels the tasks still running."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker, as_completed

    running = as_completed(loop=client.loop)
    pending = {}

    def send(index):
        future = submit(index)
        pending[future.key] = (index, future)
        running.add(future)

    for index in indices:
        send(index)
    attempts = {}
    try:
        for future in running:
            index, _ = pending.pop(future.key)
            try:
                result = future.result()
            except (CancelledError, KilledWorker) as lost:
                future.release()  # a key computed again (save_chunks' chunks) must be forgotten first
                _count_lost(attempts, index, _TASK_ATTEMPTS, lost, f"{what} {index}")
                on_lost(index)
                send(index)
                continue
            future.release()
            yield index, result
    finally:
        for _, future in pending.values():
            future.cancel()


def _count_lost(attempts, index, limit, lost, name):
    """Count one more lost attempt of task ``index`` (``attempts``: {index: count}); past
    ``limit`` attempts raise RuntimeError naming the task and the last loss."""
    attempts[index] = attempts.get(index, 0) + 1
    if attempts[index] > limit:
        raise RuntimeError(f"{name} failed {attempts[index]} times: {lost!r}") from lost


def _finished_locally(tasks):
    """``(index, result)`` of the delayed ``tasks`` ({index: delayed}) on dask's local
    scheduler (run in a thread), as each finishes. Closing the iterator early stops the job
    (the tasks already running finish first)."""
    import queue
    import threading

    from dask.callbacks import Callback

    if not tasks:
        return
    index_of = {value.key: index for index, value in tasks.items()}
    finished = queue.Queue()
    stop = threading.Event()

    def pretask(key, dsk, state):
        if stop.is_set() and key in index_of:
            raise _Stopped()

    def posttask(key, result, dsk, state, worker_id):
        if key in index_of:
            finished.put((index_of[key], result))

    def run():
        try:
            with Callback(pretask=pretask, posttask=posttask):
                dask.compute(*tasks.values())
            finished.put(None)
        except _Stopped:
            finished.put(None)
        except BaseException as error:  # noqa: BLE001  (handed to the caller's thread)
            finished.put(error)

    thread = threading.Thread(target=run, name="touche-clearance", daemon=True)
    thread.start()
    try:
        for _ in range(len(tasks)):
            item = finished.get()
            if isinstance(item, BaseException):
                raise item
            if item is None:  # pragma: no cover - every task reported before the end
                break
            yield item
    finally:
        stop.set()
        thread.join()
