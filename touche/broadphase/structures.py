"""The broad-phase structures (Ericson ch. 7 and 6.2.3). All share the BroadPhase interface."""
from __future__ import annotations

import threading

import numpy as np

from ..errors import GeometryError
from .base import BroadPhase, LazyBroadPhase


def _k():
    from .._kernels import broadphase

    return broadphase


def _kt():
    from .._kernels import broadphase_tree

    return broadphase_tree


def _kg():
    from .._kernels import broadphase_grid

    return broadphase_grid


def _khg():
    from .._kernels import broadphase_hgrid

    return broadphase_hgrid


def _ko():
    from .._kernels import broadphase_octree

    return broadphase_octree


def _kkd():
    from .._kernels import broadphase_kdtree

    return broadphase_kdtree


# ----------------------------------------------------------------------------------------------
class SortAndSweep(BroadPhase):
    """Array sort-and-sweep (7.5.2): the objects sorted by box min along one axis, swept once.

    The order is kept between calls and re-sorted by insertion sort (nearly sorted after small
    motions); the sweep axis for the next call is the axis of greatest variance of the box
    centres."""

    def __init__(self):
        super().__init__()
        self._order = np.zeros(0, dtype=np.int64)
        self._axis = 0
        self._sorted_axis = -1
        self._sorted = False

    _pairs_write = True  # the sweep re-sorts the order and picks the next axis

    def _stale(self):
        self._sorted = False

    def _fresh_for_queries(self):
        return (self._active is not None and self._order_source is self._active and self._sorted
                and self._sorted_axis == self._axis)

    def _prepare_for_queries(self):  # under the write lock
        order = self._sorted_order()
        if not self._sorted or self._sorted_axis != self._axis:
            _k().sap_array_sort(self._boxes, order, order.shape[0], self._axis, self._sorted_axis != self._axis)
            self._sorted_axis = self._axis
            self._sorted = True

    def _sorted_order(self):
        active = self._active_slots()
        if self._order.shape[0] != active.shape[0] or self._order_source is not active:
            self._order = active.copy()
            self._order_source = active
            self._sorted_axis = -1
        return self._order

    _order_source = None

    def _pairs_slots(self):
        order = self._sorted_order()
        resort = self._sorted_axis != self._axis
        axis = self._axis
        pairs, count, self._axis = _k().sap_array_pairs(self._boxes, order, order.shape[0], axis, resort)
        self._sorted_axis = axis
        self._sorted = True
        return pairs, count

    def _query_box_slots(self, box):  # read only: _reading() sorted the order first
        order = self._order
        return _k().sap_array_query(self._boxes, order, order.shape[0], self._axis, box)


