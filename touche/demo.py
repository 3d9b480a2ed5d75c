"""``touche demo``: a tour of every capability on generated data, one section per capability.

Each section runs real queries and prints what they answered (every figure printed is computed
in the run, timings included); with ``html_dir`` each section also writes an interactive 3D
picture of its shapes (touche.report, plotly) and the folder gets an ``index.html`` linking
them. Sections, in order: primitives, convex shapes (GJK), meshes, contacts, intersection sets,
time of impact, broad phase and worlds, clearance of two STL parts.

The parts are generated (a UV sphere, a torus, boxes): nothing is downloaded and nothing is read
from outside the package, so the demo runs on a fresh install.

``touche demo robot`` (:func:`run_robot`) is a second tour, for motion planning: a Franka Panda
from the example-robot-data package (``pip install example-robot-data``) against a shelf:
100,000 random configurations checked in one call, which pairs collide, distances, and motion
segments checked by conservative advancement.
"""
from __future__ import annotations

import html
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

# --------------------------------------------------------------------------------------------
# generated parts


def uv_sphere(triangles):
    """A closed UV sphere of radius 1 with about ``triangles`` faces: (vertices, faces)."""
    rings = max(2, int(np.sqrt(triangles / 4))) + 1  # 2 * segments * (rings - 1) faces
    segments = max(3, int(triangles / (2 * (rings - 1))))
    theta = np.linspace(0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    body = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
    vertices = np.concatenate([[[0, 0, 1.0]], body, [[0, 0, -1.0]]])
    south = len(vertices) - 1
    ring = lambda r, s: 1 + r * segments + (s % segments)  # noqa: E731
    s = np.arange(segments)
    faces = [np.stack([np.zeros(segments, int), ring(0, s), ring(0, s + 1)], axis=1)]
    for r in range(rings - 2):
        faces.append(np.stack([ring(r, s), ring(r + 1, s), ring(r + 1, s + 1)], axis=1))
        faces.append(np.stack([ring(r, s), ring(r + 1, s + 1), ring(r, s + 1)], axis=1))
    last = rings - 2
    faces.append(np.stack([np.full(segments, south), ring(last, s + 1), ring(last, s)], axis=1))
    return vertices, np.concatenate(faces).astype(np.int64)


def torus(major_radius, minor_radius, around=48, across=24):
    """A closed torus about the z axis, outward faces: (vertices, faces), 2 * around * across
    triangles."""
    u = np.linspace(0, 2 * np.pi, around, endpoint=False)
    v = np.linspace(0, 2 * np.pi, across, endpoint=False)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    radial = major_radius + minor_radius * np.cos(vv)
    vertices = np.stack([radial * np.cos(uu), radial * np.sin(uu), minor_radius * np.sin(vv)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(around), np.arange(across), indexing="ij")
    corner = lambda a, b: (a % around) * across + (b % across)  # noqa: E731
    p00, p10, p11, p01 = corner(i, j), corner(i + 1, j), corner(i + 1, j + 1), corner(i, j + 1)
    faces = np.concatenate([np.stack([p00, p10, p11], axis=-1).reshape(-1, 3),
                            np.stack([p00, p11, p01], axis=-1).reshape(-1, 3)])
    return vertices, faces.astype(np.int64)


def _matrix(pose):
    from .pose import as_matrices

    return np.eye(4) if pose is None else np.asarray(as_matrices(pose), dtype=np.float64).reshape(4, 4)


def _placed(vertices, pose):
    m = _matrix(pose)
    return np.asarray(vertices, dtype=np.float64) @ m[:3, :3].T + m[:3, 3]


def _fibonacci_directions(count):
    k = np.arange(count) + 0.5
    polar = np.arccos(1 - 2 * k / count)
    azimuth = np.pi * (1 + 5 ** 0.5) * k
    return np.stack([np.cos(azimuth) * np.sin(polar), np.sin(azimuth) * np.sin(polar), np.cos(polar)], axis=1)


def surface(shape, pose=None, samples=600):
    """A display triangulation (world vertices, faces) of a finite convex shape or a mesh.

    Polytopes: the hull of their vertices. Round shapes: rays cast at the shape (touche.raycast)
    from all around towards its centre; the hull of the hits. Display only: queries always use
    the exact shape."""
    from scipy.spatial import ConvexHull

    import touche as tc

    if isinstance(shape, tc.TriangleMesh):
        return _placed(shape.vertices, pose), np.asarray(shape.faces)
    if isinstance(shape, tc.Box):
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
        local = shape.center + corners * shape.half_extents
    elif hasattr(shape, "vertices"):
        local = np.asarray(shape.vertices, dtype=np.float64)
    else:
        directions = _fibonacci_directions(samples)
        reach = 10.0 * float(shape.scale)  # outside the shape: its scale bounds its size
        hits = tc.raycast(shape, None, -reach * directions, directions, max_t=2 * reach)
        local = hits.point[hits.hit]
    hull = ConvexHull(local)
    return _placed(local, pose), hull.simplices


# --------------------------------------------------------------------------------------------
# the report


class _Report:
    """Prints the sections and keeps their pictures."""

    def __init__(self, line, html_dir, sections):
        self.line = line
        self.html_dir = None if html_dir is None else Path(html_dir)
        self.sections = sections
        self.index = 0
        self.pictures = []  # (file name, title, printed lines)
        self._lines = []

    def section(self, title):
        self.index += 1
        self._lines = []
        self.title = title
        self.line(f"[{self.index}/{self.sections}] {title}")

    def say(self, text=""):
        self._lines.append(text)
        self.line(f"  {text}" if text else "")

    def picture(self, name, parts, result=None, markers=(), title=None):
        """Write ``name``.html when pictures are asked for: ``parts`` (name, shape or mesh, pose)."""
        if self.html_dir is None:
            return
        from . import report

        drawn = []
        for label, shape, pose in parts:
            vertices, faces = surface(shape, pose)
            drawn.append((label, vertices, faces))
        path = self.html_dir / f"{name}.html"
        report.write_html(path, drawn, result, title=title or self.title, markers=markers, shared_plotlyjs=True)
        self.pictures.append((path.name, title or self.title, list(self._lines)))
        self.say(f"picture: {path}")

    def write_index(self):
        if self.html_dir is None or not self.pictures:
            return None
        items = "\n".join(
            f"<li><a href='{html.escape(name)}'>{html.escape(title)}</a><pre>{html.escape(chr(10).join(lines))}</pre></li>"
            for name, title, lines in self.pictures)
        page = ("<!doctype html><html><head><meta charset='utf-8'><title>touche demo</title></head>"
                f"<body><h1>touche demo</h1><ol>\n{items}\n</ol></body></html>\n")
        path = self.html_dir / "index.html"
        path.write_text(page, encoding="utf-8")
        return path


def _separation(result):
    """What touche.report draws for a distance-like result: the closest-point segment of a
    separated pair."""
    separated = float(result.distance) > 0.0
    return SimpleNamespace(intersecting=not separated, distance=float(result.distance),
                           point_a=result.point_a, point_b=result.point_b, segments=None)


def _round(values, digits=4):
    return np.round(np.asarray(values, dtype=np.float64), digits).tolist()


def _timed(call):
    started = time.perf_counter()
    value = call()
    return value, time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# sections


def _primitives(tc, report):
    from . import dispatch

    report.section("primitives: distance, intersects, closest point, raycast")
    shapes = {
        "sphere r=0.5": tc.Sphere(0.5),
        "capsule r=0.3 len=1": tc.Capsule(0.3, 1.0),
        "box 1x2x0.5": tc.Box([1.0, 2.0, 0.5]),
        "triangle": tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]),
        "tetrahedron": tc.Tetrahedron([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]),
        "half-space z<=0": tc.HalfSpace([0, 0, 1], 0.0),
    }
    pose_a = tc.Pose.from_rotvec([0.3, -0.2, 0.5], [0.0, 0.0, 0.0])
    pose_b = tc.Pose.from_rotvec([-0.4, 0.1, 0.2], [1.2, 0.3, 0.4])
    report.say("distance (A at the origin, B at (1.2, 0.3, 0.4), both rotated):")
    report.say(f"  {'A':<20} {'B':<20} {'status':<12} {'distance':>10} {'depth':>10}")
    names = list(shapes)
    for i, name_a in enumerate(names):
        for name_b in names[i:]:
            a, b = shapes[name_a], shapes[name_b]
            if not dispatch.supported(dispatch.DISTANCE, a.kind, b.kind) or name_a == name_b == "half-space z<=0":
                continue
            result = tc.distance(a, pose_a, b, pose_b)
            report.say(f"  {name_a:<20} {name_b:<20} {result.status.name:<12} "
                       f"{result.distance:>10.5f} {result.depth:>10.5f}")
    box, capsule = shapes["box 1x2x0.5"], shapes["capsule r=0.3 len=1"]
    n = 100_000
    poses = tc.Pose.random(n, scale=1.5, seed=7)
    hits, seconds = _timed(lambda: tc.intersects(capsule, poses, box, None))
    report.say(f"batch: capsule vs box at {n:,} random poses -> {hits.mean() * 100:.1f} % intersect "
               f"({seconds * 1e9 / n:.0f} ns per pair)")
    batch, seconds = _timed(lambda: tc.distance(capsule, poses, box, None))
    report.say(f"batch distance: mean {batch.distance.mean():.4f}, max depth {batch.depth.max():.4f} "
               f"({seconds * 1e9 / n:.0f} ns per pair)")
    points = np.array([[0.0, 0.0, 2.0], [0.2, 0.1, 0.0], [3.0, -1.0, 0.5]])
    closest = tc.closest_point(box, pose_b, points)
    report.say("closest points on the box (pose B) to three points:")
    for p, q, d in zip(points, closest.point, closest.distance):
        report.say(f"  {p.tolist()} -> {_round(q)}  distance {d:.4f}")
    rays = tc.raycast(shapes["sphere r=0.5"], None, [[-3.0, 0.0, 0.0], [-3.0, 0.4, 0.0], [-3, 0.6, 0.0]],
                      [1.0, 0.0, 0.0])
    report.say("rays along +x at a sphere of radius 0.5 (offsets 0, 0.4, 0.6):")
    for hit, t, normal in zip(rays.hit, rays.t, rays.normal):
        report.say(f"  hit={bool(hit)!s:<5} t={t:.4f} normal={_round(normal)}")
    shown = tc.Pose.from_translation([1.6, 0.3, 0.4]) @ tc.Pose.from_rotvec([-0.4, 0.1, 0.2], [0.0, 0.0, 0.0])
    result = tc.distance(capsule, pose_a, box, shown)
    report.picture("primitives", [("capsule", capsule, pose_a), ("box", box, shown)], _separation(result),
                   title=f"capsule vs box ({result.status.name})")


