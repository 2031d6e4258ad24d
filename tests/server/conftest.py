"""Fixtures for the server tests: nvcc-built fatbins and real `cricket server` processes on loopback."""
from __future__ import annotations

from pathlib import Path

import pytest

from server_process import ServerProcess

HERE = Path(__file__).resolve().parent
CUDA_DIR = HERE / "cuda"
REPO = HERE.parents[1]

# scale(float *p, float s): p[threadIdx.x] *= s
SCALE_PTX = """
.version 8.0
.target sm_75
.address_size 64
.visible .entry scale(.param .u64 p, .param .f32 s)
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [p];
    ld.param.f32 %f1, [s];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    ld.global.f32 %f2, [%rd2];
    mul.f32 %f3, %f2, %f1;
    st.global.f32 [%rd2], %f3;
    ret;
}
"""


@pytest.fixture(scope="session")
def fatbins(nvcc_build) -> dict[str, Path]:
    """The kernels of tests/server/cuda compiled by nvcc into fatbins (SASS and PTX for sm_75)."""
    return {cu.stem: nvcc_build("-fatbin", "-arch=sm_75", cu, output=f"{cu.stem}.fatbin")
            for cu in sorted(CUDA_DIR.glob("*.cu"))}


def _start_servers(tmp: Path):
    started: list[ServerProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> ServerProcess:
        server = ServerProcess(tmp, *args, env=env)
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def start_server(tmp_path):
    """Start servers with given CLI arguments; all are stopped after the test."""
    yield from _start_servers(tmp_path)


@pytest.fixture(scope="module")
def start_module_server(tmp_path_factory):
    """``start_server`` for servers a module's tests share (no limit or failure of their own);
    they are stopped after the module."""
    yield from _start_servers(tmp_path_factory.mktemp("module-servers"))


def emu_unavailable_reason() -> str | None:
    try:
        from cricket.backends import emu
    except ImportError as exc:
        return f"the emu engine is not in this build ({exc})"
    if not hasattr(emu, "EmuDevice"):
        return "the emu engine in this build has no EmuDevice yet"
    return None


@pytest.fixture(scope="module")
def emu_server(tmp_path_factory):
    """One emu server shared by the tests of a module."""
    reason = emu_unavailable_reason()
    if reason:
        pytest.skip(reason)
    server = ServerProcess(tmp_path_factory.mktemp("emu-server"), "--backend", "emu",
                           "--admin-token", "admin-secret")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def cuda_server(tmp_path_factory):
    """A server on the cuda backend (tests using it are marked gpu and skip without one)."""
    server = ServerProcess(tmp_path_factory.mktemp("cuda-server"), "--backend", "cuda")
    yield server
    server.stop()


@pytest.fixture
def fake(monkeypatch):
    """The cuda backend on the fake driver that stands in for a GPU (fake_cuda_driver.py)."""
    import fake_cuda_driver
    from cricket.backends import cuda as cuda_backend
    driver = fake_cuda_driver.FakeDriver()
    monkeypatch.setattr(cuda_backend, "_driver", lambda: driver)
    monkeypatch.setattr(cuda_backend.CudaBackend, "unavailable_reason", classmethod(lambda cls: None))
    return driver


@pytest.fixture(scope="session")
def scale_ptx() -> bytes:
    """PTX of ``scale(float *p, float s)``: ``p[threadIdx.x] *= s``, for the in-process emu tests."""
    return SCALE_PTX.encode()
