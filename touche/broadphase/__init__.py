"""Broad phase: find the pairs of objects whose axis-aligned boxes overlap, fast.

Every structure has one interface (:class:`BroadPhase`): ``insert(id, aabb)``,
``update(id, aabb)``, ``update_many(ids, aabbs)``, ``remove(id)``, ``rebuild(aabbs (n, 6),
ids=None)``, ``pairs() -> (k, 2) int64`` (rows ``i < j``, sorted), ``query_aabb``,
``query_sphere``, ``query_ray``. Boxes are ``[minx, miny, minz, maxx, maxy, maxz]``; overlap is
closed (touching boxes overlap), so every structure returns exactly the brute-force pair set.

Structures (Ericson, Real-Time Collision Detection, ch. 7 and 6.2.3):
:class:`SortAndSweep` (array, variance-chosen axis), :class:`IncrementalSweepAndPrune`
(sorted endpoints, persistent pairs), :class:`DynamicAABBTree` (fat boxes, SAH insertion, tree
rotations; top-down rebuild), :class:`KDTree` (front-to-back ray traversal), :class:`UniformGrid`
(hashed; 3D-DDA ray walk), :class:`HierarchicalGrid`, :class:`LinearOctree` (Morton keys),
:class:`LooseOctree`. Every structure answers every query exactly; box queries use each
structure's index; ray queries walk the dynamic tree, the k-d tree, the grid cells and the
octree nodes, and test every box in the two sweep-and-prune structures and the hierarchical
grid. Lazily rebuilt structures (k-d tree, grids, octrees) rebuild at the first query after a
change, or at ``prepare()``.
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
