"""Standard ONC RPC tools reach the cricket server: rpcinfo to the port, and rpcbind with --register."""
import os
import shutil
import socket
import subprocess
import time

import pytest

from cricket.protocol import PROGRAM, VERSION

PLUGIN = "plugin_backend:HostMemoryBackend"
needs_rpcinfo = pytest.mark.skipif(shutil.which("rpcinfo") is None,
                                   reason="rpcinfo missing (apt-get install rpcbind)")


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@needs_rpcinfo
def test_rpcinfo_pings_the_server_at_its_port(start_server):
    server = start_server("--backend", PLUGIN)
    universal = f"127.0.0.1.{server.port >> 8}.{server.port & 0xFF}"
    r = subprocess.run(["rpcinfo", "-a", universal, "-T", "tcp", str(PROGRAM), str(VERSION)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ready and waiting" in r.stdout


@needs_rpcinfo
def test_register_makes_rpcinfo_list_the_server(start_server):
    started = None
    if not _listening(111):
        binary = shutil.which("rpcbind")
        if binary is None or os.geteuid() != 0:
            pytest.skip("no running rpcbind, and it cannot be started here (needs root and rpcbind)")
        os.makedirs("/run/rpcbind", exist_ok=True)
        started = subprocess.Popen([binary, "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not _listening(111):
            if started.poll() is not None or time.monotonic() > deadline:
                pytest.skip("rpcbind could not be started here")
            time.sleep(0.05)
    try:
        server = start_server("--backend", PLUGIN, "--register")
        out = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True, timeout=30).stdout
        rows = [line.split()[:4] for line in out.splitlines()]
        assert [str(PROGRAM), str(VERSION), "tcp", str(server.port)] in rows, out
        server.stop()
        out = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True, timeout=30).stdout
        rows = [line.split()[:4] for line in out.splitlines()]
        assert [str(PROGRAM), str(VERSION), "tcp", str(server.port)] not in rows, out
    finally:
        if started is not None:
            started.terminate()
            started.wait(10)
