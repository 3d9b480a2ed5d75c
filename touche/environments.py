"""Environment shapes: a terrain height field and an occupancy map built from a
point cloud. Both are :class:`touche.TriangleMesh` subclasses (kind MESH), so every verb that
takes a mesh takes them -- ``intersects``, ``distance``, ``signed_distance``, ``closest_point``,
``raycast``, ``contacts`` where meshes are supported, ``time_of_impact``, ``contains``,
worlds and robot environments -- through the mesh BVH path, with no new dispatch rows.

    import touche as tc
    ground = tc.HeightField(heights, spacing=(0.1, 0.1))            # solid terrain
    cloud = tc.OccupancyMap.from_points(points, voxel_size=0.05)     # occupied voxels, solid
    tc.distance(tc.Sphere(0.2), pose, ground, None)

``HeightField``: the surface z = h(x, y) over a regular grid, two triangles per cell (the
diagonal from the cell's (x_j, y_i) corner to its (x_j+1, y_i+1) corner, as coal's HeightField
splits its cells), and, when ``solid`` (the default, as coal's), the volume between that surface
and a horizontal ``floor``: side walls and the floor close it into a solid mesh. ``OccupancyMap``:
the voxels of a regular grid that hold at least one point (voxel ``k`` along an axis covers
``[origin + k s, origin + (k + 1) s)``, octomap's convention), answered as solid cubes: the mesh
is the boundary of their union (only faces between an occupied and an empty voxel), closed and
outward-facing, hence solid.

Both are built by vectorised numpy from arrays they know to be valid, and packed directly through
``Shape._pack`` (the path ``TriangleMesh.__init__`` ends in) without ``TriangleMesh``'s generic
checks or ``solid_orientation``'s welding pass: the meshes are closed, consistently oriented
and edge-manifold with distinct vertex coordinates by construction (the tests check it with
``touche.shapes.solid_orientation`` and ``touche.meshquery.is_closed``). Docs: docs/environments.md.
"""
from __future__ import annotations

import numpy as np

from . import tolerance
from ._kernels import kinds
from .errors import GeometryError
from .shapes import TriangleMesh, check_size, coordinate_array

_MAX = tolerance.MAX_COORDINATE
# voxel / grid indices stay below this magnitude: index * size is then exact enough that distinct
# lattice points keep distinct coordinates (and half-integer lattice points too)
_MAX_INDEX = 2 ** 40


def _finite(value, name, ndim=None):
    # no copy: a height field or a point cloud can be large, and each user copies what it keeps
    return coordinate_array(value, name, ndim=ndim, copy=False)


def _sizes(value, name, count):
    array = np.array(_finite(value, name), dtype=np.float64, copy=True)  # never the caller's array
    if array.ndim == 0:
        array = np.full(count, float(array))
    if array.shape != (count,):
        raise GeometryError(f"{name} must be a number or {count} numbers, got shape {array.shape}")
    for x in array:
        if not x > 0.0:
            raise GeometryError(f"{name} must be > 0, got {array.tolist()}")
        check_size(float(x), name)
    return array


class _KnownTopology:
    """Mixin: the meshes of this module have distinct vertex coordinates, and are closed and
    outward-facing exactly when solid; touche.meshquery takes that instead of welding and
    checking (seconds on meshes of millions of triangles)."""

    __slots__ = ()

    def _known_topology(self):
        return (self._packed[2], self._packed[3], bool(self.solid), 1.0)


def _trusted_mesh(obj, vertices, faces, solid):
    """Pack ``obj`` (a TriangleMesh subclass instance made by ``object.__new__``) as a mesh from
    arrays known valid: finite in-range float64 vertices with distinct coordinates, int64 faces
    indexing them, closed and outward-facing when ``solid``. The same packing as
    ``TriangleMesh.__init__`` (``Shape._pack``), without its checks."""
    object.__setattr__(obj, "_bvh", None)
    object.__setattr__(obj, "solid", bool(solid))
    obj._pack(kinds.MESH, (), vertices, faces)