# ----------------------------------------------------------------------------------------------
class IncrementalSweepAndPrune(BroadPhase):
    """Incremental sweep and prune (7.5.1): per axis a sorted list of box endpoints, and a
    persistent set of overlapping pairs updated as endpoints swap (insertion sort on motion).

    Cheap when few objects move a little; an insert or remove costs O(n) endpoint moves in the
    worst case, so large batches should use ``rebuild`` (endpoints sorted from scratch, the
    initial pair set found by a temporary top-down tree)."""

    def __init__(self):
        self._count = 0
        self._table = np.full(64, -1, dtype=np.int64)
        self._table_state = np.zeros(2, dtype=np.int64)
        super().__init__()

    def _grow(self, capacity):
        old = self._capacity
        super()._grow(capacity)
        ep_slot = np.zeros((3, 2 * capacity), dtype=np.int64)
        ep_max = np.zeros((3, 2 * capacity), dtype=np.int64)
        where = np.zeros((capacity, 6), dtype=np.int64)
        if old:
            ep_slot[:, : 2 * old] = self._ep_slot
            ep_max[:, : 2 * old] = self._ep_max
            where[:old] = self._where
        self._ep_slot, self._ep_max, self._where = ep_slot, ep_max, where

    def _reset_structure(self):
        self._count = 0
        self._table = np.full(64, -1, dtype=np.int64)
        self._table_state = np.zeros(2, dtype=np.int64)

    def _insert_slot(self, slot, box):
        self._table, self._count = _k().sap_inc_insert(self._boxes, self._ep_slot, self._ep_max, self._where,
                                                       self._count, slot, box, self._table, self._table_state)

    def _update_slots(self, slots, boxes):
        self._table = _k().sap_inc_update_many(self._boxes, self._ep_slot, self._ep_max, self._where, self._count,
                                               slots, boxes, self._table, self._table_state)

    def _remove_slot(self, slot):
        self._table, self._count = _k().sap_inc_remove(self._boxes, self._ep_slot, self._ep_max, self._where,
                                                       self._count, slot, self._table, self._table_state)

    def _rebuild_structure(self):
        slots = self._active_slots()
        size = 64
        while size < 4 * slots.shape[0]:
            size *= 2
        seed, seed_count = _kt().seed_pairs(self._boxes, slots)
        self._table, self._table_state = _k().sap_inc_rebuild(self._boxes, slots, self._ep_slot, self._ep_max,
                                                              self._where, size, seed, seed_count)
        self._count = 2 * slots.shape[0]

    def _pairs_slots(self):
        return _k().pairset_list(self._table, self._table_state)

    @property
    def pair_count(self):
        """Number of overlapping pairs held in the persistent pair set."""
        return int(self._table_state[0])


