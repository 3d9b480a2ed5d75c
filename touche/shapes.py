"""Shapes: immutable, validated at construction, packed once into flat arrays for the kernels.

Every shape is defined in its own local frame and placed in the world by a pose passed to the
query (``x_world = R @ x_local + t``). Sizes follow the conventions of coal / trimesh:
``Box(extents)`` takes full side lengths, ``Capsule(radius, length)``, ``Cylinder`` and ``Cone``
take the full length along the local z axis, centred on the origin (the cone's apex at +z).

Packed layout (read by ``touche/_kernels/narrow/pairs.py``), per shape:
``kind`` (int), ``params`` (p,) float64, ``points`` (n, 3) float64, ``triangles`` (m, 3) int64,
``edges`` (e, 2) int64. Polytopes (Triangle, Tetrahedron, Box, AABB, ConvexPolygon,
ConvexPolyhedron) share one layout: ``points = [vertices; plane normals; unit edge directions]``
and ``params = [n_vertices, n_planes, n_directions, n_sat_normals, plane offsets..., extra...]``;
their boundary is ``triangles`` and their edges ``edges``. ``extra`` is (center, half extents)
for a box, the unit normal for a polygon, and the vertex adjacency in CSR form for a
polyhedron (``nv + 1`` start offsets, then the neighbour indices, stored as floats).
"""
from __future__ import annotations

import os
import threading

import numpy as np

from . import tolerance
from ._kernels import kinds
from .dispatch import FINITE_CONVEX, RADIUS_PARAM
from .errors import GeometryError
from .pose import check_magnitude

__all__ = [
    "AABB", "Box", "Capsule", "Cone", "ConvexPolygon", "ConvexPolyhedron", "Cylinder", "Ellipsoid", "HalfSpace",
    "Line", "Plane", "Point", "Ray", "Rounded", "RoundedBox", "Segment", "Shape", "Sphere", "TaperedCapsule",
    "Tetrahedron", "Triangle", "TriangleMesh", "as_shape",
]

_NO_TRIANGLES = np.zeros((0, 3), dtype=np.int64)
_UNBOUNDED_KINDS = frozenset((kinds.RAY, kinds.LINE, kinds.PLANE, kinds.HALFSPACE))
_NO_EDGES = np.zeros((0, 2), dtype=np.int64)


# --------------------------------------------------------------------------------------------
# validation helpers
#
# Range (touche.tolerance.MAX_COORDINATE / MIN_SIZE; why those bounds: see there): every
# coordinate and size has |x| <= 1e75, and every size that is not zero (radii, lengths, sides,
# the span of a shape's vertices) is >= 1e-75. Outside it the kernels' products of lengths
# overflow to inf or flush to zero, so such input is refused here rather than answered wrongly.
_MAX = tolerance.MAX_COORDINATE
_MIN = tolerance.MIN_SIZE


def check_coordinates(array, name):
    """GeometryError unless every entry of ``array`` (finite floats) has magnitude <= 1e75."""
    check_magnitude(array, name)


def check_size(value, name, zero_ok=False):
    """GeometryError unless the length ``value`` (finite, >= 0) is in [1e-75, 1e75] (or 0 when
    ``zero_ok``)."""
    if value == 0.0 and zero_ok:
        return
    if not _MIN <= value <= _MAX:
        zero = "0 or " if zero_ok else ""
        raise GeometryError(
            f"{name} is {value!r}, outside touche's range: sizes must be {zero}within [{_MIN:g}, {_MAX:g}]"
        )


def _check_span(vertices, name):
    """The span of a shape's vertices (largest coordinate difference from the first vertex) is a
    size: non-zero spans below 1e-75 are refused. A zero span is left to each shape's own rule (a
    degenerate segment, triangle or mesh is allowed; a polygon or solid is refused as degenerate).
    Coordinates within the range span at most 2e75: products of four such lengths stay < 1.6e301."""
    span = float(np.abs(vertices - vertices[0]).max())
    if 0.0 < span < _MIN:
        raise GeometryError(
            f"{name} span {span!r}, outside touche's range: a shape's size must be 0 or >= {_MIN:g}"
        )


def coordinate_array(value, name, shape=None, ndim=None, copy=True):
    """A finite float64 array of coordinates or sizes (|x| <= 1e75), of the given ``shape`` or
    number of dimensions when given; a copy unless ``copy=False`` (then the caller's float64
    array itself when it is one)."""
    array = _finite_array(value, name, shape, ndim, copy)
    check_coordinates(array, name)
    return array



def _finite_array(value, name, shape=None, ndim=None, copy=True):
    try:
        array = np.array(value, dtype=np.float64) if copy else np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric, got {type(value).__name__}") from exc
    if shape is not None and array.shape != shape:
        raise GeometryError(f"{name} must have shape {shape}, got {array.shape}")
    if ndim is not None and array.ndim != ndim:
        raise GeometryError(f"{name} must have {ndim} dimension{'s' if ndim != 1 else ''}, got shape {array.shape}")
    if not np.isfinite(array).all():
        bad = np.argwhere(~np.isfinite(array))[0]
        raise GeometryError(f"{name} contains NaN or inf (first at index {tuple(int(i) for i in bad)})")
    return array


def _points(value, name, min_count=1):
    array = coordinate_array(value, name)
    if array.ndim != 2 or array.shape[1] != 3:
        raise GeometryError(f"{name} must have shape (n, 3), got {array.shape}")
    if array.shape[0] < min_count:
        raise GeometryError(f"{name} needs at least {min_count} points, got {array.shape[0]}")
    return array


def _positive(value, name):
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be a number, got {value!r}") from exc
    if not np.isfinite(number) or number <= 0.0:
        raise GeometryError(f"{name} must be finite and > 0, got {value!r}")
    check_size(number, name)
    return number


