"""CUDA_VISIBLE_DEVICES read as NVIDIA's driver reads it (cricket.client.visible_devices), applied
once to the server's HELLO snapshot: the rules on device lists of several devices, then programs
through `cricket run` on the emu server (one device) with static cudart (the libcuda.so.1
replacement) and with -cudart shared (the libcudart shim), which must see the same.

What NVIDIA's cudart does when no device is visible was measured with static cudart 13.0 on this
library: every call that needs a device, cudaGetDeviceCount included, fails with cudaErrorNoDevice
and leaves its out-parameter alone; cudaDriverGetVersion still answers."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))   # two_emu_devices, also for the server

from cricket.client import driver_env
from cricket.client.api import CudaError, connect
from cricket.client.local_server import LocalServer
from cricket.client.run_cli import SHIM, libpython
from cricket.client.visible_devices import uuid_text, visible, visible_indices

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

UUIDS = [bytes.fromhex("8932f937d72c855300000000000000a0"), bytes.fromhex("8932aa00000000000000000000000001"),
         bytes.fromhex("17e3c0de000000000000000000000002")]


# ------------------------------------------------------------------ the rules

def test_uuid_is_written_as_nvidia_smi_prints_it():
    assert uuid_text(UUIDS[0]) == "GPU-8932f937-d72c-8553-0000-0000000000a0"


@pytest.mark.parametrize("spec, expected", [
    (None, [0, 1, 2]),                         # unset: every device
    ("", []),                                  # set but empty: none
    ("2,0", [2, 0]),                           # the order given
    (" 1 , 2 ", [1, 2]),
    ("0,2,-1,1", [0, 2]),                      # the Programming Guide's example: an invalid entry ends the list
    ("3,0", []),                               # no such index
    ("1,x,0", [1]),
    ("0,0,1", [0]),                            # a device listed twice
    ("GPU-17e3", [2]),                         # a UUID prefix, GPU- included
    ("gpu-8932F937-D72C,2", [0, 2]),           # hex in either case
    ("GPU-8932,1", []),                        # a prefix that fits two devices names none
    ("GPU-8932aa00-0000-0000-0000-000000000001", [1]),
    ("MIG-8932f937", []),                      # no MIG instances here
    ("1,GPU-deadbeef,0", [1]),
])
def test_visible_indices(spec, expected):
    assert visible_indices(UUIDS, spec) == expected


def test_visible_reads_the_environment():
    class Dev:
        def __init__(self, uuid):
            self.uuid = uuid
    devs = [Dev(u) for u in UUIDS]
    assert visible(devs, environ={"CUDA_VISIBLE_DEVICES": "2,1"}) == [devs[2], devs[1]]
    assert visible(devs, environ={}) == devs


# ------------------------------------------------------------------ on a server

@pytest.fixture(scope="module")
def server_uuid(server) -> bytes:
    with connect(server.address) as conn:
        return conn.server_devices[0].uuid


def test_python_api_sees_the_filtered_list(server, server_uuid, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with connect(server.address) as conn:
        assert conn.devices == [] and len(conn.server_devices) == 1
        with pytest.raises(CudaError) as err:
            conn.set_device(0)
        assert err.value.code == 101
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", uuid_text(server_uuid)[:10])
    with connect(server.address) as conn:
        assert [d.uuid for d in conn.devices] == [server_uuid] and conn.devices[0].ordinal == 0
        conn.set_device(0)


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> dict[str, Path]:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not driver_env.available() or not SHIM.exists():
        pytest.skip("the libcuda.so.1 replacement or the libcudart shim is not built; run make build")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    out = tmp_path_factory.mktemp("visible")
    built = {}
    for cudart in ("static", "shared"):
        built[cudart] = out / f"visible_{cudart}"
        subprocess.run(["nvcc", "-cudart", cudart, "-o", str(built[cudart]), str(HERE / "cuda" / "visible_devices.cu")],
                       check=True)
    return built


def run(program: Path, server: LocalServer, spec: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRICKET_", "CUDA_VISIBLE"))}
    if spec is not None:
        env["CUDA_VISIBLE_DEVICES"] = spec
    proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--", str(program)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


NO_DEVICE = {"driver_version": "0 cudaSuccess", "count": "100 cudaErrorNoDevice", "count_value": "77",
             "set_device": "100 cudaErrorNoDevice", "malloc": "100 cudaErrorNoDevice", "free0": "100 cudaErrorNoDevice"}


@pytest.mark.nvcc
@pytest.mark.parametrize("cudart", ["static", "shared"])
@pytest.mark.parametrize("spec", ["", "1", "-1,0"])
def test_no_visible_device_fails_every_call_with_no_device(programs, server, cudart, spec):
    assert run(programs[cudart], server, spec) == NO_DEVICE


@pytest.mark.nvcc
@pytest.mark.parametrize("cudart", ["static", "shared"])
@pytest.mark.parametrize("spec", ["0,1", "uuid-prefix", "full-uuid"])
def test_the_visible_device_is_the_servers(programs, server, server_uuid, cudart, spec):
    text = uuid_text(server_uuid)
    spec = {"uuid-prefix": text[:9], "full-uuid": text.upper()}.get(spec, spec)
    got = run(programs[cudart], server, spec)
    assert got["count"] == "0 cudaSuccess" and got["count_value"] == "1"
    assert got["set_device"] == got["malloc"] == got["free0"] == "0 cudaSuccess"
    assert got["device0"].split()[-2] == server_uuid.hex()


# ------------------------------------------------------------------ a server with two devices

@pytest.fixture(scope="module")
def two_device_server(start_server):
    from two_emu_devices import NAMES  # noqa: F401 -- fails here, not in the server, if it broke
    return start_server(["two_emu_devices:TwoDeviceEmu"], env={"PYTHONPATH": os.pathsep.join((str(HERE), str(ROOT)))})


def devices_seen(got: dict[str, str]) -> list[tuple[str, int]]:
    """(name, total memory) of each device the program listed, in its order."""
    out = []
    for i in range(int(got["count_value"])):
        *name, uuid, total = got[f"device{i}"].split()
        out.append((" ".join(name), int(total)))
    return out


@pytest.mark.nvcc
@pytest.mark.parametrize("cudart", ["static", "shared"])
@pytest.mark.parametrize("spec, expected", [
    (None, ["A", "B"]),
    ("1", ["B"]),                    # visible device 0 is the server's device 1, memory and all
    ("1,0", ["B", "A"]),
    ("GPU-bbbb", ["B"]),
    ("0,7,1", ["A"]),
])
def test_visible_devices_map_to_the_servers_ordinals(programs, two_device_server, cudart, spec, expected):
    from two_emu_devices import ARENAS, NAMES
    got = run(programs[cudart], two_device_server, spec)
    want = [(NAMES["AB".index(x)], ARENAS["AB".index(x)]) for x in expected]
    assert devices_seen(got) == want
    assert got["malloc"] == "0 cudaSuccess"
