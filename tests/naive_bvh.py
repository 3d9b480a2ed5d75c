"""Slow, obviously correct references for the BVH queries: every triangle pair, no tree."""
import numpy as np

from touche._kernels.closest import closest_points_triangle_triangle
from touche._kernels.sat_fast import triangle_triangle_overlap


def world_triangles(mesh, pose):
    corners = np.asarray(mesh.vertices)[np.asarray(mesh.faces)]
    pose = np.eye(4) if pose is None else np.asarray(pose, dtype=float)
    return np.ascontiguousarray(corners @ pose[:3, :3].T + pose[:3, 3])


def all_overlapping_pairs(mesh_a, pose_a, mesh_b, pose_b):
    """Set of (i, j) with triangle i of A and j of B overlapping (closed), in world coordinates."""
    ta = world_triangles(mesh_a, pose_a)
    tb = world_triangles(mesh_b, pose_b)
    pairs = set()
    for i in range(len(ta)):
        for j in range(len(tb)):
            if triangle_triangle_overlap(ta, i, tb, j):
                pairs.add((i, j))
    return pairs


def pair_distance(mesh_a, pose_a, i, mesh_b, pose_b, j):
    ta = world_triangles(mesh_a, pose_a)
    tb = world_triangles(mesh_b, pose_b)
    pa, pb = closest_points_triangle_triangle(ta[i, 0], ta[i, 1], ta[i, 2], tb[j, 0], tb[j, 1], tb[j, 2])
    return float(np.linalg.norm(pa - pb))


def min_distance(mesh_a, pose_a, mesh_b, pose_b):
    """Smallest triangle-triangle distance over all pairs (world coordinates)."""
    ta = world_triangles(mesh_a, pose_a)
    tb = world_triangles(mesh_b, pose_b)
    best = np.inf
    for i in range(len(ta)):
        for j in range(len(tb)):
            pa, pb = closest_points_triangle_triangle(ta[i, 0], ta[i, 1], ta[i, 2], tb[j, 0], tb[j, 1], tb[j, 2])
            best = min(best, float(np.linalg.norm(pa - pb)))
    return best
