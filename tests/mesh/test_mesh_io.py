"""touche.mesh I/O: STL round trips, strict validation, hypothesis fuzzing of the reader,
trimesh formats."""
import os
import struct
import tempfile
import warnings
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import touche as tc
from touche import mesh as tm
from touche.errors import MeshFormatError

from naive.mesh import cube


def _sphere(subdivisions=2):
    trimesh = pytest.importorskip("trimesh")
    s = trimesh.creation.icosphere(subdivisions=subdivisions)
    return np.asarray(s.vertices), np.asarray(s.faces)


def _binary_bytes(triangles, count=None, header=b"x" * 80):
    records = np.zeros(len(triangles), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    records["v"] = triangles
    return header[:80].ljust(80) + struct.pack("<I", len(triangles) if count is None else count) + records.tobytes()


@pytest.mark.parametrize("ascii_stl", [False, True])
def test_stl_round_trip(tmp_path, ascii_stl):
    v, f = _sphere()
    rng = np.random.default_rng(3)
    v = v * 1e3 + rng.normal(size=3)  # non-trivial coordinates
    path = tmp_path / "part.stl"
    tm.save((v, f), path, ascii=ascii_stl)
    loaded = tm.load(path)
    assert isinstance(loaded, tc.TriangleMesh)
    assert loaded.faces.shape == f.shape
    assert loaded.vertices.shape == v.shape  # exact welding restores the shared vertices
    soup = tm.read_stl(path)
    expected = v[f] if ascii_stl else v[f].astype(np.float32).astype(np.float64)
    if ascii_stl:
        np.testing.assert_array_equal(soup, expected)  # 17 digits: exact float64 round trip
    else:
        np.testing.assert_array_equal(soup, expected)  # float32 storage, exact float32 values
    # the welded mesh is the same surface
    np.testing.assert_array_equal(loaded.vertices[loaded.faces], soup)
    no_weld = tm.load(path, weld=False)
    assert len(no_weld.vertices) == 3 * len(f)


def test_binary_with_solid_header_is_binary(tmp_path):
    v, f = cube()
    data = _binary_bytes(v[f], header=b"solid exported by a CAD tool".ljust(80))
    path = tmp_path / "solid_header.stl"
    path.write_bytes(data)
    np.testing.assert_array_equal(tm.read_stl(path), v[f])


def test_ascii_multiple_solids_and_case(tmp_path):
    text = (
        "SOLID one\n facet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0 0\n vertex 0 1 0\n"
        " endloop\n endfacet\nENDSOLID one\n"
        "solid two\nfacet normal 0 0 0 outer loop vertex 0 0 1 vertex 1 0 1 vertex 0 1 1 endloop endfacet\n"
        "endsolid\n"
    )
    path = tmp_path / "two.stl"
    path.write_text(text)
    soup = tm.read_stl(path)
    assert soup.shape == (2, 3, 3)
    assert soup[1, 2].tolist() == [0, 1, 1]


def test_obj_round_trip_and_trimesh_input(tmp_path):
    pytest.importorskip("trimesh")
    v, f = _sphere(1)
    path = tm.save((v, f), tmp_path / "part.obj")
    loaded = tm.load(path)
    np.testing.assert_allclose(loaded.vertices, v)
    np.testing.assert_array_equal(loaded.faces, f)
    import trimesh

    mesh = tm.as_mesh(trimesh.Trimesh(v, f, process=False))
    np.testing.assert_array_equal(mesh.faces, f)
    # PLY, OFF and glTF (binary) through trimesh
    for suffix in ("ply", "off", "glb"):
        trimesh.Trimesh(v, f, process=False).export(tmp_path / f"part.{suffix}")
        loaded = tm.load(tmp_path / f"part.{suffix}")
        assert loaded.faces.shape == f.shape, suffix
        assert tm.signed_volume(loaded) == pytest.approx(tm.signed_volume(v, f), rel=1e-6), suffix
    (tmp_path / "broken.obj").write_text("v 0 0 0\nv 1 0 0\nf 1 2 3\n")
    with pytest.raises(MeshFormatError, match="broken.obj"):
        tm.load(tmp_path / "broken.obj")


# ---------------------------------------------------------------------------- strict validation
def _error(tmp_path, data, name="bad.stl"):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(MeshFormatError) as info:
        tm.load(path)
    message = str(info.value)
    assert str(path) in message  # names the file
    assert "\n" not in message
    return message


def test_error_truncated_binary(tmp_path):
    v, f = cube()
    data = _binary_bytes(v[f])
    message = _error(tmp_path, data[:-7])
    assert "truncated" in message and "12 triangles" in message
    assert f"{84 + 50 * 12:,}" in message and f"{84 + 50 * 12 - 7:,}" in message


def test_error_count_disagrees_with_size(tmp_path):
    v, f = cube()
    message = _error(tmp_path, _binary_bytes(v[f], count=10))
    assert "10 triangles" in message and "extra" in message
    message = _error(tmp_path, _binary_bytes(v[f], count=1_000_000))
    assert "truncated" in message and "1,000,000 triangles" in message


def test_error_nan_and_inf(tmp_path):
    v, f = cube()
    tris = v[f].copy()
    tris[5, 1, 2] = np.nan
    assert "triangle 5" in _error(tmp_path, _binary_bytes(tris)) and "nan" in _error(tmp_path, _binary_bytes(tris))
    tris[5, 1, 2] = np.inf
    assert "non-finite" in _error(tmp_path, _binary_bytes(tris))
    text = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 inf\nvertex 0 1 0\nendloop\nendfacet\nendsolid\n"
    assert "non-finite" in _error(tmp_path, text.encode())


def test_error_ascii_header_on_truncated_binary(tmp_path):
    v, f = cube()
    data = _binary_bytes(v[f], header=b"solid binary really".ljust(80))[:-50]
    message = _error(tmp_path, data)
    assert "starts with 'solid'" in message and "binary" in message
    assert f"{84 + 50 * 12:,}" in message


def test_error_small_and_empty(tmp_path):
    assert "empty" in _error(tmp_path, b"")
    assert "at least 84" in _error(tmp_path, b"\x00bc")  # binary bytes, too few for the header
    assert "not an STL file: it is text" in _error(tmp_path, b"abc")  # text is not read as binary
    assert "0 triangles" in _error(tmp_path, b"h" * 80 + struct.pack("<I", 0))
    assert "without facets" in _error(tmp_path, b"solid empty\nendsolid empty\n")


def test_error_ascii_structure(tmp_path):
    good = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid\n"
    assert "endsolid" in _error(tmp_path, good.replace("endsolid\n", "").encode())
    assert "vertex" in _error(tmp_path, good.replace("vertex 1 0 0", "vertx 1 0 0").encode())
    assert "number" in _error(tmp_path, good.replace("vertex 1 0 0", "vertex 1 zero 0").encode())
    assert "multiple of 21" in _error(tmp_path, good.replace("vertex 0 1 0\n", "").encode())


def test_error_missing_file_and_unknown_writer(tmp_path):
    with pytest.raises(MeshFormatError, match="no such file"):
        tm.load(tmp_path / "missing.stl")
    with pytest.raises(MeshFormatError, match="cannot write"):
        tm.save(cube(), tmp_path / "x.vtk")


# ---------------------------------------------------------------------------- fuzzing
# a 5 s deadline per example turns a hang (or a quadratic blow-up) into a failure
FUZZ = settings(max_examples=400, derandomize=True, deadline=timedelta(seconds=5),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_GOOD_BINARY = _binary_bytes(cube()[0][cube()[1]])
_GOOD_ASCII = ("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
               "endloop\nendfacet\nendsolid x\n").encode()


def _parse_only_mesh_errors(data, through_file=False):
    """parse_stl (and, with through_file, tm.load of the bytes written to a file: read, weld,
    TriangleMesh) either returns finite triangles or raises MeshFormatError naming the file.
    Warnings are errors here: a RuntimeWarning would mean unchecked arithmetic on bad input."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            triangles = tm.parse_stl(data, "fuzz.stl")
        except MeshFormatError as exc:
            assert str(exc).startswith("fuzz.stl: ")
        else:
            assert triangles.ndim == 3 and triangles.shape[1:] == (3, 3) and len(triangles) > 0
            assert np.isfinite(triangles).all()
        if not through_file:
            return
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "fuzz.stl")
            with open(path, "wb") as handle:
                handle.write(data)
            try:
                mesh = tm.load(path)
            except MeshFormatError as exc:
                assert str(exc).startswith(path)
            else:
                assert len(mesh.faces) > 0 and np.isfinite(mesh.vertices).all()


@FUZZ
@given(st.binary(max_size=400))
def test_fuzz_random_bytes(data):
    _parse_only_mesh_errors(data, through_file=True)
    _parse_only_mesh_errors(b"solid " + data)
    _parse_only_mesh_errors(_GOOD_BINARY[:84] + data)  # a binary header before random records


_TOKENS = st.sampled_from([b"solid", b"endsolid", b"facet", b"normal", b"outer", b"loop", b"vertex", b"endloop",
                           b"endfacet", b"1", b"-0", b"1e308", b"1e999", b"nan", b"inf", b"-inf", b"0x10", b"1_0",
                           b"\xff", b"", b"\x00", b"1e-320", b"+.5", b"5."])


@FUZZ
@given(st.data())
def test_fuzz_ascii_tokens(data):
    """Grammar-aware: the tokens of a good ASCII file replaced, deleted or inserted (keywords,
    numbers out of range, NaN / inf spellings, bytes that are not text)."""
    tokens = _GOOD_ASCII.split()
    for _ in range(data.draw(st.integers(1, 5))):
        position = data.draw(st.integers(0, len(tokens) - 1))
        operation = data.draw(st.integers(0, 2))
        if operation == 0:
            tokens[position] = data.draw(_TOKENS)
        elif operation == 1:
            del tokens[position]
        else:
            tokens.insert(position, data.draw(_TOKENS))
    separator = data.draw(st.sampled_from([b" ", b"\n", b"\t", b"\r\n"]))
    _parse_only_mesh_errors(separator.join(tokens), through_file=True)
    _parse_only_mesh_errors(b"solid a\n" + b" ".join(data.draw(st.lists(_TOKENS, max_size=40))))


@FUZZ
@given(st.sampled_from([_GOOD_BINARY, _GOOD_ASCII]), st.integers(0, 700))
def test_fuzz_truncation(data, cut):
    _parse_only_mesh_errors(data[:cut])


@FUZZ
@given(st.binary(min_size=0, max_size=80), st.integers(0, 2 ** 32 - 1), st.integers(-60, 60))
def test_fuzz_mutated_header_and_count(header, count, size_change):
    body = _GOOD_BINARY[84:]
    if size_change < 0:
        body = body[:size_change]
    else:
        body = body + b"\x00" * size_change
    _parse_only_mesh_errors(header.ljust(80, b" ") + struct.pack("<I", count) + body, through_file=True)


@FUZZ
@given(st.data())
def test_fuzz_mutated_bytes(data):
    source = bytearray(data.draw(st.sampled_from([_GOOD_BINARY, _GOOD_ASCII])))
    for _ in range(data.draw(st.integers(1, 8))):
        position = data.draw(st.integers(0, len(source) - 1))
        source[position] = data.draw(st.integers(0, 255))
    _parse_only_mesh_errors(bytes(source), through_file=True)


# --------------------------------------------------------------------------------------------
# issue 23, finding 12: face ids refer to the file's facets through welding
def _stl_with_collapsed_facets(path):
    """An octahedron's 8 facets with 3 collapsed facets slipped in before some of them
    (file facets 0, 3 and 6): welding drops those, so mesh faces and file facets differ."""
    v = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
    faces = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]]
    soup = [v[f] for f in faces]
    for position in (0, 3, 6):
        soup.insert(position, np.array([[5, 5, 5], [5, 5, 5], [6, 5, 5]], dtype=float))
    triangles = np.array(soup)
    tm.save((triangles.reshape(-1, 3), np.arange(3 * len(triangles)).reshape(-1, 3)), path)
    return triangles


def test_load_keeps_each_faces_file_facet(tmp_path):
    path = tmp_path / "holes.stl"
    triangles = _stl_with_collapsed_facets(path)
    mesh = tm.load(path)
    assert isinstance(mesh, tm.LoadedMesh) and isinstance(mesh, tc.TriangleMesh) and mesh.path == str(path)
    np.testing.assert_array_equal(mesh.source_faces, [1, 2, 4, 5, 7, 8, 9, 10])
    # face i of the mesh is exactly the file's facet source_faces[i]
    np.testing.assert_array_equal(mesh.vertices[mesh.faces], triangles[mesh.source_faces])
    assert not mesh.source_faces.flags.writeable
    import pickle

    again = pickle.loads(pickle.dumps(mesh))
    assert type(again) is tm.LoadedMesh and again.path == mesh.path
    np.testing.assert_array_equal(again.source_faces, mesh.source_faces)
    assert tc.distance(again, None, tc.Sphere(0.1), tc.Pose.from_translation([3.0, 0, 0])).distance > 0
    soup = tm.load(path, weld=False)  # nothing dropped: the numbering is the file's
    np.testing.assert_array_equal(soup.source_faces, np.arange(11))
    _, _, face_ids = tm.weld(triangles.reshape(-1, 3), np.arange(33).reshape(-1, 3), return_face_ids=True)
    np.testing.assert_array_equal(face_ids, mesh.source_faces)


def test_clearance_names_file_facets(tmp_path):
    path = tmp_path / "holes.stl"
    triangles = _stl_with_collapsed_facets(path)
    a = tm.load(path)
    probe = tc.TriangleMesh([[0.6, 0.6, 0.6], [0.7, 0.6, 0.6], [0.6, 0.7, 0.6]], [[0, 1, 2]])
    result = tc.clearance(a, None, probe, None)
    # the nearest facet of the octahedron to (0.6, 0.6, 0.6) is its (+, +, +) face: file facet 1
    assert result.triangle_a == 0 and result.facet_a == 1 and result.facet_b == result.triangle_b == 0
    np.testing.assert_allclose(np.sort(triangles[result.facet_a], axis=0),
                               np.sort(a.vertices[a.faces[result.triangle_a]], axis=0))
    poses = np.stack([np.eye(4)] * 2)
    batch = tc.clearance(a, None, probe, poses)
    np.testing.assert_array_equal(batch.facet_a, [1, 1])
    crossing = tc.TriangleMesh([[0.2, 0.2, -1.0], [0.3, 0.2, 2.0], [0.2, 0.3, 2.0]], [[0, 1, 2]])
    curve = tc.clearance(a, None, crossing, None, curve=True)
    np.testing.assert_array_equal(curve.facet_pairs[:, 0], a.source_faces[curve.pairs[:, 0]])
    table = tc.clearance_all([probe, a], [np.eye(4), np.eye(4)])
    assert table.facet_b[0] == 1 and table.triangle_b[0] == 0 and table.facet_a[0] == 0


def test_check_command_prints_file_facets(tmp_path):
    import json

    from click.testing import CliRunner

    from touche.cli import cli

    path = tmp_path / "holes.stl"
    _stl_with_collapsed_facets(path)
    probe = tmp_path / "probe.stl"
    tm.save(([[0.6, 0.6, 0.6], [0.7, 0.6, 0.6], [0.6, 0.7, 0.6]], [[0, 1, 2]]), probe)
    result = CliRunner().invoke(cli, ["check", str(path), str(probe), "--json"], catch_exceptions=False)
    summary = json.loads(result.output[result.output.index("{"):])
    assert summary["facet_a"] == 1 and summary["triangle_a"] == 0
    text = CliRunner().invoke(cli, ["check", str(path), str(probe)], catch_exceptions=False).output
    assert "(file facet 1)" in text


# --------------------------------------------------------------------------------------------
# issue 23, finding 16: clear errors
def test_stl_of_only_degenerate_facets_is_a_format_error_naming_the_file(tmp_path):
    path = tmp_path / "flat.stl"
    tri = np.array([[[0, 0, 0], [1, 0, 0], [1, 0, 0]], [[2, 2, 2], [2, 2, 2], [2, 2, 2]]], dtype=float)
    tm.save((tri.reshape(-1, 3), np.arange(6).reshape(2, 3)), path)
    with pytest.raises(MeshFormatError, match=r"flat\.stl.*all 2 facets are degenerate"):
        tm.load(path)
    assert len(tm.load(path, weld=False).faces) == 2  # unwelded: kept as given


def test_inspect_a_collapsed_triangle_reports_it():
    report = tm.inspect(np.ones((3, 3)), [[0, 1, 2]])  # all three corners at (1, 1, 1)
    assert report.degenerate_faces == 1
    far = tm.inspect(np.array([[1e6, 0, 0], [1e6 + 1e-12, 0, 0], [1e6, 1e-12, 0]]), [[0, 1, 2]])
    assert far.tolerance > 0
