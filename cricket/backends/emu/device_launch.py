"""Dynamic parallelism (CDP2): kernels that launch kernels, built with ``-rdc=true -lcudadevrt``.

nvcc turns ``child<<<g, b, s, stream>>>(args)`` in device code into two calls of the device
runtime: ``cudaGetParameterBufferV2(func, g, b, s)`` returns a buffer the thread fills with the
arguments, ``cudaLaunchDeviceV2(buffer, stream)`` launches it (``__cudaCDP2``-prefixed in CUDA 12+;
the older ``cudaGetParameterBuffer(align, size)`` / ``cudaLaunchDevice(func, buffer, g, b, s,
stream)`` pair too). Here a launch is a record that the device runs after the launching grid ends,
as CDP2 allows: a child grid may start at any time after its launch, the parent cannot wait for it
(``cudaDeviceSynchronize`` is gone from device code), and the parent grid is complete only when its
children are. Records run in launch order, each with its own descendants before the next
(launches into one stream run one after another, and a grid includes its children); launches into
``cudaStreamTailLaunch`` run after all of the parent's other work.

Limits, as the programming guide gives them: grids nest 24 levels deep (the host's launch is level
0, so a grid at level 23 cannot launch: ``cudaErrorLaunchMaxDepthExceeded``), and at most 2048
launches of one grid wait at once (``cudaLimitDevRuntimePendingLaunchCount``'s default, which a GPU
counts over the whole device; past it the parameter buffer is NULL and the error
``cudaErrorLaunchPendingCountExceeded``); the limit is not settable here. ``cudaGetLastError`` and
``cudaPeekAtLastError`` in device code read the calling thread's last device-runtime error. Streams
made with ``cudaStreamCreateWithFlags`` (``cudaStreamNonBlocking``, the only flag CDP2 allows) get
a handle; the emulator orders every stream's launches alike.

The records are process-local state of the device's arena (``arena.device_launches``, and
``arena.grid_depth`` the running grid's level); a kernel worker returns its records with its reply.
``cudaMalloc``/``cudaFree`` in device code use the device malloc heap, as ``malloc``/``free`` do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cudafacts import streams
from .errors import EmuError, not_supported
from .heap import heap_of
from .ptx.ast import Instr

MAX_NESTING_DEPTH = 24
PENDING_LAUNCH_LIMIT = 2048
# cudaError_t values the device runtime returns
SUCCESS, INVALID_VALUE, MEMORY_ALLOCATION, INVALID_CONFIGURATION = 0, 1, 2, 9
LAUNCH_MAX_DEPTH_EXCEEDED, LAUNCH_PENDING_COUNT_EXCEEDED, INVALID_DEVICE_FUNCTION = 65, 69, 98
_MAX_BLOCK = (1024, 1024, 64)
_MAX_GRID = ((1 << 31) - 1, 65535, 65535)

# device-runtime functions (without the __cudaCDP2 prefix) -> the emulator's instruction
CALLS = {"cudaGetParameterBufferV2": "param_buffer_v2", "cudaLaunchDeviceV2": "launch_v2",
         "cudaGetParameterBuffer": "param_buffer", "cudaLaunchDevice": "launch",
         "cudaGetLastError": "get_last_error", "cudaPeekAtLastError": "peek_at_last_error",
         "cudaStreamCreateWithFlags": "stream_create", "cudaStreamDestroy": "stream_destroy",
         "cudaMalloc": "malloc", "cudaFree": "free"}


def call_kind(name: str) -> str | None:
    """The emulator's instruction for a call of device-runtime function ``name``, or None for a
    function of another library; the rest of the device runtime is refused by name."""
    if not name.startswith("__cudaCDP2"):
        return CALLS.get(name)
    kind = CALLS.get("cuda" + name[len("__cudaCDP2"):])
    if kind is None:
        raise not_supported(f"device runtime call {name} (the emulator has launches, streams, the last "
                            "error, cudaMalloc and cudaFree)")
    return kind


@dataclass(frozen=True)
class DeviceLaunch:
    """One launch made by a kernel: what the device runs once the launching grid has ended."""
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    params: bytes
    tail: bool

    def to_json(self) -> dict:
        return {"name": self.name, "grid": list(self.grid), "block": list(self.block), "shared": self.shared,
                "params": self.params.hex(), "tail": self.tail}

    @classmethod
    def from_json(cls, d: dict) -> "DeviceLaunch":
        return cls(str(d["name"]), tuple(int(v) for v in d["grid"]), tuple(int(v) for v in d["block"]),
                   int(d["shared"]), bytes.fromhex(d["params"]), bool(d["tail"]))


def take_launches(arena) -> list[dict]:
    """The launches the last grid made (as JSON-able dicts), removed from ``arena``; parameter
    buffers it took and never launched are freed."""
    out = getattr(arena, "device_launches", None) or []
    arena.device_launches = []
    for ptr in getattr(arena, "device_param_buffers", None) or ():
        arena.free(ptr)
    arena.device_param_buffers = set()
    return [r.to_json() for r in out]


def queue_launches(arena, records: list[dict] | None) -> None:
    """Add launches a kernel worker reported to ``arena``'s queue."""
    if records:
        queue = getattr(arena, "device_launches", None)
        if queue is None:
            queue = arena.device_launches = []
        queue.extend(DeviceLaunch.from_json(r) for r in records)


