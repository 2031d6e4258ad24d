"""``python -m rpcgen FILE.x``: see :mod:`rpcgen.cli`."""
import sys

from rpcgen.cli import main

sys.exit(main())