# --------------------------------------------------------------------------------------------
# height field
class HeightField(_KnownTopology, TriangleMesh):
    """A terrain: the surface z = ``heights[i, j]`` at grid point (x, y) = ``origin +
    (j dx, i dy)`` (rows along y, columns along x), two triangles per cell (diagonal from the
    cell's lowest-x lowest-y corner to its highest-x highest-y corner, as coal splits cells).

    ``heights (rows, cols)``, rows and cols >= 2, finite. ``spacing``: (dx, dy) or one number,
    > 0. ``origin``: (x, y) of grid point [0, 0]. ``solid`` (default True, as coal's
    HeightField): the volume between the surface and the horizontal plane z = ``floor`` is solid
    (side walls and a floor close the mesh; a shape under the surface intersects it, and
    ``distance`` reports its depth). ``floor`` defaults to ``min(heights) - max(ptp(heights), dx,
    dy)`` (a slab under the lowest point at least as thick as the relief and a cell); it must lie
    strictly below every height (a terrain touching its floor would pinch the solid to zero
    thickness there; coal instead clamps heights up to its ``min_height``: see
    :meth:`from_coal`). ``solid=False``: the surface alone (two-sided triangles, no inside).

    Attributes: ``heights`` (read-only copy), ``spacing (2,)``, ``origin (2,)``, ``floor``
    (None when not solid), ``grid_shape``. Errors: ``GeometryError`` for NaN / inf heights,
    fewer than 2 rows or columns, spacing <= 0, a floor not below the lowest height, or a grid
    beyond touche's coordinate range."""

    __slots__ = ("heights", "spacing", "origin", "floor")

    def __init__(self, heights, spacing=1.0, origin=(0.0, 0.0), *, solid=True, floor=None):
        heights = _finite(heights, "heights", 2)
        rows, cols = heights.shape
        if rows < 2 or cols < 2:
            raise GeometryError(f"heights needs at least 2 rows and 2 columns (one cell), got shape {heights.shape}")
        spacing = _sizes(spacing, "spacing", 2)
        origin = _finite(origin, "origin", 1)
        if origin.shape != (2,):
            raise GeometryError(f"origin must be (x, y), got shape {origin.shape}")
        far = np.abs(origin) + spacing * np.array([cols - 1, rows - 1])
        if float(far.max()) > _MAX:
            raise GeometryError(f"the grid reaches |x| = {float(far.max())!r}, outside touche's range (<= {_MAX:g})")
        low, high = float(heights.min()), float(heights.max())
        if solid:
            if floor is None:
                floor = low - max(high - low, float(spacing.max()))
            floor = float(_finite(floor, "floor", 0))
            if not floor < low:
                raise GeometryError(f"floor {floor!r} is not below the lowest height {low!r}: the solid lies between "
                                    "the surface and the floor, which must be strictly lower (floor < min(heights); "
                                    "a terrain touching its floor would pinch the solid to zero thickness)")
        else:
            floor = None
        vertices, faces = _height_field_mesh(heights, spacing, origin, floor)
        _trusted_mesh(self, vertices, faces, solid)
        frozen = np.array(heights, dtype=np.float64, copy=True)
        frozen.setflags(write=False)
        spacing.setflags(write=False)
        origin = np.array(origin, copy=True)
        origin.setflags(write=False)
        object.__setattr__(self, "heights", frozen)
        object.__setattr__(self, "spacing", spacing)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "floor", floor)

    @classmethod
    def from_coal(cls, x_dim, y_dim, heights, min_height=0.0):
        """The height field coal's ``HeightField(x_dim, y_dim, heights, min_height)`` describes
        (coal's row 0 lies at y = +y_dim / 2, its heights are clamped up to ``min_height``, its
        grid is centred on the origin, solid down to ``min_height``). Heights at or below
        ``min_height`` (flat cells on coal's floor) are a ``GeometryError`` here: touche's floor lies
        strictly below the terrain."""
        heights = _finite(heights, "heights", 2)
        rows, cols = heights.shape
        if rows < 2 or cols < 2:
            raise GeometryError(f"heights needs at least 2 rows and 2 columns (one cell), got shape {heights.shape}")
        clamped = np.maximum(heights, float(min_height))[::-1]
        return cls(clamped, spacing=(x_dim / (cols - 1), y_dim / (rows - 1)), origin=(-0.5 * x_dim, -0.5 * y_dim),
                   solid=True, floor=float(min_height))

    @property
    def grid_shape(self):
        return self.heights.shape

    def as_solid(self):
        """This height field solid down to the default floor (``self`` when already solid)."""
        if self.solid:
            return self
        return HeightField(self.heights, self.spacing, self.origin, solid=True)

    def height_at(self, x, y):
        """The surface height at ``(x, y)`` (arrays broadcast), from the cell's triangles; NaN
        outside the grid."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        rows, cols = self.heights.shape
        u = (x - self.origin[0]) / self.spacing[0]
        v = (y - self.origin[1]) / self.spacing[1]
        outside = (u < 0) | (u > cols - 1) | (v < 0) | (v > rows - 1)
        j = np.clip(np.floor(u), 0, cols - 2).astype(np.int64)
        i = np.clip(np.floor(v), 0, rows - 2).astype(np.int64)
        fu, fv = u - j, v - i
        h = self.heights
        h00, h10, h01, h11 = h[i, j], h[i, j + 1], h[i + 1, j], h[i + 1, j + 1]
        # lower triangle (00, 10, 11) where fu >= fv, upper (00, 11, 01) otherwise
        lower = h00 + fu * (h10 - h00) + fv * (h11 - h10)
        upper = h00 + fv * (h01 - h00) + fu * (h11 - h01)
        z = np.where(fu >= fv, lower, upper)
        return np.where(outside, np.nan, z)

    def __reduce__(self):
        return (_restore, (HeightField, self.packed(), self._bvh, self.solid,
                           {"heights": self.heights, "spacing": self.spacing, "origin": self.origin, "floor": self.floor}))

    def _describe(self):
        rows, cols = self.heights.shape
        what = f"solid to floor {self.floor:g}" if self.solid else "surface"
        return f"{rows}x{cols} grid, spacing {self.spacing.tolist()}, {what}, {len(self.triangles)} faces"


def _height_field_mesh(heights, spacing, origin, floor):
    """(vertices, faces) of the terrain surface, plus walls and floor when ``floor`` is not None."""
    rows, cols = heights.shape
    xs = origin[0] + spacing[0] * np.arange(cols)
    ys = origin[1] + spacing[1] * np.arange(rows)
    top = np.empty((rows, cols, 3))
    top[:, :, 0] = xs[None, :]
    top[:, :, 1] = ys[:, None]
    top[:, :, 2] = heights
    top = top.reshape(-1, 3)
    index = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    v00 = index[:-1, :-1].reshape(-1)
    v10 = index[:-1, 1:].reshape(-1)  # +x
    v01 = index[1:, :-1].reshape(-1)  # +y
    v11 = index[1:, 1:].reshape(-1)
    faces = np.empty((2 * len(v00), 3), dtype=np.int64)
    faces[0::2, 0], faces[0::2, 1], faces[0::2, 2] = v00, v10, v11  # counter-clockwise seen from +z
    faces[1::2, 0], faces[1::2, 1], faces[1::2, 2] = v00, v11, v01
    if floor is None:
        return top, faces
    # the boundary loop, counter-clockwise seen from +z: south (i = 0), east, north, west
    loop = np.concatenate([index[0, :], index[1:, -1], index[-1, -2::-1], index[-2:0:-1, 0]])
    bottom = len(top) + np.arange(len(loop), dtype=np.int64)
    below = top[loop].copy()
    below[:, 2] = floor
    vertices = np.concatenate([top, below])
    a_top, b_top = loop, np.roll(loop, -1)
    a_bot, b_bot = bottom, np.roll(bottom, -1)
    walls = np.concatenate([np.stack([a_bot, b_bot, b_top], axis=1), np.stack([a_bot, b_top, a_top], axis=1)])
    # the floor (facing -z): strips between two opposite sides, fanned at both ends over the
    # other two sides' bottom vertices (no T-junction with the walls)
    south = bottom[:cols]                                      # (x_0 .. x_c-1, y_0)
    east = bottom[cols - 1:cols + rows - 1]                    # (x_c-1, y_0 .. y_r-1)
    north = bottom[cols + rows - 2:2 * cols + rows - 2][::-1]  # (x_0 .. x_c-1, y_r-1)
    west = np.concatenate([bottom[2 * cols + rows - 3:], bottom[:1]])[::-1]  # (x_0, y_0 .. y_r-1)
    if cols >= 3:  # counter-clockwise from +z in the (x, y) frame: flip to face -z
        floor_faces = _strips(south, north, west, east)[:, [0, 2, 1]]
    else:  # strips along y: the (y, x) frame is a reflection, its counter-clockwise faces -z
        floor_faces = _strips(west, east, south, north)
    return vertices, np.concatenate([faces, walls, floor_faces])


def _strips(south, north, west, east):
    """Triangles (counter-clockwise in the frame where ``south`` and ``north`` run along the
    first axis, ``west`` and ``east`` along the second, each ordered by increasing coordinate)
    tiling the rectangle whose boundary holds exactly these vertices: quads between south[j]
    and north[j], the first and last quads fanned over the west and east side's vertices. Needs
    len(south) >= 3, or a 2 x 2 grid (no side vertex besides the corners)."""
    c, r = len(south), len(west)
    if c == 2:  # a single cell (r == 2): the quad's two triangles
        return np.array([[south[0], south[1], north[1]], [south[0], north[1], north[0]]], dtype=np.int64)
    parts = []
    if c > 3:  # inner strips j = 1 .. c - 3
        s0, s1, n0, n1 = south[1:-2], south[2:-1], north[1:-2], north[2:-1]
        parts += [np.stack([s0, s1, n1], axis=1), np.stack([s0, n1, n0], axis=1)]
    # first strip: south 0, south 1, north 1, north 0, west r-2 .. west 1, fanned from south 1
    fan = np.concatenate([north[1:2], north[:1], west[r - 2:0:-1], south[:1]])
    parts.append(np.stack([np.full(len(fan) - 1, south[1]), fan[:-1], fan[1:]], axis=1))
    # last strip: south c-2, south c-1, east 1 .. east r-2, north c-1, north c-2, fanned from south c-2
    fan = np.concatenate([south[-1:], east[1:-1], north[-1:], north[-2:-1]])
    parts.append(np.stack([np.full(len(fan) - 1, south[-2]), fan[:-1], fan[1:]], axis=1))
    return np.concatenate(parts).astype(np.int64)


def _restore(cls, packed, bvh, solid, extra):
    mesh = object.__new__(cls)
    mesh._pack(*packed)
    object.__setattr__(mesh, "_bvh", bvh)
    object.__setattr__(mesh, "solid", solid)
    for name, value in extra.items():
        object.__setattr__(mesh, name, value)
    return mesh


# --------------------------------------------------------------------------------------------
# occupancy map
class OccupancyMap(_KnownTopology, TriangleMesh):
    """Occupied voxels of a regular grid, answered as solid cubes (like fcl's OcTree / octomap
    leaves): the mesh is the boundary of the union of the occupied voxels -- only the faces
    between an occupied and an empty voxel -- closed, outward-facing, hence ``solid``. Voxel
    ``(i, j, k)`` is the cube ``origin + voxel_size * ([i, i+1] x [j, j+1] x [k, k+1])``.

    ``OccupancyMap(voxels, voxel_size, origin=(0, 0, 0))``: from integer voxel indices
    ``(k, 3)`` (duplicates allowed). :meth:`from_points` builds it from a point cloud. Two
    voxels meeting along an edge only (diagonal neighbours with both voxels beside that edge
    empty) pinch the union there: the mesh keeps it closed and edge-manifold by giving one of
    them a vertex at the edge's midpoint (its two faces along that edge are fanned from their
    centres), so ``touche.contains`` and the solid verbs take it; the geometry is unchanged.

    Attributes: ``voxels (k, 3)`` int64 (distinct, sorted by z, then y, then x; read-only),
    ``voxel_size``, ``origin (3,)``. Errors: ``GeometryError`` for no voxels, non-integer
    indices, voxel_size <= 0, or a grid beyond 2**40 voxels from the origin along an axis."""

    __slots__ = ("voxels", "voxel_size", "origin")

    def __init__(self, voxels, voxel_size, origin=(0.0, 0.0, 0.0)):
        try:
            keys = np.asarray(voxels)
        except (TypeError, ValueError) as exc:
            raise GeometryError("voxels must be an integer array of shape (k, 3)") from exc
        if keys.ndim != 2 or keys.shape[1] != 3:
            raise GeometryError(f"voxels must have shape (k, 3), got {keys.shape}")
        if not np.issubdtype(keys.dtype, np.integer):
            if not np.issubdtype(keys.dtype, np.floating) or not np.isfinite(keys).all() or (np.mod(keys, 1) != 0).any():
                raise GeometryError("voxels must hold integer voxel indices")
            if keys.size and float(np.abs(keys).max()) > _MAX_INDEX:
                raise GeometryError(f"voxel indices must lie within +-2**40, got {float(np.abs(keys).max())!r}")
        keys = keys.astype(np.int64)
        self._build(keys, voxel_size, origin)

    @classmethod
    def from_points(cls, points, voxel_size, origin=(0.0, 0.0, 0.0)):
        """The voxels holding at least one of ``points (n, 3)``: voxel ``floor((p - origin) /
        voxel_size)`` per point (octomap's key; a point on a face between two voxels goes to the
        upper one, and lies in both closed cubes anyway), built in one vectorised pass (numpy
        sort, no loop over points). Errors: ``GeometryError`` for an empty cloud, NaN / inf or
        out-of-range coordinates, voxel_size <= 0, or a cloud reaching beyond 2**40 voxels from
        the origin."""
        array = _finite(points, "points")
        if array.ndim != 2 or array.shape[1] != 3:
            raise GeometryError(f"points must have shape (n, 3), got {array.shape}")
        if len(array) == 0:
            raise GeometryError("points is empty: an occupancy map needs at least one point")
        size = float(_sizes(voxel_size, "voxel_size", 1)[0])
        origin = _origin3(origin)
        scaled = np.floor((array - origin) / size)
        if float(np.abs(scaled).max()) > _MAX_INDEX:
            raise GeometryError(f"points reach {float(np.abs(scaled).max()):.3g} voxels from the origin, beyond touche's "
                                f"2**40 (coordinates would no longer separate the voxels): use a larger voxel_size or "
                                f"an origin nearer the cloud")
        mesh = object.__new__(cls)
        mesh._build(scaled.astype(np.int64), size, origin)
        return mesh

    def _build(self, keys, voxel_size, origin):
        if len(keys) == 0:
            raise GeometryError("an occupancy map needs at least one voxel, got none")
        size = float(_sizes(voxel_size, "voxel_size", 1)[0])
        origin = _origin3(origin)
        if int(np.abs(keys).max()) > _MAX_INDEX:
            raise GeometryError(f"voxel indices must lie within +-2**40, got {int(np.abs(keys).max())}")
        reach = np.abs(origin) + size * (np.abs(keys).max(axis=0) + 1.0)
        if float(reach.max()) > _MAX:
            raise GeometryError(f"the voxels reach |x| = {float(reach.max())!r}, outside touche's range (<= {_MAX:g})")
        voxels, vertices, faces = _voxel_boundary(keys, size, origin)
        _trusted_mesh(self, vertices, faces, True)
        voxels.setflags(write=False)
        origin.setflags(write=False)
        object.__setattr__(self, "voxels", voxels)
        object.__setattr__(self, "voxel_size", size)
        object.__setattr__(self, "origin", origin)

    def boxes(self):
        """``(low (k, 3), high (k, 3))``: the occupied voxels' corners (local frame)."""
        low = self.origin + self.voxel_size * self.voxels
        return low, low + self.voxel_size

    def occupied(self, points):
        """(n,) bool: the voxel holding each local point (``floor((p - origin) / voxel_size)``)
        is occupied."""
        points = _finite(points, "points").reshape(-1, 3)
        keys = np.floor((points - self.origin) / self.voxel_size)
        low, high = self.voxels.min(axis=0), self.voxels.max(axis=0)
        inside = ((keys >= low) & (keys <= high)).all(axis=1)
        dims = high - low + 1
        codes = _codes(self.voxels - low, dims)
        found = np.zeros(len(points), dtype=bool)
        if inside.any():
            query = _codes(keys[inside].astype(np.int64) - low, dims)
            where = np.minimum(np.searchsorted(codes, query), len(codes) - 1)
            found[inside] = codes[where] == query
        return found

    def __reduce__(self):
        return (_restore, (OccupancyMap, self.packed(), self._bvh, True,
                           {"voxels": self.voxels, "voxel_size": self.voxel_size, "origin": self.origin}))

    def _describe(self):
        return f"{len(self.voxels)} voxels of {self.voxel_size:g}, {len(self.triangles)} faces"