def _convex(tc, report):
    report.section("convex shapes: GJK / EPA")
    cylinder, cone = tc.Cylinder(radius=0.5, length=1.0), tc.Cone(radius=0.5, length=1.0)
    ellipsoid = tc.Ellipsoid([0.6, 0.3, 0.2])
    hull = tc.ConvexPolyhedron(np.random.default_rng(0).normal(size=(50, 3)) * 0.4)
    pose = tc.Pose.from_rotvec([0.0, 0.5, 0.0], [1.2, 0.0, 0.2])
    report.say(f"{'A':<14} {'B':<14} {'status':<12} {'distance':>9} {'depth':>9} {'GJK iterations':>15}")
    for name_a, a, name_b, b in (("cylinder", cylinder, "cone", cone), ("cylinder", cylinder, "ellipsoid", ellipsoid),
                                 ("hull of 50", hull, "cone", cone), ("hull of 50", hull, "ellipsoid", ellipsoid)):
        r = tc.distance(a, None, b, pose)
        g = tc.convex.gjk(a, None, b, pose)
        report.say(f"{name_a:<14} {name_b:<14} {r.status.name:<12} {r.distance:>9.5f} {r.depth:>9.5f} "
                   f"{int(g.iterations):>15}")
    first = tc.convex.gjk(cylinder, pose, cone, None)
    nudged = tc.Pose.from_rotvec([0.0, 0.5, 0.0], [1.21, 0.0, 0.2])
    cold = tc.convex.gjk(cylinder, nudged, cone, None)
    warm = tc.convex.gjk(cylinder, nudged, cone, None, warm_start=first.warm_start)
    report.say(f"moved by 0.01 along x: GJK from scratch {int(cold.iterations)} iterations, warm-started "
               f"{int(warm.iterations)} (distance {float(warm.distance):.5f} both ways: "
               f"{abs(float(warm.distance) - float(cold.distance)) < 1e-9})")
    result = tc.distance(cylinder, pose, cone, None)
    report.picture("convex", [("cylinder", cylinder, pose), ("cone", cone, None)], _separation(result),
                   title="cylinder vs cone (GJK)")


