"""A table of shape pairs tested for overlap, or measured, in one compiled call over a batch of
configurations.

The robot checks (touche.robot) ask the same question for every configuration of a batch: do
any of these P pairs of shapes overlap? Answering it pair by pair from Python costs a verb call
(microseconds of argument checks and dispatch) per pair, and a pool hand-off per pair for a
batch; here one call walks configurations x pairs, culls by bounding spheres, and runs the narrow
phase each pair needs, stopping at a configuration's first overlapping pair when only a boolean
is wanted.

Objects. Every shape of the table (the robot's collision geometries first, then the obstacles)
is object ``o``; its packed arrays (touche.shapes ``_packed``: kind, params, points, triangles,
edges) are concatenated over objects, and so are a surface mesh's tree arrays (touche.bvh:
node_index, node_bounds, tri_vertices, tri_ids); ``layout`` says where each object's rows start
(the row constants below). Slices of a C-contiguous array along its first axis stay
C-contiguous, so each object's arrays are exactly what the single-pair kernels take. Object o < G
(G geometries) is posed by its link at configuration i; object o >= G by
``obstacle_poses[o - G]``, the same for every configuration.

Routes (``pairs[p, ROUTE]`` of pair p = (``pairs[p, FIRST]``, ``pairs[p, SECOND]``)):

  ROUTE_PYTHON      not answered here (a solid mesh, a k-DOP tree, a kind without a compiled
                    answer): the caller answers it with touche.intersects
  ROUTE_MESH_MESH   two surface meshes: bvh_overlap.tree_intersects_pair on their OBB trees
                    behind a boundary (MESH_MESH: what touche.bvh.intersects runs for one
                    pose pair)
  ROUTE_SHAPE_MESH  a convex shape (first) against a surface mesh (second): the mesh engine
                    behind its boundary, as bvh_shape.mesh_pair_intersects (booleans: the
                    shape kind's boolean engine, bvh_shape_boolean.boolean_engine_address; distances:
                    the family's, bvh_shape.distance_engine_address)
  ROUTE_CONVEX      two convex shapes: the pair engine family whose address is ``pairs[p, ENGINE]``
                    (pairs.engine_address(..., intersects_only=True))

pair_table_distances_many measures every pair of the table at every configuration (no culling:
each distance is wanted), with touche.distance's numbers (see its docstring).

The answers of pair_table_intersects_many are those of touche.intersects for the same shapes
and poses; the convex route calls
the engine without batch.fast_intersects' closed forms in front (they answer the same predicate,
and compiling them into this kernel would cost seconds of compile time for pairs a robot rarely
has).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from numba.core import types as _types  # noqa: E402

from touche._kernels.base import kinds  # noqa: E402
from touche._kernels.base.jit import KernelInterface, njit  # noqa: E402
from touche._kernels.base.touching import touching_tolerance  # noqa: E402
from touche._kernels.narrow.batch import distance_one  # noqa: E402
from touche._kernels.narrow.bvh_shape import call_mesh_engine, mesh_pair_distance  # noqa: E402
from touche._kernels.narrow.pairs import call_pair_engine  # noqa: E402
from touche._kernels.primitives.kinematics import rigid_product_at, tree_poses  # noqa: E402
from touche._kernels.trees.bvh_descent import obb_overlap  # noqa: E402
from touche._kernels.trees.bvh_distance import tree_distance_one  # noqa: E402
from touche._kernels.trees.bvh_overlap import tree_intersects_pair  # noqa: E402

_F2, _F3, _I2 = _types.float64[:, ::1], _types.float64[:, :, ::1], _types.int64[:, ::1]
# Two OBB trees behind a boundary (jit.KernelInterface: return type declared, so typing the table
# compiles nothing behind it): the very kernel touche.bvh.intersects runs for one pose pair,
# compiled on first use and shared with it; robots without meshes never compile it.
MESH_MESH = KernelInterface("mesh-mesh overlap", (_I2, _F2, _F3, _F2, _I2, _F2, _F3, _F2, _types.int64),
                            _types.int64).implement(tree_intersects_pair)
call_mesh_mesh = MESH_MESH.call  # kernels call the intrinsic by a global name
_F1, _I1 = _types.float64[::1], _types.int64[::1]
# the surface distance of two OBB trees, as touche.bvh.distance runs it for one pose pair
# ((1, 4, 4) poses; it writes distance, world points and triangle ids into the (1, ...) outputs)
MESH_MESH_DISTANCE = KernelInterface(
    "mesh-mesh distance", (_I2, _F2, _F3, _I1, _F3, _I2, _F2, _F3, _I1, _F3, _types.int64, _types.int64, _F1, _F2, _F2,
                           _I2), _types.none).implement(tree_distance_one)
call_mesh_mesh_distance = MESH_MESH_DISTANCE.call

ROUTE_PYTHON = 0
ROUTE_MESH_MESH = 1
ROUTE_SHAPE_MESH = 2
ROUTE_CONVEX = 3


@njit(cache=True, nogil=True, inline="always")
def _object_pose(o, geometry_poses, obstacle_poses):
    if o < geometry_poses.shape[0]:
        return geometry_poses[o]
    return obstacle_poses[o - geometry_poses.shape[0]]


# rows of ``layout`` (int64, (7, objects + 1)): where each object's packed arrays start in the
# concatenated ones (object o: ``[layout[r, o], layout[r, o + 1])``), and its kind
PARAMS_AT = 0
POINTS_AT = 1
TRIS_AT = 2
EDGES_AT = 3
NODES_AT = 4  # node_index / node_bounds rows of its tree (none: not a surface mesh)
TRIANGLES_AT = 5  # tri_vertices / tri_ids rows of its tree
KIND = 6
@njit(cache=True, nogil=True, inline="always")
def _shape_of(o, layout, params, points, tris, edges):
    """Object o's packed shape: (kind, params, points, triangles, edges), views of its rows."""
    return (layout[KIND, o], params[layout[PARAMS_AT, o]:layout[PARAMS_AT, o + 1]],
            points[layout[POINTS_AT, o]:layout[POINTS_AT, o + 1]], tris[layout[TRIS_AT, o]:layout[TRIS_AT, o + 1]],
            edges[layout[EDGES_AT, o]:layout[EDGES_AT, o + 1]])


