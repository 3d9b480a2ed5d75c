"""Reading and writing meshes: STL (binary and ASCII, strict, vectorised), OBJ / PLY / OFF /
glTF through trimesh (optional), writing STL and OBJ.

Binary or ASCII?  A binary STL is an 80-byte header, a little-endian uint32 triangle count and
50 bytes per triangle, so its size is exactly ``84 + 50 * count``. Many real-world exporters
write a header that starts with ``solid`` (the ASCII keyword) into BINARY files, so the header
alone decides nothing. The rule here:

1. size == 84 + 50 * count (count read at byte 80, count > 0)  ->  binary, whatever the header says;
2. else, the file starts with ``solid`` (after optional whitespace)  ->  ASCII, parsed strictly;
   if it is not valid ASCII STL either, the error says both things (it is most likely a binary
   file with a ``solid`` header that was truncated or padded);
3. else  ->  binary with the wrong size: a truncated (or padded) file, reported with both numbers.

An ASCII file whose size happens to equal ``84 + 50 * count`` for the number read at byte 80
would be misread as binary; that number is 4 bytes of text read as an integer (for example
``b"0.00"`` = 808,349,232), so the coincidence needs a file of about 40 GB and is ignored.

Every problem raises :class:`touche.errors.MeshFormatError` naming the file and the problem.
Facet normals stored in STL files are ignored (they are often zero or stale); normals follow the
vertex order (counter-clockwise seen from outside).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import GeometryError, MeshFormatError

_BINARY_DTYPE = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
assert _BINARY_DTYPE.itemsize == 50
_HEADER = b"touche binary STL".ljust(80, b" ")  # must not start with b"solid"
_FACET_TOKENS = 21  # facet normal x y z outer loop (vertex x y z)*3 endloop endfacet
_KEYWORDS = {0: b"facet", 1: b"normal", 5: b"outer", 6: b"loop", 7: b"vertex", 11: b"vertex",
             15: b"vertex", 19: b"endloop", 20: b"endfacet"}
_NUMBER_COLUMNS = np.array([8, 9, 10, 12, 13, 14, 16, 17, 18])


def _fail(path, problem):
    raise MeshFormatError(f"{path}: {problem}")


# --------------------------------------------------------------------------------------------
# STL reading
def read_stl(path):
    """Read a binary or ASCII STL file as a triangle soup.

    Returns ``triangles`` (m, 3, 3) float64: ``triangles[i, j]`` is vertex j of triangle i, in
    file order. Binary files hold float32 coordinates; they are converted exactly to float64.
    Raises MeshFormatError (file missing, truncated, counts that disagree with the size, NaN/inf
    coordinates, malformed ASCII structure, no triangles).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        _fail(path, "no such file")
    except IsADirectoryError:
        _fail(path, "is a directory, not a mesh file")
    except OSError as exc:
        _fail(path, f"cannot be read ({exc.strerror or exc})")
    return parse_stl(data, path)


def parse_stl(data, name="<bytes>"):
    """:func:`read_stl` on bytes already in memory; ``name`` is used in error messages."""
    data = bytes(data) if not isinstance(data, bytes) else data
    size = len(data)
    if size == 0:
        _fail(name, "empty file (0 bytes)")
    looks_ascii = data.lstrip()[:5].lower() == b"solid"
    if size >= 84:
        count = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0])
        expected = 84 + 50 * count
        if size == expected and count > 0:
            return _binary(data, count, name)
    else:
        count, expected = None, None
    if looks_ascii:
        try:
            return _ascii(data, name)
        except MeshFormatError as exc:
            if count is None:
                raise
            reason = str(exc).split(": ", 1)[1]
            _fail(name, f"starts with 'solid' like an ASCII STL but is not valid ASCII STL ({reason}); "
                        f"read as binary, its header promises {count:,} triangles = {expected:,} bytes "
                        f"but the file has {size:,} bytes")
    if size < 84:
        _fail(name, f"truncated: {size} bytes, but a binary STL needs at least 84 (80-byte header + "
                    f"4-byte triangle count) and the file does not start with 'solid' (ASCII)")
    if count == 0:
        if size == 84:
            _fail(name, "binary STL with 0 triangles (an empty mesh)")
        _fail(name, f"binary STL header says 0 triangles but the file has {size - 84:,} bytes of data "
                    f"after the header")
    if size < expected:
        _fail(name, f"truncated binary STL: the header says {count:,} triangles, which needs "
                    f"84 + 50 * {count:,} = {expected:,} bytes, but the file has {size:,} bytes")
    _fail(name, f"binary STL size mismatch: the header says {count:,} triangles, which needs "
                f"84 + 50 * {count:,} = {expected:,} bytes, but the file has {size:,} bytes "
                f"({size - expected:,} extra)")


