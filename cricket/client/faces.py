"""How the API faces register their functions: one table per face, one ``implements`` decorator.

A face is one C API the shims forward to Python: the runtime API (``runtime_face.RUNTIME_API``,
answered with ``cudaError_t``) and the driver API (``driver_face.DRIVER_API``, ``CUresult``). Its
table maps a CUDA name to the callable the compiled entry (``cext/cudart_api.pyx``,
``cext/cuda_api.pyx``) looks up at every call, so replacing an entry takes effect at once. Its
guard wraps an implementation: the face's per-call steps (the device of the calling thread), and
an exception becomes the face's error code.

A feature in a new file registers the same way as the old ones::

    from cricket.client.faces import implements
    from cricket.client.runtime_face import RUNTIME_API

    @implements(RUNTIME_API, "cudaFoo")
    def foo(arg: int) -> int: ...

and the face's assembly module (``runtime_api`` or ``driver_api``) imports that file.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from cricket.client.errors import RuntimeApiError

F = TypeVar("F", bound=Callable[..., Any])


class Face:
    """One API face: CUDA name -> implementation, and the guard around guarded implementations."""

    def __init__(self, name: str, guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        self.name = name
        self.guard = guard
        self.implementations: dict[str, Callable[..., Any]] = {}

    def register(self, name: str, fn: Callable[..., Any], *, replace: bool = False) -> None:
        """Make ``fn`` (as it is: no guard) the implementation of the CUDA function ``name``."""
        if name in self.implementations and not replace:
            raise RuntimeApiError(f"{name} already has an implementation "
                                  f"({self.implementations[name]!r}); pass replace=True to swap it")
        self.implementations[name] = fn

    def lookup(self, name: str) -> Callable[..., Any] | None:
        return self.implementations.get(name)


def implements(face: Face, *names: str, guarded: bool = True,
               replace: bool = False) -> Callable[[F], F]:
    """Register the decorated function in ``face`` under each CUDA name: wrapped by the face's
    guard, or as it is with ``guarded=False`` (an entry with a calling convention of its own).
    Returns the function unwrapped, so that Python callers and tests can call it directly."""
    def decorate(fn: F) -> F:
        entry = face.guard(fn) if guarded else fn
        for name in names:
            face.register(name, entry, replace=replace)
        return fn
    return decorate
