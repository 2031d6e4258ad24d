"""Backend loading in a running `cricket server`: --backend, LOADBACKEND, refusal, broken plugins."""
import subprocess
import sys

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


def test_load_backend_at_run_time_on_a_server_started_without_one(start_server):
    server = start_server("--backend", "plugin_backend:FailingInitBackend", "--admin-token", "adm")
    assert "frobnicator is not plugged in" in server.output()
    with pytest.raises(CudaError) as info:          # nothing loaded: a user's HELLO fails clearly
        connect(server.address)
    assert info.value.code == curesult.NO_DEVICE and "no backend is loaded" in info.value.message
    with connect(server.address, token="adm") as admin:
        assert admin.devices == []
        admin.load_backend(PLUGIN)
    with connect(server.address) as user:
        assert user.backend == "hostmem"
        assert user.to_device(b"loaded at run time").to_host() == b"loaded at run time"


def test_admin_loads_a_plugin_while_the_server_runs(start_server):
    server = start_server("--backend", PLUGIN + "=1048576", "--admin-token", "adm")
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


def test_broken_plugin_at_start_is_reported_and_the_others_serve(start_server):
    server = start_server("--backend", "broken_plugin:Backend", "--backend", PLUGIN)
    assert "cannot import broken_plugin" in server.output()
    with connect(server.address) as conn:
        assert conn.backend == "hostmem"
        assert conn.to_device(b"abc").to_host() == b"abc"


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
