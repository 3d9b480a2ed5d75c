"""Results of every verb pickle and copy round-trip (issue 23, finding 13: a single-pair
``distance`` result pickled but did not unpickle, and copy.copy / deepcopy failed)."""
import copy
import importlib
import pickle

import numpy as np
import pytest

import touche as tc
from touche.cli import _uv_sphere

clearance = importlib.import_module("touche.clearance")

BOX = tc.Box([1.0, 1.0, 1.0])
SPHERE = tc.Sphere(0.5)
MESH = tc.TriangleMesh(*_uv_sphere(200))
FAR = tc.Pose.from_translation([3.0, 0.0, 0.0])
NEAR = tc.Pose.from_translation([1.2, 0.0, 0.0])
POSES = np.stack([np.eye(4)] * 3)
POSES[:, 0, 3] = [3.0, 1.2, 0.5]
TRI = np.eye(3)

VERBS = {
    "distance": lambda: tc.distance(BOX, None, SPHERE, FAR),
    "distance penetrating": lambda: tc.distance(BOX, None, SPHERE, NEAR),
    "distance batch": lambda: tc.distance(BOX, None, SPHERE, POSES),
    "distance mesh": lambda: tc.distance(MESH, None, SPHERE, FAR),
    "closest_point": lambda: tc.closest_point(BOX, None, [3.0, 0.0, 0.0]),
    "closest_point batch": lambda: tc.closest_point(MESH, None, [[3.0, 0.0, 0.0], [0.0, 0.0, 0.1]]),
    "contacts": lambda: tc.contacts(BOX, None, SPHERE, NEAR),
    "contacts batch": lambda: tc.contacts(BOX, None, SPHERE, POSES),
    "intersection": lambda: tc.intersection(BOX, None, BOX, NEAR),
    "raycast": lambda: tc.raycast(BOX, None, [3.0, 0.0, 0.0], [-1.0, 0.0, 0.0]),
    "raycast batch": lambda: tc.raycast(MESH, None, [[3.0, 0.0, 0.0], [3.0, 5.0, 0.0]], [[-1.0, 0.0, 0.0]] * 2),
    "time_of_impact": lambda: tc.time_of_impact(BOX, None, SPHERE, tc.Linear([-1.0, 0.0, 0.0], FAR), 5.0),
    "time_of_impact batch": lambda: tc.time_of_impact(BOX, None, SPHERE, tc.Linear([[-1.0, 0, 0], [0, 1.0, 0]], FAR), 5.0),
    "time_of_impact screw": lambda: tc.time_of_impact(BOX, None, SPHERE, tc.Screw([-1.0, 0, 0], [0, 0, 1.0], FAR), 5.0),
    "time_of_impact mesh": lambda: tc.time_of_impact(MESH, None, SPHERE, tc.Linear([-1.0, 0.0, 0.0], FAR), 5.0),
    "clearance": lambda: clearance.clearance(MESH, None, MESH, NEAR, curve=True),
    "clearance batch": lambda: clearance.clearance(MESH, None, MESH, POSES),
    "clearance_all": lambda: clearance.clearance_all([MESH, MESH], [np.eye(4), FAR]),
    "triangle_clearance": lambda: clearance.triangle_clearance(TRI, TRI + 2.0),
    "clearance part": lambda: clearance.prepare(MESH),
    "gjk": lambda: tc.convex.gjk(BOX, None, SPHERE, FAR),
    "gjk batch": lambda: tc.convex.gjk(BOX, None, SPHERE, POSES),
    "penetration": lambda: tc.convex.penetration(BOX, None, SPHERE, NEAR),
    "shape_cast": lambda: tc.convex.shape_cast(BOX, None, [0.0, 0.0, 0.0], SPHERE, FAR, [-1.0, 0.0, 0.0], 5.0),
    "obb time of impact": lambda: tc.pairwise.obb_obb_time_of_impact(
        [0, 0, 0], np.eye(3), [1, 1, 1], [3, 0, 0], np.eye(3), [1, 1, 1], [1, 0, 0], [0, 0, 0], 5.0),
    "triangle pair intersection": lambda: tc.pairwise.triangle_triangle_intersection(TRI, TRI * 0.9 + 0.01),
    "planar time of impact": lambda: tc.planar.time_of_impact([[0, 0], [1, 0], [0, 1]], [1, 0], [[3, 0], [4, 0], [3, 1]],
                                                               [0, 0], 5.0),
    "planar intersection": lambda: tc.planar.intersection([[0, 0], [1, 0], [0, 1]], [[0.2, 0], [4, 0], [3, 1]]),
    "linprog": lambda: tc.lp.linprog([1, 1], -np.eye(2), [0, 0]),
    "feasible_point": lambda: tc.lp.feasible_point(-np.eye(2), [0, 0]),
    "separating_vector": lambda: tc.lp.separating_vector(BOX, None, BOX, FAR),
    "fourier_motzkin": lambda: tc.lp.fourier_motzkin(-np.eye(2), [0, 0]),
    "mesh inspect": lambda: tc.mesh.inspect(MESH),
    "mesh euler": lambda: tc.mesh.euler(MESH),
}