def _meshes(tc, report):
    report.section("meshes: mesh-mesh distance, signed distance, containment")
    ring = tc.TriangleMesh(*torus(1.0, 0.3))
    ball_vertices, ball_faces = uv_sphere(800)
    ball = tc.TriangleMesh(ball_vertices * 0.5, ball_faces)
    report.say(f"torus R=1 r=0.3: {len(ring.faces):,} triangles; sphere r=0.5: {len(ball.faces):,} triangles")
    above = tc.Pose.from_translation([0.0, 0.0, 1.2])
    result, seconds = _timed(lambda: tc.distance(ring, None, ball, above))
    smooth = np.hypot(1.0, 1.2) - 0.3 - 0.5  # centre of the ball to the tube's core circle, less both radii
    report.say(f"sphere 1.2 above the hole: {result.status.name}, distance {result.distance:.4f} "
               f"(smooth surfaces: {smooth:.4f}; {seconds * 1e3:.2f} ms)")
    through = tc.Pose.from_translation([1.0, 0.0, 0.3])
    touching = tc.distance(ring, None, ball, through)
    report.say(f"sphere on the tube: {touching.status.name}, distance {touching.distance:.4f} "
               "(meshes are surfaces: crossing surfaces are TOUCHING)")
    points = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.2], [2.0, 0.0, 0.0]])
    signed = tc.signed_distance_points(ring, None, points)
    inside = tc.contains(ring, None, points)
    report.say("signed distance to the torus (negative inside):")
    for p, d, c in zip(points, signed, inside):
        report.say(f"  {p.tolist()} -> {d:+.4f} ({'inside' if c else 'outside'})")
    many = np.random.default_rng(3).uniform(-1.5, 1.5, (100_000, 3))
    inside_many, seconds = _timed(lambda: tc.contains(ring, None, many))
    volume = inside_many.mean() * 3.0 ** 3
    report.say(f"100,000 random points in a 3x3x3 cube: {inside_many.sum():,} inside -> volume {volume:.3f} "
               f"(exact torus 2 pi^2 R r^2 = {2 * np.pi ** 2 * 0.09:.3f}; {seconds * 1e3:.0f} ms)")
    report.picture("meshes", [("torus", ring, None), ("sphere", ball, above)], _separation(result),
                   title="torus and sphere meshes")


