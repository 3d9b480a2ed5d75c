"""The gallery's worked examples: each function computes with touche and draws one picture.

docs/hooks.py calls every function of FIGURES while `mkdocs build` runs and adds the PNG it
returns to the built site (gallery/<name>.png); nothing is committed as a binary. docs/gallery.md
shows the code between the ``--8<-- [start:NAME]`` / ``[end:NAME]`` markers (pymdownx.snippets),
so the page shows exactly the code that drew the picture. Inputs are small: the build (and so
tests/test_docs_site.py) runs all of this.

Run by hand: ``python docs/gallery.py OUT_DIR`` writes the PNGs there.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Polygon, Rectangle  # noqa: E402

import touche as tc  # noqa: E402

STATUS_COLOURS = {0: "tab:green", 1: "tab:orange", 2: "tab:red"}  # SEPARATED, TOUCHING, PENETRATING


def _planar_pose(angle, x, y):
    """A (4, 4) pose: rotation by ``angle`` about z, then translation (x, y, 0)."""
    c, s = np.cos(angle), np.sin(angle)
    pose = np.eye(4)
    pose[:2, :2] = [[c, -s], [s, c]]
    pose[:2, 3] = x, y
    return pose


def _box_outline(size, pose):
    """The (4, 2) corners, in the xy plane, of a box of full side lengths ``size`` at ``pose``."""
    hx, hy = size[0] / 2, size[1] / 2
    local = np.array([[-hx, -hy, 0, 1], [hx, -hy, 0, 1], [hx, hy, 0, 1], [-hx, hy, 0, 1]])
    return (local @ np.asarray(pose).T)[:, :2]


def _capsule_outline(radius, length, pose, steps=24):
    """The outline, in the xy plane, of a capsule (axis along local z) lying in that plane."""
    pose = np.asarray(pose)
    axis, centre = pose[:3, 2], pose[:3, 3]
    ends = [centre[:2] - axis[:2] * length / 2, centre[:2] + axis[:2] * length / 2]
    base = np.arctan2(axis[1], axis[0])
    arcs = [ends[1] + radius * np.c_[np.cos(a), np.sin(a)] for a in [base + np.linspace(-np.pi / 2, np.pi / 2, steps)]]
    arcs += [ends[0] + radius * np.c_[np.cos(a), np.sin(a)] for a in [base + np.linspace(np.pi / 2, 3 * np.pi / 2, steps)]]
    return np.vstack(arcs)


def _box_faces(box, pose):
    """The six (4, 3) faces, in world coordinates, of ``box`` at ``pose`` (for Poly3DCollection)."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    corners = (box.center + signs * box.half_extents) @ np.asarray(pose)[:3, :3].T + np.asarray(pose)[:3, 3]
    quads = [[0, 1, 3, 2], [4, 5, 7, 6], [0, 1, 5, 4], [2, 3, 7, 6], [0, 2, 6, 4], [1, 3, 7, 5]]
    return corners[quads]


def _node_depths(tree):
    """The depth of every node of a BVH (preorder: the left child of node i is i + 1, the right
    child is node_index[i, 2], -1 for a leaf)."""
    depths = np.zeros(tree.node_count, dtype=int)
    for node in range(tree.node_count):
        right = tree.node_index[node, 2]
        if right >= 0:
            depths[node + 1] = depths[right] = depths[node] + 1
    return depths


def _png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


# --8<-- [start:closest_points]
def closest_points_in_a_batch():
    """Twelve capsules around a box: one batched `tc.distance` call gives every pair's
    closest points (or, when they overlap, the deepest points) and its status."""
    box = tc.Box([2.0, 1.0, 1.0])
    capsule = tc.Capsule(radius=0.25, length=1.0)
    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    lying = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 0], [0, 0, 0, 1.0]])  # local z -> world y
    poses = np.stack([_planar_pose(a, 1.25 * np.cos(a), 0.8 * np.sin(a)) @ lying for a in angles])
    result = tc.distance(capsule, poses, box, None)  # poses (12, 4, 4) -> arrays of 12

    figure, axes = plt.subplots(figsize=(6, 4.5))
    axes.add_patch(Polygon(_box_outline(box.extents, np.eye(4)), fill=False, lw=2, color="black"))
    for pose, a, b, code in zip(poses, result.point_a, result.point_b, result.status):
        colour = STATUS_COLOURS[int(code)]
        axes.add_patch(Polygon(_capsule_outline(0.25, 1.0, pose), fill=False, color=colour))
        axes.plot([a[0], b[0]], [a[1], b[1]], "-o", color=colour, ms=3)
    for code, colour in STATUS_COLOURS.items():
        axes.plot([], [], color=colour, label=tc.Status(code).name)
    axes.set(aspect="equal", xlabel="x", ylabel="y", title="tc.distance on a batch of 12 poses")
    axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    return figure
