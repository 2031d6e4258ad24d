"""Whether this cricket runs from its source checkout or from an installed package.

A source checkout (also an editable install, ``make build``, ``pip install -e .``) has
``setup.py`` beside the top-level ``cricket`` package; an installed package (a wheel unpacked
into site-packages) has not. Only a source checkout may be out of date with its sources, and
even there nothing is generated or compiled at import or run time: cricket says to run
``make build``. An installed package is what its build made: its file times say nothing (a
wheel stores them, an installer may keep them or not), they are never compared, and nothing in
it is regenerated, rebuilt or written.
"""
from __future__ import annotations

import os

#: The folder that holds the top-level ``cricket`` package.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def in_source_checkout(directory: str = ROOT) -> bool:
    """True when ``directory`` (a package folder, or the folder above the top-level package)
    lies in a source tree with its ``setup.py``."""
    top = os.path.abspath(directory)
    while os.path.exists(os.path.join(top, "__init__.py")):
        top = os.path.dirname(top)
    return os.path.isfile(os.path.join(top, "setup.py"))