# ----------------------------------------------------------------------------------------------
class DynamicAABBTree(BroadPhase):
    """Dynamic AABB tree (6.2.3): leaves hold fattened boxes, new leaves descend to the sibling
    that least increases the surface area, and AVL-style tree rotations keep it balanced.

    margin: absolute fattening per side; default ``fat_fraction`` times the box's largest
    extent. predict: the fat box is also stretched by ``predict`` times the displacement of the
    box centre at each update (predictive displacement), so steadily moving objects rarely
    leave their fat boxes. Pairs and queries are reported on the TIGHT boxes."""

    def __init__(self, margin=None, fat_fraction=0.05, predict=2.0):
        if margin is not None and (not np.isfinite(margin) or margin < 0):
            raise GeometryError(f"margin must be finite and >= 0, got {margin}")
        if not np.isfinite(fat_fraction) or fat_fraction < 0:
            raise GeometryError(f"fat_fraction must be finite and >= 0, got {fat_fraction}")
        if not np.isfinite(predict) or predict < 0:
            raise GeometryError(f"predict must be finite and >= 0, got {predict}")
        self.margin, self.fat_fraction, self.predict = margin, float(fat_fraction), float(predict)
        self._node_capacity = 0
        self._last_pairs = 0
        self._state = np.array([-1, 0, -1], dtype=np.int64)
        super().__init__()

    def _grow(self, capacity):
        old = self._capacity
        super()._grow(capacity)
        margins = np.zeros(capacity)
        leaf_of = np.full(capacity, -1, dtype=np.int64)
        if old:
            margins[:old] = self._margins
            leaf_of[:old] = self._leaf_of
        self._margins, self._leaf_of = margins, leaf_of
        self._grow_nodes(2 * capacity + 2)

    def _grow_nodes(self, capacity):
        old = self._node_capacity
        fat = np.zeros((capacity, 6))
        arrays = [np.full(capacity, -1, dtype=np.int64) for _ in range(5)]
        if old:
            fat[:old] = self._fat
            for new, cur in zip(arrays, (self._parent, self._child1, self._child2, self._height, self._obj)):
                new[:old] = cur
        self._fat = fat
        self._parent, self._child1, self._child2, self._height, self._obj = arrays
        self._node_capacity = capacity

    def _reset_structure(self):  # rebuild: the following _grow allocates fresh arrays
        self._state = np.array([-1, 0, -1], dtype=np.int64)
        self._node_capacity = 0

    def _margin_for(self, boxes):
        if self.margin is not None:
            return np.full(boxes.shape[0], float(self.margin))
        return self.fat_fraction * (boxes[:, 3:] - boxes[:, :3]).max(axis=1)

    def _tree_args(self):
        return (self._fat, self._parent, self._child1, self._child2, self._height, self._obj, self._leaf_of,
                self._state)

    def _insert_slot(self, slot, box):
        self._boxes[slot] = box
        self._margins[slot] = self._margin_for(box.reshape(1, 6))[0]
        _kt().tree_insert_many(*self._tree_args(), self._boxes, np.array([slot], dtype=np.int64), self._margins)

    def _update_slots(self, slots, boxes):
        self._margins[slots] = self._margin_for(boxes)
        _kt().tree_update_many(*self._tree_args(), self._boxes, slots, boxes, self._margins, self.predict)

    def _remove_slot(self, slot):
        _kt().tree_remove_leaf(*self._tree_args(), slot)

    def _rebuild_structure(self):
        # a rebuild is a snapshot: leaves get their TIGHT boxes (fewer false candidates in
        # pairs()); an object is fattened (margin + predicted displacement) the first time it
        # moves out of its box. The tree is built top-down (median splits) rather than by n
        # insertions: better trees, built faster (see tree_build_topdown)
        slots = self._active_slots()
        self._margins[slots] = self._margin_for(self._boxes[slots])
        _kt().tree_build_topdown(*self._tree_args(), self._boxes, slots)

    def _pairs_slots(self):
        pairs, count = _kt().tree_pairs(self._fat, self._child1, self._child2, self._height, self._obj, self._state,
                                        self._boxes, self._last_pairs)
        self._last_pairs = count
        return pairs, count

    def _query(self, mode, box, center, radius, origin, direction, max_t):
        return _kt().tree_query(self._fat, self._child1, self._child2, self._height, self._obj, self._state,
                                self._boxes, box, mode, center, radius, origin, direction, max_t)

    _ZERO3 = np.zeros(3)

    def _query_box_slots(self, box):
        slots, _, count = self._query(0, box, self._ZERO3, 0.0, self._ZERO3, self._ZERO3, 0.0)
        return slots, count

    def _query_ray_slots(self, origin, direction, max_t):
        return self._query(2, np.zeros(6), self._ZERO3, 0.0, origin, direction, max_t)

    def check(self):
        """Verify the tree's invariants; returns (leaves, height). AssertionError if broken."""
        leaves, height = _kt().tree_check(*self._tree_args(), self._boxes)
        assert leaves == len(self), f"tree invariant {leaves} broken"
        return leaves, height

    @property
    def height(self):
        root = self._state[0]
        return int(self._height[root]) if root >= 0 else 0


# ----------------------------------------------------------------------------------------------
class KDTree(LazyBroadPhase):
    """k-d tree over the boxes (7.3.7): median splits on the axis of largest centre spread, each
    node keeping the bounding planes of its two halves (objects are never split; leaves hold up
    to 4 objects); box queries descend by those planes; ray queries walk it front to back with
    a clipped [t_min, t_max] interval (7.4.1). Pairs: the tree against itself on the nodes'
    bounding boxes."""

    def _build(self):
        slots = self._active_slots()
        (self._axis, self._lmax, self._rmin, self._left, self._right, self._start, self._end, self._perm,
         self._n_nodes, self._bounds, self._node_box, self._leaf_boxes) = _kkd().kd_build(self._boxes, slots)

    def _tree(self):
        self._ensure()
        return (self._axis, self._lmax, self._rmin, self._left, self._right, self._start, self._end, self._perm)

    def _pairs_slots(self):
        self._ensure()
        return _kkd().kd_pairs(self._axis, self._left, self._right, self._start, self._end, self._perm,
                              self._node_box, self._leaf_boxes, len(self))

    def _query_box_slots(self, box):
        return _kkd().kd_query_box(*self._tree(), self._boxes, box, len(self))

    def _query_ray_slots(self, origin, direction, max_t):
        tree = self._tree()
        return _kkd().kd_query_ray(*tree, self._boxes, self._bounds, len(self), origin, direction, max_t)