# --8<-- [end:closest_points]


# --8<-- [start:time_of_impact]
def time_of_impact_sweep():
    """A box that slides and spins (a screw motion) towards a fixed box: `tc.time_of_impact`
    gives the first contact time, point and normal; the sweep is drawn at a few times."""
    mover, wall = tc.Box([1.0, 0.4, 0.4]), tc.Box([0.4, 3.0, 0.4])
    start = tc.Pose.from_translation([-3.0, 0.0, 0.0])
    motion = tc.Screw(velocity=[1.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 1.5], pose=start)
    hit = tc.time_of_impact(mover, motion, wall, tc.Static(), t_max=5.0)

    figure, axes = plt.subplots(figsize=(6, 4))
    axes.add_patch(Polygon(_box_outline(wall.extents, np.eye(4)), color="0.6"))
    for t in np.linspace(0.0, hit.time, 6)[:-1]:
        pose = motion.pose_at(t)
        axes.add_patch(Polygon(_box_outline(mover.extents, pose), fill=False, color="tab:blue", alpha=0.4))
    contact_pose = motion.pose_at(hit.time)
    axes.add_patch(Polygon(_box_outline(mover.extents, contact_pose), fill=False, lw=2, color="tab:blue",
                           label=f"{hit.status.name} at t = {hit.time:.3f}"))
    axes.plot(*hit.point[:2], "o", color="tab:red", label="contact point")
    axes.arrow(*hit.point[:2], *(0.5 * hit.normal[:2]), width=0.02, color="tab:red")
    axes.set(aspect="equal", xlabel="x", ylabel="y", xlim=(-4, 1), ylim=(-1.7, 1.7),
             title="tc.time_of_impact under a screw motion")
    axes.legend(loc="lower left", fontsize=8)
    return figure
# --8<-- [end:time_of_impact]


# --8<-- [start:broad_phase]
def broad_phase_pairs():
    """Forty random boxes in a sort-and-sweep broad phase: `pairs()` gives every pair of
    overlapping boxes (closed: touching counts), exactly the brute-force set."""
    rng = np.random.default_rng(7)
    low = np.c_[rng.uniform(0, 10, (40, 2)), np.zeros(40)]
    boxes = np.c_[low, low + np.c_[rng.uniform(0.4, 1.8, (40, 2)), np.ones(40)]]  # (40, 6) min, max
    broad = tc.broadphase.SortAndSweep()
    broad.rebuild(boxes)
    pairs = broad.pairs()  # (k, 2) ids, i < j, sorted

    figure, axes = plt.subplots(figsize=(6, 6))
    paired = set(pairs.ravel().tolist())
    for i, box in enumerate(boxes):
        colour = "tab:red" if i in paired else "tab:gray"
        axes.add_patch(Rectangle(box[:2], *(box[3:5] - box[:2]), fill=False, color=colour))
    centres = (boxes[:, :2] + boxes[:, 3:5]) / 2
    for i, j in pairs:
        axes.plot(*centres[[i, j]].T, color="tab:red", lw=0.8)
    axes.set(aspect="equal", xlabel="x", ylabel="y", xlim=(-0.5, 12), ylim=(-0.5, 12),
             title=f"SortAndSweep.pairs(): {len(pairs)} overlapping pairs of 40 boxes")
    return figure
# --8<-- [end:broad_phase]


