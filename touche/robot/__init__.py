"""Robots: URDF models (with SRDF disabled pairs), batched forward kinematics, self- and
environment-collision checks, distances with witness points and their gradients with respect to
the joint values.

    from touche import robot
    panda = robot.load_urdf("panda.urdf", "panda.srdf")
    q = panda.lower + (panda.upper - panda.lower) * np.random.default_rng(0).random((10_000, panda.dof))
    hits = panda.in_collision(q, [(tc.Box([1, 1, 0.1]), tc.Pose.from_translation([0, 0, -0.05]))])

See docs/robots.md.
"""
from ..errors import RobotModelError
from ._common import example_robot_data
from .model import (ENVIRONMENT, CollisionReport, Geometry, Robot, RobotDistances, SampledCollisions, as_obstacles,
                    load_urdf, warmup)
from .motion import MotionResult, MotionStatus, PathResult

__all__ = ["ENVIRONMENT", "CollisionReport", "Geometry", "MotionResult", "MotionStatus", "PathResult", "Robot",
           "RobotDistances", "RobotModelError", "SampledCollisions", "as_obstacles", "example_robot_data", "load_urdf",
           "warmup"]
