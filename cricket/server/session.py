"""A session: what one client connection owns, and the ordered worker that does its backend work.

Every handle a client sends is looked up in the session's own tables, so a handle (or a device
address) of another session is rejected with CUDA_ERROR_INVALID_HANDLE / CUDA_ERROR_INVALID_VALUE.
Handles are unique across the server, so another session's handle never aliases one of ours.
"""
from __future__ import annotations

import bisect
import concurrent.futures
import dataclasses
import itertools
import logging
import threading
from collections import Counter
from typing import Any, Callable, Generic, TypeVar

from ..cudafacts import curesult
from ..backends.base import Backend, BackendError, Device, FunctionInfo
from .device_output import OutputBuffer
from .stats import SessionStats

log = logging.getLogger(__name__)

T = TypeVar("T")

_next_handle = itertools.count(1)
_next_handle_lock = threading.Lock()


def new_handle() -> int:
    """A handle value never used before in this server process."""
    with _next_handle_lock:
        return next(_next_handle)


class HandleTable(Generic[T]):
    """Objects of one kind owned by a session, by handle."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[int, T] = {}

    def add(self, item: T) -> int:
        handle = new_handle()
        self._items[handle] = item
        return handle

    def get(self, handle: int) -> T:
        try:
            return self._items[handle]
        except KeyError:
            raise BackendError(curesult.INVALID_HANDLE,
                               f"{self.kind} handle {handle} is not one of this session's") from None

    def pop(self, handle: int) -> T:
        item = self.get(handle)
        del self._items[handle]
        return item

    def items(self) -> list[tuple[int, T]]:
        return list(self._items.items())

    def __len__(self) -> int:
        return len(self._items)


class Allocations:
    """The device memory ranges a session owns; finds the allocation that holds an address range."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._sizes: dict[int, int] = {}
        self._serials: dict[int, int] = {}     # base -> which allocation at that base (addresses are reused)
        self._next_serial = 0

    def add(self, base: int, size: int) -> None:
        bisect.insort(self._bases, base)
        self._sizes[base] = size
        self._next_serial += 1
        self._serials[base] = self._next_serial

    def serial(self, base: int) -> int | None:
        """Which allocation starts at ``base`` now (None: none): a later one at the same address differs."""
        return self._serials.get(base)

    def remove(self, base: int) -> int:
        if base not in self._sizes:
            raise BackendError(curesult.INVALID_VALUE,
                               f"device address {base:#x} is not the start of an allocation of this session")
        self._bases.remove(base)
        del self._serials[base]
        return self._sizes.pop(base)

    def check(self, ptr: int, size: int) -> int:
        """Raise unless [ptr, ptr+size) lies inside one allocation of this session; its base."""
        i = bisect.bisect_right(self._bases, ptr) - 1
        if i >= 0:
            base = self._bases[i]
            if ptr + size <= base + self._sizes[base]:
                return base
        raise BackendError(curesult.INVALID_VALUE,
                           f"device range {ptr:#x}+{size} is not inside an allocation of this session")

    def base_of(self, ptr: int) -> int | None:
        """The start of the allocation holding ``ptr``, or None."""
        i = bisect.bisect_right(self._bases, ptr) - 1
        return self._bases[i] if i >= 0 and ptr < self._bases[i] + self._sizes[self._bases[i]] else None

    def items(self) -> list[tuple[int, int]]:
        return [(b, self._sizes[b]) for b in self._bases]

    @property
    def total_bytes(self) -> int:
        return sum(self._sizes.values())

    def __len__(self) -> int:
        return len(self._bases)


@dataclasses.dataclass
class ModuleRecord:
    native: Any
    device: Device
    image_hash: bytes
    variables: list[int] = dataclasses.field(default_factory=list)   # addresses handed out by GET_GLOBAL


@dataclasses.dataclass
class FunctionRecord:
    info: FunctionInfo
    module_handle: int
    name: str


@dataclasses.dataclass
class DeviceObject:
    """A stream or an event with the device it was created on."""

    native: Any
    device: Device