def _contacts(tc, report):
    report.section("contacts: a contact manifold")
    slab, cube = tc.Box([3.0, 3.0, 0.5]), tc.Box([1.0, 1.0, 1.0])
    resting = tc.Pose.from_rotvec([0.0, 0.0, 0.4], [0.2, -0.1, 0.74])  # 0.01 deep into the slab's top
    manifold = tc.contacts(cube, resting, slab, None)
    report.say(f"unit cube 0.01 into a 3x3x0.5 slab, turned 0.4 rad about z: {manifold.status.name}, "
               f"{manifold.count} points")
    report.say(f"normal (cube -> slab) {_round(manifold.normal)}")
    for point, depth in zip(manifold.points, manifold.depths):
        report.say(f"  point {_round(point)}  depth {depth:.4f}")
    tilted = tc.Pose.from_rotvec([0.15, 0.0, 0.0], [0.2, -0.1, 0.74])
    edge = tc.contacts(cube, tilted, slab, None)
    report.say(f"tilted 0.15 rad about x instead (an edge down): {edge.count} points, depths {_round(edge.depths)}")
    report.picture("contacts", [("cube", cube, resting), ("slab", slab, None)],
                   markers=[("contact points", manifold.points)],
                   title=f"contact manifold: {manifold.count} points, depth {float(np.max(manifold.depths)):.4f}")


