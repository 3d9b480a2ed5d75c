"""``python -m touche``: the touche command, with its exit code."""
import sys

from .cli import main

sys.exit(main())
