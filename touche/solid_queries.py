"""Public queries on solid meshes (docs/solids.md): the penetration depth of two
meshes and the directional separating translation. They build on touche.solids (containment,
vertex depths) and call the public verbs of touche.query, which in turn use touche.solids for
mesh pairs; this module sits above both."""
from __future__ import annotations

import numpy as np

from ._record import Record
from .query import _surface_mesh_mesh_distance, distance, raycast
from .results import Status
from .solids import _batch_poses, _penetration_arrays, mesh_data

class SolidPenetration(Record):
    """Result of :func:`penetration_depth`.

    ``depth`` (>= 0; 0 when the meshes do not interpenetrate), ``signed_distance`` (the
    distance when apart, ``-depth`` when interpenetrating, as :func:`touche.distance`),
    ``point_a`` / ``point_b`` (world; interpenetrating: the deepest vertex and its closest
    point on the other solid's surface, ``point_b - point_a = -depth * normal``), ``normal``
    (unit, from A to B: moving B by ``depth * normal`` takes the deepest vertex out of A, or
    moving A by ``-depth * normal`` out of B), ``status`` (:class:`touche.Status`),
    ``side`` (``"a_in_b"``: a vertex of A inside solid B; ``"b_in_a"``; ``"convex"``: two
    convex solids, the exact depth of their hulls; ``""``: no depth), ``vertex`` (index into
    that mesh's vertices, -1 if none) and ``face`` (the other mesh's face holding the closest
    point, -1 if none). A batch gives arrays ((n,), (n, 3); ``side`` a str array)."""

    __slots__ = ("depth", "signed_distance", "point_a", "point_b", "normal", "status", "side", "vertex", "face")
    _batch_field = "depth"

    def _describe(self):
        return (f"depth={self.depth:.6g}, status={self.status.name}, side={self.side!r}, vertex={self.vertex}, "
                f"face={self.face}, point_a={np.round(self.point_a, 6).tolist()}, "
                f"point_b={np.round(self.point_b, 6).tolist()}, normal={np.round(self.normal, 6).tolist()}")


_SIDE_NAMES = np.array(["", "a_in_b", "b_in_a", "convex"])


def _two_meshes(a, b, verb):
    from .errors import GeometryError
    from .shapes import Shape, as_shape
    from ._kernels import kinds

    a = a if isinstance(a, Shape) else as_shape(a, "a")
    b = b if isinstance(b, Shape) else as_shape(b, "b")
    for shape, name in ((a, "a"), (b, "b")):
        if shape.kind != kinds.MESH:
            raise GeometryError(f"{verb} takes two triangle meshes; {name} is a {type(shape).__name__}")
    return a, b


def penetration_depth(a, pose_a, b, pose_b):
    """Penetration depth of two triangle meshes, at least one declared solid
    (``TriangleMesh(..., solid=True)`` / ``mesh.as_solid()``), with its witness points, normal
    and features. Poses as for :func:`touche.distance` (single or ``(n, 4, 4)`` batches).

    The depth (docs/solids.md) is the VERTEX DEPTH: the largest distance to B's surface of a
    vertex of A lying in solid B, and of a vertex of B lying in solid A (each side only when
    that mesh is solid). It is a certified lower bound on the translational penetration depth
    (no translation shorter than it separates the interiors) and on
    :func:`separating_translation` in every direction. Two CONVEX solids (enclosed volume equal
    to the hull's) get the exact penetration depth of their hulls instead (``side ==
    "convex"``). It is not the depth of the deepest surface point: where two thin parts cross
    edge through edge with no vertex inside the other, the depth is 0 (status ``TOUCHING``,
    since the surfaces meet) although they interpenetrate.

    Meshes that do not interpenetrate give ``depth`` 0 and the surface answer of
    :func:`touche.distance` (closest points, ``SEPARATED`` / ``TOUCHING``).

    Errors: ``GeometryError`` when neither mesh is solid or a shape is not a mesh, and for bad
    poses as :func:`touche.distance`."""
    from .errors import GeometryError

    a, b = _two_meshes(a, b, "penetration_depth")
    if not (a.solid or b.solid):
        raise GeometryError("penetration_depth needs a solid mesh: declare one of them solid "
                            "(TriangleMesh(..., solid=True) or mesh.as_solid())")
    ta, tb, count, single = _batch_poses(pose_a, pose_b)
    if single:
        pose_a, pose_b = ta[0], tb[0]
    surface = _surface_mesh_mesh_distance(a, pose_a, b, pose_b)
    signed, point_a, point_b, normal, status, side, vertex, face = _penetration_arrays(a, pose_a, b, pose_b, surface, distance)
    depth = np.where(status == Status.PENETRATING, -signed, 0.0)
    names = _SIDE_NAMES[side]
    if single:
        return SolidPenetration(float(depth[0]), float(signed[0]), point_a[0], point_b[0], normal[0],
                                Status(int(status[0])), str(names[0]), int(vertex[0]), int(face[0]))
    return SolidPenetration(depth, signed, point_a, point_b, normal, status, names, vertex, face)


