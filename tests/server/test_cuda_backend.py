"""The cuda backend: unavailable with a reason where there is no GPU; real work where there is one."""
import pytest

from cricket.backends.base import BackendError
from cricket.backends.cuda import CudaBackend
from cricket.backends.registry import BackendLoadError, BackendRegistry


def test_module_imports_without_cuda_python_or_gpu():
    # cuda-python is imported only when the backend is used.
    assert CudaBackend.type_name == "cuda"


def test_without_a_gpu_the_backend_says_why_and_refuses_to_load():
    reason = CudaBackend.unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is usable here")
    assert isinstance(reason, str) and reason
    with pytest.raises(BackendError, match="unavailable"):
        CudaBackend()
    reg = BackendRegistry()
    with pytest.raises(BackendLoadError, match="cuda.*failed to initialise.*unavailable"):
        reg.load("cuda")
    row = {r.type: r for r in reg.status()}["cuda"]
    assert not row.available and row.reason == reason


@pytest.mark.gpu
def test_gpu_memory_round_trip_and_memset():
    backend = CudaBackend()
    dev = backend.device(0)
    assert backend.devices()[0].total_memory > 0
    ptr = dev.mem_alloc(1 << 20)
    dev.memcpy_htod(ptr, b"cricket!" * 4)
    assert dev.memcpy_dtoh(ptr, 32) == b"cricket!" * 4
    dev.memset(ptr + 32, 0x01020304, 4, 2)
    assert dev.memcpy_dtoh(ptr + 32, 8) == bytes([4, 3, 2, 1]) * 2
    dev.mem_free(ptr)
