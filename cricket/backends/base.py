"""The backend interface: what the server needs from a device provider (cuda, emu, or a plugin).

A backend is loaded once per type by the registry and serves every session. It exposes its
devices; each :class:`Device` does the driver-level work (memory, modules, launches, streams,
events). All methods of a device may block: the server calls them on a session's worker thread,
never on the event loop. Failures raise :class:`BackendError` carrying the CUDA driver code that
the real driver would return.
"""
from __future__ import annotations

import abc
import dataclasses
import enum
import logging
from typing import Any, ClassVar

from ..cudafacts import curesult

log = logging.getLogger(__name__)


class BackendError(Exception):
    """A driver-level failure: ``code`` is the CUresult the real driver would return."""

    def __init__(self, code: int, message: str = "") -> None:
        self.code = int(code)
        self.message = message or curesult.error_string(self.code)
        super().__init__(f"{curesult.error_name(self.code)}: {self.message}")


class ImageKind(enum.IntEnum):
    """What a module image holds (the values of ``cr_image_kind`` in cricket.x)."""

    FATBIN = 0
    CUBIN = 1
    PTX = 2


@dataclasses.dataclass
class DeviceProperties:
    """What HELLO reports about one device; ``attributes`` maps CUdevice_attribute numbers to values."""

    name: str
    uuid: bytes
    total_memory: int
    attributes: dict[int, int]


@dataclasses.dataclass
class ParamInfo:
    """One kernel parameter in the packed parameter buffer."""

    offset: int
    size: int
    kind: int = 0        # cricket.x cr_param_kind: 0 unknown, 1 integer or pointer, 2 float, 3 bytes


@dataclasses.dataclass
class FunctionInfo:
    """A kernel found in a module: the backend's own object plus what the client needs to launch it."""

    native: Any
    params: list[ParamInfo]
    param_size: int
    max_threads_per_block: int = 1024
    num_regs: int = 0
    shared_size_bytes: int = 0
    const_size_bytes: int = 0
    local_size_bytes: int = 0
    ptx_version: int = 0        # the virtual architecture the running code was compiled for (0: unknown)
    binary_version: int = 0


_warned: set[str] = set()


def _warn_once(text: str) -> None:
    if text not in _warned:
        _warned.add(text)
        log.warning("%s", text)


