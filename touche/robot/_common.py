"""What the robot model and its motion checks share: the compiled kernels (imported on first
use), bounding spheres of shapes, and the obstacles a check takes."""
from __future__ import annotations


import numpy as np

from .._cache import WeakIdentityCache, shape_key
from ..errors import GeometryError
from ..shapes import Shape, as_shape
from ..shapes import local_bounding_sphere as _shape_bounding_sphere

_KERNELS = None


def kernels():
    """The compiled kernels, imported on first use (``import touche.robot`` stays light)."""
    global _KERNELS
    if _KERNELS is None:
        from .._kernels import robot

        _KERNELS = robot
    return _KERNELS


def local_bounding_sphere(shape):
    """(centre (3,), radius) of a ball containing ``shape`` in its own frame (see
    touche.shapes.local_bounding_sphere)."""
    return _shape_bounding_sphere(shape)


_SPHERES = WeakIdentityCache(limit=256)  # obstacles come back call after call


def cached_bounding_sphere(shape):
    """local_bounding_sphere, remembered while the shape lives (touche._cache: weak keys)."""
    key = shape_key(shape)
    value = _SPHERES.get(key)
    if value is None:
        value = _SPHERES.get_or_build(lambda: local_bounding_sphere(shape), key)
    return value


def obstacle_spheres(obstacles):
    """(centers (k, 3), radii (k,)) of the obstacles' world bounding spheres, k = max(1, count):
    the kernels take at least one row."""
    centers = np.zeros((max(1, len(obstacles)), 3))
    radii = np.zeros(max(1, len(obstacles)))
    for o, (shape, pose, _) in enumerate(obstacles):
        center, radius = cached_bounding_sphere(shape)
        centers[o] = pose[:3, :3] @ center + pose[:3, 3]
        radii[o] = radius
    return centers, radii


def as_obstacles(obstacles):
    """A list of (shape, (4, 4) pose, name) from None, a shape, a (shape, pose) pair, a list of
    these, or a CollisionWorld."""
    from ..pose import Pose, as_matrices
    from ..world import CollisionWorld

    if obstacles is None:
        return []
    if isinstance(obstacles, CollisionWorld):
        entries = []
        for handle in obstacles.handles:
            shape = obstacles._object(handle).shape  # the world keeps each shape with its object
            entries.append((shape, obstacles.pose(handle), f"world object {handle}"))
        return entries
    if isinstance(obstacles, Shape) or _is_shape_and_pose(obstacles):
        obstacles = [obstacles]
    entries = []
    for index, item in enumerate(obstacles):
        if (type(item) is tuple and len(item) == 2 and type(item[1]) is Pose and item[1]._kernel_matrix.ndim == 2
                and isinstance(item[0], Shape)):
            entries.append((item[0], item[1]._kernel_matrix, f"obstacle {index}"))  # a Pose is valid and immutable
            continue
        if _is_shape_and_pose(item):
            shape, pose = item
        else:
            shape, pose = item, None
        shape = shape if isinstance(shape, Shape) else as_shape(shape, f"obstacle {index}")
        matrix = np.array(as_matrices(pose, f"pose of obstacle {index}"), dtype=np.float64)
        if matrix.ndim != 2:
            raise GeometryError(f"obstacle {index}: one pose (4, 4) per obstacle, got shape {matrix.shape}")
        entries.append((shape, matrix, f"obstacle {index}"))
    return entries


def _is_shape_and_pose(item):
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Shape) and not isinstance(item[1], Shape)


def example_robot_data():
    """The ``robots`` folder of the example-robot-data package (a cmeel package: installed under
    ``<site-packages>/cmeel.prefix/share/example-robot-data/robots``), or None when it is not
    installed (``pip install example-robot-data``)."""
    import site
    import sys
    from pathlib import Path

    for folder in [*site.getsitepackages(), *sys.path]:
        robots = Path(folder) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    return None