@njit(cache=True, nogil=True, inline="always")
def _tree_of(o, layout, node_index, node_bounds, tri_vertices, tri_ids):
    """Object o's mesh tree: (node_index, node_bounds, tri_vertices, tri_ids), views of its rows
    (no rows: not a surface mesh)."""
    return (node_index[layout[NODES_AT, o]:layout[NODES_AT, o + 1]],
            node_bounds[layout[NODES_AT, o]:layout[NODES_AT, o + 1]],
            tri_vertices[layout[TRIANGLES_AT, o]:layout[TRIANGLES_AT, o + 1]],
            tri_ids[layout[TRIANGLES_AT, o]:layout[TRIANGLES_AT, o + 1]])


# columns of ``bounds`` (float64, (objects, 20)), in the object's own frame
SPHERE = 0  # bounding sphere: center (3), radius
BOX = 4  # a box holding it: center (3), axis rows (9), half extents (3); infinite halves: unbounded
MESH_SCALE = 19  # a surface mesh's coordinate scale (TriangleMesh.scale)
BOUNDS_WIDTH = 20
# columns of ``pairs`` (int64, (P, 4))
FIRST = 0
SECOND = 1
ROUTE = 2
ENGINE = 3  # the narrow phase's address: MESH_MESH, a bvh_shape mesh engine or a pair engine family
# (0: not compiled yet, see pair_table_intersects_many)
SWAPPED = 4  # distance tables: 1 when FIRST is the pair's second member (a shape against a mesh)


# columns of a world row (``_place``): an object's bounds under its pose at one configuration
W_SPHERE = 0  # the bounding sphere's center (3), radius
W_BOX = 4  # the box's center (3); its axis rows go to a row of their own (9)
W_HALF = 7  # the box's half extents (3)
W_SIZE = 10  # the largest coordinate or half extent of the box (its rounding scale)
W_WIDTH = 11