def _intersection(tc, report):
    from scipy.spatial import ConvexHull

    report.section("intersection sets: A n B of two polytopes")
    a, b = tc.Box([1.0, 1.0, 1.0]), tc.Box([1.0, 1.0, 1.0])
    pose_b = tc.Pose.from_rotvec([0.3, 0.4, 0.5], [0.5, 0.3, 0.2])
    overlap = tc.intersection(a, None, b, pose_b)
    volume = ConvexHull(overlap.points).volume
    report.say(f"unit cube n a turned unit cube at (0.5, 0.3, 0.2): {overlap.kind.name}, "
               f"{len(overlap.points)} vertices, volume {volume:.4f}")
    touching = tc.intersection(a, None, b, tc.Pose.from_translation([1.0, 0.3, 0.0]))
    report.say(f"two unit cubes side by side (offset 1, 0.3, 0): {touching.kind.name}, "
               f"{len(touching.points)} vertices, area {_polygon_area(touching.points):.4f}")
    far = tc.intersection(a, None, b, tc.Pose.from_translation([2.0, 0.0, 0.0]))
    report.say(f"apart: {far.kind.name}")
    overlap_mesh = tc.TriangleMesh(overlap.points, overlap.faces)
    report.picture("intersection", [("cube A", a, None), ("cube B", b, pose_b), ("A n B", overlap_mesh, None)],
                   title=f"A n B: {overlap.kind.name} of {len(overlap.points)} vertices, volume {volume:.4f}")


def _polygon_area(points):
    """Area of a planar convex polygon given in order."""
    centre = points.mean(axis=0)
    spokes = points - centre
    return 0.5 * float(np.linalg.norm(np.cross(spokes, np.roll(spokes, -1, axis=0)).sum(axis=0)))


def _time_of_impact(tc, report):
    report.section("time of impact: a moving part (Linear, Screw)")
    box = tc.Box([1.0, 1.0, 1.0])
    start = tc.Pose.from_translation([3.0, 0.0, 0.0])
    linear = tc.Linear([-1.0, 0.0, 0.0], start)
    hit = tc.time_of_impact(box, linear, box, tc.Static(), t_max=5.0)
    report.say(f"cube from x=3 at speed 1 towards a cube at the origin: {hit.status.name} at t={hit.time:.4f}, "
               f"normal {_round(hit.normal)}, contact {hit.kind.name} of {len(hit.points)} points")
    screw = tc.Screw(velocity=[-1.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 2.0], pose=start)
    spun = tc.time_of_impact(box, screw, box, tc.Static(), t_max=5.0)
    report.say(f"same, spinning at 2 rad/s about z: {spun.status.name} at t={spun.time:.4f} "
               f"(corners lead: earlier than {hit.time:.1f}), contact point {_round(spun.point)}")
    check = tc.distance(box, screw.pose_at(spun.time), box, None)
    report.say(f"check: distance at that time {check.distance:.2e}")
    away = tc.time_of_impact(box, tc.Linear([1.0, 0.0, 0.0], start), box, tc.Static(), t_max=5.0)
    report.say(f"moving away: {away.status.name}")
    n = 20_000
    rng = np.random.default_rng(11)
    starts = tc.Pose.random(n, scale=4.0, seed=11)
    velocities = rng.normal(size=(n, 3))
    batch, seconds = _timed(lambda: tc.time_of_impact(box, tc.Linear(velocities, starts), box, None, t_max=2.0))
    names, counts = np.unique(batch.status_names, return_counts=True)
    report.say(f"batch of {n:,} random linear motions, t_max=2: "
               + ", ".join(f"{name} {count:,}" for name, count in zip(names, counts))
               + f" ({seconds * 1e6 / n:.1f} us per pair)")
    report.picture("time_of_impact",
                   [("moving cube at t=0", box, start), (f"at t={spun.time:.3f}", box, screw.pose_at(spun.time)),
                    ("static cube", box, None)],
                   markers=[("first contact", np.atleast_2d(spun.point))],
                   title=f"Screw motion: first contact at t={spun.time:.4f}")