# ----------------------------------------------------------------------------------------------
class _LatticeStructure(LazyBroadPhase):
    def _lattice(self):
        slots = self._active_slots()
        self._origin, self._scale = _kg().lattice(self._boxes, slots)
        self._qb = _kg().quantize(self._boxes, slots, self._origin, self._scale)
        return slots

    def _quantize_query(self, box):
        out = np.empty(6, dtype=np.int64)
        _kg().quantize_one(box, self._origin, self._scale, out)
        return out


# Visit stamps of UniformGrid queries (7.7), one set per thread and shared by every grid that
# thread queries: a query only reads / writes stamps of its own objects (indices below their
# count), and each query takes a new stamp larger than every stamp written before in the thread,
# so older marks (from any grid) never look like this query's. Two threads never share stamps.
_visits = threading.local()


def _visit_stamps(n):
    """(mailbox (>= n,) int32, stamp (1,) int64) of the calling thread."""
    mailbox = getattr(_visits, "mailbox", None)
    if mailbox is None or mailbox.shape[0] < n:
        if mailbox is None:
            _visits.stamp = np.zeros(1, dtype=np.int64)
        # zeros: below every stamp the thread's counter can hold (1 .. STAMP_LIMIT)
        mailbox = _visits.mailbox = np.zeros(max(n, 64), dtype=np.int32)
    return mailbox, _visits.stamp


class UniformGrid(_LatticeStructure):
    """Hashed uniform grid (7.1): every object is entered in each cell it overlaps, cells are
    hashed into a table sized to the number of entries (a counting sort by bucket), and a pair
    sharing several cells is reported from one cell only. Objects covering more than
    ``max_cells`` cells are kept in an "oversize" list tested against all others.

    cell_size: side of a cell in world units; default twice the median largest box extent.
    Ray queries walk the cells the ray crosses (7.4.2, 3D-DDA). Box and ray queries use
    per-object time stamps (7.7) so objects in several cells are tested once."""

    def __init__(self, cell_size=None, max_cells=64):
        if cell_size is not None and not (np.isfinite(cell_size) and cell_size > 0):
            raise GeometryError(f"cell_size must be finite and > 0, got {cell_size}")
        if int(max_cells) < 1:
            raise GeometryError(f"max_cells must be >= 1, got {max_cells}")
        self.cell_size, self.max_cells = cell_size, int(max_cells)
        super().__init__()

    def _build(self):
        slots = self._lattice()
        if self.cell_size is not None:
            size = float(self.cell_size)
        else:
            ext = (self._boxes[slots, 3:] - self._boxes[slots, :3]).max(axis=1) if slots.size else np.zeros(1)
            size = 2.0 * float(np.median(ext))
        cell = size * self._scale
        self._cell = int(min(max(cell, 1.0), 2.0 ** 21)) if np.isfinite(cell) else 2 ** 21
        (self._c0, self._c1, self._oversize, self._mask, self._starts, self._keys,
         self._owner) = _kg().grid_build(self._qb, self._cell, self.max_cells)

    def _pairs_slots(self):
        self._ensure()
        return _kg().grid_pairs(self._boxes, self._active_slots(), self._c0, self._oversize, self._starts, self._keys,
                                self._owner)

    def _query_box_slots(self, box):
        self._ensure()
        slots = self._active_slots()
        return _kg().grid_query_box(self._boxes, slots, self._oversize, self._mask, self._starts,
                                    self._keys, self._owner, self._cell, self._quantize_query(box), box,
                                    *_visit_stamps(slots.shape[0]))

    def _query_ray_slots(self, origin, direction, max_t):
        self._ensure()
        slots = self._active_slots()
        return _kg().grid_query_ray(self._boxes, slots, self._oversize, self._mask, self._starts,
                                    self._keys, self._owner, self._cell, self._origin, self._scale, origin, direction,
                                    max_t, *_visit_stamps(slots.shape[0]))