def _check_finite(triangles, name):
    finite = np.isfinite(triangles)
    if not finite.all():
        bad = int(np.argmin(finite.reshape(len(triangles), -1).all(axis=1)))
        _fail(name, f"triangle {bad} has a non-finite vertex coordinate "
                    f"({triangles[bad].reshape(-1)[~finite[bad].reshape(-1)][0]})")


def _binary(data, count, name):
    records = np.frombuffer(data, dtype=_BINARY_DTYPE, count=count, offset=84)
    with np.errstate(invalid="ignore"):  # NaN bit patterns are reported below, not warned about
        triangles = records["vertices"].astype(np.float64)
    _check_finite(triangles, name)
    return triangles


def _ascii(data, name):
    if b"\x00" in data:
        _fail(name, "contains NUL bytes (not a text file)")
    tokens = data.lower().split()
    total = len(tokens)
    if total == 0 or tokens[0] != b"solid":
        _fail(name, "ASCII STL must start with 'solid'")
    pieces = []
    position = 0
    while position < total:
        if tokens[position] != b"solid":
            _fail(name, f"expected 'solid' at token {position}, got {tokens[position][:20]!r}")
        try:
            end = tokens.index(b"endsolid", position + 1)
        except ValueError:
            _fail(name, "no 'endsolid' (truncated ASCII STL?)")
        try:
            first = tokens.index(b"facet", position + 1, end)
        except ValueError:
            first = end  # a solid without facets
        body = tokens[first:end]
        if len(body) % _FACET_TOKENS:
            _fail(name, f"malformed ASCII STL: {len(body)} tokens between the first 'facet' and "
                        f"'endsolid', not a multiple of {_FACET_TOKENS} (truncated or extra tokens)")
        if body:
            table = np.array(body, dtype=bytes).reshape(-1, _FACET_TOKENS)
            for column, word in _KEYWORDS.items():
                wrong = table[:, column] != word
                if wrong.any():
                    facet = int(np.argmax(wrong))
                    _fail(name, f"malformed ASCII STL: facet {facet} has {table[facet, column][:20]!r} "
                                f"where '{word.decode()}' belongs")
            try:
                numbers = table[:, _NUMBER_COLUMNS].astype(np.float64)
            except (ValueError, TypeError):
                for facet in range(len(table)):  # error path only: find the bad number
                    for column in _NUMBER_COLUMNS:
                        try:
                            float(table[facet, column])
                        except ValueError:
                            _fail(name, f"malformed ASCII STL: facet {facet} has "
                                        f"{table[facet, column][:20]!r} where a number belongs")
                _fail(name, "malformed ASCII STL: a vertex coordinate is not a number")
            pieces.append(numbers.reshape(-1, 3, 3))
        # skip the optional name after endsolid, up to the next 'solid' or the end
        position = end + 1
        while position < total and tokens[position] != b"solid":
            position += 1
    if not pieces:
        _fail(name, "ASCII STL without facets (an empty mesh)")
    triangles = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
    _check_finite(triangles, name)
    return triangles


# --------------------------------------------------------------------------------------------
# loading into a TriangleMesh
def load(path, weld=True, tolerance=None, format=None):
    """Read a mesh file into a :class:`touche.TriangleMesh`.

    ``path``: an STL file (binary or ASCII; read here) or, with trimesh installed, any format
    trimesh reads (OBJ, PLY, OFF, glTF/GLB, 3MF...). ``format`` overrides the file suffix
    (``"stl"``, ``"obj"``...). STL stores every triangle's corners separately: ``weld=True``
    (default) joins exactly equal vertices (bitwise, -0.0 == 0.0); ``tolerance=d`` joins vertices
    closer than ``d`` (Ericson 12.1, see :func:`touche.mesh.weld`); ``weld=False`` keeps the soup.
    Raises MeshFormatError for unreadable files and for a mesh without triangles.
    """
    from ..shapes import TriangleMesh
    from .prepare import weld as weld_vertices

    path = Path(path)
    suffix = ("." + format.lower().lstrip(".")) if format else path.suffix.lower()
    if suffix == ".stl":
        triangles = read_stl(path)
        vertices = triangles.reshape(-1, 3)
        faces = np.arange(len(vertices), dtype=np.int64).reshape(-1, 3)
    else:
        vertices, faces = _read_with_trimesh(path, suffix)
    if weld or tolerance is not None:
        vertices, faces = weld_vertices(vertices, faces, tolerance=tolerance)
    return TriangleMesh(vertices, faces)