def unit_vector(vector, name):
    """``vector`` (3,) normalised, whatever its magnitude: it is first divided by a power of two
    near its largest component (exact in floating point), so its squared length can neither
    overflow (a direction of 1e200) nor flush to zero (1e-200). A zero vector is a GeometryError."""
    vector = _finite_array(vector, name, (3,))
    largest = np.abs(vector).max()
    if largest == 0.0:
        raise GeometryError(f"{name} must be a non-zero vector")
    vector = np.ldexp(vector, -np.frexp(largest)[1])
    return vector / np.sqrt(vector @ vector)



# --------------------------------------------------------------------------------------------
def _sizes(value, name):
    """Three sizes along x, y, z as a (3,) array: each > 0 and within check_size's range."""
    array = coordinate_array(value, name, (3,))
    if (array <= 0).any():
        raise GeometryError(f"{name} must be > 0, got {array.tolist()}")
    for axis, size in zip("xyz", array.tolist()):
        check_size(size, f"{name}[{axis}]")
    return array


def _param(i):
    """A read-only property: the shape's parameter i as a float."""
    return property(lambda self: float(self.params[i]))


def _point(i):
    """A read-only property: the shape's packed point i (a read-only view)."""
    return property(lambda self: self.points[i])


class Shape:
    """Base class. Subclasses set the packed arrays in ``__init__`` through ``_pack``."""

    __slots__ = ("kind", "params", "points", "triangles", "edges", "scale", "_packed")
    kind: int

    def _pack(self, kind, params=(), points=None, triangles=_NO_TRIANGLES, edges=_NO_EDGES):
        params = np.array(params, dtype=np.float64, order="C", copy=True).reshape(-1)
        points = np.zeros((0, 3)) if points is None else np.array(points, dtype=np.float64, order="C", copy=True)
        triangles = np.array(triangles, dtype=np.int64, order="C", copy=True).reshape(-1, 3)
        edges = np.array(edges, dtype=np.int64, order="C", copy=True).reshape(-1, 2)
        # Kernels get the private writable arrays (``_packed``): numba types read-only and
        # writable arrays differently, and arrays made inside kernels are writable, so one kind of
        # array everywhere means one compiled specialisation. The public attributes are read-only
        # views of the same memory.
        object.__setattr__(self, "_packed", (kind, params, points, triangles, edges))
        object.__setattr__(self, "kind", kind)
        for name, array in (("params", params), ("points", points), ("triangles", triangles), ("edges", edges)):
            view = array.view()
            view.setflags(write=False)
            object.__setattr__(self, name, view)
        size = _scale_of(kind, params, points)
        if size is None:  # a solid known by its support mapping: the farthest corner of its box
            low, high = self.local_box()
            size = float(max(np.abs(low).max(), np.abs(high).max()))
        object.__setattr__(self, "scale", size)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def packed(self):
        """(kind, params, points, triangles, edges) as read-only arrays (see the module doc)."""
        return self.kind, self.params, self.points, self.triangles, self.edges

    def local_box(self):
        """``(min (3,), max (3,))``: a box holding the shape in its own frame (infinite sides for
        a plane, half-space, ray or line); the tightest such box for every finite shape.
        A shape whose packed points are not all positions overrides it."""
        if self.kind in _UNBOUNDED_KINDS:
            return np.full(3, -np.inf), np.full(3, np.inf)
        points = self.points
        if kinds.TRIANGLE <= self.kind <= kinds.POLYHEDRON:
            points = points[: int(self.params[0])]
        low, high = points.min(axis=0), points.max(axis=0)
        if self.kind in RADIUS_PARAM:
            low, high = low - self.params[0], high + self.params[0]
        return low, high

    def __reduce__(self):
        # the packed arrays are the state: no re-validation, no Qhull re-run (vertex order kept);
        # the slots of every subclass level (a LoadedMesh's path and its TriangleMesh's solid flag)
        extra = tuple((name, getattr(self, name)) for name in _subclass_slots(type(self))
                      if hasattr(self, name) and name not in _UNPICKLED_SLOTS)
        return (_restore, (type(self), self.packed(), extra))

    def __repr__(self):
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self):
        return ""


# kinds whose packed points are positions (polytopes add unit normals and edge directions, which
# only raise the size a little) and whose size is their farthest point plus params[0] when they
# are in RADIUS_PARAM
_SIZED_BY_POINTS = frozenset(range(kinds.CYLINDER)) | frozenset((kinds.CYLINDER, kinds.CONE, kinds.PLANE,
                                                                 kinds.HALFSPACE, kinds.MESH))


def _scale_of(kind, params, points):
    """Model size for tolerances: the farthest coordinate plus the sweep radius; None for a solid
    known by its support mapping (Shape._pack then takes its box)."""
    if kind == kinds.ROUNDED:
        core = _scale_of(int(params[1]), params[kinds.ROUNDED_HEADER:], points)
        return None if core is None else core + float(params[0])
    if kind not in _SIZED_BY_POINTS and kind != kinds.ELLIPSOID:
        return None
    if kind == kinds.ELLIPSOID:
        return float(np.abs(points[0]).max() + np.abs(points[1:]).max() * np.sqrt(3.0))
    size = float(np.abs(points).max()) if points.size else 0.0
    if kind in RADIUS_PARAM:
        size += float(params[0])
    return size


def _subclass_slots(cls):
    """The slot names a shape class adds to Shape's, over its whole class hierarchy."""
    names = []
    for klass in reversed(cls.__mro__):
        if klass is not Shape and issubclass(klass, Shape):
            names += [name for name in klass.__dict__.get("__slots__", ()) if name not in names]
    return names


# slots that hold what is rebuilt on demand from the state (not pickled)
_UNPICKLED_SLOTS = frozenset({"_pair_arguments"})


def _restore(cls, packed, extra):
    shape = object.__new__(cls)
    shape._pack(*packed)
    for name, value in extra:
        object.__setattr__(shape, name, value)
    return shape


# --------------------------------------------------------------------------------------------
# point core
class Point(Shape):
    """A single point."""

    __slots__ = ()

    def __init__(self, position=(0.0, 0.0, 0.0)):
        self._pack(kinds.POINT, (), coordinate_array(position, "position", (3,))[None])

    position = _point(0)


    def _describe(self):
        return f"position={self.position.tolist()}"


