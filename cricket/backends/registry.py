"""Find, load and hold backends: one per type, loaded once, never unloaded.

A backend is named by a type (``emu``, ``cuda``, or any name in the ``cricket.backends`` entry-point
group) or by ``module:Class``. The built-in backends are known even when the package's entry points
are not installed (a source checkout).
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import logging
import threading

from .base import Backend

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "cricket.backends"
BUILTIN_BACKENDS = {
    "cuda": "cricket.backends.cuda:CudaBackend",
    "emu": "cricket.backends.emu_backend:EmuBackend",
}


class BackendLoadError(Exception):
    """A backend could not be loaded; the message says why and what to do."""


class BackendAlreadyLoaded(BackendLoadError):
    """A backend of this type is loaded already (one per type, no unloading)."""


@dataclasses.dataclass
class BackendStatus:
    """One line of ``--list-backends`` / CR_LIST_BACKENDS."""

    type: str
    target: str
    loaded: bool
    available: bool
    reason: str


def known_backends() -> dict[str, str]:
    """Backend names → ``module:Class``: the built-ins, then the entry points (which may override)."""
    known = dict(BUILTIN_BACKENDS)
    try:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            known[ep.name] = ep.value
    except Exception as exc:  # a broken distribution must not hide the built-ins
        log.warning("could not read the %s entry points: %s", ENTRY_POINT_GROUP, exc)
    return known


def resolve(name: str) -> type[Backend]:
    """The backend class for a type name or ``module:Class``; BackendLoadError with the reason."""
    target = name if ":" in name else known_backends().get(name)
    if target is None:
        raise BackendLoadError(
            f"unknown backend {name!r}: known are {', '.join(sorted(known_backends()))}; "
            f"a third-party backend is named as module:Class")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise BackendLoadError(f"backend {name!r}: cannot import {module_name}: "
                               f"{type(exc).__name__}: {exc}") from exc
    cls = module
    try:
        for part in class_name.split("."):
            cls = getattr(cls, part)
    except AttributeError as exc:
        raise BackendLoadError(f"backend {name!r}: {module_name} has no {class_name}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise BackendLoadError(f"backend {name!r}: {target} is not a subclass of "
                               f"cricket.backends.base.Backend")
    return cls


def type_of(name: str, cls: type[Backend]) -> str:
    """The type a backend class is registered under: its ``type_name``, else the name it was asked by."""
    return cls.type_name or name


class BackendRegistry:
    """The backends loaded in one server. Thread-safe: LOADBACKEND may run while sessions work."""

    def __init__(self) -> None:
        self._loaded: dict[str, Backend] = {}
        self._targets: dict[str, str] = {}
        self._lock = threading.Lock()
        self.default: str | None = None

    def load(self, name: str, spec: str = "") -> Backend:
        """Load the backend ``name`` (type or module:Class) with ``spec``; refuse a loaded type."""
        cls = resolve(name)
        type_name = type_of(name, cls)
        with self._lock:
            if type_name in self._loaded:
                raise BackendAlreadyLoaded(
                    f"a backend of type {type_name!r} is already loaded "
                    f"({self._targets[type_name]}); one backend per type and no unloading: "
                    f"use the loaded one or restart the server")
            # Hold the lock while constructing so a concurrent load of the same type cannot race.
            try:
                backend = cls(spec)
            except Exception as exc:
                raise BackendLoadError(f"backend {type_name!r} failed to initialise: "
                                       f"{type(exc).__name__}: {exc}") from exc
            self._loaded[type_name] = backend
            self._targets[type_name] = name if ":" in name else f"{cls.__module__}:{cls.__qualname__}"
            if self.default is None:
                self.default = type_name
        log.info("loaded backend %s (%s)%s", type_name, self._targets[type_name],
                 f" with spec {spec!r}" if spec else "")
        return backend

    def get(self, type_name: str = "") -> Backend:
        """The loaded backend of ``type_name`` (the default when empty); KeyError with the reason."""
        with self._lock:
            name = type_name or self.default
            if name is None:
                raise KeyError("no backend is loaded on this server")
            try:
                return self._loaded[name]
            except KeyError:
                raise KeyError(f"backend {name!r} is not loaded on this server "
                               f"(loaded: {', '.join(self._loaded) or 'none'})") from None

    def loaded(self) -> dict[str, Backend]:
        with self._lock:
            return dict(self._loaded)

    def status(self) -> list[BackendStatus]:
        """Every known backend and every loaded one, with availability and the reason."""
        loaded = self.loaded()
        rows: list[BackendStatus] = []
        names = dict(known_backends())
        for type_name, target in self._targets.items():
            names.setdefault(type_name, target)
        for name, target in sorted(names.items()):
            if name in loaded:
                rows.append(BackendStatus(name, target, True, True, type(loaded[name]).description))
                continue
            try:
                cls = resolve(target)
                reason = cls.unavailable_reason()
            except BackendLoadError as exc:
                rows.append(BackendStatus(name, target, False, False, str(exc)))
                continue
            except Exception as exc:
                rows.append(BackendStatus(name, target, False, False, f"{type(exc).__name__}: {exc}"))
                continue
            rows.append(BackendStatus(name, target, False, reason is None, reason or cls.description))
        return rows

    def close(self) -> None:
        for backend in self.loaded().values():
            try:
                backend.close()
            except Exception:
                log.exception("closing backend %s failed", backend.type_name)


def parse_backend_option(text: str) -> tuple[str, str]:
    """``NAME[=SPEC]`` → (name, spec); ``module:Class=SPEC`` works too."""
    name, _, spec = text.partition("=")
    if not name:
        raise ValueError(f"--backend {text!r}: give NAME or NAME=SPEC")
    return name, spec
