"""CollisionWorld: many objects, one broad phase, the narrow-phase verbs, events.

    world = touche.CollisionWorld()
    ball = world.add(touche.Sphere(0.5), pose, motion=touche.Linear([3, 0, 0]))
    top = world.add(touche.Box([1, 1, 1]), motion=touche.Screw([0, 0, 1], [0, 0, 6], pose))
    floor = world.add(touche.Box([10, 10, 1]), floor_pose, group=2)
    for event in world.step(0.1):          # broad -> narrow -> continuous -> events
        print(event.a, event.b, event.time, event.points, event.normal, event.depth)

Objects are rigid shapes with a pose, or with a motion (``touche.Static``, ``Linear``,
``Screw``, ``Keyframes``, ``Integrated``, ``CallableMotion``). A motion's own time 0 is the
world time at which it was attached (``add`` / ``set_motion``); ``world.time`` advances with
``step``. ``QuadraticMatrix`` motions are affine, not rigid (a box becomes a parallelepiped), so
they are not world objects: use ``touche.time_of_impact`` on such a pair directly.

Pipeline of ``step(dt)`` (Eberly S1 7.2's collision query flow; Ericson ch. 7 broad phase):
1. world AABBs of every bounded object at its current pose (one kernel call for all); a moving
   object gets the box of its sweep over the step: for a ``Linear`` motion the union of its start
   and end boxes (exact for a translation); for rotating / keyframed / callable motions the union
   of boxes at K sample times grown by (speed bound) * (dt / K) / 2, where the speed bound of a
   point at distance r from the motion's reference point is |v| + |w| r (so no part of the
   sweep is outside). Planes, half-spaces, rays and lines are unbounded: they are tested against
   every object instead of entering the broad phase;
2. broad phase (a :mod:`touche.broadphase` structure, a dynamic AABB tree by default) -> pairs,
   filtered by collision groups and masks: a pair is tested iff ``group_a & mask_b`` and
   ``group_b & mask_a`` are non-zero;
3. narrow phase for two objects that do not move during the step: ``touche.intersects`` at the
   current poses (one batched call per pair of shapes for objects sharing shape instances), then
   ``touche.contacts`` (or ``touche.distance`` where no manifold exists) for points, normal and
   depth; event time 0;
4. continuous check when either object moves: ``touche.time_of_impact`` over [0, dt] with the
   two motions re-based to the step's start (batched for Linear pairs sharing shapes); HIT and
   ALREADY_TOUCHING give an event at the first contact time (a MAX_ITERATIONS result is reported
   too, at its conservative lower-bound time);
5. events sorted by (time, a, b) and delivered to the objects' callbacks in that order; a
   callback returning ``False`` stops the search (S1 7.2's continue flag): ``step`` returns the
   events delivered so far. The objects still complete the step's motion.

Threads: a world has a read-write lock. Its queries (``query``, ``closest``, ``raycast``,
``pairs``, ``pose``, ...) read and run in parallel from any number of threads, with the same
answers as one after another; the broad phase they need is brought up to date once, under the
write lock, by the first of them. Changes (``add``, ``remove``, ``set_pose(s)``, ``set_motion``,
``set_velocity``, ``step``) write: they run one at a time and wait for running queries (a query
never sees half a change; handles stay unique). Callbacks run inside ``step`` with the lock held
and may use the world from their own thread (another thread that they wait for would deadlock).

Nothing unsupported is skipped silently: a pair of shapes that ``touche.intersects`` does not
answer raises ``touche.UnsupportedQuery`` when the second object is added (unless groups / masks
exclude the pair); any UnsupportedQuery raised by a verb during a step (e.g. a time of impact the
motion engine does not answer) is re-raised naming the two objects.
"""
from __future__ import annotations

import numpy as np

from . import dispatch
from ._kernels import kinds
from ._locks import ReadWriteLock
from ._record import Record
from .broadphase.base import IdError
from .errors import GeometryError, UnsupportedQuery
from .pose import as_matrices, nonnegative_number
from .shapes import Shape, as_shape, check_coordinates, unit_vector

_UNBOUNDED = dispatch.UNBOUNDED
_POLYTOPES = dispatch.POLYTOPES
_RADIUS_PARAM = dispatch.RADIUS_PARAM  # params[0] is a radius about the packed points
_INTERSECTS_ROUTES = dispatch.routes(dispatch.INTERSECTS)
_ALL_BITS = (1 << 63) - 1
_PAD = 1e-9  # relative padding of world boxes (rounding of touching shapes)
_MAX_SAMPLES = 32  # pose samples per step for the swept box of a rotating / keyframed motion
_MIN_BATCH = 4  # pairs sharing two shape instances are sent to the verbs as one batch from here


def _kernel():
    from ._kernels import broadphase_world

    return broadphase_world


class CollisionEvent(Record):
    """One contact found by :meth:`CollisionWorld.step`.

    ``a < b`` are the object handles; ``time`` in [0, dt], relative to the start of the step, is
    the first contact (0 for objects already touching); ``points`` (k, 3) world contact points
    (k >= 1); ``normal`` (3,) unit, from a towards b (``normals`` gives the outward surface
    normals of a and b at the contact, ``(normal, -normal)``); ``depth`` >= 0 the penetration
    depth at ``time`` (0 at a first contact); ``status`` the :class:`touche.ImpactStatus` of a
    continuous check, or None for two objects that did not move; ``user_data_a`` /
    ``user_data_b`` the objects' user data.
    """

    __slots__ = ("a", "b", "time", "points", "normal", "depth", "status", "user_data_a", "user_data_b")

    @property
    def pair(self):
        return (self.a, self.b)

    @property
    def normals(self):
        """Outward normals of a and of b at the contact: ``(normal, -normal)``."""
        return self.normal, -self.normal

    def __repr__(self):
        return f"CollisionEvent(a={self.a}, b={self.b}, time={self.time:.6g}, depth={self.depth:.3g})"