class Sphere(Shape):
    """Solid sphere of ``radius`` centred at ``center`` (local frame)."""

    __slots__ = ()

    def __init__(self, radius, center=(0.0, 0.0, 0.0)):
        self._pack(kinds.SPHERE, (_positive(radius, "radius"),), coordinate_array(center, "center", (3,))[None])

    radius = _param(0)

    center = _point(0)


    def _describe(self):
        return f"radius={self.radius}, center={self.center.tolist()}"


# --------------------------------------------------------------------------------------------
# shapes about the segment from a to b (segments, capsules, tapered capsules)
def _axis_points(a, b):
    """The (2, 3) points a, b, checked (finite, in range, a non-zero span >= 1e-75)."""
    points = np.stack([coordinate_array(a, "a", (3,)), coordinate_array(b, "b", (3,))])
    _check_span(points, "a and b")
    return points


class _Axis:
    """The end points ``a`` and ``b`` of a shape packed as those two points."""

    __slots__ = ()

    a = _point(0)

    b = _point(1)


# --------------------------------------------------------------------------------------------
# linear core
class Segment(_Axis, Shape):
    """The closed segment from ``a`` to ``b``. ``a == b`` is allowed (a degenerate segment)."""

    __slots__ = ()

    def __init__(self, a, b):
        points = _axis_points(a, b)
        self._pack(kinds.SEGMENT, (), points)



    def _describe(self):
        return f"a={self.a.tolist()}, b={self.b.tolist()}"


class Capsule(_Axis, Shape):
    """Sphere-swept segment: the segment from z = -length/2 to z = +length/2, swept by ``radius``.
    ``length`` may be 0 (a sphere). ``Capsule.from_points(a, b, radius)`` for an explicit axis."""

    __slots__ = ()

    def __init__(self, radius, length):
        length = float(length)
        if not np.isfinite(length) or length < 0:
            raise GeometryError(f"length must be finite and >= 0, got {length!r}")
        check_size(length, "length", zero_ok=True)
        half = 0.5 * length
        self._init_points((0.0, 0.0, -half), (0.0, 0.0, half), radius)

    def _init_points(self, a, b, radius):
        radius = _positive(radius, "radius")
        points = _axis_points(a, b)
        self._pack(kinds.CAPSULE, (radius,), points)

    @classmethod
    def from_points(cls, a, b, radius):
        capsule = object.__new__(cls)
        capsule._init_points(a, b, radius)
        return capsule

    radius = _param(0)


    @property
    def length(self):
        return float(np.linalg.norm(self.b - self.a))

    def _describe(self):
        return f"radius={self.radius}, a={self.a.tolist()}, b={self.b.tolist()}"


class Ray(Shape):
    """Half-line ``origin + t * direction``, t >= 0 (direction normalised)."""

    __slots__ = ()
    _kind = kinds.RAY

    def __init__(self, origin, direction):
        origin = coordinate_array(origin, "origin", (3,))
        self._pack(self._kind, (), np.stack([origin, unit_vector(direction, "direction")]))

    origin = _point(0)

    direction = _point(1)


    def _describe(self):
        return f"origin={self.origin.tolist()}, direction={self.direction.tolist()}"


class Line(Ray):
    """Infinite line through ``origin`` along ``direction`` (normalised)."""

    __slots__ = ()
    _kind = kinds.LINE


# --------------------------------------------------------------------------------------------
# planes
class Plane(Shape):
    """The plane ``normal . x = offset`` (local frame; normal normalised). Two-sided, no thickness."""

    __slots__ = ()
    _kind = kinds.PLANE

    def __init__(self, normal=(0.0, 0.0, 1.0), offset=0.0):
        normal = unit_vector(normal, "normal")
        offset = float(coordinate_array(offset, "offset", ()))
        self._pack(self._kind, (), np.stack([normal * offset, normal]))

    normal = _point(1)

    @property
    def offset(self):
        return float(self.points[0] @ self.points[1])


    def _describe(self):
        return f"normal={self.normal.tolist()}, offset={self.offset}"


class HalfSpace(Plane):
    """The solid half-space ``normal . x <= offset`` (normal points out of the solid)."""

    __slots__ = ()
    _kind = kinds.HALFSPACE


# --------------------------------------------------------------------------------------------
# round solids
class _RoundAboutZ:
    """A solid of revolution about the local z axis with one ``radius`` and a ``length`` along z
    centred at the origin (cylinders and cones)."""

    __slots__ = ()

    radius = _param(0)

    def local_box(self):
        half = 0.5 * self.length
        return np.array([-self.radius, -self.radius, -half]), np.array([self.radius, self.radius, half])

    def _describe(self):
        return f"radius={self.radius}, length={self.length}"


class Cylinder(_RoundAboutZ, Shape):
    """Solid capped cylinder along local z, from z = -length/2 to +length/2."""

    __slots__ = ()

    def __init__(self, radius, length):
        half = 0.5 * _positive(length, "length")
        self._pack(kinds.CYLINDER, (_positive(radius, "radius"),), [[0, 0, -half], [0, 0, half]])

    @property
    def length(self):
        return float(self.points[1, 2] - self.points[0, 2])


class Cone(_RoundAboutZ, Shape):
    """Solid right circular cone along local z: base disc of ``radius`` at z = -length/2, apex at
    z = +length/2 (the convention of coal / FCL)."""

    __slots__ = ()

    def __init__(self, radius, length):
        half = 0.5 * _positive(length, "length")
        self._pack(kinds.CONE, (_positive(radius, "radius"),), [[0, 0, half], [0, 0, -half]])

    @property
    def length(self):
        return float(self.points[0, 2] - self.points[1, 2])


class Ellipsoid(Shape):
    """Solid ellipsoid with semi-axes ``radii`` = (rx, ry, rz) along the local x, y, z axes.

    Packed as ``points = [center; rx * x_axis; ry * y_axis; rz * z_axis]`` (rows 1..3 are
    direction vectors that rotate with the pose), ``params = radii``."""

    __slots__ = ()

    def __init__(self, radii, center=(0.0, 0.0, 0.0)):
        radii = _sizes(radii, "radii")
        points = np.concatenate([coordinate_array(center, "center", (3,))[None], np.diag(radii)])
        self._pack(kinds.ELLIPSOID, radii, points)

    @property
    def radii(self):
        return self.params[:3]

    def local_box(self):
        return self.center - self.radii, self.center + self.radii

    center = _point(0)

    def _describe(self):
        return f"radii={self.radii.tolist()}"