def _origin3(origin):
    origin = np.array(_finite(origin, "origin"), dtype=np.float64)
    if origin.shape != (3,):
        raise GeometryError(f"origin must be (x, y, z), got shape {origin.shape}")
    return origin


def _codes(keys, dims):
    """One int64 per voxel of a box of ``dims`` voxels (x fastest), monotone in (z, y, x)."""
    return keys[:, 0] + dims[0] * (keys[:, 1] + dims[1] * keys[:, 2])


def _sorted_unique(values):
    values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


# Faces of a voxel: for each direction (axis n, sign), its 4 corners counter-clockwise seen from
# outside, as offsets in {0, 1}^3 from the voxel's lowest corner.
def _face_tables():
    corners, edges, centers = [], [], []
    for axis in range(3):
        u, w = (axis + 1) % 3, (axis + 2) % 3  # (u, w, axis) right-handed
        for sign in (1, -1):
            square = [(0, 0), (1, 0), (1, 1), (0, 1)] if sign > 0 else [(0, 0), (0, 1), (1, 1), (1, 0)]
            face = []
            for a, b in square:
                offset = [0, 0, 0]
                offset[axis] = 1 if sign > 0 else 0
                offset[u], offset[w] = a, b
                face.append(offset)
            corners.append(face)
            edges.append([_edge_id(face[k], face[(k + 1) % 4]) for k in range(4)])
            center = [1, 1, 1]
            center[axis] = 2 if sign > 0 else 0
            centers.append(center)  # doubled offset
    return np.array(corners, dtype=np.int64), np.array(edges, dtype=np.int64), np.array(centers, dtype=np.int64)


