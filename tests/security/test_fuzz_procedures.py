"""Every procedure's argument body, fuzzed against a real server (issue 15): random bodies and
structure-aware mutations of valid calls (bytes flipped, words set to boundary values, bodies cut
or extended; images mutated and hashed again so that they reach the parsers). The server answers
each with GARBAGE_ARGS or a CUDA error, never SYSTEM_ERR, never CUDA_ERROR_UNKNOWN, never a
closed connection; it keeps serving, and its RSS, descriptors and threads return to where they were.

The calls and their mutations are in fuzz_calls.py (``valid_calls``: one valid call of every
procedure). The short run (8 examples per procedure) is part of `make test-fast`; the long one is
marked slow (100 per procedure, or CRICKET_FUZZ_EXAMPLES)."""
from __future__ import annotations

import array
import os
import socket
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cricket.client.api import connect
from cricket.protocol import PROCEDURES, PROGRAM, VERSION

from fuzz_calls import Target, encoded, fuzz_one, valid_calls
from hostile_peers import assert_back_to, warmed_up


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    from hostile_peers import SERVER_PATH
    from server_process import ServerProcess
    server = ServerProcess(tmp_path_factory.mktemp("fuzz"), "--backend", "emu", "--session-memory", "64M",
                           "--max-image", "8M", env={"PYTHONPATH": SERVER_PATH})
    baseline = warmed_up(server)
    target = Target(server)
    yield target
    target.close()
    try:
        with connect(server.address) as other:          # the server still serves a good client
            data = bytes(range(256)) * 1024
            assert other.to_device(data).to_host() == data
        assert_back_to(server, baseline, rss_slack=48 << 20)
    finally:
        server.stop()


def test_every_procedure_has_a_valid_call_to_mutate(fuzzed):
    calls = valid_calls(fuzzed.fresh())
    assert set(calls) == set(PROCEDURES)
    rpc = fuzzed.conn._rpc
    for name in ("CR_MEMCPY_HTOD", "CR_MEMCPY_DTOH", "CR_MEMCPY_DTOD", "CR_MEMSET", "CR_MODULE_LOAD",
                 "CR_MODULE_GET_FUNCTION", "CR_MODULE_GET_GLOBAL", "CR_LAUNCH", "CR_EVENT_RECORD",
                 "CR_STREAM_WAIT_EVENT", "CR_EVENT_ELAPSED_TIME", "CR_ARRAY_CREATE", "CR_MEMCPY_3D",
                 "CR_MEMCPY_3D_DTOH", "CR_TEXOBJ_CREATE", "CR_GRAPH_CREATE", "CR_GRAPH_LAUNCH"):  # the seeds work unmutated
        reply = rpc.call(PROGRAM, VERSION, PROCEDURES[name], [encoded(name, *calls[name])])
        assert struct.unpack_from(">i", reply)[0] == 0, (name, bytes(reply[4:100]))


SHORT = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
# The long run: ~45 s on the 2-core box; CRICKET_FUZZ_EXAMPLES=N runs N per procedure (300: ~2 min).
LONG = settings(max_examples=int(os.environ.get("CRICKET_FUZZ_EXAMPLES", "100")), deadline=None,
                database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("name", sorted(PROCEDURES))
@given(data=st.data())
@SHORT
def test_fuzzed_arguments_get_errors_not_crashes(fuzzed, name, data):
    fuzz_one(fuzzed, name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROCEDURES))
@given(data=st.data())
@LONG
def test_fuzzed_arguments_get_errors_not_crashes_long(fuzzed, name, data):
    fuzz_one(fuzzed, name, data)


@given(data=st.binary(max_size=80), nfds=st.integers(0, 3))
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_fuzzed_messages_to_the_descriptor_inbox_are_refused(fuzzed, data, nfds):
    address = fuzzed._connection()._stub.CR_SHM_TICKET().ticket.address
    fds = [os.memfd_create("fuzz", os.MFD_CLOEXEC) for _ in range(nfds)]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(10)
            s.connect("\0" + address)
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
            s.sendmsg([data], ancillary)
            answer = s.recv(1024)
        assert answer.startswith(b"\1") or answer == b""
    finally:
        for fd in fds:
            os.close(fd)
