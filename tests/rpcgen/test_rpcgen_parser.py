"""The parser and checker: the XDR/RPC languages, rpcgen's dialect, and clear errors."""
from __future__ import annotations

import pytest

from rpcgen import load, model
from rpcgen.errors import CheckError, ParseError, PreprocessError


def compile_text(tmp_path, text: str, name: str = "t.x", **kw) -> model.Module:
    p = tmp_path / name
    p.write_text(text)
    return load(str(p), **kw)


def error_of(tmp_path, text: str, **kw) -> str:
    with pytest.raises((ParseError, CheckError, PreprocessError)) as ei:
        compile_text(tmp_path, text, **kw)
    return str(ei.value)


def test_rpcgen_dialect_is_accepted(tmp_path):
    m = compile_text(tmp_path, """
        %#include <stdio.h>
        const A = 4; const B = A; const S = "str"; const H = 0x10; const O = 010;
        enum e { X, Y = B, Z };
        struct _s { unsigned u; unsigned int ui; hyper int h; unsigned hyper uh;
                    char c; unsigned char uc; short s; long l; unsigned long ul;
                    u_int cu; uint32_t c32; int64_t c64; netobj nobj;
                    struct _s *next; };
        union u switch (int d) { case 'A': int a; case 2: case 3: void; };
        typedef _s *sp;
        program P { version V {
            void NUL(void) = 0; int F(int count) = 1; string G(string, int) = 2; int E() = 3;
        } = 1; } = 0x20000001;
    """)
    assert {c.name: c.value for c in m.consts} == {"A": 4, "B": 4, "S": "str", "H": 16, "O": 8}
    assert m.types["e"].members == [("X", 0), ("Y", 4), ("Z", 5)]
    s = m.types["_s"]
    assert s.is_list
    types = {f.name: f.type for f in s.fields}
    assert types["c"] == model.Prim("int", -128, 127, "char")
    assert types["cu"] == model.PRIMS["unsigned int"] and types["c64"] == model.PRIMS["hyper"]
    assert types["nobj"] == model.Ref("netobj") and "netobj" in m.types
    assert m.types["u"].arms[0].values == [65]
    proc = {p.name: p for p in m.programs[0].versions[0].procedures}
    assert [a.name for a in proc["F"].args] == ["count"]
    assert [a.type for a in proc["G"].args] == [model.String(None), model.PRIMS["int"]]
    assert proc["E"].args == [] and proc["NUL"].result is None


def test_inline_bodies_are_lifted_to_named_types(tmp_path):
    m = compile_text(tmp_path, """
        struct outer { struct { int a; } inner; enum { P = 1, Q = 2 } kind;
                       union switch (int d) { case 1: int x; } u; };
    """)
    assert isinstance(m.types["outer_inner"], model.Struct)
    assert isinstance(m.types["outer_kind"], model.Enum)
    assert isinstance(m.types["outer_u"], model.Union)


def test_forward_references_resolve(tmp_path):
    m = compile_text(tmp_path, """
        struct a { b *next; later l; };
        struct b { int x; };
        typedef int later[N];
        const N = 3;
    """)
    assert m.types["later"].type == model.FixedArray(model.PRIMS["int"], 3)