def in_run_order(records: list[DeviceLaunch]) -> list[DeviceLaunch]:
    """Launch order, tail launches last."""
    return [r for r in records if not r.tail] + [r for r in records if r.tail]


# ---- run time: the calls the generated code makes ----------------------------------------------
class _Pending:
    """Per-batch state: parameter buffers handed out and not launched yet, each lane's last error."""

    def __init__(self) -> None:
        self.buffers: dict[int, tuple[str | None, tuple, tuple, int, int]] = {}
        self.errors: dict[int, int] = {}
        self.streams = 0x100


def _state(X) -> _Pending:
    st = getattr(X, "_device_launch", None)
    if st is None:
        st = X._device_launch = _Pending()
    return st


def _at(v, pos: int) -> int:
    a = np.asarray(v)
    return int(a[pos] if a.ndim else a)


def _lane(L, pos: int) -> int:
    return pos if L is None else int(L[pos])


def _queue(X) -> list:
    q = getattr(X.mem, "device_launches", None)
    if q is None:
        q = X.mem.device_launches = []
    return q


def _buffer(X, L, pos: int, entry, grid, block, shmem, size: int) -> int:
    st = _state(X)
    if len(_queue(X)) + len(st.buffers) >= PENDING_LAUNCH_LIMIT:
        st.errors[_lane(L, pos)] = LAUNCH_PENDING_COUNT_EXCEEDED
        return 0
    try:
        ptr = X.mem.alloc(max(size, 1))
    except EmuError:
        st.errors[_lane(L, pos)] = MEMORY_ALLOCATION
        return 0
    st.buffers[ptr] = (entry, grid, block, shmem, size)
    _unlaunched(X).add(ptr)
    return ptr


def _unlaunched(X) -> set:
    s = getattr(X.mem, "device_param_buffers", None)
    if s is None:
        s = X.mem.device_param_buffers = set()
    return s


def param_buffer(X, kind: str, args: list, L, mask) -> np.ndarray:
    """cudaGetParameterBufferV2(func, grid, block, shmem) or cudaGetParameterBuffer(align, size)."""
    out = np.zeros(X._lane_count(L), np.uint64)
    table = X.kernel.ir.device_kernels or {}
    for pos in X._positions(L, mask):
        if kind == "param_buffer":
            out[pos] = _buffer(X, L, pos, None, None, None, 0, _at(args[1], pos))
            continue
        entry = table.get(_at(args[0], pos))
        if entry is None:
            _state(X).errors[_lane(L, pos)] = INVALID_DEVICE_FUNCTION
            continue
        dims = [tuple(_at(c, pos) for c in args[k]) for k in (1, 2)]
        out[pos] = _buffer(X, L, pos, entry[0], dims[0], dims[1], _at(args[3], pos), entry[1])
    return out


def launch(X, kind: str, args: list, L, mask) -> np.ndarray:
    """cudaLaunchDeviceV2(buffer, stream) or cudaLaunchDevice(func, buffer, grid, block, shmem, stream)."""
    st = _state(X)
    codes = np.zeros(X._lane_count(L), np.int32)
    table = X.kernel.ir.device_kernels or {}
    for pos in X._positions(L, mask):
        buf = _at(args[0 if kind == "launch_v2" else 1], pos)
        pending = st.buffers.pop(buf, None)
        code = SUCCESS
        if pending is None:
            code = INVALID_VALUE
        else:
            name, grid, block, shmem, size = pending
            if kind == "launch":
                entry = table.get(_at(args[0], pos))
                name, size = (entry[0], entry[1]) if entry is not None else (None, size)
                grid, block = (tuple(_at(c, pos) for c in args[k]) for k in (2, 3))
                shmem = _at(args[4], pos)
            stream = _at(args[-1], pos)
            if name is None:
                code = INVALID_DEVICE_FUNCTION
            elif getattr(X.mem, "grid_depth", 0) + 1 >= MAX_NESTING_DEPTH:
                code = LAUNCH_MAX_DEPTH_EXCEEDED
            elif any(not 0 < v <= m for v, m in zip(grid + block, _MAX_GRID + _MAX_BLOCK)) \
                    or block[0] * block[1] * block[2] > _MAX_BLOCK[0]:
                code = INVALID_CONFIGURATION
            else:
                _queue(X).append(DeviceLaunch(name, grid, block, shmem, X.mem.read(buf, size),
                                              stream == streams.TAIL_LAUNCH))
            X.mem.free(buf)
            _unlaunched(X).discard(buf)
        if code:
            st.errors[_lane(L, pos)] = code
        codes[pos] = code
    return codes


