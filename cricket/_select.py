"""Choose between a Cython module and its pure-Python twin.

Each hand-written Cython module (``cext/NAME.pyx`` → ``cricket._cext.NAME``, its interface in
``cext/NAME.pxd``) has a Python module of the same API beside the code that uses it, chosen by
:func:`load`. ``CRICKET_PUREPYTHON=1`` forces the twin; otherwise the compiled module is used when
it was built and the twin is the fallback (with a warning in the log).
"""
from __future__ import annotations

import importlib
import logging
import os
from types import ModuleType

log = logging.getLogger(__name__)


def pure_python_forced() -> bool:
    return os.environ.get("CRICKET_PUREPYTHON", "").strip().lower() not in ("", "0", "no", "false")


def load(compiled: str, pure: str) -> ModuleType:
    """Import ``compiled`` (e.g. ``cricket._cext.xdr``) unless forced or missing, else ``pure``."""
    if not pure_python_forced():
        try:
            return importlib.import_module(compiled)
        except ImportError as exc:
            log.warning("compiled module %s unavailable (%s); using pure-Python %s",
                        compiled, exc, pure)
    return importlib.import_module(pure)
