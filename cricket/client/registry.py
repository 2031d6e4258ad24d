"""The fatbins, functions and variables an application's nvcc-generated start-up code registered
(``__cudaRegisterFatBinary`` and friends, ``runtime_api``), keyed by the handle cricket gave out.

Nothing is sent anywhere at registration: the process state (``runtime``) loads a fatbin's module
on the server at the first use of one of its kernels or variables.
"""
from __future__ import annotations

import ctypes
import logging
import threading
from dataclasses import dataclass, field

from cricket.client.errors import RuntimeApiError

log = logging.getLogger(__name__)

# cudart-internal code may look into a fatbin handle; Cricket hands out zeroed 0x58-byte blocks.
HANDLE_SIZE = 0x58


@dataclass
class RegisteredFunction:
    host_fun: int
    device_fun: bytes | None
    device_name: bytes | None
    thread_limit: int


@dataclass
class RegisteredVar:
    host_var: int
    device_address: bytes | None
    device_name: bytes | None
    ext: int
    size: int
    constant: bool
    global_: bool
    managed: bool = False


@dataclass
class RegisteredFatbin:
    """What the application registered for one fatbin (nothing is sent anywhere yet)."""
    handle: int
    wrapper: int
    wrapper_magic: int
    wrapper_version: int
    image: bytes | memoryview | None
    ended: bool = False
    functions: list[RegisteredFunction] = field(default_factory=list)
    variables: list[RegisteredVar] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)   # why this module cannot be used
    kind: int = 0                      # cricket.x cr_image_kind of ``image`` (a library may be a cubin or PTX)


class Registrations:
    """Fatbins, functions and variables registered by nvcc-generated code, keyed by handle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fatbins: dict[int, RegisteredFatbin] = {}
        self._blocks: dict[int, ctypes.Array] = {}
        self.unregistered = 0

    def fatbins(self) -> list[RegisteredFatbin]:
        with self._lock:
            return list(self._fatbins.values())

    def get(self, handle: int) -> RegisteredFatbin:
        # No lock: a dict lookup is atomic, and this runs for each of the ~24,000 functions a
        # PyTorch-sized program registers at import.
        entry = self._fatbins.get(handle)
        if entry is None:
            raise RuntimeApiError(f"fatbin handle {handle:#x} was never registered "
                                  "(or was already unregistered)")
        return entry

    def add_fatbin(self, wrapper: int, wrapper_magic: int, wrapper_version: int,
                   image: bytes | memoryview | None, kind: int = 0) -> int:
        block = ctypes.create_string_buffer(HANDLE_SIZE)
        handle = ctypes.addressof(block)
        with self._lock:
            self._blocks[handle] = block
            self._fatbins[handle] = RegisteredFatbin(handle, wrapper, wrapper_magic, wrapper_version, image,
                                                     kind=kind)
        log.debug("registered fatbin %#x (wrapper %#x, %s bytes)", handle, wrapper,
                  "no" if image is None else len(image))
        return handle

    def remove(self, handle: int) -> RegisteredFatbin:
        with self._lock:
            entry = self._fatbins.pop(handle, None)
            if entry is None:
                raise RuntimeApiError(f"fatbin handle {handle:#x} unregistered twice or never registered")
            del self._blocks[handle]
            self.unregistered += 1
        log.debug("unregistered fatbin %#x (%d functions, %d variables)", handle,
                  len(entry.functions), len(entry.variables))
        return entry


REGISTRATIONS = Registrations()
