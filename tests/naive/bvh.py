"""Slow, obviously correct references for the BVH queries: every triangle pair, no tree."""
import numpy as np

from touche._kernels.primitives.closest import closest_points_triangle_triangle
from touche._kernels.primitives.sat_triangles import triangle_triangle_overlap


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


# ------------------------------------------------------------------------------------------------
# referees for big meshes: every triangle pair that could matter, found with ball bounds
# (a pair whose circumscribed balls are farther apart than ``reach`` is farther apart than
# ``reach``: obviously safe), then the same exact pair tests as above
def triangle_balls(tri):
    centers = tri.mean(axis=1)
    radii = np.linalg.norm(tri - centers[:, None, :], axis=2).max(axis=1)
    return centers, radii


def candidate_pairs(tri_a, tri_b, reach):
    """(k, 2) index pairs (i of A, j of B) whose triangles' balls are within ``reach``."""
    from scipy.spatial import cKDTree

    ca, ra = triangle_balls(tri_a)
    cb, rb = triangle_balls(tri_b)
    lists = cKDTree(cb).query_ball_point(ca, ra + rb.max() + reach)
    counts = np.array([len(x) for x in lists])
    i = np.repeat(np.arange(len(tri_a)), counts)
    j = np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]) if counts.sum() else np.zeros(0, np.int64)
    keep = np.linalg.norm(ca[i] - cb[j], axis=1) - ra[i] - rb[j] <= reach
    return np.stack([i[keep], j[keep]], axis=1)


def referee_overlap(mesh_a, pose_a, mesh_b, pose_b):
    """Whether any triangle pair overlaps (closed), by the all-pairs test on ball candidates."""
    from touche._kernels.primitives.sat_fast import triangle_triangle_overlap_many

    ta = world_triangles(mesh_a, pose_a)
    tb = world_triangles(mesh_b, pose_b)
    scale = max(np.abs(ta).max(), np.abs(tb).max())
    pairs = candidate_pairs(ta, tb, 1e-9 * scale)
    if len(pairs) == 0:
        return False
    out = np.empty(len(pairs), dtype=np.bool_)
    triangle_triangle_overlap_many(np.ascontiguousarray(ta[pairs[:, 0]]), np.ascontiguousarray(tb[pairs[:, 1]]), out, 0,
                                   len(pairs))
    return bool(out.any())


def referee_distance(mesh_a, pose_a, mesh_b, pose_b, upper):
    """Smallest triangle-triangle distance, given an upper bound ``upper`` of it (the pairs that
    can be nearer are all among the ball candidates within ``upper``)."""
    ta = world_triangles(mesh_a, pose_a)
    tb = world_triangles(mesh_b, pose_b)
    pairs = candidate_pairs(ta, tb, upper * (1 + 1e-9) + 1e-300)
    best = np.inf
    for i, j in pairs:
        pa, pb = closest_points_triangle_triangle(ta[i, 0], ta[i, 1], ta[i, 2], tb[j, 0], tb[j, 1], tb[j, 2])
        best = min(best, float(np.linalg.norm(pa - pb)))
    return best
