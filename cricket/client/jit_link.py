"""JIT linking for the driver API (cuLinkCreate ... cuLinkDestroy), done in the client.

Each input (PTX, cubin, fatbin, host object, static library) is read and checked when it is added, and its link
symbols (``cricket.fatbin`` ``link_symbols``) are resolved across all inputs at cuLinkComplete, as
NVIDIA's linker resolves them: an ``.extern`` function or variable defined by no input, or a
symbol defined twice, fails the link with a line in the error log naming it. The linked image is
one fatbin container holding every input as an entry named ``cricket-link:<input>``;
cuModuleLoadData takes it like any fatbin. The emu backend links the PTX of all entries of a
module, as it does for ``-rdc=true`` programs; the cuda backend sees the names and hands the
entries to the real driver's linker (``cricket/backends/cuda.py``).

Options are read and written back as cuda.h documents them: the info and error logs are
rewritten into the caller's buffers as they grow (capped at the buffer size, NUL included), with
the bytes filled (NUL included) written over the size option's value; ``CU_JIT_WALL_TIME`` is
overwritten with the milliseconds spent so far, as a float. Compiler-only options (optimisation
level, registers, debug and line info, cache mode, ...) are accepted and have no effect: the
emulator runs PTX as written.
"""
from __future__ import annotations

import ctypes
import enum
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field

from cricket import _select
from cricket.cudafacts import curesult
from cricket.fatbin import Cubin, Fatbin, FatbinError, iter_containers
from cricket.fatbin.archive import archive_members
from cricket.fatbin.format import EntryKind
from cricket.fatbin.hostelf import find_device_code
from cricket.fatbin.ptx import LinkSymbols, PtxModule
from cricket.fatbin.writer import LINK_INPUT_PREFIX, NewEntry, container

hostmem = _select.load("cricket._cext.hostmem", "cricket.client.hostmem")

log = logging.getLogger(__name__)

MAX_OPTIONS = 256               # more than every CUjit_option twice: a larger count is garbage
MAX_INPUT = 1 << 31             # bytes of one input


class JitOption(enum.IntEnum):
    """CUjit_option (cuda.h)."""
    MAX_REGISTERS = 0
    THREADS_PER_BLOCK = 1
    WALL_TIME = 2
    INFO_LOG_BUFFER = 3
    INFO_LOG_BUFFER_SIZE_BYTES = 4
    ERROR_LOG_BUFFER = 5
    ERROR_LOG_BUFFER_SIZE_BYTES = 6
    OPTIMIZATION_LEVEL = 7
    TARGET_FROM_CUCONTEXT = 8
    TARGET = 9
    FALLBACK_STRATEGY = 10
    GENERATE_DEBUG_INFO = 11
    LOG_VERBOSE = 12
    GENERATE_LINE_INFO = 13
    CACHE_MODE = 14
    NEW_SM3X_OPT = 15
    FAST_COMPILE = 16
    GLOBAL_SYMBOL_NAMES = 17
    GLOBAL_SYMBOL_ADDRESSES = 18
    GLOBAL_SYMBOL_COUNT = 19
    LTO = 20
    NUM_OPTIONS = 35


class JitInputType(enum.IntEnum):
    """CUjitInputType (cuda.h)."""
    CUBIN = 0
    PTX = 1
    FATBINARY = 2
    OBJECT = 3
    LIBRARY = 4
    NVVM = 5


#: cuLinkAddData/AddFile "does not accept any of" these (cuda.h)
LINKER_ONLY = {JitOption.WALL_TIME, JitOption.INFO_LOG_BUFFER, JitOption.ERROR_LOG_BUFFER,
               JitOption.TARGET_FROM_CUCONTEXT, JitOption.TARGET}
TARGET_ARCH_MASK = 0xFFFF        # CUjit_target: the compute capability, plus 0x10000 "a" / 0x20000 "f"


