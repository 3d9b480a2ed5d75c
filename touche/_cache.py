"""Caches of data derived from shapes (bounding balls, hulls, clearance trees, pair arguments).

Shapes are immutable, so what is derived from one can be kept as long as the shape lives, and no
longer. The caches here hold their keys WEAKLY and compare them by identity:

- an entry disappears when one of its key objects is garbage (a weak-reference callback), so a
  deleted mesh takes its hull, tree and pair arguments with it;
- a key is recognised only by the object itself (``id()`` plus the weak reference's referent),
  never by an ``id()`` that a dead object left for a new one to reuse;
- a value must not refer to its key object (it would keep itself alive): callers pass as key an
  object that the value does not hold (for shapes, :func:`shape_key`);
- every change happens under one lock, and a value is built once when several threads ask for a
  new key at the same moment (the others wait for the first builder; different keys build in
  parallel);
- ``limit`` bounds the number of entries (oldest first out) for caches whose keys can multiply,
  such as pairs of shapes.

Shapes have ``__slots__`` without ``__weakref__``; their key is the private coordinate array
they own (:func:`shape_key`), which lives exactly as long as the shape (or a caller's view of its
coordinates, e.g. ``mesh.points``).
"""
from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict


def shape_key(shape):
    """The weakly referenceable object that stands for ``shape`` in a cache: its private packed
    coordinate array (every shape owns one, copied at construction; kernels' inputs derived
    from it are separate arrays)."""
    return shape._packed[2]


_ALL_CACHES = weakref.WeakSet()


def _reset_after_fork():
    for cache in list(_ALL_CACHES):
        cache._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


class _Pending:
    """A value being built by one thread; others wait on ``done``."""

    __slots__ = ("done", "value", "error")

    def __init__(self):
        self.done = threading.Event()
        self.value = None
        self.error = None


class WeakIdentityCache:
    """``key objects (tuple) -> value``, keys held weakly and compared by identity (see the
    module doc). ``limit``: at most this many entries (None: as many as live keys)."""

    def __init__(self, limit=None):
        self._limit = limit
        # RLock: a weak-reference callback may run in a thread that holds the lock (garbage
        # collection can start at any allocation)
        self._lock = threading.RLock()
        self._entries = OrderedDict()  # ids -> (weak references, value)
        self._pending = {}  # ids -> (weak references, _Pending)
        _ALL_CACHES.add(self)

    def _after_fork_in_child(self):
        # A build that another thread was running at fork never finishes in the child (that
        # thread does not exist there), and the lock may have been held: start both afresh.
        self._lock = threading.RLock()
        self._pending = {}

    def __len__(self):
        return len(self._entries)

    def clear(self):
        with self._lock:
            self._entries.clear()

    def _lookup(self, table, ids, keys):
        entry = table.get(ids)
        if entry is None:
            return None
        for ref, key in zip(entry[0], keys):
            if ref() is not key:
                return None
        return entry[1]

    def get(self, *keys):
        """The value cached for these key objects, or None."""
        # dict.get is atomic: the fast path takes no lock (and one key, the common case, skips
        # the loops: this runs on every single-pair time of impact)
        if len(keys) == 1:
            key = keys[0]
            entry = self._entries.get((id(key),))
            if entry is not None and entry[0][0]() is key:
                return entry[1]
            return None
        return self._lookup(self._entries, tuple(map(id, keys)), keys)

    def for_shape(self, shape, build):
        """The value for ``shape`` (keyed by :func:`shape_key`), made by ``build(shape)`` on the
        first request; the fast path takes no lock and makes no closure."""
        key = shape_key(shape)
        value = self.get(key)
        if value is not None:
            return value
        return self.get_or_build(lambda: build(shape), key)

    def get_or_build(self, build, *keys):
        """The value for ``keys``, made by ``build()`` on the first request (once, whatever the
        number of threads asking; an exception in ``build`` reaches every waiting caller and
        caches nothing)."""
        ids = tuple(map(id, keys))
        value = self._lookup(self._entries, ids, keys)
        if value is not None:
            return value
        with self._lock:
            value = self._lookup(self._entries, ids, keys)
            if value is not None:
                return value
            pending = self._lookup(self._pending, ids, keys)
            owner = pending is None
            if owner:
                pending = _Pending()
                self._pending[ids] = (self._references(ids, keys), pending)
        if not owner:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value
        try:
            value = build()
        except BaseException as exc:
            pending.error = exc
            raise
        else:
            pending.value = value
            self._store(ids, keys, value)
        finally:
            with self._lock:
                if self._lookup(self._pending, ids, keys) is pending:
                    del self._pending[ids]
            pending.done.set()
        return value

    def put(self, value, *keys):
        self._store(tuple(map(id, keys)), keys, value)

    def _references(self, ids, keys):
        def forget(ref, ids=ids):
            # a key object died: drop its entries (only if they are still the ones made for it;
            # its id may already belong to a new object with an entry of its own)
            with self._lock:
                for table in (self._entries, self._pending):
                    entry = table.get(ids)
                    if entry is not None and any(r is ref for r in entry[0]):
                        del table[ids]

        return tuple(weakref.ref(key, forget) for key in keys)

    def _store(self, ids, keys, value):
        with self._lock:
            self._entries[ids] = (self._references(ids, keys), value)
            self._entries.move_to_end(ids)
            if self._limit is not None:
                while len(self._entries) > self._limit:
                    self._entries.popitem(last=False)