def _broad_phase(tc, report):
    report.section("broad phase and CollisionWorld")
    rng = np.random.default_rng(5)
    n = 2_000
    low = rng.uniform(0.0, 20.0, (n, 3))
    boxes = np.concatenate([low, low + rng.uniform(0.2, 1.0, (n, 3))], axis=1)
    # brute force: every pair's boxes overlap on all three axes
    overlap = ((boxes[:, None, :3] <= boxes[None, :, 3:]) & (boxes[None, :, :3] <= boxes[:, None, 3:])).all(axis=2)
    expected = int(np.triu(overlap, 1).sum())
    report.say(f"{n:,} random boxes: {expected} overlapping pairs of {n * (n - 1) // 2:,} (brute force)")
    for name in ("sort_and_sweep", "dynamic_tree", "uniform_grid"):
        broad = tc.broadphase.STRUCTURES[name]()
        pairs, seconds = _timed(lambda: (broad.rebuild(boxes), broad.pairs())[1])
        report.say(f"  {name:<16} {len(pairs)} pairs, agrees: {len(pairs) == expected} ({seconds * 1e3:.1f} ms)")
    world = tc.CollisionWorld()
    floor = tc.Box([10.0, 10.0, 1.0])
    world.add(floor, tc.Pose.from_translation([0.0, 0.0, -0.5]), user_data="floor")
    ball, speed, dt = tc.Sphere(0.3), 1.0, 1.0
    heights = np.linspace(0.5, 2.0, 6)
    falling = []
    for k, height in enumerate(heights):
        start = tc.Pose.from_translation([1.5 * k - 3.75, 0.0, height])
        world.add(ball, motion=tc.Linear([0.0, 0.0, -speed], start), user_data=f"ball {k}")
        falling.append(start)
    events = world.step(dt)
    report.say(f"world: a floor and {len(heights)} balls falling at speed {speed:g} from heights "
               f"{_round(heights, 2)}, one step of dt={dt:g}:")
    for event in events:
        report.say(f"  {event.user_data_a} hits {event.user_data_b} at t={event.time:.4f}")
    reach = speed * dt + ball.radius  # a ball starting higher cannot touch the floor (top z=0) in the step
    report.say(f"balls starting above {reach:.1f} cannot reach the floor within the step: "
               f"{len(heights) - len(events)} of them, {int((heights > reach).sum())} expected")
    report.picture("broad_phase",
                   [("floor", floor, tc.Pose.from_translation([0.0, 0.0, -0.5]))]
                   + [(f"ball {k} at t=0", ball, start) for k, start in enumerate(falling)],
                   markers=[("contacts in the step", np.concatenate([e.points for e in events]) if events
                             else np.zeros((0, 3)))],
                   title=f"CollisionWorld.step(1.0): {len(events)} events")