class LinkError(Exception):
    """A link call failed: ``code`` is the CUresult it returns."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class OptionValue:
    value: int           # the void * of optionValues[i], as an integer
    slot: int            # the address of optionValues[i], where an output option is written back


def read_options(count: int, options: int, values: int, call: str) -> dict[JitOption, OptionValue]:
    """The ``CUjit_option`` array and its value array as {option: value}."""
    if not count:
        return {}
    if count > MAX_OPTIONS or not options or not values:
        raise LinkError(curesult.INVALID_VALUE, f"{call}: {count} options with options={options:#x}, "
                        f"optionValues={values:#x}")
    out: dict[JitOption, OptionValue] = {}
    for i in range(count):
        number = hostmem.load_u32(options + 4 * i)
        if number >= JitOption.NUM_OPTIONS:
            raise LinkError(curesult.INVALID_VALUE, f"{call}: unknown CUjit_option {number}")
        try:
            option = JitOption(number)
        except ValueError:
            option = number                     # a compiler-only option without a name here
        out[option] = OptionValue(hostmem.load_u64(values + 8 * i), values + 8 * i)
    return out


class LogBuffer:
    """One of the caller's log buffers: rewritten whole as lines are added."""

    def __init__(self, buffer: OptionValue | None, size: OptionValue | None) -> None:
        self.address = buffer.value if buffer else 0
        self.capacity = size.value & 0xFFFFFFFF if size else 0     # an unsigned int in the void *
        self.size_slot = size.slot if size else 0
        self.lines: list[str] = []

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.flush()

    def flush(self) -> None:
        if not self.address or not self.capacity:
            return
        text = "\n".join(self.lines).encode()[:self.capacity - 1]
        hostmem.write(self.address, text + b"\0")
        hostmem.store_u64(self.size_slot, len(text) + 1 if text else 0)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class LinkInput:
    name: str
    kind: EntryKind
    arch: int
    payload: bytes
    symbols: LinkSymbols
    kernels: tuple[str, ...]
    ptx_version: tuple[int, int] = (0, 0)