@njit(cache=True, nogil=True, inline="always")
def _place(poses, k, bounds, o, world, axes):
    """Object o's box (row o of ``bounds``, own frame) under ``poses[k]``: row o of ``world``
    (box centre, half extents, size; its sphere is _place_spheres'), row o of ``axes`` the box's
    axis rows in the world. By index: no array views (their reference counting)."""
    for r in range(3):
        world[o, W_BOX + r] = (poses[k, r, 0] * bounds[o, BOX] + poses[k, r, 1] * bounds[o, BOX + 1]
                               + poses[k, r, 2] * bounds[o, BOX + 2] + poses[k, r, 3])
    for j in range(3):
        for r in range(3):
            axes[o, 3 * j + r] = (poses[k, r, 0] * bounds[o, BOX + 3 + 3 * j] + poses[k, r, 1] * bounds[o, BOX + 4 + 3 * j]
                                  + poses[k, r, 2] * bounds[o, BOX + 5 + 3 * j])
    size = 0.0
    for j in range(3):
        world[o, W_HALF + j] = bounds[o, BOX + 12 + j]
        size = max(size, abs(world[o, W_BOX + j]), bounds[o, BOX + 12 + j])
    world[o, W_SIZE] = size


@njit(cache=True, nogil=True, inline="always")
def _place_spheres(poses, parents, centers, world):
    """Bounding-sphere centres of the geometries into ``world``: geometry o's centre
    ``centers[o]`` in the frame ``poses[parents[o]]`` (scalar indexing: no array views, whose
    reference counting costs more than the arithmetic here)."""
    for o in range(centers.shape[0]):
        k = parents[o]
        for r in range(3):
            world[o, W_SPHERE + r] = (poses[k, r, 0] * centers[o, 0] + poses[k, r, 1] * centers[o, 1]
                                      + poses[k, r, 2] * centers[o, 2] + poses[k, r, 3])


@njit(cache=True, nogil=True, inline="always")
def _ball_outside_box(world, axes, a, b, pad):
    """Whether placed object a's bounding ball lies strictly outside b's box grown by ``pad``
    (the ball's squared distance to the box beyond its squared radius)."""
    d2 = 0.0
    for k in range(3):
        t = ((world[a, W_SPHERE] - world[b, W_BOX]) * axes[b, 3 * k]
             + (world[a, W_SPHERE + 1] - world[b, W_BOX + 1]) * axes[b, 3 * k + 1]
             + (world[a, W_SPHERE + 2] - world[b, W_BOX + 2]) * axes[b, 3 * k + 2])
        excess = abs(t) - (world[b, W_HALF + k] + pad)
        if excess > 0.0:
            d2 += excess * excess
    return d2 > world[a, W_SPHERE + 3] * world[a, W_SPHERE + 3]


@njit(cache=True, nogil=True, inline="always")
def _boxes_apart(world, axes, a, b):
    """Whether placed objects a and b (rows of ``world``, spheres and boxes; their box axes:
    rows of ``axes``) cannot touch though their spheres meet: either's sphere is outside the
    other's box (cheap, and what separates a link from a wide, thin shelf board whose sphere
    reaches everything), or their boxes are apart (15-axis SAT, closed); boxes grown by 1e-9 of
    the largest coordinate or extent involved so that rounding in the world transforms never
    separates boxes whose shapes touch; an unbounded box is never apart."""
    if not (world[a, W_SIZE] < np.inf and world[b, W_SIZE] < np.inf):
        return False
    pad = 1e-9 * max(world[a, W_SIZE], world[b, W_SIZE])
    if _ball_outside_box(world, axes, a, b, pad) or _ball_outside_box(world, axes, b, a, pad):
        return True
    return not obb_overlap(world[a, W_BOX], world[a, W_BOX + 1], world[a, W_BOX + 2], axes[a], world[a, W_HALF] + pad,
                           world[a, W_HALF + 1] + pad, world[a, W_HALF + 2] + pad, world[b, W_BOX],
                           world[b, W_BOX + 1], world[b, W_BOX + 2], axes[b], world[b, W_HALF] + pad,
                           world[b, W_HALF + 1] + pad, world[b, W_HALF + 2] + pad)


