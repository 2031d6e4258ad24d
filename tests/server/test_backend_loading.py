"""Backend loading in a running `cricket server`: --backend, LOADBACKEND, refusal, broken plugins."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.cudafacts import curesult
from cricket.client.api import CudaError, connect

PLUGIN = "plugin_backend:HostMemoryBackend"


def test_backend_named_at_start_serves_hello_and_is_listed(start_server):
    server = start_server("--backend", PLUGIN)
    with connect(server.address) as conn:
        assert conn.backend == "hostmem" and conn.emulated
        assert conn.devices[0].name == "host memory"
        rows = {b["type"]: b for b in conn.list_backends()}
        assert rows["hostmem"]["loaded"] and rows["hostmem"]["available"]
        assert not rows["cuda"]["loaded"]


def _server_that_does_not_start(*args: str) -> subprocess.CompletedProcess:
    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parents[1])])}
    return subprocess.run([sys.executable, "-m", "cricket", "server", "--listen", "127.0.0.1:0", *args],
                          capture_output=True, text=True, timeout=60, env=env)


def test_a_backend_that_fails_to_initialise_stops_the_server_with_its_reason():
    r = _server_that_does_not_start("--backend", "plugin_backend:FailingInitBackend")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "frobnicator is not plugged in" in r.stderr and "--list-backends" in r.stderr


def test_admin_loads_a_plugin_while_the_server_runs(start_server):
    server = start_server("--backend", PLUGIN + "=1048576", "--admin-token", "adm",
                          "--allow-backend-import")
    with connect(server.address, token="adm") as admin:
        with pytest.raises(CudaError) as info:
            admin.load_backend(PLUGIN, "2097152")
        assert info.value.code == curesult.NOT_PERMITTED
        assert "already loaded" in info.value.message and "no unloading" in info.value.message
        with pytest.raises(CudaError) as info:
            admin.load_backend("broken_plugin:Backend")
        assert "cricket_dependency_that_does_not_exist" in info.value.message
    with connect(server.address) as user:
        assert user.devices[0].total_memory == 1048576      # the first load stays
        with pytest.raises(CudaError) as info:
            user.load_backend("emu")
        assert info.value.code == curesult.NOT_PERMITTED
    assert server.alive()


def test_a_broken_plugin_at_start_stops_the_server_naming_it():
    # The other backend would load: a server that serves without what was asked for hides the fault.
    r = _server_that_does_not_start("--backend", "broken_plugin:Backend", "--backend", PLUGIN)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "cannot import broken_plugin" in r.stderr


def test_list_backends_shows_availability_and_reasons():
    r = subprocess.run([sys.executable, "-m", "cricket", "server", "--list-backends"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert "cuda" in lines and "emu" in lines
    from cricket.backends.cuda import CudaBackend
    if CudaBackend.unavailable_reason():
        assert " unavailable " in lines["cuda"]


def test_without_backend_option_the_server_picks_cuda_if_usable_else_emu(start_server):
    from cricket._gpu import gpu_unavailable_reason
    server = start_server()
    with connect(server.address) as conn:
        if gpu_unavailable_reason() is None:
            assert conn.backend == "cuda" and not conn.emulated
        else:
            assert conn.backend == "emu" and conn.emulated
            assert "using emu" in server.output()


def test_clients_choose_among_several_loaded_backends(start_server):
    server = start_server("--backend", "emu=memory=64M", "--backend", PLUGIN)
    with connect(server.address) as default, connect(server.address, backend="hostmem") as plugin:
        assert default.backend == "emu" and default.devices[0].total_memory == 64 << 20
        assert plugin.backend == "hostmem"
        assert default.to_device(b"emu").to_host() == b"emu"
        assert plugin.to_device(b"plugin").to_host() == b"plugin"
    with pytest.raises(CudaError) as info:
        connect(server.address, backend="cuda")
    assert info.value.code == curesult.NO_DEVICE and "not loaded" in info.value.message


def test_nothing_but_null_and_error_strings_answer_before_an_accepted_hello(start_server):
    from cricket.protocol import SyncClient, gen
    from cricket.rpc import Client
    server = start_server("--backend", PLUGIN, "--token", "t")
    with Client(server.address) as rpc:
        stub = SyncClient(rpc)
        rpc.null(gen.CRICKET_V1_Client.PROGRAM, 1)
        assert "ILLEGAL_ADDRESS" in stub.CR_ERROR_STRING(700)
        load = gen.cr_load_backend_args(type=PLUGIN, spec="")
        for res in (stub.CR_SERVER_STATS(), stub.CR_SESSION_STATS(), stub.CR_LIST_BACKENDS(),
                    stub.CR_MEM_ALLOC(16), stub.CR_CTX_SYNCHRONIZE(), stub.CR_LOAD_BACKEND(load)):
            assert res.status == curesult.NOT_INITIALIZED, res
        bad = stub.CR_HELLO(gen.cr_hello_args(protocol=gen.CRICKET_PROTOCOL, client="t", token="wrong", backend=""))
        assert bad.status == curesult.NOT_PERMITTED
        assert stub.CR_SERVER_STATS().status == curesult.NOT_INITIALIZED
        ok = stub.CR_HELLO(gen.cr_hello_args(protocol=gen.CRICKET_PROTOCOL, client="t", token="t", backend=""))
        assert ok.status == 0 and stub.CR_SERVER_STATS().status == 0
