"""The cuda backend's copies from and to a mapped host region (the shared-memory path), on the fake
driver that stands in for a GPU (fake_cuda_driver.py): which driver calls, with the region's
address, and the bytes they move. A real GPU is needed for the DMA itself (tests marked gpu)."""
import ctypes
import mmap

from cricket.backends import cuda as cuda_backend


def _address(m: mmap.mmap) -> int:
    pin = ctypes.c_char.from_buffer(m)
    try:
        return ctypes.addressof(pin)
    finally:
        del pin


def test_copies_go_from_and_to_the_region_address(fake):
    dev = cuda_backend.CudaBackend().device(0)
    ptr = dev.mem_alloc(4096)
    region = mmap.mmap(-1, 8192)
    view = memoryview(region)
    base = _address(region)
    region[100:108] = b"abcdefgh"
    dev.memcpy_htod_host(ptr, view[100:108], base + 100)
    assert dev.memcpy_dtoh(ptr, 8) == b"abcdefgh"
    dev.memcpy_dtoh_host(ptr, view[5000:5008], base + 5000)
    assert region[5000:5008] == b"abcdefgh"
    stream = dev.stream_create(0)
    region[200:204] = b"wxyz"
    dev.memcpy_htod_host(ptr + 8, view[200:204], base + 200, stream)
    dev.memcpy_dtoh_host(ptr + 6, view[6000:6006], base + 6000, stream)
    assert region[6000:6006] == b"ghwxyz"
    assert {"cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync",
            "cuStreamSynchronize"} <= set(fake.calls)
    view.release()
