"""The PTX syntax tree: modules, functions, declarations, instructions and operands."""
from __future__ import annotations

from dataclasses import dataclass, field


# ---- operands ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reg:
    name: str                 # unique within the function (scoped names are renamed), without '%'


@dataclass(frozen=True)
class Special:
    name: str                 # e.g. "tid.x", "laneid", "clock64"


@dataclass(frozen=True)
class Imm:
    value: int | float
    kind: str                 # "int", "f32" (0f...), "f64" (0d...), "float" (decimal)


@dataclass(frozen=True)
class Sym:
    name: str                 # variable, function or label name
    offset: int = 0


@dataclass(frozen=True)
class Addr:
    base: Reg | Sym | None
    offset: int = 0


@dataclass(frozen=True)
class Vec:
    items: tuple


@dataclass(frozen=True)
class Pair:
    first: object             # d|p destinations of shfl and setp
    second: object


@dataclass(frozen=True)
class Not:
    operand: Reg              # !%p


@dataclass(frozen=True)
class Sink:
    pass                      # the "_" operand


@dataclass(frozen=True)
class Group:
    items: tuple              # parenthesised operand list of call


# ---- statements -------------------------------------------------------------------------------
@dataclass
class Instr:
    op: str                                   # base opcode, e.g. "ld"
    mods: tuple[str, ...]                     # modifiers without dots, e.g. ("global", "f32")
    operands: tuple
    guard: tuple[Reg, bool] | None = None     # (predicate, negated)
    loc: tuple[int, int] | None = None        # (.file index, line)

    def text(self) -> str:
        g = ""
        if self.guard:
            g = f"@{'!' if self.guard[1] else ''}%{self.guard[0].name} "
        return g + ".".join((self.op,) + self.mods) + " " + ", ".join(_fmt(o) for o in self.operands)


@dataclass
class Label:
    name: str


@dataclass
class VarDecl:
    space: str                  # global, const, shared, local, param, reg
    name: str
    type: str                   # b8, u32, f32, ...
    align: int = 0
    count: int | None = None    # array length; 0 for "[]" (extern shared)
    init: list | None = None    # flattened initialiser: ints, floats, or ("addr", name, offset)
    linkage: str = ""           # visible, extern, weak, common, or ""
    vector: int = 1             # .v2 / .v4 element count


@dataclass
class Function:
    name: str
    kind: str                                  # "entry" or "func"
    linkage: str
    params: list[VarDecl] = field(default_factory=list)
    rets: list[VarDecl] = field(default_factory=list)
    body: list | None = None                   # None for a declaration (prototype) only
    regs: dict[str, str] = field(default_factory=dict)     # register name -> type
    locals: list[VarDecl] = field(default_factory=list)    # .local/.param/.shared declared in the body
    directives: dict[str, list] = field(default_factory=dict)
    # a body not parsed yet (large modules): (text between the braces, line of the opening brace);
    # ``parser.ensure_body`` parses it into body/regs/locals on first use
    source: tuple[str, int] | None = field(default=None, repr=False, compare=False)


@dataclass
class Module:
    version: tuple[int, int] = (0, 0)
    target: list[str] = field(default_factory=list)
    address_size: int = 64
    functions: dict[str, Function] = field(default_factory=dict)
    variables: dict[str, VarDecl] = field(default_factory=dict)
    files: dict[int, str] = field(default_factory=dict)


def _fmt(o) -> str:
    if isinstance(o, Reg):
        return "%" + o.name
    if isinstance(o, Special):
        return "%" + o.name
    if isinstance(o, Imm):
        return repr(o.value)
    if isinstance(o, Sym):
        return o.name + (f"+{o.offset}" if o.offset else "")
    if isinstance(o, Addr):
        b = _fmt(o.base) if o.base is not None else ""
        if b and o.offset:
            return f"[{b}+{o.offset}]"
        return f"[{b or o.offset}]"
    if isinstance(o, Vec):
        return "{" + ", ".join(_fmt(i) for i in o.items) + "}"
    if isinstance(o, Pair):
        return _fmt(o.first) + "|" + _fmt(o.second)
    if isinstance(o, Not):
        return "!" + _fmt(o.operand)
    if isinstance(o, Sink):
        return "_"
    if isinstance(o, Group):
        return "(" + ", ".join(_fmt(i) for i in o.items) + ")"
    return str(o)