class HierarchicalGrid(_LatticeStructure):
    """Hierarchical grid (7.2): levels of cells doubling in size; each object is stored once, at
    the finest level whose cells are at least its size, in the cell of its min corner. An object
    looks for partners in its own cell and the 13 'forward' neighbour cells of its level, and at
    coarser occupied levels only (an occupancy count per level skips empty levels; a level
    with fewer objects than cells to probe is scanned instead)."""

    def _build(self):
        slots = self._lattice()
        self._hg = _khg().hgrid_build(self._qb, self._boxes, slots)

    def _pairs_slots(self):
        self._ensure()
        return _khg().hgrid_pairs(*self._hg)

    def _query_box_slots(self, box):
        self._ensure()
        mask, bits, starts, key, level, slot, box_, _, occupied, level_entries, level_start = self._hg
        return _khg().hgrid_query_box(mask, bits, starts, key, level, slot, box_, occupied, level_entries, level_start,
                                     self._quantize_query(box), box)


class _Octree(_LatticeStructure):
    _reach_cells = 1  # node region: 1 = its cell, 2 = loose bounds (twice the cell)

    def _query_box_slots(self, box):
        self._ensure()
        return _ko().octree_query_box(self._sorted_boxes, self._sorted_slots, self._table, self._reach_cells,
                                      self._quantize_query(box), box)

    def _query_ray_slots(self, origin, direction, max_t):
        self._ensure()
        return _ko().octree_query_ray(self._sorted_boxes, self._sorted_slots, self._table, self._reach_cells,
                                      self._origin, self._scale, origin, direction, max_t)

    def _tables(self, build):
        slots = self._lattice()
        self._order, self._rank, self._depth, self._table = build(self._qb)
        self._sorted_boxes, self._sorted_slots = _ko().sorted_copies(self._boxes, slots, self._order)


class LinearOctree(_Octree):
    """Linear (pointerless) octree with Morton-code node keys (7.3.5): each object is stored at
    the deepest node that contains it without straddling a splitting plane; the nodes are a
    sorted array of locational codes (children of a node are one contiguous run). Pairs: a
    depth-first walk testing each node's objects against those of its ancestors that overlap
    the node's cell (7.3.4 TestAllCollisions with the ancestor list filtered per node). Ray
    queries walk the nodes the ray meets."""

    def _build(self):
        self._tables(_ko().linear_octree_build)

    def _pairs_slots(self):
        self._ensure()
        return _ko().linear_octree_pairs(self._sorted_boxes, self._sorted_slots, self._qb, self._order, self._table)


class LooseOctree(_Octree):
    """Loose octree (7.3.6) with loose bounds twice the cell: an object goes to the depth whose
    cell is at least its size, in the cell of its min corner, so no object ever straddles. Pairs:
    each object walks the nodes whose loose bounds meet its box, down to its own depth only.
    Queries walk the nodes whose loose bounds meet the query."""

    _reach_cells = 2

    def _build(self):
        self._tables(_ko().loose_octree_build)

    def _pairs_slots(self):
        self._ensure()
        return _ko().loose_octree_pairs(self._boxes, self._active_slots(), self._qb, self._sorted_boxes,
                                        self._sorted_slots, self._rank, self._depth, self._table)


STRUCTURES = {
    "sort_and_sweep": SortAndSweep,
    "incremental_sap": IncrementalSweepAndPrune,
    "dynamic_tree": DynamicAABBTree,
    "kd_tree": KDTree,
    "uniform_grid": UniformGrid,
    "hierarchical_grid": HierarchicalGrid,
    "linear_octree": LinearOctree,
    "loose_octree": LooseOctree,
}