def _clearance(tc, report):
    from . import mesh as tm

    report.section("clearance of two STL parts")
    ball_vertices, ball_faces = uv_sphere(4_000)
    ring_vertices, ring_faces = torus(1.2, 0.35, around=96, across=32)
    with tempfile.TemporaryDirectory() as folder:
        paths = [tm.save((ball_vertices, ball_faces), os.path.join(folder, "ball.stl")),
                 tm.save((ring_vertices, ring_faces), os.path.join(folder, "ring.stl"))]
        (ball, ring), seconds = _timed(lambda: [tm.load(path) for path in paths])
        sizes = [os.path.getsize(path) for path in paths]
    report.say(f"wrote and read back two binary STL files: ball.stl {len(ball.faces):,} facets "
               f"({sizes[0] / 1e3:.0f} kB), ring.stl {len(ring.faces):,} facets ({sizes[1] / 1e3:.0f} kB), "
               f"{seconds * 1e3:.0f} ms")
    for name, part in (("ball", ball), ("ring", ring)):
        checked = tm.inspect(part)
        report.say(f"  inspect {name}: closed {checked.closed}, problems {checked.problems or 'none'}")
    tilted = tc.Pose.from_rotvec([0.5, 0.0, 0.0], [0.0, 0.0, 1.8])
    apart, seconds = _timed(lambda: tc.clearance(ring, tilted, ball, None))
    report.say(f"ring tilted 0.5 rad, 1.8 above the ball: clearance {float(apart.distance):.4f} "
               f"between facet {int(apart.facet_a)} of ring.stl and facet {int(apart.facet_b)} of ball.stl "
               f"({seconds * 1e3:.1f} ms)")
    lowered = tc.Pose.from_rotvec([0.5, 0.0, 0.0], [0.0, 0.0, 0.9])
    crossing, seconds = _timed(lambda: tc.clearance(ring, lowered, ball, None, curve=True))
    lengths = np.linalg.norm(crossing.segments[:, 1] - crossing.segments[:, 0], axis=1)
    report.say(f"lowered to 0.9: intersecting {bool(crossing.intersecting)}, intersection curve of "
               f"{len(crossing.segments)} segments, length {lengths.sum():.4f} ({seconds * 1e3:.1f} ms)")
    offsets = np.stack([np.eye(4)] * 200)
    offsets[:, 2, 3] = np.linspace(0.0, 3.0, 200)
    sweep, seconds = _timed(lambda: tc.clearance(ball, None, ring, offsets))
    clear = offsets[:, 2, 3][~np.asarray(sweep.intersecting)]
    # smooth parts clear where the ball's centre is 1 + 0.35 from the tube's core circle (radius 1.2)
    smooth = np.sqrt((1.0 + 0.35) ** 2 - 1.2 ** 2)
    report.say(f"the flat ring at 200 heights in one call: clear of the ball from z={clear.min():.3f} "
               f"(smooth surfaces: {smooth:.3f}; {seconds * 1e3:.0f} ms)" if len(clear) else
               "the flat ring at 200 heights in one call: intersecting at every height")
    report.picture("clearance", [("ring.stl", ring, lowered), ("ball.stl", ball, None)], crossing,
                   title="ring.stl and ball.stl")


SECTIONS = (_primitives, _convex, _meshes, _contacts, _intersection, _time_of_impact, _broad_phase, _clearance)


def run(line, html_dir=None):
    """Print the tour through ``line(text)``; with ``html_dir`` write a picture per section and
    an index.html there. Returns the paths written. Without plotly the tour is still printed,
    then :class:`touche.report.MissingDependency` is raised."""
    import touche as tc

    from . import report as report_module

    missing = None
    if html_dir is not None:
        try:
            report_module.require_plotly()
        except report_module.MissingDependency as exc:  # as `touche check`: the tour still runs
            missing, html_dir = exc, None
        else:
            Path(html_dir).mkdir(parents=True, exist_ok=True)
    line("touche demo: every capability on generated shapes and parts")
    line("=" * 64)
    line("(a first run compiles each query's kernels as it meets them; `touche warmup` compiles them all)")
    line()
    report = _Report(line, html_dir, len(SECTIONS))
    started = time.perf_counter()
    for section in SECTIONS:
        begun = time.perf_counter()
        section(tc, report)
        line(f"  ({time.perf_counter() - begun:.2f} s)")
        line()
    index = report.write_index()
    if index is not None:
        line(f"pictures: {index} ({len(report.pictures)} pages)")
    line(f"done in {time.perf_counter() - started:.1f} s")
    if missing is not None:
        raise missing
    return [report.html_dir / name for name, _, _ in report.pictures] + ([index] if index else [])


# --------------------------------------------------------------------------------------------
# touche demo robot


def shelf(front):
    """Four boards of a shelf (touche Boxes, with poses) whose front faces the robot at ``front``
    (a point on the floor, along x or y)."""
    import touche as tc

    front = np.asarray(front, dtype=np.float64)
    across = np.array([-front[1], front[0], 0.0]) / np.linalg.norm(front)
    board = [0.3, 0.8, 0.02] if front[0] else [0.8, 0.3, 0.02]  # deep along ``front``, wide across it
    boards = [(board, front + [0.0, 0.0, height]) for height in (0.15, 0.5, 0.85)]
    boards.append(([0.3, 0.02, 0.9] if front[0] else [0.02, 0.3, 0.9], front + across * 0.4 + [0.0, 0.0, 0.5]))
    return [(tc.Box(size), tc.Pose.from_translation(center)) for size, center in boards]


