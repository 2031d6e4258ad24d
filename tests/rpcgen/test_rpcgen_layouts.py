"""Fixed layouts (rpcgen.layout): which types get ``pack_T_fixed``/``unpack_T_fixed`` and the
Cython ``put_T_fixed``/``get_T_fixed``, and that they write the bytes the full codec writes."""
from __future__ import annotations

import pytest

from rpcgen import load
from rpcgen.emit_layout import emit_layout_pxd
from rpcgen.layout import fixed_layouts
from rpcgen_testlib import generate

X = """
enum color { RED = 1, GREEN = 2 };
struct dim { unsigned x; unsigned y; };
struct launch { unsigned hyper fn; dim grid; color c; bool on; hyper h; float f; double d;
                opaque params<64>; };
struct named { int id; string name<16>; };
struct scalars_only { int a; unsigned hyper b; };
struct with_array { int a[2]; };
struct with_optional { int a; int *b; };
struct opaque_first { opaque data<8>; int after; };
struct node { int v; node *next; };
union result switch (int status) {
case 0: opaque data<1024>;
case 1: dim d;
case 2: void;
default: string message<32>;
};
"""


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    root = tmp_path_factory.mktemp("layouts")
    (root / "layouts.x").write_text(X)
    return generate(root / "layouts.x", root, "gen_layouts")


def _layouts(tmp_path) -> dict:
    (tmp_path / "t.x").write_text(X)
    return {x.name: x for x in fixed_layouts(load(str(tmp_path / "t.x")))}


def test_scalar_runs_and_a_trailing_opaque_or_string_have_layouts(tmp_path):
    layouts = _layouts(tmp_path)
    assert set(layouts) == {"dim", "launch", "named", "scalars_only", "result_data", "result_d"}
    launch = layouts["launch"]
    assert [s.name for s in launch.slots] == ["fn", "grid_x", "grid_y", "c", "on", "h", "f", "d",
                                              "params_len"]
    assert (launch.size, launch.tail, launch.tail_max) == (48, "params", 64)
    assert layouts["result_data"].slots[0].value == 0        # the discriminant is a constant


def test_pack_fixed_is_the_head_of_the_full_encoding(gen):
    v = gen.launch(fn=2**64 - 1, grid=gen.dim(x=3, y=4), c=gen.color.GREEN, on=True, h=-5, f=1.5,
                   d=-2.25, params=b"abcdef")
    head = gen.pack_launch_fixed(fn=2**64 - 1, grid_x=3, grid_y=4, c=2, on=1, h=-5, f=1.5, d=-2.25,
                                 params_len=6)
    assert len(head) == gen.launch_FIXED_SIZE
    assert gen.pack_launch(v) == head + b"abcdef\0\0"
    assert gen.unpack_launch_fixed(gen.pack_launch(v)) == (2**64 - 1, 3, 4, 2, 1, -5, 1.5, -2.25, 6)


def test_a_union_arm_layout_writes_its_case_value(gen):
    head = gen.pack_result_data_fixed(data_len=3)
    assert gen.pack_result(gen.result(status=0, data=b"xyz")) == head + b"xyz\0"
    assert gen.pack_result_d_fixed(d_x=7, d_y=8) == gen.pack_result(gen.result(status=1, d=gen.dim(x=7, y=8)))
    assert gen.unpack_result_data_fixed(head) == (0, 3)


def test_a_changed_field_changes_the_encoders_signature(tmp_path, gen):
    (tmp_path / "v2.x").write_text(X.replace("bool on;", "bool on; unsigned cluster;"))
    v2 = generate(tmp_path / "v2.x", tmp_path, "gen_layouts_v2")
    old_call = dict(fn=1, grid_x=1, grid_y=1, c=1, on=0, h=0, f=0.0, d=0.0, params_len=0)
    gen.pack_launch_fixed(**old_call)
    with pytest.raises(TypeError, match="cluster"):
        v2.pack_launch_fixed(**old_call)


def test_the_cython_layouts_are_inline_functions_on_the_buffer_library(tmp_path):
    (tmp_path / "t.x").write_text(X)
    text = emit_layout_pxd(fixed_layouts(load(str(tmp_path / "t.x"))), "t", "t.x")
    assert "from xdr_buffer cimport" in text
    assert "cdef inline char *put_launch_fixed(" in text
    assert "cdef inline const unsigned char *get_result_data_fixed(" in text
    assert "launch_FIXED_SIZE = 48" in text