@pytest.mark.parametrize("text,where,message", [
    ("struct s { foo x; };", "1:12", "undefined type 'foo'"),
    ("const A = B;", "1:11", "undefined constant 'B'"),
    ("const A = 1;\nconst A = 2;", "2:1", "'A' is already defined at"),
    ("struct s { int a; int a; };", "1:19", "member 'a' of struct s is already declared"),
    ("union u switch (int d) { case 1: int a; case 1: int b; };", "1:46", "duplicate case value"),
    ("const N = -1; typedef int a<N>;", "1:29", "must be an unsigned constant"),
    ("typedef opaque o[S]; const S = \"x\";", "1:18", "string constant"),
    ("union u switch (string d<>) { case 1: int a; };", "1:17", "discriminant"),
    ("union u switch (float d) { case 1: int a; };", "1:17", "discriminant"),
    ("enum e { A = 1 }; union u switch (e d) { case 2: int a; };", "1:47", "not a value of enum"),
    ("program P { version V { int F(int) = 1; int G(int) = 1; } = 1; } = 5;", "1:41",
     "procedure number 1 is already used"),
    ("program P { version V { int F(int) = 1; } = 1; version W { int F(int) = 1; } = 1; } = 5;",
     "1:48", "version number 1"),
    ("struct s { int a; } int", "1:21", "expected ';'"),
    ("struct s { int program; };", "1:16", "keyword 'program'"),
    ("struct s { string x; };", "1:20", "string needs a maximum"),
    ("// comment\n", "1:1", "'//' comments"),
    ("struct s { int a; }; /* never closed", "1:22", "never closed"),
    ("typedef void v;", "1:9", "'void' is allowed only"),
    ("const C = C;", "1:1", "defined in terms of itself"),
])
def test_errors_name_file_line_and_column(tmp_path, text, where, message):
    msg = error_of(tmp_path, text)
    assert f"t.x:{where}:" in msg
    assert message in msg


def test_errors_point_into_included_files(tmp_path):
    (tmp_path / "inc.x").write_text("const OK = 1;\nstruct bad { nope x; };\n")
    for system in (True, False):
        msg = error_of(tmp_path, '#include "inc.x"\nconst B = OK;\n', use_system_cpp=system)
        assert "inc.x:2:14:" in msg and "undefined type 'nope'" in msg


@pytest.mark.parametrize("system_cpp", [True, False])
def test_cpp_directives(tmp_path, system_cpp):
    m = compile_text(tmp_path, """
        #define SIZE 16
        #define TWICE SIZE
        #ifdef RPC_HDR
        const IN_HDR = 1;
        #else
        const NOT_HDR = 1;
        #endif
        #ifndef UNDEFINED_THING
        const N = TWICE;
        #endif
        #if defined(SIZE) && !defined(OTHER)
        const IFDEF = 2;
        #elif 1
        const ELIF = 3;
        #endif
        #if 0
        this is not XDR at all
        #endif
    """, use_system_cpp=system_cpp)
    assert {c.name: c.value for c in m.consts} == {"IN_HDR": 1, "N": 16, "IFDEF": 2}


def test_builtin_cpp_reports_unbalanced_conditionals(tmp_path):
    msg = error_of(tmp_path, "#ifdef X\nconst A = 1;\n", use_system_cpp=False)
    assert "missing #endif" in msg
    msg = error_of(tmp_path, '#include "missing.x"\n', use_system_cpp=False)
    assert "t.x:1:1:" in msg and "not found" in msg


def test_percent_define_constants_are_usable_as_sizes(tmp_path):
    m = compile_text(tmp_path, "%#define LEN 10\n%#define LEN1 LEN+1\ntypedef string s<LEN1>;\n")
    assert m.types["s"].type == model.String(11)


def test_percent_lines_inside_definitions_and_self_typedefs(tmp_path):
    m = compile_text(tmp_path, """
        struct s {
        %/* C comment copied by rpcgen */
            int a;
        };
        typedef struct s s;
        union u switch (int d) {
        case 1:
        %/* here too */
            int x;
        };
    """)
    assert [f.name for f in m.types["s"].fields] == ["a"]
    assert isinstance(m.types["s"], model.Struct) and "u" in m.types


def test_unbounded_array_of_zero_size_items_is_count_checked(tmp_path):
    m = compile_text(tmp_path, "typedef opaque z[0];\nstruct h { z items<>; z few<3>; };\n")
    fields = {f.name: f.type for f in m.types["h"].fields}
    assert m.count_guard(fields["items"]) == 1
    assert m.count_guard(fields["few"]) == 0