def fields(value):
    """Every attribute a result exposes (slots, instance dict, properties), by name."""
    if isinstance(value, tuple):
        return {str(k): v for k, v in enumerate(value)}
    names = set(getattr(value, "__dict__", {}))
    for cls in type(value).__mro__:
        names.update(n for n in getattr(cls, "__slots__", ()) if not n.startswith("__"))
        names.update(n for n, v in vars(cls).items() if isinstance(v, property))
    out = {}
    for name in sorted(names):
        try:
            out[name] = getattr(value, name)
        except AttributeError:  # an unset optional slot
            out[name] = "<unset>"
    return out


def assert_same(x, y, where):
    if isinstance(x, tc.Shape):
        assert type(y) is type(x) and all(np.array_equal(p, q) for p, q in zip(x.packed()[1:], y.packed()[1:])), where
    elif isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, where
        assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), where
    elif isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        assert type(y) is type(x) and len(x) == len(y), where
        for k, (p, q) in enumerate(zip(x, y)):
            assert_same(p, q, f"{where}[{k}]")
    elif isinstance(x, float) and np.isnan(x):
        assert isinstance(y, float) and np.isnan(y), where
    elif hasattr(x, "__slots__") or (hasattr(x, "__dict__") and not isinstance(x, type)):
        assert type(y) is type(x), where
        fx, fy = fields(x), fields(y)
        assert fx.keys() == fy.keys(), where
        for name in fx:
            assert_same(fx[name], fy[name], f"{where}.{name}")
    else:
        assert type(y) is type(x) and x == y, where


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_result_round_trips(verb, how):
    result = VERBS[verb]()
    made = {"pickle": lambda r: pickle.loads(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)),
            "copy": copy.copy, "deepcopy": copy.deepcopy}[how](result)
    assert_same(result, made, verb)


def test_deep_copies_do_not_share_arrays():
    result = tc.distance(BOX, None, SPHERE, FAR)
    twin = copy.deepcopy(result)
    twin.point_a[0] = 1e9 if twin.point_a.flags.writeable else twin.point_a[0]
    assert result.point_a[0] != 1e9
    again = pickle.loads(pickle.dumps(result))
    assert again.distance == result.distance and again.status == result.status


@pytest.mark.parametrize("error", [tc.GeometryError("bad pose"), tc.MeshFormatError("a.stl: truncated"),
                                   tc.UnsupportedQuery("contacts", tc.Plane([0, 0, 1], 0.0), tc.Plane([0, 0, 1], 1.0))])
def test_errors_cross_process_boundaries(error):
    """touche's exceptions pickle with their class and message (dask and warmup workers send them
    back to the caller)."""
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)
    assert getattr(again, "verb", None) == getattr(error, "verb", None)
