"""Device printf output on the server: kept per session (bounded like CUDA's printf FIFO), never
printed by the server, returned and cleared by CR_DEVICE_OUTPUT; the Python API writes it to
sys.stdout at synchronising calls; the server says at CR_MODULE_LOAD whether a module prints, so
a client never looks into (or decompresses) an image for it. Real emu servers on loopback."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cricket.client.api import connect
from cricket.fatbin import image_calls_printf
from cricket.protocol import gen as P
from cricket.server.device_output import OutputBuffer

ROOT = Path(__file__).resolve().parents[2]
PTX = ROOT / "tests" / "emu" / "ptx"
PRINTF_PTX = (PTX / "printf.sm75.ptx").read_bytes()      # hello(int base, double scale)
BASIC_PTX = (PTX / "basic.sm75.ptx").read_bytes()        # vecadd(a, b, c, n), no printf
LINE = re.compile(r"^thread (\d+) of block (\d+): (-?\d+) ", re.M)


def _hello_lines(text: str) -> list[tuple[int, int]]:
    return [(int(m.group(1)), int(m.group(3))) for m in LINE.finditer(text)]


# --- the buffer ------------------------------------------------------------------------------

def test_buffer_keeps_lines_in_order_and_take_clears_them():
    buf = OutputBuffer(limit=64)
    buf("one\n")
    buf.write("two\n")
    assert buf.pending == 8
    assert buf.take() == (b"one\ntwo\n", 0)
    assert buf.take() == (b"", 0) and buf.pending == 0


def test_full_buffer_drops_the_newest_lines_and_counts_them(caplog):
    buf = OutputBuffer(session_id=9, limit=10)
    for text in ("12345\n", "abcde\n", "xyz\n", "toolong\n"):
        buf(text)
    # "12345\n" fits (6 bytes), "abcde\n" would make 12: dropped; "xyz\n" fits (10); the last is dropped
    assert buf.take() == (b"12345\nxyz\n", 2)
    assert sum("printf buffer full" in r.getMessage() for r in caplog.records) == 1   # said once
    buf("again\n")
    assert buf.take() == (b"again\n", 0)


def test_buffer_limit_is_checked():
    with pytest.raises(ValueError, match="printf buffer"):
        OutputBuffer(limit=P.CRICKET_MAX_OUTPUT + 1)
    with pytest.raises(ValueError):
        OutputBuffer(limit=0)


def test_output_reply_longer_than_its_maximum_is_refused():
    ok = P.pack_cr_output_res(P.cr_output_res(status=0, output=P.cr_output(text=b"hi\n", dropped=0)))
    assert P.unpack_cr_output_res(ok).output.text == b"hi\n"
    forged = bytearray(ok)
    forged[4:8] = (P.CRICKET_MAX_OUTPUT + 1).to_bytes(4, "big")     # the opaque's length
    with pytest.raises(Exception):
        P.unpack_cr_output_res(bytes(forged))


def test_images_are_classified_by_whether_they_call_vprintf(fatbins):
    assert image_calls_printf(PRINTF_PTX)
    assert not image_calls_printf(BASIC_PTX)
    assert not image_calls_printf(fatbins["vadd"].read_bytes())


@pytest.fixture(scope="module")
def compressed_printf_fatbin(tmp_path_factory) -> Path:
    """examples/printf_kernel.cu as a fatbin whose SASS and PTX entries nvcc compressed."""
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    out = tmp_path_factory.mktemp("compressed") / "printf_kernel.fatbin"
    r = subprocess.run(["nvcc", "-fatbin", "-arch=sm_75", "-Xfatbin", "-compress-all", "-o", str(out),
                        str(ROOT / "examples" / "printf_kernel.cu")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def test_module_load_reply_says_whether_the_module_calls_printf(emu_server, compressed_printf_fatbin):
    compressed = compressed_printf_fatbin.read_bytes()
    assert b"vprintf" not in compressed           # only a decompression shows it
    K = P.cr_image_kind
    with connect(emu_server.address) as conn:
        for image, kind, prints in ((PRINTF_PTX, K.CR_IMAGE_PTX, True), (BASIC_PTX, K.CR_IMAGE_PTX, False),
                                    (compressed, K.CR_IMAGE_FATBIN, True)):
            res = conn._stub.CR_MODULE_LOAD(P.cr_module_load_args(
                hash=hashlib.sha256(image).digest(), kind=kind, image=image))
            assert res.status == 0 and bool(res.module.prints) is prints


_LOAD_COMPRESSED = """
import json, sys
from cricket.client.api import connect
with connect(sys.argv[1]) as conn:
    hello = conn.load_module(sys.argv[2]).get_function("_Z5helloi")
    hello(1, 2, 40)
    conn.synchronize()
    print(json.dumps({"fetches": conn.output.fetches,
                      "imported": sorted(m for m in sys.modules if m.split(".")[0] in ("zstandard", "lz4"))}))
