"""The syntax tree of a .x file: plain dataclasses, exactly as written (names unresolved)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from rpcgen.errors import Loc


@dataclass
class Value:
    """A constant or the name of one (array sizes, enum values, case labels, numbers)."""

    loc: Loc
    number: int | None = None
    name: str | None = None

    def __str__(self) -> str:
        return self.name if self.name is not None else str(self.number)


@dataclass
class TypeName:
    """A named type: a built-in (``int``, ``unsigned hyper``, ``u_int``...) or a definition."""

    loc: Loc
    name: str


@dataclass
class EnumMember:
    loc: Loc
    name: str
    value: Value | None  # None: C auto-numbering (previous + 1)


@dataclass
class EnumBody:
    loc: Loc
    members: list[EnumMember]


@dataclass
class StructBody:
    loc: Loc
    members: list["Declaration"]


@dataclass
class UnionArm:
    loc: Loc
    cases: list[Value]
    decl: "Declaration"


@dataclass
class UnionBody:
    loc: Loc
    discriminant: "Declaration"
    arms: list[UnionArm]
    default: "Declaration | None" = None
    has_default: bool = False


TypeSpec = Union[TypeName, EnumBody, StructBody, UnionBody]

# Declaration kinds
PLAIN, FIXED_ARRAY, VAR_ARRAY, FIXED_OPAQUE, VAR_OPAQUE, STRING, OPTIONAL, VOID = (
    "plain", "fixed_array", "var_array", "fixed_opaque", "var_opaque", "string", "optional", "void")


@dataclass
class Declaration:
    """``type name``, ``type name[n]``, ``type name<m>``, ``opaque``/``string``, ``type *name``, ``void``."""

    loc: Loc
    kind: str
    name: str | None = None
    type: TypeSpec | None = None
    size: Value | None = None  # fixed size, or maximum (None for ``<>``)


@dataclass
class ConstDef:
    loc: Loc
    name: str
    value: Value | None = None
    string: str | None = None  # ``const S = "abc";`` (an rpcgen extension)


@dataclass
class TypedefDef:
    loc: Loc
    decl: Declaration

    @property
    def name(self) -> str:
        return self.decl.name


@dataclass
class EnumDef:
    loc: Loc
    name: str
    body: EnumBody


@dataclass
class StructDef:
    loc: Loc
    name: str
    body: StructBody


@dataclass
class UnionDef:
    loc: Loc
    name: str
    body: UnionBody


@dataclass
class ProcArg:
    loc: Loc
    type: Declaration  # kind PLAIN or STRING/VAR_OPAQUE with no maximum; name may be None


@dataclass
class ProcedureDef:
    loc: Loc
    name: str
    number: Value
    result: Declaration  # kind VOID for void
    args: list[ProcArg] = field(default_factory=list)


@dataclass
class VersionDef:
    loc: Loc
    name: str
    number: Value
    procedures: list[ProcedureDef]


@dataclass
class ProgramDef:
    loc: Loc
    name: str
    number: Value
    versions: list[VersionDef]


@dataclass
class PassThrough:
    """A ``%`` line: C text rpcgen copies to its output; kept, not used by the Python output."""

    loc: Loc
    text: str


Definition = Union[ConstDef, TypedefDef, EnumDef, StructDef, UnionDef, ProgramDef, PassThrough]


@dataclass
class Specification:
    file: str
    definitions: list[Definition]
