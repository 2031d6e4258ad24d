"""``--register``: a server registers its programs with a running rpcbind and removes them when it
stops. Uses the rpcbind already running on this host, or starts one (tests/conftest.py's
``rpcbind`` fixture)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from rpc_peers import ServerProcess
from cricket.rpc.rpcbind import pmap_getport
from rpc_interop import PROG


def _rpcinfo_lists(port: int) -> bool:
    out = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True,
                         timeout=30).stdout
    return any(line.split()[:4] == [str(PROG), "1", "tcp", str(port)] for line in out.splitlines())


@pytest.mark.skipif(shutil.which("rpcinfo") is None, reason="rpcinfo missing (apt-get install rpcbind)")
def test_register_lists_the_service_and_stop_removes_it(rpcbind, c_interop):
    sp = ServerProcess("rpc_interop:InteropServer", extra=("--register",))
    try:
        port = sp.address[1]
        assert pmap_getport(PROG, 1) == port
        assert _rpcinfo_lists(port)
        # A libtirpc client given port 0 asks rpcbind for the port, then calls our server.
        assert c_interop.run_client(("127.0.0.1", 0), "none")[1] == "ADD 42"
    finally:
        log = sp.stop()
    assert "registered 1 program versions with rpcbind" in log
    assert pmap_getport(PROG, 1) == 0
    assert not _rpcinfo_lists(port)