def _edge_id(p, q):
    """Edge of the unit cube between corners p and q: 4 * axis + 2 * (offset along the first
    other axis) + (offset along the second)."""
    axis = [i for i in range(3) if p[i] != q[i]][0]
    first, second = [i for i in range(3) if i != axis]
    return 4 * axis + 2 * p[first] + p[second]


_FACE_CORNERS, _FACE_EDGES, _FACE_CENTERS = _face_tables()
_CORNERS = np.array([[c & 1, (c >> 1) & 1, c >> 2] for c in range(8)], dtype=np.int64)  # corner c's offset
_FACE_CORNER_INDEX = _FACE_CORNERS @ np.array([1, 2, 4])  # (6, 4): the corners' numbers c


def _voxel_boundary(keys, size, origin):
    """(voxels (k, 3) distinct sorted, vertices, faces) of the boundary of the union of the voxels."""
    low = keys.min(axis=0) - 1  # one empty layer around: every neighbour has a code
    dims = keys.max(axis=0) - low + 2
    if float(dims[0]) * float(dims[1]) * float(dims[2]) * 8.0 >= 2.0 ** 62:
        raise GeometryError(f"the voxels span {(dims - 2).tolist()} voxels along x, y, z: more than touche's "
                            "occupancy maps index (about 2**59 cells in their bounding box); use a larger voxel_size")
    occupied = _sorted_unique(_codes(keys - low, dims))
    count = len(occupied)
    strides = (1, int(dims[0]), int(dims[0] * dims[1]))
    exposed = []  # per direction (axis, sign): (count,) bool, the neighbour that way is empty
    neighbour = []
    for axis, stride in enumerate(strides):
        target = occupied + stride
        at = np.minimum(np.searchsorted(occupied, target), count - 1)
        has_plus = occupied[at] == target
        has_minus = np.zeros(count, dtype=bool)
        has_minus[at[has_plus]] = True
        exposed += [~has_plus, ~has_minus]
        neighbour.append(stride)
    # pinched edges: v and w = v + e_b +- e_c occupied with both voxels beside their common edge
    # empty; w gets the edge's midpoint (edge mask bit per voxel)
    split = np.zeros(count, dtype=np.int64)
    for axis in range(3):
        b, c = [i for i in range(3) if i != axis]
        for sign_c in (1, -1):
            candidates = np.flatnonzero(exposed[2 * b] & exposed[2 * c + (0 if sign_c > 0 else 1)])
            if len(candidates) == 0:
                continue
            target = occupied[candidates] + strides[b] + sign_c * strides[c]
            at = np.minimum(np.searchsorted(occupied, target), count - 1)
            hit = occupied[at] == target
            # the edge seen from w: offset 0 along b, and 0 along c (w above v in c) or 1 (below)
            bit = 4 * axis + 2 * 0 + (0 if sign_c > 0 else 1)
            split[at[hit]] |= 1 << bit
    # vertices: lattice corners of the voxels with an exposed face, deduplicated through their
    # codes on the doubled lattice (corners even; edge midpoints and face centres, the fans of
    # pinched edges, odd)
    doubled = 2 * dims + 1
    strides2 = np.array([1, doubled[0], doubled[0] * doubled[1]], dtype=np.int64)
    exposed = np.stack(exposed)  # (6, count)
    boundary = np.flatnonzero(exposed.any(axis=0))
    rank = np.full(count, -1, dtype=np.int64)
    rank[boundary] = np.arange(len(boundary))
    cells = np.stack([occupied % dims[0], (occupied // dims[0]) % dims[1], occupied // (dims[0] * dims[1])], axis=1)
    base = (2 * cells[boundary]) @ strides2
    # corner c = (c & 1, c >> 1 & 1, c >> 2): used when a face holding it is exposed
    used = np.zeros((8, len(boundary)), dtype=bool)
    for c in range(8):
        for axis in range(3):
            used[c] |= exposed[2 * axis + (0 if (c >> axis) & 1 else 1)][boundary]
    corner_codes = base[None, :] + (2 * _CORNERS @ strides2)[:, None]  # (8, b): each row sorted
    flat = corner_codes[used]
    order = np.argsort(flat, kind="stable")  # timsort: merges the 8 sorted runs
    ordered = flat[order]
    fresh = np.empty(len(ordered), dtype=bool)
    fresh[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=fresh[1:])
    ids = np.empty(len(flat), dtype=np.int64)
    ids[order] = np.cumsum(fresh) - 1
    corner_id = np.full((8, len(boundary)), -1, dtype=np.int64)
    corner_id[used] = ids
    lattice_codes = [ordered[fresh]]
    next_id = len(lattice_codes[0])
    triangles = []
    odd = []  # doubled-lattice codes of the edge midpoints in split faces (placeholder ids -1, -2, ...)
    placed = 0
    for direction in range(6):
        f = np.flatnonzero(exposed[direction])
        if len(f) == 0:
            continue
        fb = rank[f]
        q = corner_id[_FACE_CORNER_INDEX[direction]][:, fb].T  # (m, 4) vertex ids
        bits = (split[f][:, None] >> _FACE_EDGES[direction][None, :]) & 1  # (m, 4)
        plain = ~bits.any(axis=1)
        qp = q[plain]
        triangles += [np.stack([qp[:, 0], qp[:, 1], qp[:, 2]], axis=1), np.stack([qp[:, 0], qp[:, 2], qp[:, 3]], axis=1)]
        if plain.all():
            continue
        corners = _FACE_CORNERS[direction]
        qs, bs, where = q[~plain], bits[~plain].astype(bool), base[fb[~plain]]
        center = next_id + np.arange(len(qs))
        next_id += len(qs)
        lattice_codes.append(where + int(_FACE_CENTERS[direction] @ strides2))
        for k in range(4):
            a, z = qs[:, k], qs[:, (k + 1) % 4]
            s = bs[:, k]
            mid_code = where[s] + int((corners[k] + corners[(k + 1) % 4]) @ strides2)  # doubled midpoint
            mid = -1 - placed - np.arange(len(mid_code))
            placed += len(mid_code)
            odd.append(mid_code)
            triangles += [np.stack([center[~s], a[~s], z[~s]], axis=1),
                          np.stack([center[s], a[s], mid], axis=1), np.stack([center[s], mid, z[s]], axis=1)]
    faces = np.concatenate(triangles)
    if odd:  # each pinched edge's midpoint is shared by two faces of its voxel: one vertex
        mid_codes = np.concatenate(odd)
        unique_mid, mid_inverse = np.unique(mid_codes, return_inverse=True)
        placeholder = faces < 0
        faces[placeholder] = next_id + mid_inverse[-1 - faces[placeholder]]
        lattice_codes.append(unique_mid)
    codes = np.concatenate(lattice_codes)
    lattice = np.stack([codes % doubled[0], (codes // doubled[0]) % doubled[1], codes // (doubled[0] * doubled[1])], axis=1)
    vertices = origin + size * (low + 0.5 * lattice)
    return cells + low, vertices, faces