class TaperedCapsule(_Axis, Shape):
    """The convex hull of two balls on the local z axis: radius ``radius_a`` about z = -length/2
    and ``radius_b`` about z = +length/2 (Jolt's tapered capsule; a robot link's usual bound).
    ``TaperedCapsule.from_points(a, b, radius_a, radius_b)`` for an explicit axis. Equal radii
    make a capsule; a ball holding the other makes that ball."""

    __slots__ = ()

    def __init__(self, radius_a, radius_b, length):
        length = float(_finite_array(length, "length", ()))
        if length < 0.0:
            raise GeometryError(f"length must be >= 0, got {length!r}")
        check_size(length, "length", zero_ok=True)
        self._init_points((0.0, 0.0, -0.5 * length), (0.0, 0.0, 0.5 * length), radius_a, radius_b)

    def _init_points(self, a, b, radius_a, radius_b):
        radii = (_positive(radius_a, "radius_a"), _positive(radius_b, "radius_b"))
        points = _axis_points(a, b)
        self._pack(kinds.TAPERED_CAPSULE, radii, points)

    @classmethod
    def from_points(cls, a, b, radius_a, radius_b):
        shape = object.__new__(cls)
        shape._init_points(a, b, radius_a, radius_b)
        return shape

    radius_a = _param(0)

    radius_b = _param(1)


    def local_box(self):
        radii = self.params[:2, None]
        return (self.points - radii).min(axis=0), (self.points + radii).max(axis=0)

    def _describe(self):
        return f"radius_a={self.radius_a}, radius_b={self.radius_b}, a={self.a.tolist()}, b={self.b.tolist()}"


# --------------------------------------------------------------------------------------------
# polytopes
def _unique_directions(directions, tolerance=1e-9):
    """Unit directions with duplicates and opposites removed (for the separating-axis test): a
    direction is kept unless an earlier kept one has |cos| >= 1 - tolerance with it."""
    lengths = np.linalg.norm(directions, axis=1)
    units = directions[lengths > 0.0] / lengths[lengths > 0.0, None]
    if len(units) <= 64:
        unique = []
        for direction in units:
            if not any(abs(abs(direction @ kept) - 1.0) <= tolerance for kept in unique):
                unique.append(direction)
        return np.array(unique).reshape(-1, 3)
    # many edges (big hulls): candidate pairs from a k-d tree over +-u (|cos| >= 1 - tol is a chord
    # <= sqrt(2 tol), widened by a rounding margin and re-checked exactly), then the same greedy
    # pass; the pairwise loop above is quadratic (minutes on a few thousand edges)
    from scipy.spatial import cKDTree

    count = len(units)
    pairs = cKDTree(np.concatenate([units, -units])).query_pairs(np.sqrt(2.0 * tolerance) * (1 + 1e-6) + 1e-15,
                                                               output_type="ndarray")
    first, second = pairs[:, 0] % count, pairs[:, 1] % count
    close = np.abs(np.abs(np.einsum("ij,ij->i", units[first], units[second])) - 1.0) <= tolerance
    first, second = first[close & (first != second)], second[close & (first != second)]
    earlier = [[] for _ in range(count)]
    for a, b in zip(np.minimum(first, second).tolist(), np.maximum(first, second).tolist()):
        earlier[b].append(a)
    kept = [False] * count
    for i in range(count):
        kept[i] = not any(kept[a] for a in earlier[i])
    return units[np.array(kept, dtype=bool)].reshape(-1, 3)


def _pack_polytope(shape, kind, vertices, plane_normals, plane_offsets, n_sat, triangles, edges, extra=()):
    directions = _unique_directions(vertices[edges[:, 1]] - vertices[edges[:, 0]])
    points = np.concatenate([vertices, plane_normals, directions])
    params = np.concatenate(
        [[len(vertices), len(plane_normals), len(directions), n_sat], plane_offsets, extra]
    )
    shape._pack(kind, params, points, triangles, edges)


def _flat_polygon_planes(vertices, normal):
    """Planes of a flat convex polygon seen as a zero-thickness solid: the face normal first,
    then the in-plane side normals (these are the SAT normals), then the back face."""
    count = len(vertices)
    sides = []
    for i in range(count):
        edge = vertices[(i + 1) % count] - vertices[i]
        side = np.cross(edge, normal)
        length = np.linalg.norm(side)
        sides.append(side / length if length > 0 else side)
    normals = np.array([normal] + sides + [-normal])
    offsets = np.array(
        [normal @ vertices[0]]
        + [sides[i] @ vertices[i] for i in range(count)]
        + [-(normal @ vertices[0])]
    )
    return normals, offsets, count + 1


class Triangle(Shape):
    """A solid triangle ``a, b, c`` (two-sided, zero thickness). Degenerate (zero-area)
    triangles are accepted and behave as the segment or point they are."""

    __slots__ = ()

    def __init__(self, a, b, c):
        vertices = np.stack([coordinate_array(a, "a", (3,)), coordinate_array(b, "b", (3,)), coordinate_array(c, "c", (3,))])
        _check_span(vertices, "the vertices a, b, c")
        normal = np.cross(vertices[1] - vertices[0], vertices[2] - vertices[0])
        length = np.linalg.norm(normal)
        if length > 0:
            normal = normal / length
            normals, offsets, n_sat = _flat_polygon_planes(vertices, normal)
        else:  # zero area: no face planes; the pair engine treats it through its edges
            normals, offsets, n_sat = np.zeros((0, 3)), np.zeros(0), 0
        _pack_polytope(
            self, kinds.TRIANGLE, vertices, normals, offsets, n_sat,
            np.array([[0, 1, 2]]), np.array([[0, 1], [1, 2], [2, 0]]),
        )

    @property
    def vertices(self):
        return self.points[:3]


    def _describe(self):
        return ", ".join(str(v.tolist()) for v in self.vertices)