# ----------------------------------------------------------------------------------------------
# motions
def _motion_classes():
    from . import motion

    return motion


def _validate_motion(motion, pose):
    """(start pose (4, 4), motion or None, Linear velocity or None) for a world object.

    Static and zero-velocity Linear motions become None (a static object); a Linear keeps its
    velocity; other rigid motions are kept whole. ``pose`` (if given) overrides the start pose of
    a Static / Linear motion; for other motions it must equal the motion's start pose."""
    m = _motion_classes()
    if motion is None:
        return pose, None, None
    if not isinstance(motion, m.Motion):
        raise GeometryError(f"motion must be a touche motion (Static, Linear, Screw, Keyframes, ...), got {motion!r}")
    if motion.batch_size != 1 or getattr(motion, "is_batch", False):
        raise GeometryError("a world object takes one motion, not a batch")
    if isinstance(motion, m.QuadraticMatrix):
        raise UnsupportedQuery(
            "CollisionWorld motion QuadraticMatrix (affine, not rigid: call touche.time_of_impact on the pair)", motion)
    if isinstance(motion, m.Linear):  # Static is a Linear with zero velocity
        start = np.array(motion.pose if pose is None else pose, dtype=np.float64)
        velocity = np.array(motion.velocity, dtype=np.float64).reshape(3)
        return start, None, (velocity if np.any(velocity) else None)
    if not isinstance(motion, (m.Screw, m.Keyframes, m.CallableMotion)):
        raise UnsupportedQuery(f"CollisionWorld motion {type(motion).__name__}", motion)
    start = np.array(motion.pose_at(0.0), dtype=np.float64).reshape(4, 4)
    if pose is not None and not np.allclose(pose, start, rtol=0.0, atol=1e-12):
        raise GeometryError(f"pose differs from the start pose of the {type(motion).__name__} motion; pass one of them")
    return start, motion, None


def shifted_motion(motion, s0):
    """The motion ``u -> motion.pose_at(s0 + u)`` as a touche motion of the same kind (public
    constructors only), so ``touche.time_of_impact`` can answer a step that starts at s0.

    Screw: start pose pose_at(s0) and centre c + s0 v (the pivot moves with v). Keyframes and
    Integrated: the keyframe times minus s0. CallableMotion: the function evaluated at s0 + u,
    same speed bounds."""
    m = _motion_classes()
    if s0 == 0.0:
        return motion
    if isinstance(motion, m.Linear):
        return m.Linear(motion.velocity, motion.pose_at(s0))
    if isinstance(motion, m.Screw):
        pose = np.asarray(motion.pose, dtype=np.float64)
        center = pose[:3, 3] if motion.center is None else np.asarray(motion.center, dtype=np.float64).reshape(3)
        velocity = np.asarray(motion.velocity, dtype=np.float64).reshape(3)
        return m.Screw(velocity, motion.angular_velocity, motion.pose_at(s0), center + s0 * velocity)
    if isinstance(motion, m.Keyframes):
        return m.Keyframes(np.asarray(motion.times) - s0, motion.poses)
    if isinstance(motion, m.CallableMotion):
        function = motion.function
        return m.CallableMotion(lambda u: function(s0 + u), motion.linear_speed, motion.angular_speed)
    raise UnsupportedQuery(f"CollisionWorld motion {type(motion).__name__}", motion)


class _SpeedBound:
    """Upper bound on the speed of every point of an object under a rigid motion over a time
    interval: |v| + |w| r for points within r of the motion's reference point."""

    def __init__(self, motion, radius):
        m = _motion_classes()
        self.radius = radius
        if isinstance(motion, m.Screw):
            pose = np.asarray(motion.pose, dtype=np.float64)
            center = pose[:3, 3] if motion.center is None else np.asarray(motion.center, dtype=np.float64).reshape(3)
            # the body turns about c(t) and keeps its distance to it: r <= radius + |p0 - c|
            reach = radius + float(np.linalg.norm(pose[:3, 3] - center))
            self.times = None
            self.speed = float(np.linalg.norm(motion.velocity) + np.linalg.norm(motion.angular_velocity) * reach)
        elif isinstance(motion, m.Keyframes):
            from scipy.spatial.transform import Rotation

            poses = np.asarray(motion.poses, dtype=np.float64)
            dt = np.diff(motion.times)
            linear = np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1) / dt
            relative = poses[1:, :3, :3] @ np.swapaxes(poses[:-1, :3, :3], 1, 2)
            angular = Rotation.from_matrix(relative).magnitude() / dt  # slerp: the shortest rotation
            self.times = np.asarray(motion.times, dtype=np.float64)
            self.segment_speed = linear + angular * radius  # about the moving origin
        elif isinstance(motion, m.CallableMotion):
            self.times = None
            self.speed = motion.linear_speed + motion.angular_speed * radius
        else:  # pragma: no cover - _validate_motion admits nothing else
            raise UnsupportedQuery(f"CollisionWorld motion {type(motion).__name__}", motion)

    def over(self, t0, t1):
        if self.times is None:
            return self.speed
        first = max(int(np.searchsorted(self.times, t0, side="right")) - 1, 0)
        last = min(int(np.searchsorted(self.times, t1, side="left")), len(self.segment_speed))
        if t1 <= self.times[0] or t0 >= self.times[-1]:
            return 0.0  # the pose is held outside the keyframes
        return float(np.max(self.segment_speed[first:max(last, first + 1)]))


