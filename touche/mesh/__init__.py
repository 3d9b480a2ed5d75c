"""Mesh input, output and repair (Ericson, Real-Time Collision Detection, ch. 12).

    from touche import mesh as tm
    part = tm.load("part.stl")                  # -> touche.TriangleMesh (exact duplicates welded)
    part.source_faces                           # each face's facet number in the file (welding
                                                # drops collapsed facets; results name both)
    print(tm.inspect(part))                     # holes, T-junctions, orientation, Euler checks...
    fixed = tm.repair(part)                     # weld, crack T-junctions, fill holes, orient
    tm.save(fixed, "fixed.stl")                 # binary STL (ascii=True for text), or .obj

Reading: binary and ASCII STL here (strict: MeshFormatError names the file and the problem);
OBJ / PLY / OFF / glTF through trimesh when it is installed (``pip install 'touche[mesh]'``).

Preparation (``vertices (n, 3), faces (m, 3)`` arrays or a mesh object):
:func:`weld` (12.1), :func:`edge_table`, :func:`vertex_faces`, :func:`connected_components`
(12.2), :func:`boundary_loops`, :func:`fill_holes`, :func:`t_junctions`,
:func:`repair_t_junctions` (12.3), :func:`newell_normal`, :func:`is_planar`,
:func:`coplanar_groups`, :func:`merge_coplanar` (12.4), :func:`triangulate_polygon` (12.5.1),
:func:`concave_edges`, :func:`convex_decomposition` (12.5.3), :func:`euler`, :func:`euler_polygons` (12.6),
:func:`orient`, :func:`signed_volume`. :func:`warmup` compiles the kernels ahead of use.

Importing this package loads numpy only; the numba kernels load on first use.
"""
from .decompose import concave_edges, convex_decomposition
from .inspect import MeshReport, inspect, repair, warmup
from .io import LoadedMesh, as_mesh, face_normals, load, parse_stl, read_stl, save, source_faces
from .prepare import (
    EdgeTable,
    EulerReport,
    TJunctions,
    boundary_edges,
    boundary_loops,
    connected_components,
    coplanar_groups,
    edge_table,
    euler,
    euler_polygons,
    PolygonEulerReport,
    face_pairs,
    fill_holes,
    is_planar,
    merge_coplanar,
    newell_normal,
    orient,
    repair_t_junctions,
    signed_volume,
    t_junctions,
    vertex_faces,
    weld,
)
from .triangulate import triangulate_polygon

__all__ = [
    "EdgeTable", "EulerReport", "MeshReport", "TJunctions", "as_mesh", "boundary_edges",
    "boundary_loops", "concave_edges", "connected_components", "convex_decomposition",
    "coplanar_groups", "edge_table", "euler", "euler_polygons", "PolygonEulerReport", "face_normals", "face_pairs", "fill_holes", "inspect",
    "is_planar", "load", "merge_coplanar", "newell_normal", "orient", "parse_stl", "read_stl",
    "repair", "repair_t_junctions", "save", "signed_volume", "t_junctions", "triangulate_polygon",
    "vertex_faces", "warmup", "weld", "LoadedMesh", "source_faces",
]
