"""The process a warmup worker runs (``python -m touche._warmup_worker``, started by
touche._warmup): steps read from stdin, answers on stdout. A module of its own because
``import touche`` imports touche._warmup, and running an imported module as __main__ would
load it twice."""
import sys

from touche._warmup import _LogToDirectory, _worker

if __name__ == "__main__":
    with _LogToDirectory():
        code = _worker()
    sys.exit(code)
