"""The common interface of every broad-phase structure.

Boxes are axis-aligned ``[minx, miny, minz, maxx, maxy, maxz]`` (float64). Two boxes overlap when
their CLOSED intervals overlap on all three axes (touching boxes overlap). Objects are named by
arbitrary non-negative integer ids; internally each id owns a slot of a flat ``(capacity, 6)``
array that the numba kernels read.

Threads: every structure carries a read-write lock (``touche._locks``). Queries (``pairs``,
``query_*``, ``ids``, ``aabb``) read: any number run at once. Mutations (``insert``,
``update``, ``update_many``, ``remove``, ``rebuild``, ``clear``, ``prepare``) write: one at a
time, never during a query. A query that finds lazy state stale (a grid to rebuild, an order to
re-sort) brings it up to date under the write lock first, once; the queries themselves share
no scratch memory (a grid's visit stamps are per thread).
"""
from __future__ import annotations

import numpy as np

from .._locks import ReadWriteLock
from ..errors import GeometryError
from ..pose import nonnegative_number

_NO_PAIRS = np.zeros((0, 2), dtype=np.int64)


class IdError(GeometryError, KeyError):
    """An unknown id (or handle), or an id inserted twice. A GeometryError (bad input) that is
    also a KeyError, so ``except KeyError`` keeps working."""

    def __str__(self):  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""

_NO_IDS = np.zeros(0, dtype=np.int64)


def _kcommon():
    from .._kernels import broadphase

    return broadphase


def as_boxes(aabbs, name="aabbs"):
    """(n, 6) float64 C-contiguous boxes, validated: finite, min <= max."""
    try:
        boxes = np.array(aabbs, dtype=np.float64, order="C", ndmin=2)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric, got {aabbs!r}") from exc
    if boxes.ndim != 2 or boxes.shape[1] != 6:
        raise GeometryError(f"{name} must have shape (n, 6) [minx, miny, minz, maxx, maxy, maxz], got {boxes.shape}")
    finite = np.isfinite(boxes).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise GeometryError(f"{name} row {row} contains NaN or inf: {boxes[row].tolist()}")
    inverted = (boxes[:, :3] > boxes[:, 3:]).any(axis=1)
    if inverted.any():
        row = int(np.flatnonzero(inverted)[0])
        raise GeometryError(f"{name} row {row} has min > max: {boxes[row].tolist()}")
    return boxes


def as_box(aabb, name="aabb"):
    box = as_boxes(aabb, name)
    if box.shape[0] != 1:
        raise GeometryError(f"{name} must be one box of 6 numbers, got shape {np.shape(aabb)}")
    return box[0]


