"""Reading and writing meshes: STL (binary and ASCII, strict, vectorised), OBJ / PLY / OFF /
glTF through trimesh (optional), writing STL and OBJ.

Binary or ASCII?  A binary STL is an 80-byte header, a little-endian uint32 triangle count and
50 bytes per triangle, so its size is exactly ``84 + 50 * count``. Many real-world exporters
write a header that starts with ``solid`` (the ASCII keyword) into BINARY files, so the header
alone decides nothing. The rule here:

1. size == 84 + 50 * count (count read at byte 80, count > 0)  ->  binary, whatever the header says;
2. else, the file starts with ``solid`` (after optional whitespace)  ->  ASCII, parsed strictly;
   errors name the line and the facet. Only when such a file also holds bytes that text never
   has (control characters) does the error add the binary reading (it is then most likely a
   binary file with a ``solid`` header that was truncated or padded); for a text file the
   binary reading would be noise (its "triangle count" is four characters read as a number);
3. else, the file is another format renamed ``.stl`` (OBJ, PLY, OFF, glTF, 3MF: recognised by
   their first bytes)  ->  an error naming that format; other text  ->  "not an STL file";
4. else  ->  binary with the wrong size: a truncated (or padded) file, reported with both numbers.

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
from ..shapes import TriangleMesh, check_coordinates
from ._common import face_normals  # noqa: F401  (public here)

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
    text = _is_text(data)
    if looks_ascii:
        try:
            return _ascii(data, name)
        except MeshFormatError as exc:
            if count is None or text:  # text: the ASCII reading is the only one that means anything
                raise
            reason = str(exc).split(": ", 1)[1]
            _fail(name, f"starts with 'solid' like an ASCII STL but holds binary data: most likely a binary "
                        f"STL with a 'solid' header, truncated or padded: its header promises {count:,} "
                        f"triangles = {expected:,} bytes but the file has {size:,} bytes (read as ASCII: {reason})")
    other = _other_format(data, text)
    if other is not None:
        label, suffix = other
        _fail(name, f"not an STL file: it looks like {label}; rename it to .{suffix} "
                    f"(or load it with format='{suffix}')")
    if text:
        first = data.lstrip().split(b"\n", 1)[0][:_SHOWN * 2].decode("utf-8", "replace").strip()
        _fail(name, f"not an STL file: it is text, but an ASCII STL starts with 'solid' and this one starts "
                    f"with {first!r}")
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


_TEXT_SAMPLE = 1 << 16  # bytes looked at to tell text from binary


def _is_text(data):
    """Whether ``data`` reads as text: its first 64 KiB hold no control byte other than
    whitespace. Binary STL records are float32 coordinates and uint16 attributes, which are full
    of such bytes (any coordinate with a zero low byte, every small integer, every zero)."""
    sample = np.frombuffer(data, dtype=np.uint8, count=min(len(data), _TEXT_SAMPLE))
    control = ((sample < 32) & ~_SPACE[sample]) | (sample == 127)
    return not control.any()


_OBJ_KEYWORDS = (b"v", b"vn", b"vt", b"f", b"o", b"g", b"s", b"mtllib", b"usemtl", b"l")


def _other_format(data, text):
    """(what it looks like, suffix) when ``data`` is another mesh format renamed ``.stl``, else
    None. Recognised by first bytes only: a guess for the error message, never a reading."""
    head = data[:_TEXT_SAMPLE].lstrip()
    if head[:4] == b"glTF":
        return "a binary glTF (GLB) file (it starts with 'glTF')", "glb"
    if head[:4] == b"PK\x03\x04":
        return "a ZIP archive (3MF files are ZIP archives)", "3mf"
    if head[:3].lower() == b"ply" and head[3:4] in (b"\n", b"\r"):
        return "a PLY file (it starts with 'ply')", "ply"
    if not text:
        return None
    first = head.split(None, 1)[0] if head.split(None, 1) else b""
    if first.upper() in (b"OFF", b"COFF", b"NOFF", b"CNOFF", b"STOFF", b"4OFF", b"NOFF"):
        return f"an OFF file (it starts with {first.decode()!r})", "off"
    if head[:1] == b"{" and b'"asset"' in head:
        return "a glTF file (JSON with an 'asset')", "gltf"
    lines = [line.strip() for line in head.splitlines()[:50]]
    records = [line.split(None, 1)[0] for line in lines if line and not line.startswith(b"#")]
    if records and sum(record in _OBJ_KEYWORDS for record in records) >= max(1, len(records) // 2) \
            and (b"v" in records or b"f" in records):
        example = next(line for line in lines if line.split(None, 1)[:1] in ([b"v"], [b"f"]))
        return f"an OBJ file (it has lines like {example[:_SHOWN * 2].decode('utf-8', 'replace')!r})", "obj"
    return None


def _check_finite(triangles, name, where=None):
    finite = np.isfinite(triangles)
    if not finite.all():
        bad = int(np.argmin(finite.reshape(len(triangles), -1).all(axis=1)))
        coordinate = int(np.argmin(finite[bad].reshape(-1)))  # 0..8: vertex * 3 + axis
        value = triangles[bad].reshape(-1)[coordinate]
        if where is not None:  # ASCII: the line the number is on
            _fail(name, f"{where(bad, coordinate)}facet {bad} has a non-finite vertex coordinate ({value})")
        _fail(name, f"triangle {bad} has a non-finite vertex coordinate ({value})")


def _binary(data, count, name):
    records = np.frombuffer(data, dtype=_BINARY_DTYPE, count=count, offset=84)
    with np.errstate(invalid="ignore"):  # NaN bit patterns are reported below, not warned about
        triangles = records["vertices"].astype(np.float64)
    _check_finite(triangles, name)
    return triangles


# ASCII STL without a Python object per token: token boundaries come from one pass over the bytes
# (numpy), keywords are compared as byte blocks, and numbers are converted in bounded chunks, so
# memory stays a few times the file's size whatever the file holds (one 100,000-character token
# once made every token of a fixed-width array that wide: gigabytes for a 272 KB file).
_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\n\r\x0b\x0c")] = True  # bytes.split()'s whitespace
_NUMBER_WIDTH = 40  # widest number token converted in the vectorised table; longer ones one by one
_NUMBER_CHUNK = 1 << 16  # tokens per conversion chunk (bounded scratch: at most ~20 MB)
_SHOWN = 20  # characters of a bad token shown in a message


class _Tokens:
    """Start and end offsets of the whitespace-separated tokens of ``data``."""

    def __init__(self, data):
        self.data = data
        self.bytes = np.frombuffer(data, dtype=np.uint8)
        # int32 offsets below 2 GiB: 8 bytes per token instead of 16
        index = np.int32 if len(data) < 2**31 - 1 else np.int64
        space = _SPACE[self.bytes]
        edges = np.flatnonzero(np.diff(space.view(np.int8), prepend=np.int8(1), append=np.int8(1)))
        del space
        self.start = edges[0::2].astype(index)
        self.end = edges[1::2].astype(index)
        del edges
        self.count = len(self.start)

    def text(self, index, limit=_SHOWN):
        """Token ``index`` for a message: lower case, at most ``limit`` characters."""
        stop = min(int(self.end[index]), int(self.start[index]) + limit)
        return bytes(self.bytes[int(self.start[index]):stop]).lower().decode("utf-8", "replace")

    def line(self, index):
        """1-based line number of token ``index`` (error paths only: counts the newlines before it,
        in C, without a copy)."""
        return self.data.count(b"\n", 0, int(self.start[index])) + 1

    def where(self, index, facet):
        """'line L, facet k: ' for a message about token ``index``."""
        return f"line {self.line(index)}, facet {facet}: "

    def is_word(self, indices, word):
        """Bool mask: tokens ``indices`` equal ``word`` (lowercase letters), case-insensitively."""
        indices = np.asarray(indices)
        size = len(word)
        match = (self.end[indices] - self.start[indices]) == size
        candidates = indices[match]
        if len(candidates):
            equal = np.ones(len(candidates), dtype=bool)
            first = self.start[candidates]
            for j, letter in enumerate(word):  # one column at a time: scratch of one int per token
                equal &= (self.bytes[first + j] | 0x20) == letter
            match[match] = equal
        return match

    def where_word(self, word):
        """Indices of the tokens equal to ``word``, ascending (checked in bounded chunks)."""
        found = []
        for lo in range(0, self.count, _NUMBER_CHUNK):
            indices = np.arange(lo, min(lo + _NUMBER_CHUNK, self.count))
            found.append(indices[self.is_word(indices, word)])
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

    def numbers(self, indices, name, facet_of):
        """float64 values of tokens ``indices``; MeshFormatError naming the facet of a bad one."""
        out = np.empty(len(indices))
        for lo in range(0, len(indices), _NUMBER_CHUNK):
            chunk = indices[lo:lo + _NUMBER_CHUNK]
            lengths = (self.end[chunk] - self.start[chunk]).astype(np.int64)
            short = lengths <= _NUMBER_WIDTH
            values = np.empty(len(chunk))
            if short.any():
                rows = chunk[short]
                row_lengths = lengths[short]
                width = int(row_lengths.max())
                first = self.start[rows]
                table = np.zeros((len(rows), width), dtype=np.uint8)  # S dtype: trailing NULs end a string
                for j in range(width):  # one column at a time: scratch of one int per token
                    inside = row_lengths > j
                    table[inside, j] = self.bytes[first[inside] + j]
                try:
                    values[short] = table.view(f"S{width}").reshape(-1).astype(np.float64)
                except (ValueError, TypeError):
                    self._bad_number(rows, name, facet_of)
            for k in np.flatnonzero(~short):  # rare: a number token wider than _NUMBER_WIDTH
                token = bytes(self.bytes[int(self.start[chunk[k]]):int(self.end[chunk[k]])])
                try:
                    values[k] = float(token)
                except ValueError:
                    shown = token[:_SHOWN].lower().decode("utf-8", "replace")
                    _fail(name, f"malformed ASCII STL: {self.where(chunk[k], facet_of(chunk[k]))}a "
                                f"{len(token):,}-character token {shown!r}... where a number belongs")
            out[lo:lo + len(chunk)] = values
        return out

    def _bad_number(self, rows, name, facet_of):
        for row in rows:  # error path only: find the token float() refuses
            token = bytes(self.bytes[int(self.start[row]):int(self.end[row])])
            try:
                float(token)
            except ValueError:
                shown = token[:_SHOWN].lower().decode("utf-8", "replace")
                _fail(name, f"malformed ASCII STL: {self.where(row, facet_of(row))}{shown!r} where a number belongs")
        _fail(name, "malformed ASCII STL: a vertex coordinate is not a number")


def _ascii(data, name):
    if b"\x00" in data:
        _fail(name, "contains NUL bytes (not a text file)")
    tokens = _Tokens(data)
    total = tokens.count
    if total == 0 or not tokens.is_word([0], b"solid")[0]:
        _fail(name, "ASCII STL must start with 'solid'")
    solids = tokens.where_word(b"solid")
    endsolids = tokens.where_word(b"endsolid")
    facets = tokens.where_word(b"facet")
    bodies = []  # (first token, whole facets, tokens left over, 'endsolid' token) of each solid
    position = 0
    while position < total:
        if not tokens.is_word([position], b"solid")[0]:
            _fail(name, f"line {tokens.line(position)}: expected 'solid', got {tokens.text(position)!r}")
        k = np.searchsorted(endsolids, position + 1)
        if k == len(endsolids):
            _fail(name, f"no 'endsolid' after the 'solid' on line {tokens.line(position)} "
                        f"(the last token is on line {tokens.line(total - 1)}: truncated ASCII STL?)")
        end = int(endsolids[k])
        k = np.searchsorted(facets, position + 1)
        first = int(facets[k]) if k < len(facets) and facets[k] < end else end  # a solid without facets
        length = end - first
        bodies.append((first, length // _FACET_TOKENS, length % _FACET_TOKENS, end))
        # skip the optional name after endsolid, up to the next 'solid' or the end
        k = np.searchsorted(solids, end + 1)
        position = int(solids[k]) if k < len(solids) else total
    if not any(whole or left for _, whole, left, _ in bodies):
        _fail(name, "ASCII STL without facets (an empty mesh)")
    # every whole facet's first token, all solids together (facet numbers count across solids);
    # their keywords are checked first: a missing or extra token inside a facet shows there as a
    # keyword out of place, on the line where it happens
    starts = np.concatenate([first + _FACET_TOKENS * np.arange(whole, dtype=np.int64)
                             for first, whole, _, _ in bodies])
    for column, word in _KEYWORDS.items():
        wrong = ~tokens.is_word(starts + column, word)
        if wrong.any():
            facet = int(np.argmax(wrong))
            at = starts[facet] + column
            _fail(name, f"malformed ASCII STL: {tokens.where(at, facet)}{tokens.text(at)!r} "
                        f"where '{word.decode()}' belongs")
    counted = 0
    for first, whole, left, end in bodies:
        if left:  # the last facet before 'endsolid' is cut short or followed by extra tokens
            at = first + _FACET_TOKENS * whole
            _fail(name, f"malformed ASCII STL: {tokens.where(at, counted + whole)}{left} token{'' if left == 1 else 's'} before the "
                        f"'endsolid' on line {tokens.line(end)}, where a facet has {_FACET_TOKENS} (the "
                        f"{end - first} tokens from the first 'facet' to 'endsolid' are not a multiple of "
                        f"{_FACET_TOKENS}: a facet cut short or extra tokens)")
        counted += whole

    def facet_of(token):
        return int(np.searchsorted(starts, token, side="right") - 1)

    number_tokens = (starts[:, None] + _NUMBER_COLUMNS).reshape(-1)
    triangles = tokens.numbers(number_tokens, name, facet_of).reshape(-1, 3, 3)
    _check_finite(triangles, name, where=lambda facet, coordinate: f"line {tokens.line(starts[facet] + _NUMBER_COLUMNS[coordinate])}: ")
    return triangles


# --------------------------------------------------------------------------------------------
# loading into a TriangleMesh
class LoadedMesh(TriangleMesh):
    """A :class:`touche.TriangleMesh` read from a file by :func:`load`. ``path``: the file (str).
    ``source_faces (m,)`` int64, read-only: for each face of the mesh, its number in the file
    (0-based, in file order: an STL's facets; for other formats the triangles as trimesh reads
    them). Welding joins vertices and drops the faces that collapse, so face ``i`` of the mesh is
    facet ``source_faces[i]`` of the file; results that name mesh faces (clearance, ``touche
    check``) also give these file numbers."""

    __slots__ = ("path", "source_faces")

    def __init__(self, vertices, faces, path, source_faces):
        super().__init__(vertices, faces)
        source = np.array(source_faces, dtype=np.int64, copy=True).reshape(-1)
        if len(source) != len(self.triangles):
            raise GeometryError(f"source_faces has {len(source)} entries for {len(self.triangles)} faces")
        source.setflags(write=False)
        object.__setattr__(self, "path", str(path))
        object.__setattr__(self, "source_faces", source)

    def _describe(self):
        return f"{super()._describe()}, from {self.path!r}"


def source_faces(mesh):
    """The file's facet number of each face of ``mesh`` ((m,) int64): ``mesh.source_faces`` for
    a mesh read by :func:`load`, else None (the faces are numbered as given)."""
    return getattr(mesh, "source_faces", None)


def load(path, weld=True, tolerance=None, format=None):
    """Read a mesh file into a :class:`touche.TriangleMesh` (a ``LoadedMesh``: it also keeps
    ``path`` and ``source_faces``, each face's number in the file).

    ``path``: an STL file (binary or ASCII; read here) or, with trimesh installed, any format
    trimesh reads (OBJ, PLY, OFF, glTF/GLB, 3MF...). ``format`` overrides the file suffix
    (``"stl"``, ``"obj"``...). STL stores every triangle's corners separately: ``weld=True``
    (default) joins exactly equal vertices (bitwise, -0.0 == 0.0); ``tolerance=d`` joins vertices
    closer than ``d`` (Ericson 12.1, see :func:`touche.mesh.weld`); ``weld=False`` keeps the soup.
    Welding drops the faces that collapse (two corners joined): the mesh's face ``i`` is then
    facet ``source_faces[i]`` of the file.
    Raises MeshFormatError for unreadable files, for coordinates outside touche's range
    (|x| <= 1e75, or a part whose size is below 1e-75) and for a mesh without triangles (also
    when every facet is degenerate).
    """
    from .prepare import weld as weld_vertices

    path = Path(path)
    suffix = ("." + format.lower().lstrip(".")) if format else path.suffix.lower()
    # the same words for every format (a directory or a missing file is named as such, not as a
    # reader's failure on it)
    if path.is_dir():
        _fail(path, "is a directory, not a mesh file")
    if not path.exists():
        _fail(path, "no such file")
    if not suffix:
        _fail(path, "has no file suffix to tell its format: rename it (.stl, .obj, .ply, .off, .glb...) "
                    "or pass format='stl' (or 'obj', ...)")
    if suffix == ".stl":
        vertices = read_stl(path).reshape(-1, 3)  # (the soup is freed once welded)
        faces = np.arange(len(vertices), dtype=np.int64).reshape(-1, 3)
    else:
        vertices, faces = _read_with_trimesh(path, suffix)
    count = len(faces)
    face_ids = np.arange(count, dtype=np.int64)
    try:  # before welding: its tolerance is computed from the coordinates
        check_coordinates(vertices, "vertices")
    except GeometryError as exc:
        _fail(path, str(exc))
    if weld or tolerance is not None:
        try:
            vertices, faces, face_ids = weld_vertices(vertices, faces, tolerance=tolerance, return_face_ids=True)
        except GeometryError as exc:  # e.g. a tolerance float64 cannot resolve at these coordinates
            _fail(path, str(exc))
        if len(faces) == 0:
            _fail(path, f"all {count:,} facets are degenerate (each has two corners at the same point"
                        f"{'' if tolerance is None else f' within the tolerance {tolerance:g}'}): no triangle is left")
    try:
        return LoadedMesh(vertices, faces, path, face_ids)
    except GeometryError as exc:  # coordinates outside touche's range (|x| <= 1e75), a 1e-80 part
        _fail(path, str(exc))


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
