"""``touche.mesh.inspect(mesh)``: one report of everything chapter 12 of Ericson checks."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from . import prepare


@dataclass
class MeshReport:
    """What :func:`inspect` found. Counts are ints; ``bounds`` is ((min xyz), (max xyz)).

    ``duplicate_vertices``: vertices that exact welding would remove; ``near_duplicates``: more
    removed by welding at ``tolerance``; ``degenerate_faces``: faces with a repeated vertex index
    or zero area; ``holes``: boundary loops (``hole_sizes``: edges per loop); ``t_junctions``:
    T-vertices on cracks; ``flipped_faces``: faces :func:`prepare.orient` would flip;
    ``orientation_conflicts``: face pairs no flip can fix (non-orientable); ``coplanar_patches``:
    groups of coplanar neighbours (faces after merging would be fewer); ``volume``: signed volume
    (meaningful for closed meshes; positive = outward normals); ``euler``: the Euler report.
    ``problems``: human-readable list; empty for a clean, closed, consistently oriented mesh."""

    vertices: int
    faces: int
    bounds: tuple
    tolerance: float
    duplicate_vertices: int
    near_duplicates: int
    unused_vertices: int
    degenerate_faces: int
    components: int
    boundary_edges: int
    nonmanifold_edges: int
    holes: int
    hole_sizes: list
    t_junctions: int
    flipped_faces: int
    orientation_conflicts: int
    coplanar_patches: int
    closed: bool
    watertight: bool
    volume: float
    area: float
    euler_characteristic: int
    genus: int | None
    euler_consistent: bool
    problems: list = field(default_factory=list)

    def as_dict(self):
        return asdict(self)

    def __str__(self):
        lines = [
            f"vertices {self.vertices:,}  faces {self.faces:,}  components {self.components}",
            f"bounds {np.round(self.bounds[0], 6).tolist()} .. {np.round(self.bounds[1], 6).tolist()}",
            f"area {self.area:.6g}  signed volume {self.volume:.6g}",
            f"closed {self.closed}  watertight {self.watertight}  genus {self.genus}  "
            f"V-E+F {self.euler_characteristic}",
            f"duplicate vertices {self.duplicate_vertices}  near-duplicates (<= {self.tolerance:.3g}) "
            f"{self.near_duplicates}  unused {self.unused_vertices}",
            f"degenerate faces {self.degenerate_faces}  boundary edges {self.boundary_edges}  "
            f"non-manifold edges {self.nonmanifold_edges}",
            f"holes {self.holes}{' ' + str(self.hole_sizes[:10]) if self.holes else ''}  "
            f"T-junctions {self.t_junctions}",
            f"faces to flip {self.flipped_faces}  orientation conflicts {self.orientation_conflicts}",
            _coplanar_line(self.coplanar_patches, self.faces),
        ]
        lines.append("problems: " + ("none" if not self.problems else "; ".join(self.problems)))
        return "\n".join(lines)


def _plural(count, noun, plural=None):
    """'1 hole', '2 holes' (problem lines are read by people)."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def _coplanar_line(patches, faces):
    # a bare "coplanar patches 2755" beside 2,759 faces explained nothing: say what a patch is
    # and what the count means against the number of faces
    if faces == 0:
        return "coplanar patches 0"
    if patches == faces:
        return f"coplanar patches {patches:,} (one per face: no two neighbouring faces lie in one plane)"
    return (f"coplanar patches {patches:,} (flat regions: neighbouring faces in one plane count as one; "
            f"{faces:,} faces form {patches:,} regions, which tm.merge_coplanar would re-triangulate)")