# ----------------------------------------------------------------------------------------------
class _Object:
    __slots__ = ("shape", "row", "motion", "motion_start", "velocity", "group", "mask", "user_data", "callback",
                 "bounded", "points", "speed_bound")

    def __init__(self, shape, group, mask, user_data, callback):
        self.shape, self.group, self.mask, self.user_data, self.callback = shape, group, mask, user_data, callback
        self.bounded = shape.kind not in _UNBOUNDED
        self.points = _aabb_points(shape)
        self.row = -1
        self.motion = None
        self.motion_start = 0.0
        self.velocity = None
        self.speed_bound = None

    @property
    def moving(self):
        return self.velocity is not None or self.motion is not None


def _aabb_points(shape):
    """Local points whose hull contains the shape (see the kernel module's doc)."""
    kind = shape.kind
    if kind == kinds.ROUNDED:  # the core's points (the kernel adds the rounding radius)
        core = shape.core
        if core.kind in _HULL_OF_POINTS:
            return _aabb_points(core)
        return _box_corners(*core.local_box())
    points = np.asarray(shape.points, dtype=np.float64)
    if kind in _POLYTOPES:
        points = points[: int(shape.params[0])]
    elif kind == kinds.MESH:
        pass
    elif kind in _UNBOUNDED:
        return np.zeros((1, 3))
    elif kind in _KNOWN_BY_POINTS:
        return np.ascontiguousarray(points)
    else:  # other solids: the corners of their local box
        return _box_corners(*shape.local_box())
    if len(points) > 16:  # many vertices: the 8 corners of their local box
        return _box_corners(points.min(axis=0), points.max(axis=0))
    return np.ascontiguousarray(points)


def _box_corners(lo, hi):
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


# kinds world_aabbs reads from their packed points (touche/_kernels/broad/broadphase_world.py): the
# hull of their positions (grown by a radius for spheres, capsules and Rounded shapes), or by the
# kernel's own rule (discs of cylinders and cones, the semi-axes of an ellipsoid)
_HULL_OF_POINTS = frozenset((kinds.POINT, kinds.SEGMENT, kinds.TRIANGLE, kinds.TETRAHEDRON, kinds.BOX,
                             kinds.POLYGON, kinds.POLYHEDRON))
_KNOWN_BY_POINTS = _HULL_OF_POINTS | frozenset((kinds.SPHERE, kinds.CAPSULE, kinds.CYLINDER, kinds.CONE,
                                                kinds.ELLIPSOID))


