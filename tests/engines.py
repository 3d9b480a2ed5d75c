"""The pair engine as the public verbs call it, for tests that compare a kernel with it: the
family that touche._kernels.narrow.pairs.engine_address picks for the pair (compiled by the session's
warmup; calling the all-pairs pair_distance / pair_intersects from Python would compile the
whole engine once more)."""
from touche._kernels import pairs


def engine_answer(x, pose_x, y, pose_y, intersects_only, tolerance=0.0):
    """(signed, point_a, point_b, normal, status) of pair_distance, or with ``intersects_only``
    pair_intersects as (0.0 when they overlap, else inf, ...)."""
    address = pairs.engine_address(x.kind, x._packed[1], y.kind, y._packed[1], intersects_only)
    family = next(f for f in pairs.ENGINE_FAMILIES if f.address() == address)
    return family.dispatcher(intersects_only, *x._packed, pose_x, *y._packed, pose_y, tolerance)