# ---------------------------------------------------------------------------------------------
# directional separation (docs/solids.md)
#
# A translated by s*d touches B exactly when some triangle of A meets some triangle of B, and
# the largest such s is reached at one of three feature pairs (the boundary of the Minkowski
# difference of two triangles): a vertex of A on a triangle of B, a vertex of B on a triangle of
# A, or an edge of A on an edge of B. So the last contact is the largest of
#   - A's vertices cast along -d from beyond B (first hit = last contact; touche.raycast),
#   - B's vertices cast along +d from behind A at A's triangles (the same),
#   - B's edges cast as segments at the quads that A's edges sweep along d (mode="all"), in a
#     frame whose z axis is d (the quads' boxes are then thin across d).
# Beyond the last contact the meshes are apart; before it they touch or overlap: the answer is
# the same whether the meshes are declared solid or not (the last contact is a surface contact).


def _direction(direction):
    from .errors import GeometryError

    try:
        d = np.array(direction, dtype=np.float64)
    except (TypeError, ValueError):
        raise GeometryError(f"direction must be 3 finite numbers, got {direction!r}") from None
    if d.shape != (3,):
        raise GeometryError(f"direction must have shape (3,), got {d.shape}")
    if not np.isfinite(d).all():
        raise GeometryError(f"direction must be finite, got {d.tolist()}")
    length = float(np.sqrt(d @ d))
    if not length > 0.0 or not np.isfinite(length):
        raise GeometryError(f"direction must be non-zero, got {d.tolist()}")
    return d / length