def _mask(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise GeometryError(f"{name} must be an integer bit mask, got {value!r}")
    value = int(value)
    if value < 0:
        value &= _ALL_BITS  # -1 means every bit
    if value > _ALL_BITS:
        raise GeometryError(f"{name} must fit in 63 bits, got {value}")
    return value


def _one_pose(pose, name):
    matrix = np.array(as_matrices(pose, name), dtype=np.float64)  # a copy: as_matrices may share
    if matrix.ndim != 2:
        raise GeometryError(f"{name} must be one pose (4, 4), not a batch")
    return matrix


class CollisionWorld:
    """A set of objects (shape, pose or motion, group, mask, user data, callback) with a broad
    phase; see the module doc for the pipeline of :meth:`step`.

    broadphase: a name from ``touche.broadphase.STRUCTURES`` (default ``"dynamic_tree"``) or an
    empty :class:`touche.broadphase.BroadPhase` instance. max_points: contact points per event.
    """

    def __init__(self, broadphase="dynamic_tree", *, max_points=4):
        from .broadphase import STRUCTURES, BroadPhase

        if isinstance(broadphase, BroadPhase):
            if len(broadphase):
                raise GeometryError("the broad phase given to CollisionWorld must be empty")
            self._broad = broadphase
        elif isinstance(broadphase, str) and broadphase in STRUCTURES:
            self._broad = STRUCTURES[broadphase]()
        else:
            raise GeometryError(f"unknown broad phase {broadphase!r}; choose from {sorted(STRUCTURES)}")
        if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < 1:
            raise GeometryError(f"max_points must be an integer >= 1, got {max_points!r}")
        self.max_points = int(max_points)
        self._lock = ReadWriteLock()
        self.time = 0.0
        self._objects = {}
        self._next = 0
        self._unbounded = []
        self._arrays = None
        self._poses = np.zeros((16, 4, 4))  # row -> current pose
        self._free_rows = []
        self._rows_used = 0
        self._boxes_key = None  # (pose version, dt) of the boxes now in the broad phase
        self._version = 0
        self._signatures = {}  # (kind, group, mask) -> [count, a shape]: the pair-support check

    # ------------------------------------------------------------------ objects
    def add(self, shape, pose=None, *, motion=None, group=1, mask=-1, user_data=None, callback=None):
        """Add an object; returns its handle (int). ``pose``: Pose / (4, 4) / None (identity, or
        the motion's start pose); ``motion``: None or a touche motion (see the module doc).
        ``group`` / ``mask``: bit masks. ``callback(event) -> bool | None``: called for each event
        of this object; ``False`` stops the search."""
        shape = shape if isinstance(shape, Shape) else as_shape(shape, "shape")
        pose = None if pose is None else _one_pose(pose, "pose")
        if callback is not None and not callable(callback):
            raise GeometryError(f"callback must be callable, got {callback!r}")
        obj = _Object(shape, _mask(group, "group"), _mask(mask, "mask"), user_data, callback)
        with self._lock.write():
            return self._add_locked(obj, motion, pose)

    def _add_locked(self, obj, motion, pose):
        shape = obj.shape
        start = self._attach(obj, motion, pose)
        self._check_supported(obj)
        handle = self._next
        self._next += 1
        obj.row = self._take_row()
        self._poses[obj.row] = start
        self._objects[handle] = obj
        entry = self._signatures.setdefault((shape.kind, obj.group, obj.mask), [0, shape])
        entry[0] += 1
        if obj.bounded:
            self._broad.insert(handle, self._boxes_of([handle])[0])
        else:
            self._unbounded.append(handle)
        self._changed(membership=True)
        return handle

    def _attach(self, obj, motion, pose):
        start, general, velocity = _validate_motion(motion, pose)
        obj.motion, obj.velocity, obj.motion_start = general, velocity, self.time
        obj.speed_bound = None
        if general is not None and obj.bounded:
            obj.speed_bound = _SpeedBound(general, self._local_radius(obj))
        return np.eye(4) if start is None else np.ascontiguousarray(start)

    def _local_radius(self, obj):
        """Radius about the local origin of a ball containing the shape (from its local box)."""
        box = self._compute_boxes(*self._packed([obj]), np.eye(4)[None], pad=0.0)[0]
        return float(np.linalg.norm(np.maximum(np.abs(box[:3]), np.abs(box[3:]))))

    def _take_row(self):
        if self._free_rows:
            return self._free_rows.pop()
        if self._rows_used >= len(self._poses):
            grown = np.zeros((2 * len(self._poses), 4, 4))
            grown[: len(self._poses)] = self._poses
            self._poses = grown
        self._rows_used += 1
        return self._rows_used - 1

    def _changed(self, membership=False):
        self._version += 1
        if membership:
            self._arrays = None

    def _check_supported(self, new):
        """UnsupportedQuery if touche.intersects does not answer the new object's shape against
        a shape already present whose group / mask admit the pair (one test per distinct
        (kind, group, mask), not per object)."""
        for (kind, group, mask), (_, shape) in self._signatures.items():
            if new.group & mask and group & new.mask and (new.shape.kind, kind) not in _INTERSECTS_ROUTES:
                raise UnsupportedQuery("CollisionWorld (intersects)", new.shape, shape)

    def remove(self, handle):
        """Remove an object. IdError (a GeometryError and a KeyError) for an unknown handle."""
        with self._lock.write():
            self._remove_locked(handle)

    def _remove_locked(self, handle):
        obj = self._object(handle)
        if obj.bounded:
            self._broad.remove(handle)
        else:
            self._unbounded.remove(handle)
        del self._objects[handle]
        signature = (obj.shape.kind, obj.group, obj.mask)
        self._signatures[signature][0] -= 1
        if not self._signatures[signature][0]:
            del self._signatures[signature]
        self._free_rows.append(obj.row)
        self._changed(membership=True)

    def _object(self, handle):
        try:
            return self._objects[handle]
        except (KeyError, TypeError):
            raise IdError(f"CollisionWorld: unknown object {handle!r}") from None

    def __len__(self):
        return len(self._objects)

    def __contains__(self, handle):
        try:
            return handle in self._objects
        except TypeError:
            return False

    @property
    def handles(self):
        with self._lock.read():
            return sorted(self._objects)

    def pose(self, handle):
        """The current pose (4, 4) of an object (a copy)."""
        with self._lock.read():
            return self._poses[self._object(handle).row].copy()

    def motion(self, handle):
        """The object's motion as attached (a Linear for a velocity, None for a static object);
        its time 0 is ``motion_start(handle)``."""
        from .motion import Linear

        with self._lock.read():
            obj = self._object(handle)
            if obj.velocity is not None:
                return Linear(obj.velocity, self._poses[obj.row])
            return obj.motion

    def user_data(self, handle):
        with self._lock.read():
            return self._object(handle).user_data

    def set_pose(self, handle, pose):
        """Move one object (a Linear velocity is kept). GeometryError for an object driven by
        another motion (use :meth:`set_motion`)."""
        matrix = _one_pose(pose, "pose")
        with self._lock.write():
            obj = self._object(handle)
            self._check_poseable([obj], [handle])
            self._poses[obj.row] = matrix
            self._changed()

    def set_poses(self, handles, poses):
        """Batched pose update: ``handles`` (n,), ``poses`` (n, 4, 4) (or a Pose batch), validated
        as one array."""
        handles = list(np.asarray(handles).reshape(-1).tolist())
        matrices = np.asarray(as_matrices(poses, "poses"), dtype=np.float64).reshape(-1, 4, 4)
        if len(handles) != matrices.shape[0]:
            raise GeometryError(f"set_poses got {len(handles)} handles for {matrices.shape[0]} poses")
        if len(set(handles)) != len(handles):
            raise GeometryError("set_poses got the same handle twice")
        with self._lock.write():
            objects = [self._object(h) for h in handles]
            self._check_poseable(objects, handles)
            self._poses[np.array([o.row for o in objects], dtype=np.int64)] = matrices
            self._changed()

    @staticmethod
    def _check_poseable(objects, handles):
        for obj, handle in zip(objects, handles):
            if obj.motion is not None:
                raise GeometryError(f"object {handle} is driven by a {type(obj.motion).__name__} motion; "
                                    "use set_motion to replace it")

    def set_motion(self, handle, motion, pose=None):
        """Attach a new motion (None: static); its time 0 is now. The object moves to the
        motion's start pose (for Static / Linear: ``pose`` if given); with ``motion=None`` it
        stays where it is unless ``pose`` is given."""
        pose = None if pose is None else _one_pose(pose, "pose")
        with self._lock.write():
            self._set_motion_locked(handle, motion, pose)

    def _set_motion_locked(self, handle, motion, pose):
        obj = self._object(handle)
        probe = _Object(obj.shape, obj.group, obj.mask, None, None)
        start = self._attach(probe, motion, pose)
        if motion is None and pose is None:
            start = self._poses[obj.row].copy()
        obj.motion, obj.velocity = probe.motion, probe.velocity
        obj.motion_start, obj.speed_bound = probe.motion_start, probe.speed_bound
        self._poses[obj.row] = start
        self._changed(membership=True)  # the lists of moving objects change

    def set_velocity(self, handle, velocity):
        """Give an object a constant linear velocity (3,) from its current pose (None / zeros:
        static). Replaces any other motion."""
        from .motion import Linear

        with self._lock.write():  # the pose read and the new motion: one change
            pose = self.pose(handle)
            self.set_motion(handle, None if velocity is None else Linear(velocity, pose))

    # ------------------------------------------------------------------ world boxes
    def _packed(self, objs):
        kind = np.array([o.shape.kind for o in objs], dtype=np.int64)
        counts = np.array([len(o.points) for o in objs], dtype=np.int64)
        starts = np.zeros(len(objs), dtype=np.int64)
        if len(objs) > 1:
            starts[1:] = np.cumsum(counts)[:-1]
        points = np.ascontiguousarray(np.concatenate([o.points for o in objs])) if objs else np.zeros((0, 3))
        radius = np.array([float(o.shape.params[0]) if o.shape.kind in _RADIUS_PARAM else 0.0 for o in objs])
        return kind, starts, counts, radius, points

    def _object_arrays(self):
        """Per bounded object (handles ascending): packed local geometry, rows, shape codes."""
        if self._arrays is None:
            handles = [h for h in sorted(self._objects) if self._objects[h].bounded]
            objs = [self._objects[h] for h in handles]
            rows = np.array([o.row for o in objs], dtype=np.int64)
            linear = [i for i, o in enumerate(objs) if o.velocity is not None]
            general = [i for i, o in enumerate(objs) if o.motion is not None]
            self._arrays = (handles, objs, rows, self._packed(objs), linear, general)
        return self._arrays

    def _compute_boxes(self, kind, starts, counts, radius, points, poses, pad=_PAD):
        out = np.empty((kind.shape[0], 6))
        _kernel().world_aabbs(kind, starts, counts, radius, points, np.ascontiguousarray(poses),
                              np.zeros((kind.shape[0], 3)), pad, out)
        return out

    def _boxes_of(self, handles):
        objs = [self._objects[h] for h in handles]
        rows = np.array([o.row for o in objs], dtype=np.int64)
        return self._compute_boxes(*self._packed(objs), self._poses[rows])

    def _refresh(self, dt):
        """Put every bounded object's box (swept over [0, dt]) into the broad phase, unless the
        boxes there are already those of the current poses and this dt."""
        key = (self._version, dt)
        if key == self._boxes_key:
            return
        handles, objs, rows, packed, linear, general = self._object_arrays()
        if handles:
            boxes = self._compute_boxes(*packed, self._poses[rows])
            if dt > 0.0 and linear:
                index = np.array(linear, dtype=np.int64)
                shift = np.array([objs[i].velocity for i in linear]) * dt
                boxes[index, :3] = np.minimum(boxes[index, :3], boxes[index, :3] + shift)
                boxes[index, 3:] = np.maximum(boxes[index, 3:], boxes[index, 3:] + shift)
            if dt > 0.0 and general:
                self._sweep_general(objs, packed, general, boxes, dt)
            self._broad.update_many(handles, boxes)
        self._boxes_key = key

    def _sweep_general(self, objs, packed, general, boxes, dt):
        """Swept boxes of rotating / keyframed / callable motions: boxes at K + 1 sample times
        (one kernel call for all), united, grown by speed * (dt / K) / 2 (see the module doc)."""
        kind, starts, counts, radius, points = packed
        sample_poses, owners, pads = [], [], []
        for i in general:
            obj = objs[i]
            s0 = self.time - obj.motion_start
            speed = obj.speed_bound.over(s0, s0 + dt)
            size = max(float(np.max(boxes[i, 3:] - boxes[i, :3])), 1e-300)
            samples = int(min(_MAX_SAMPLES, max(1, np.ceil(speed * dt / (0.25 * size)))))
            for t in np.linspace(s0, s0 + dt, samples + 1):
                sample_poses.append(obj.motion.pose_at(t))
                owners.append(i)
            pads.append(speed * dt / (2.0 * samples))
        owners = np.array(owners, dtype=np.int64)
        sampled = self._compute_boxes(kind[owners], starts[owners], counts[owners], radius[owners], points,
                                      np.array(sample_poses).reshape(-1, 4, 4))
        first = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])  # each object's samples are adjacent
        index = np.array(general, dtype=np.int64)
        pads = np.array(pads)[:, None]
        boxes[index, :3] = np.minimum(np.minimum.reduceat(sampled[:, :3], first), boxes[index, :3]) - pads
        boxes[index, 3:] = np.maximum(np.maximum.reduceat(sampled[:, 3:], first), boxes[index, 3:]) + pads

    def _candidates(self, dt):
        """Broad-phase pairs (k, 2) handles a < b, plus unbounded objects against all, filtered
        by groups / masks; sorted rows."""
        self._refresh(dt)
        pairs = self._broad.pairs()
        if self._unbounded:
            handles = np.array(sorted(self._objects), dtype=np.int64)
            extra = [np.stack([np.minimum(u, handles), np.maximum(u, handles)], axis=1)[handles != u]
                     for u in self._unbounded]
            pairs = np.unique(np.vstack([pairs] + extra), axis=0)
        if pairs.shape[0] == 0:
            return pairs
        objects = self._objects
        groups = {h: (o.group, o.mask) for h, o in objects.items()}
        keep = np.fromiter((bool(groups[a][0] & groups[b][1] and groups[b][0] & groups[a][1])
                            for a, b in pairs.tolist()), dtype=np.bool_, count=pairs.shape[0])
        return pairs[keep]

    # ------------------------------------------------------------------ narrow phase
    def _contact_geometry(self, oa, pose_a, ob, pose_b):
        import touche

        try:
            manifold = touche.contacts(oa.shape, pose_a, ob.shape, pose_b, max_points=self.max_points)
        except UnsupportedQuery:
            manifold = None
        if manifold is not None and manifold.count > 0:
            depth = max(0.0, float(np.max(manifold.depths[: manifold.count])))
            return np.array(manifold.points[: manifold.count]), np.array(manifold.normal), depth
        result = touche.distance(oa.shape, pose_a, ob.shape, pose_b)
        point = 0.5 * (np.asarray(result.point_a) + np.asarray(result.point_b))
        return point.reshape(1, 3), np.array(result.normal), max(0.0, -float(result.signed_distance))

    def _contact_geometries(self, pairs):
        """(points, normal, depth) of each touching pair at the current poses, as
        _contact_geometry; pairs sharing both shape instances get one batched touche.contacts
        call per group of at least _MIN_BATCH."""
        import touche

        objects, poses = self._objects, self._poses
        out = {}
        for members in _groups(objects, pairs, lambda oa, ob: kinds.MESH not in (oa.shape.kind, ob.shape.kind)):
            oa0, ob0 = objects[members[0][0]], objects[members[0][1]]
            manifold = None
            if len(members) >= _MIN_BATCH:
                rows_a = np.array([objects[a].row for a, _ in members], dtype=np.int64)
                rows_b = np.array([objects[b].row for _, b in members], dtype=np.int64)
                try:
                    manifold = touche.contacts(oa0.shape, poses[rows_a], ob0.shape, poses[rows_b],
                                               max_points=self.max_points)
                except UnsupportedQuery:
                    manifold = None
            for k, (a, b) in enumerate(members):
                count = 0 if manifold is None else int(manifold.count[k])
                if count > 0:
                    depth = max(0.0, float(np.max(manifold.depths[k, :count])))
                    out[(a, b)] = (np.array(manifold.points[k, :count]), np.array(manifold.normal[k]), depth)
                else:
                    oa, ob = objects[a], objects[b]
                    with _naming(a, oa, b, ob):
                        out[(a, b)] = self._contact_geometry(oa, poses[oa.row], ob, poses[ob.row])
        return [out[p] for p in pairs]

    def _motion_over_step(self, obj, pose):
        """The object's motion re-based to the start of this step (time 0 = now)."""
        from .motion import Linear, Static

        if obj.velocity is not None:
            return Linear(obj.velocity, pose)
        if obj.motion is not None:
            return shifted_motion(obj.motion, self.time - obj.motion_start)
        return Static(pose)

    def _narrow(self, pairs, dt):
        objects = self._objects
        pairs = [tuple(p) for p in pairs.tolist()]
        moving = [dt > 0.0 and (objects[a].moving or objects[b].moving) for a, b in pairs]
        static_pairs = [p for p, m in zip(pairs, moving) if not m]
        events = []
        hits = self._static_hits(static_pairs)
        for (a, b), (points, normal, depth) in zip(hits, self._contact_geometries(hits)):
            events.append(CollisionEvent(a, b, 0.0, points, normal, depth, None, objects[a].user_data,
                                         objects[b].user_data))
        events += self._moving_events([p for p, m in zip(pairs, moving) if m], dt)
        events.sort(key=lambda e: (e.time, e.a, e.b))
        return events

    def _static_hits(self, pairs):
        """The pairs (list of (a, b)) that intersect at the current poses; one batched
        touche.intersects call per group of at least _MIN_BATCH pairs sharing both shape
        instances (meshes one by one)."""
        import touche

        objects, poses = self._objects, self._poses
        hits = []
        for members in _groups(objects, pairs, lambda oa, ob: kinds.MESH not in (oa.shape.kind, ob.shape.kind)):
            oa0, ob0 = objects[members[0][0]], objects[members[0][1]]
            if len(members) >= _MIN_BATCH:
                rows_a = np.array([objects[a].row for a, _ in members], dtype=np.int64)
                rows_b = np.array([objects[b].row for _, b in members], dtype=np.int64)
                try:
                    found = np.asarray(touche.intersects(oa0.shape, poses[rows_a], ob0.shape, poses[rows_b]),
                                       dtype=bool)
                except UnsupportedQuery:
                    found = None  # name the pair: one by one below
                if found is not None:
                    hits += [p for p, hit in zip(members, found) if hit]
                    continue
            for a, b in members:
                oa, ob = objects[a], objects[b]
                with _naming(a, oa, b, ob):
                    if touche.intersects(oa.shape, poses[oa.row], ob.shape, poses[ob.row]):
                        hits.append((a, b))
        return hits

    def _moving_events(self, pairs, dt):
        """Events of the pairs with a moving object: touche.time_of_impact over [0, dt] with the
        motions re-based to now; one batched call per group of at least _MIN_BATCH pairs of
        Linear / static objects sharing both shape instances."""
        import touche
        from .motion import Linear

        objects, poses = self._objects, self._poses
        events = []

        def translating(oa, ob):
            return (oa.motion is None and ob.motion is None and kinds.MESH not in (oa.shape.kind, ob.shape.kind))

        for members in _groups(objects, pairs, translating):
            oa0, ob0 = objects[members[0][0]], objects[members[0][1]]
            if len(members) >= _MIN_BATCH and translating(oa0, ob0):
                rows_a = np.array([objects[a].row for a, _ in members], dtype=np.int64)
                rows_b = np.array([objects[b].row for _, b in members], dtype=np.int64)
                zero = np.zeros(3)
                va = np.array([zero if objects[a].velocity is None else objects[a].velocity for a, _ in members])
                vb = np.array([zero if objects[b].velocity is None else objects[b].velocity for _, b in members])
                try:
                    r = touche.time_of_impact(oa0.shape, Linear(va, poses[rows_a]), ob0.shape,
                                              Linear(vb, poses[rows_b]), dt)
                except UnsupportedQuery:
                    r = None  # name the pair: one by one below
                if r is not None:
                    for k, (a, b) in enumerate(members):
                        count = int(r.count[k])
                        event = self._impact_event(a, b, int(r.status[k]), float(r.time[k]), r.points[k][:count],
                                                   r.point[k], r.normal[k])
                        if event is not None:
                            events.append(event)
                    continue
            for a, b in members:
                oa, ob = objects[a], objects[b]
                with _naming(a, oa, b, ob):
                    r = touche.time_of_impact(oa.shape, self._motion_over_step(oa, poses[oa.row]), ob.shape,
                                              self._motion_over_step(ob, poses[ob.row]), dt)
                    event = self._impact_event(a, b, int(r.status), float(r.time), r.points, r.point, r.normal)
                if event is not None:
                    events.append(event)
        return events

    def _impact_event(self, a, b, status, time, points, point, normal):
        from .impact import ImpactStatus

        status = ImpactStatus(status)
        if status == ImpactStatus.MISS:
            return None
        oa, ob = self._objects[a], self._objects[b]
        if status == ImpactStatus.ALREADY_TOUCHING:
            points, normal, depth = self._contact_geometry(oa, self._poses[oa.row], ob, self._poses[ob.row])
            return CollisionEvent(a, b, 0.0, points, normal, depth, status, oa.user_data, ob.user_data)
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        points = points[np.isfinite(points).all(axis=1)]
        if points.shape[0] == 0:
            points = np.asarray(point, dtype=np.float64).reshape(1, 3)
        return CollisionEvent(a, b, time, np.array(points), np.array(normal, dtype=np.float64), 0.0, status,
                              oa.user_data, ob.user_data)

    # ------------------------------------------------------------------ public queries
    def step(self, dt):
        """Advance the world by ``dt`` (>= 0) and return the events (list of
        :class:`CollisionEvent`, sorted by time then handles). See the module doc."""
        dt = nonnegative_number(dt, "dt")
        with self._lock.write():
            return self._step_locked(dt)

    def _step_locked(self, dt):
        events = self._narrow(self._candidates(dt), dt)
        delivered = []
        for event in events:
            delivered.append(event)
            stop = False
            for handle in (event.a, event.b):
                callback = self._objects[handle].callback
                if callback is not None and callback(event) is False:
                    stop = True
            if stop:
                break
        if dt > 0.0:
            self._advance(dt)
        return delivered

    def _advance(self, dt):
        for obj in self._objects.values():
            if obj.velocity is not None:
                self._poses[obj.row, :3, 3] += obj.velocity * dt
            elif obj.motion is not None:
                self._poses[obj.row] = obj.motion.pose_at(self.time + dt - obj.motion_start)
        self.time += dt
        self._changed()

    def pairs(self):
        """Handles (k, 2), rows a < b sorted, of the objects that overlap at their current poses
        (groups / masks applied)."""
        with self._reading():
            hits = self._static_hits([tuple(p) for p in self._candidates(0.0).tolist()])
        return np.array(sorted(hits), dtype=np.int64).reshape(-1, 2)

    def _reading(self):
        """Context of a query: the read lock, the broad phase holding the boxes of the current
        poses (refreshed first, once, under the write lock when a change made them stale)."""
        return self._lock.read_fresh(self._boxes_fresh, self._refresh_static)

    def _boxes_fresh(self):
        return self._boxes_key == (self._version, 0.0)

    def _refresh_static(self):
        self._refresh(0.0)

    def _shape_box(self, shape, pose):
        probe = _Object(shape, 1, 1, None, None)
        if not probe.bounded:
            return None
        return self._compute_boxes(*self._packed([probe]), pose[None])[0]

    def _probe(self, shape, pose):
        shape = shape if isinstance(shape, Shape) else as_shape(shape, "shape")
        return shape, _one_pose(pose, "pose")

    def query(self, shape, pose=None, *, mask=-1):
        """Handles (ascending) of the objects that overlap ``shape`` at ``pose`` (and whose group
        shares a bit with ``mask``)."""
        shape, matrix = self._probe(shape, pose)
        mask = _mask(mask, "mask")
        with self._reading():
            return self._query_locked(shape, matrix, mask)

    def _query_locked(self, shape, matrix, mask):
        import touche

        box = self._shape_box(shape, matrix)
        candidates = self._broad.ids if box is None else self._broad.query_aabb(box)
        handles = sorted(set(candidates.tolist()) | set(self._unbounded))
        hits = []
        for h in handles:
            obj = self._objects[h]
            if obj.group & mask and touche.intersects(shape, matrix, obj.shape, self._poses[obj.row]):
                hits.append(h)
        return np.array(hits, dtype=np.int64)

    def closest(self, shape, pose=None, *, mask=-1):
        """The object nearest to ``shape`` at ``pose``: (handle, touche.DistanceResult) with the
        result from ``shape`` (A) to the object (B), or None when no object passes ``mask``.
        Overlapping objects come first (most negative signed distance). Ties go to the lower
        handle."""
        shape, matrix = self._probe(shape, pose)
        mask = _mask(mask, "mask")
        with self._reading():
            return self._closest_locked(shape, matrix, mask)

    def _closest_locked(self, shape, matrix, mask):
        import touche

        if not any(o.group & mask for o in self._objects.values()):
            return None
        best = [None]
        tried = set()

        def consider(handles):
            for h in sorted(handles):
                if h in tried or not (self._objects[h].group & mask):
                    continue
                tried.add(h)
                obj = self._objects[h]
                result = touche.distance(shape, matrix, obj.shape, self._poses[obj.row])
                key = (float(result.signed_distance), h)
                if best[0] is None or key < best[0][0]:
                    best[0] = (key, h, result)

        consider(self._unbounded)
        box = self._shape_box(shape, matrix)
        if box is None or not len(self._broad):
            consider(self._broad.ids.tolist())
        else:
            grow = max(float(np.max(box[3:] - box[:3])), 1e-12)
            while True:  # widen the search box until it holds a candidate
                found = self._broad.query_aabb(np.r_[box[:3] - grow, box[3:] + grow]).tolist()
                candidates = [h for h in found if self._objects[h].group & mask]
                if candidates or len(found) >= len(self._broad):
                    consider(candidates)
                    break
                grow *= 4.0
                if not np.isfinite(grow):
                    consider(self._broad.ids.tolist())
                    break
            if best[0] is not None and np.isfinite(best[0][0][0]):
                # anything nearer than the best so far lies inside the box grown by its distance
                reach = max(best[0][0][0], 0.0) * (1.0 + 1e-9) + 1e-12
                consider(self._broad.query_aabb(np.r_[box[:3] - reach, box[3:] + reach]).tolist())
            if best[0] is None:
                consider(self._broad.ids.tolist())
        return None if best[0] is None else (best[0][1], best[0][2])

    def raycast(self, origin, direction, max_t=np.inf, *, mask=-1):
        """Every object hit by the ray ``origin + t * unit(direction)``, t in [0, max_t]:
        a list of (handle, t, point (3,), normal (3,)) sorted by t then handle."""
        try:
            origin = np.array(origin, dtype=np.float64).reshape(3)
            direction = np.array(direction, dtype=np.float64).reshape(3)
            max_t = float(max_t)
        except (TypeError, ValueError) as exc:
            raise GeometryError("origin and direction must be 3 numbers, max_t a number") from exc
        if not (np.isfinite(origin).all() and np.isfinite(direction).all()) or not np.any(direction):
            raise GeometryError("origin and direction must be finite, direction non-zero")
        if np.isnan(max_t) or max_t < 0.0:
            raise GeometryError(f"max_t must be >= 0, got {max_t}")
        check_coordinates(origin, "origin")
        unit = unit_vector(direction, "direction")  # scale-safe: a direction of 1e200 or 1e-200 works
        mask = _mask(mask, "mask")
        with self._reading():
            return self._raycast_locked(origin, unit, max_t, mask)

    def _raycast_locked(self, origin, unit, max_t, mask):
        import touche

        candidates = set(self._broad.query_ray(origin, unit, max_t).tolist()) | set(self._unbounded)
        hits = []
        for h in sorted(candidates):
            obj = self._objects[h]
            if not obj.group & mask:
                continue
            if not dispatch.supported(dispatch.RAYCAST, kinds.RAY, obj.shape.kind):
                continue  # points and lines (no area) are not hit by rays
            result = touche.raycast(obj.shape, self._poses[obj.row], origin, unit, max_t)
            if bool(result.hit):
                hits.append((h, float(result.t), np.array(result.point), np.array(result.normal)))
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    def __repr__(self):
        return f"CollisionWorld({len(self)} objects, broad phase {type(self._broad).__name__})"


class _naming:
    """Context: re-raise an UnsupportedQuery from a verb naming the two objects."""

    def __init__(self, a, oa, b, ob):
        self.a, self.oa, self.b, self.ob = a, oa, b, ob

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is not None and issubclass(kind, UnsupportedQuery):
            error = UnsupportedQuery("CollisionWorld", self.oa.shape, self.ob.shape)
            error.args = (f"CollisionWorld pair ({self.a}, {self.b}): {exc}",)
            raise error from exc
        return False


def _groups(objects, pairs, batchable):
    """The pairs split into lists that share both shape instances (when ``batchable(oa, ob)``),
    else one list per pair; each list in pair order."""
    groups = {}
    for a, b in pairs:
        oa, ob = objects[a], objects[b]
        key = (id(oa.shape), id(ob.shape)) if batchable(oa, ob) else (a, b, None)
        groups.setdefault(key, []).append((a, b))
    return list(groups.values())