class Device(abc.ABC):
    """One device of a backend. Streams and events are the backend's own objects; ``None`` is the
    default stream. Every method may block and raises :class:`BackendError` on failure."""

    # memory
    @abc.abstractmethod
    def mem_alloc(self, size: int) -> int: ...

    @abc.abstractmethod
    def mem_free(self, ptr: int) -> None: ...

    @abc.abstractmethod
    def mem_get_info(self) -> tuple[int, int]:
        """(free, total) bytes."""

    @abc.abstractmethod
    def memcpy_htod(self, dst: int, data: bytes | memoryview, stream: Any = None) -> None: ...

    @abc.abstractmethod
    def memcpy_dtoh(self, src: int, size: int, stream: Any = None) -> bytes: ...

    def memcpy_htod_host(self, dst: int, data: memoryview, address: int, stream: Any = None) -> None:
        """Copy from host memory this process maps (a client's shared region): ``data`` views it
        and ``address`` is where it starts. Returns once ``data`` may be overwritten."""
        self.memcpy_htod(dst, data, stream)

    def memcpy_dtoh_host(self, src: int, into: memoryview, address: int, stream: Any = None) -> None:
        """Copy ``len(into)`` bytes into host memory this process maps (``into`` views it, from
        ``address``); returns once they are there."""
        into[:] = self.memcpy_dtoh(src, len(into), stream)

    def host_address(self, ptr: int, size: int) -> int | None:
        """The address in this process of device memory [ptr, ptr+size) when the device's memory
        is host memory this process maps and the range lies inside one live allocation, with no
        error pending: a synchronous copy on the default stream may then be a ``memcpy`` there.
        None otherwise (the default: device memory is not host memory); the caller then takes the
        copy methods, which say why a copy fails."""
        return None

    def memcpy_dtoh_view(self, src: int, size: int, stream: Any = None) -> bytes | memoryview:
        """Like :meth:`memcpy_dtoh`, but a backend whose device memory is host memory may return a
        read-only view of it instead of a copy. The view shows what the memory holds *now*: the
        caller must be done with it before anything writes that memory again (the RPC server sends
        it before it runs the session's next call). The default copies."""
        return self.memcpy_dtoh(src, size, stream)

    def memcpy_htod_view(self, dst: int, size: int, stream: Any = None) -> memoryview | None:
        """A writable view of device memory ``[dst, dst+size)`` that host bytes may be received
        into directly (a copy with no copy of the server's own), or None (the default) where
        device memory is not host memory. Only asked while nothing of the session is queued."""
        return None

    @abc.abstractmethod
    def memcpy_dtod(self, dst: int, src: int, size: int, stream: Any = None) -> None: ...

    @abc.abstractmethod
    def memset(self, dst: int, value: int, element_size: int, count: int, stream: Any = None) -> None: ...

    # limits
    def set_limit(self, limit: int, value: int) -> None:
        """cuCtxSetLimit for this device's context (the printf FIFO goes through the session)."""
        raise BackendError(curesult.NOT_SUPPORTED, f"this backend cannot set CUlimit {limit}")

    # modules
    @abc.abstractmethod
    def module_load(self, image: bytes, kind: ImageKind) -> Any:
        """Load an image; returns the backend's module object."""

    def module_calls_printf(self, module: Any, image: bytes) -> bool:
        """Whether a module loaded from ``image`` calls device printf (``vprintf``), so that its
        session's client fetches the output. A backend that cannot tell says True (the default)."""
        return True

    @abc.abstractmethod
    def module_unload(self, module: Any) -> None: ...

    @abc.abstractmethod
    def module_get_function(self, module: Any, name: str) -> FunctionInfo: ...

    @abc.abstractmethod
    def module_get_global(self, module: Any, name: str) -> tuple[int, int]:
        """(device address, size) of a module variable."""

    # A device that sets this takes ``output=`` in :meth:`launch`: a callable given each line of the
    # kernel's device printf output (else the backend writes it where it can, e.g. the stdout of
    # the process, as the CUDA driver does).
    captures_output = False
    # A device that sets this takes ``cooperative=True`` in :meth:`launch`: every block of the grid
    # runs at once (``cudaLaunchCooperativeKernel``; a grid larger than the device holds resident
    # fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE).
    cooperative_launch = False

    @abc.abstractmethod
    def launch(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared_mem: int, stream: Any, params: bytes) -> None: ...

    # streams and events
    @abc.abstractmethod
    def stream_create(self, flags: int) -> Any: ...

    @abc.abstractmethod
    def stream_destroy(self, stream: Any) -> None: ...

    @abc.abstractmethod
    def stream_synchronize(self, stream: Any) -> None: ...

    @abc.abstractmethod
    def stream_query(self, stream: Any) -> bool:
        """True when all work on the stream is done."""

    @abc.abstractmethod
    def stream_wait_event(self, stream: Any, event: Any) -> None: ...

    @abc.abstractmethod
    def event_create(self, flags: int) -> Any: ...

    @abc.abstractmethod
    def event_destroy(self, event: Any) -> None: ...

    @abc.abstractmethod
    def event_record(self, event: Any, stream: Any) -> None: ...

    @abc.abstractmethod
    def event_synchronize(self, event: Any) -> None: ...

    @abc.abstractmethod
    def event_query(self, event: Any) -> bool: ...

    @abc.abstractmethod
    def event_elapsed_time(self, start: Any, end: Any) -> float:
        """Milliseconds between two recorded events."""

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Wait for all work on this device."""

    def release(self) -> None:
        """The session that opened this device is gone (after it freed what it owned)."""

    def cancel(self) -> None:
        """The session is closing: stop its running kernel and refuse its queued launches, if this
        backend can (the default cannot). Called from the event loop: must not block."""

    def launch_is_quick(self, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
                        shared_mem: int) -> bool:
        """Whether this launch ends at once (well under a millisecond), so that the server may run
        it on its event loop while the session has nothing queued. Default: no."""
        return False

    def set_memory_account(self, account: Any) -> None:
        """The session's account in the server's device-memory budget
        (:class:`cricket.server.session_memory.SessionMemory`): memory the backend takes for the
        session by itself (beyond its allocations) is charged there. Called once, right after
        :meth:`Backend.open_device`; the default charges nothing."""

    def enable_peer_access(self, peer: "Device") -> None:
        """Let this device's kernels reach ``peer``'s memory (cuCtxEnablePeerAccess)."""
        raise BackendError(curesult.PEER_ACCESS_UNSUPPORTED, f"the {type(self).__name__} backend has no peer access")

    def disable_peer_access(self, peer: "Device") -> None:
        raise BackendError(curesult.PEER_ACCESS_NOT_ENABLED, "peer access was not enabled")

    def set_kernel_timeout(self, seconds: float) -> None:
        """End any later kernel that runs longer than ``seconds`` with CUDA_ERROR_LAUNCH_TIMEOUT, if
        this backend can (the default cannot, and says so once)."""
        _warn_once(f"{type(self).__name__} cannot end a kernel: --kernel-timeout does not apply to it")


class Backend(abc.ABC):
    """A device provider loaded by type. Subclasses set ``type_name`` and ``description``.

    The constructor takes the ``SPEC`` of ``--backend NAME=SPEC`` (empty when none was given) and
    raises :class:`BackendError` (or any exception) when the backend cannot work here; the registry
    reports that reason and the server keeps running with its other backends.
    """

    type_name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    emulated: ClassVar[bool] = False

    def __init__(self, spec: str = "") -> None:
        self.spec = spec

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None when this backend can work on this machine, else why not (for ``--list-backends``)."""
        return None

    @property
    def driver_version(self) -> int:
        return 13000

    @abc.abstractmethod
    def devices(self) -> list[DeviceProperties]: ...

    @abc.abstractmethod
    def device(self, index: int) -> Device:
        """The device object for ``index``."""

    def open_device(self, index: int) -> Device:
        """The device a new session works on. By default every session shares :meth:`device`;
        a backend may give each session its own (``emu`` does: a fault in one session's kernel
        then leaves the other sessions' devices untouched). Released with :meth:`Device.release`.
        A backend whose :meth:`device_ranges` answers ranges also takes ``first=`` (the placement)."""
        return self.device(index)

    def device_ranges(self, first: int) -> list[tuple[int, int]]:
        """``CR_PLACE_DEVICES``: a program's combined device list (devices of several servers)
        puts this server's device 0 at index ``first``. A backend that chooses its device
        addresses itself answers, for each device, the range ``(base, size)`` that all its
        pointers will lie in when opened with ``open_device(index, first=first)``, the ranges of
        different ``first`` never overlapping; it raises :class:`BackendError` when it cannot
        place them there. The default answers none: the driver chooses addresses (``cuda``)."""
        return []

    def p2p_attribute(self, src: int, dst: int, attribute: int) -> int:
        """A CUdevice_P2PAttribute of the link from device ``src`` to ``dst`` (0: no peer access)."""
        return 0

    def close(self) -> None:
        """Release what the backend holds; called once when the server stops."""
