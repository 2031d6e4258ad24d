"""Standard ONC RPC tools reach the cricket server: rpcinfo to the port, and rpcbind with --register."""
import shutil
import subprocess

import pytest

from cricket.protocol import PROGRAM, VERSION

PLUGIN = "plugin_backend:HostMemoryBackend"
needs_rpcinfo = pytest.mark.skipif(shutil.which("rpcinfo") is None,
                                   reason="rpcinfo missing (apt-get install rpcbind)")


@needs_rpcinfo
def test_rpcinfo_pings_the_server_at_its_port(start_server):
    server = start_server("--backend", PLUGIN)
    universal = f"127.0.0.1.{server.port >> 8}.{server.port & 0xFF}"
    r = subprocess.run(["rpcinfo", "-a", universal, "-T", "tcp", str(PROGRAM), str(VERSION)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ready and waiting" in r.stdout


@needs_rpcinfo
def test_register_makes_rpcinfo_list_the_server(start_server, rpcbind):
    server = start_server("--backend", PLUGIN, "--register")
    out = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True, timeout=30).stdout
    rows = [line.split()[:4] for line in out.splitlines()]
    assert [str(PROGRAM), str(VERSION), "tcp", str(server.port)] in rows, out
    server.stop()
    out = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True, timeout=30).stdout
    rows = [line.split()[:4] for line in out.splitlines()]
    assert [str(PROGRAM), str(VERSION), "tcp", str(server.port)] not in rows, out