@njit(cache=True, nogil=True, inline="always")
def _place_geometry(o, link_poses, geometry_link, geometry_origin, geometry_poses, bounds, world, world_axes):
    """Geometry o's pose and box at the current configuration, made when a pair first needs them
    (its sphere meets another's): most geometries of a robot with many links never do. Its
    sphere was placed from its link's frame (_place_spheres), a rounding away from its pose:
    the sphere test's pad of 1e-9 of the scale covers it."""
    rigid_product_at(link_poses, geometry_link[o], geometry_origin, o, geometry_poses, o)
    _place(geometry_poses, o, bounds, o, world, world_axes)


@njit(cache=True, nogil=True)
def pair_table_intersects_many(q, parent, joint_type, origin, axis, dof, multiplier, offset, geometry_link,
                               geometry_origin, obstacle_poses, layout, bounds, params, points, tris, edges,
                               node_index, node_bounds, tri_vertices, tri_ids, pairs, stack_rows, first_only, out_hit,
                               out_pairs, out_missing, lo, hi):
    """Configurations lo .. hi - 1 of ``q`` (n, dof) (touche._parallel.run hands out chunks):
    ``out_hit[i]`` = whether some compiled-route pair overlaps at configuration i;
    ``out_pairs[i, p]`` (when ``out_pairs`` has P columns, else ignored; zeros on entry) = whether
    pair p does (False for pairs skipped after the first hit when ``first_only``, and for
    ROUTE_PYTHON pairs).

    Each configuration's geometry poses are made here (kinematics.tree_poses, then
    ``geometry_origin[g]`` on link ``geometry_link[g]``: the tree arrays of motion/robot.py), in
    scratch that stays in cache, instead of (geometries, n, 4, 4) arrays written and read back;
    ``obstacle_poses`` (max(1, O), 4, 4). ``layout``, ``bounds``, ``pairs`` as the constants above
    say. Pairs whose bounding spheres or boxes are apart are not tested further. ``stack_rows`` >=
    the deepest pair's depth_a + depth_b + 2.

    A pair whose narrow phase has no address yet (``pairs[p, ENGINE] == 0``: the caller compiles
    an engine only once some pair needs it) is not tested: ``out_missing[p]`` is set, and the
    caller fills the address and calls again (the answers of this call are then incomplete)."""
    record = out_pairs.shape[1] == pairs.shape[0]
    node_stack = np.empty(stack_rows, dtype=np.int64)  # the mesh engine's descent
    node_stack_lb = np.empty(stack_rows)
    geometries = geometry_link.shape[0]
    link_poses = np.empty((parent.shape[0], 4, 4))
    geometry_poses = np.empty((geometries, 4, 4))
    joint_frame = np.empty((4, 4))
    motion = np.empty((4, 4))
    world = np.empty((bounds.shape[0], W_WIDTH))  # every object's bounds placed in the world
    world_axes = np.empty((bounds.shape[0], 9))
    # each geometry's sphere centre in its link's frame; an obstacle's in the world (it stands still)
    centers = np.empty((geometries, 3))
    for o in range(bounds.shape[0]):
        frame = geometry_origin[o] if o < geometries else obstacle_poses[o - geometries]
        for r in range(3):
            center = (frame[r, 0] * bounds[o, SPHERE] + frame[r, 1] * bounds[o, SPHERE + 1]
                      + frame[r, 2] * bounds[o, SPHERE + 2] + frame[r, 3])
            if o < geometries:
                centers[o, r] = center
            else:
                world[o, W_SPHERE + r] = center
        world[o, W_SPHERE + 3] = bounds[o, SPHERE + 3]
        if o >= geometries:
            _place(obstacle_poses, o - geometries, bounds, o, world, world_axes)
    placed = np.full(geometries, lo - 1, dtype=np.int64)  # the configuration each geometry's box is placed at
    last = -1  # the pair that collided last in this chunk: tried first (first_only)
    for i in range(lo, hi):
        tree_poses(parent, joint_type, origin, axis, dof, multiplier, offset, q[i], link_poses, joint_frame, motion)
        _place_spheres(link_poses, geometry_link, centers, world)
        hit = False
        for step in range(-1, pairs.shape[0]):
            # step -1 tries the last colliding pair (configurations of a batch often collide the
            # same way), then every pair in order; only the order of the tests changes, never
            # an answer
            p = last if step < 0 else step
            if p < 0 or (step >= 0 and p == last):
                continue
            way = pairs[p, ROUTE]
            if way == ROUTE_PYTHON:
                continue
            a = pairs[p, FIRST]
            b = pairs[p, SECOND]
            # the spheres, tested here and not in a helper: a call, even inlined, binds the arrays
            # it takes, and their reference counting on every pair cost more than the test
            gap2 = 0.0
            scale = 0.0
            for r in range(3):
                delta = world[a, W_SPHERE + r] - world[b, W_SPHERE + r]
                gap2 += delta * delta
                scale = max(scale, abs(world[a, W_SPHERE + r]), abs(world[b, W_SPHERE + r]))
            reach = world[a, W_SPHERE + 3] + world[b, W_SPHERE + 3]
            reach += 1e-9 * (scale + reach)
            if gap2 > reach * reach:
                continue
            if a < geometries and placed[a] != i:
                _place_geometry(a, link_poses, geometry_link, geometry_origin, geometry_poses, bounds, world, world_axes)
                placed[a] = i
            if b < geometries and placed[b] != i:
                _place_geometry(b, link_poses, geometry_link, geometry_origin, geometry_poses, bounds, world, world_axes)
                placed[b] = i
            if _boxes_apart(world, world_axes, a, b):
                continue
            ta = _object_pose(a, geometry_poses, obstacle_poses)
            tb = _object_pose(b, geometry_poses, obstacle_poses)
            address = pairs[p, ENGINE]
            if address == 0:
                out_missing[p] = True
                continue
            nodes_b, node_bounds_b, triangles_b, ids_b = _tree_of(b, layout, node_index, node_bounds, tri_vertices,
                                                                  tri_ids)
            if way == ROUTE_MESH_MESH:
                nodes_a, node_bounds_a, triangles_a, _ = _tree_of(a, layout, node_index, node_bounds, tri_vertices,
                                                                  tri_ids)
                code = call_mesh_mesh(address, (nodes_a, node_bounds_a, triangles_a, ta, nodes_b, node_bounds_b,
                                                triangles_b, tb, stack_rows))
                # 1: overlap; 0: none; < 0 (a pose not rigid: never from the kinematics or a
                # checked obstacle pose) counts as a collision, never as a silent miss
                overlap = code != 0
            else:
                kind_a, params_a, points_a, tris_a, edges_a = _shape_of(a, layout, params, points, tris, edges)
                kind_b, params_b, points_b, tris_b, edges_b = _shape_of(b, layout, params, points, tris, edges)
                if way == ROUTE_SHAPE_MESH:
                    signed = call_mesh_engine(address, (
                        kind_a, params_a, points_a, tris_a, edges_a, ta, points_b, tris_b, tb, nodes_b, node_bounds_b,
                        triangles_b, ids_b, bounds[b, MESH_SCALE], True, node_stack, node_stack_lb))[0]
                    overlap = not (signed > 0.0)
                else:
                    signed = call_pair_engine(address, (
                        True, kind_a, params_a, points_a, tris_a, edges_a, ta, kind_b, params_b, points_b, tris_b,
                        edges_b, tb, 0.0))[0]
                    overlap = signed <= 0.0
            if overlap:
                hit = True
                if record:
                    out_pairs[i, p] = True
                if first_only:
                    last = p
                    break
        out_hit[i] = hit