# --8<-- [start:contact_manifold]
def contact_manifold():
    """A cube pressed 0.01 into a slab: turned about z it touches with a face (`tc.contacts`
    gives four points), tilted about x with an edge (two points), each with its depth."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    slab, cube = tc.Box([3.0, 3.0, 0.5]), tc.Box([1.0, 1.0, 1.0])
    cases = [("face down", tc.Pose.from_rotvec([0.0, 0.0, 0.4], [0.2, -0.1, 0.74])),
             ("edge down", tc.Pose.from_rotvec([0.15, 0.0, 0.0], [0.2, -0.1, 0.74]))]
    figure = plt.figure(figsize=(9, 4.2))
    for column, (name, pose) in enumerate(cases):
        manifold = tc.contacts(cube, pose, slab, None)  # points (k, 3), depths (k,), normal (3,)
        axes = figure.add_subplot(1, 2, column + 1, projection="3d")
        axes.computed_zorder = False  # the contact points over the translucent boxes
        axes.add_collection3d(Poly3DCollection(_box_faces(slab, np.eye(4)), alpha=0.25, color="tab:gray"))
        axes.add_collection3d(Poly3DCollection(_box_faces(cube, pose.matrix), alpha=0.35, color="tab:blue"))
        axes.scatter(*manifold.points.T, color="tab:red", s=30, zorder=10,
                     label=f"{manifold.count} points, depth {manifold.depths.max():.3f}")
        tip = manifold.points.mean(axis=0)
        axes.quiver(*tip, *(0.6 * manifold.normal), color="tab:red", zorder=10)
        axes.set(xlim=(-1.5, 1.5), ylim=(-1.5, 1.5), zlim=(-0.5, 1.5), xlabel="x", ylabel="y", zlabel="z",
                 title=f"{name}: {manifold.status.name}")
        axes.legend(loc="upper left", fontsize=8)
    return figure
# --8<-- [end:contact_manifold]


# --8<-- [start:bvh_levels]
def bvh_levels():
    """The bounding-volume hierarchy of a torus mesh (`tc.bvh.build`), seen from above: the
    axis-aligned boxes of its nodes (`node_bounds[:, 0:6]`) at depths 0, 2, 4 and 6."""
    from touche.demo import torus

    vertices, faces = torus(1.0, 0.3)
    tree = tc.bvh.build(tc.TriangleMesh(vertices, faces), leaf_size=4)
    depths = _node_depths(tree)
    figure, panels = plt.subplots(1, 4, figsize=(11, 3.2))
    for depth, axes in zip((0, 2, 4, 6), panels):
        axes.triplot(vertices[:, 0], vertices[:, 1], faces, color="0.85", lw=0.3)
        boxes = tree.node_bounds[depths == depth, 0:6]  # AABB min (3), max (3)
        for box in boxes:
            axes.add_patch(Rectangle(box[:2], *(box[3:5] - box[:2]), fill=False, color="tab:blue", lw=1.2))
        axes.set(aspect="equal", xlim=(-1.45, 1.45), ylim=(-1.45, 1.45), xticks=[], yticks=[],
                 title=f"depth {depth}: {len(boxes)} node{'s' if len(boxes) > 1 else ''}")
    figure.suptitle(f"{tree}", fontsize=9)
    return figure
# --8<-- [end:bvh_levels]


# --8<-- [start:clearance_curve]
def clearance_curve():
    """A ring lowered over a ball: one `tc.clearance` call on 300 poses gives the clearance at
    each height, 0 where the surfaces intersect; beside it the clearance of the smooth shapes
    the meshes approximate."""
    from touche.demo import torus, uv_sphere

    ball = tc.ClearancePart(uv_sphere(2_000))  # radius 1
    ring = tc.ClearancePart(torus(1.2, 0.35))  # the hole (radius 0.85) is narrower than the ball
    heights = np.linspace(0.0, 2.5, 300)
    poses = np.stack([np.eye(4)] * len(heights))
    poses[:, 2, 3] = heights
    found = tc.clearance(ball, None, ring, poses)  # a batch: distance (300,), intersecting (300,)
    smooth = np.maximum(np.hypot(1.2, heights) - 1.0 - 0.35, 0.0)

    figure, axes = plt.subplots(figsize=(6, 3.6))
    axes.plot(heights, found.distance, color="tab:blue", lw=4, label="tc.clearance (meshes)")
    axes.plot(heights, smooth, "--", color="black", lw=1, label="smooth sphere and torus")
    axes.fill_between(heights, 0, 1, where=found.intersecting, color="tab:red", alpha=0.15,
                      transform=axes.get_xaxis_transform(), label="intersecting")
    axes.set(xlabel="height of the ring above the ball's centre", ylabel="clearance",
             title="clearance curve of a ring lowered over a ball")
    axes.legend(loc="upper left", fontsize=8)
    return figure
# --8<-- [end:clearance_curve]


FIGURES = {
    "closest_points.png": closest_points_in_a_batch,
    "time_of_impact.png": time_of_impact_sweep,
    "broad_phase.png": broad_phase_pairs,
    "contact_manifold.png": contact_manifold,
    "bvh_levels.png": bvh_levels,
    "clearance_curve.png": clearance_curve,
}


def render():
    """{file name: PNG bytes} of every figure."""
    return {name: _png(draw()) for name, draw in FIGURES.items()}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in render().items():
        (out / name).write_bytes(data)
        print(out / name)
