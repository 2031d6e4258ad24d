"""The Python API of a generated module, with the pure-Python and the compiled codec."""
from __future__ import annotations

import enum

import pytest

from cricket.xdr import Packer, Unpacker
from cricket.xdr.errors import XdrDiscriminantError, XdrError, XdrLengthError, XdrValueError


def sample(ev):
    return ev.everything(
        i=-7, u=7, ui=2**32 - 1, h=-2**63, uh=2**64 - 1, f=1.5, d=-2.25, b=True, c=-128, s=300,
        us=65535, col=ev.color.BLUE, an=ev.autonum.FOURTH, fo=b"12345", vo=b"\x00\x01",
        f4=b"abcd", bl=b"12345678", nm="name", anystr="free text", farr=[1, 2, 3],
        pts=[ev.point(x=1, y=2), ev.point(x=-3, y=4)], many=list(range(20)), few=[1, 2],
        lst=ev.node(value=1, label="a", next=ev.node(value=2, label="b", next=None)),
        sh=ev.shape(ev.GREEN, radii=[5, 6]), mb=ev.maybe(True, value=-9),
        num=ev.numbered(65, f=0.5), opt=None, from_=11)


def test_constants_are_module_attributes(ev):
    assert (ev.MAXITEMS, ev.ALIASMAX, ev.MAGIC, ev.OCTAL, ev.NEGATIVE) == (8, 8, 0x7F, 0o17, -5)
    assert ev.GREETING == "hello"


def test_enums_are_int_enums_with_c_numbering(ev):
    assert issubclass(ev.color, enum.IntEnum)
    assert ev.color.BLUE == 2 and ev.BLUE is ev.color.BLUE
    assert [m.value for m in ev.autonum] == [0, 1, 10, 11]
    assert ev.unpack_color(b"\0\0\0\x02") is ev.color.BLUE


def test_struct_keyword_constructor_attributes_and_equality(ev):
    p = ev.point(x=1, y=2)
    assert (p.x, p.y) == (1, 2)
    assert p == ev.point(x=1, y=2) and p != ev.point(x=1, y=3)
    assert repr(p) == "point(x=1, y=2)"
    with pytest.raises(TypeError):
        ev.point(1, 2)


def test_python_keyword_member_gets_trailing_underscore(ev):
    v = sample(ev)
    assert v.from_ == 11
    assert "from_" in ev.everything.__slots__


def test_round_trip_of_every_construct(ev):
    v = sample(ev)
    data = ev.pack_everything(v)
    assert len(data) % 4 == 0
    back = ev.unpack_everything(data)
    assert back == v
    assert back.col is ev.color.BLUE
    assert back.lst.next.label == "b" and back.lst.next.next is None


def test_pure_and_compiled_codecs_agree(everything_pure, ev):
    v = sample(ev)
    assert ev.pack_everything(v) == everything_pure.pack_everything(sample(everything_pure))


def test_union_constructor_takes_discriminant_and_arm(ev):
    s = ev.shape(kind=ev.RED, center=ev.point(x=1, y=1))
    assert s.xdr_arm == "center"
    assert ev.unpack_shape(ev.pack_shape(s)) == s
    void = ev.shape(ev.ALIAS_MAX)  # no case: the default arm is void
    assert ev.pack_shape(void) == b"\0\0\0\x08"
    assert ev.unpack_shape(b"\0\0\0\x08") == void
    assert repr(ev.maybe(False)) == "maybe(present=False)"
    assert ev.pack_maybe(ev.maybe(True, value=1)) == b"\0\0\0\x01" + b"\0" * 7 + b"\x01"


def test_union_without_default_rejects_unknown_discriminant(ev):
    with pytest.raises(XdrDiscriminantError):
        ev.unpack_numbered(b"\0\0\0\x02" + b"\0" * 8)
    with pytest.raises(XdrValueError):
        ev.pack_numbered(ev.numbered(2, d=1.0))


