"""Recursive-descent parser: tokens → :class:`rpcgen.ast.Specification`.

Grammar: RFC 4506 §6.3 and RFC 5531 §12, plus what the system rpcgen accepts
(bare ``unsigned``, ``char``/``short``/``long``, ``hyper int``, ``struct x *p``,
string constants, enum members without values, several and named procedure
arguments, ``string`` procedure arguments, empty argument lists).
"""
from __future__ import annotations

from rpcgen import ast
from rpcgen.errors import ParseError
from rpcgen.lexer import Token


class Parser:
    def __init__(self, tokens: list[Token], file: str) -> None:
        self.toks = tokens
        self.i = 0
        self.file = file
        self.passthrough: list[ast.PassThrough] = []  # % lines met inside definitions

    def _skip_passthrough(self) -> None:
        while self.toks[self.i].kind == "passthrough":
            t = self.toks[self.i]
            self.passthrough.append(ast.PassThrough(t.loc, t.text))
            self.i += 1

    # -- token helpers -------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        self._skip_passthrough()
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        self._skip_passthrough()
        j = self.i
        for _ in range(k):
            j = min(j + 1, len(self.toks) - 1)
            while self.toks[j].kind == "passthrough":
                j += 1
        return self.toks[j]

    def next(self) -> Token:
        self._skip_passthrough()
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, kind: str, text: str | None = None) -> bool:
        t = self.tok
        return t.kind == kind and (text is None or t.text == text)

    def at_kw(self, *words: str) -> bool:
        return self.tok.kind == "keyword" and self.tok.text in words

    def accept(self, kind: str, text: str | None = None) -> Token | None:
        if self.at(kind, text):
            return self.next()
        return None

    def expect(self, kind: str, text: str | None = None, what: str | None = None) -> Token:
        if self.at(kind, text):
            return self.next()
        want = what or repr(text or kind)
        got = self.tok
        shown = "end of file" if got.kind == "eof" else repr(got.text)
        raise ParseError(got.loc, f"expected {want}, found {shown}")

    def ident(self, what: str = "an identifier") -> Token:
        if self.tok.kind == "keyword":
            raise ParseError(self.tok.loc, f"expected {what}, found the keyword {self.tok.text!r} "
                                           "(keywords cannot be used as names)")
        return self.expect("ident", what=what)

    # -- top level -----------------------------------------------------------------------
    def specification(self) -> ast.Specification:
        defs: list[ast.Definition] = []
        while True:
            self._skip_passthrough()
            defs.extend(self.passthrough)
            self.passthrough = []
            if self.at("eof"):
                break
            defs.append(self.definition())
        return ast.Specification(self.file, defs)

    def definition(self) -> ast.Definition:
        t = self.tok
        if self.at_kw("const"):
            self.next()
            name = self.ident("a constant name")
            self.expect("=")
            if self.at("string"):
                s = self.next()
                d = ast.ConstDef(t.loc, name.text, string=s.value)
            else:
                d = ast.ConstDef(t.loc, name.text, value=self.value())
            self.expect(";")
            return d
        if self.at_kw("typedef"):
            self.next()
            decl = self.declaration(allow_void=False)
            self.expect(";")
            return ast.TypedefDef(t.loc, decl)
        if self.at_kw("enum"):
            self.next()
            name = self.ident("an enum name")
            body = self.enum_body()
            self.expect(";")
            return ast.EnumDef(t.loc, name.text, body)
        if self.at_kw("struct"):
            self.next()
            name = self.ident("a struct name")
            body = self.struct_body()
            self.expect(";")
            return ast.StructDef(t.loc, name.text, body)
        if self.at_kw("union"):
            self.next()
            name = self.ident("a union name")
            body = self.union_body()
            self.expect(";")
            return ast.UnionDef(t.loc, name.text, body)
        if self.at_kw("program"):
            return self.program()
        shown = "end of file" if t.kind == "eof" else repr(t.text)
        raise ParseError(t.loc, f"expected a definition (const, typedef, enum, struct, union, "
                                f"program), found {shown}")

    def value(self) -> ast.Value:
        t = self.tok
        if t.kind == "number":
            self.next()
            return ast.Value(t.loc, number=t.value)
        if t.kind == "ident":
            self.next()
            return ast.Value(t.loc, name=t.text)
        raise ParseError(t.loc, f"expected a constant or a constant's name, found {t.text!r}")

    # -- types ---------------------------------------------------------------------------
    def enum_body(self) -> ast.EnumBody:
        lb = self.expect("{")
        members = []
        while True:
            name = self.ident("an enum member name")
            val = None
            if self.accept("="):
                val = self.value()
            members.append(ast.EnumMember(name.loc, name.text, val))
            if self.accept(","):
                if self.at("}"):  # trailing comma, as C allows
                    break
                continue
            break
        self.expect("}")
        return ast.EnumBody(lb.loc, members)

    def struct_body(self) -> ast.StructBody:
        lb = self.expect("{")
        members = []
        while not self.at("}"):
            members.append(self.declaration(allow_void=False))
            self.expect(";")
        self.expect("}")
        if not members:
            raise ParseError(lb.loc, "a struct needs at least one member")
        return ast.StructBody(lb.loc, members)

    def union_body(self) -> ast.UnionBody:
        sw = self.expect("keyword", "switch", what="'switch'")
        self.expect("(")
        disc = self.declaration(allow_void=False)
        self.expect(")")
        self.expect("{")
        body = ast.UnionBody(sw.loc, disc, [])
        while self.at_kw("case"):
            first = self.tok
            cases = []
            while self.accept("keyword", "case"):
                cases.append(self.value())
                self.expect(":")
            decl = self.declaration(allow_void=True)
            self.expect(";")
            body.arms.append(ast.UnionArm(first.loc, cases, decl))
        if self.accept("keyword", "default"):
            self.expect(":")
            body.default = self.declaration(allow_void=True)
            body.has_default = True
            self.expect(";")
        if not body.arms and not body.has_default:
            raise ParseError(self.tok.loc, "a union needs at least one case")
        self.expect("}", what="'case', 'default' or '}'")
        return body

    def type_specifier(self) -> ast.TypeSpec:
        t = self.tok
        if t.kind == "ident":
            self.next()
            return ast.TypeName(t.loc, t.text)
        if t.kind != "keyword":
            raise ParseError(t.loc, f"expected a type, found {t.text!r}")
        w = t.text
        if w == "unsigned":
            self.next()
            if self.at_kw("int", "char", "short"):
                return ast.TypeName(t.loc, "unsigned " + self.next().text)
            if self.at_kw("hyper"):
                self.next()
                self.accept("keyword", "int")
                return ast.TypeName(t.loc, "unsigned hyper")
            if self.at_kw("long"):
                self.next()
                self.accept("keyword", "int")
                return ast.TypeName(t.loc, "unsigned long")
            return ast.TypeName(t.loc, "unsigned int")  # bare `unsigned`
        if w in ("hyper", "long", "short"):
            self.next()
            self.accept("keyword", "int")
            return ast.TypeName(t.loc, w)
        if w in ("int", "float", "double", "quadruple", "bool", "char"):
            self.next()
            return ast.TypeName(t.loc, w)
        if w in ("enum", "struct", "union"):
            self.next()
            if self.at("ident"):
                return ast.TypeName(t.loc, self.next().text)
            if w == "enum":
                return self.enum_body()
            if w == "struct":
                return self.struct_body()
            return self.union_body()
        raise ParseError(t.loc, f"expected a type, found the keyword {w!r}")

    def declaration(self, allow_void: bool) -> ast.Declaration:
        t = self.tok
        if self.at_kw("void"):
            if not allow_void:
                raise ParseError(t.loc, "'void' is allowed only as a union arm here")
            self.next()
            return ast.Declaration(t.loc, ast.VOID)
        if self.at_kw("opaque"):
            self.next()
            name = self.ident("a name for the opaque data")
            if self.accept("["):
                size = self.value()
                self.expect("]")
                return ast.Declaration(t.loc, ast.FIXED_OPAQUE, name.text, size=size)
            if not self.at("<"):
                raise ParseError(self.tok.loc, "opaque needs a size: name[n] or name<max>")
            return ast.Declaration(t.loc, ast.VAR_OPAQUE, name.text, size=self.max_size())
        if self.at_kw("string"):
            self.next()
            name = self.ident("a name for the string")
            if not self.at("<"):
                raise ParseError(self.tok.loc, "string needs a maximum: name<max> or name<>")
            return ast.Declaration(t.loc, ast.STRING, name.text, size=self.max_size())
        typ = self.type_specifier()
        if self.accept("*"):
            name = self.ident("a name for the optional data")
            return ast.Declaration(t.loc, ast.OPTIONAL, name.text, typ)
        name = self.ident("a member name")
        if self.accept("["):
            size = self.value()
            self.expect("]")
            return ast.Declaration(t.loc, ast.FIXED_ARRAY, name.text, typ, size)
        if self.at("<"):
            return ast.Declaration(t.loc, ast.VAR_ARRAY, name.text, typ, self.max_size())
        return ast.Declaration(t.loc, ast.PLAIN, name.text, typ)

    def max_size(self) -> ast.Value | None:
        self.expect("<")
        if self.accept(">"):
            return None
        v = self.value()
        self.expect(">")
        return v

    # -- programs ------------------------------------------------------------------------
    def program(self) -> ast.ProgramDef:
        t = self.expect("keyword", "program")
        name = self.ident("a program name")
        self.expect("{")
        versions = []
        while self.at_kw("version"):
            versions.append(self.version())
        if not versions:
            raise ParseError(self.tok.loc, "a program needs at least one version")
        self.expect("}", what="'version' or '}'")
        self.expect("=")
        number = self.value()
        self.expect(";")
        return ast.ProgramDef(t.loc, name.text, number, versions)

    def version(self) -> ast.VersionDef:
        t = self.expect("keyword", "version")
        name = self.ident("a version name")
        self.expect("{")
        procs = []
        while not self.at("}"):
            procs.append(self.procedure())
        if not procs:
            raise ParseError(self.tok.loc, "a version needs at least one procedure")
        self.expect("}")
        self.expect("=")
        number = self.value()
        self.expect(";")
        return ast.VersionDef(t.loc, name.text, number, procs)

    def proc_type(self, what: str) -> ast.Declaration:
        t = self.tok
        if self.at_kw("void"):
            self.next()
            return ast.Declaration(t.loc, ast.VOID)
        if self.at_kw("string"):
            self.next()
            return ast.Declaration(t.loc, ast.STRING, None, size=None)
        if self.at_kw("opaque"):
            raise ParseError(t.loc, f"opaque {what} needs a typedef (rpcgen rule)")
        return ast.Declaration(t.loc, ast.PLAIN, None, self.type_specifier())

    def procedure(self) -> ast.ProcedureDef:
        t = self.tok
        result = self.proc_type("result")
        name = self.ident("a procedure name")
        self.expect("(")
        args: list[ast.ProcArg] = []
        if self.at_kw("void") and self.peek().kind == ")":
            self.next()
        elif not self.at(")"):
            while True:
                a = self.proc_type("argument")
                if a.kind == ast.VOID:
                    raise ParseError(a.loc, "'void' must be the only argument")
                if self.at("ident"):
                    a.name = self.next().text
                if self.at("*") or self.at("<") or self.at("["):
                    raise ParseError(self.tok.loc, "procedure arguments cannot be arrays or "
                                                   "pointers; declare a typedef")
                args.append(ast.ProcArg(a.loc, a))
                if not self.accept(","):
                    break
        self.expect(")")
        self.expect("=")
        number = self.value()
        self.expect(";")
        return ast.ProcedureDef(t.loc, name.text, number, result, args)


def parse(tokens: list[Token], file: str) -> ast.Specification:
    return Parser(tokens, file).specification()