class MissingRobotData(ImportError):
    """``touche demo robot`` needs the example-robot-data package."""


def run_robot(line, count=100_000, seed=0):
    """The robot tour through ``line(text)``: load the Panda, check ``count`` random
    configurations against a shelf (self-collision too), name the pairs that collide most,
    measure distances and check motion segments. Returns a dict of the figures printed."""
    from . import robot

    share = robot.example_robot_data()
    if share is None:
        raise MissingRobotData("touche demo robot needs the example-robot-data package: "
                               "pip install example-robot-data")
    started = time.perf_counter()
    line("touche demo robot: a Franka Panda (example-robot-data) in front of a shelf")
    line("=" * 64)
    line("(a first run compiles the robot kernels as it meets them; `touche warmup` compiles them all)")
    line()
    panda, seconds = _timed(lambda: robot.load_urdf(share / "panda_description/urdf/panda.urdf",
                                                    share / "panda_description/srdf/panda.srdf"))
    line(f"model: {panda.dof} joints, {len(panda.geometries)} collision geometries, "
         f"{len(panda.self_pairs)} self pairs checked after the SRDF's allowed ones ({seconds:.2f} s to load)")
    scene = shelf([0.55, 0.0, 0.0])
    line(f"scene: a shelf of {len(scene)} boards 0.55 m in front of the robot")
    rng = np.random.default_rng(seed)
    q = panda.lower + (panda.upper - panda.lower) * rng.random((count, panda.dof))
    panda.in_collision(q[:2], scene)  # the kernels loaded (or compiled) before the timing
    hits, seconds = _timed(lambda: panda.in_collision(q, scene))
    colliding = int(np.count_nonzero(hits))
    line(f"{count:,} random configurations in one call: {colliding:,} in collision "
         f"({100.0 * colliding / count:.1f} %), {seconds:.2f} s = {1e6 * seconds / count:.1f} us per configuration")
    sample = np.flatnonzero(hits)[:2000]
    report = panda.collisions(q[sample], scene)
    frequency = report.colliding.sum(axis=0)
    line(f"the pairs that collide most often (of {len(sample):,} colliding configurations):")
    for p in np.argsort(-frequency, kind="stable")[:5]:
        if frequency[p]:
            a, b = report.pairs[p]
            line(f"  {a} - {b}: {int(frequency[p])}")
    free = np.flatnonzero(~hits)
    measured = free[:20]
    distances, seconds = _timed(lambda: panda.distances(q[measured], scene))
    closest = distances.minimum
    line(f"distances for {len(measured)} free configurations: nearest {float(np.min(closest)):.4f} m, median "
         f"{float(np.median(closest)):.4f} m ({1e3 * seconds / len(measured):.1f} ms per configuration: every "
         f"pair, with witness points)")
    q0, q1 = q[free[:100]], q[free[100:200]]
    motion, seconds = _timed(lambda: panda.check_motion(q0, q1, scene))
    hit_segments = int(np.count_nonzero(motion.in_collision))
    certified = int(np.count_nonzero(motion.status == robot.MotionStatus.FREE))
    undecided = 100 - hit_segments - certified
    line(f"100 straight joint-space motions between free configurations: {hit_segments} reach a contact, "
         f"{certified} certified free" + (f", {undecided} undecided" if undecided else "")
         + f" ({1e3 * seconds / 100:.2f} ms per motion; conservative advancement misses no contact between samples)")
    if hit_segments:
        first = int(np.flatnonzero(motion.in_collision)[0])
        a, b = motion.contact_pairs[first]
        line(f"  e.g. motion {first}: first contact at s = {float(motion.time[first]):.4f} between {a} and {b}")
    line()
    line(f"done in {time.perf_counter() - started:.1f} s")
    return {"configurations": count, "colliding": colliding, "nearest": float(np.min(closest)),
            "motions_in_collision": hit_segments, "motions_free": certified}
