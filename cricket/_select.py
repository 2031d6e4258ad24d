"""Choose between a Cython module and its pure-Python twin.

``CRICKET_PUREPYTHON=1`` forces the twin; otherwise the compiled module is used
when it was built and the twin is the fallback (with a warning in the log).

Two kinds of twins: hand-written Cython modules (``cext/NAME.pyx`` → ``cricket._cext.NAME``)
beside a Python module of the same API, chosen by :func:`load`; and the client core, Python
modules compiled as they stand into extensions of their own name, chosen by
:func:`use_core_sources`.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import logging
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from types import ModuleType

from cricket._checkout import in_source_checkout

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


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the ``.py`` of the modules it names, ahead of an extension of the same name."""

    def __init__(self) -> None:
        self.sources: dict[str, str] = {}

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        source = self.sources.get(fullname)
        return None if source is None else importlib.util.spec_from_file_location(fullname, source)


_source_finder = _SourceFinder()


def use_core_sources(package: str, directory: str, names: tuple[str, ...]) -> dict[str, str]:
    """Choose, once per process, between the compiled client core and its Python source.

    The core modules (``names`` in ``package``, whose files are in ``directory``) are compiled by
    Cython from their own ``.py`` into extensions of the same dotted name (``setup.py``
    ``CORE_MODULES``), which the import system prefers. The ``.py`` is taken instead when
    ``CRICKET_PUREPYTHON=1``, or, in a source checkout built in place (``make build``), when the
    extension is older than its source (an edit not yet built: running stale code would be worse
    than running slower). In an installed package the extension is what was built and file times
    are never compared (``cricket._checkout``). Since both twins have the same name there is only
    ever one of each module in ``sys.modules``, whoever imports it. Returns
    ``{module: "compiled" | "pure"}``; call it from the package's ``__init__``, before any of the
    modules is imported.
    """
    forced = pure_python_forced()
    in_checkout = in_source_checkout(directory)
    chosen = {}
    for name in names:
        fullname = f"{package}.{name}"
        source = os.path.join(directory, name + ".py")
        built = [os.path.join(directory, name + suffix) for suffix in EXTENSION_SUFFIXES]
        built = [p for p in built if os.path.exists(p)]
        stale = bool(built) and in_checkout and os.path.getmtime(built[0]) < os.path.getmtime(source)
        if forced or stale:
            if stale and not forced:
                log.warning("%s is older than %s; using the Python source (run `make build`)",
                            built[0], source)
            _source_finder.sources[fullname] = source
            chosen[fullname] = "pure"
        else:
            chosen[fullname] = "compiled" if built else "pure"
    if _source_finder.sources and _source_finder not in sys.meta_path:
        sys.meta_path.insert(0, _source_finder)
    return chosen