@dataclass
class LinkState:
    """One CUlinkState: its options, inputs, logs and the images cuLinkComplete returned (kept
    until cuLinkDestroy, which owns them)."""
    target: int
    verbose: bool
    info: LogBuffer
    error: LogBuffer
    wall_slot: int = 0
    wall_ms: float = 0.0
    inputs: list[LinkInput] = field(default_factory=list)
    images: list[ctypes.Array] = field(default_factory=list)

    @classmethod
    def create(cls, options: dict[JitOption, OptionValue], device_arch: int) -> "LinkState":
        """cuLinkCreate: checks the options as cuda.h states their rules."""
        if JitOption.FALLBACK_STRATEGY in options:
            raise LinkError(curesult.INVALID_VALUE, "cuLinkCreate: CU_JIT_FALLBACK_STRATEGY \"cannot be used "
                            "with cuLink* APIs as the linker requires exact matches\"")
        if JitOption.THREADS_PER_BLOCK in options and JitOption.TARGET in options:
            raise LinkError(curesult.INVALID_VALUE, "cuLinkCreate: CU_JIT_THREADS_PER_BLOCK cannot be combined "
                            "with CU_JIT_TARGET")
        if options.get(JitOption.LTO, OptionValue(0, 0)).value:
            raise LinkError(curesult.NOT_SUPPORTED, "cuLinkCreate: link-time optimisation (CU_JIT_LTO) is not "
                            "supported (it takes LTO-IR of toolkits before CUDA 12.0)")
        if options.get(JitOption.GLOBAL_SYMBOL_COUNT, OptionValue(0, 0)).value & 0xFFFFFFFF:
            raise LinkError(curesult.NOT_SUPPORTED, "cuLinkCreate: relocating device symbols to host addresses "
                            "(CU_JIT_GLOBAL_SYMBOL_*) is not supported")
        target = device_arch
        if JitOption.TARGET in options and JitOption.TARGET_FROM_CUCONTEXT not in options:
            target = options[JitOption.TARGET].value & TARGET_ARCH_MASK
        state = cls(target=target, verbose=bool(options.get(JitOption.LOG_VERBOSE, OptionValue(0, 0)).value),
                    info=LogBuffer(options.get(JitOption.INFO_LOG_BUFFER),
                                   options.get(JitOption.INFO_LOG_BUFFER_SIZE_BYTES)),
                    error=LogBuffer(options.get(JitOption.ERROR_LOG_BUFFER),
                                    options.get(JitOption.ERROR_LOG_BUFFER_SIZE_BYTES)),
                    wall_slot=options[JitOption.WALL_TIME].slot if JitOption.WALL_TIME in options else 0)
        state.info.flush()
        state.error.flush()
        state._add_wall_time(0.0)
        return state

    def _add_wall_time(self, seconds: float) -> None:
        self.wall_ms += seconds * 1000.0
        if self.wall_slot:
            hostmem.store_u64(self.wall_slot, 0)
            hostmem.store_f32(self.wall_slot, self.wall_ms)

    def _fail(self, code: int, message: str) -> LinkError:
        self.error.add(f"error   : {message}")
        return LinkError(code, message)

    # ------------------------------------------------------------------ inputs

    def add(self, input_type: int, data: bytes | None, path: str | None, name: str,
            options: dict[JitOption, OptionValue], call: str) -> None:
        """cuLinkAddData (``data``) or cuLinkAddFile (``path``)."""
        started = time.perf_counter()
        try:
            refused = LINKER_ONLY & set(options)
            if refused:
                raise LinkError(curesult.INVALID_VALUE, f"{call} takes compiler options only, not "
                                f"{', '.join('CU_JIT_' + o.name for o in sorted(refused))}")
            if data is None:
                data = _read_file(path or "")
            added = self._inputs(input_type, data, path, name or f"<input {len(self.inputs)}>")
            self.inputs += added
            if self.verbose:
                for i in added:
                    self.info.add(f"info    : Adding {i.kind.name} input '{i.name}' ({_arch_name(i)}): "
                                  f"defines {len(i.symbols.defined)} symbol(s), needs "
                                  f"{', '.join(sorted(i.symbols.undefined)) or 'nothing'} from other inputs")
        finally:
            self._add_wall_time(time.perf_counter() - started)

    def _inputs(self, input_type: int, data: bytes, path: str | None, name: str) -> list[LinkInput]:
        try:
            kind = JitInputType(input_type)
        except ValueError:
            raise LinkError(curesult.INVALID_VALUE, f"unknown CUjitInputType {input_type}") from None
        try:
            if kind == JitInputType.PTX:
                return [_ptx_input(data, name)]
            if kind == JitInputType.CUBIN:
                return [_cubin_input(Cubin(data, name), name)]
            if kind == JitInputType.FATBINARY:
                return self._fatbin_inputs(list(iter_containers(memoryview(data), name)), name)
            if kind == JitInputType.OBJECT:
                return self._object_inputs(data, path, name)
            if kind == JitInputType.LIBRARY:
                inputs = [i for member, body in archive_members(data, name)
                          for i in self._object_inputs(body, None, f"{name}({member})", required=False)]
                if not inputs:
                    raise LinkError(curesult.INVALID_IMAGE, f"{name}: no member of the library holds device code")
                return inputs
        except LinkError as exc:
            raise self._fail(exc.code, str(exc)) from None
        except FatbinError as exc:
            code = curesult.INVALID_PTX if kind == JitInputType.PTX else curesult.INVALID_IMAGE
            raise self._fail(code, f"{name}: {exc}") from None
        raise self._fail(curesult.NOT_SUPPORTED, f"{name}: {kind.name} inputs are not supported "
                         "(PTX, cubins, fatbins, host objects and libraries are)")

    def _fatbin_inputs(self, fatbins: list[Fatbin], name: str) -> list[LinkInput]:
        """From each container: the PTX for the highest architecture up to the target (the emulator
        runs PTX), else the cubin for the target."""
        out: list[LinkInput] = []
        for fb in fatbins:
            for part in (fb, *fb.prelinked):
                entries = part.entries
                ptx = [e for e in entries if e.is_ptx]
                fitting = [e for e in ptx if e.arch <= self.target]
                if ptx:
                    best = max(fitting or ptx, key=lambda e: e.arch)
                    out.append(_ptx_input(best.payload, name))
                    continue
                cubins = [e for e in entries if e.is_elf and e.arch == self.target]
                if not cubins:
                    have = ", ".join(e.arch_name for e in entries) or "nothing"
                    raise LinkError(curesult.NO_BINARY_FOR_GPU, f"{name}: no PTX and no cubin for sm_{self.target} "
                                    f"(it holds {have})")
                out.append(_cubin_input(cubins[0].cubin, name))
        if not out:
            raise LinkError(curesult.INVALID_IMAGE, f"{name}: no fatbin container in the input")
        return out

    def _object_inputs(self, data: bytes, path: str | None, name: str, required: bool = True) -> list[LinkInput]:
        """The device code of a host object (a library member holding none is passed over)."""
        if path is None:
            with tempfile.NamedTemporaryFile(suffix=".o") as f:
                f.write(data)
                f.flush()
                return self._object_inputs(data, f.name, name, required)
        code = find_device_code(path)
        inputs = [_cubin_input(c, name) for c in code.cubins]
        if code.fatbins:
            inputs += self._fatbin_inputs(code.fatbins, name)
        if not inputs and required:
            raise LinkError(curesult.INVALID_IMAGE, f"{name}: the object holds no device code")
        return inputs

    # ------------------------------------------------------------------ completion

    def complete(self) -> tuple[int, int]:
        """cuLinkComplete: (address, size) of the linked image, owned by this state."""
        started = time.perf_counter()
        try:
            if not self.inputs:
                raise self._fail(curesult.INVALID_VALUE, "no input to link")
            self._resolve()
            image = container([NewEntry(i.kind, i.arch, i.payload, LINK_INPUT_PREFIX + i.name, i.ptx_version)
                               for i in self.inputs])
            buffer = ctypes.create_string_buffer(image, len(image))
            self.images.append(buffer)
            kernels = [k for i in self.inputs for k in i.kernels]
            log.debug("linked %d input(s) for sm_%d: %d-byte image, kernels %s", len(self.inputs), self.target,
                      len(image), ", ".join(kernels) or "none")
            self.info.add(f"info    : Linked {len(self.inputs)} input(s) for sm_{self.target} into a "
                          f"{len(image)}-byte image: {len(kernels)} kernel(s)"
                          + (f" ({', '.join(kernels)})" if self.verbose and kernels else ""))
            return ctypes.addressof(buffer), len(image)
        finally:
            self._add_wall_time(time.perf_counter() - started)

    def _resolve(self) -> None:
        """Every needed symbol defined by some input, none defined twice (weak ones may be)."""
        first: dict[str, str] = {}
        for i in self.inputs:
            for symbol in sorted(i.symbols.defined):
                if symbol in first and symbol not in i.symbols.weak:
                    raise self._fail(curesult.INVALID_IMAGE, f"Multiple definition of '{symbol}' in "
                                     f"'{i.name}', first defined in '{first[symbol]}'")
                first.setdefault(symbol, i.name)
        missing = [(symbol, i.name) for i in self.inputs for symbol in sorted(i.symbols.undefined)
                   if symbol not in first]
        for symbol, where in missing:
            self.error.add(f"error   : Undefined reference to '{symbol}' in '{where}'")
        if missing:
            # An inference, not a measurement: NVIDIA's linker reports an undefined reference from
            # cuLinkComplete as CUDA_ERROR_INVALID_IMAGE in the reports we found (numba's linker tests)
            raise LinkError(curesult.INVALID_IMAGE, f"undefined reference to '{missing[0][0]}' in "
                            f"'{missing[0][1]}'" + (f" and {len(missing) - 1} more" if len(missing) > 1 else ""))