class Tetrahedron(Shape):
    """A solid tetrahedron. Zero volume is a GeometryError (use Triangle or ConvexPolygon)."""

    __slots__ = ()

    def __init__(self, a, b, c, d):
        vertices = np.stack([coordinate_array(p, n, (3,)) for p, n in zip((a, b, c, d), "abcd")])
        _check_span(vertices, "the vertices a, b, c, d")
        volume = np.dot(np.cross(vertices[1] - vertices[0], vertices[2] - vertices[0]), vertices[3] - vertices[0])
        size = np.abs(vertices - vertices.mean(0)).max()
        if abs(volume) <= 1e-12 * size**3:
            raise GeometryError("tetrahedron vertices are coplanar (zero volume)")
        if volume > 0:  # make faces below outward CCW
            vertices = vertices[[0, 2, 1, 3]]
        faces = np.array([[0, 1, 2], [0, 3, 1], [1, 3, 2], [2, 3, 0]])
        normals = []
        offsets = []
        for face in faces:
            p0, p1, p2 = vertices[face]
            n = np.cross(p1 - p0, p2 - p0)
            n /= np.linalg.norm(n)
            normals.append(n)
            offsets.append(n @ p0)
        edges = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])
        _pack_polytope(self, kinds.TETRAHEDRON, vertices, np.array(normals), np.array(offsets), 4, faces, edges)

    @property
    def vertices(self):
        return self.points[:4]