class Session:
    """Everything one connection owns. Backend work runs on :attr:`worker`, one task at a time, in
    the order the calls arrived."""

    _ids = itertools.count(1)

    @classmethod
    def number_from(cls, first: int, step: int) -> None:
        """Number the sessions opened from now on first, first + step, ... (one of several workers)."""
        cls._ids = itertools.count(first, step)

    def __init__(self, peer: str = "", stats: SessionStats | None = None,
                 kernel_timeout: float | None = None) -> None:
        self.id = next(self._ids)
        self.kernel_timeout = kernel_timeout     # seconds a kernel may run (None: no limit)
        self.peer = peer
        self.peer_uid: int | None = None     # the user of a Unix socket peer (SO_PEERCRED)
        self.client = ""             # what the client called itself in HELLO
        self.backend: Backend | None = None
        self.backend_type = ""
        self.device_index = 0
        self.admin = False
        self.greeted = False         # a HELLO succeeded (its token was accepted)
        self.closed = False
        self.allocations = Allocations()
        self.alloc_device: dict[int, Device] = {}
        self.modules: HandleTable[ModuleRecord] = HandleTable("module")
        self.functions: HandleTable[FunctionRecord] = HandleTable("function")
        self.streams: HandleTable[DeviceObject] = HandleTable("stream")
        self.events: HandleTable[DeviceObject] = HandleTable("event")
        self.open_devices: dict[int, Device] = {}
        self.placed = False          # CR_PLACE_DEVICES was answered (cricket.server.placement)
        self.placement = 0           # the combined-list index its devices were placed at (0: none asked)
        self.on_free: list[Callable[[], Any]] = []     # features' state to drop at free_all
        self.async_error: BackendError | None = None
        self.shared_region: Any = None   # the client's shared memory (cricket.server.shm), if attached
        self.pinned_regions: Any = None  # its pinned host memory mapped here (shm.PinnedRegions)
        self.heap_charged = 0            # device malloc heap bytes beyond the default, in the memory budget
        self.memory_account: Any = None  # its SessionMemory, for what the backend charges itself
        self.shm_ticket: Any = None      # its ticket for handing the region over (cricket.server.fd_inbox)
        self.stats = stats or SessionStats()
        self.counters: Counter[str] = self.stats.calls     # calls by procedure
        self.output = OutputBuffer(self.id)    # device printf lines of this session's kernels
        self.queued = 0              # tasks submitted and not finished
        self.queued_bytes = 0        # data those tasks hold
        self.max_queued = 0
        self._queue_lock = threading.Lock()
        self._device_lock = threading.Lock()
        self.worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"cricket-session-{self.id}")

    # --- the ordered worker ------------------------------------------------

    def submit(self, fn: Callable[..., T], *args: Any, nbytes: int = 0) -> concurrent.futures.Future[T]:
        """Queue ``fn(*args)`` behind everything this session queued before; ``nbytes``: the bytes
        of data it holds until it ran (counted in :attr:`queued_bytes`)."""
        with self._queue_lock:
            self.queued += 1
            self.queued_bytes += nbytes
            self.max_queued = max(self.max_queued, self.queued)

        def run() -> T:
            try:
                return fn(*args)
            finally:
                with self._queue_lock:
                    self.queued -= 1
                    self.queued_bytes -= nbytes

        return self.worker.submit(run)

    # --- asynchronous errors -----------------------------------------------

    def keep_async_error(self, error: BackendError) -> None:
        """Remember the first error of an operation nobody waits for."""
        if self.async_error is None:
            self.async_error = error
            log.warning("session %d: asynchronous error kept for the next synchronising call: %s",
                        self.id, error)

    def raise_async_error(self) -> None:
        """At a synchronising call: report (once) the error an earlier asynchronous call left."""
        error, self.async_error = self.async_error, None
        if error is not None:
            raise error

    # --- the session's device ----------------------------------------------

    @property
    def device(self) -> Device:
        return self.device_at(self.device_index)

    def device_at(self, index: int) -> Device:
        """The session's device ``index`` (the backend checks it), opened at its first use."""
        if self.backend is None:
            raise BackendError(curesult.NOT_INITIALIZED, "the session has no backend yet: call HELLO first")
        device = self.open_devices.get(index)
        if device is None:
            # The event loop (quick copies) and the worker may both ask first: open it once.
            with self._device_lock:
                device = self.open_devices.get(index)
                if device is None:
                    device = (self.backend.open_device(index, first=self.placement) if self.placement
                              else self.backend.open_device(index))
                    if self.memory_account is not None:
                        device.set_memory_account(self.memory_account)
                    if self.kernel_timeout is not None:
                        device.set_kernel_timeout(self.kernel_timeout)
                    self.open_devices[index] = device
        return device

    def device_of(self, ptr: int) -> Device:
        """The device holding the allocation at ``ptr`` (unified addressing: a copy goes to the
        pointer's device whatever the current one), else the current device."""
        return self._device_at(self.allocations.base_of(ptr))

    def device_for(self, ptr: int, size: int) -> Device:
        """What :meth:`Allocations.check` and :meth:`device_of` say together, with one search
        (every copy asks both): the device of the allocation that holds [ptr, ptr+size); raises
        unless one allocation of this session holds the whole range."""
        return self._device_at(self.allocations.check(ptr, size))

    def _device_at(self, base: int | None) -> Device:
        """The device of the allocation at ``base`` (a module variable's stand-in gives its
        device), else the current device."""
        device = self.alloc_device.get(base) if base is not None else None
        if device is None:
            return self.device
        return device.device if getattr(device, "stands_in", False) else device

    def cancel_kernels(self) -> None:
        """Stop the running kernel and refuse queued launches on every device (from any thread)."""
        for device in list(self.open_devices.values()):
            device.cancel()

    def stream(self, handle: int) -> Any:
        """The native stream for a handle; 0 is the default stream (None)."""
        return None if handle == 0 else self.streams.get(handle).native

    # --- teardown --------------------------------------------------------------

    def free_all(self) -> dict[str, int]:
        """Release everything the session owns (on its worker, after its queued work). Returns counts."""
        freed: Counter[str] = Counter()
        while self.on_free:
            self._quietly(lambda fn: fn(), self.on_free.pop(), "a feature's state")
        for handle, ev in self.events.items():
            self._quietly(ev.device.event_destroy, ev.native, f"event {handle}")
            self.events.pop(handle)
            freed["events"] += 1
        for handle, st in self.streams.items():
            self._quietly(st.device.stream_destroy, st.native, f"stream {handle}")
            self.streams.pop(handle)
            freed["streams"] += 1
        for handle, _ in self.functions.items():
            self.functions.pop(handle)
        for handle, mod in self.modules.items():
            self._quietly(mod.device.module_unload, mod.native, f"module {handle}")
            self.modules.pop(handle)
            freed["modules"] += 1
        for base, size in self.allocations.items():
            device = self.alloc_device.pop(base)
            self._quietly(device.mem_free, base, f"allocation {base:#x}")
            self.allocations.remove(base)
            freed["allocations"] += 1
            freed["bytes"] += size
        for index, device in list(self.open_devices.items()):
            self._quietly(lambda d: d.release(), device, f"device {index}")
            del self.open_devices[index]
        return dict(freed)

    def _quietly(self, fn: Callable[..., Any], arg: Any, what: str) -> None:
        try:
            fn(arg)
        except Exception as exc:  # teardown goes on: one failure must not leak the rest
            log.warning("session %d: freeing %s failed: %s", self.id, what, exc)

    def summary(self) -> dict[str, int]:
        out = {"session": self.id, "allocations": len(self.allocations),
               "allocated_bytes": self.allocations.total_bytes, "modules": len(self.modules),
               "functions": len(self.functions), "streams": len(self.streams), "events": len(self.events),
               "queued": self.queued, "max_queued": self.max_queued,
               "printf_pending_bytes": self.output.pending,
               "kernels": self.stats.kernels, "kernel_us": int(self.stats.kernel_seconds * 1e6)}
        out.update({f"calls.{k}": v for k, v in sorted(self.counters.items())})
        return out