def _arch_name(i: LinkInput) -> str:
    return f"{'compute' if i.kind == EntryKind.PTX else 'sm'}_{i.arch}"


def _ptx_input(data: bytes, name: str) -> LinkInput:
    ptx = PtxModule.from_bytes(data, name)
    return LinkInput(name, EntryKind.PTX, ptx.arch, ptx.text.encode(), ptx.link_symbols, ptx.entry_names,
                     ptx.version)


def _cubin_input(cubin: Cubin, name: str) -> LinkInput:
    return LinkInput(name, EntryKind.ELF, cubin.arch, bytes(cubin.data), cubin.link_symbols, cubin.kernel_names)


def _read_file(path: str) -> bytes:
    """cuLinkAddFile's input, read by the client from the application's file system."""
    try:
        size = os.stat(path).st_size
        if size > MAX_INPUT:
            raise LinkError(curesult.INVALID_VALUE, f"{path}: {size} bytes, more than the {MAX_INPUT} taken")
        with open(path, "rb") as f:
            return f.read(MAX_INPUT)
    except FileNotFoundError:
        raise LinkError(curesult.FILE_NOT_FOUND, f"{path}: no such file") from None
    except OSError as exc:
        raise LinkError(curesult.FILE_NOT_FOUND, f"{path}: cannot read ({exc.strerror})") from None
