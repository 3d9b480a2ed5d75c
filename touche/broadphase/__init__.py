"""Broad phase: find the pairs of objects whose axis-aligned boxes overlap, fast.

Every structure has one interface (:class:`BroadPhase`): ``insert(id, aabb)``,
``update(id, aabb)``, ``update_many(ids, aabbs)``, ``remove(id)``, ``rebuild(aabbs (n, 6),
ids=None)``, ``pairs() -> (k, 2) int64`` (rows ``i < j``, sorted), ``query_aabb``,
``query_sphere``, ``query_ray``. Boxes are ``[minx, miny, minz, maxx, maxy, maxz]``; overlap is
closed (touching boxes overlap), so every structure returns exactly the brute-force pair set.

Structures (Ericson, Real-Time Collision Detection, ch. 7 and 6.2.3):
:class:`SortAndSweep` (array, variance-chosen axis), :class:`IncrementalSweepAndPrune`
(sorted endpoints, persistent pairs), :class:`DynamicAABBTree` (fat boxes, SAH insertion, tree
rotations), :class:`KDTree`, :class:`UniformGrid` (hashed), :class:`HierarchicalGrid`,
:class:`LinearOctree` (Morton keys), :class:`LooseOctree`.
"""
from .base import BroadPhase, IdError, LazyBroadPhase
from .structures import (
    STRUCTURES,
    DynamicAABBTree,
    HierarchicalGrid,
    IncrementalSweepAndPrune,
    KDTree,
    LinearOctree,
    LooseOctree,
    SortAndSweep,
    UniformGrid,
)

__all__ = [
    "BroadPhase", "DynamicAABBTree", "HierarchicalGrid", "IdError", "IncrementalSweepAndPrune", "KDTree",
    "LazyBroadPhase", "LinearOctree", "LooseOctree", "STRUCTURES", "SortAndSweep", "UniformGrid",
]
