"""``python -m touche``: the touche command."""
from .cli import main

main()
