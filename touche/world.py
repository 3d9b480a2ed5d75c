"""CollisionWorld: many objects, one broad phase, the narrow-phase verbs, events.

    world = touche.CollisionWorld()
    ball = world.add(touche.Sphere(0.5), pose, motion=touche.Linear([3, 0, 0]))
    floor = world.add(touche.Box([10, 10, 1]), floor_pose, group=2)
    for event in world.step(0.1):          # broad -> narrow -> continuous -> events
        print(event.a, event.b, event.time, event.normal, event.depth)

Pipeline of ``step(dt)`` (Eberly S1 7.2's collision query flow; Ericson ch. 7 broad phase):
1. world AABBs of every bounded object at its current pose (a kernel per shape kind); an object
   with a ``Linear`` motion gets the box swept over [0, dt] (union of its start and end boxes:
   exact for a translation). Planes, half-spaces, rays and lines are unbounded: they are tested
   against every object instead of entering the broad phase;
2. broad phase (a :mod:`touche.broadphase` structure, a dynamic AABB tree by default) -> pairs,
   filtered by collision groups and masks: a pair is tested iff ``group_a & mask_b`` and
   ``group_b & mask_a`` are non-zero;
3. narrow phase: two objects that do not move: ``touche.intersects`` at the current poses, then
   ``touche.contacts`` (or ``touche.distance`` for shapes without manifolds) for points, normal
   and depth; event time 0;
4. continuous check when either object moves (a ``Linear`` motion): ``touche.time_of_impact``
   over [0, dt]; HIT and ALREADY_TOUCHING give an event at the first contact time (a
   MAX_ITERATIONS result is reported too, at its conservative lower-bound time);
5. events sorted by (time, a, b) and delivered to the objects' callbacks in that order; a
   callback returning ``False`` stops the search (S1 7.2's continue flag): ``step`` returns the
   events delivered so far. Then moving objects advance to their poses at dt.

Unsupported pairs are never skipped silently: mesh-mesh pairs (no narrow phase yet) and moving
meshes raise ``touche.UnsupportedQuery`` when the object is added (unless groups/masks exclude
every such pair); any other UnsupportedQuery raised during a step is re-raised naming the two
objects.
"""
from __future__ import annotations

import numpy as np

from ._kernels import kinds
from .errors import GeometryError, UnsupportedQuery
from .pose import as_matrices
from .shapes import Shape, as_shape

_UNBOUNDED = frozenset((kinds.RAY, kinds.LINE, kinds.PLANE, kinds.HALFSPACE))
_POLYTOPES = frozenset((kinds.TRIANGLE, kinds.TETRAHEDRON, kinds.BOX, kinds.POLYGON, kinds.POLYHEDRON))
_ALL_BITS = (1 << 63) - 1
_PAD = 1e-9  # relative padding of world boxes (rounding of touching shapes)


def _kernel():
    from ._kernels import broadphase_world

    return broadphase_world


class CollisionEvent:
    """One contact found by :meth:`CollisionWorld.step`.

    ``a < b`` are the object handles; ``time`` in [0, dt] is the first contact (0 for objects
    already touching); ``points`` (k, 3) world contact points (k >= 1); ``normal`` (3,) unit, from
    a towards b; ``depth`` >= 0 the penetration depth at ``time`` (0 at a first contact);
    ``status`` the :class:`touche.ImpactStatus` of a continuous check, or None for two
    non-moving objects; ``user_data_a`` / ``user_data_b`` the objects' user data.
    """

    __slots__ = ("a", "b", "time", "points", "normal", "depth", "status", "user_data_a", "user_data_b")

    def __init__(self, a, b, time, points, normal, depth, status, user_data_a, user_data_b):
        self.a, self.b, self.time = a, b, time
        self.points, self.normal, self.depth, self.status = points, normal, depth, status
        self.user_data_a, self.user_data_b = user_data_a, user_data_b

    @property
    def pair(self):
        return (self.a, self.b)

    def __repr__(self):
        return f"CollisionEvent(a={self.a}, b={self.b}, time={self.time:.6g}, depth={self.depth:.3g})"


