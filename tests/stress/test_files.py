"""Mesh files: memory bounded by a small multiple of the file's size for every input, and
MeshFormatError for everything malformed (issue 23, finding 9: a 272 KB ASCII STL with one
100,000-character token peaked at 5.9 GB and ended in MemoryError).

Peaks are measured with tracemalloc (numpy's allocations and Python objects; the file's own
bytes, read before, are not counted). benchmarks/bench_file_memory.py prints process RSS figures
for whole loads."""
import tracemalloc

import numpy as np
import pytest

import touche as tc
from touche.errors import MeshFormatError
from touche.mesh import io

LIMIT_FACTOR = 10  # peak <= 10 x the file's size + a small constant
SLACK_BYTES = 1 << 20


def ascii_stl(count, seed=0, digits="%.17g"):
    rng = np.random.default_rng(seed)
    coordinates = rng.uniform(-1.0, 1.0, size=(count, 9))
    facet = ("facet normal 0 0 1\n outer loop\n" + f"  vertex {digits} {digits} {digits}\n" * 3
             + " endloop\nendfacet\n")
    return ("solid test\n" + facet * count % tuple(coordinates.ravel()) + "endsolid test\n").encode(), coordinates


def peak_of(call):
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        outcome = call()
    except MeshFormatError as error:
        outcome = error
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return outcome, peak


def assert_bounded(data, peak):
    print(f"{len(data):,} bytes: peak {peak:,} bytes ({peak / len(data):.1f}x)")
    assert peak <= LIMIT_FACTOR * len(data) + SLACK_BYTES


def with_first_token(data, coordinates, token):
    first = b"%.17g" % coordinates[0, 0]
    return data.replace(b"vertex " + first, b"vertex " + token, 1)


def test_one_100k_character_number_parses_in_bounded_memory():
    data, coordinates = ascii_stl(700)  # ~272 KB, as in the issue
    long_number = b"0" * 100_000 + b"%.17g" % coordinates[0, 0]
    hostile = with_first_token(data, coordinates, long_number)
    triangles, peak = peak_of(lambda: io.parse_stl(hostile, "long.stl"))
    assert_bounded(hostile, peak)
    np.testing.assert_array_equal(triangles, io.parse_stl(data, "plain.stl"))


def test_one_100k_character_garbage_token_is_a_format_error_in_bounded_memory():
    data, coordinates = ascii_stl(700)
    hostile = with_first_token(data, coordinates, b"x" * 100_000)
    error, peak = peak_of(lambda: io.parse_stl(hostile, "garbage.stl"))
    assert_bounded(hostile, peak)
    assert isinstance(error, MeshFormatError) and "where a number belongs" in str(error) and "garbage.stl" in str(error)


@pytest.mark.parametrize("where", ["keyword", "solid name", "after endsolid"])
def test_long_tokens_elsewhere_are_bounded_too(where):
    data, coordinates = ascii_stl(500)
    long = b"q" * 200_000
    hostile = {"keyword": data.replace(b"endloop", long, 1),
               "solid name": data.replace(b"solid test", b"solid " + long, 1),
               "after endsolid": data + long + b"\n"}[where]
    outcome, peak = peak_of(lambda: io.parse_stl(hostile, "f.stl"))
    assert_bounded(hostile, peak)
    if where == "keyword":
        assert isinstance(outcome, MeshFormatError) and "'endloop' belongs" in str(outcome)
    else:  # names are free text
        np.testing.assert_array_equal(outcome, io.parse_stl(data, "plain.stl"))


def test_every_number_long_parses_right_in_bounded_memory():
    data, coordinates = ascii_stl(2000, digits="%.60f")  # 60+ characters each: the one-by-one path
    triangles, peak = peak_of(lambda: io.parse_stl(data, "wide.stl"))
    assert_bounded(data, peak)
    np.testing.assert_allclose(triangles.reshape(-1, 9), coordinates, rtol=0, atol=1e-15)


