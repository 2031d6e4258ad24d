"""The checked, resolved form of a .x file that the emitters work from.

Type expressions are small immutable dataclasses; named types are referred to by
:class:`Ref` so that recursive definitions need no cycles in the objects.
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass, field
import typing

from rpcgen.errors import Loc


@dataclass(frozen=True)
class Prim:
    """A 4- or 8-byte (or 16 for quadruple) XDR scalar; ``lo``/``hi`` bound integer kinds."""

    kind: str  # int uint hyper uhyper float double quadruple bool
    lo: int = 0
    hi: int = 0
    cname: str = ""


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class FixedOpaque:
    size: int


@dataclass(frozen=True)
class VarOpaque:
    max: int | None


@dataclass(frozen=True)
class String:
    max: int | None


@dataclass(frozen=True)
class FixedArray:
    elem: "TypeExpr"
    size: int


@dataclass(frozen=True)
class VarArray:
    elem: "TypeExpr"
    max: int | None


@dataclass(frozen=True)
class Optional:
    elem: "TypeExpr"


TypeExpr = typing.Union[Prim, Ref, FixedOpaque, VarOpaque, String, FixedArray, VarArray, Optional]

#: A variable-length opaque of this many bytes or more decodes as a read-only memoryview into
#: the received record (when that record is immutable) instead of a copy; an ``opaque<N>`` whose
#: maximum N is smaller always decodes as bytes. Equal to ``cricket.xdr.VIEW_MIN``.
OPAQUE_VIEW_MIN = 65536


def may_be_view(t: "VarOpaque") -> bool:
    """Whether values of ``t`` can be large enough to decode as views (see OPAQUE_VIEW_MIN)."""
    return t.max is None or t.max >= OPAQUE_VIEW_MIN


INT32 = (-2**31, 2**31 - 1)
UINT32 = (0, 2**32 - 1)
PRIMS: dict[str, Prim] = {
    "int": Prim("int", *INT32, "int"),
    "unsigned int": Prim("uint", *UINT32, "unsigned int"),
    "hyper": Prim("hyper", -2**63, 2**63 - 1, "hyper"),
    "unsigned hyper": Prim("uhyper", 0, 2**64 - 1, "unsigned hyper"),
    "float": Prim("float", cname="float"),
    "double": Prim("double", cname="double"),
    "quadruple": Prim("quadruple", cname="quadruple"),
    "bool": Prim("bool", 0, 1, "bool"),
    # rpcgen's C integer names: 4 bytes on the wire, the C type's range.
    "char": Prim("int", -128, 127, "char"),
    "unsigned char": Prim("uint", 0, 255, "unsigned char"),
    "short": Prim("int", -2**15, 2**15 - 1, "short"),
    "unsigned short": Prim("uint", 0, 2**16 - 1, "unsigned short"),
    "long": Prim("int", *INT32, "long"),
    "unsigned long": Prim("uint", *UINT32, "unsigned long"),
}

#: C type names that system .x files use without defining them (their XDR meaning).
C_TYPE_NAMES: dict[str, Prim] = {
    "u_int": PRIMS["unsigned int"], "u_long": PRIMS["unsigned long"],
    "u_short": PRIMS["unsigned short"], "u_char": PRIMS["unsigned char"],
    "int8_t": PRIMS["char"], "uint8_t": PRIMS["unsigned char"], "u_int8_t": PRIMS["unsigned char"],
    "int16_t": PRIMS["short"], "uint16_t": PRIMS["unsigned short"],
    "u_int16_t": PRIMS["unsigned short"],
    "int32_t": PRIMS["int"], "uint32_t": PRIMS["unsigned int"], "u_int32_t": PRIMS["unsigned int"],
    "int64_t": PRIMS["hyper"], "uint64_t": PRIMS["unsigned hyper"],
    "u_int64_t": PRIMS["unsigned hyper"], "quad_t": PRIMS["hyper"],
    "u_quad_t": PRIMS["unsigned hyper"], "longlong_t": PRIMS["hyper"],
    "u_longlong_t": PRIMS["unsigned hyper"],
    "bool_t": PRIMS["bool"], "enum_t": PRIMS["int"],
    "rpcprog_t": PRIMS["unsigned int"], "rpcvers_t": PRIMS["unsigned int"],
    "rpcproc_t": PRIMS["unsigned int"], "rpcprot_t": PRIMS["unsigned int"],
    "rpcport_t": PRIMS["unsigned int"],
}

#: Constants of libtirpc's C headers that system .x files use as sizes.
C_CONSTANTS: dict[str, int] = {"MAXNETNAMELEN": 255, "MAX_MACHINE_NAME": 255, "NGRPS": 16,
                               "MAX_AUTH_BYTES": 400, "MAXHOSTNAMELEN": 64}

#: libtirpc types defined in C, written here in XDR (added to a module that uses them).
C_TYPE_DEFINED = ("netobj", "netbuf", "des_block")
C_TYPE_DEFINITIONS = """
typedef opaque netobj<1024>;             /* xdr_netobj: MAX_NETOBJ_SZ */
struct netbuf { unsigned int maxlen; opaque buf<>; };   /* xdr_netbuf */
typedef opaque des_block[8];             /* xdr_des_block */
"""


def pyname(name: str) -> str:
    """The Python spelling of a .x name: keywords get a trailing underscore (``from_``)."""
    return name + "_" if keyword.iskeyword(name) or name in ("None", "True", "False") else name


@dataclass
class Field:
    name: str
    type: TypeExpr

    @property
    def pyname(self) -> str:
        return pyname(self.name)


@dataclass
class Const:
    name: str
    value: int | str
    loc: Loc | None = None


@dataclass
class Enum:
    name: str
    members: list[tuple[str, int]]
    loc: Loc | None = None


@dataclass
class Struct:
    name: str
    fields: list[Field]
    loc: Loc | None = None
    #: True when the last field is optional data pointing back to this struct (a linked list).
    is_list: bool = False


@dataclass
class Arm:
    values: list[int]
    field: Field | None  # None: void


@dataclass
class Union:
    name: str
    discriminant: Field
    arms: list[Arm]
    has_default: bool = False
    default: Field | None = None
    loc: Loc | None = None

    def arm_fields(self) -> list[Field]:
        seen, out = set(), []
        for f in [a.field for a in self.arms] + [self.default]:
            if f is not None and f.name not in seen:
                seen.add(f.name)
                out.append(f)
        return out


@dataclass
class Typedef:
    name: str
    type: TypeExpr
    loc: Loc | None = None


NamedType = typing.Union[Enum, Struct, Union, Typedef]


@dataclass
class Procedure:
    name: str
    number: int
    args: list[Field]
    result: TypeExpr | None  # None: void


@dataclass
class Version:
    name: str
    number: int
    procedures: list[Procedure]


@dataclass
class Program:
    name: str
    number: int
    versions: list[Version]


@dataclass
class Module:
    file: str
    consts: list[Const] = field(default_factory=list)
    types: dict[str, NamedType] = field(default_factory=dict)
    programs: list[Program] = field(default_factory=list)

    def resolve(self, t: TypeExpr) -> TypeExpr:
        """Follow typedef references to the type expression underneath."""
        seen = set()
        while isinstance(t, Ref):
            d = self.types[t.name]
            if not isinstance(d, Typedef) or t.name in seen:
                return t
            seen.add(t.name)
            t = d.type
        return t

    def count_guard(self, t: "VarArray") -> int:
        """Bytes per item to check an array count against: the element's minimum size, and
        at least 1 for unbounded arrays (zero-size elements would make any count "fit")."""
        n = self.min_size(t.elem)
        return n if n or t.max is not None else 1

    def min_size(self, t: TypeExpr, _active: frozenset = frozenset()) -> int:
        """The fewest bytes any value of ``t`` encodes to (for pre-allocation checks)."""
        if isinstance(t, Prim):
            return {"hyper": 8, "uhyper": 8, "double": 8, "quadruple": 16}.get(t.kind, 4)
        if isinstance(t, FixedOpaque):
            return (t.size + 3) & ~3
        if isinstance(t, (VarOpaque, String, VarArray, Optional)):
            return 4
        if isinstance(t, FixedArray):
            return t.size * self.min_size(t.elem, _active)
        if t.name in _active:
            return 4
        d = self.types[t.name]
        active = _active | {t.name}
        if isinstance(d, Enum):
            return 4
        if isinstance(d, Typedef):
            return self.min_size(d.type, active)
        if isinstance(d, Struct):
            return sum(self.min_size(f.type, active) for f in d.fields)
        sizes = [self.min_size(a.field.type, active) if a.field else 0 for a in d.arms]
        if d.has_default:
            sizes.append(self.min_size(d.default.type, active) if d.default else 0)
        return 4 + (min(sizes) if sizes else 0)