@njit(cache=True, nogil=True, inline="always")
def _store(i, p, signed, point_a, point_b, normal, status, out_signed, out_point_a, out_point_b, out_normal,
           out_status):
    out_signed[i, p] = signed
    for k in range(3):
        out_point_a[i, p, k] = point_a[k]
        out_point_b[i, p, k] = point_b[k]
        out_normal[i, p, k] = normal[k]
    out_status[i, p] = status


@njit(cache=True, nogil=True)
def _face_normal(tri_vertices, tri_positions, start, face, pose, sign):
    """(world normal (3,), its length) of triangle ``face`` (original id) of the mesh whose tree
    rows start at ``start``: ``sign`` x the right-hand-rule cross product, turned by ``pose``,
    term by term as touche.query's mesh-mesh distance writes it (the same bits)."""
    row = start + tri_positions[start + face]
    x0, y0, z0 = tri_vertices[row, 0, 0], tri_vertices[row, 0, 1], tri_vertices[row, 0, 2]
    ux, uy, uz = tri_vertices[row, 1, 0] - x0, tri_vertices[row, 1, 1] - y0, tri_vertices[row, 1, 2] - z0
    vx, vy, vz = tri_vertices[row, 2, 0] - x0, tri_vertices[row, 2, 1] - y0, tri_vertices[row, 2, 2] - z0
    l0, l1, l2 = sign * (uy * vz - uz * vy), sign * (uz * vx - ux * vz), sign * (ux * vy - uy * vx)
    world = np.empty(3)
    for r in range(3):
        world[r] = pose[r, 0] * l0 + pose[r, 1] * l1 + pose[r, 2] * l2
    return world, np.sqrt(world[0] * world[0] + world[1] * world[1] + world[2] * world[2])


