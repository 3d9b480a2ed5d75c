"""The k-DOP directions (Ericson 4.6) that touche.bounding and touche.bvh share: face normals of
the cube (3), its corner diagonals (4) and its edge diagonals (6); unnormalised integer vectors
as in the book, read-only."""
import numpy as np

_AXES = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
_CORNERS = [(1, 1, 1), (1, 1, -1), (1, -1, 1), (-1, 1, 1)]
_EDGES = [(1, 1, 0), (1, -1, 0), (1, 0, 1), (1, 0, -1), (0, 1, 1), (0, 1, -1)]
KDOP_DIRECTIONS = {
    6: np.array(_AXES, dtype=np.float64),
    8: np.array(_CORNERS, dtype=np.float64),
    14: np.array(_AXES + _CORNERS, dtype=np.float64),
    18: np.array(_AXES + _EDGES, dtype=np.float64),
    26: np.array(_AXES + _CORNERS + _EDGES, dtype=np.float64),
}
for _d in KDOP_DIRECTIONS.values():
    _d.setflags(write=False)
