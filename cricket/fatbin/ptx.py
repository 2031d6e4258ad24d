"""PTX text: version, target, a parameter layout for every ``.entry``, and the symbols a linker
resolves across modules (``link_symbols``).

The layout follows the PTX rules nvcc and ptxas use for the kernel parameter
buffer: each parameter at the next multiple of its alignment, where the
alignment is the ``.align`` of an aggregate (``.b8 name[N]``) or the natural
size of a scalar. On sm_100+ nvcc writes pointers as ``.u64 .ptr .align 1``;
that ``.align`` is the pointee's, not the parameter's, and is ignored.
"""
from __future__ import annotations

import functools
import re
from typing import NamedTuple

from .errors import KernelNotFoundError, PtxError
from .layout import KernelLayout, KernelParam

_SCALAR_SIZES = {
    "b8": 1, "s8": 1, "u8": 1,
    "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "s64": 8, "u64": 8, "f64": 8,
    "b128": 16,
}
_STATE_SPACES = {"global", "const", "local", "shared"}

_ENTRY = re.compile(
    r"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.entry[ \t]+([\w$.]+)[ \t]*\(([^)]*)\)([^{;]*)[{;]",
    re.MULTILINE)
_DIRECTIVE = re.compile(r"\.(maxntid|reqntid|maxnreg|minnctapersm)[ \t]+([0-9, \t]+)")
_VERSION = re.compile(r"^[ \t]*\.version[ \t]+(\d+)\.(\d+)", re.MULTILINE)
_TARGET = re.compile(r"^[ \t]*\.target[ \t]+([^\n]+)", re.MULTILINE)
_ADDRESS_SIZE = re.compile(r"^[ \t]*\.address_size[ \t]+(\d+)", re.MULTILINE)
_ARRAY = re.compile(r"^([\w$.]+)\[(\d+)\]$")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_BOUNDARY = re.compile(r"[{};]")
_LINKAGE = re.compile(r"\.(visible|extern|weak|common)\b")
# a function header: `.func (.param .b32 retval) name(`, `.entry name(`
_FUNCTION = re.compile(r"\.(entry|func)\s*(?:\([^)]*\)\s*)?([\w$.]+)")
# a module-scope variable in a space the linker resolves (.shared externs are dynamic shared memory)
_VARIABLE = re.compile(r"\.(global|const)\b")
_VARIABLE_NAME = re.compile(r"([\w$.]+)\s*(?:\[[^\]]*\]\s*)*$")


def _arch_of(targets: list[str]) -> int:
    for t in targets:
        m = re.match(r"(?:sm|compute)_(\d+)", t)
        if m:
            return int(m.group(1))
    return 0


class LinkSymbols(NamedTuple):
    """What a relocatable module offers and needs at link time: ``defined`` the names of its
    ``.visible``/``.weak``/``.common`` functions and ``.global``/``.const`` variables (``weak`` the
    subset that may be defined again elsewhere), ``undefined`` those it declares ``.extern``
    without defining them."""
    defined: frozenset[str]
    weak: frozenset[str]
    undefined: frozenset[str]