def malloc(X, ptr, size, L, mask) -> np.ndarray:
    """cudaMalloc in device code: from the device malloc heap, as malloc() (its pointer in ``*ptr``)."""
    st = _state(X)
    codes = np.zeros(X._lane_count(L), np.int32)
    for pos in X._positions(L, mask):
        got = int(heap_of(X.mem).malloc(np.array([_at(size, pos)], np.uint64))[0])
        _store_u64(X, L, pos, _at(ptr, pos), got)
        if not got:
            codes[pos] = st.errors[_lane(L, pos)] = MEMORY_ALLOCATION
    return codes


def free(X, ptr, L, mask) -> np.ndarray:
    """cudaFree in device code: back to the device malloc heap."""
    acting = X._positions(L, mask)
    heap_of(X.mem).free(np.array([_at(ptr, pos) for pos in acting], np.uint64))
    return np.zeros(X._lane_count(L), np.int32)


def _store_u64(X, L, pos: int, addr: int, value: int) -> None:
    one = np.zeros(X._lane_count(L), bool)
    one[pos] = True
    X.st_generic(np.uint64(addr), np.uint64, (np.uint64(value),), L, one)


def last_error(X, reset: bool, L, mask) -> np.ndarray:
    """cudaGetLastError (``reset``) / cudaPeekAtLastError of each calling thread."""
    st = _state(X)
    codes = np.zeros(X._lane_count(L), np.int32)
    for pos in X._positions(L, mask):
        lane = _lane(L, pos)
        codes[pos] = st.errors.pop(lane, SUCCESS) if reset else st.errors.get(lane, SUCCESS)
    return codes


def stream_create(X, ptr, flags, L, mask) -> np.ndarray:
    """cudaStreamCreateWithFlags: a new handle in ``*ptr`` (flags must be cudaStreamNonBlocking)."""
    st = _state(X)
    codes = np.zeros(X._lane_count(L), np.int32)
    for pos in X._positions(L, mask):
        if _at(flags, pos) != streams.NON_BLOCKING:
            codes[pos] = st.errors[_lane(L, pos)] = INVALID_VALUE
            continue
        st.streams += 1
        _store_u64(X, L, pos, _at(ptr, pos), st.streams)
    return codes


# ---- code generation ---------------------------------------------------------------------------
_ARGS = {  # instruction -> the PTX types of its parameters (a dim3 is three .u32)
    "param_buffer_v2": ("u64", "dim3", "dim3", "u32"), "param_buffer": ("u64", "u64"),
    "launch_v2": ("u64", "u64"), "launch": ("u64", "u64", "dim3", "dim3", "u32", "u64"),
    "get_last_error": (), "peek_at_last_error": (), "stream_create": ("u64", "u32"), "stream_destroy": ("u64",),
    "malloc": ("u64", "u64"), "free": ("u64",),
}
_RESULT = {"param_buffer_v2": "u64", "param_buffer": "u64"}


class DeviceLaunchEmitters:
    """Code generation for the device-runtime calls (mixin of the block code generator)."""

    def op_device_runtime(self, ins: Instr, idx: int) -> None:
        kind = ins.mods[0]
        types = _ARGS.get(kind)
        ops = list(ins.operands)
        if types is None or len(ops) not in (len(types), len(types) + 1):
            raise not_supported(f"device runtime call `{ins.text()}`")
        ret = ops.pop(0) if len(ops) > len(types) else None
        args = []
        for o, t in zip(ops, types):
            a = self.local_arg(o)
            args.append(f"X.ld_local({a}, u32, 3, L, True)" if t == "dim3" else f"X.ld_local({a}, {t}, 1, L, True)[0]")
        m = self.mask_expr()
        self.at(idx)
        r = self.new_tmp()
        if kind in ("param_buffer_v2", "param_buffer"):
            call = f"device_launch.param_buffer(X, {kind!r}, [{', '.join(args)}], L, {m})"
        elif kind in ("launch_v2", "launch"):
            call = f"device_launch.launch(X, {kind!r}, [{', '.join(args)}], L, {m})"
        elif kind in ("stream_create", "malloc"):
            call = f"device_launch.{kind}(X, {args[0]}, {args[1]}, L, {m})"
        elif kind == "free":
            call = f"device_launch.free(X, {args[0]}, L, {m})"
        elif kind == "stream_destroy":
            call = "np.int32(0)"
        else:
            call = f"device_launch.last_error(X, {kind == 'get_last_error'}, L, {m})"
        self.emit(f"{r} = {call}")
        if ret is not None:
            t = _RESULT.get(kind, "s32")
            self.emit(f"X.st_local({self.local_arg(ret)}, {t}, ({r},), L, {m})")