def _frame(d):
    """An orthonormal (3, 3) matrix whose rows are u, v, d."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.6 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, helper)
    u /= np.sqrt(u @ u)
    v = np.cross(d, u)
    return np.array([u, v, d])


def _in_rect(xy, low, high):
    return (xy[:, 0] >= low[0]) & (xy[:, 0] <= high[0]) & (xy[:, 1] >= low[1]) & (xy[:, 1] <= high[1])


def _last_vertex_hits(origins_mesh_points, target, target_pose, direction, reach):
    """Largest s in [0, reach] at which a point p + s * direction lies on ``target``'s surface,
    over the (k, 3) world points (cast from p + reach * direction back along -direction: the
    first hit is the last contact). -inf when none."""

    if len(origins_mesh_points) == 0:
        return -np.inf
    origins = origins_mesh_points + reach * direction
    hits = raycast(target, target_pose, origins, -direction, reach, mode="first", solid=False)
    if not np.any(hits.hit):
        return -np.inf
    # s from the hit point (not reach - t: no cancellation against the cast's length)
    found = hits.hit
    return float(np.max((hits.point[found] - origins_mesh_points[found]) @ direction))


def _last_edge_hit(frame, a_world, a_edges, b_world, b_edges, reach, scale):
    """Largest s in [0, reach] at which an edge of A (the swept mesh) translated by s * d meets
    an edge of B (frame rows u, v, d; points in world coordinates). -inf when none."""
    from .shapes import TriangleMesh

    pa = a_world @ frame.T
    pb = b_world @ frame.T
    # only edges whose shadows across d can cross
    ea = a_edges
    eb = b_edges
    low_b, high_b = pb[:, :2].min(axis=0), pb[:, :2].max(axis=0)
    low_a, high_a = pa[:, :2].min(axis=0), pa[:, :2].max(axis=0)
    lo = np.maximum(low_a, low_b)
    hi = np.minimum(high_a, high_b)
    if (lo > hi).any():
        return -np.inf
    ea_lo = np.minimum(pa[ea[:, 0], :2], pa[ea[:, 1], :2])
    ea_hi = np.maximum(pa[ea[:, 0], :2], pa[ea[:, 1], :2])
    ea = ea[(ea_lo <= hi).all(axis=1) & (ea_hi >= lo).all(axis=1)]
    eb_lo = np.minimum(pb[eb[:, 0], :2], pb[eb[:, 1], :2])
    eb_hi = np.maximum(pb[eb[:, 0], :2], pb[eb[:, 1], :2])
    eb = eb[(eb_lo <= hi).all(axis=1) & (eb_hi >= lo).all(axis=1)]
    if len(ea) == 0 or len(eb) == 0:
        return -np.inf
    # the swept quads (p, q, q + reach d, p + reach d), two triangles each
    p, q = pa[ea[:, 0]], pa[ea[:, 1]]
    shadow = q[:, :2] - p[:, :2]
    wide = np.einsum("ij,ij->i", shadow, shadow) > (1e-12 * scale) ** 2  # edges along d sweep no area
    p, q, ea = p[wide], q[wide], ea[wide]
    if len(ea) == 0:
        return -np.inf
    lift = np.array([0.0, 0.0, reach])
    corners = np.stack([p, q, q + lift, p + lift], axis=1).reshape(-1, 3)
    base = 4 * np.arange(len(ea))
    faces = np.concatenate([np.stack([base, base + 1, base + 2], axis=1), np.stack([base, base + 2, base + 3], axis=1)])
    quads = TriangleMesh(corners, faces)
    starts, ends = pb[eb[:, 0]], pb[eb[:, 1]]
    vectors = ends - starts
    lengths = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    keep = lengths > 0.0
    if not keep.any():
        return -np.inf
    hits = raycast(quads, None, starts[keep], vectors[keep], lengths[keep], mode="all")
    if len(hits) == 0:
        return -np.inf
    quad = hits.face % len(ea)
    edge_p, edge_q = p[quad], q[quad]
    along = edge_q[:, :2] - edge_p[:, :2]
    lam = np.einsum("ij,ij->i", hits.point[:, :2] - edge_p[:, :2], along) / np.einsum("ij,ij->i", along, along)
    lam = np.clip(lam, 0.0, 1.0)
    s = hits.point[:, 2] - (edge_p[:, 2] + lam * (edge_q[:, 2] - edge_p[:, 2]))
    return float(np.max(s))


def _separating_one(a, ta, b, tb, d, frame):
    da, db = mesh_data(a), mesh_data(b)
    a_world = da.points @ ta[:3, :3].T + ta[:3, 3]
    b_world = db.points @ tb[:3, :3].T + tb[:3, 3]
    za, zb = a_world @ d, b_world @ d
    # beyond s = max(zB) - min(zA) every point of A is past B along d
    span = float(zb.max() - za.min())
    if span < 0.0:
        return 0.0
    scale = max(a.scale, b.scale, float(np.abs(a_world).max()), float(np.abs(b_world).max()))
    reach = span + 1e-6 * scale  # cast from strictly beyond
    # the shadows across d must overlap; only the points in the other's shadow can touch it
    ua, ub = a_world @ frame[:2].T, b_world @ frame[:2].T
    low_a, high_a, low_b, high_b = ua.min(axis=0), ua.max(axis=0), ub.min(axis=0), ub.max(axis=0)
    if (np.maximum(low_a, low_b) > np.minimum(high_a, high_b)).any():
        return 0.0
    # A's vertices p: p + s d on B  <=>  cast from p + reach d along -d, s = reach - t
    points = a_world[_in_rect(ua, low_b, high_b)]
    s = _last_vertex_hits(points, b, tb, d, reach)
    # B's vertices w: w on A + s d  <=>  w - s d on A: cast from w - reach d along +d
    points = b_world[_in_rect(ub, low_a, high_a)]
    s = max(s, _last_vertex_hits(points, a, ta, -d, reach))
    # A's edges against B's edges (indices into the used-vertex arrays): the mesh with fewer
    # edges is swept (B's along -d, in the frame whose z axis is -d, is the same question)
    if len(da.edges) <= len(db.edges):
        s = max(s, _last_edge_hit(frame, a_world, da.edge_rows, b_world, db.edge_rows, reach, scale))
    else:
        flipped = np.array([frame[1], frame[0], -frame[2]])
        s = max(s, _last_edge_hit(flipped, b_world, db.edge_rows, a_world, da.edge_rows, reach, scale))
    return max(s, 0.0)


def separating_translation(a, pose_a, b, pose_b, direction):
    """The smallest ``s >= 0`` such that mesh ``a`` moved by ``s * direction`` touches mesh
    ``b`` for no larger ``s``: the last contact of A translated along ``direction`` (unit
    length taken), 0 when A moved along it never meets B. For every ``s`` above it the
    meshes are apart (distance > 0; no solid holds the other either); at it they touch.

    Exact (up to the rounding of the ray-triangle intersections): the largest of the contact
    parameters of A's vertices against B's triangles, B's vertices against A's triangles and
    A's edges against B's edges, each found by batched ray casts (docs/solids.md). The answer is
    the same whether the meshes are declared solid or not (the last contact is a surface
    contact). It bounds the penetration depth from above: :func:`penetration_depth` <= the
    translational depth <= ``separating_translation`` in any direction.

    Arguments: two triangle meshes (``TriangleMesh`` or ``trimesh.Trimesh``), their poses (a
    ``Pose``, ``(4, 4)``, None, or ``(n, 4, 4)`` batches: one answer per pose pair, a Python
    loop over the pairs), ``direction`` (3,) in world coordinates. Returns a float, or (n,).

    Errors: ``GeometryError`` for a shape that is not a mesh, a direction that is not 3 finite
    numbers or is zero, and bad poses."""
    a, b = _two_meshes(a, b, "separating_translation")
    d = _direction(direction)
    frame = _frame(d)
    ta, tb, count, single = _batch_poses(pose_a, pose_b)
    out = np.empty(count)
    for i in range(count):
        out[i] = _separating_one(a, ta[i if len(ta) > 1 else 0], b, tb[i if len(tb) > 1 else 0], d, frame)
    return float(out[0]) if single else out


# ---------------------------------------------------------------------------------------------
# contact regions and intersection volume (docs/solids.md "Contact regions")


class SolidContacts(Record):
    """Result of :func:`touche.contacts` for two solid meshes: a compact manifold per connected
    interpenetration region (docs/solids.md "Contact regions").

    ``points`` (m, 3) world, each midway between the two surfaces (A's surface point is
    ``point + depth / 2 * normal``, as for convex manifolds); ``depths`` (m,) >= 0; ``normals``
    (m, 3) unit, from A to B per point; ``point_a`` / ``point_b`` (m, 3) the witness points on
    A's and B's surfaces (``point_b - point_a = -depth * normal``); ``region`` (m,) int64, the
    region of each point (0 the deepest region); ``count`` (int m); ``regions`` (int r);
    ``region_depth`` (r,) the largest depth found in each region (its first point);
    ``region_volume`` (r,) the volume of each region of the intersection; ``region_normal``
    (r, 3) unit, from A to B: the direction of the area vector of A's surface inside B in that
    region (the deepest point's normal for a mesh wholly inside the other), also the normal of
    the region's points at depth 0; ``normal`` (3,) the deepest point's normal (NaN when there
    is no region); ``status`` (:class:`touche.Status`:
    ``PENETRATING`` when some depth exceeds the touching tolerance, ``TOUCHING`` when the
    regions are surface contacts only, ``SEPARATED`` when there is none). Points are grouped
    by region, the deepest point of each region first."""

    __slots__ = ("points", "depths", "normals", "point_a", "point_b", "region", "count", "regions", "region_depth",
                 "region_volume", "region_normal", "normal", "status")

    def _describe(self):
        return (f"regions={self.regions}, count={self.count}, region_depth={np.round(self.region_depth, 6).tolist()}, "
                f"region_volume={np.round(self.region_volume, 9).tolist()}, status={self.status.name}")


def _solid_pair(a, b, verb):
    from .errors import GeometryError

    a, b = _two_meshes(a, b, verb)
    for shape, name in ((a, "a"), (b, "b")):
        if not shape.solid:
            raise GeometryError(f"{verb} needs two solid meshes; {name} is a surface mesh: declare it solid "
                                "(TriangleMesh(..., solid=True) or mesh.as_solid())")
    return a, b


def solid_contacts(a, pose_a, b, pose_b, *, max_points=4, margin=0.0):
    """Contact regions of two solid meshes (:func:`touche.contacts` routes solid mesh pairs
    here): a :class:`SolidContacts` with at most ``max_points`` points per connected region of
    the intersection, the deepest point of each region first, then the points that spread the
    most area across its normal.

    Arguments: two solid ``TriangleMesh`` (``solid=True``); poses as for :func:`touche.distance`
    (a batch of ``(n, 4, 4)`` on either side gives a list of n ``SolidContacts``, one pose pair
    at a time); ``max_points`` >= 1; ``margin`` >= 0: a pair whose surfaces are apart but within
    ``margin`` gets one speculative contact (one region: the midpoint of the closest points,
    depth ``-distance``, the normal from A to B, volume 0, status ``SEPARATED``), as a simulator
    wants for a pair about to meet; interpenetrating or touching pairs are unchanged by it.

    Errors: ``GeometryError`` when a mesh is not solid, for bad poses (NaN, not rigid), batches
    of different lengths, ``max_points`` < 1, a negative or NaN margin."""
    from ._queryargs import contact_options

    a, b = _solid_pair(a, b, "contacts")
    max_points, margin = contact_options(max_points, margin)
    ta, tb, count, single = _batch_poses(pose_a, pose_b)
    found = [_solid_contacts_one(a, ta[i if len(ta) > 1 else 0], b, tb[i if len(tb) > 1 else 0], max_points, margin)
             for i in range(count)]
    return found[0] if single else found


def _solid_contacts_one(a, ta, b, tb, max_points, margin):
    from . import tolerance
    from .solids import region_contacts

    found = region_contacts(a, ta, b, tb, max_points)
    regions = len(found["region_depth"])
    offset = max(float(np.abs(ta[:3, 3]).max()), float(np.abs(tb[:3, 3]).max()))
    touching = tolerance.touching_tolerance(max(a.scale, b.scale), offset)
    if regions == 0 and margin > 0.0:
        apart = distance(a, ta, b, tb)
        if apart.status == Status.SEPARATED and apart.distance <= margin:  # a speculative contact
            point_a, point_b = np.asarray(apart.point_a, dtype=np.float64), np.asarray(apart.point_b, dtype=np.float64)
            normal = np.asarray(apart.normal, dtype=np.float64)
            depth = np.array([-float(apart.distance)])
            return SolidContacts((0.5 * (point_a + point_b))[None], depth, normal[None], point_a[None], point_b[None],
                                 np.zeros(1, dtype=np.int64), 1, 1, depth.copy(), np.zeros(1), normal[None].copy(),
                                 normal.copy(), Status.SEPARATED)
    if regions == 0:
        status, normal = Status.SEPARATED, np.full(3, np.nan)
    else:
        status = Status.PENETRATING if found["region_depth"][0] > touching else Status.TOUCHING
        normal = found["normals"][0]
    return SolidContacts(found["points"], found["depths"], found["normals"], found["point_a"], found["point_b"],
                         found["region"], len(found["depths"]), regions, found["region_depth"],
                         found["region_volume"], found["region_normal"], normal, status)


def intersection_volume(a, pose_a, b, pose_b):
    """Volume of the intersection of two solid meshes (``TriangleMesh(..., solid=True)``)
    placed by their poses: 0 when they are apart or only touch, the inner solid's volume when
    one holds the other.

    Computed without a mesh boolean: the parts of A's triangles inside B and of B's inside A
    (cut along the crossings of each mesh's edges through the other's triangles) bound the
    intersection, whose volume the divergence theorem gives from their oriented edges
    (docs/solids.md). Exact up to the rounding of the crossings for meshes in general
    position; otherwise (faces in one plane, a vertex on the other surface) extrapolated from
    two infinitesimally shifted placements, within about 1e-14 of the size cubed.

    Arguments: two solid meshes, poses as for :func:`touche.distance` (a batch of ``(n, 4,
    4)`` poses gives ``(n,)``, one pose pair at a time in a Python loop). Returns a float or
    (n,) array.

    Errors: ``GeometryError`` when a mesh is not solid or a shape is not a mesh, for bad
    poses (NaN, not rigid) and batches of different lengths."""
    from .solids import volume

    a, b = _solid_pair(a, b, "intersection_volume")
    ta, tb, count, single = _batch_poses(pose_a, pose_b)
    out = np.empty(count)
    for i in range(count):
        out[i] = volume(a, ta[i if len(ta) > 1 else 0], b, tb[i if len(tb) > 1 else 0])
    return float(out[0]) if single else out