def test_bad_enum_value_is_rejected_both_ways(ev):
    with pytest.raises(XdrDiscriminantError):
        ev.unpack_color(b"\0\0\0\x05")
    with pytest.raises(XdrValueError):
        ev.pack_color(5)


def test_bad_bool_in_optional_data_is_rejected(ev):
    with pytest.raises(XdrDiscriminantError):
        ev.unpack_nodelist(b"\0\0\0\x02")


def test_optional_data_is_none_or_value(ev):
    assert ev.pack_nodelist(None) == b"\0\0\0\0"
    assert ev.unpack_nodelist(b"\0\0\0\0") is None


def test_hundred_thousand_node_list_uses_loops_not_recursion(ev):
    head = None
    for i in range(100_000):
        head = ev.node(value=i, label="", next=head)
    data = ev.pack_nodelist(head)
    assert len(data) == 4 + 100_000 * 12
    back = ev.unpack_nodelist(data)
    assert back == head
    n, node = 0, back
    while node is not None:
        n, node = n + 1, node.next
    assert n == 100_000
    assert repr(back).startswith("node(value=99999, label='', next=node(value=99998")


def test_maximums_are_enforced_on_pack_and_unpack(ev):
    with pytest.raises(XdrLengthError):
        ev.pack_name("x" * 33)
    with pytest.raises(XdrLengthError):
        ev.unpack_name(b"\0\0\0\x21" + b"x" * 36)
    with pytest.raises(XdrLengthError):
        ev.pack_uints(list(range(9)))
    with pytest.raises(XdrLengthError):
        ev.unpack_uints(b"\0\0\0\x09" + b"\0" * 36)


def test_huge_count_on_short_buffer_fails_fast(ev):
    with pytest.raises(XdrError):
        ev.unpack_ints(b"\x7f\xff\xff\xff" + b"\0" * 8)
    with pytest.raises(XdrError):
        ev.unpack_blob(b"\x7f\xff\xff\xff")


def test_c_type_ranges_are_enforced(ev):
    v = sample(ev)
    v.c = 128
    with pytest.raises(XdrValueError):
        ev.pack_everything(v)


def test_fixed_sizes_are_enforced(ev):
    with pytest.raises(XdrValueError):
        ev.pack_fixed4(b"abc")
    v = sample(ev)
    v.farr = [1, 2]
    with pytest.raises(XdrValueError):
        ev.pack_everything(v)


