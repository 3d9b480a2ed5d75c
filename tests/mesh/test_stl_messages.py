"""STL error messages a user can act on (issue 22): ASCII errors give the line and the facet;
a text file is never described by a second, binary reading ("its header promises 538,970,672
triangles" is four characters read as a number); another format renamed .stl is named."""
import numpy as np
import pytest

from touche import mesh as tm
from touche.errors import MeshFormatError
from touche.mesh import io


def _facet(z):
    return (b"facet normal 0 0 1\n outer loop\n  vertex 0 0 %d\n  vertex 1 0 0\n  vertex 0 1 0\n"
            b" endloop\nendfacet\n" % z)


# line 1 'solid'; facet k spans lines 2 + 7k .. 8 + 7k (its first vertex on line 4 + 7k)
GOOD = b"solid t\n" + b"".join(_facet(k) for k in range(5)) + b"endsolid t\n"


def _error(data, name="part.stl"):
    with pytest.raises(MeshFormatError) as caught:
        io.parse_stl(data, name)
    message = str(caught.value)
    assert message.startswith(f"{name}: ")
    return message


def test_good_file_parses():
    assert io.parse_stl(GOOD).shape == (5, 3, 3)


@pytest.mark.parametrize("broken, expected", [
    (GOOD.replace(b"vertex 0 0 3", b"vertex 0 0 x3"), "line 25, facet 3: 'x3' where a number belongs"),
    (GOOD.replace(b"vertex 0 0 2\n  vertex", b"vertex 0 0 2\n  vortex"), "line 19, facet 2: 'vortex' where 'vertex' belongs"),
    # an extra token shifts the next facet: reported where the shift shows, on its line
    (GOOD.replace(b"endfacet\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 4", b"endfacet junk\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 4"),
     "line 29, facet 4: 'junk' where 'facet' belongs"),
    (GOOD.replace(b"  vertex 0 0 4\n", b""), "line 30, facet 4: 17 tokens before the 'endsolid' on line 36"),
    (GOOD.replace(b"endfacet\nendsolid", b"endfacet junk\nendsolid"), "line 36, facet 5: 1 token before the 'endsolid' on line 37"),
    (GOOD.replace(b"vertex 0 0 3\n  vertex 1 0 0", b"vertex 0 0 3\n  vertex 1 inf 0"), "line 26: facet 3 has a non-finite vertex coordinate (inf)"),
    (GOOD.replace(b"endsolid t\n", b""), "no 'endsolid' after the 'solid' on line 1 (the last token is on line 36"),
])
def test_ascii_errors_name_the_line_and_facet(broken, expected):
    message = _error(broken)
    assert expected in message
    # a text file gets one reading: no binary triangle count made of four characters
    assert "promises" not in message and "binary" not in message


def test_line_numbers_count_crlf_files_and_multiple_solids():
    crlf = GOOD.replace(b"\n", b"\r\n").replace(b"vertex 0 0 3", b"vertex 0 0 ?")
    assert "line 25, facet 3: '?' where a number belongs" in _error(crlf)
    two = GOOD + b"solid second\n" + _facet(7).replace(b"outer", b"inner") + b"endsolid second\n"
    # facets count across solids: the second solid's first facet is facet 5, its 'outer' on line 40 (GOOD has 37 lines)
    assert "line 40, facet 5: 'inner' where 'outer' belongs" in _error(two)


def test_binary_with_solid_header_keeps_both_readings():
    records = np.zeros(3, dtype=io._BINARY_DTYPE)
    records["vertices"] = np.arange(27, dtype=np.float32).reshape(3, 3, 3)
    data = b"solid exported".ljust(80) + np.uint32(3).tobytes() + records.tobytes()
    assert io.parse_stl(data).shape == (3, 3, 3)
    message = _error(data[:-7])  # truncated: holds binary bytes, so the binary reading is the useful one
    assert "holds binary data" in message and f"promises 3 triangles = {84 + 150:,} bytes" in message
    assert "read as ASCII" in message


OBJ = b"# exported\no cube\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"


@pytest.mark.parametrize("data, looks_like, suffix", [
    (OBJ, "an OBJ file", "obj"),
    (OBJ * 20, "an OBJ file", "obj"),  # longer than a binary header: not "a truncated binary STL"
    (b"ply\nformat ascii 1.0\nelement vertex 3\n" + b"property float x\n" * 10, "a PLY file", "ply"),
    (b"ply\r\nformat binary_little_endian 1.0\r\nend_header\r\n" + b"\x00\x01" * 60, "a PLY file", "ply"),
    (b"OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 1 2\n3 0 1 3\n3 0 2 3\n3 1 2 3\n" * 3, "an OFF file", "off"),
    (b"glTF\x02\x00\x00\x00" + b"\x00" * 120, "a binary glTF (GLB) file", "glb"),
    (b'{"asset": {"version": "2.0"}, "meshes": []}' + b" " * 60, "a glTF file", "gltf"),
    (b"PK\x03\x04" + b"\x00" * 120, "a ZIP archive", "3mf"),
])
def test_other_formats_renamed_stl_are_named(data, looks_like, suffix):
    message = _error(data, "renamed.stl")
    assert f"not an STL file: it looks like {looks_like}" in message
    assert f"rename it to .{suffix}" in message and "truncated" not in message and "triangles" not in message


def test_other_text_is_not_an_stl_and_not_a_binary_one():
    message = _error(b"this is a note about the part, not the part itself\n" * 4)
    assert "not an STL file: it is text" in message and "'this is a note about the part" in message
    assert "triangles" not in message


def test_an_obj_named_stl_through_load_and_the_real_obj_loads(tmp_path):
    renamed = tmp_path / "duck.stl"
    renamed.write_bytes(OBJ)
    with pytest.raises(MeshFormatError, match=r"duck\.stl: not an STL file: it looks like an OBJ file"):
        tm.load(renamed)
    pytest.importorskip("trimesh")
    assert len(tm.load(renamed, format="obj").faces) == 4  # the message's advice works


def test_load_names_directories_missing_files_and_missing_suffixes_alike(tmp_path):
    (tmp_path / "folder.obj").mkdir()
    for path, words in ((tmp_path, "is a directory"), (tmp_path / "folder.obj", "is a directory"),
                        (tmp_path / "missing.obj", "no such file"), (tmp_path / "missing.stl", "no such file")):
        with pytest.raises(MeshFormatError, match=words):
            tm.load(path)
    bare = tmp_path / "part"
    bare.write_bytes(GOOD)
    with pytest.raises(MeshFormatError, match="no file suffix"):
        tm.load(bare)
    assert len(tm.load(bare, format="stl").faces) == 5