def _read_with_trimesh(path, suffix):
    try:
        import trimesh
    except ImportError:
        _fail(path, f"reading '{suffix}' files needs trimesh (pip install 'touche[mesh]'); "
                    f"STL is read without it")
    if not path.exists():
        _fail(path, "no such file")
    try:
        loaded = trimesh.load(str(path), file_type=suffix.lstrip("."), force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types; the user needs one message
        _fail(path, f"trimesh could not read it as '{suffix}': {type(exc).__name__}: {exc}")
    vertices = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=np.float64)
    faces = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))), dtype=np.int64)
    if faces.ndim != 2 or faces.shape[0] == 0:
        _fail(path, "contains no triangles")
    if not np.isfinite(vertices).all():
        _fail(path, "has non-finite vertex coordinates")
    if faces.min() < 0 or faces.max() >= len(vertices):
        _fail(path, f"faces index vertices out of range [0, {len(vertices)})")
    return vertices, faces


def as_mesh(value, name="mesh"):
    """A TriangleMesh from a TriangleMesh, a ``trimesh.Trimesh``, a ``(vertices, faces)`` pair
    or a path (loaded with :func:`load`)."""
    from ..shapes import TriangleMesh, as_shape

    if isinstance(value, TriangleMesh):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load(value)
    if isinstance(value, tuple) and len(value) == 2:
        return TriangleMesh(*value)
    shape = as_shape(value, name)
    if not isinstance(shape, TriangleMesh):
        raise GeometryError(f"{name} must be a triangle mesh, got {type(shape).__name__}")
    return shape


# --------------------------------------------------------------------------------------------
# writing
def face_normals(vertices, faces):
    """Unit normals (m, 3) by the right-hand rule; zero for zero-area faces."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    normal = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    length = np.linalg.norm(normal, axis=1)
    return np.divide(normal, length[:, None], out=np.zeros_like(normal), where=length[:, None] > 0)


def save(mesh, path, format=None, ascii=False):
    """Write ``mesh`` (TriangleMesh, trimesh.Trimesh or (vertices, faces)) to ``path``.

    Formats by suffix (or ``format``): ``.stl`` binary (``ascii=True``: ASCII, coordinates printed
    with 17 significant digits so float64 values round-trip exactly; binary stores float32),
    ``.obj`` (vertices and 1-based faces). Returns the Path written."""
    mesh = as_mesh(mesh)
    path = Path(path)
    suffix = ("." + format.lower().lstrip(".")) if format else path.suffix.lower()
    vertices = np.asarray(mesh.vertices, dtype=np.float64)
    faces = np.asarray(mesh.faces, dtype=np.int64)
    if suffix == ".stl":
        (_write_ascii_stl if ascii else _write_binary_stl)(vertices, faces, path)
    elif suffix == ".obj":
        _write_obj(vertices, faces, path)
    else:
        raise MeshFormatError(f"{path}: cannot write '{suffix}' files (STL and OBJ are supported)")
    return path


def _write_binary_stl(vertices, faces, path):
    records = np.zeros(len(faces), dtype=_BINARY_DTYPE)
    records["normal"] = face_normals(vertices, faces)
    records["vertices"] = vertices[faces]
    with open(path, "wb") as handle:
        handle.write(_HEADER)
        handle.write(np.uint32(len(faces)).astype("<u4").tobytes())
        handle.write(records.tobytes())


def _write_ascii_stl(vertices, faces, path):
    normals = face_normals(vertices, faces)
    rows = np.concatenate([normals, vertices[faces].reshape(-1, 9)], axis=1)
    facet = ("facet normal %.17g %.17g %.17g\n outer loop\n"
             "  vertex %.17g %.17g %.17g\n  vertex %.17g %.17g %.17g\n  vertex %.17g %.17g %.17g\n"
             " endloop\nendfacet\n")
    with open(path, "w", encoding="ascii") as handle:
        handle.write("solid touche\n")
        chunk = 20_000
        for start in range(0, len(rows), chunk):  # bounded memory; one % per chunk
            block = rows[start:start + chunk]
            handle.write((facet * len(block)) % tuple(block.reshape(-1).tolist()))
        handle.write("endsolid touche\n")


def _write_obj(vertices, faces, path):
    with open(path, "w", encoding="ascii") as handle:
        handle.write("# written by touche\n")
        np.savetxt(handle, vertices, fmt="v %.17g %.17g %.17g")
        np.savetxt(handle, faces + 1, fmt="f %d %d %d")
