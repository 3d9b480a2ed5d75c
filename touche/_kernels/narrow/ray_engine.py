"""A ray against one shape in the shape's own frame, split into families behind one boundary.

``raycast_many`` (batch.py) calls the ray engine through an address that Python passes in (see
jit.KernelInterface), and Python passes the address of the family that answers the shape's kind
(:func:`ray_engine_address`). A first ray cast therefore compiles its own family only: a box
does not compile the cylinder, cone and ellipsoid chords, nor the GJK ray cast that answers the
shapes known only by their support mapping (about a third of the compile time of a first box
ray cast).

Every family has the engine's signature
``(kind, params, points, tris, planes, o, d, t_max, solid) -> (hit, t, normal, face)``:
``planes`` are a polytope's face planes ((0, 4) for other shapes), ``face`` is the hit triangle of
a mesh and -1 otherwise, ``normal`` is in the shape's frame.
"""
import numpy as np
from numba import types as _types

from touche._kernels.base import kinds
from touche._kernels.base.jit import KernelInterface, njit
from touche._kernels.convex.gjk_cast import gjk_raycast
from touche._kernels.primitives.ray import ray_aabb, ray_ellipsoid, ray_halfspace, ray_plane, ray_sphere
from touche._kernels.primitives.ray_polytopes import ray_convex_polygon, ray_convex_polyhedron, ray_triangle
from touche._kernels.primitives.ray_polytopes import ray_triangles_first
from touche._kernels.primitives.ray_round import ray_capsule, ray_cone, ray_cylinder


@njit(cache=True, nogil=True)
def flat_ray(kind, params, points, tris, planes, o, d, t_max, solid):
    """Boxes, triangles, polygons, tetrahedra and polyhedra, planes and half-spaces. (The public
    mesh rays are the BVH's, trees/bvh_rays.py; brute_force_mesh_ray is their tests' reference.)"""
    if kind == kinds.BOX:
        n_planes = int(params[1])
        center = params[4 + n_planes : 7 + n_planes]
        half = params[7 + n_planes : 10 + n_planes]
        hit, t, normal = ray_aabb(o, d, t_max, center - half, center + half, solid)
    elif kind == kinds.TRIANGLE:
        hit, t, normal = ray_triangle(o, d, t_max, points[0], points[1], points[2], solid)
    elif kind == kinds.POLYGON:
        nv = int(params[0])
        hit, t, normal = ray_convex_polygon(o, d, t_max, points[:nv], params[-3:], solid)
    elif kind == kinds.TETRAHEDRON or kind == kinds.POLYHEDRON:
        hit, t, normal = ray_convex_polyhedron(o, d, t_max, planes, solid)
    else:  # kinds.PLANE, kinds.HALFSPACE
        n = points[1]
        offset = n[0] * points[0, 0] + n[1] * points[0, 1] + n[2] * points[0, 2]
        if kind == kinds.PLANE:
            hit, t, normal = ray_plane(o, d, t_max, n, offset, solid)
        else:
            hit, t, normal = ray_halfspace(o, d, t_max, n, offset, solid)
    return hit, t, normal, np.int64(-1)  # int64, not the literal -1 (the interface declares it)


@njit(cache=True, nogil=True)
def round_ray(kind, params, points, tris, planes, o, d, t_max, solid):
    """Spheres, capsules, cylinders, cones and ellipsoids (closed-form chords)."""
    if kind == kinds.SPHERE:
        hit, t, normal = ray_sphere(o, d, t_max, points[0], params[0], solid)
    elif kind == kinds.CAPSULE:
        hit, t, normal = ray_capsule(o, d, t_max, points[0], points[1], params[0], solid)
    elif kind == kinds.CYLINDER:
        hit, t, normal = ray_cylinder(o, d, t_max, points[0], points[1], params[0], solid)
    elif kind == kinds.CONE:
        hit, t, normal = ray_cone(o, d, t_max, points[0], points[1], params[0], solid)
    else:  # kinds.ELLIPSOID
        hit, t, normal = ray_ellipsoid(o, d, t_max, points, solid)
    return hit, t, normal, np.int64(-1)  # int64, not the literal -1 (the interface declares it)


@njit(cache=True, nogil=True)
def support_ray(kind, params, points, tris, planes, o, d, t_max, solid):
    """Rounded shapes and any other solid known by its support mapping: the GJK ray cast."""
    hit, t, normal = gjk_raycast(kind, params, points, o, d, t_max, solid)
    return hit, t, normal, np.int64(-1)  # int64, not the literal -1 (the interface declares it)


@njit(cache=True, nogil=True)
def brute_force_mesh_ray(kind, params, points, tris, planes, o, d, t_max, solid):
    """A mesh by brute force over its triangles: the reference of the BVH's rays in the tests (no
    public verb takes this family, so warmup does not compile it)."""
    hit, t, face, normal = ray_triangles_first(o, d, t_max, points, tris)
    return hit, t, normal, face


_VECTOR = _types.float64[::1]
_MATRIX = _types.float64[:, ::1]

# the driver's one way into the families: call_ray_engine(address, (kind, params, ...))
RAY_ENGINE = KernelInterface(
    "ray engine",
    (_types.int64, _VECTOR, _MATRIX, _types.int64[:, ::1], _MATRIX, _VECTOR, _VECTOR, _types.float64,
     _types.boolean),
    _types.Tuple((_types.boolean, _types.float64, _VECTOR, _types.int64)),
)
call_ray_engine = RAY_ENGINE.call  # kernels call the intrinsic by a global name
FLAT_RAYS = RAY_ENGINE.implement(flat_ray)
ROUND_RAYS = RAY_ENGINE.implement(round_ray)
SUPPORT_RAYS = RAY_ENGINE.implement(support_ray)
MESH_BRUTE_RAYS = RAY_ENGINE.implement(brute_force_mesh_ray)
RAY_FAMILIES = (FLAT_RAYS, ROUND_RAYS, SUPPORT_RAYS)  # the public verbs' (warmup compiles these)

_FLAT_KINDS = frozenset((kinds.BOX, kinds.TRIANGLE, kinds.POLYGON, kinds.TETRAHEDRON, kinds.POLYHEDRON,
                         kinds.PLANE, kinds.HALFSPACE))
_ROUND_KINDS = frozenset((kinds.SPHERE, kinds.CAPSULE, kinds.CYLINDER, kinds.CONE, kinds.ELLIPSOID))


def ray_family(kind):
    """The family that answers a ray against this kind (plain Python; the kinds the registry
    gives the ray kernel: dispatch.RAYCAST)."""
    if kind in _FLAT_KINDS:
        return FLAT_RAYS
    if kind in _ROUND_KINDS:
        return ROUND_RAYS
    if kind == kinds.MESH:
        return MESH_BRUTE_RAYS
    return SUPPORT_RAYS


def ray_engine_address(kind):
    """The address of the ray family for this kind (compiled or loaded on first use)."""
    return ray_family(kind).address()
