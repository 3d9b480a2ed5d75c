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


FIGURES = {
    "closest_points.png": closest_points_in_a_batch,
    "time_of_impact.png": time_of_impact_sweep,
    "broad_phase.png": broad_phase_pairs,
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
