"""A parser for the PTX that nvcc emits: module directives, variables, entries, functions, bodies.

Names declared inside ``{ }`` scopes (inline asm, call sequences) are renamed to be unique within the
function, so later stages see one flat namespace per function.
"""
from __future__ import annotations

import contextlib
import re
import struct
import threading
from typing import Iterator

from ..errors import CUDA_ERROR_INVALID_PTX, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, EmuError
from .ast import Addr, Function, Group, Imm, Instr, Label, Module, Not, Pair, Reg, Sink, Special, Sym, VarDecl, Vec

_TOKEN = re.compile(r"""
  (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
 |(?P<str>"(?:[^"\\]|\\.)*")
 |(?P<fhex>0[fF][0-9a-fA-F]{8}(?![\w.])|0[dD][0-9a-fA-F]{16}(?![\w.]))
 |(?P<num>0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+U?)
 |(?P<dir>\.[A-Za-z_0-9]\w*(?:::\w+)*)
 |(?P<id>[%$A-Za-z_][\w$]*)
 |(?P<punct>[{}\[\]();,:+\-!|@=<>*])
""", re.S | re.X)

# The PTX ISA's special registers (section 10), without the '%'; the numbered families below.
SPECIAL_REGS = {
    "tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid",
    "clock", "clock64", "clock_hi", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge",
    "lanemask_gt", "globaltimer", "globaltimer_lo", "globaltimer_hi", "total_smem_size",
    "dynamic_smem_size", "aggr_smem_size", "is_explicit_cluster", "clusterid",
    "nclusterid", "cluster_ctaid", "cluster_nctaid", "cluster_ctarank", "cluster_nctarank",
    "reserved_smem_offset_begin", "reserved_smem_offset_end", "reserved_smem_offset_cap",
    "current_graph_exec", "perctamemoryoffset", "perctamemorysize",
}
_NUMBERED_SPECIAL = re.compile(r"envreg(?:[12]?\d|3[01])|pm[0-7](?:_64)?|reserved_smem_offset_[01]")
# Operand suffixes of the SIMD video instructions: half-word (.h10) and byte (.b3210) selectors.
_SELECTOR = re.compile(r"\.[hb]\d{1,4}")
VIDEO_SELECTOR_OPS = {f"v{op}{n}" for op in ("add", "sub", "avrg", "absdiff", "min", "max", "set") for n in (2, 4)}
VIDEO_SELECTOR_OPS |= {"vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset"}   # scalar
# The one predefined constant (PTX ISA 4.4, "Predefined Identifiers"): the warp size, read as a
# special register of that name.
WARP_SZ = "WARP_SZ"
SPACES = ("global", "const", "shared", "local", "param", "tex", "surf", "reg", "sreg")
LINKAGES = ("visible", "extern", "weak", "common")
SUPPORTED_MAJOR = 9