class PtxModule:
    """One PTX text. Entries are found on first use and cached."""

    def __init__(self, text: str, origin: str = "<ptx>"):
        self.text = text
        self.origin = origin
        m = _VERSION.search(text)
        if m is None:
            raise PtxError(f"{origin}: no .version directive; this is not PTX text")
        self.version = (int(m.group(1)), int(m.group(2)))
        t = _TARGET.search(text)
        self.targets = [x.strip() for x in t.group(1).split(",")] if t else []
        self.arch = _arch_of(self.targets)
        a = _ADDRESS_SIZE.search(text)
        self.address_size = int(a.group(1)) if a else 64

    @classmethod
    def from_bytes(cls, data: bytes, origin: str = "<ptx>") -> "PtxModule":
        end = data.find(b"\0")
        raw = data if end < 0 else data[:end]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PtxError(f"{origin}: PTX is not UTF-8 text ({exc}); the image is corrupt") from exc
        return cls(text, origin)

    @functools.cached_property
    def _entries(self) -> dict[str, KernelLayout]:
        out = {}
        for m in _ENTRY.finditer(self.text):
            name = m.group(1)
            out[name] = self._layout(name, m.group(2), m.group(3))
        return out

    @property
    def entry_names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def has_kernel(self, name: str) -> bool:
        return name in self._entries

    def kernel(self, name: str) -> KernelLayout:
        try:
            return self._entries[name]
        except KeyError:
            raise KernelNotFoundError(f"{self.origin}: no .entry {name!r} in this PTX") from None

    def kernels(self) -> list[KernelLayout]:
        return list(self._entries.values())

    @functools.cached_property
    def link_symbols(self) -> LinkSymbols:
        """The module-scope declarations a linker resolves (function bodies are skipped)."""
        text = _COMMENT.sub(" ", self.text)
        defined: set[str] = set()
        weak: set[str] = set()
        declared: set[str] = set()
        depth = 0
        start = 0
        initializer = False          # inside `= { ... }` of a variable at module scope
        for m in _BOUNDARY.finditer(text):
            token = m.group()
            if depth == 0 and not initializer:
                statement = text[start:m.start()]
                if token == "{" and "=" in statement:
                    initializer = True
                    continue
                if token != "}":
                    self._declaration(statement, token == "{", defined, weak, declared)
            if token == "{" and not initializer:
                depth += 1
            elif token == "}" and not initializer:
                depth = max(0, depth - 1)
            elif token == ";" and initializer:
                self._declaration(text[start:m.start()], True, defined, weak, declared)
                initializer = False
            if depth == 0 and not initializer:
                start = m.end()
        return LinkSymbols(frozenset(defined), frozenset(weak), frozenset(declared - defined))

    @staticmethod
    def _declaration(statement: str, has_body: bool, defined: set[str], weak: set[str],
                     declared: set[str]) -> None:
        linkage = set(_LINKAGE.findall(statement))
        f = _FUNCTION.search(statement)
        if f is not None:
            name = f.group(2)
        elif _VARIABLE.search(statement):
            m = _VARIABLE_NAME.search(statement.split("=", 1)[0].strip())
            if m is None:
                return
            name = m.group(1)
            has_body = "extern" not in linkage      # a variable without .extern is a definition
        else:
            return
        if "extern" in linkage and not has_body:
            declared.add(name)
        elif has_body and (linkage & {"visible", "weak", "common"} or (f is not None and f.group(1) == "entry")):
            defined.add(name)
            if linkage & {"weak", "common"}:
                weak.add(name)

    def _layout(self, name: str, param_text: str, directives: str) -> KernelLayout:
        params = []
        offset = 0
        decls = [d.strip() for d in param_text.split(",")]
        decls = [d for d in decls if d]
        for ordinal, decl in enumerate(decls):
            size, align, is_pointer = self._param(name, ordinal, decl)
            offset = (offset + align - 1) // align * align
            params.append(KernelParam(ordinal, offset, size, is_pointer, align))
            offset += size
        tuning = {}
        for d in _DIRECTIVE.finditer(directives):
            values = [int(v) for v in re.split(r"[,\s]+", d.group(2).strip()) if v]
            tuning[d.group(1)] = values

        def dims(key):
            v = tuning.get(key)
            return tuple((v + [1, 1, 1])[:3]) if v else None

        maxnreg = tuning.get("maxnreg")
        return KernelLayout(name=name, params=tuple(params), param_size=offset, source="ptx",
                            arch=self.arch, max_threads=dims("maxntid"), reqntid=dims("reqntid"),
                            max_registers=maxnreg[0] if maxnreg else None)

    def _param(self, kernel: str, ordinal: int, decl: str) -> tuple[int, int, bool | None]:
        tokens = decl.split()
        if not tokens or tokens[0] != ".param":
            raise PtxError(f"{self.origin}: .entry {kernel} parameter {ordinal} is {decl!r}, "
                           f"not a .param declaration")
        m = _ARRAY.match(tokens[-1])
        count = int(m.group(2)) if m else 1
        scalar = None
        align = None
        is_ptr = False
        it = iter(tokens[1:-1])
        for tok in it:
            word = tok.lstrip(".")
            if word == "align":
                try:
                    align = int(next(it))
                except (StopIteration, ValueError):
                    raise PtxError(f"{self.origin}: .entry {kernel} parameter {ordinal}: "
                                   f".align without a number in {decl!r}") from None
            elif word == "ptr":
                is_ptr = True
            elif word in _SCALAR_SIZES:
                scalar = _SCALAR_SIZES[word]
            elif word in _STATE_SPACES:
                pass
            else:
                raise PtxError(f"{self.origin}: .entry {kernel} parameter {ordinal}: unknown "
                               f"qualifier {tok!r} in {decl!r}")
        if scalar is None:
            raise PtxError(f"{self.origin}: .entry {kernel} parameter {ordinal} has no type in {decl!r}")
        if is_ptr or align is None:
            align = scalar
        if align <= 0 or align & (align - 1):
            raise PtxError(f"{self.origin}: .entry {kernel} parameter {ordinal}: alignment {align} "
                           f"is not a power of two")
        size = scalar * count
        if is_ptr:
            pointer: bool | None = True
        elif size == 8 and count == 1:
            pointer = None
        else:
            pointer = False
        return size, align, pointer