def inspect(mesh, faces=None, tolerance=None):
    """Report on a mesh (TriangleMesh, trimesh.Trimesh, or ``vertices, faces``): welding,
    adjacency, components, holes, T-junctions, orientation, coplanarity, Euler checks.
    ``tolerance`` (default 1e-9 x the largest extent) is the weld / T-junction / planarity
    distance. Returns a :class:`MeshReport` (``str(report)`` reads well; ``as_dict()`` for JSON).
    The input is not modified."""
    v, f = prepare._mesh_arrays(mesh, faces)
    input_vertices = len(v)
    tol = prepare._default_tolerance(v) if tolerance is None else float(tolerance)
    problems = []
    used = np.zeros(len(v), dtype=bool)
    used[f.reshape(-1)] = True
    unused = int((~used).sum())
    exact_v, exact_f = prepare.weld(v, f, drop_degenerate=False)
    duplicates = int(used.sum()) - len(exact_v)
    near_v, _ = prepare.weld(v, f, tolerance=tol, drop_degenerate=False)
    near = len(exact_v) - len(near_v)
    # topology is judged on the exactly welded mesh (STL soups have no shared vertices)
    v, f = exact_v, exact_f
    cross = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    double_area = np.linalg.norm(cross, axis=1)
    repeated = (f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 2] == f[:, 0])
    degenerate = int((repeated | (double_area == 0.0)).sum())
    _, flipped, conflicts = prepare.orient(v, f)
    report_euler = prepare.euler(v, f, orientable=conflicts == 0)
    loops = prepare.boundary_loops(v, f)
    tj = prepare.t_junctions(v, f, tol)
    patches = int(prepare.coplanar_groups(v, f, tol).max() + 1) if len(f) else 0
    volume = prepare.signed_volume(v, f)
    if duplicates:
        problems.append(f"{_plural(duplicates, 'duplicate vertex', 'duplicate vertices')} (weld them)")
    if near:
        problems.append(f"{_plural(near, 'vertex', 'vertices')} within {tol:.3g} of another")
    if unused:
        problems.append(_plural(unused, "unused vertex", "unused vertices"))
    if degenerate:
        problems.append(_plural(degenerate, "degenerate face"))
    if loops:
        problems.append(_plural(len(loops), "hole"))
    if len(tj.vertex):
        problems.append(_plural(len(tj.vertex), "T-junction"))
    if conflicts:
        problems.append(f"{_plural(conflicts, 'orientation conflict')} (not orientable)")
    elif flipped:
        problems.append(f"{_plural(flipped, 'face')} wound against {'its' if flipped == 1 else 'their'} neighbours")
    if report_euler.closed and volume < 0 and not flipped:
        problems.append("normals point inward (negative volume)")
    problems.extend(p for p in report_euler.problems if "boundary edge" not in p)
    watertight = report_euler.closed and conflicts == 0
    return MeshReport(
        vertices=input_vertices, faces=len(f),
        bounds=(v.min(axis=0).tolist(), v.max(axis=0).tolist()) if len(v) else ([], []),
        tolerance=tol, duplicate_vertices=duplicates, near_duplicates=near, unused_vertices=unused,
        degenerate_faces=degenerate, components=report_euler.components,
        boundary_edges=report_euler.boundary_edges, nonmanifold_edges=report_euler.nonmanifold_edges,
        holes=len(loops), hole_sizes=[int(len(loop)) for loop in loops], t_junctions=int(len(tj.vertex)),
        flipped_faces=int(flipped), orientation_conflicts=int(conflicts), coplanar_patches=patches,
        closed=bool(report_euler.closed), watertight=bool(watertight), volume=float(volume),
        area=float(double_area.sum() / 2.0), euler_characteristic=int(report_euler.characteristic),
        genus=report_euler.genus, euler_consistent=bool(report_euler.consistent), problems=problems,
    )


def repair(mesh, faces=None, tolerance=None, fill=True):
    """Weld (exactly, then at ``tolerance``: default 1e-9 x the largest extent, the distance
    :func:`inspect` uses), drop degenerate faces, crack T-junctions, fill holes, orient
    consistently (outward for closed parts). Returns a TriangleMesh."""
    from ..shapes import TriangleMesh

    v, f = prepare._mesh_arrays(mesh, faces)
    v, f = prepare.weld(v, f)
    tolerance = prepare._default_tolerance(v) if tolerance is None else tolerance
    v, f = prepare.weld(v, f, tolerance=tolerance)
    v, f, _ = prepare.repair_t_junctions(v, f, tolerance)
    if fill:
        v, f, _ = prepare.fill_holes(v, f)
    f, _, _ = prepare.orient(v, f)
    return TriangleMesh(v, f)


def warmup():
    """Compile (or load from numba's cache) every mesh-preparation kernel on a tiny mesh."""
    from .triangulate import triangulate_polygon

    vertices = np.array([[x, y, z] for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)])
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    inspect(vertices, faces[:-1])
    prepare.fill_holes(vertices, faces[:-1])
    prepare.connected_components(vertices, faces, by="vertex")
    triangulate_polygon([[0, 0], [4, 0], [4, 4], [0, 4]], [[[1, 1], [1, 2], [2, 2]]])
