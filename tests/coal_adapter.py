"""Helpers for the differential tests against coal (tests/test_vs_coal.py).

Each shape kind has one touche shape and the equivalent coal geometry (same conventions: Box full
sides, Capsule / Cylinder / Cone full length along local z, cone apex at +z, Plane ``n.x = d``,
Halfspace ``n.x <= d``). Coal has no TriangleP distance, so a triangle is a flat ``coal.Convex``.
"""
from __future__ import annotations

import numpy as np

import touche

try:
    import coal
except ImportError:  # pragma: no cover - the test module skips
    coal = None

TRIANGLE = np.array([[0.0, 0.0, 0.0], [1.2, 0.1, 0.0], [0.3, 0.9, 0.0]]) - np.array([0.5, 0.33, 0.0])
BOX = np.array([1.0, 0.7, 0.5])
SPHERE_R = 0.45
CAPSULE = (0.3, 0.8)  # radius, length
CYLINDER = (0.4, 0.9)
CONE = (0.45, 1.0)
PLANE = (np.array([0.0, 0.0, 1.0]), 0.0)


def touche_shape(name):
    if name == "sphere":
        return touche.Sphere(SPHERE_R)
    if name == "capsule":
        return touche.Capsule(*CAPSULE)
    if name == "box":
        return touche.Box(BOX)
    if name == "cylinder":
        return touche.Cylinder(*CYLINDER)
    if name == "cone":
        return touche.Cone(*CONE)
    if name == "triangle":
        return touche.Triangle(*TRIANGLE)
    if name == "plane":
        return touche.Plane(*PLANE)
    if name == "halfspace":
        return touche.HalfSpace(*PLANE)
    raise KeyError(name)


def coal_shape(name):
    if name == "sphere":
        return coal.Sphere(SPHERE_R)
    if name == "capsule":
        return coal.Capsule(*CAPSULE)
    if name == "box":
        return coal.Box(*BOX)
    if name == "cylinder":
        return coal.Cylinder(*CYLINDER)
    if name == "cone":
        return coal.Cone(*CONE)
    if name == "triangle":
        vertices = coal.StdVec_Vec3s()
        for p in TRIANGLE:
            vertices.append(np.array(p, dtype=np.float64))
        triangles = coal.StdVec_Triangle()
        triangles.append(coal.Triangle(0, 1, 2))
        return coal.Convex(vertices, triangles)
    if name == "plane":
        return coal.Plane(PLANE[0], PLANE[1])
    if name == "halfspace":
        return coal.Halfspace(PLANE[0], PLANE[1])
    raise KeyError(name)


def bounding_radius(name):
    """Radius of a ball about the local origin that holds the shape (inf for planes)."""
    return {
        "sphere": SPHERE_R,
        "capsule": CAPSULE[0] + 0.5 * CAPSULE[1],
        "box": 0.5 * float(np.linalg.norm(BOX)),
        "cylinder": float(np.hypot(CYLINDER[0], 0.5 * CYLINDER[1])),
        "cone": float(np.hypot(CONE[0], 0.5 * CONE[1])),
        "triangle": float(np.linalg.norm(TRIANGLE, axis=1).max()),
        "plane": np.inf,
        "halfspace": np.inf,
    }[name]


def transform(matrix):
    return coal.Transform3s(np.ascontiguousarray(matrix[:3, :3]), np.ascontiguousarray(matrix[:3, 3]))


def coal_collide(ga, poses_a, gb, poses_b):
    """coal.collide per pose with coal's default ``CollisionRequest()`` (True = colliding).

    The default request also fills one contact (point, normal, depth), which costs time but not
    correctness: checked on the test_vs_coal pairs, its booleans equal those of the boolean-only
    ``CollisionRequest(CollisionRequestFlag.NO_REQUEST, 1)`` that an earlier version used, so the
    tests use the request every coal user starts with."""
    out = np.empty(len(poses_a), dtype=bool)
    for i, (ta, tb) in enumerate(zip(poses_a, poses_b)):
        request = coal.CollisionRequest()
        result = coal.CollisionResult()
        out[i] = coal.collide(ga, transform(ta), gb, transform(tb), request, result) > 0
    return out


def coal_distance(ga, poses_a, gb, poses_b, gjk_tolerance=None):
    """coal.distance per pose: (signed distance (n,), nearest point on A (n, 3), on B (n, 3))."""
    n = len(poses_a)
    dist = np.empty(n)
    pa = np.empty((n, 3))
    pb = np.empty((n, 3))
    for i, (ta, tb) in enumerate(zip(poses_a, poses_b)):
        request = coal.DistanceRequest()
        if gjk_tolerance is not None:
            request.gjk_tolerance = gjk_tolerance
            request.epa_tolerance = gjk_tolerance
        result = coal.DistanceResult()
        dist[i] = coal.distance(ga, transform(ta), gb, transform(tb), request, result)
        pa[i] = result.getNearestPoint1()
        pb[i] = result.getNearestPoint2()
    return dist, pa, pb


def coal_geometry(shape):
    """The coal geometry of any convex touche shape (same local frame). Polytopes become a
    ``coal.Convex`` of touche's hull vertices and triangles (duplicate input points are already
    merged there; a flat polygon or triangle is a flat Convex)."""
    if isinstance(shape, touche.Box):
        return coal.Box(*shape.extents)
    if isinstance(shape, touche.Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, touche.Capsule):
        return coal.Capsule(shape.radius, shape.length)
    if isinstance(shape, touche.Cylinder):
        return coal.Cylinder(shape.radius, shape.length)
    if isinstance(shape, touche.Cone):
        return coal.Cone(shape.radius, shape.length)
    if isinstance(shape, touche.Ellipsoid):
        return coal.Ellipsoid(*shape.radii)
    vertices = coal.StdVec_Vec3s()
    for p in shape.vertices:
        vertices.append(np.array(p, dtype=np.float64))
    triangles = coal.StdVec_Triangle()
    for f in shape.triangles:
        triangles.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(vertices, triangles)


def coal_signed(ga, poses_a, gb, poses_b, tolerance=1e-12):
    """coal.distance per pose with GJK / EPA tolerances ``tolerance`` (and 1000 iterations;
    None = coal's default request):
    (signed distance (n,), normal A -> B (n, 3), nearest points on A and B (n, 3) each)."""
    n = len(poses_a)
    dist = np.empty(n)
    normal = np.empty((n, 3))
    pa = np.empty((n, 3))
    pb = np.empty((n, 3))
    request = coal.DistanceRequest()
    if tolerance is not None:  # None: coal's default request (tolerances 1e-6)
        request.gjk_tolerance = tolerance
        request.epa_tolerance = tolerance
        request.gjk_max_iterations = 1000
        request.epa_max_iterations = 1000
    for i in range(n):
        result = coal.DistanceResult()
        dist[i] = coal.distance(ga, transform(poses_a[i]), gb, transform(poses_b[i]), request, result)
        normal[i] = result.normal
        pa[i] = result.getNearestPoint1()
        pb[i] = result.getNearestPoint2()
    return dist, normal, pa, pb
