"""Byte-identical XDR with C: routines from the system rpcgen, linked with libtirpc.

A C peer (data/xdr_peer.c + rpcgen -c output of data/everything.x) is built once per
session.  For hypothesis-generated values of every type, C decodes the bytes Python
produced, encodes them again, and the bytes must be identical; Python decodes C's bytes
back to an equal value.  Values built in C decode in Python to the expected objects.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rpcgen_testlib import DATA

pytestmark = pytest.mark.cc


@pytest.fixture(scope="session")
def c_peer(tmp_path_factory):
    d = tmp_path_factory.mktemp("cpeer")
    shutil.copy(DATA / "everything.x", d)
    for flag, out in (("-h", "everything.h"), ("-c", "everything_xdr.c")):
        subprocess.run(["rpcgen", "-N", flag, "-o", out, "everything.x"], cwd=d, check=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libtirpc"], check=True,
                           capture_output=True, text=True).stdout.split()
    subprocess.run(["gcc", "-O1", "-I.", "-o", "peer", str(DATA / "xdr_peer.c"), "everything_xdr.c",
                    *flags], cwd=d, check=True)
    proc = subprocess.Popen([str(d / "peer")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1)
    yield _Peer(proc)
    proc.stdin.close()
    proc.wait(timeout=10)


class _Peer:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def _ask(self, line: str) -> list[str]:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().split()

    def round_trip(self, type_name: str, data: bytes) -> tuple[int, bytes] | None:
        """C decodes ``data`` as ``type_name`` and encodes it again; None if C rejects it."""
        words = self._ask(f"RT {type_name} {data.hex()}")
        if words[0] == "ERR":
            return None
        used, ok, n = int(words[0]), words[1], int(words[2])
        assert ok == "OK"
        out = bytes.fromhex(words[3]) if n else b""
        return used, out

    def make(self, what: str) -> bytes:
        words = self._ask(f"MAKE {what}")
        assert words[0] == "OK", words
        return bytes.fromhex(words[2])


# -- strategies for the types of everything.x (bounds as declared there) -------------------
int32 = st.integers(-2**31, 2**31 - 1)
uint32 = st.integers(0, 2**32 - 1)
# C strings end at NUL, so C cannot carry one; surrogates are not text.
cstr = st.text(st.characters(min_codepoint=1, blacklist_categories=("Cs",)), max_size=8)


def strategies(ev):
    point = st.builds(ev.point, x=int32, y=int32)
    nodes = st.lists(st.tuples(int32, cstr), max_size=6)

    def chain(items):
        head = None
        for v, label in reversed(items):
            head = ev.node(value=v, label=label, next=head)
        return head

    nodelist = nodes.map(chain)
    shape = st.one_of(
        st.builds(lambda p: ev.shape(ev.RED, center=p), point),
        st.builds(lambda k, r: ev.shape(k, radii=r), st.sampled_from([ev.GREEN, ev.BLUE]),
                  st.lists(int32, max_size=8)),
        st.just(ev.shape(ev.ALIAS_MAX)))
    maybe = st.one_of(st.builds(lambda v: ev.maybe(True, value=v), st.integers(-2**63, 2**63 - 1)),
                      st.just(ev.maybe(False)))
    numbered = st.one_of(st.builds(lambda d: ev.numbered(1, d=d), st.floats(allow_nan=False)),
                         st.builds(lambda f: ev.numbered(ord("A"), f=f),
                                   st.floats(width=32, allow_nan=False)))
    everything = st.builds(
        ev.everything, i=int32, u=uint32, ui=uint32, h=st.integers(-2**63, 2**63 - 1),
        uh=st.integers(0, 2**64 - 1), f=st.floats(width=32, allow_nan=False),
        d=st.floats(allow_nan=False), b=st.booleans(), c=st.integers(-128, 127),
        s=st.integers(-2**15, 2**15 - 1), us=st.integers(0, 2**16 - 1),
        col=st.sampled_from(list(ev.color)), an=st.sampled_from(list(ev.autonum)),
        fo=st.binary(min_size=5, max_size=5), vo=st.binary(max_size=40),
        f4=st.binary(min_size=4, max_size=4), bl=st.binary(max_size=8), nm=cstr,
        anystr=st.text(st.characters(min_codepoint=1, blacklist_categories=("Cs",)), max_size=30),
        farr=st.lists(int32, min_size=3, max_size=3), pts=st.lists(point, max_size=8),
        many=st.lists(int32, max_size=30), few=st.lists(uint32, max_size=8), lst=nodelist,
        sh=shape, mb=maybe, num=numbered, opt=st.none() | point, from_=int32)
    return {
        "color": st.sampled_from(list(ev.color)), "autonum": st.sampled_from(list(ev.autonum)),
        "name": cstr, "blob": st.binary(max_size=8), "fixed4": st.binary(min_size=4, max_size=4),
        "ints": st.lists(int32, max_size=50), "uints": st.lists(uint32, max_size=8),
        "point": point, "nodelist": nodelist, "shape": shape, "maybe": maybe,
        "numbered": numbered, "everything": everything,
    }


TYPES = ["color", "autonum", "name", "blob", "fixed4", "ints", "uints", "point", "nodelist",
         "shape", "maybe", "numbered", "everything"]


@pytest.mark.parametrize("type_name", TYPES)
def test_c_and_python_produce_identical_bytes(ev, c_peer, type_name):
    strat = strategies(ev)[type_name]
    pack = getattr(ev, f"pack_{type_name}")
    unpack = getattr(ev, f"unpack_{type_name}")

    @settings(max_examples=40 if type_name == "everything" else 25, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(strat)
    def check(value):
        data = pack(value)
        res = c_peer.round_trip(type_name, data)
        assert res is not None, f"C rejected Python's encoding of {value!r}: {data.hex()}"
        used, c_bytes = res
        assert used == len(data)
        assert c_bytes == data
        assert unpack(c_bytes) == value

    check()


def test_values_built_in_c_decode_in_python(ev, c_peer):
    assert ev.unpack_point(c_peer.make("point")) == ev.point(x=40, y=-2)
    lst = ev.unpack_nodelist(c_peer.make("nodelist"))
    assert lst == ev.node(value=1, label="one", next=ev.node(
        value=2, label="two", next=ev.node(value=3, label="three", next=None)))
    assert ev.unpack_shape(c_peer.make("shape")) == ev.shape(ev.BLUE, radii=[7, 8, 9])
    assert ev.unpack_maybe(c_peer.make("maybe")) == ev.maybe(True, value=-1234567890123)


@pytest.mark.parametrize("type_name,data", [
    ("numbered", b"\0\0\0\x02" + b"\0" * 8),          # no arm for tag 2
    ("uints", b"\0\0\0\x09" + b"\0" * 36),            # over the declared maximum
    ("name", b"\0\0\0\x21" + b"x" * 36),              # string over MAXNAME
    ("ints", b"\x7f\xff\xff\xff" + b"\0" * 8),        # huge count, short buffer
    ("point", b"\0\0\0\x01"),                         # truncated
])
def test_c_and_python_reject_the_same_bad_input(ev, c_peer, type_name, data):
    assert c_peer.round_trip(type_name, data) is None
    with pytest.raises(ValueError):
        getattr(ev, f"unpack_{type_name}")(data)
