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



def warmup():
    """Compile (or load from numba's cache) every broad-phase kernel: each structure builds,
    updates and answers every query once on a few boxes (touche.world's own kernels are warmed
    by touche.warmup's world step)."""
    import numpy as np

    boxes = np.array([[0, 0, 0, 1, 1, 1], [0.5, 0.5, 0.5, 2, 2, 2], [3, 3, 3, 4, 4, 4]], dtype=np.float64)
    for cls in STRUCTURES.values():
        structure = cls()
        structure.rebuild(boxes)
        structure.pairs()
        structure.insert(7, boxes[0])
        structure.update_many(np.array([0, 1]), boxes[1:])
        structure.remove(7)
        structure.pairs()
        structure.query_aabb(boxes[0])
        structure.query_sphere([0.0, 0.0, 0.0], 1.0)
        structure.query_ray([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0])


__all__ = [
    "BroadPhase", "DynamicAABBTree", "HierarchicalGrid", "IdError", "IncrementalSweepAndPrune", "KDTree",
    "LazyBroadPhase", "LinearOctree", "LooseOctree", "STRUCTURES", "SortAndSweep", "UniformGrid", "warmup",
]
