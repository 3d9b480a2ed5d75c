"""touche: collision detection for Python.

    import touche as tc
    a, b = tc.Sphere(1.0), tc.Box([1, 2, 3])
    tc.intersects(a, tc.Pose.from_translation([2, 0, 0]), b, None)
    tc.distance(a, poses, b, None)          # poses: (n, 4, 4) -> arrays

Verbs: intersects, distance, signed_distance, closest_point, raycast, contacts, intersection,
time_of_impact (batches run in one compiled call). Modules: touche.convex (GJK / EPA / shape
casting), touche.planar (2D separating axes), touche.pairwise (raw-array OBB / triangle tests),
touche.lp (Seidel LP, Chung-Wang),
touche.bounding (bounding volumes: AABB, spheres, OBBs, k-DOPs, capsules, lozenges), touche.bvh
(mesh-mesh BVH queries), touche.meshquery, touche.mesh, touche.broadphase, touche.bsp (BSP trees,
Ericson ch. 8: solid-leaf, node- and leaf-storing; imported on first access). Thread and process
safety: README "Threads and processes".
"""
from typing import TYPE_CHECKING

from .errors import GeometryError, ToucheError, UnsupportedQuery
from ._locks import ForkedWhileWriting
from ._parallel import get_num_threads, set_num_threads
from .pose import Pose
from .motion import CallableMotion, Integrated, Keyframes, Linear, Motion, QuadraticMatrix, Screw, Static
from .query import (
    SUPPORTED_PAIRS,
    ClosestPointResult,
    DistanceResult,
    RayResult,
    Status,
    closest_point,
    distance,
    intersects,
    raycast,
    signed_distance,
)
from .shapes import *  # noqa: F401,F403  (every shape class: touche.shapes.__all__)
from .shapes import __all__ as _shape_names

from .impact import ImpactResult, ImpactStatus, IntersectionResult, SetKind, intersection, time_of_impact
from .contacts import ContactManifold, contacts
from .errors import MeshFormatError, RobotModelError  # noqa: E402
from . import bvh  # noqa: E402  (mesh-mesh BVH queries, documented as tc.bvh; kernels load on first use)
# eager: the function tc.clearance shares its name with the module touche.clearance, and a lazy
# name would lose to the module attribute that importing the module sets on the package
from .clearance import Clearance, ClearancePart, ClearanceTable, clearance, clearance_all, triangle_clearance  # noqa: E402,E501  (STL clearance; kernels load on first use)

# Imported on first access (module __getattr__ below), so that ``import touche`` and a first query
# do not pay for the modules a script does not use (~50 ms of ~0.2 s here): the sub-modules
# bounding, convex, lp, pairwise, planar, mesh, meshquery, broadphase, world, environments,
# solid_queries, and these names of theirs.
if TYPE_CHECKING:  # the same names for static readers (type checkers, the API docs' collector)
    from . import bounding, broadphase, convex, lp, mesh, meshquery, pairwise, planar  # noqa: F401
    from .environments import HeightField, OccupancyMap  # noqa: F401
    from .meshquery import contains, signed_distance_points, winding_number  # noqa: F401
    from .solid_queries import (  # noqa: F401
        SolidContacts, SolidPenetration, intersection_volume, penetration_depth, separating_translation)
    from .world import CollisionEvent, CollisionWorld  # noqa: F401

_LAZY_NAMES = {
    "contains": "meshquery", "signed_distance_points": "meshquery", "winding_number": "meshquery",
    "SolidContacts": "solid_queries", "SolidPenetration": "solid_queries",
    "intersection_volume": "solid_queries", "penetration_depth": "solid_queries",
    "separating_translation": "solid_queries",
    "CollisionEvent": "world", "CollisionWorld": "world",
    "HeightField": "environments", "OccupancyMap": "environments",
}

__version__ = "0.1.0"


def __getattr__(name):
    """The names of ``_LAZY_NAMES`` and ``touche.<submodule>`` for the sub-modules not imported
    above (``touche.mesh``, ``touche.world``, ``touche.cli``, ...): imported on first access, once,
    under the kernels' import lock (several threads may ask at once)."""
    import importlib

    from ._kernels import IMPORT_LOCK

    module_name = _LAZY_NAMES.get(name)
    if module_name is not None:
        with IMPORT_LOCK:
            value = getattr(importlib.import_module(f"{__name__}.{module_name}"), name)
        globals()[name] = value  # later look-ups skip __getattr__
        return value
    from pathlib import Path

    here = Path(__file__).resolve().parent
    if name.startswith("_") or not ((here / f"{name}.py").is_file() or (here / name / "__init__.py").is_file()):
        raise AttributeError(f"module 'touche' has no attribute {name!r}")
    with IMPORT_LOCK:
        return importlib.import_module(f"{__name__}.{name}")


def warmup(jobs=None, progress=True):
    """Compile (or load from the on-disk cache) every kernel behind the public API.

    Without it, each first query compiles what it needs (seconds to tens of seconds on an empty
    cache); after it, nothing the public API does compiles (a test checks this). Compiled code
    is kept in a per-user cache keyed by the sources' content (``~/.cache/touche``, or
    ``TOUCHE_CACHE_DIR``; ``NUMBA_CACHE_DIR`` wins when set), so it is paid once per machine.

    Arguments: ``jobs``, worker processes compiling side by side (default: the usable cores;
    1 = in this process); ``progress``, report on stderr (step n of N on a terminal, one line
    elsewhere).

    Returns ``{step name: seconds}`` (the names of ``touche._warmup.STEPS``).

    Errors: ``ValueError`` for ``jobs`` < 1; ``RuntimeError`` naming the step when a worker
    fails."""
    from . import _warmup  # on first use: ``import touche`` stays light

    return _warmup.run(jobs=jobs, progress=progress)


__all__ = [
    "Clearance", "ClearancePart", "ClearanceTable", "clearance", "clearance_all", "triangle_clearance",
    "MeshFormatError", "RobotModelError", "mesh", "contains", "meshquery", "signed_distance_points",
    "winding_number", "SolidPenetration", "penetration_depth", "separating_translation", "SolidContacts",
    "intersection_volume", "CollisionEvent",
    "CollisionWorld", "broadphase", "bvh", "CallableMotion", "Integrated", "Keyframes", "QuadraticMatrix",
    "HeightField", "OccupancyMap", "Screw", "ContactManifold", "ImpactResult", "ImpactStatus", "IntersectionResult", "Linear", "Motion",
    "SetKind", "Static", "bounding", "contacts", "convex", "intersection", "lp", "pairwise", "planar",
    "time_of_impact", "ClosestPointResult", "DistanceResult", "ForkedWhileWriting", "GeometryError", "Pose",
    "RayResult", "SUPPORTED_PAIRS", "Status", "ToucheError", "UnsupportedQuery", "closest_point", "distance",
    "get_num_threads", "intersects", "raycast", "set_num_threads", "signed_distance", "warmup",
    *_shape_names,
]
