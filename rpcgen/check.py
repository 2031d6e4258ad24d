"""Checks and name resolution: :class:`rpcgen.ast.Specification` → :class:`rpcgen.model.Module`.

Reports undefined and duplicate names, duplicate members and case values, sizes that
are not unsigned constants, bad discriminant types and duplicate program, version
and procedure names or numbers, each as ``file:line:col: message``.
Inline struct/union/enum bodies are lifted to named types ``Outer_member``.
"""
from __future__ import annotations

import re

from rpcgen import ast, model
from rpcgen.errors import CheckError, Loc

BUILTIN_CONSTS = {"TRUE": 1, "FALSE": 0}
_PASS_DEFINE = re.compile(r"\s*#\s*define\s+([A-Za-z_]\w*)\s+([^/]+?)\s*(?:/\*.*)?$")


class Checker:
    def __init__(self, spec: ast.Specification) -> None:
        self.spec = spec
        self.mod = model.Module(spec.file)
        self.names: dict[str, Loc] = {}           # the one namespace of RFC 4506 §6.4.3
        self.const_defs: dict[str, ast.ConstDef] = {}
        self.const_values: dict[str, int | str] = {}
        self.enum_values: dict[str, int] = {}      # enum members are constants too
        self.type_defs: dict[str, object] = {}     # name -> ast def (or lifted body)
        self.resolving: set[str] = set()
        self.used_c_types: set[str] = set()
        self.resolving_types: set[str] = set()
        self.number_names: dict[str, ast.Value] = {}  # program/version/procedure numbers
        self.pass_defines: dict[str, tuple[str, Loc]] = {}  # `%#define NAME value` lines

    # -- entry ---------------------------------------------------------------------------
    def run(self) -> model.Module:
        defs = [d for d in self.spec.definitions
                if not isinstance(d, ast.PassThrough) and not _self_typedef(d)]
        for d in self.spec.definitions:
            m = isinstance(d, ast.PassThrough) and _PASS_DEFINE.match(d.text)
            if m:
                self.pass_defines.setdefault(m.group(1), (m.group(2), d.loc))
        for d in defs:
            self.declare(d)
        for d in defs:
            if isinstance(d, ast.ConstDef):
                self.mod.consts.append(model.Const(d.name, self.const(d.name, d.loc), d.loc))
        for d in defs:
            if isinstance(d, (ast.TypedefDef, ast.EnumDef, ast.StructDef, ast.UnionDef)):
                self.named_type(d)
        self.add_c_type_definitions()
        for d in defs:
            if isinstance(d, ast.ProgramDef):
                self.mod.programs.append(self.program(d))
        for t in self.mod.types.values():
            if isinstance(t, model.Struct):
                last = self.mod.resolve(t.fields[-1].type)
                t.is_list = isinstance(last, model.Optional) and last.elem == model.Ref(t.name)
        return self.mod

    def claim(self, name: str, loc: Loc, what: str) -> None:
        if name in BUILTIN_CONSTS:
            raise CheckError(loc, f"{what} {name!r} redefines a built-in constant")
        if name in self.names:
            raise CheckError(loc, f"{what} {name!r} is already defined at {self.names[name]}")
        self.names[name] = loc

    def declare(self, d) -> None:
        if isinstance(d, ast.ConstDef):
            self.claim(d.name, d.loc, "constant")
            self.const_defs[d.name] = d
        elif isinstance(d, ast.ProgramDef):
            # rpcgen #defines program, version and procedure names, so .x files use them
            # as constants (rpcb_prot.x: `const rpcb_highproc_2 = RPCBPROC_CALLIT;`).
            self.claim(d.name, d.loc, "program")
            self.number_names[d.name] = d.number
            for v in d.versions:
                self.claim(v.name, v.loc, "version")
                self.number_names[v.name] = v.number
                for p in v.procedures:
                    if p.name not in self.names:
                        self.number_names.setdefault(p.name, p.number)
        else:
            self.claim(d.name, d.loc, "type")
            self.type_defs[d.name] = d
            body = getattr(d, "body", None) or (d.decl.type if isinstance(d, ast.TypedefDef)
                                                  else None)
            self.declare_nested(d.name, body)

    def declare_nested(self, outer: str, body) -> None:
        """Inline bodies inside a definition: their enum members are global constants."""
        if isinstance(body, ast.EnumBody):
            self.declare_enum_members(body)
        elif isinstance(body, ast.StructBody):
            for m in body.members:
                self.declare_nested(outer, m.type)
        elif isinstance(body, ast.UnionBody):
            self.declare_nested(outer, body.discriminant.type)
            for a in body.arms:
                self.declare_nested(outer, a.decl.type)
            if body.default is not None:
                self.declare_nested(outer, body.default.type)

    def declare_enum_members(self, body: ast.EnumBody) -> None:
        for m in body.members:
            self.claim(m.name, m.loc, "enum member")

    # -- constants -----------------------------------------------------------------------
    def const(self, name: str, loc: Loc) -> int | str:
        if name in self.const_values:
            return self.const_values[name]
        if name in BUILTIN_CONSTS:
            return BUILTIN_CONSTS[name]
        if name in self.enum_values:
            return self.enum_values[name]
        d = self.const_defs.get(name)
        if d is None and name not in self.names and name in self.pass_defines:
            return self.pass_define(name, loc)
        if d is None and name in model.C_CONSTANTS and name not in self.names:
            v = model.C_CONSTANTS[name]
            self.const_values[name] = v
            self.mod.consts.append(model.Const(name, v, loc))
            return v
        if d is None and name in self.number_names:
            d = ast.ConstDef(self.number_names[name].loc, name, value=self.number_names[name])
        if d is None:
            if name in self.names:
                # an enum member not evaluated yet (enum defined later): evaluate its enum
                for td in self.type_defs.values():
                    if isinstance(td, ast.EnumDef) and any(m.name == name for m in td.body.members):
                        self.named_type(td)
                        return self.enum_values[name]
                raise CheckError(loc, f"{name!r} is not a constant")
            raise CheckError(loc, f"undefined constant {name!r}")
        if name in self.resolving:
            raise CheckError(d.loc, f"constant {name!r} is defined in terms of itself")
        self.resolving.add(name)
        try:
            v = d.string if d.string is not None else self.value(d.value)
        finally:
            self.resolving.discard(name)
        self.const_values[name] = v
        return v

    def pass_define(self, name: str, loc: Loc) -> int:
        """A ``%#define NAME expr`` line that .x files then use as a size (nlm_prot.x)."""
        expr, dloc = self.pass_defines[name]
        if name in self.resolving:
            raise CheckError(dloc, f"#define {name} refers to itself")
        self.resolving.add(name)
        try:
            def sub(m: re.Match) -> str:
                v = self.const(m.group(0), dloc)
                if isinstance(v, str):
                    raise CheckError(dloc, f"{m.group(0)!r} is a string constant")
                return f"({v})"
            text = re.sub(r"\b[A-Za-z_]\w*\b", sub, expr)
            if not re.fullmatch(r"[\s\d()+\-*]*|0[xX][0-9a-fA-F]+", text):
                raise CheckError(loc, f"{name!r} is defined in a % line as {expr!r}, which is not "
                                      "a constant rpcgen-for-Python can evaluate")
            v = int(text, 16) if text.lower().startswith("0x") else eval(text, {"__builtins__": {}})
        finally:
            self.resolving.discard(name)
        self.const_values[name] = v
        self.mod.consts.append(model.Const(name, v, dloc))
        return v

    def value(self, v: ast.Value) -> int:
        if v.name is None:
            return v.number
        r = self.const(v.name, v.loc)
        if isinstance(r, str):
            raise CheckError(v.loc, f"{v.name!r} is a string constant; a number is needed here")
        return r

    def unsigned(self, v: ast.Value, what: str) -> int:
        n = self.value(v)
        if n < 0 or n > 0xFFFFFFFF:
            raise CheckError(v.loc, f"{what} must be an unsigned constant, got {v} = {n}")
        return n

    # -- types ---------------------------------------------------------------------------
    def named_type(self, d) -> None:
        name = d.name
        if name in self.mod.types:
            return
        if isinstance(d, ast.EnumDef):
            self.mod.types[name] = self.enum(name, d.body, d.loc)
        elif isinstance(d, ast.StructDef):
            self.mod.types[name] = model.Struct(name, [], d.loc)  # placeholder for recursion
            self.mod.types[name] = self.struct(name, d.body, d.loc)
        elif isinstance(d, ast.UnionDef):
            self.mod.types[name] = self.union(name, d.body, d.loc)
        else:
            if d.decl.kind == ast.VOID:
                raise CheckError(d.loc, "typedef void is not allowed")
            self.mod.types[name] = model.Typedef(name, self.decl_type(d.decl, name), d.loc)

    def enum(self, name: str, body: ast.EnumBody, loc: Loc) -> model.Enum:
        members, nxt = [], 0
        for m in body.members:
            v = self.value(m.value) if m.value is not None else nxt
            if not -2**31 <= v < 2**31:
                raise CheckError(m.loc, f"enum value {m.name} = {v} does not fit in 32 bits")
            self.enum_values[m.name] = v
            members.append((m.name, v))
            nxt = v + 1
        return model.Enum(name, members, loc)

    def struct(self, name: str, body: ast.StructBody, loc: Loc) -> model.Struct:
        fields, seen = [], {}
        for m in body.members:
            if m.name in seen:
                raise CheckError(m.loc, f"member {m.name!r} of struct {name} is already "
                                        f"declared at {seen[m.name]}")
            seen[m.name] = m.loc
            fields.append(model.Field(m.name, self.decl_type(m, f"{name}_{m.name}")))
        return model.Struct(name, fields, loc)

    def union(self, name: str, body: ast.UnionBody, loc: Loc) -> model.Union:
        dd = body.discriminant
        if dd.kind != ast.PLAIN:
            raise CheckError(dd.loc, "a union discriminant must be a plain int, unsigned, "
                                     "bool or enum declaration")
        dtype = self.decl_type(dd, f"{name}_{dd.name}")
        base = self.mod.resolve(dtype)
        enum = None
        if isinstance(base, model.Ref) and isinstance(self.mod.types.get(base.name), model.Enum):
            enum = self.mod.types[base.name]
        elif not (isinstance(base, model.Prim) and base.kind in ("int", "uint", "bool")):
            raise CheckError(dd.loc, f"union {name}: the discriminant must be int, unsigned int, "
                                     "bool or an enum (or a typedef of one)")
        seen_names = {dd.name: dd.loc}
        seen_values: dict[int, Loc] = {}
        arms = []
        for arm in body.arms:
            values = []
            for cv in arm.cases:
                v = self.value(cv)
                if enum is not None and v not in {x for _, x in enum.members}:
                    raise CheckError(cv.loc, f"case {cv} = {v} is not a value of enum {enum.name}")
                if isinstance(base, model.Prim) and not base.lo <= v <= base.hi:
                    raise CheckError(cv.loc, f"case {cv} = {v} is out of range for the "
                                             f"{base.cname} discriminant")
                if v in seen_values:
                    raise CheckError(cv.loc, f"duplicate case value {cv} = {v} in union {name} "
                                             f"(first at {seen_values[v]})")
                seen_values[v] = cv.loc
                values.append(v)
            arms.append(model.Arm(values, self.arm_field(name, arm.decl, seen_names)))
        default = None
        if body.has_default:
            default = self.arm_field(name, body.default, seen_names)
        return model.Union(name, model.Field(dd.name, dtype), arms, body.has_default, default, loc)

    def arm_field(self, union: str, decl: ast.Declaration, seen: dict) -> model.Field | None:
        if decl.kind == ast.VOID:
            return None
        if decl.name in seen:
            # rpcgen puts every arm in one C union, so a repeated name is an error there too
            raise CheckError(decl.loc, f"member {decl.name!r} of union {union} is already "
                                       f"declared at {seen[decl.name]}")
        seen[decl.name] = decl.loc
        return model.Field(decl.name, self.decl_type(decl, f"{union}_{decl.name}"))

    def type_ref(self, spec, lifted_name: str) -> model.TypeExpr:
        if isinstance(spec, ast.TypeName):
            if spec.name in model.PRIMS:
                return model.PRIMS[spec.name]
            if spec.name in self.type_defs:
                d = self.type_defs[spec.name]
                if isinstance(d, (ast.TypedefDef, ast.EnumDef)) and spec.name not in self.mod.types:
                    if spec.name in self.resolving_types:
                        raise CheckError(spec.loc, f"typedef {spec.name!r} refers to itself")
                    self.resolving_types.add(spec.name)
                    try:
                        self.named_type(d)
                    finally:
                        self.resolving_types.discard(spec.name)
                return model.Ref(spec.name)
            if spec.name in model.C_TYPE_NAMES:
                return model.C_TYPE_NAMES[spec.name]
            if spec.name in model.C_TYPE_DEFINED:
                self.used_c_types.add(spec.name)
                return model.Ref(spec.name)
            if spec.name in self.names:
                raise CheckError(spec.loc, f"{spec.name!r} is not a type")
            raise CheckError(spec.loc, f"undefined type {spec.name!r}")
        # an inline body: lift it to a named type
        if lifted_name in self.names or lifted_name in self.mod.types:
            raise CheckError(spec.loc, f"inline type needs the name {lifted_name!r}, "
                                       "which is already taken")
        self.names[lifted_name] = spec.loc
        if isinstance(spec, ast.EnumBody):
            d = ast.EnumDef(spec.loc, lifted_name, spec)
        elif isinstance(spec, ast.StructBody):
            d = ast.StructDef(spec.loc, lifted_name, spec)
        else:
            d = ast.UnionDef(spec.loc, lifted_name, spec)
        self.type_defs[lifted_name] = d
        self.named_type(d)
        return model.Ref(lifted_name)

    def decl_type(self, decl: ast.Declaration, lifted_name: str) -> model.TypeExpr:
        k = decl.kind
        if k == ast.VOID:
            raise CheckError(decl.loc, "void is allowed only as a union arm")
        if k == ast.FIXED_OPAQUE:
            return model.FixedOpaque(self.unsigned(decl.size, "an opaque size"))
        if k == ast.VAR_OPAQUE:
            return model.VarOpaque(None if decl.size is None
                                   else self.unsigned(decl.size, "an opaque maximum"))
        if k == ast.STRING:
            return model.String(None if decl.size is None
                                else self.unsigned(decl.size, "a string maximum"))
        elem = self.type_ref(decl.type, lifted_name)
        if k == ast.PLAIN:
            return elem
        if k == ast.OPTIONAL:
            return model.Optional(elem)
        if k == ast.FIXED_ARRAY:
            return model.FixedArray(elem, self.unsigned(decl.size, "an array size"))
        return model.VarArray(elem, None if decl.size is None
                              else self.unsigned(decl.size, "an array maximum"))

    def add_c_type_definitions(self) -> None:
        if not self.used_c_types:
            return
        from rpcgen.lexer import tokenize
        from rpcgen.parser import parse
        prelude = parse(tokenize(model.C_TYPE_DEFINITIONS, "<C types>"), "<C types>")
        for d in prelude.definitions:
            if d.name in self.used_c_types:
                self.type_defs[d.name] = d
                self.named_type(d)

    # -- programs ------------------------------------------------------------------------
    def program(self, d: ast.ProgramDef) -> model.Program:
        versions, names, numbers = [], {}, {}
        for v in d.versions:
            num = self.unsigned(v.number, "a version number")
            if num in numbers:
                raise CheckError(v.loc, f"version number {num} of program {d.name} is already "
                                        f"used at {numbers[num]}")
            numbers[num] = v.loc
            procs, pnames, pnums = [], {}, {}
            for p in v.procedures:
                if p.name in pnames:
                    raise CheckError(p.loc, f"procedure {p.name} is already defined in version "
                                            f"{v.name} at {pnames[p.name]}")
                pnames[p.name] = p.loc
                pnum = self.unsigned(p.number, "a procedure number")
                if pnum in pnums:
                    raise CheckError(p.loc, f"procedure number {pnum} is already used in version "
                                            f"{v.name} at {pnums[pnum]}")
                pnums[pnum] = p.loc
                procs.append(self.procedure(p, pnum))
            versions.append(model.Version(v.name, num, procs))
        return model.Program(d.name, self.unsigned(d.number, "a program number"), versions)

    def procedure(self, p: ast.ProcedureDef, number: int) -> model.Procedure:
        args, seen = [], set()
        for i, a in enumerate(p.args, 1):
            name = a.type.name or f"arg{i}"
            if name in seen:
                raise CheckError(a.loc, f"argument name {name!r} repeats in {p.name}")
            seen.add(name)
            args.append(model.Field(name, self.decl_type(a.type, f"{p.name}_arg{i}")))
        result = None if p.result.kind == ast.VOID else self.decl_type(p.result, f"{p.name}_res")
        return model.Procedure(p.name, number, args, result)


def _self_typedef(d) -> bool:
    """``typedef struct X X;``: C boilerplate that rpcgen accepts; nothing to define."""
    return (isinstance(d, ast.TypedefDef) and d.decl.kind == ast.PLAIN
            and isinstance(d.decl.type, ast.TypeName) and d.decl.type.name == d.decl.name)


def check(spec: ast.Specification) -> model.Module:
    return Checker(spec).run()
