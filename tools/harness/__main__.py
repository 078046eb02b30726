"""python3 -m tools.harness: the CLI of cli.py."""
import sys

from .cli import main

sys.exit(main())
