"""Single entry point for the slow reference implementations used by the tests.

``import naive as N`` gives every public function of naive_closest, naive_overlap, naive_ray,
naive_predicates and naive_pairs (the tests directory is on sys.path under pytest's default
"prepend" import mode, as the other test modules rely on). Where two modules define the same
name, the later import wins; the modules themselves stay importable as ``N.closest`` etc.
"""
import naive_closest as closest
import naive_overlap as overlap
import naive_pairs as pairs
import naive_predicates as predicates
import naive_ray as ray
from naive_closest import *  # noqa: F401,F403
from naive_overlap import *  # noqa: F401,F403
from naive_predicates import *  # noqa: F401,F403
from naive_ray import *  # noqa: F401,F403
from naive_pairs import *  # noqa: F401,F403
