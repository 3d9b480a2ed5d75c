"""touche: collision detection for Python.

    import touche as tc
    a, b = tc.Sphere(1.0), tc.Box([1, 2, 3])
    tc.intersects(a, tc.Pose.from_translation([2, 0, 0]), b, None)
    tc.distance(a, poses, b, None)          # poses: (n, 4, 4) -> arrays

Verbs: intersects, distance, closest_point, raycast (batches run in one compiled call).
"""
from .errors import GeometryError, ToucheError, UnsupportedQuery
from .pose import Pose
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
    warmup,
)
from .shapes import (
    AABB,
    Box,
    Capsule,
    Cone,
    ConvexPolygon,
    ConvexPolyhedron,
    Cylinder,
    Ellipsoid,
    HalfSpace,
    Line,
    Plane,
    Point,
    Ray,
    Segment,
    Shape,
    Sphere,
    Tetrahedron,
    Triangle,
    TriangleMesh,
    as_shape,
)

__version__ = "0.1.0"

__all__ = [
    "AABB", "Box", "Capsule", "ClosestPointResult", "Cone", "ConvexPolygon", "ConvexPolyhedron",
    "Cylinder", "DistanceResult", "Ellipsoid", "GeometryError", "HalfSpace", "Line", "Plane", "Point", "Pose",
    "Ray", "RayResult", "SUPPORTED_PAIRS", "Segment", "Shape", "Sphere", "Status", "Tetrahedron",
    "ToucheError", "Triangle", "TriangleMesh", "UnsupportedQuery", "as_shape", "closest_point",
    "distance", "intersects", "raycast", "warmup",
]
