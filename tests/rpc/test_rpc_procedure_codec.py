"""Each procedure's compiled codec steps (rpcgen ``--cython``), against the generated pure-Python
ones: a stub's arguments as buffers and its result from the reply's bytes, and the server's
arguments and result through ``Procedure.codec`` (the compiled record path calls them from C).
Both generated modules come from ``codec/pcodec.x``; a server serves each, the same bytes reach
both on a plain socket, and the replies must be the same bytes."""
from __future__ import annotations

import importlib
import shutil
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from cricket._select import pure_python_forced
from cricket.rpc import Client, Server, ServerThread
from cricket.xdr.errors import XdrError
from rpc_raw import call_record, read_record

X_FILE = Path(__file__).resolve().parent / "codec" / "pcodec.x"
PROG, VERS = 0x20000777, 1
SUCCESS, GARBAGE_ARGS, SYSTEM_ERR = 0, 4, 5


def _generate(root: Path, package: str, compiled: bool):
    pkg = root / package
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    subprocess.run([sys.executable, "-m", "rpcgen", str(X_FILE), "-o", str(pkg)]
                   + (["--cython"] if compiled else []), check=True, capture_output=True)
    if compiled:
        from rpcgen.build import build_codec
        build_codec(str(root), f"{package}._pcodec_xdr")
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    mod = importlib.import_module(f"{package}.pcodec")
    assert (mod._codec is not None) == compiled
    return mod


@pytest.fixture(scope="module")
def mods(tmp_path_factory):
    """(pure, compiled) generated modules; compiled is None under CRICKET_PUREPYTHON=1."""
    root = tmp_path_factory.mktemp("pcodec")
    pure = _generate(root, "pcodec_pure", False)
    compiled = None
    if not pure_python_forced():
        if not (shutil.which("cc") or shutil.which("gcc")):
            pytest.skip("no C compiler to build the generated Cython codec")
        compiled = _generate(root, "pcodec_compiled", True)
    yield pure, compiled
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m.startswith("pcodec_")]:
        del sys.modules[name]


def serving(mod):
    class PCodec(mod.PCODEC_V1_Server):
        def ECHO(self, data):
            return data

        def SHORT(self, data):
            return data

        def MAKE(self, a, b, label):
            return mod.pair(a=a, b=b, label=label)

        def NOTHING(self):
            return None

        def COUNT(self, p, data):
            return p.a + len(data)

    return ServerThread(Server([PCodec()]))


def words(*ws: int) -> bytes:
    return struct.pack(f">{len(ws)}I", *ws)


def opaque(data: bytes) -> bytes:
    return words(len(data)) + data + b"\0" * (-len(data) & 3)


CALLS = [
    (1, opaque(b"abcde")),
    (1, opaque(b"")),
    (1, opaque(bytes(range(256)) * 80)),                # 20 KiB: the reply's opaque goes uncopied
    (1, opaque(b"\x07" * 100_000)),                     # a view of the record, a large reply
    (2, opaque(b"12345678")),
    (2, opaque(b"123456789")),                          # over short_blob<8>: SYSTEM_ERR
    (3, words(0xFFFFFFFF, 1, 2) + opaque(b"label")),
    (3, words(1, 2, 3) + opaque(b"x" * 17)),            # name<16> over its bound: GARBAGE_ARGS
    (4, b""),
    (5, words(7, 0, 9) + opaque(b"ab") + opaque(b"xyz")),
    (5, words(7, 0, 9) + opaque(b"ab")),                # the blob missing: GARBAGE_ARGS
    (1, words(0x40000000) + b"ab"),                     # a length past the record: GARBAGE_ARGS
]


def _answers(address) -> list[bytes | None]:
    out = []
    with socket.create_connection(address, timeout=10) as sock:
        for xid, (proc, args) in enumerate(CALLS, 1):
            sock.sendall(call_record(PROG, VERS, xid, proc, args))
            out.append(read_record(sock))
    return out


def test_compiled_procedure_codec_answers_the_same_bytes(mods):
    pure, compiled = mods
    if compiled is None:
        pytest.skip("CRICKET_PUREPYTHON=1: the compiled codec is not used")
    assert all(p.codec is None for p in pure.PCODEC_V1_Server.procedures.values())
    assert all(p.codec is not None for p in compiled.PCODEC_V1_Server.procedures.values())
    with serving(pure) as a, serving(compiled) as b:
        want, got = _answers(a.address), _answers(b.address)
    assert got == want
    stats = [struct.unpack_from(">I", r, 20)[0] for r in got]
    assert stats == [SUCCESS, SUCCESS, SUCCESS, SUCCESS, SUCCESS, SYSTEM_ERR, SUCCESS, GARBAGE_ARGS,
                     SUCCESS, SUCCESS, GARBAGE_ARGS, GARBAGE_ARGS]
    assert got[0][24:] == opaque(b"abcde")
    assert got[3][24:] == opaque(b"\x07" * 100_000)


@pytest.mark.parametrize("payload", [b"", b"abc", bytes(20_000), bytes(100_000)])
def test_stub_arguments_and_results_match(mods, payload):
    pure, compiled = mods
    encoded = b"".join(bytes(b) for b in pure._PCODEC_V1_ECHO_args(payload))
    assert encoded == opaque(payload)
    assert pure._PCODEC_V1_ECHO_result(encoded) == payload
    if compiled is None:
        return
    buffers = compiled._PCODEC_V1_ECHO_args(payload)
    assert b"".join(bytes(b) for b in buffers) == encoded
    if len(payload) >= 16384:       # a large opaque is handed over uncopied, as the Packer does
        assert any(memoryview(b).obj is payload or b is payload for b in buffers)
    assert compiled._PCODEC_V1_ECHO_result(encoded) == payload
    assert compiled._PCODEC_V1_ECHO_result(memoryview(encoded)) == payload


def test_stub_errors_match(mods):
    for mod in [m for m in mods if m is not None]:
        with pytest.raises(XdrError):
            mod._PCODEC_V1_MAKE_args(1, 2, "x" * 17)        # name<16>
        with pytest.raises(XdrError):
            mod._PCODEC_V1_MAKE_args(1 << 40, 2, "x")        # int
        with pytest.raises(XdrError):
            mod._PCODEC_V1_SHORT_result(opaque(b"123456789"))
        with pytest.raises(XdrError):
            mod._PCODEC_V1_ECHO_result(words(9) + b"ab")


def test_generated_stubs_call_through_both_codecs(mods):
    for mod in [m for m in mods if m is not None]:
        with serving(mod) as st, Client(st.address) as rpc:
            stub = mod.PCODEC_V1_Client(rpc)
            assert stub.ECHO(b"hello") == b"hello"
            assert bytes(stub.ECHO(bytes(70_000))) == bytes(70_000)
            made = stub.MAKE(-1, 1 << 40, "label")
            assert (made.a, made.b, made.label) == (-1, 1 << 40, "label")
            assert stub.NOTHING() is None
            assert stub.COUNT(made, b"xyz") == 2
            stub.NOTHING_batched()
            assert stub.SHORT(b"1234") == b"1234"