_BOX_CORNERS = np.array([[(i >> 0) & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.float64) * 2 - 1
_BOX_FACES = np.array(
    [[0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5],  # -x, +x
     [0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3],  # -y, +y
     [0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6]]  # -z, +z
)
_BOX_EDGES = np.array(
    [[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]]
)


class Box(Shape):
    """Solid box with full side lengths ``extents`` centred at the local origin; an oriented box
    (OBB) in the world through its pose. ``Box.from_half_extents`` takes half sides."""

    __slots__ = ()

    def __init__(self, extents, center=(0.0, 0.0, 0.0)):
        extents = _sizes(extents, "extents")
        self._init_box(coordinate_array(center, "center", (3,)), 0.5 * extents, kinds.BOX)

    def _init_box(self, center, half, kind):
        vertices = center + _BOX_CORNERS * half
        eye = np.eye(3)
        normals = np.concatenate([eye, -eye])
        offsets = np.concatenate([center + half, -(center - half)])
        _pack_polytope(
            self, kind, vertices, normals, offsets, 3, _BOX_FACES, _BOX_EDGES,
            extra=np.concatenate([center, half]),
        )

    @classmethod
    def from_half_extents(cls, half_extents, center=(0.0, 0.0, 0.0)):
        return cls(2.0 * coordinate_array(half_extents, "half_extents", (3,)), center)

    @property
    def center(self):
        return self.params[-6:-3]

    @property
    def half_extents(self):
        return self.params[-3:]

    @property
    def extents(self):
        return 2.0 * self.half_extents

    def _describe(self):
        return f"extents={self.extents.tolist()}, center={self.center.tolist()}"


class AABB(Box):
    """Axis-aligned box ``[min, max]`` in its local frame (a Box whose center is off the origin)."""

    __slots__ = ()

    def __init__(self, min, max):  # noqa: A002 - numpy-like argument names
        low = coordinate_array(min, "min", (3,))
        high = coordinate_array(max, "max", (3,))
        if (high <= low).any():
            raise GeometryError(f"max must exceed min on every axis, got min={low.tolist()} max={high.tolist()}")
        for axis, extent in zip("xyz", (high - low).tolist()):
            check_size(extent, f"max - min along {axis}")
        self._init_box(0.5 * (low + high), 0.5 * (high - low), kinds.BOX)

    @property
    def min(self):
        return self.center - self.half_extents

    @property
    def max(self):
        return self.center + self.half_extents

    def _describe(self):
        return f"min={self.min.tolist()}, max={self.max.tolist()}"


class ConvexPolygon(Shape):
    """A solid planar convex polygon (two-sided, zero thickness). Vertices in order; they must be
    coplanar (within 1e-9 of their size) and convex; the winding defines ``normal``."""

    __slots__ = ()

    def __init__(self, vertices):
        vertices = _points(vertices, "vertices", 3)
        _check_span(vertices, "vertices")
        center = vertices.mean(0)
        # Newell's method: robust normal of a (possibly slightly non-planar) polygon (Ericson 12.4.1)
        normal = np.zeros(3)
        for i in range(len(vertices)):
            p, q = vertices[i] - center, vertices[(i + 1) % len(vertices)] - center
            normal += np.cross(p, q)
        length = np.linalg.norm(normal)
        size = np.abs(vertices - center).max()
        if length <= 1e-12 * size * size or size == 0:
            raise GeometryError("polygon vertices are collinear (zero area)")
        normal /= length
        if np.abs((vertices - center) @ normal).max() > 1e-9 * size:
            raise GeometryError("polygon vertices are not coplanar")
        count = len(vertices)
        for i in range(count):
            turn = np.cross(vertices[(i + 1) % count] - vertices[i], vertices[(i + 2) % count] - vertices[(i + 1) % count])
            if turn @ normal < -1e-12 * size * size:
                raise GeometryError("polygon is not convex (or its vertices are not in order)")
        normals, offsets, n_sat = _flat_polygon_planes(vertices, normal)
        fan = np.array([[0, i, i + 1] for i in range(1, count - 1)])
        edges = np.array([[i, (i + 1) % count] for i in range(count)])
        _pack_polytope(self, kinds.POLYGON, vertices, normals, offsets, n_sat, fan, edges, extra=normal)

    @property
    def vertices(self):
        return self.points[: int(self.params[0])]

    @property
    def normal(self):
        return self.params[-3:]



class ConvexPolyhedron(Shape):
    """The convex hull of ``points`` (scipy's Qhull). Coplanar or fewer than 4 distinct points is a
    GeometryError. Exposes ``vertices``, ``faces`` (outward CCW triangles), ``face_planes``
    (merged coplanar facets, rows (nx, ny, nz, d)), ``edges`` and ``vertex_neighbors``."""

    __slots__ = ("vertex_neighbors",)

    def __init__(self, points):
        points = _points(points, "points", 4)
        _check_span(points, "points")
        from scipy.spatial import ConvexHull, QhullError

        try:
            hull = ConvexHull(points)
        except QhullError as exc:
            raise GeometryError(f"points are degenerate (coplanar or collinear): {str(exc).splitlines()[0]}") from exc
        index_of = {old: new for new, old in enumerate(hull.vertices)}
        vertices = points[hull.vertices]
        faces = np.vectorize(index_of.get)(hull.simplices).astype(np.int64)
        center = vertices.mean(0)
        p0, p1, p2 = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
        inward = np.einsum("ij,ij->i", np.cross(p1 - p0, p2 - p0), p0 - center) < 0
        faces[inward] = faces[inward][:, [0, 2, 1]]  # orient every triangle outward
        # merge Qhull's triangles into facets by their plane equations: the first triangle not yet
        # in a facet founds one, which grows across shared edges to every triangle whose plane
        # matches the founder's (on a convex hull the triangles of one plane are edge-connected;
        # a Python loop over facets x triangles took a minute on a 7,000-facet hull)
        p0, p1, p2 = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
        triangle_normals = np.cross(p1 - p0, p2 - p0)
        triangle_normals /= np.linalg.norm(triangle_normals, axis=1, keepdims=True)
        triangle_offsets = np.einsum("ij,ij->i", triangle_normals, p0)
        size = np.abs(vertices - center).max()
        plane_tolerance = 1e-10 * max(size, 1.0)
        adjacent = hull.neighbors.tolist()  # triangle k's neighbour across each of its edges
        normals_list, offsets_list = triangle_normals.tolist(), triangle_offsets.tolist()
        facet_of_triangle = [-1] * len(faces)
        planes = []
        for k in range(len(faces)):
            if facet_of_triangle[k] >= 0:
                continue
            facet = len(planes)
            (nx, ny, nz), d = normals_list[k], offsets_list[k]
            planes.append((triangle_normals[k], triangle_offsets[k]))
            facet_of_triangle[k] = facet
            stack = [k]
            while stack:
                for j in adjacent[stack.pop()]:
                    if facet_of_triangle[j] < 0:
                        mx, my, mz = normals_list[j]
                        if nx * mx + ny * my + nz * mz > 1 - 1e-10 and abs(offsets_list[j] - d) <= plane_tolerance:
                            facet_of_triangle[j] = facet
                            stack.append(j)
        facet_of_triangle = np.array(facet_of_triangle, dtype=np.int64)
        # edges: triangle edges that separate two different facets
        triangle_edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
        edge_keys, edge_of_side = np.unique(triangle_edges, axis=0, return_inverse=True)
        side_facets = np.repeat(facet_of_triangle, 3)
        lowest = np.full(len(edge_keys), len(planes), dtype=np.int64)
        highest = np.full(len(edge_keys), -1, dtype=np.int64)
        np.minimum.at(lowest, edge_of_side.ravel(), side_facets)
        np.maximum.at(highest, edge_of_side.ravel(), side_facets)
        edges = np.ascontiguousarray(edge_keys[lowest != highest], dtype=np.int64).reshape(-1, 2)
        normals = np.array([n for n, _ in planes])
        offsets = np.array([d for _, d in planes])
        neighbors = [[] for _ in range(len(vertices))]
        for a, b in edges:
            neighbors[a].append(int(b))
            neighbors[b].append(int(a))
        neighbors = [sorted(n) for n in neighbors]
        # Vertex adjacency (CSR) rides in params after the plane offsets, for GJK's hill climbing
        # (Ericson 9.5.4): params[4+nf : 5+nf+nv] = start offsets, then the neighbour indices.
        starts = np.concatenate([[0], np.cumsum([len(n) for n in neighbors])])
        adjacency = np.concatenate([starts, [v for n in neighbors for v in n]]).astype(np.float64)
        _pack_polytope(
            self, kinds.POLYHEDRON, vertices, normals, offsets, len(normals), faces, edges, extra=adjacency
        )
        object.__setattr__(self, "vertex_neighbors", tuple(tuple(n) for n in neighbors))

    @property
    def vertices(self):
        return self.points[: int(self.params[0])]

    @property
    def faces(self):
        return self.triangles

    @property
    def face_planes(self):
        nv, nf = int(self.params[0]), int(self.params[1])
        return np.column_stack([self.points[nv : nv + nf], self.params[4 : 4 + nf]])


    def _describe(self):
        return f"{len(self.vertices)} vertices, {len(self.face_planes)} facets"


# --------------------------------------------------------------------------------------------
# rounded shapes: a finite convex core grown by a ball


class Rounded(Shape):
    """The finite convex ``shape`` grown by a ball of ``radius`` (their Minkowski sum): every point
    within ``radius`` of the shape -- the "convex radius" of Jolt and Bullet. Every distance is the
    core's minus ``radius``, exactly, and a contact normal is the core's.

    ``shape``: a point, segment, triangle, tetrahedron, box, convex polygon or polyhedron,
    cylinder, cone or ellipsoid. A sphere, capsule or Rounded shape is unwrapped to its own core
    (a point, a segment) and its radius added, so a rounding never nests. ``radius >= 0``.
    ``core`` is the shape being grown, ``radius`` the ball's radius. Planes, rays, lines and
    meshes are refused (an unbounded or non-convex core).

    Packed (touche/_kernels/base/kinds.py): kind ROUNDED, ``params = [radius, core kind, core
    params...]``, the core's points, triangles and edges."""

    __slots__ = ("core",)

    def __init__(self, shape, radius):
        radius = _finite_array(radius, "radius", ())
        radius = float(radius)
        if radius < 0.0:
            raise GeometryError(f"radius must be >= 0, got {radius!r}")
        check_size(radius, "radius", zero_ok=True)
        if not isinstance(shape, Shape):
            raise GeometryError(f"Rounded needs a touche shape, got {type(shape).__name__}")
        kind = shape.kind
        if kind == kinds.SPHERE:
            core, radius = Point(shape.center), radius + shape.radius
        elif kind == kinds.CAPSULE:
            core, radius = Segment(shape.a, shape.b), radius + shape.radius
        elif kind == kinds.ROUNDED:
            core, radius = shape.core, radius + shape.radius
        elif kind in FINITE_CONVEX:
            core = shape
        else:
            raise GeometryError(f"Rounded needs a finite convex shape, got {type(shape).__name__} (planes, rays, "
                                "lines and meshes have no convex core to grow)")
        check_size(radius, "radius", zero_ok=True)
        self._init_rounded(core, radius)

    def _init_rounded(self, core, radius):
        core_kind, core_params, core_points, core_triangles, core_edges = core._packed
        params = np.concatenate([[radius, float(core_kind)], core_params])
        object.__setattr__(self, "core", core)  # first: _pack may size the shape by local_box
        self._pack(kinds.ROUNDED, params, core_points, core_triangles, core_edges)

    def __reduce__(self):
        return (_restore_rounded, (type(self), self.core, self.radius))

    radius = _param(0)

    def local_box(self):
        low, high = self.core.local_box()
        return low - self.radius, high + self.radius

    def _describe(self):
        return f"{self.core!r}, radius={self.radius}"


def _restore_rounded(cls, core, radius):
    shape = object.__new__(cls)
    shape._init_rounded(core, radius)
    return shape


class RoundedBox(Rounded):
    """A box of full side lengths ``extents`` (centred at ``center``) whose edges and corners are
    rounded with ``radius``: the Box of sides ``extents - 2 radius`` grown by ``radius``, so the
    outer size stays ``extents`` (the convention of Jolt's and Bullet's convex radius).
    ``0 <= 2 radius < min(extents)``."""

    __slots__ = ()

    def __init__(self, extents, radius, center=(0.0, 0.0, 0.0)):
        extents = coordinate_array(extents, "extents", (3,))
        radius = float(_finite_array(radius, "radius", ()))
        if radius < 0.0 or not 2.0 * radius < extents.min():
            raise GeometryError(f"RoundedBox needs 0 <= 2 radius < min(extents), got radius {radius!r} and "
                                f"extents {extents.tolist()}")
        check_size(radius, "radius", zero_ok=True)
        self._init_rounded(Box(extents - 2.0 * radius, center), radius)

    @property
    def extents(self):
        return self.core.extents + 2.0 * self.radius

    @property
    def half_extents(self):
        return 0.5 * self.extents

    @property
    def center(self):
        return self.core.center

    def _describe(self):
        return f"extents={self.extents.tolist()}, radius={self.radius}, center={self.center.tolist()}"


# kinds whose packed positions (with params[0] as a radius where RADIUS_PARAM says so) hold them
_POINTS_HOLD_IT = frozenset((kinds.POINT, kinds.SPHERE, kinds.SEGMENT, kinds.CAPSULE, kinds.TRIANGLE,
                             kinds.TETRAHEDRON, kinds.BOX, kinds.POLYGON, kinds.POLYHEDRON, kinds.CYLINDER,
                             kinds.CONE, kinds.MESH))


def local_bounding_sphere(shape):
    """``(centre (3,), radius)`` of a ball holding ``shape`` in its own frame; radius inf for an
    unbounded shape (a plane, a half-space, a line, a ray)."""
    kind = shape.kind
    if kind in (kinds.PLANE, kinds.HALFSPACE, kinds.RAY, kinds.LINE):
        return np.zeros(3), float("inf")
    if kind == kinds.ROUNDED:
        center, radius = local_bounding_sphere(shape.core)
        return center, radius + shape.radius
    params, packed_points = shape._packed[1], shape._packed[2]
    if kind == kinds.ELLIPSOID:  # points: the centre, then the three semi-axes
        return packed_points[0].copy(), float(np.max(params[:3]))
    if kind not in _POINTS_HOLD_IT:  # other solids: the ball around their box
        low, high = shape.local_box()
        return 0.5 * (low + high), float(0.5 * np.linalg.norm(high - low))
    if kind == kinds.MESH:
        points = shape.vertices
    elif kinds.TRIANGLE <= kind <= kinds.POLYHEDRON:
        points = packed_points[: int(params[0])]
    else:
        points = packed_points
    center = 0.5 * (points.min(axis=0) + points.max(axis=0))
    radius = float(np.sqrt(((points - center) ** 2).sum(axis=1).max()))
    if kind in RADIUS_PARAM:
        radius += float(params[0])
    return center, radius


# --------------------------------------------------------------------------------------------
# Lazy BVH builds take one of these locks (picked by the mesh's id: builds of different meshes
# mostly run in parallel; a lock per mesh would have to be a slot, and locks do not pickle).
_BVH_BUILD_LOCKS = tuple(threading.Lock() for _ in range(64))


def _new_build_locks_after_fork():
    # a build running in another thread at fork time never finishes in the child: fresh locks
    # (its mesh simply has no tree yet there and builds one on first use)
    global _BVH_BUILD_LOCKS
    _BVH_BUILD_LOCKS = tuple(threading.Lock() for _ in range(64))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_build_locks_after_fork)

# Builds a mesh's default tree: touche.bvh registers its BVH constructor here when it is imported
# (``import touche`` imports it, so it is set before any mesh exists), so that the BVH module,
# which builds on the shapes, is not imported back by them.
_tree_builder = None


def register_tree_builder(builder):
    """``builder(mesh)`` -> the mesh's default tree (touche.bvh calls this once)."""
    global _tree_builder
    _tree_builder = builder


class TriangleMesh(Shape):
    """A triangle mesh: a surface (two-sided triangles; the pair verbs see no inside), whose
    inside / outside for points comes from the winding number (``touche.contains``,
    ``touche.signed_distance_points``). ``vertices (n, 3)``, ``faces (m, 3)`` int indices.
    Zero-area triangles are kept. ``TriangleMesh.from_trimesh(mesh)`` and any ``trimesh.Trimesh`` passed to a query work."""

    # _pair_arguments: the solid-pair kernel's arguments (touche.solids), kept on the mesh for a
    # far pair's per-call cost; rebuilt after unpickling (_UNPICKLED_SLOTS)
    __slots__ = ("_bvh", "solid", "_pair_arguments")

    def __init__(self, vertices, faces, *, solid=False):
        object.__setattr__(self, "_bvh", None)
        object.__setattr__(self, "solid", False)
        vertices = _points(vertices, "vertices", 3)
        _check_span(vertices, "vertices")
        try:
            faces_array = np.array(faces)
        except (TypeError, ValueError) as exc:
            raise GeometryError("faces must be an integer array of shape (m, 3)") from exc
        if faces_array.ndim != 2 or faces_array.shape[1] != 3 or faces_array.shape[0] == 0:
            raise GeometryError(f"faces must have shape (m, 3) with m > 0, got {faces_array.shape}")
        if not np.issubdtype(faces_array.dtype, np.integer):
            if not np.issubdtype(faces_array.dtype, np.floating) or not np.all(np.mod(faces_array, 1) == 0):
                raise GeometryError("faces must hold integer vertex indices")
        faces_array = faces_array.astype(np.int64)
        if faces_array.min() < 0 or faces_array.max() >= len(vertices):
            raise GeometryError(
                f"faces index vertices out of range [0, {len(vertices)}): "
                f"min {faces_array.min()}, max {faces_array.max()}"
            )
        self._pack(kinds.MESH, (), vertices, faces_array)
        if solid:
            solid_orientation(vertices, faces_array)  # GeometryError naming the problem
            object.__setattr__(self, "solid", True)

    @classmethod
    def from_trimesh(cls, mesh, *, solid=False):
        return cls(np.asarray(mesh.vertices), np.asarray(mesh.faces), solid=solid)

    def as_solid(self):
        """This mesh declared SOLID: the volume it bounds, not only its surface (``solid``
        True). Then ``touche.intersects`` of two meshes is also true when one solid holds the
        other (or a mesh) wholly inside, with no surface contact. The mesh must be closed, edge-
        manifold and consistently oriented (vertices with identical coordinates welded first):
        ``GeometryError`` naming the problem otherwise (:func:`solid_orientation`). Returns a new
        TriangleMesh sharing nothing mutable; ``self`` is returned when already solid."""
        if self.solid:
            return self
        return TriangleMesh(self._packed[2], self._packed[3], solid=True)

    @property
    def vertices(self):
        return self.points

    @property
    def faces(self):
        return self.triangles

    @property
    def bvh(self):
        """The mesh's bounding-volume hierarchy (touche.bvh.BVH, default build), built on first
        use and kept (it pickles with the mesh)."""
        tree = self._bvh
        if tree is None:
            # built once even when several threads ask first: the others wait for it
            with _BVH_BUILD_LOCKS[id(self) % len(_BVH_BUILD_LOCKS)]:
                tree = self._bvh
                if tree is None:
                    tree = _tree_builder(self)
                    object.__setattr__(self, "_bvh", tree)
        return tree


    def _describe(self):
        return f"{len(self.points)} vertices, {len(self.triangles)} faces"


def solid_orientation(vertices, faces):
    """+1 if the closed mesh faces outward, -1 if inward; ``GeometryError`` naming the first
    problem found when the triangles do not bound a solid: an open edge (used by one triangle),
    a non-manifold edge (three or more), two neighbours with inconsistent orientation (a shared
    edge walked the same way by both), or no enclosed volume. Vertices with identical
    coordinates are welded first; zero-length edges are skipped."""
    welded, inverse = np.unique(np.asarray(vertices, dtype=np.float64), axis=0, return_inverse=True)
    faces = inverse.reshape(-1)[np.asarray(faces, dtype=np.int64)]
    directed = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    directed = directed[directed[:, 0] != directed[:, 1]]
    if len(directed) == 0:
        raise GeometryError("not a solid: every triangle has zero area")
    undirected = np.sort(directed, axis=1)
    edges, counts = np.unique(undirected, axis=0, return_counts=True)
    if (counts == 1).any():
        edge = edges[np.argmax(counts == 1)]
        raise GeometryError(f"not a solid: the mesh is open ({int((counts == 1).sum())} edges used by one "
                            f"triangle only, e.g. between welded vertices {edge[0]} and {edge[1]})")
    if (counts > 2).any():
        edge = edges[np.argmax(counts > 2)]
        raise GeometryError(f"not a solid: the mesh is non-manifold ({int((counts > 2).sum())} edges shared "
                            f"by three or more triangles, e.g. between welded vertices {edge[0]} and {edge[1]})")
    _, directed_counts = np.unique(directed, axis=0, return_counts=True)
    if (directed_counts > 1).any():
        raise GeometryError(f"not a solid: inconsistent orientation ({int((directed_counts > 1).sum())} edges "
                            "walked in the same direction by both of their triangles; flip the faces of one side)")
    a, b, c = (welded[faces[:, i]] for i in range(3))
    center = welded.mean(axis=0)  # relative to a near point: less cancellation
    volume = np.einsum("ij,ij->", a - center, np.cross(b - center, c - center)) / 6.0
    size = float(np.ptp(welded, axis=0).max())
    if not abs(volume) > 1e-12 * size ** 3:
        raise GeometryError("not a solid: the mesh encloses no volume")
    return 1 if volume > 0.0 else -1


def as_shape(value, name="shape"):
    """Shapes pass through; a ``trimesh.Trimesh`` becomes a TriangleMesh."""
    if isinstance(value, Shape):
        return value
    module = type(value).__module__
    if module.startswith("trimesh") and hasattr(value, "faces") and hasattr(value, "vertices"):
        return TriangleMesh.from_trimesh(value)
    raise GeometryError(f"{name} must be a touche shape or a trimesh.Trimesh, got {type(value).__name__}")
