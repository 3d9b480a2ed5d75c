"""The slow, obviously correct references the tests compare touche with, one module per area
(``naive.closest``, ``naive.pairs``, ``naive.bvh``, ...).

``import naive as N`` also gives every public function of naive.closest, naive.overlap,
naive.ray, naive.predicates and naive.pairs (tests/conftest.py puts the tests directory on
sys.path). Where two modules define the same name, the later import wins; the modules stay
reachable as ``N.closest`` etc.
"""
from . import closest, overlap, pairs, predicates, ray  # noqa: F401
from .closest import *  # noqa: F401,F403
from .overlap import *  # noqa: F401,F403
from .predicates import *  # noqa: F401,F403
from .ray import *  # noqa: F401,F403
from .pairs import *  # noqa: F401,F403