@njit(cache=True, nogil=True)
def pair_table_distances_many(q, parent, joint_type, origin, axis, dof, multiplier, offset, geometry_link,
                              geometry_origin, obstacle_poses, layout, scales, max_leaf, params, points, tris, edges,
                              node_index, node_bounds, tri_vertices, tri_ids, tri_positions, pairs, stack_rows,
                              out_signed, out_point_a, out_point_b, out_normal, out_status, out_missing, lo, hi,
                              pair_lo, pair_hi):
    """Configurations lo .. hi - 1 of ``q`` (n, dof), pairs pair_lo .. pair_hi - 1 (a batch
    splits its configurations over the threads, one configuration its pairs): signed distance,
    world points (the pair's first member's, then its second's), normal (first to second) and
    status of every pair p whose route is compiled, written to row i, column p of the
    (n, P[, 3]) outputs (ROUTE_PYTHON
    columns are left as they are: the caller fills them). The numbers are touche.distance's for
    the same shapes and poses: batch.distance_one (closed forms, then the pair engine family at
    ``pairs[p, ENGINE]``, intersects_only False) for two convex shapes;
    bvh_shape.mesh_pair_distance for a shape and a surface mesh (``pairs[p, SWAPPED]``: the mesh
    is the pair's first member); for two surface meshes the tree distance
    (MESH_MESH_DISTANCE) and query.py's normal: between the closest points when apart, else the
    face normal of the first mesh's closest triangle (the second's, reversed, when it has no
    area; +z when neither has) and TOUCHING within the touching band.

    ``scales`` (objects,) each shape's ``scale``; ``max_leaf`` (objects,) int64 a mesh tree's
    largest leaf; ``tri_positions`` (tree rows) int64: row of each original triangle id in its
    mesh's tree (the inverse of tri_ids), laid out as tri_ids. ``stack_rows`` >= the deepest
    pair's 2 (depth_a + depth_b) + 8. Addresses as pair_table_intersects_many (``out_missing``)."""
    node_stack = np.empty(stack_rows, dtype=np.int64)  # the mesh engine's descent
    node_stack_lb = np.empty(stack_rows)
    one_distance = np.empty(1)  # the mesh-mesh distance's outputs
    one_point_a = np.empty((1, 3))
    one_point_b = np.empty((1, 3))
    one_ids = np.empty((1, 2), dtype=np.int64)
    geometries = geometry_link.shape[0]
    link_poses = np.empty((parent.shape[0], 4, 4))
    joint_frame = np.empty((4, 4))
    motion = np.empty((4, 4))
    # every configuration's geometry poses first, then pair by pair over the configurations: a
    # pair's shapes and trees stay in cache while its configurations run
    chunk_poses = np.empty((max(hi - lo, 1), geometries, 4, 4))
    for i in range(lo, hi):
        tree_poses(parent, joint_type, origin, axis, dof, multiplier, offset, q[i], link_poses, joint_frame, motion)
        poses = chunk_poses[i - lo]
        for o in range(geometries):
            rigid_product_at(link_poses, geometry_link[o], geometry_origin, o, poses, o)
    for p in range(pair_lo, pair_hi):
        way = pairs[p, ROUTE]
        if way == ROUTE_PYTHON:
            continue
        address = pairs[p, ENGINE]
        if address == 0:
            out_missing[p] = True
            continue
        a = pairs[p, FIRST]
        b = pairs[p, SECOND]
        nodes_a, node_bounds_a, triangles_a, ids_a = _tree_of(a, layout, node_index, node_bounds, tri_vertices, tri_ids)
        nodes_b, node_bounds_b, triangles_b, ids_b = _tree_of(b, layout, node_index, node_bounds, tri_vertices, tri_ids)
        kind_a, params_a, points_a, tris_a, edges_a = _shape_of(a, layout, params, points, tris, edges)
        kind_b, params_b, points_b, tris_b, edges_b = _shape_of(b, layout, params, points, tris, edges)
        shape_first = pairs[p, SWAPPED] == 0
        for i in range(lo, hi):
            geometry_poses = chunk_poses[i - lo]
            ta = _object_pose(a, geometry_poses, obstacle_poses)
            tb = _object_pose(b, geometry_poses, obstacle_poses)
            if way == ROUTE_MESH_MESH:
                poses_a = (geometry_poses[a:a + 1] if a < geometries
                           else obstacle_poses[a - geometries:a - geometries + 1])
                poses_b = (geometry_poses[b:b + 1] if b < geometries
                           else obstacle_poses[b - geometries:b - geometries + 1])
                call_mesh_mesh_distance(address, (
                    nodes_a, node_bounds_a, triangles_a, ids_a, poses_a, nodes_b, node_bounds_b, triangles_b, ids_b,
                    poses_b, stack_rows, max(max_leaf[a], max_leaf[b]), one_distance, one_point_a, one_point_b,
                    one_ids))
                dist = one_distance[0]
                normal = np.empty(3)
                if dist > 0.0:
                    for k in range(3):
                        normal[k] = (one_point_b[0, k] - one_point_a[0, k]) / dist
                else:
                    world, length = _face_normal(tri_vertices, tri_positions, layout[TRIANGLES_AT, a], one_ids[0, 0],
                                                 ta, 1.0)
                    if not length > 0.0:
                        world, length = _face_normal(tri_vertices, tri_positions, layout[TRIANGLES_AT, b],
                                                     one_ids[0, 1], tb, -1.0)
                    if length > 0.0:
                        for k in range(3):
                            normal[k] = world[k] / length
                    else:
                        normal[0] = 0.0
                        normal[1] = 0.0
                        normal[2] = 1.0
                touching = touching_tolerance(scales[a], ta, scales[b], tb)
                status = kinds.SEPARATED if dist > touching else kinds.TOUCHING
                _store(i, p, dist, one_point_a[0], one_point_b[0], normal, status, out_signed, out_point_a,
                       out_point_b, out_normal, out_status)
                continue
            if way == ROUTE_SHAPE_MESH:
                signed, point_a, point_b, normal, status = mesh_pair_distance(
                    address, kind_a, params_a, points_a, tris_a, edges_a, scales[a], ta, points_b, tris_b, scales[b],
                    tb, nodes_b, node_bounds_b, triangles_b, ids_b, shape_first, node_stack, node_stack_lb)
            else:
                signed, point_a, point_b, normal, status = distance_one(
                    address, kind_a, params_a, points_a, tris_a, edges_a, scales[a], ta, kind_b, params_b, points_b,
                    tris_b, edges_b, scales[b], tb)
            _store(i, p, signed, point_a, point_b, normal, status, out_signed, out_point_a, out_point_b, out_normal,
                   out_status)