def test_truncated_input_and_trailing_bytes(ev):
    data = ev.pack_everything(sample(ev))
    for cut in (0, 1, 4, len(data) // 2, len(data) - 4):
        with pytest.raises(XdrError):
            ev.unpack_everything(data[:cut])
    with pytest.raises(XdrError, match="left over"):
        ev.unpack_point(ev.pack_point(ev.point(x=1, y=2)) + b"\0\0\0\0")


def test_typedef_of_struct_is_an_alias_and_codecs_exist_for_typedefs(ev):
    assert ev.unpack_fixed4(ev.pack_fixed4(b"wxyz")) == b"wxyz"
    assert ev.unpack_ints(ev.pack_ints([1, -1])) == [1, -1]


def test_codec_appends_into_a_packer_and_reads_from_an_unpacker(ev):
    p = Packer()
    p.pack_uint(99)
    ev._P_point(p, ev.point(x=5, y=6))
    u = Unpacker(p.get_buffer())
    assert u.unpack_uint() == 99
    assert ev._U_point(u) == ev.point(x=5, y=6)
    assert u.remaining() == 0


def test_large_opaque_in_a_struct_reaches_the_packer_without_copy(ev):
    v = sample(ev)
    v.vo = bytearray(1 << 20)
    p = Packer()
    ev._P_everything(p, v)
    views = [b for b in p.get_buffers() if isinstance(b, memoryview)]
    assert len(views) == 1 and len(views[0]) == 1 << 20
    v.vo[0] = 0xEE  # shares memory with the caller's buffer
    assert views[0][0] == 0xEE
    assert ev.unpack_everything(p.get_buffer()) == v


@pytest.mark.parametrize("type_name,data", [
    ("ints", b"\x7f\xff\xff\xff" + b"\0" * 8),
    ("blob", b"\x7f\xff\xff\xff" + b"\0" * 8),
    ("name", b"\x7f\xff\xff\xff" + b"\0" * 8),
    ("everything", b"\0" * 60 + b"\x7f\xff\xff\xff" + b"\0" * 8),  # vo<> length
])
def test_huge_lengths_fail_within_milliseconds_without_allocating(ev, type_name, data):
    import time
    import tracemalloc
    unpack = getattr(ev, f"unpack_{type_name}")
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(XdrError):
        unpack(data)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 0.05
    assert peak < 1 << 20


def test_python_names_that_clash_are_escaped(tmp_path):
    from rpcgen_testlib import generate
    x = tmp_path / "clash.x"
    x.write_text("""
        struct lambda { int self; int from; int class; };
        union u switch (int xdr_arm_d) { case 1: int arm; case 2: lambda None; };
        program P { version V { int def(lambda) = 1; } = 1; } = 0x20000001;
    """)
    m = generate(x, tmp_path, "clashpkg")
    v = m.lambda_(self=1, from_=2, class_=3)
    assert m.unpack_lambda(m.pack_lambda(v)) == v
    u = m.u(1, arm=5)
    assert u.arm == 5 and u.xdr_arm == "arm"
    assert m.unpack_u(m.pack_u(u)) == u
    assert m.unpack_u(m.pack_u(m.u(2, None_=v))).None_ == v
    assert callable(m.V_Client.def_) and callable(m.V_Client.def_batched)
    assert m.V_Server.procedures[1].name == "def_"  # the attribute the runtime looks up
    assert hasattr(m.V_Server, "def_")


def test_subclasses_and_duck_typed_values_encode_like_the_class(ev):
    from types import SimpleNamespace

    class Point3(ev.point):
        __slots__ = ("z",)

    expected = ev.pack_point(ev.point(x=3, y=-4))
    p3 = Point3(x=3, y=-4)
    p3.z = 9
    assert ev.pack_point(p3) == expected
    assert ev.pack_point(SimpleNamespace(x=3, y=-4)) == expected
    with pytest.raises(AttributeError):
        ev.pack_point(SimpleNamespace(x=3))
    shape = ev.shape(ev.GREEN, radii=[1])
    assert ev.pack_shape(SimpleNamespace(kind=ev.GREEN, radii=[1])) == ev.pack_shape(shape)
    unset = ev.point.__new__(ev.point)  # slots never assigned
    with pytest.raises(AttributeError):
        ev.pack_point(unset)


def test_garbage_input_raises_only_xdr_errors(ev):
    """Random bytes and corrupted valid encodings: an XdrError or a value, nothing else."""
    from hypothesis import given, settings, strategies as st

    good = ev.pack_everything(sample(ev))

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.binary(max_size=400),
                     st.tuples(st.integers(0, len(good) - 1), st.binary(min_size=1, max_size=4))
                     .map(lambda t: good[:t[0]] + t[1] + good[t[0] + len(t[1]):])))
    def check(data):
        try:
            v = ev.unpack_everything(data)
        except XdrError:
            return
        assert isinstance(v, ev.everything)

    check()


def test_quadruple_and_bool_arrays(tmp_path):
    from rpcgen_testlib import generate
    x = tmp_path / "quad.x"
    x.write_text("struct q { quadruple v; bool flags<>; quadruple many[2]; };\n")
    m = generate(x, tmp_path, "quadpkg")
    v = m.q(v=bytes(range(16)), flags=[True, False], many=[b"\1" * 16, b"\2" * 16])
    data = m.pack_q(v)
    assert data[:16] == bytes(range(16)) and len(data) == 16 + 4 + 8 + 32
    assert m.unpack_q(data) == v
