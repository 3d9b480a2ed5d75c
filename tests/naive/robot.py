"""Slow, obviously correct references for touche.robot.

- ``forward_kinematics(urdf_text, joint_values)``: reads the URDF itself (ElementTree, only what
  kinematics needs), then walks each link up to the root joint by joint, with scipy's rotations
  (rpy as extrinsic x-y-z Euler angles, joint rotations as rotation vectors): {link: (4, 4)}.
- ``brute_force_collisions`` / ``brute_force_distances``: every checked pair at every
  configuration by touche's single-pair verbs, in Python loops, from the poses of the reference
  kinematics.
"""
import xml.etree.ElementTree as ET

import numpy as np
from scipy.spatial.transform import Rotation

import touche as tc


def _vector(text, default):
    return np.array([float(x) for x in (text or default).split()])


def _origin(element):
    matrix = np.eye(4)
    origin = element.find("origin")
    if origin is not None:
        matrix[:3, :3] = Rotation.from_euler("xyz", _vector(origin.get("rpy"), "0 0 0")).as_matrix()
        matrix[:3, 3] = _vector(origin.get("xyz"), "0 0 0")
    return matrix


def forward_kinematics(urdf_text, joint_values):
    """{link name: world pose (4, 4)} with the root at the identity; ``joint_values``: {actuated
    joint name: value}; a mimic joint takes multiplier * master + offset."""
    root = ET.fromstring(urdf_text)
    joints = {}
    for joint in root.findall("joint"):
        joints[joint.find("child").get("link")] = joint
    by_name = {joint.get("name"): joint for joint in root.findall("joint")}

    def value(joint):
        mimic = joint.find("mimic")
        if mimic is not None:
            master = by_name[mimic.get("joint")]
            return float(mimic.get("multiplier", 1)) * value(master) + float(mimic.get("offset", 0))
        return joint_values[joint.get("name")]

    def pose(link):
        joint = joints.get(link)
        if joint is None:
            return np.eye(4)
        motion = np.eye(4)
        kind = joint.get("type")
        axis_element = joint.find("axis")
        axis = _vector(axis_element.get("xyz") if axis_element is not None else None, "1 0 0")
        if kind != "fixed":
            axis = axis / np.linalg.norm(axis)
        if kind in ("revolute", "continuous"):
            motion[:3, :3] = Rotation.from_rotvec(axis * value(joint)).as_matrix()
        elif kind == "prismatic":
            motion[:3, 3] = axis * value(joint)
        return pose(joint.find("parent").get("link")) @ _origin(joint) @ motion

    return {link.get("name"): pose(link.get("name")) for link in root.findall("link")}


def geometry_pose(robot, link_poses, geometry):
    return link_poses[geometry.link] @ geometry.origin


def _pair_members(robot, link_poses, a, b, obstacles):
    geometry = robot.geometries[a]
    first = (geometry.shape, geometry_pose(robot, link_poses, geometry))
    if b >= 0:
        other = robot.geometries[b]
        return first, (other.shape, geometry_pose(robot, link_poses, other))
    shape, pose, _ = obstacles[-b - 1]
    return first, (shape, pose)


def checked_pairs(robot, obstacle_count):
    """The pairs touche.robot checks, in its order (self pairs, then each geometry against each
    obstacle), rebuilt here from the allowed-collision matrix by brute force."""
    pairs = []
    for a in range(len(robot.geometries)):
        for b in range(a + 1, len(robot.geometries)):
            la, lb = robot.geometries[a].link, robot.geometries[b].link
            if la != lb and not robot.is_allowed(la, lb):
                pairs.append((a, b))
    for g, geometry in enumerate(robot.geometries):
        if not robot.is_allowed(geometry.link, "<environment>"):
            pairs += [(g, -o - 1) for o in range(obstacle_count)]
    return pairs


def brute_force_collisions(robot, urdf_text, configurations, obstacles):
    """(n, pairs) bool by tc.intersects on one pair at a time."""
    pairs = checked_pairs(robot, len(obstacles))
    out = np.zeros((len(configurations), len(pairs)), dtype=bool)
    for i, q in enumerate(configurations):
        link_poses = forward_kinematics(urdf_text, dict(zip(robot.joint_names, q)))
        for p, (a, b) in enumerate(pairs):
            (sa, pa), (sb, pb) = _pair_members(robot, link_poses, a, b, obstacles)
            out[i, p] = tc.intersects(sa, pa, sb, pb)
    return pairs, out


def brute_force_distances(robot, urdf_text, configurations, obstacles):
    """(n, pairs) signed distances and (n, pairs, 3) witness points by tc.distance, one pair at a time."""
    pairs = checked_pairs(robot, len(obstacles))
    signed = np.zeros((len(configurations), len(pairs)))
    point_a = np.zeros((len(configurations), len(pairs), 3))
    point_b = np.zeros((len(configurations), len(pairs), 3))
    for i, q in enumerate(configurations):
        link_poses = forward_kinematics(urdf_text, dict(zip(robot.joint_names, q)))
        for p, (a, b) in enumerate(pairs):
            (sa, pa), (sb, pb) = _pair_members(robot, link_poses, a, b, obstacles)
            result = tc.distance(sa, pa, sb, pb)
            signed[i, p] = result.signed_distance
            point_a[i, p] = result.point_a
            point_b[i, p] = result.point_b
    return pairs, signed, point_a, point_b


# ------------------------------------------------------------------------------------------------
# motion checks: dense discrete sampling
def segment_configurations(q0, q1, s):
    """q0 + s (q1 - q0) for each s: (len(s), dof)."""
    s = np.asarray(s, dtype=np.float64)
    return q0[None, :] + s[:, None] * (np.asarray(q1) - np.asarray(q0))[None, :]


def first_contact_by_sampling(robot, q0, q1, obstacles, steps, *, self_collision=True, end=1.0):
    """The first s of ``steps`` + 1 evenly spaced samples of [0, end] whose configuration collides
    (robot.in_collision, the configuration check), or None: the discrete check a planner runs."""
    s = np.linspace(0.0, end, steps + 1)
    for start in range(0, len(s), 2000):
        chunk = s[start:start + 2000]
        hits = robot.in_collision(segment_configurations(q0, q1, chunk), obstacles, self_collision=self_collision,
                                  allow_outside_limits=True)
        if hits.any():
            return float(chunk[np.argmax(hits)])
    return None


def distance_rates(robot, q0, q1, obstacles, steps, *, self_collision=True):
    """(pair names, max over s of |d(s + h) - d(s)| / h per pair, d (steps + 1, pairs)), h =
    1 / steps, d the pair's distance (>= 0) from robot.distances at steps + 1 samples of the
    segment."""
    s = np.linspace(0.0, 1.0, steps + 1)
    result = robot.distances(segment_configurations(q0, q1, s), obstacles, self_collision=self_collision,
                             allow_outside_limits=True)
    return result.pairs, (np.abs(np.diff(result.distance, axis=0)) * steps).max(axis=0), result.distance
