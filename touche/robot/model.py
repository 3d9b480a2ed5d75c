"""A robot: kinematic tree, collision geometry, allowed-collision matrix, and the checks.

Every check runs for a batch of configurations q (n, dof) at once: one compiled call computes
the world pose of every link (forward kinematics) and one the pose of every collision geometry.
The boolean checks (``in_collision``, ``collisions``) then make one compiled call over
configurations x pairs (robot/_pairs.py, _kernels/narrow/pair_table.py): bounding spheres and
boxes cull each pair, the narrow phase of touche.intersects answers the rest, and a configuration
stops at its first colliding pair when only a boolean is wanted. Pairs the table does not compile
(a solid mesh, a height field) and the distance checks run touche's batch verbs once per pair
over all the configurations that need it -- never a Python loop over configurations.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _parallel
from .._record import Record
from ..errors import GeometryError, RobotModelError
from ..shapes import Box, Capsule, ConvexPolyhedron, Cylinder, Sphere, TriangleMesh
from . import urdf as _urdf
from ._common import as_obstacles, kernels, local_bounding_sphere, obstacle_spheres
from ._pairs import PairTable, checked_pairs
from . import motion as _motion

ENVIRONMENT = "<environment>"  # the name standing for every obstacle in the allowed-collision matrix

# configurations per chunk handed to a thread (touche._parallel.run): the kinematics cost about
# 0.1 us per link and configuration, a gradient about 0.1 us per joint on the chains
_GRAIN_KINEMATICS = 256
_GRAIN_GRADIENTS = 256
_TABLES_KEPT = 8  # compiled pair tables kept per robot (one per obstacle list in use)
_FLOAT_MAX = float(np.finfo(np.float64).max)

def _keep(cache, key, value):
    """cache[key] = value, dropping the oldest entries beyond _TABLES_KEPT."""
    while len(cache) >= _TABLES_KEPT:
        cache.pop(next(iter(cache)), None)
    cache[key] = value


def _unchanging(item):
    """Whether an obstacle item cannot change behind the robot's back: a shape, or a (shape, Pose)
    tuple (shapes and poses are immutable; an array pose is not)."""
    from ..pose import Pose
    from ..shapes import Shape

    if isinstance(item, Shape):
        return True
    return type(item) is tuple and len(item) == 2 and isinstance(item[0], Shape) and type(item[1]) is Pose


class Geometry(Record):
    """One collision geometry of a link: ``name``, ``link`` (name), ``shape`` (a touche shape in
    the geometry's frame) and ``origin`` (4, 4) its frame in the link's frame."""

    __slots__ = ("name", "link", "shape", "origin")

    def __repr__(self):
        return f"Geometry({self.name!r}, {type(self.shape).__name__})"


def _mesh_shape(path, scale, meshes, cache, source):
    """The shape of a URDF mesh: a TriangleMesh (meshes="mesh") or the convex hull of its vertices
    (meshes="convex"), scaled; one load per file and scale."""
    from ..errors import MeshFormatError
    from ..mesh import load

    key = (str(path), tuple(scale.tolist()), meshes)
    if key in cache:
        return cache[key]
    try:
        loaded = load(path)
    except MeshFormatError as exc:
        raise RobotModelError(f"{source}: mesh cannot be read: {exc}") from None
    vertices = loaded.vertices * scale
    faces = np.array(loaded.faces)
    if np.prod(np.sign(scale)) < 0:  # a mirroring scale turns the faces inside out: keep them outward
        faces = faces[:, ::-1]
    try:
        shape = ConvexPolyhedron(vertices) if meshes == "convex" else TriangleMesh(vertices, faces)
    except GeometryError as exc:
        raise RobotModelError(f"{source}: mesh {path} is unusable: {exc}") from None
    cache[key] = shape
    return shape


def _element_shape(element, meshes, cache, source):
    size = element.size
    if element.kind == "box":
        return Box(size["size"])
    if element.kind == "cylinder":
        return Cylinder(size["radius"], size["length"])
    if element.kind == "capsule":
        return Capsule(size["radius"], size["length"])
    if element.kind == "sphere":
        return Sphere(size["radius"])
    return _mesh_shape(element.path, element.scale, meshes, cache, source)


class _Tree:
    """The kinematic tree as the kernels take it (see touche/_kernels/motion/robot.py)."""

    def __init__(self, links, joint_of_link, dof_of_joint, mimic_of_joint):
        from .._kernels.motion.robot import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE

        count = len(links)
        index = {name: k for k, name in enumerate(links)}
        self.parent = np.full(count, -1, dtype=np.int64)
        self.joint_type = np.zeros(count, dtype=np.int64)
        self.origin = np.tile(np.eye(4), (count, 1, 1))
        self.axis = np.zeros((count, 3))
        self.dof = np.full(count, -1, dtype=np.int64)
        self.multiplier = np.ones(count)
        self.offset = np.zeros(count)
        codes = {"fixed": JOINT_FIXED, "revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE,
                 "prismatic": JOINT_PRISMATIC}
        for k, name in enumerate(links):
            joint = joint_of_link.get(name)
            if joint is None:
                continue
            self.parent[k] = index[joint.parent]
            self.joint_type[k] = codes[joint.type]
            self.origin[k] = joint.origin
            self.axis[k] = joint.axis
            if joint.name in dof_of_joint:
                self.dof[k] = dof_of_joint[joint.name]
            elif joint.name in mimic_of_joint:
                master, multiplier, offset = mimic_of_joint[joint.name]
                self.dof[k] = dof_of_joint[master]
                self.multiplier[k] = multiplier
                self.offset[k] = offset


class Robot:
    """A robot read from a URDF (see :func:`load_urdf`).

    Attributes: ``name``; ``link_names`` (links in tree order, the root first);
    ``joint_names`` (the ``dof`` actuated joints, columns of a configuration, in tree order; mimic
    and fixed joints are not columns); ``lower`` / ``upper`` (dof,) joint limits (+-inf for a
    continuous joint); ``geometries`` (list of :class:`Geometry`).

    Configurations ``q`` are (dof,) for one or (n, dof) for a batch; every method answers with the
    batch axis first, or without it for one configuration. Values outside the limits raise
    GeometryError unless ``allow_outside_limits=True``.
    """

    def __init__(self, description, disabled_pairs=(), *, meshes="mesh"):
        if meshes not in ("mesh", "convex"):
            raise GeometryError(f"meshes must be 'mesh' or 'convex', got {meshes!r}")
        source = str(description.path) if description.path is not None else "<urdf string>"
        self.name = description.name
        self._source = source
        links, joint_of_link = self._tree_order(description, source)
        self.link_names = links
        self._link_index = {name: k for k, name in enumerate(links)}
        joints = [joint_of_link[name] for name in links[1:]]
        self._joints = {joint.name: joint for joint in joints}
        mimic_of_joint = self._resolve_mimics(joints, source)
        actuated = [j for j in joints if j.type != "fixed" and j.name not in mimic_of_joint]
        self.joint_names = [joint.name for joint in actuated]
        self.dof = len(actuated)
        self.lower = np.array([joint.lower for joint in actuated], dtype=np.float64).reshape(self.dof)
        self.upper = np.array([joint.upper for joint in actuated], dtype=np.float64).reshape(self.dof)
        self._tree = _Tree(links, joint_of_link, {name: i for i, name in enumerate(self.joint_names)},
                           mimic_of_joint)
        self.geometries = self._geometries(description, meshes, source)
        count = len(links)
        self._allowed = np.zeros((count, count), dtype=bool)
        self._allowed_environment = np.zeros(count, dtype=bool)
        self._allow_adjacent()
        for a, b in disabled_pairs:
            self.allow(a, b)

    # -------------------------------------------------------------------------------------------
    # building
    @staticmethod
    def _tree_order(description, source):
        """Links in depth-first order from the root (children in file order) and each link's
        parent joint; a RobotModelError for a link with two parents, no root, several roots, a
        cycle, or a joint naming an unknown link."""
        known = set(description.links)
        joint_of_link = {}
        children = {name: [] for name in description.links}
        for joint in description.joints:
            for end in (joint.parent, joint.child):
                if end not in known:
                    raise RobotModelError(f"{source}: joint {joint.name!r} names link {end!r}, which is not defined")
            if joint.child in joint_of_link:
                raise RobotModelError(
                    f"{source}: link {joint.child!r} is the child of two joints, {joint_of_link[joint.child].name!r} "
                    f"and {joint.name!r} (a closed chain or a cycle; URDF describes trees)"
                )
            if joint.parent == joint.child:
                raise RobotModelError(f"{source}: joint {joint.name!r} connects link {joint.child!r} to itself (a cycle)")
            joint_of_link[joint.child] = joint
            children[joint.parent].append(joint.child)
        roots = [name for name in description.links if name not in joint_of_link]
        if not roots:
            raise RobotModelError(f"{source}: every link has a parent joint: the joints form a cycle")
        if len(roots) > 1:
            raise RobotModelError(f"{source}: the links form {len(roots)} separate trees (roots {roots}); "
                                  "a robot has one root link")
        order = []
        stack = [roots[0]]
        while stack:
            name = stack.pop()
            order.append(name)
            stack.extend(reversed(children[name]))
        if len(order) != len(description.links):
            cut = [name for name in description.links if name not in set(order)]
            raise RobotModelError(f"{source}: links {cut} are not reachable from the root {roots[0]!r}: "
                                  "their joints form a cycle")
        return order, joint_of_link

    @staticmethod
    def _resolve_mimics(joints, source):
        """{mimic joint: (actuated master, multiplier, offset)}, a mimic of a mimic composed."""
        by_name = {joint.name: joint for joint in joints}
        resolved = {}
        for joint in joints:
            if joint.mimic is None:
                continue
            multiplier, offset = 1.0, 0.0
            current, seen = joint, [joint.name]
            while current.mimic is not None:
                master, m, o = current.mimic
                if master not in by_name:
                    raise RobotModelError(f"{source}: joint {current.name!r} mimics {master!r}, which is not a joint")
                if by_name[master].type == "fixed":
                    raise RobotModelError(f"{source}: joint {current.name!r} mimics the fixed joint {master!r}")
                if master in seen:
                    raise RobotModelError(f"{source}: mimic joints form a cycle: {' -> '.join(seen + [master])}")
                multiplier, offset = multiplier * m, multiplier * o + offset
                seen.append(master)
                current = by_name[master]
            resolved[joint.name] = (current.name, multiplier, offset)
        return resolved

    def _geometries(self, description, meshes, source):
        per_link = {}
        for element in description.collisions:
            per_link.setdefault(element.link, []).append(element)
        geometries = []
        cache = {}
        for link in self.link_names:
            elements = per_link.get(link, [])
            for k, element in enumerate(elements):
                name = link if len(elements) == 1 else f"{link}[{k}]"
                where = f"{source}: link {link!r} <collision> {k}"
                geometries.append(Geometry(name, link, _element_shape(element, meshes, cache, where),
                                           np.ascontiguousarray(element.origin)))
        self._geometry_link = np.array([self._link_index[g.link] for g in geometries], dtype=np.int64)
        self._geometry_origin = np.ascontiguousarray(np.array([g.origin for g in geometries]).reshape(-1, 4, 4))
        spheres = [local_bounding_sphere(g.shape) for g in geometries]
        # the sphere's centre moved into the geometry frame's parent, the link: cull in one frame
        self._sphere_center = np.array([c for c, _ in spheres], dtype=np.float64).reshape(-1, 3)
        self._sphere_radius = np.array([r for _, r in spheres], dtype=np.float64)
        # how far a geometry's points can be from its link's origin (the motion checks' speed bound)
        self._geometry_reach = np.array(
            [np.linalg.norm(g.origin[:3, :3] @ c + g.origin[:3, 3]) + r for g, (c, r) in zip(geometries, spheres)],
            dtype=np.float64).reshape(len(geometries))
        return geometries

    def _allow_adjacent(self):
        """Allow the pairs a check would only waste time on: each link with geometry and its
        nearest ancestor with geometry (links without geometry skipped, as MoveIt's "adjacent"),
        and links joined by fixed joints only (their relative pose never changes)."""
        tree = self._tree
        has_geometry = np.zeros(len(self.link_names), dtype=bool)
        has_geometry[self._geometry_link] = True
        rigid_root = np.arange(len(self.link_names))
        for k in range(1, len(self.link_names)):  # tree order: a parent's root is known first
            if tree.dof[k] < 0:
                rigid_root[k] = rigid_root[tree.parent[k]]
        for k in range(1, len(self.link_names)):
            ancestor = tree.parent[k]
            while ancestor > 0 and not has_geometry[ancestor]:
                ancestor = tree.parent[ancestor]
            self._set_allowed(k, ancestor, True)
        for a in range(len(self.link_names)):
            for b in range(a + 1, len(self.link_names)):
                if rigid_root[a] == rigid_root[b]:
                    self._set_allowed(a, b, True)

    # -------------------------------------------------------------------------------------------
    # allowed-collision matrix
    def link_index(self, link):
        try:
            return self._link_index[link]
        except KeyError:
            raise GeometryError(f"robot {self.name!r} has no link {link!r}") from None

    def _set_allowed(self, a, b, value):
        self._allowed[a, b] = self._allowed[b, a] = value
        self._pairs_cache = None
        self._forget_tables()

    def allow(self, link_a, link_b, allowed=True):
        """Never check ``link_a`` against ``link_b`` (``allowed=False``: check them again). Either
        may be :data:`ENVIRONMENT`, standing for every obstacle."""
        if link_a == ENVIRONMENT and link_b == ENVIRONMENT:
            raise GeometryError("allow() needs at least one link of the robot")
        if ENVIRONMENT in (link_a, link_b):
            link = link_b if link_a == ENVIRONMENT else link_a
            self._allowed_environment[self.link_index(link)] = allowed
            self._forget_tables()
            return
        a, b = self.link_index(link_a), self.link_index(link_b)
        if a == b:
            raise GeometryError(f"allow() needs two different links, got {link_a!r} twice")
        self._set_allowed(a, b, bool(allowed))

    def forbid(self, link_a, link_b):
        """Check ``link_a`` against ``link_b`` again (the inverse of :meth:`allow`)."""
        self.allow(link_a, link_b, False)

    def is_allowed(self, link_a, link_b):
        """Whether the pair is skipped by the checks."""
        if ENVIRONMENT in (link_a, link_b):
            return bool(self._allowed_environment[self.link_index(link_b if link_a == ENVIRONMENT else link_a)])
        return bool(self._allowed[self.link_index(link_a), self.link_index(link_b)])

    def sample_allowed_collisions(self, n_samples=10_000, seed=0, *, always_fraction=0.95, configurations=None,
                                  apply=True):
        """MoveIt setup assistant's automatic pass: check the robot against itself at
        ``n_samples`` random configurations (uniform within the limits, continuous joints in
        [-pi, pi], ``numpy.random.default_rng(seed)``; or your own ``configurations`` (n, dof))
        and allow the link pairs that never collided ("never") and those that collided in at
        least ``always_fraction`` of them ("always"). Statistical, as MoveIt's: a pair that
        collides in a rare configuration the samples missed is allowed too.

        Only pairs checked now are considered (already-allowed pairs stay as they are). With
        ``apply=False`` nothing changes. Returns a :class:`SampledCollisions`."""
        if not (0.0 < always_fraction <= 1.0):
            raise GeometryError(f"always_fraction must be in (0, 1], got {always_fraction}")
        if configurations is None:
            if int(n_samples) < 1:
                raise GeometryError(f"n_samples must be >= 1, got {n_samples}")
            lower = np.where(np.isfinite(self.lower), self.lower, -np.pi)
            upper = np.where(np.isfinite(self.upper), self.upper, np.pi)
            configurations = lower + (upper - lower) * np.random.default_rng(seed).random((int(n_samples), self.dof))
        q, _ = self.configurations(configurations)
        if len(q) == 0:
            raise GeometryError("sample_allowed_collisions needs at least one configuration")
        pairs = self.self_pairs
        colliding = self.collisions(q).colliding.reshape(len(q), len(pairs))
        links = self._geometry_link
        # one link pair may have several geometry pairs: it collides when any of them does
        link_pairs = sorted({(min(links[a], links[b]), max(links[a], links[b])) for a, b in pairs})
        column = {pair: k for k, pair in enumerate(link_pairs)}
        per_link_pair = np.zeros((len(q), len(link_pairs)), dtype=bool)
        for p, (a, b) in enumerate(pairs):
            per_link_pair[:, column[(min(links[a], links[b]), max(links[a], links[b]))]] |= colliding[:, p]
        fraction = per_link_pair.mean(axis=0)
        added = []
        fractions = {}
        for k, (a, b) in enumerate(link_pairs):
            names = (self.link_names[a], self.link_names[b])
            fractions[names] = float(fraction[k])
            reason = "never" if fraction[k] == 0.0 else "always" if fraction[k] >= always_fraction else None
            if reason is not None:
                added.append((names[0], names[1], reason))
                if apply:
                    self.allow(*names)
        return SampledCollisions(added, fractions, len(q))

    @property
    def allowed_collisions(self):
        """(links, links) bool, a copy: True where the pair is never checked."""
        return self._allowed.copy()

    @property
    def self_pairs(self):
        """The geometry pairs the self-collision check tests: a list of (index, index) into
        ``geometries``, two different links not allowed to touch."""
        if getattr(self, "_pairs_cache", None) is None:
            links = self._geometry_link
            self._pairs_cache = [
                (a, b)
                for a in range(len(links))
                for b in range(a + 1, len(links))
                if links[a] != links[b] and not self._allowed[links[a], links[b]]
            ]
        return list(self._pairs_cache)

    # -------------------------------------------------------------------------------------------
    # kinematics
    def configurations(self, q, *, allow_outside_limits=False):
        """``q`` as a float64 (n, dof) array and whether it was one configuration; GeometryError
        for a wrong length, non-finite values or (unless allowed) values outside the limits,
        naming the joint and the configuration."""
        array = np.asarray(q, dtype=np.float64)
        single = array.ndim == 1
        if single:
            if array.shape[0] == self.dof and self._plainly_valid(array.tolist(), allow_outside_limits):
                return np.ascontiguousarray(array[None]), True
            array = array[None]
        if array.ndim != 2 or array.shape[1] != self.dof:
            raise GeometryError(
                f"a configuration of robot {self.name!r} has {self.dof} values (joints {self.joint_names}); "
                f"got an array of shape {np.shape(q)}"
            )
        if not np.isfinite(array).all():
            row, column = np.argwhere(~np.isfinite(array))[0]
            raise GeometryError(f"configuration {row}: joint {self.joint_names[column]!r} is {float(array[row, column])}")
        if not allow_outside_limits:
            outside = (array < self.lower) | (array > self.upper)
            if outside.any():
                row, column = np.argwhere(outside)[0]
                raise GeometryError(
                    f"configuration {row}: joint {self.joint_names[column]!r} = {float(array[row, column])} is outside its "
                    f"limits [{float(self.lower[column])}, {float(self.upper[column])}] ({int(outside.any(axis=1).sum())} "
                    "configuration(s) outside; pass allow_outside_limits=True to check them anyway)"
                )
        return np.ascontiguousarray(array), single

    def _plainly_valid(self, values, allow_outside_limits):
        """Whether one configuration's values (a list) are all finite and (unless allowed) within
        the limits -- the common case, checked in one pass (a Python loop beats numpy's calls for
        a handful of joints); False sends it to the checks that name the problem. NaN fails every
        comparison, and +-inf fails the comparison with the largest float."""
        lower = self.lower.tolist()
        upper = self.upper.tolist()
        for value, low, high in zip(values, lower, upper):
            if not -_FLOAT_MAX <= value <= _FLOAT_MAX:
                return False
            if not allow_outside_limits and not low <= value <= high:
                return False
        return True

    def _link_poses(self, q):
        tree = self._tree
        poses = np.empty((len(q), len(self.link_names), 4, 4))
        _parallel.run(kernels().forward_kinematics_many, len(q), tree.parent, tree.joint_type, tree.origin,
                      tree.axis, tree.dof, tree.multiplier, tree.offset, q, poses, grain=_GRAIN_KINEMATICS)
        return poses

    def _geometry_poses(self, link_poses):
        poses = np.empty((len(self.geometries), len(link_poses), 4, 4))
        _parallel.run(kernels().geometry_poses_many, len(link_poses), link_poses, self._geometry_link,
                      self._geometry_origin, poses, grain=_GRAIN_KINEMATICS)
        return poses

    def forward_kinematics(self, q, *, allow_outside_limits=False):
        """World poses of every link (``link_names`` order): (links, 4, 4) for one configuration,
        (n, links, 4, 4) for a batch -- one compiled call."""
        q, single = self.configurations(q, allow_outside_limits=allow_outside_limits)
        poses = self._link_poses(q)
        return poses[0] if single else poses

    def geometry_poses(self, q, *, allow_outside_limits=False):
        """World poses of every collision geometry: (geometries, 4, 4) for one configuration,
        (geometries, n, 4, 4) for a batch (geometry first: each geometry's batch is contiguous)."""
        q, single = self.configurations(q, allow_outside_limits=allow_outside_limits)
        poses = self._geometry_poses(self._link_poses(q))
        return poses[:, 0] if single else poses

    # -------------------------------------------------------------------------------------------
    # checks
    def _pair_table(self, obstacles, self_collision):
        """(names, pair_a, pair_b) of the pairs to test (robot/_pairs.py checked_pairs)."""
        pair_a, pair_b = checked_pairs(self, len(obstacles), self_collision)
        names = self._pair_names(obstacles, pair_a, pair_b)
        return names, np.array(pair_a, dtype=np.int64), np.array(pair_b, dtype=np.int64)

    def _pair_names(self, obstacles, pair_a, pair_b):
        return [(self.geometries[a].name, self.geometries[b].name if b >= 0 else obstacles[-b - 1][2])
                for a, b in zip(pair_a, pair_b)]

    def _prepare(self, q, obstacles, self_collision, allow_outside_limits):
        q, single = self.configurations(q, allow_outside_limits=allow_outside_limits)
        obstacles = as_obstacles(obstacles)
        link_poses = self._link_poses(q)
        geometry_poses = self._geometry_poses(link_poses)
        names, pair_a, pair_b = self._pair_table(obstacles, self_collision)
        return q, single, obstacles, link_poses, geometry_poses, names, pair_a, pair_b

    def _other(self, b, geometry_poses, obstacles):
        """Shape and pose (batch or single) of a pair's second member."""
        if b >= 0:
            return self.geometries[b].shape, geometry_poses[b]
        shape, pose, _ = obstacles[-b - 1]
        return shape, pose

    def _candidates(self, geometry_poses, obstacles, pair_a, pair_b):
        """(pairs, n) bool: the pairs whose bounding spheres overlap, per configuration."""
        count = geometry_poses.shape[1]
        out = np.empty((len(pair_a), count), dtype=bool)
        centers, radii = obstacle_spheres(obstacles)
        _parallel.run(kernels().sphere_overlaps_many, count, geometry_poses, self._sphere_center,
                      self._sphere_radius, pair_a, pair_b, centers, radii, out, grain=_GRAIN_KINEMATICS)
        return out

    def _forget_tables(self):
        """The compiled pair tables list the checked pairs: rebuilt after the matrix changes."""
        self._tables = {}
        self._setups = {}

    def __getstate__(self):
        # the compiled pair tables hold kernel handles and are rebuilt on first use: not pickled
        # (a robot travels to Dask workers by pickle)
        state = self.__dict__.copy()
        state.pop("_tables", None)
        state.pop("_setups", None)
        return state

    def _checked_pairs(self, obstacles, self_collision):
        """The compiled pair table (robot/_pairs.py) of these obstacles' shapes; the robot keeps
        the last few, keyed by the shapes' identities (each entry holds its shapes, so no key is
        reused by another shape while kept)."""
        shapes = [shape for shape, _, _ in obstacles]
        key = (bool(self_collision), tuple(id(shape) for shape in shapes))
        tables = self.__dict__.setdefault("_tables", {})
        entry = tables.get(key)
        if entry is None:
            entry = (PairTable(self, shapes, self_collision), shapes)
            _keep(tables, key, entry)
        return entry[0]

    def _obstacle_setup(self, obstacles, self_collision):
        """(obstacle entries as as_obstacles gives them, their poses (max(1, O), 4, 4), the
        compiled pair table). Kept for obstacles that cannot change: a list or tuple whose items
        are all shapes or (shape, Pose) tuples, or one such item -- the same objects again (a
        planner's loop) skip the conversion; anything else is converted at every call."""
        holder = obstacles if type(obstacles) is list or type(obstacles) is tuple else None
        key = None
        if holder is not None:
            key = (bool(self_collision), type(obstacles) is tuple, tuple(map(id, holder)))
            setups = self.__dict__.get("_setups")
            entry = setups.get(key) if setups else None
            if entry is not None:
                return entry[1], entry[2], entry[3]
        entries = as_obstacles(obstacles)
        poses = (np.ascontiguousarray(np.array([pose for _, pose, _ in entries], dtype=np.float64)) if entries
                 else np.zeros((1, 4, 4)))
        table = self._checked_pairs(entries, self_collision)
        if key is not None and all(_unchanging(item) for item in holder):
            # the entry holds the items: their ids stay theirs while it is kept
            _keep(self.__dict__.setdefault("_setups", {}), key, (tuple(holder), entries, poses, table))
        return entries, poses, table

    def _table_check(self, q, obstacles, self_collision, allow_outside_limits, first_only):
        """(single, obstacles, table, hit (n,), colliding (n, P) or None) of a boolean check: the
        compiled table first, then touche.intersects for the pairs it leaves (rows already hit
        skipped when ``first_only``)."""
        from ..query import intersects

        q, single = self.configurations(q, allow_outside_limits=allow_outside_limits)
        obstacles, obstacle_poses, table = self._obstacle_setup(obstacles, self_collision)
        hit, colliding = table.intersect(self, q, obstacle_poses, first_only, not first_only)
        if len(table.python_pairs):
            poses = self._geometry_poses(self._link_poses(q))
            pair_a, pair_b = table.pair_a[table.python_pairs], table.pair_b[table.python_pairs]
            candidates = self._candidates(poses, obstacles, pair_a, pair_b)
            for k, p in enumerate(table.python_pairs):
                rows = np.flatnonzero(candidates[k] & ~hit) if first_only else np.flatnonzero(candidates[k])
                if len(rows) == 0:
                    continue
                shape_b, pose_b = self._other(pair_b[k], poses, obstacles)
                pose_b = pose_b[rows] if pair_b[k] >= 0 else pose_b
                found = np.asarray(intersects(self.geometries[pair_a[k]].shape, poses[pair_a[k]][rows], shape_b,
                                              pose_b))
                hit[rows[found]] = True
                if colliding is not None:
                    colliding[rows, p] = found
        return single, obstacles, table, hit, colliding

    def in_collision(self, q, obstacles=None, *, self_collision=True, allow_outside_limits=False):
        """Whether each configuration collides: with itself (pairs the allowed-collision matrix
        does not allow) or with an obstacle. A bool for one configuration, (n,) bool for a batch.

        ``obstacles``: None, a touche shape, a (shape, pose) pair, a list of these, or a
        :class:`touche.CollisionWorld` (its objects at their current poses). Stops early: a
        configuration found colliding is not tested against the remaining pairs."""
        single, _, _, hit, _ = self._table_check(q, obstacles, self_collision, allow_outside_limits, True)
        return bool(hit[0]) if single else hit

    def collisions(self, q, obstacles=None, *, self_collision=True, allow_outside_limits=False):
        """Every colliding pair of every configuration: a :class:`CollisionReport`. ``obstacles``
        as in :meth:`in_collision`."""
        single, obstacles, table, _, colliding = self._table_check(q, obstacles, self_collision,
                                                                   allow_outside_limits, False)
        names = self._pair_names(obstacles, table.pair_a, table.pair_b)
        return CollisionReport(names, colliding[0] if single else colliding)

    def distances(self, q, obstacles=None, *, self_collision=True, gradients=False, allow_outside_limits=False):
        """Signed distance, witness points and normal of every checked pair at every
        configuration: a :class:`RobotDistances`. ``gradients=True`` adds each pair's gradient
        of the signed distance with respect to the configuration. ``obstacles`` as in
        :meth:`in_collision`."""
        from ..query import distance

        q, single = self.configurations(q, allow_outside_limits=allow_outside_limits)
        obstacles, obstacle_poses, table = self._obstacle_setup(obstacles, self_collision)
        pair_a, pair_b = table.pair_a, table.pair_b
        names = self._pair_names(obstacles, pair_a, pair_b)
        # one compiled call for every pair the table answers (robot/_pairs.py), the same numbers
        # as touche.distance per pair, which still answers the pairs it leaves (solid meshes)
        signed, point_a, point_b, normal, status = table.distances(self, q, obstacle_poses)
        link_poses = None
        if len(table.python_pairs) or gradients:
            link_poses = self._link_poses(q)
            poses = self._geometry_poses(link_poses)
        for p in table.python_pairs:
            shape_b, pose_b = self._other(pair_b[p], poses, obstacles)
            result = distance(self.geometries[pair_a[p]].shape, poses[pair_a[p]], shape_b, pose_b)
            signed[:, p] = result.signed_distance
            point_a[:, p] = result.point_a
            point_b[:, p] = result.point_b
            normal[:, p] = result.normal
            status[:, p] = result.status
        gradient = None
        if gradients:
            gradient = self._gradients(q, link_poses, obstacles, pair_a, pair_b, signed, point_a, point_b, normal,
                                       status)
        result = RobotDistances(names, signed, point_a, point_b, normal, status, gradient)
        return result._first() if single else result

    @property
    def reach(self):
        """A bound on how far any point of the robot's collision geometry can be from the root
        link's origin, over every configuration within the limits (the length of the chain of
        link origins, prismatic joints at their largest value, plus each geometry's bounding
        sphere): the motion checks' default tolerance is 1e-6 of it."""
        if getattr(self, "_reach", None) is None:
            tree = self._tree
            chain = np.zeros(len(self.link_names))
            for k in range(1, len(self.link_names)):
                step = float(np.linalg.norm(tree.origin[k, :3, 3]))
                if tree.joint_type[k] == kernels().JOINT_PRISMATIC:
                    column = tree.dof[k]
                    ends = tree.multiplier[k] * np.array([self.lower[column], self.upper[column]]) + tree.offset[k]
                    step += float(np.abs(ends).max())
                chain[k] = chain[tree.parent[k]] + step
            reach = chain[self._geometry_link] + self._geometry_reach
            self._reach = float(reach.max()) if len(reach) else 0.0
        return self._reach

    def _segments(self, q0, q1, allow_outside_limits):
        q0, single0 = self.configurations(q0, allow_outside_limits=allow_outside_limits)
        q1, single1 = self.configurations(q1, allow_outside_limits=allow_outside_limits)
        if len(q0) != len(q1):
            if len(q0) == 1:
                q0 = np.ascontiguousarray(np.repeat(q0, len(q1), axis=0))
            elif len(q1) == 1:
                q1 = np.ascontiguousarray(np.repeat(q1, len(q0), axis=0))
            else:
                raise GeometryError(f"q0 and q1 must have the same number of configurations, got {len(q0)} and {len(q1)}")
        return q0, q1, single0 and single1

    def check_motion(self, q0, q1, obstacles=None, *, self_collision=True, tolerance=None,
                     max_iterations=_motion.DEFAULT_MAX_ITERATIONS, allow_outside_limits=False):
        """Certified check of the straight joint-space segment q(s) = q0 + s (q1 - q0), s in
        [0, 1]: free, or the first s where a checked pair (as in :meth:`in_collision`) comes
        within ``tolerance`` -- never missing a contact between samples.

        ``q0``, ``q1``: (dof,) or (n, dof) (one side may be a single configuration: broadcast);
        both ends inside the limits (so is the whole segment) unless ``allow_outside_limits``.
        ``tolerance``: the distance at which a pair counts as in contact (default 1e-6 of
        :attr:`reach`, about a micrometre for a 1 m arm); a pair that comes closer than that
        without touching is reported as a contact (conservative). ``max_iterations``: rounds of
        conservative advancement before the unfinished segments are UNDECIDED.

        Conservative advancement (touche/robot/motion.py, the bound in
        touche/_kernels/motion/robot.py): each pair steps s by (lower bound of its distance) / (bound
        on how fast that distance can change along the segment), the bound from the joint
        motions and the link lengths. Returns a :class:`MotionResult` (scalars for one segment)."""
        q0, q1, single = self._segments(q0, q1, allow_outside_limits)
        names, status, first, pair, lower, iterations = _motion.advance_segments(
            self, q0, q1, obstacles, self_collision, tolerance, max_iterations, along_path=False)
        time = np.where(np.isfinite(first), first, np.nan)
        configuration = q0 + time[:, None] * (q1 - q0)
        tolerance = _motion.DEFAULT_RELATIVE_TOLERANCE * self.reach if tolerance is None else float(tolerance)
        if single:
            return _motion.MotionResult(names, _motion.MotionStatus(int(status[0])), float(time[0]), configuration[0],
                                        int(pair[0]), float(lower[0]), iterations, tolerance)
        return _motion.MotionResult(names, status, time, configuration, pair, lower, iterations, tolerance)

    def check_path(self, qs, obstacles=None, *, self_collision=True, tolerance=None,
                   max_iterations=_motion.DEFAULT_MAX_ITERATIONS, allow_outside_limits=False):
        """Certified check of the path through configurations ``qs`` (m, dof), m >= 2, segment
        k from qs[k] to qs[k + 1] (straight in joint space): every segment advances in lock-step
        (one batched query per pair and iteration over all of them), and segments after the
        first one with a contact are dropped. Arguments as in :meth:`check_motion`; returns a
        :class:`PathResult`."""
        qs, single = self.configurations(qs, allow_outside_limits=allow_outside_limits)
        if single or len(qs) < 2:
            raise GeometryError(f"a path needs at least two configurations (m, {self.dof}), got shape {np.shape(qs)}")
        q0, q1 = np.ascontiguousarray(qs[:-1]), np.ascontiguousarray(qs[1:])
        names, status, first, pair, lower, iterations = _motion.advance_segments(
            self, q0, q1, obstacles, self_collision, tolerance, max_iterations, along_path=True)
        tolerance = _motion.DEFAULT_RELATIVE_TOLERANCE * self.reach if tolerance is None else float(tolerance)
        hit = np.flatnonzero(np.isfinite(first))
        segment = int(hit[0]) if len(hit) else -1
        before = status[:segment] if segment >= 0 else status
        if (before == _motion.MotionStatus.UNDECIDED).any() or (segment >= 0 and status[segment] == _motion.MotionStatus.UNDECIDED):
            path_status = _motion.MotionStatus.UNDECIDED
        else:
            path_status = _motion.MotionStatus.CONTACT if segment >= 0 else _motion.MotionStatus.FREE
        if segment < 0:
            return _motion.PathResult(names, path_status, -1, math.nan, np.full(self.dof, np.nan), -1, math.nan,
                                      iterations, tolerance)
        time = float(first[segment])
        return _motion.PathResult(names, path_status, segment, time, q0[segment] + time * (q1[segment] - q0[segment]),
                                  int(pair[segment]), float(lower[segment]), iterations, tolerance)

    def _gradients(self, q, link_poses, obstacles, pair_a, pair_b, signed, point_a, point_b, normal, status):
        """d signed_distance / d q, (n, pairs, dof).

        Analytic where the witness points are aligned with the normal (point_b - point_a parallel
        to it: every separated or touching pair, and the penetrating pairs GJK / EPA answer): the
        envelope theorem holds the witness points fixed on their links. A penetration depth found
        by the separating-axis test reports each shape's deepest point instead, which are not
        aligned; the derivative then depends on which shape carries the separating face, which
        the result does not say, so those entries are central finite differences of the pair's
        signed distance (one batched FK and one batched distance call per pair)."""
        from ..query import Status, distance

        tree = self._tree
        count, pairs = signed.shape
        gradient = np.empty((count, pairs, self.dof))
        link_b = np.where(pair_b >= 0, self._geometry_link[np.maximum(pair_b, 0)], -1) if pairs else pair_b
        _parallel.run(kernels().distance_gradients_many, count, link_poses, tree.parent, tree.joint_type,
                      tree.axis, tree.dof, tree.multiplier, self._geometry_link[pair_a], link_b,
                      point_a, point_b, normal, gradient, grain=_GRAIN_GRADIENTS)
        delta = point_b - point_a
        off_normal = np.linalg.norm(np.cross(delta, normal), axis=-1)
        misaligned = (status == Status.PENETRATING) & (off_normal > 1e-9 * np.maximum(1.0, np.linalg.norm(delta, axis=-1)))
        step = _GRADIENT_STEP
        shifts = np.concatenate([np.eye(self.dof), -np.eye(self.dof)]) * step  # (2 dof, dof)
        for p in np.flatnonzero(misaligned.any(axis=0)):
            rows = np.flatnonzero(misaligned[:, p])
            shifted = (q[rows, None, :] + shifts[None]).reshape(-1, self.dof)  # no limit check: a step past one is fine
            poses = self._geometry_poses(self._link_poses(np.ascontiguousarray(shifted)))
            shape_b, pose_b = self._other(pair_b[p], poses, obstacles)
            moved = distance(self.geometries[pair_a[p]].shape, poses[pair_a[p]], shape_b, pose_b).signed_distance
            moved = moved.reshape(len(rows), 2, self.dof)
            gradient[rows, p] = (moved[:, 0] - moved[:, 1]) / (2.0 * step)
        return gradient


_GRADIENT_STEP = 1e-6  # central differences: truncation ~1e-12 and round-off ~1e-10 at unit scale


class CollisionReport(Record):
    """Result of :meth:`Robot.collisions`. ``pairs``: list of (name, name) checked (geometry
    names, or ``"obstacle i"``); ``colliding``: (n, pairs) bool ((pairs,) for one
    configuration); ``in_collision``: (n,) bool (a bool for one)."""

    __slots__ = ("pairs", "colliding")

    @property
    def in_collision(self):
        answer = self.colliding.any(axis=-1)
        return bool(answer) if answer.ndim == 0 else answer

    def colliding_pairs(self, index=None):
        """The (name, name) pairs in collision: of the one configuration, or of configuration
        ``index`` of a batch."""
        row = self.colliding if self.colliding.ndim == 1 else self.colliding[index]
        return [self.pairs[p] for p in np.flatnonzero(row)]

    def __repr__(self):
        return f"CollisionReport({len(self.pairs)} pairs, {int(np.count_nonzero(self.colliding))} colliding)"


class SampledCollisions(Record):
    """Result of :meth:`Robot.sample_allowed_collisions`: ``added`` a list of (link, link,
    reason), reason ``"never"`` or ``"always"``; ``collision_fraction`` {(link, link): the
    fraction of the samples where the pair collided} for every pair that was checked;
    ``samples`` how many configurations were checked."""

    __slots__ = ("added", "collision_fraction", "samples")

    def __repr__(self):
        never = sum(reason == "never" for _, _, reason in self.added)
        return (f"SampledCollisions({self.samples} samples: {never} pairs never in collision, "
                f"{len(self.added) - never} always)")


class RobotDistances(Record):
    """Result of :meth:`Robot.distances`, for P checked pairs (``pairs``: list of (name, name);
    the first member is always a robot geometry, A, the second B):

    ``signed_distance`` (n, P) (negative: penetration depth), ``distance`` (n, P) (>= 0),
    ``point_a`` / ``point_b`` / ``normal`` (n, P, 3) world witness points and the unit normal
    from A to B, ``status`` (n, P) int8 codes of :class:`touche.Status`; ``minimum`` (n,) the
    smallest signed distance over the pairs (inf with no pair) and ``closest_pair`` (n,) its
    pair index (-1 with no pair); ``gradient`` (n, P, dof) d signed_distance / d q, or None when
    not asked for (analytic from the witness points, normal and kinematic Jacobian; central
    differences for penetrating pairs whose witness points are not aligned with the normal, see
    ``Robot._gradients``; meaningless where the distance is not differentiable, e.g. touching
    surfaces of meshes). One configuration: the leading n axis is dropped (``minimum`` a float).
    """

    __slots__ = ("pairs", "signed_distance", "point_a", "point_b", "normal", "status", "gradient")

    def _first(self):
        return RobotDistances(self.pairs, self.signed_distance[0], self.point_a[0], self.point_b[0], self.normal[0],
                              self.status[0], None if self.gradient is None else self.gradient[0])

    @property
    def distance(self):
        from ..query import Status

        return np.where(self.status == Status.PENETRATING, 0.0, np.maximum(self.signed_distance, 0.0))

    @property
    def minimum(self):
        if self.signed_distance.shape[-1] == 0:
            value = np.full(self.signed_distance.shape[:-1], np.inf)
        else:
            value = self.signed_distance.min(axis=-1)
        return float(value) if value.ndim == 0 else value

    @property
    def closest_pair(self):
        if self.signed_distance.shape[-1] == 0:
            value = np.full(self.signed_distance.shape[:-1], -1, dtype=np.int64)
        else:
            value = self.signed_distance.argmin(axis=-1)
        return int(value) if value.ndim == 0 else value

    def __repr__(self):
        shape = self.signed_distance.shape
        return f"RobotDistances({shape[-1]} pairs" + (f", {shape[0]} configurations)" if len(shape) == 2 else ")")


def load_urdf(path=None, srdf=None, *, text=None, srdf_text=None, package_dirs=None, meshes="mesh"):
    """Read a robot from a URDF file (or the XML string ``text``), with the ``disable_collisions``
    pairs of an SRDF file (or ``srdf_text``) added to its allowed-collision matrix.

    ``package_dirs``: where ``package://`` names are looked up (a folder, a list of folders, or
    {package: folder}); see touche/robot/urdf.py for the search order. ``meshes``: ``"mesh"``
    (default) keeps each collision mesh as a :class:`touche.TriangleMesh` (a surface, as coal and
    pinocchio check it), ``"convex"`` takes its convex hull (faster, and solid).
    Raises :class:`touche.RobotModelError` naming the element at fault."""
    description = _urdf.read_urdf(path, text=text, package_dirs=package_dirs)
    disabled = []
    if srdf is not None or srdf_text is not None:
        disabled = _urdf.read_srdf_disabled_pairs(srdf, text=srdf_text)
    robot = Robot(description, (), meshes=meshes)
    for a, b in disabled:
        for link in (a, b):
            if link not in robot._link_index:
                raise RobotModelError(f"{srdf or '<srdf string>'}: <disable_collisions> names link {link!r}, "
                                      f"which robot {robot.name!r} does not have")
        if a != b:
            robot.allow(a, b)
    return robot


_WARMUP_URDF = """<robot name="warmup">
  <link name="base"><collision><geometry><box size="0.4 0.4 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.3"/><geometry><capsule radius="0.05" length="0.4"/></geometry></collision></link>
  <link name="hand"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
    <collision><origin xyz="0 0 0.1"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3"/></joint>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="hand"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="0.2"/></joint>
</robot>"""


def warmup():
    """Compile the robot kernels the way the public methods call them (touche._warmup's step)."""
    from ..pose import Pose

    model = load_urdf(text=_WARMUP_URDF)
    q = np.array([[0.0, 0.0], [2.5, 0.1], [-2.5, 0.2]])
    # a box the hand's box penetrates (a separating-axis depth: the finite-difference gradients)
    obstacles = [(Box([0.2, 0.2, 0.2]), Pose.from_translation([0.0, 0.0, 0.62]))]
    for configurations in (q, q[0]):
        model.forward_kinematics(configurations)
        model.geometry_poses(configurations)
        model.in_collision(configurations, obstacles)
        model.collisions(configurations, obstacles)
        model.distances(configurations, obstacles, gradients=True)
    # a solid mesh: the pairs the compiled table leaves to touche.intersects (sphere culling)
    solid = TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
                         solid=True)
    for configurations in (q, q[0]):
        model.in_collision(configurations, [(solid, Pose.from_translation([0.0, 0.0, 0.5]))])
    # motion checks: one segment, a batch of segments, a path (the hand passes through the box)
    model.check_motion(q[0], q[1], obstacles)
    model.check_motion(q[:-1], q[1:], obstacles)
    model.check_path(q, obstacles)