"""


def test_client_loads_a_compressed_fatbin_without_decompression_libraries(emu_server,
                                                                          compressed_printf_fatbin):
    r = subprocess.run([sys.executable, "-c", _LOAD_COMPRESSED, emu_server.address,
                        str(compressed_printf_fatbin)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "hello from thread 1 of block 0, value 41" in lines     # the server found the printf
    report = json.loads(lines[-1])
    assert report == {"fetches": 1, "imported": []}


# --- through a server --------------------------------------------------------------------------

def _hello(conn):
    return conn.load_module(PRINTF_PTX).get_function("hello")


def test_printf_output_reaches_the_caller_at_synchronize_not_the_server(emu_server, capsys):
    with connect(emu_server.address) as conn:
        hello = _hello(conn)
        hello(1, 6, 100, 0.5)
        assert _hello_lines(capsys.readouterr().out) == []       # not before a synchronising call
        conn.synchronize()
        got = _hello_lines(capsys.readouterr().out)
        assert got == [(0, 100), (3, 103)]
        stats = conn.session_stats()
        assert stats["calls.device_output"] == 1 and stats["printf_pending_bytes"] == 0
    assert "thread 3 of block 0" not in emu_server.output()


def test_blocking_copy_and_stream_and_event_synchronize_flush_the_output(emu_server, capsys):
    with connect(emu_server.address) as conn:
        hello = _hello(conn)
        buf = conn.alloc(8)
        hello(1, 3, 1, 0.0)
        buf.to_host(np.uint8)
        assert _hello_lines(capsys.readouterr().out) == [(0, 1)]
        stream = conn.create_stream()
        hello.launch(1, 3, (2, 0.0), stream=stream)
        stream.synchronize()
        assert _hello_lines(capsys.readouterr().out) == [(0, 2)]
        event = conn.create_event()
        hello(1, 3, 3, 0.0)
        event.record()
        event.synchronize()
        assert _hello_lines(capsys.readouterr().out) == [(0, 3)]


def test_two_sessions_each_see_only_their_own_lines(emu_server, capsys):
    with connect(emu_server.address) as a, connect(emu_server.address) as b:
        ha, hb = _hello(a), _hello(b)
        ha(1, 1, 1000, 0.0)
        hb(1, 1, 2000, 0.0)
        ha(1, 1, 1001, 0.0)
        b.synchronize()
        assert _hello_lines(capsys.readouterr().out) == [(0, 2000)]
        a.synchronize()
        assert _hello_lines(capsys.readouterr().out) == [(0, 1000), (0, 1001)]


def test_a_connection_without_printf_modules_never_fetches(emu_server, capsys):
    with connect(emu_server.address) as conn:
        vecadd = conn.load_module(BASIC_PTX).get_function("vecadd")
        x = np.arange(32, dtype=np.float32)
        dx, dy = conn.to_device(x), conn.alloc(x.nbytes)
        vecadd(1, 32, dx, dx, dy, 32)
        conn.synchronize()
        np.testing.assert_array_equal(dy.to_host(np.float32), 2 * x)
        assert conn.output.fetches == 0
        assert "calls.device_output" not in conn.session_stats()


def test_session_buffer_size_can_be_set_and_is_checked(emu_server, capsys):
    from cricket.cudafacts import curesult
    from cricket.client.api import CudaError
    with connect(emu_server.address) as conn:
        for bad in (0, P.CRICKET_MAX_OUTPUT + 1):
            with pytest.raises(CudaError) as info:
                conn.set_printf_buffer_size(bad)
            assert info.value.code == curesult.INVALID_VALUE
        conn.set_printf_buffer_size(60)        # room for one "thread N of block 0: ..." line
        hello = _hello(conn)
        hello(1, 6, 5, 0.0)
        conn.synchronize()
        assert _hello_lines(capsys.readouterr().out) == [(0, 5)]
        assert conn.output.dropped == 1