@pytest.mark.parametrize("count", [1, 1_000, 20_000])
def test_valid_ascii_costs_a_few_times_its_size(count):
    data, coordinates = ascii_stl(count)
    triangles, peak = peak_of(lambda: io.parse_stl(data, "valid.stl"))
    assert_bounded(data, peak)
    np.testing.assert_array_equal(triangles.reshape(-1, 9), coordinates)  # %.17g round-trips exactly
    if count >= 1000:
        assert peak <= 5 * len(data)  # measured ~3.3x (the old parser: ~7.4x)


def test_valid_binary_costs_a_few_times_its_size():
    rng = np.random.default_rng(1)
    records = np.zeros(40_000, dtype=io._BINARY_DTYPE)
    records["vertices"] = rng.uniform(-1, 1, size=(40_000, 3, 3))
    data = b"x" * 80 + np.uint32(40_000).tobytes() + records.tobytes()
    triangles, peak = peak_of(lambda: io.parse_stl(data, "valid.stl"))
    assert_bounded(data, peak)
    assert peak <= 2 * len(data)
    np.testing.assert_array_equal(triangles, records["vertices"].astype(np.float64))


@pytest.mark.parametrize("claimed", [1, 2**31, 2**32 - 1])
def test_huge_binary_counts_are_format_errors_without_allocating(claimed):
    data = b"y" * 80 + np.uint32(claimed).tobytes() + b"\0" * 500
    error, peak = peak_of(lambda: io.parse_stl(data, "count.stl"))
    assert isinstance(error, MeshFormatError) and "count.stl" in str(error)
    assert peak <= SLACK_BYTES


# --------------------------------------------------------------------------------------------
# fuzzing: everything malformed is a MeshFormatError, never another exception
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
BASE, _ = ascii_stl(3, seed=7)
WORDS = [b"solid", b"endsolid", b"facet", b"normal", b"outer", b"loop", b"vertex", b"endloop", b"endfacet",
         b"nan", b"inf", b"-0", b"1e999", b"1e-999", b"0x1p3", b"1_0", b"\xff", b"\x00", b"1" * 5000, b"9" * 400]


def check_parse(data):
    try:
        triangles = io.parse_stl(data, "fuzz.stl")
    except MeshFormatError as error:
        assert "fuzz.stl" in str(error)
        return
    assert triangles.ndim == 3 and triangles.shape[1:] == (3, 3) and len(triangles) > 0
    assert np.isfinite(triangles).all()


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.sampled_from(WORDS)), max_size=6))
def test_fuzz_edited_ascii_stl(edits):
    tokens = BASE.split()
    for position, action, word in edits:
        k = position % (len(tokens) + 1)
        if action == 0:
            tokens.insert(k, word)
        elif action == 1 and tokens:
            tokens[k % len(tokens)] = word
        elif action == 2 and tokens:
            del tokens[k % len(tokens)]
        else:
            tokens = tokens[:k]
    check_parse(b"\n".join(tokens))


@FUZZ
@given(st.binary(max_size=600), st.booleans())
def test_fuzz_raw_bytes(data, solid_prefix):
    check_parse((b"solid " if solid_prefix else b"") + data)


trimesh = pytest.importorskip("trimesh")


@FUZZ
@given(st.lists(st.one_of(
    st.tuples(st.just("v"), st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=5)),
    st.tuples(st.just("f"), st.lists(st.integers(-2**40, 2**40), min_size=0, max_size=6)),
    st.tuples(st.sampled_from(["g", "o", "usemtl", "mtllib", "s", "vn", "vt", "#", "l", "p", "x" * 3000]),
              st.lists(st.integers(-5, 5), max_size=3)),
), max_size=30))
def test_fuzz_odd_obj_files(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("obj") / "odd.obj"
    path.write_text("\n".join(f"{kind} {' '.join(map(str, values))}" for kind, values in lines) + "\n")
    try:
        mesh = tc.mesh.load(path)
    except MeshFormatError as error:
        assert "odd.obj" in str(error)
        return
    assert isinstance(mesh, tc.TriangleMesh) and len(mesh.faces) > 0 and np.isfinite(mesh.vertices).all()