class _Object:
    __slots__ = ("shape", "pose", "velocity", "group", "mask", "user_data", "callback", "bounded", "points")

    def __init__(self, shape, pose, velocity, group, mask, user_data, callback):
        self.shape, self.pose, self.velocity = shape, pose, velocity
        self.group, self.mask, self.user_data, self.callback = group, mask, user_data, callback
        self.bounded = shape.kind not in _UNBOUNDED
        self.points = _aabb_points(shape)


def _aabb_points(shape):
    """Local points whose hull contains the shape (see the kernel module's doc)."""
    kind = shape.kind
    points = np.asarray(shape.points, dtype=np.float64)
    if kind in _POLYTOPES:
        points = points[: int(shape.params[0])]
    elif kind == kinds.MESH:
        pass
    elif kind in _UNBOUNDED:
        return np.zeros((1, 3))
    else:
        return np.ascontiguousarray(points)
    if len(points) > 16:  # many vertices: the 8 corners of their local box
        lo, hi = points.min(axis=0), points.max(axis=0)
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        return corners
    return np.ascontiguousarray(points)


def _mask(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise GeometryError(f"{name} must be an integer bit mask, got {value!r}")
    value = int(value)
    if value < 0:
        value &= _ALL_BITS  # -1 means every bit
    if value > _ALL_BITS:
        raise GeometryError(f"{name} must fit in 63 bits, got {value}")
    return value


def _velocity_of(motion, pose):
    """(pose, velocity or None) from a motion argument: None / Static / Linear."""
    from .motion import Linear, Static

    if motion is None:
        return pose, None
    if isinstance(motion, Linear):
        if motion.pose.ndim != 2 or motion.velocity.ndim != 1:
            raise GeometryError("a world object takes one motion, not a batch")
        start = motion.pose if pose is None else pose
        velocity = np.array(motion.velocity, dtype=np.float64)
        return np.array(start, dtype=np.float64), (velocity if np.any(velocity) else None)
    if isinstance(motion, Static):
        return (np.array(motion.pose, dtype=np.float64) if pose is None else pose), None
    raise UnsupportedQuery(f"CollisionWorld motion {type(motion).__name__}", motion)


class CollisionWorld:
    """A set of objects (shape, pose or motion, group, mask, user data, callback) with a broad
    phase; see the module doc for the pipeline of :meth:`step`.

    broadphase: a name from ``touche.broadphase.STRUCTURES`` (default ``"dynamic_tree"``) or a
    :class:`touche.broadphase.BroadPhase` instance. max_points: contact points per event.
    """

    def __init__(self, broadphase="dynamic_tree", *, max_points=4):
        from .broadphase import STRUCTURES, BroadPhase

        if isinstance(broadphase, BroadPhase):
            if len(broadphase):
                raise GeometryError("the broad phase given to CollisionWorld must be empty")
            self._broad = broadphase
        elif broadphase in STRUCTURES:
            self._broad = STRUCTURES[broadphase]()
        else:
            raise GeometryError(f"unknown broad phase {broadphase!r}; choose from {sorted(STRUCTURES)}")
        if int(max_points) < 1:
            raise GeometryError(f"max_points must be >= 1, got {max_points}")
        self.max_points = int(max_points)
        self._objects = {}
        self._next = 0
        self._unbounded = []
        self._arrays = None

    # ------------------------------------------------------------------ objects
    def add(self, shape, pose=None, *, motion=None, group=1, mask=-1, user_data=None, callback=None):
        """Add an object; returns its handle (int). ``pose``: Pose / (4, 4) / None (identity);
        ``motion``: None, ``touche.Static`` or ``touche.Linear`` (its velocity is used for
        continuous checks; its pose when ``pose`` is None). ``group`` / ``mask``: bit masks.
        ``callback(event) -> bool | None``: called for each event of this object; False stops."""
        shape = shape if isinstance(shape, Shape) else as_shape(shape, "shape")
        pose = None if pose is None else np.array(as_matrices(pose, "pose"), dtype=np.float64)
        if pose is not None and pose.ndim != 2:
            raise GeometryError("CollisionWorld.add takes one pose (4, 4), not a batch")
        pose, velocity = _velocity_of(motion, pose)
        pose = np.eye(4) if pose is None else np.ascontiguousarray(pose)
        if callback is not None and not callable(callback):
            raise GeometryError(f"callback must be callable, got {callback!r}")
        obj = _Object(shape, pose, velocity, _mask(group, "group"), _mask(mask, "mask"), user_data, callback)
        self._check_supported(obj)
        handle = self._next
        self._next += 1
        self._objects[handle] = obj
        if obj.bounded:
            self._broad.insert(handle, self._boxes_of([handle], swept_dt=0.0)[0])
        else:
            self._unbounded.append(handle)
        self._arrays = None
        return handle

    def _check_supported(self, new):
        for other in self._objects.values():
            if not (new.group & other.mask and other.group & new.mask):
                continue
            _raise_if_unsupported(new, other)

    def remove(self, handle):
        """Remove an object. KeyError for an unknown handle."""
        obj = self._object(handle)
        if obj.bounded:
            self._broad.remove(handle)
        else:
            self._unbounded.remove(handle)
        del self._objects[handle]
        self._arrays = None

    def _object(self, handle):
        try:
            return self._objects[handle]
        except (KeyError, TypeError):
            raise KeyError(f"CollisionWorld: unknown object {handle!r}") from None

    def __len__(self):
        return len(self._objects)

    def __contains__(self, handle):
        return handle in self._objects

    @property
    def handles(self):
        return sorted(self._objects)

    def pose(self, handle):
        return self._object(handle).pose.copy()

    def user_data(self, handle):
        return self._object(handle).user_data

    def set_pose(self, handle, pose):
        """Move one object (its motion's velocity is kept)."""
        obj = self._object(handle)
        matrix = np.array(as_matrices(pose, "pose"), dtype=np.float64)
        if matrix.ndim != 2:
            raise GeometryError("set_pose takes one pose (4, 4); use set_poses for a batch")
        obj.pose = matrix

    def set_poses(self, handles, poses):
        """Batched pose update: ``handles`` (n,), ``poses`` (n, 4, 4) (or Pose array)."""
        handles = list(np.asarray(handles).reshape(-1).tolist())
        matrices = np.array(as_matrices(poses, "poses"), dtype=np.float64).reshape(-1, 4, 4)
        if len(handles) != matrices.shape[0]:
            raise GeometryError(f"set_poses got {len(handles)} handles for {matrices.shape[0]} poses")
        objects = [self._object(h) for h in handles]
        for obj, matrix in zip(objects, matrices):
            obj.pose = matrix

    def set_velocity(self, handle, velocity):
        """Set (or clear with None / zeros) the linear velocity of an object."""
        obj = self._object(handle)
        if velocity is None:
            obj.velocity = None
            return
        v = np.array(velocity, dtype=np.float64).reshape(3)
        if not np.isfinite(v).all():
            raise GeometryError("velocity contains NaN or inf")
        if np.any(v):
            probe = _Object(obj.shape, obj.pose, v, obj.group, obj.mask, None, None)
            for handle_other, other in self._objects.items():
                if handle_other != handle and probe.group & other.mask and other.group & probe.mask:
                    _raise_if_unsupported(probe, other)
        obj.velocity = v if np.any(v) else None

    # ------------------------------------------------------------------ broad phase
    def _object_arrays(self):
        if self._arrays is None:
            bounded = [h for h in sorted(self._objects) if self._objects[h].bounded]
            objs = [self._objects[h] for h in bounded]
            counts = np.array([len(o.points) for o in objs], dtype=np.int64)
            starts = np.zeros(len(objs), dtype=np.int64)
            if len(objs) > 1:
                starts[1:] = np.cumsum(counts)[:-1]
            points = np.ascontiguousarray(np.concatenate([o.points for o in objs])) if objs else np.zeros((0, 3))
            kind = np.array([o.shape.kind for o in objs], dtype=np.int64)
            radius = np.array([float(o.shape.params[0]) if o.shape.kind in (kinds.SPHERE, kinds.CAPSULE, kinds.CYLINDER,
                                                                               kinds.CONE) else 0.0 for o in objs])
            self._arrays = (bounded, {h: i for i, h in enumerate(bounded)}, kind, starts, counts, radius, points)
        return self._arrays

    def _boxes_of(self, handles, swept_dt):
        """World boxes (n, 6) of bounded objects; swept over [0, swept_dt] for moving ones."""
        objs = [self._objects[h] for h in handles]
        n = len(objs)
        kind = np.array([o.shape.kind for o in objs], dtype=np.int64)
        counts = np.array([len(o.points) for o in objs], dtype=np.int64)
        starts = np.zeros(n, dtype=np.int64)
        if n > 1:
            starts[1:] = np.cumsum(counts)[:-1]
        points = np.ascontiguousarray(np.concatenate([o.points for o in objs]))
        radius = np.array([float(o.shape.params[0]) if o.shape.kind in (kinds.SPHERE, kinds.CAPSULE, kinds.CYLINDER,
                                                                           kinds.CONE) else 0.0 for o in objs])
        poses = np.ascontiguousarray(np.array([o.pose for o in objs]).reshape(n, 4, 4))
        return self._compute_boxes(kind, starts, counts, radius, points, poses,
                                   [o.velocity for o in objs], swept_dt)

    def _compute_boxes(self, kind, starts, counts, radius, points, poses, velocities, swept_dt):
        n = kind.shape[0]
        out = np.empty((n, 6))
        zero = np.zeros((n, 3))
        _kernel().world_aabbs(kind, starts, counts, radius, points, poses, zero, _PAD, out)
        if swept_dt > 0.0:
            shift = np.array([np.zeros(3) if v is None else v * swept_dt for v in velocities]).reshape(n, 3)
            if np.any(shift):
                moved = out + np.hstack([shift, shift])
                out = np.hstack([np.minimum(out[:, :3], moved[:, :3]), np.maximum(out[:, 3:], moved[:, 3:])])
        return out

    def _refresh(self, dt):
        """Put every bounded object's (swept) box into the broad phase."""
        bounded, _, kind, starts, counts, radius, points = self._object_arrays()
        if not bounded:
            return
        objs = [self._objects[h] for h in bounded]
        poses = np.ascontiguousarray(np.array([o.pose for o in objs]).reshape(-1, 4, 4))
        boxes = self._compute_boxes(kind, starts, counts, radius, points, poses, [o.velocity for o in objs], dt)
        self._broad.update_many(bounded, boxes)

    def _candidates(self, dt):
        """Broad-phase pairs (k, 2) handles a < b, plus unbounded objects against all, filtered
        by groups / masks; sorted rows."""
        self._refresh(dt)
        pairs = self._broad.pairs()
        if self._unbounded:
            extra = []
            handles = sorted(self._objects)
            for u in self._unbounded:
                extra.extend((min(u, h), max(u, h)) for h in handles if h != u)
            extra = np.array(extra, dtype=np.int64).reshape(-1, 2)
            pairs = np.unique(np.vstack([pairs, extra]), axis=0)
        if pairs.shape[0] == 0:
            return pairs
        objects = self._objects
        keep = np.fromiter(
            (bool(objects[a].group & objects[b].mask and objects[b].group & objects[a].mask)
             for a, b in pairs.tolist()),
            dtype=np.bool_, count=pairs.shape[0])
        return pairs[keep]

    # ------------------------------------------------------------------ narrow phase
    def _static_event(self, a, b, oa, ob):
        import touche

        if not touche.intersects(oa.shape, oa.pose, ob.shape, ob.pose):
            return None
        points, normal, depth = self._contact_geometry(oa, oa.pose, ob, ob.pose)
        return CollisionEvent(a, b, 0.0, points, normal, depth, None, oa.user_data, ob.user_data)

    def _contact_geometry(self, oa, pose_a, ob, pose_b):
        import touche

        from .contacts import _contact_supported

        if _contact_supported(oa.shape.kind, ob.shape.kind):
            manifold = touche.contacts(oa.shape, pose_a, ob.shape, pose_b, max_points=self.max_points)
            if manifold.count > 0:
                depth = max(0.0, float(np.max(manifold.depths[: manifold.count])))
                return np.array(manifold.points[: manifold.count]), np.array(manifold.normal), depth
        result = touche.distance(oa.shape, pose_a, ob.shape, pose_b)
        point = 0.5 * (np.asarray(result.point_a) + np.asarray(result.point_b))
        return point.reshape(1, 3), np.array(result.normal), max(0.0, -float(result.signed_distance))

    def _moving_event(self, a, b, oa, ob, dt):
        import touche
        from .impact import ImpactStatus
        from .motion import Linear

        va = np.zeros(3) if oa.velocity is None else oa.velocity
        vb = np.zeros(3) if ob.velocity is None else ob.velocity
        result = touche.time_of_impact(oa.shape, Linear(va, oa.pose), ob.shape, Linear(vb, ob.pose), dt)
        status = ImpactStatus(int(result.status))
        if status == ImpactStatus.MISS:
            return None
        time = float(result.time)
        if status == ImpactStatus.ALREADY_TOUCHING:
            points, normal, depth = self._contact_geometry(oa, oa.pose, ob, ob.pose)
            return CollisionEvent(a, b, 0.0, points, normal, depth, status, oa.user_data, ob.user_data)
        points = np.asarray(result.points, dtype=np.float64).reshape(-1, 3)
        if points.shape[0] == 0:
            points = np.asarray(result.point, dtype=np.float64).reshape(1, 3)
        return CollisionEvent(a, b, time, points, np.array(result.normal, dtype=np.float64), 0.0, status,
                              oa.user_data, ob.user_data)

    def _narrow(self, pairs, dt):
        events = []
        objects = self._objects
        for a, b in pairs.tolist():
            oa, ob = objects[a], objects[b]
            try:
                if dt > 0.0 and (oa.velocity is not None or ob.velocity is not None):
                    event = self._moving_event(a, b, oa, ob, dt)
                else:
                    event = self._static_event(a, b, oa, ob)
            except UnsupportedQuery as exc:
                error = UnsupportedQuery("CollisionWorld", oa.shape, ob.shape)
                error.args = (f"CollisionWorld pair ({a}, {b}): {exc}",)
                raise error from exc
            if event is not None:
                events.append(event)
        events.sort(key=lambda e: (e.time, e.a, e.b))
        return events

    # ------------------------------------------------------------------ public queries
    def step(self, dt):
        """Advance the world by ``dt`` (>= 0) and return the events (list of
        :class:`CollisionEvent`, sorted by time then handles). See the module doc."""
        dt = float(dt)
        if not np.isfinite(dt) or dt < 0.0:
            raise GeometryError(f"dt must be finite and >= 0, got {dt}")
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
            for obj in self._objects.values():
                if obj.velocity is not None:
                    obj.pose = obj.pose.copy()
                    obj.pose[:3, 3] += obj.velocity * dt
        return delivered

    def pairs(self):
        """Handles (k, 2), rows a < b sorted, of the objects that overlap at their current poses
        (groups / masks applied)."""
        events = self._narrow(self._candidates(0.0), 0.0)  # all at time 0: sorted by (a, b)
        return np.array([(e.a, e.b) for e in events], dtype=np.int64).reshape(-1, 2)

    def _shape_box(self, shape, pose):
        probe = _Object(shape, pose, None, 1, 1, None, None)
        if not probe.bounded:
            return None
        self._objects[-1] = probe
        try:
            return self._boxes_of([-1], 0.0)[0]
        finally:
            del self._objects[-1]

    def _probe(self, shape, pose):
        shape = shape if isinstance(shape, Shape) else as_shape(shape, "shape")
        matrix = np.array(as_matrices(pose, "pose"), dtype=np.float64)
        if matrix.ndim != 2:
            raise GeometryError("world queries take one pose (4, 4)")
        return shape, matrix

    def query(self, shape, pose=None, *, mask=-1):
        """Handles (ascending) of the objects that overlap ``shape`` at ``pose`` (and whose group
        shares a bit with ``mask``)."""
        import touche

        shape, matrix = self._probe(shape, pose)
        mask = _mask(mask, "mask")
        self._refresh(0.0)
        box = self._shape_box(shape, matrix)
        candidates = self._broad.ids if box is None else self._broad.query_aabb(box)
        handles = sorted(set(candidates.tolist()) | set(self._unbounded))
        hits = []
        for h in handles:
            obj = self._objects[h]
            if obj.group & mask and touche.intersects(shape, matrix, obj.shape, obj.pose):
                hits.append(h)
        return np.array(hits, dtype=np.int64)

    def closest(self, shape, pose=None, *, mask=-1):
        """The object nearest to ``shape`` at ``pose``: (handle, touche.DistanceResult) with the
        result from ``shape`` (A) to the object (B), or None for an empty world. Overlapping
        objects come first (most negative signed distance). Ties go to the lower handle."""
        import touche

        shape, matrix = self._probe(shape, pose)
        mask = _mask(mask, "mask")
        self._refresh(0.0)
        pool = [h for h in self._objects if self._objects[h].group & mask]
        if not pool:
            return None
        best = None
        box = self._shape_box(shape, matrix)
        tried = set()

        def consider(handles):
            nonlocal best
            for h in sorted(handles):
                if h in tried or not (self._objects[h].group & mask):
                    continue
                tried.add(h)
                obj = self._objects[h]
                result = touche.distance(shape, matrix, obj.shape, obj.pose)
                key = (float(result.signed_distance), h)
                if best is None or key < best[0]:
                    best = (key, h, result)

        consider(self._unbounded)
        if box is None or not len(self._broad):
            consider(self._broad.ids.tolist())
        else:
            grow = max(float(np.max(box[3:] - box[:3])), 1e-12)
            while True:  # widen the search box until it holds a candidate
                found = self._broad.query_aabb(np.r_[box[:3] - grow, box[3:] + grow]).tolist()
                candidates = [h for h in found if self._objects[h].group & mask]
                if candidates or len(tried) + len(found) >= len(self._broad):
                    consider(candidates)
                    break
                grow *= 4.0
                if not np.isfinite(grow):
                    consider(self._broad.ids.tolist())
                    break
            if best is not None and np.isfinite(best[0][0]):
                # anything nearer than the best so far lies inside the box grown by its distance
                reach = max(best[0][0], 0.0) * (1.0 + 1e-9) + 1e-12
                consider(self._broad.query_aabb(np.r_[box[:3] - reach, box[3:] + reach]).tolist())
            if best is None:
                consider([h for h in self._broad.ids.tolist()])
        return None if best is None else (best[1], best[2])

    def raycast(self, origin, direction, max_t=np.inf, *, mask=-1):
        """Every object hit by the ray ``origin + t * unit(direction)``, t in [0, max_t]:
        a list of (handle, t, point (3,), normal (3,)) sorted by t then handle."""
        import touche

        origin = np.array(origin, dtype=np.float64).reshape(3)
        direction = np.array(direction, dtype=np.float64).reshape(3)
        if not (np.isfinite(origin).all() and np.isfinite(direction).all()) or not np.any(direction):
            raise GeometryError("origin and direction must be finite, direction non-zero")
        unit = direction / np.linalg.norm(direction)
        mask = _mask(mask, "mask")
        self._refresh(0.0)
        candidates = set(self._broad.query_ray(origin, unit, max_t).tolist()) | set(self._unbounded)
        hits = []
        for h in sorted(candidates):
            obj = self._objects[h]
            if not obj.group & mask:
                continue
            if obj.shape.kind in (kinds.RAY, kinds.LINE, kinds.POINT, kinds.SEGMENT):
                continue  # zero-volume / zero-area shapes are not hit by rays
            result = touche.raycast(obj.shape, obj.pose, origin, unit, max_t)
            if bool(result.hit):
                hits.append((h, float(result.t), np.array(result.point), np.array(result.normal)))
        hits.sort(key=lambda hit: (hit[1], hit[0]))
        return hits

    def __repr__(self):
        return f"CollisionWorld({len(self)} objects, broad phase {type(self._broad).__name__})"


def _raise_if_unsupported(x, y):
    from .query import SUPPORTED_PAIRS

    if (x.shape.kind, y.shape.kind) not in SUPPORTED_PAIRS:
        raise UnsupportedQuery("CollisionWorld (intersects)", x.shape, y.shape)
    moving = x.velocity is not None or y.velocity is not None
    if moving and kinds.MESH in (x.shape.kind, y.shape.kind):
        raise UnsupportedQuery("CollisionWorld (time_of_impact of a moving mesh)", x.shape, y.shape)