def as_id(value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise GeometryError(f"ids must be non-negative integers, got {value!r}")
    value = int(value)
    if value < 0 or value >= 2 ** 62:
        raise GeometryError(f"ids must be non-negative integers below 2**62, got {value}")
    return value


def _vector(value, name):
    try:
        v = np.array(value, dtype=np.float64).reshape(3)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be 3 numbers, got {value!r}") from exc
    if not np.isfinite(v).all():
        raise GeometryError(f"{name} contains NaN or inf")
    return v


class BroadPhase:
    """Base class: id <-> slot bookkeeping, validation and the queries' common code.

    Subclasses implement ``_pairs_slots``, ``_query_box_slots`` and may override the update
    hooks (``_after_insert``, ``_update_slots``, ``_before_remove``, ``_rebuild_structure``) and
    ``_query_ray_slots``.
    """

    # True where pairs() changes the structure (an order re-sorted on the next axis): it then
    # runs under the write lock
    _pairs_write = False

    def __init__(self):
        self._lock = ReadWriteLock()
        self._capacity = 0
        self._boxes = np.zeros((0, 6))
        self._ids = np.zeros(0, dtype=np.int64)
        self._slot_of = {}
        self._free = []
        self._high = 0  # slots in [0, high) were used at some point
        self._active = None
        self._ranked = None
        self._grow(64)

    # ------------------------------------------------------------------ bookkeeping
    def _grow(self, capacity):
        boxes = np.full((capacity, 6), np.inf)
        boxes[: self._capacity] = self._boxes
        ids = np.full(capacity, -1, dtype=np.int64)
        ids[: self._capacity] = self._ids
        self._boxes, self._ids, self._capacity = boxes, ids, capacity

    def _take_slot(self, obj_id):
        if self._free:
            slot = self._free.pop()
        else:
            if self._high >= self._capacity:
                self._grow(2 * self._capacity)
            slot = self._high
            self._high += 1
        self._slot_of[obj_id] = slot
        self._ids[slot] = obj_id
        self._membership_changed()
        return slot

    def _membership_changed(self):
        self._active = None
        self._ranked = None

    def _slot(self, obj_id):
        obj_id = as_id(obj_id)
        try:
            return self._slot_of[obj_id]
        except KeyError:
            raise IdError(f"{type(self).__name__}: unknown id {obj_id}") from None

    def _active_slots(self):
        if self._active is None:
            self._active = np.array(sorted(self._slot_of.values()), dtype=np.int64)
        return self._active

    def _ranks(self):
        """(rank_of_slot (capacity,), sorted_ids (n,), slot_of_rank (n,)), cached until an
        object is inserted or removed: ids in ascending order and where each lives."""
        if self._ranked is None:
            active = self._active_slots()
            ids = self._ids[active]
            if ids.shape[0] > 1 and not np.all(ids[1:] > ids[:-1]):
                order = np.argsort(ids, kind="stable")
                active, ids = active[order], ids[order]
            rank_of_slot = np.full(self._capacity, -1, dtype=np.int64)
            rank_of_slot[active] = np.arange(active.shape[0])
            self._ranked = (rank_of_slot, np.ascontiguousarray(ids), np.ascontiguousarray(active))
        return self._ranked

    def _slots_of(self, ids, what="ids"):
        """Slots (k,) int64 of the ids (k,): one vectorised lookup; IdError for an unknown id,
        GeometryError for a non-integer id or a repeated one."""
        ids = np.asarray(ids)
        if ids.ndim != 1:
            ids = ids.reshape(-1)
        if ids.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        if ids.dtype.kind not in "iu":
            if ids.dtype == object:
                return np.array([self._slot(i) for i in ids.tolist()], dtype=np.int64)
            raise GeometryError(f"{what} must be integers, got dtype {ids.dtype}")
        _, sorted_ids, slot_of_rank = self._ranks()
        keys = ids.astype(np.int64, copy=False)
        where = np.searchsorted(sorted_ids, keys)
        found = where < sorted_ids.shape[0]
        found[found] = sorted_ids[where[found]] == keys[found]
        if not found.all():
            bad = int(keys[np.flatnonzero(~found)[0]])
            raise IdError(f"{type(self).__name__}: unknown id {bad}")
        slots = slot_of_rank[where]
        if slots.shape[0] > 1:
            ordered = np.sort(where)
            if np.any(ordered[1:] == ordered[:-1]):
                raise GeometryError(f"{what} contain the same id twice")
        return slots

    def __len__(self):
        return len(self._slot_of)

    def __contains__(self, obj_id):
        try:
            return as_id(obj_id) in self._slot_of
        except GeometryError:
            return False

    @property
    def ids(self):
        """Ids present, ascending (k,) int64."""
        with self._lock.read():
            return np.array(sorted(self._slot_of), dtype=np.int64)

    def aabb(self, obj_id):
        """The tight box stored for ``obj_id`` (6,)."""
        with self._lock.read():
            return self._boxes[self._slot(obj_id)].copy()

    # ------------------------------------------------------------------ mutation
    def insert(self, obj_id, aabb):
        """Add an object. IdError (a GeometryError and a KeyError) if the id is present;
        GeometryError for a bad box."""
        obj_id = as_id(obj_id)
        box = as_box(aabb)
        with self._lock.write():
            if obj_id in self._slot_of:
                raise IdError(f"{type(self).__name__}: id {obj_id} is already present")
            slot = self._take_slot(obj_id)
            self._insert_slot(slot, box)

    def update(self, obj_id, aabb):
        """Replace the box of ``obj_id``. IdError for an unknown id."""
        box = as_box(aabb)
        with self._lock.write():
            slot = self._slot(obj_id)
            self._update_slots(np.array([slot], dtype=np.int64), box.reshape(1, 6))

    def update_many(self, ids, aabbs):
        """Replace the boxes of several objects at once: ids (k,), aabbs (k, 6)."""
        ids = np.asarray(ids).reshape(-1)
        if ids.shape[0] == 0 and np.size(aabbs) == 0:
            return
        boxes = as_boxes(aabbs)
        if ids.shape[0] != boxes.shape[0]:
            raise GeometryError(f"update_many got {ids.shape[0]} ids for {boxes.shape[0]} boxes")
        with self._lock.write():
            slots = self._slots_of(ids, "update_many ids")
            self._update_slots(slots, boxes)

    def remove(self, obj_id):
        """Remove ``obj_id``. IdError (a GeometryError and a KeyError) for an unknown id."""
        with self._lock.write():
            slot = self._slot(obj_id)
            self._remove_slot(slot)
            del self._slot_of[as_id(obj_id)]
            self._ids[slot] = -1
            self._boxes[slot] = np.inf
            self._free.append(slot)
            self._membership_changed()

    def rebuild(self, aabbs, ids=None):
        """Replace everything by the boxes ``aabbs`` (n, 6); ids default to 0..n-1."""
        boxes = as_boxes(aabbs)
        n = boxes.shape[0]
        if ids is None:
            id_list = list(range(n))
        else:
            id_list = [as_id(i) for i in np.asarray(ids).reshape(-1).tolist()]
            if len(id_list) != n:
                raise GeometryError(f"rebuild got {len(id_list)} ids for {n} boxes")
            if len(set(id_list)) != n:
                raise GeometryError("rebuild got duplicate ids")
        capacity = 64
        while capacity < n:
            capacity *= 2
        with self._lock.write():
            self._rebuild_locked(boxes, id_list, n, capacity)

    def _rebuild_locked(self, boxes, id_list, n, capacity):
        self._capacity = 0
        self._boxes = np.zeros((0, 6))
        self._ids = np.zeros(0, dtype=np.int64)
        self._reset_structure()
        self._grow(capacity)
        self._boxes[:n] = boxes
        self._ids[:n] = id_list
        self._slot_of = dict(zip(id_list, range(n)))
        self._free = []
        self._high = n
        self._membership_changed()
        self._rebuild_structure()

    def clear(self):
        self.rebuild(np.zeros((0, 6)))

    def prepare(self):
        """Bring the structure up to date now (lazily rebuilt structures build here instead of
        at the next query); a no-op for structures updated in place."""
        with self._lock.write():
            if not self._fresh_for_queries():
                self._prepare_for_queries()

    # lazy state: queries need _fresh_for_queries(); _prepare_for_queries() (under the write
    # lock) makes it so
    def _fresh_for_queries(self):
        return True

    def _prepare_for_queries(self):
        pass

    def _reading(self):
        """Context of a query: the read lock, with lazy state brought up to date first."""
        return self._lock.read_fresh(self._fresh_for_queries, self._prepare_for_queries)

    # hooks: the default keeps only the box array and marks the structure stale
    def _reset_structure(self):
        pass

    def _insert_slot(self, slot, box):
        self._boxes[slot] = box
        self._stale()

    def _update_slots(self, slots, boxes):
        self._boxes[slots] = boxes
        self._stale()

    def _remove_slot(self, slot):
        self._stale()

    def _rebuild_structure(self):
        self._stale()

    def _stale(self):
        pass

    # ------------------------------------------------------------------ queries
    def pairs(self):
        """All overlapping pairs as (k, 2) int64 ids, each row (i, j) with i < j, rows sorted."""
        with (self._lock.write() if self._pairs_write else self._reading()):
            if len(self._slot_of) < 2:
                return _NO_PAIRS.copy()
            if self._pairs_write and not self._fresh_for_queries():
                self._prepare_for_queries()
            pairs, count = self._pairs_slots()
            rank_of_slot, sorted_ids, _ = self._ranks()
            return _kcommon().finalize_pairs_ranked(pairs, count, rank_of_slot, sorted_ids)

    def query_aabb(self, aabb):
        """Ids (ascending) of the objects whose box overlaps ``aabb`` (closed test)."""
        box = as_box(aabb)
        with self._reading():
            if not self._slot_of:
                return _NO_IDS.copy()
            slots, count = self._query_box_slots(box)
            return _kcommon().finalize_ids(slots, count, self._ids)

    def query_sphere(self, center, radius):
        """Ids (ascending) of the objects whose box touches the closed ball (center, radius)."""
        center = _vector(center, "center")
        radius = nonnegative_number(radius, "radius")
        with self._reading():
            if not self._slot_of:
                return _NO_IDS.copy()
            k = _kcommon()
            slots, count = self._query_box_slots(np.concatenate([center - radius, center + radius]))
            kept, n_kept = k.filter_sphere(self._boxes, slots, count, center, radius)
            return k.finalize_ids(kept, n_kept, self._ids)

    def query_ray(self, origin, direction, max_t=np.inf, return_t=False):
        """Ids of the boxes hit by the ray ``origin + t direction``, t in [0, max_t] (closed),
        ordered by entry t then id; with ``return_t`` also the entry parameters (k,) float64
        (0 when the origin is inside). ``direction`` need not be unit (t is in its units)."""
        origin = _vector(origin, "origin")
        direction = _vector(direction, "direction")
        if not np.any(direction):
            raise GeometryError("direction must be non-zero")
        max_t = float(max_t)
        if np.isnan(max_t) or max_t < 0.0:
            raise GeometryError(f"max_t must be >= 0, got {max_t}")
        with self._reading():
            if not self._slot_of:
                return (_NO_IDS.copy(), np.zeros(0)) if return_t else _NO_IDS.copy()
            slots, ts, count = self._query_ray_slots(origin, direction, max_t)
            ids, ts = _kcommon().finalize_ray(slots, ts, count, self._ids)
        return (ids, ts) if return_t else ids

    def _query_ray_slots(self, origin, direction, max_t):
        return _kcommon().brute_query_ray(self._boxes, self._active_slots(), origin, direction, max_t)

    def _query_box_slots(self, box):
        return _kcommon().brute_query_aabb(self._boxes, self._active_slots(), box)

    def _pairs_slots(self):  # pragma: no cover - every structure overrides it
        return _kcommon().brute_pairs(self._boxes, self._active_slots())

    def memory_bytes(self):
        """Bytes held in numpy arrays by this structure (the id dict is not counted)."""
        with self._lock.read():
            return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))

    def __repr__(self):
        return f"{type(self).__name__}({len(self)} objects)"


class LazyBroadPhase(BroadPhase):
    """A structure rebuilt from the slot boxes (by one O(n) / O(n log n) kernel call) at the
    first query after any change: the all-at-once style of 7.1 where grids are refilled each
    frame. Insert / update / remove only touch the box array."""

    def __init__(self):
        self._built = False
        super().__init__()

    def _stale(self):
        self._built = False

    def _ensure(self):  # queries run it under the read lock, after _reading() built the structure
        if not self._built:
            self._build()
            self._built = True

    def _fresh_for_queries(self):
        return self._built

    def _prepare_for_queries(self):
        self._ensure()