def iter_tokens(text: str, line: int = 1) -> Iterator[tuple[str, str, int]]:
    """(kind, text, line) tokens of PTX text as they are reached, whitespace and comments dropped."""
    pos = 0
    n = len(text)
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise EmuError(CUDA_ERROR_INVALID_PTX, f"PTX syntax error at line {line}: unexpected {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        s = m.group()
        if kind != "ws":
            yield kind, s, line
        line += s.count("\n")
        pos = m.end()
    yield "eof", "", line


def tokenize(text: str, line: int = 1) -> list[tuple[str, str, int]]:
    """Split PTX text into (kind, text, line) tokens, dropping whitespace and comments."""
    return list(iter_tokens(text, line))


class _Tokens:
    """The tokens of a text, made as the parser reads on: a malformed module (a junk upload of
    hundreds of MiB) fails where its junk starts, never holding a token list of all of it."""

    def __init__(self, text: str, line: int) -> None:
        self._more = iter_tokens(text, line)
        self._made: list[tuple[str, str, int]] = []

    def __getitem__(self, k: int) -> tuple[str, str, int]:
        made = self._made
        try:
            while k >= len(made):
                made.append(next(self._more))
        except StopIteration:
            raise IndexError("read past the end of the PTX text") from None
        return made[k]


def parse_int(s: str) -> int:
    s = s.rstrip("U")
    if s[:2] in ("0x", "0X"):
        return int(s[2:], 16)
    if s[:2] in ("0b", "0B"):
        return int(s[2:], 2)
    if len(s) > 1 and s[0] == "0" and s.isdigit():
        return int(s, 8)
    return int(s)


def parse_fhex(s: str) -> Imm:
    if s[1] in "fF":
        return Imm(struct.unpack("<f", int(s[2:], 16).to_bytes(4, "little"))[0], "f32")
    return Imm(struct.unpack("<d", int(s[2:], 16).to_bytes(8, "little"))[0], "f64")


# Modules larger than this parse function bodies on first use: CuPy's libcub carries 21 MB of PTX
# (383 kernels) of which a program launches a handful.
LAZY_BODIES = 1 << 20
# NVIDIA's device runtime library (cudadevrt, linked into every -rdc=true -lcudadevrt program): about
# 800 KB of PTX whose launch functions the emulator replaces (device_launch.py); its bodies are
# parsed only if something calls them, whatever the size.
_DEVICE_RUNTIME = re.compile(r"^\.visible\s+\.func\b[^;{]*\b__cudaCDP2LaunchDeviceV2\s*\(", re.M)
_LAZY = "__cricket_lazy_"
_BRACES = re.compile(r'[{}]|"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_FUNCTION_HEAD = re.compile(r"\.(?:entry|func)\b")


def split_bodies(text: str) -> tuple[str, list[tuple[str, int]]]:
    """Cut the function bodies out of ``text``: (skeleton, bodies).

    In the skeleton the k-th body reads ``{ __cricket_lazy_k }`` followed by the newlines it held,
    so later lines keep their numbers; a body is (its text, the line of its opening brace). A
    top-level brace group is a body when the statement before it declares an .entry or .func
    (an initialiser follows ``=``; a .section names no function).
    """
    parts: list[str] = []
    bodies: list[tuple[str, int]] = []
    depth = 0
    prev = 0             # end of the last top-level brace group
    kept = 0             # text before this offset is already in ``parts``
    opened = 0
    is_body = False
    line = 1
    counted = 0          # ``line`` is the line number at offset ``counted``
    for m in _BRACES.finditer(text):
        c = m.group()
        if c == "{":
            if depth == 0:
                opened = m.start()
                head = text[prev:opened]
                head = head[head.rfind(";") + 1:]
                is_body = bool(_FUNCTION_HEAD.search(head)) and not head.rstrip().endswith("=")
                if not is_body and not head.rstrip().endswith("=") and ".section" not in head:
                    # no PTX has a brace group anywhere else: junk, refused before the rest is read
                    raise EmuError(CUDA_ERROR_INVALID_PTX, f"PTX syntax error at line "
                                                           f"{line + text.count(chr(10), counted, opened)}: a "
                                                           "brace group that is no function body, initialiser "
                                                           "or section")
            depth += 1
        elif c == "}":
            if depth == 0:
                continue            # unbalanced: left for the parser to report
            depth -= 1
            if depth == 0:
                if is_body:
                    inner = text[opened + 1:m.start()]
                    line += text.count("\n", counted, opened)
                    counted = opened
                    parts.append(text[kept:opened])
                    parts.append("{ %s%d }" % (_LAZY, len(bodies)) + "\n" * inner.count("\n"))
                    kept = m.end()
                    bodies.append((inner, line))
                prev = m.end()
    parts.append(text[kept:])
    return "".join(parts), bodies


_BODY_LOCK = threading.Lock()


def ensure_body(fn: Function) -> Function:
    """Parse a function body kept as source (see ``LAZY_BODIES``). Programs are shared between
    devices and server threads: the body is parsed once, and published only when complete."""
    if fn.source is None:
        return fn
    with _BODY_LOCK:
        if fn.source is not None:
            text, line = fn.source
            parsed = Function(name=fn.name, kind=fn.kind, linkage=fn.linkage, params=fn.params, rets=fn.rets)
            with _malformed_is_invalid_ptx():
                _Parser(text + "\n}", line).parse_body(parsed)
            fn.regs, fn.locals, fn.body = parsed.regs, parsed.locals, parsed.body
            fn.source = None
    return fn


class _Parser:
    def __init__(self, text: str, line: int = 1, bodies: list[tuple[str, int]] | None = None) -> None:
        self.toks = _Tokens(text, line)
        self.bodies = bodies
        self.i = 0
        self.scopes: list[dict[str, str]] = []
        self.scope_counter = 0
        self.loc: tuple[int, int] | None = None
        self.reg_names: set[str] = set()

    # ---- token helpers -----------------------------------------------------------------------
    def peek(self, k: int = 0) -> tuple[str, str, int]:
        return self.toks[self.i + k]

    def next(self) -> tuple[str, str, int]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, msg: str) -> EmuError:
        return EmuError(CUDA_ERROR_INVALID_PTX, f"PTX parse error at line {self.peek()[2]}: {msg}")

    def expect(self, s: str) -> None:
        t = self.next()
        if t[1] != s:
            self.i -= 1
            raise self.error(f"expected {s!r}, found {t[1]!r}")

    def accept(self, s: str) -> bool:
        if self.toks[self.i][1] == s:
            self.i += 1
            return True
        return False

    def skip_to(self, s: str) -> None:
        while self.peek()[1] != s and self.peek()[0] != "eof":
            self.i += 1
        self.accept(s)

    def skip_braces(self) -> None:
        self.expect("{")
        depth = 1
        while depth:
            k, s, _ = self.next()
            if k == "eof":
                raise self.error("unbalanced braces")
            if s == "{":
                depth += 1
            elif s == "}":
                depth -= 1

    # ---- module ------------------------------------------------------------------------------
    def module(self) -> Module:
        mod = Module()
        while True:
            kind, s, _ = self.peek()
            if kind == "eof":
                break
            if s == ".version":
                self.next()
                v = self.next()[1]
                major, _, minor = v.partition(".")
                mod.version = (int(major), int(minor or 0))
                if mod.version[0] > SUPPORTED_MAJOR:
                    raise EmuError(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                                   f"PTX ISA version {v} is newer than the emulator understands (up to {SUPPORTED_MAJOR}.x)")
            elif s == ".target":
                self.next()
                mod.target.append(self.next()[1])
                while self.accept(","):
                    mod.target.append(self.next()[1])
            elif s == ".address_size":
                self.next()
                mod.address_size = parse_int(self.next()[1])
                if mod.address_size != 64:
                    raise EmuError(CUDA_ERROR_INVALID_PTX, "only .address_size 64 is supported")
            elif s == ".file":
                self.next()
                idx = parse_int(self.next()[1])
                name = self.next()[1].strip('"')
                mod.files[idx] = name
                while self.accept(","):
                    self.next()
            elif s == ".section":
                self.next()
                self.next()
                self.skip_braces()
            elif s == ".pragma":
                self.skip_to(";")
            elif s in (".visible", ".extern", ".weak", ".common", ".entry", ".func", ".global", ".const",
                       ".shared", ".local", ".alias"):
                self.toplevel(mod)
            elif s == ";":
                self.next()
            else:
                raise self.error(f"unexpected {s!r} at module level")
        return mod

    def toplevel(self, mod: Module) -> None:
        linkage = ""
        while self.peek()[1][1:] in LINKAGES and self.peek()[1].startswith("."):
            linkage = self.next()[1][1:]
        s = self.peek()[1]
        if s == ".entry" or s == ".func":
            fn = self.function(linkage)
            old = mod.functions.get(fn.name)
            if old is None or (old.body is None and fn.body is not None):
                mod.functions[fn.name] = fn
        elif s == ".alias":
            self.skip_to(";")
        else:
            var = self.var_decl(linkage)
            self.expect(";")
            old = mod.variables.get(var.name)
            if old is None or (old.linkage == "extern" and var.linkage != "extern"):
                mod.variables[var.name] = var

    # ---- declarations ------------------------------------------------------------------------
    def var_decl(self, linkage: str = "") -> VarDecl:
        space = self.next()[1][1:]
        space = space.split("::")[0]
        align = 0
        vector = 1
        typ = None
        while True:
            s = self.peek()[1]
            if s == ".align":
                self.next()
                align = parse_int(self.next()[1])
            elif s in (".v2", ".v4", ".v8"):
                vector = int(self.next()[1][2:])
            elif s in (".ptr", ".global", ".shared", ".const", ".local"):
                self.next()
            elif s == ".attribute":
                self.next()
                self.skip_parens()
            elif s.startswith(".") and typ is None:
                typ = self.next()[1][1:]
            else:
                break
        if typ is None:
            raise self.error("declaration without a type")
        name = self.next()[1]
        decl = VarDecl(space=space, name=name, type=typ, align=align, linkage=linkage, vector=vector)
        if self.accept("<"):
            decl.count = parse_int(self.next()[1])
            self.expect(">")
            decl.init = ["range"]
            return decl
        while self.accept("["):
            if self.accept("]"):
                decl.count = (decl.count or 1) * 0
                continue
            n = parse_int(self.next()[1])
            decl.count = n if decl.count is None else decl.count * n
            self.expect("]")
        if self.accept("="):
            decl.init = self.initialiser()
        return decl

    def skip_parens(self) -> None:
        self.expect("(")
        depth = 1
        while depth:
            s = self.next()[1]
            if s == "(":
                depth += 1
            elif s == ")":
                depth -= 1

    def initialiser(self) -> list:
        out: list = []

        def item():
            if self.accept("{"):
                if not self.accept("}"):
                    item()
                    while self.accept(","):
                        item()
                    self.expect("}")
                return
            neg = self.accept("-")
            k, s, _ = self.next()
            if k == "num":
                v = float(s) if ("." in s or "e" in s.lower()) and not s.lower().startswith("0x") else parse_int(s)
                out.append(-v if neg else v)
            elif k == "fhex":
                v = parse_fhex(s).value
                out.append(-v if neg else v)
            elif k == "id" and s in ("generic", "global", "shared", "const"):
                self.expect("(")
                name = self.next()[1]
                off = 0
                if self.accept("+"):
                    off = parse_int(self.next()[1])
                self.expect(")")
                out.append(("addr", name, off))
            elif k == "id":
                off = 0
                if self.accept("+"):
                    off = parse_int(self.next()[1])
                out.append(("addr", s, off))
            else:
                raise self.error(f"bad initialiser element {s!r}")
        item()
        return out

    def param_list(self) -> list[VarDecl]:
        params = []
        self.expect("(")
        if self.accept(")"):
            return params
        while True:
            if self.peek()[1] in (".param", ".reg"):
                params.append(self.var_decl())
            else:
                raise self.error(f"unexpected {self.peek()[1]!r} in parameter list")
            if self.accept(")"):
                return params
            self.expect(",")

    # ---- functions ---------------------------------------------------------------------------
    def function(self, linkage: str) -> Function:
        kind = self.next()[1][1:]
        rets: list[VarDecl] = []
        if kind == "func" and self.peek()[1] == "(":
            rets = self.param_list()
        name = self.next()[1]
        fn = Function(name=name, kind=kind, linkage=linkage, rets=rets)
        if self.peek()[1] == "(":
            fn.params = self.param_list()
        # performance directives until the body or ';'
        while self.peek()[1] not in ("{", ";"):
            k, s, _ = self.next()
            if k == "eof":
                raise self.error(f"unterminated declaration of {name}")
            if s.startswith("."):
                vals = []
                while self.peek()[0] == "num":
                    vals.append(parse_int(self.next()[1]))
                    self.accept(",")
                fn.directives[s[1:]] = vals
        if self.accept(";"):
            return fn
        self.expect("{")
        if self.bodies is not None and self.peek()[1].startswith(_LAZY):
            fn.source = self.bodies[int(self.next()[1][len(_LAZY):])]
            fn.body = []
            self.expect("}")
            return fn
        self.parse_body(fn)
        return fn

    def parse_body(self, fn: Function) -> None:
        """The body after its opening brace, through the closing one."""
        self.scopes = [{}]
        for p in fn.params + fn.rets:
            self.scopes[0][p.name] = p.name
        fn.body = []
        self.body(fn)
        self.scopes = []

    def declare(self, name: str) -> str:
        if len(self.scopes) == 1:
            new = name
        else:
            self.scope_counter += 1
            new = f"{name}${'s'}{self.scope_counter}"
        self.scopes[-1][name] = new
        return new

    def lookup(self, name: str) -> str | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def body(self, fn: Function) -> None:
        while True:
            kind, s, _ = self.peek()
            if kind == "eof":
                raise self.error(f"unterminated body of {fn.name}")
            if s == "}":
                self.next()
                if len(self.scopes) == 1:
                    return
                self.scopes.pop()
                continue
            if s == "{":
                self.next()
                self.scopes.append({})
                continue
            if s == ".reg":
                self.next()
                typ = None
                while self.peek()[1].startswith("."):
                    t = self.next()[1][1:]
                    if t not in ("v2", "v4"):
                        typ = t
                while True:
                    name = self.next()[1]
                    if self.accept("<"):
                        n = parse_int(self.next()[1])
                        self.expect(">")
                        for k in range(n):
                            fn.regs[self.declare(f"{name.lstrip('%')}{k}")] = typ
                    else:
                        new = self.declare(name.lstrip("%"))
                        fn.regs[new] = typ
                        if not name.startswith("%"):
                            self.reg_names.add(new)
                    if not self.accept(","):
                        break
                self.expect(";")
                continue
            if s in (".local", ".shared", ".param", ".global", ".const"):
                decl = self.var_decl()
                self.expect(";")
                decl.name = self.declare(decl.name)
                fn.locals.append(decl)
                continue
            if s == ".loc":
                # ".loc file line col [, function_name X, inlined_at f l c]" ends at the end of its line
                line_no = self.next()[2]
                f = parse_int(self.next()[1])
                line = parse_int(self.next()[1])
                while self.peek()[2] == line_no and self.peek()[0] != "eof":
                    self.next()
                self.loc = (f, line)
                continue
            if s in (".pragma", ".maxnreg", ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm"):
                self.skip_to(";")
                continue
            if s == ".section":
                self.next()
                self.next()
                self.skip_braces()
                continue
            if kind == "id" and self.peek(1)[1] == ":" and self.peek(2)[1] == ".callprototype":
                self.skip_to(";")          # the prototype of an indirect call: the call names it
                continue
            if kind == "id" and self.peek(1)[1] == ":":
                self.next()
                self.next()
                fn.body.append(Label(self.label_name(s)))
                continue
            if s == ";":
                self.next()
                continue
            fn.body.append(self.instruction())

    def label_name(self, s: str) -> str:
        return s

    def instruction(self) -> Instr:
        guard = None
        if self.accept("@"):
            neg = self.accept("!")
            guard = (self.reg_operand(), neg)
        k, op, line = self.next()
        if k != "id":
            self.i -= 1
            raise self.error(f"expected an opcode, found {op!r}")
        mods = []
        while self.peek()[0] == "dir":
            mods.append(self.next()[1][1:])
        operands = []
        if not self.accept(";"):
            while True:
                if op == "vmad" and self.peek()[1] == "-" and self.peek(1)[0] == "id":
                    self.next()             # vmad's negated operand: the modifier "neg<operand index>"
                    mods.append(f"neg{len(operands)}")
                operands.append(self.operand())
                kind, s, _ = self.peek()
                if kind == "dir" and _SELECTOR.fullmatch(s):
                    # a SIMD video instruction's half-word/byte selector or mask: kept as the
                    # modifier "sel<operand index>_<selector>", e.g. sel1_h10
                    if op not in VIDEO_SELECTOR_OPS:
                        raise self.error(f"operand selector {s} on {op} (only video instructions take one)")
                    self.next()
                    mods.append(f"sel{len(operands) - 1}_{s[1:]}")
                if self.accept(";"):
                    break
                self.expect(",")
        return Instr(op=op, mods=tuple(mods), operands=tuple(operands), guard=guard, loc=self.loc)

    def reg_operand(self) -> Reg:
        o = self.operand()
        if not isinstance(o, Reg):
            raise self.error("expected a predicate register")
        return o

    def operand(self):
        kind, s, _ = self.peek()
        if s == "{":
            self.next()
            items = [self.operand()]
            while self.accept(","):
                items.append(self.operand())
            self.expect("}")
            return Vec(tuple(items))
        if s == "(":
            self.next()
            items = []
            if not self.accept(")"):
                items.append(self.operand())
                while self.accept(","):
                    items.append(self.operand())
                self.expect(")")
            return Group(tuple(items))
        if s == "[":
            self.next()
            base = None
            off = 0
            if self.peek()[0] == "id":
                base = self.name_operand(self.next()[1])
            while self.peek()[1] in ("+", "-"):
                sign = -1 if self.next()[1] == "-" else 1
                if self.accept("-"):
                    sign = -sign
                off += sign * parse_int(self.next()[1])
            if base is None and self.peek()[0] == "num":
                off = parse_int(self.next()[1])
            if self.peek()[1] == ",":        # texture/surface coordinates: [tex, {x, y}]
                items = [base]
                while self.accept(","):
                    items.append(self.operand())
                self.expect("]")
                return Group(tuple(items))
            self.expect("]")
            if isinstance(base, Sym):
                return Addr(Sym(base.name), base.offset + off)
            return Addr(base, off)
        if s == "!":
            self.next()
            return Not(self.reg_operand())
        if s == "-":
            self.next()
            v = self.operand()
            if not isinstance(v, Imm):
                raise self.error("'-' before a non-constant operand")
            return Imm(-v.value, v.kind)
        if kind == "fhex":
            self.next()
            return parse_fhex(s)
        if kind == "num":
            self.next()
            if ("." in s or "e" in s.lower()) and not s.lower().startswith("0x"):
                return Imm(float(s), "float")
            return Imm(parse_int(s), "int")
        if kind == "id":
            self.next()
            o = self.name_operand(s)
            if self.peek()[1] == "|":
                self.next()
                return Pair(o, self.operand())
            return o
        raise self.error(f"unexpected operand {s!r}")

    def name_operand(self, s: str):
        if s == "_":
            return Sink()
        if s.startswith("%"):
            bare = s[1:]
            if bare in SPECIAL_REGS or _NUMBERED_SPECIAL.fullmatch(bare):
                if self.peek()[0] == "dir" and self.peek()[1] in (".x", ".y", ".z"):
                    bare += self.next()[1]
                return Special(bare)
            r = self.lookup(bare)
            if r is None or r in self.reg_names:
                raise self.error(f"undeclared register {s}")
            return Reg(r)
        if s == WARP_SZ:
            return Special(WARP_SZ)
        name = self.lookup(s) or s
        if name in self.reg_names:            # a register declared without '%'
            return Reg(name)
        off = 0
        if self.peek()[1] == "+" and self.peek(1)[0] == "num" and self.peek(2)[1] != "]":
            self.next()
            off = parse_int(self.next()[1])
        return Sym(name, off)


@contextlib.contextmanager
def _malformed_is_invalid_ptx() -> Iterator[None]:
    """A token the parser cannot read (``.align!4``, a number out of range) is malformed PTX:
    CUDA_ERROR_INVALID_PTX, as the driver's JIT reports it, not an internal error."""
    try:
        yield
    except (ValueError, IndexError, KeyError, OverflowError, RecursionError) as exc:
        raise EmuError(CUDA_ERROR_INVALID_PTX, f"PTX parse error: {type(exc).__name__}: {exc}") from None


def parse(text: str) -> Module:
    """Parse one PTX module; in one over ``LAZY_BODIES`` characters, and in the device runtime
    library, function bodies are parsed on first use (``ensure_body``)."""
    with _malformed_is_invalid_ptx():
        if len(text) > LAZY_BODIES or _DEVICE_RUNTIME.search(text):
            skeleton, bodies = split_bodies(text)
            return _Parser(skeleton, bodies=bodies).module()
        return _Parser(text).module()
