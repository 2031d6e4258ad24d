"""The cuda backend's own code on a fake driver that stands in for a GPU (fake_cuda_driver.py).

These tests check what the backend does with the driver API — which calls, in which order, with
which arguments, and how it reads the results — not CUDA itself: the GPU tests
(test_cuda_end_to_end.py, marked gpu) do that on a real device.
"""
import struct

import numpy as np
import pytest

from cricket.backends import cuda as cuda_backend
from cricket.cudafacts import curesult
from cricket.backends.base import BackendError, ImageKind

import fake_cuda_driver


def test_devices_are_described_from_the_driver(fake):
    backend = cuda_backend.CudaBackend()
    (props,) = backend.devices()
    assert props.name == "Fake GPU" and props.uuid == b"fake-gpu-uuid-16"
    assert props.total_memory == fake_cuda_driver.TOTAL
    assert props.attributes[75] == 9 and props.attributes[10] == 32
    assert 77 not in props.attributes          # the enum's _MAX member is not an attribute
    assert backend.driver_version == 13000
    assert "cuDevicePrimaryCtxRetain" in fake.calls


def test_primary_context_is_made_current_on_each_worker_thread(fake):
    import threading
    cuda_backend._thread_context.ctx = None
    dev = cuda_backend.CudaBackend().device(0)
    dev.mem_get_info()
    dev.mem_get_info()
    assert fake.calls.count("cuCtxSetCurrent") == 1
    t = threading.Thread(target=dev.mem_get_info)
    t.start()
    t.join()
    assert fake.calls.count("cuCtxSetCurrent") == 2


def test_memory_copies_and_memsets_use_the_matching_driver_calls(fake):
    dev = cuda_backend.CudaBackend().device(0)
    ptr = dev.mem_alloc(64)
    dev.memcpy_htod(ptr, b"abcdefgh")
    assert dev.memcpy_dtoh(ptr, 8) == b"abcdefgh"
    dev.memset(ptr + 8, 0x01020304, 4, 2)
    dev.memset(ptr + 16, 0xAB, 1, 4)
    assert dev.memcpy_dtoh(ptr + 8, 12) == bytes([4, 3, 2, 1]) * 2 + b"\xab" * 4
    stream = dev.stream_create(0)
    dev.memset(ptr, 0, 4, 2, stream)
    dev.memcpy_dtod(ptr + 32, ptr + 8, 8)
    assert dev.memcpy_dtoh(ptr + 32, 8, stream) == bytes([4, 3, 2, 1]) * 2
    assert {"cuMemsetD32", "cuMemsetD8", "cuMemsetD32Async", "cuMemcpyDtoD",
            "cuMemcpyDtoHAsync", "cuStreamSynchronize"} <= set(fake.calls)
    with pytest.raises(BackendError) as info:
        dev.memset(ptr, 0, 3, 1)
    assert info.value.code == curesult.INVALID_VALUE
    dev.mem_free(ptr)
    with pytest.raises(BackendError) as info:
        dev.mem_free(ptr)
    assert info.value.code == curesult.INVALID_VALUE and "cuMemFree failed" in info.value.message


def test_kernel_layout_and_launch_through_the_packed_parameter_buffer(fake):
    dev = cuda_backend.CudaBackend().device(0)
    module = dev.module_load(b"fatbin with vadd", ImageKind.FATBIN)
    fn = dev.module_get_function(module, "vadd")
    assert [(p.offset, p.size) for p in fn.params] == fake_cuda_driver.VADD_PARAMS
    assert fn.param_size == 28 and fn.num_regs == 12 and fn.max_threads_per_block == 1024
    assert fn.ptx_version == 90 and fn.binary_version == 90
    n = 100
    a = np.arange(n, dtype=np.float32)
    pa, pb, pc = (dev.mem_alloc(4 * n) for _ in range(3))
    dev.memcpy_htod(pa, a.tobytes())
    dev.memcpy_htod(pb, (2 * a).tobytes())
    params = struct.pack("<QQQi", pa, pb, pc, n)
    dev.launch(fn.native, (1, 1, 1), (128, 1, 1), 0, None, params)
    (grid, block, shared, stream, sent), = fake.launches
    assert sent == params and grid == (1, 1, 1) and block == (128, 1, 1) and stream == 0
    np.testing.assert_array_equal(np.frombuffer(dev.memcpy_dtoh(pc, 4 * n), np.float32), 3 * a)
    with pytest.raises(BackendError) as info:
        dev.module_get_function(module, "missing")
    assert info.value.code == curesult.NOT_FOUND


def test_ptx_images_are_loaded_nul_terminated(fake):
    dev = cuda_backend.CudaBackend().device(0)
    module = dev.module_load(b".version 8.0\n.entry vadd", ImageKind.PTX)
    assert module.name.endswith(b"\0")


def test_module_says_whether_it_calls_printf_from_its_image(fake):
    from pathlib import Path
    ptx = Path(__file__).resolve().parents[1] / "emu" / "ptx"
    dev = cuda_backend.CudaBackend().device(0)
    for name, prints in (("printf", True), ("basic", False)):
        image = (ptx / f"{name}.sm75.ptx").read_bytes()
        assert dev.module_calls_printf(dev.module_load(image, ImageKind.PTX), image) is prints


def test_queries_say_not_ready_and_events_time(fake):
    dev = cuda_backend.CudaBackend().device(0)
    stream, start, end = dev.stream_create(0), dev.event_create(0), dev.event_create(0)
    dev.event_record(start, stream)
    dev.stream_wait_event(stream, start)
    assert dev.stream_query(stream) is True
    assert dev.event_query(end) is False
    assert dev.event_elapsed_time(start, end) == 0.25
    dev.synchronize()
    dev.stream_destroy(stream)


def test_spec_selects_devices_and_refuses_missing_ones(fake):
    assert len(cuda_backend.CudaBackend("0").devices()) == 1
    with pytest.raises(BackendError) as info:
        cuda_backend.CudaBackend("0,3")
    assert info.value.code == curesult.INVALID_DEVICE and "no device [3]" in info.value.message
    with pytest.raises(BackendError, match="give device ordinals and/or shared"):
        cuda_backend.CudaBackend("first")


def test_sessions_get_a_context_each_unless_the_operator_shares_one(fake):
    shared = cuda_backend.CudaBackend("shared")
    assert shared.open_device(0) is shared.open_device(0) is shared.device(0)
    assert fake.contexts == []
    isolated = cuda_backend.CudaBackend()
    assert cuda_backend.CudaBackend("isolate").isolate
    a, b = isolated.open_device(0), isolated.open_device(0)
    assert a is not b and len(fake.contexts) == 2 and a._ctx is not b._ctx
    ptr = a.mem_alloc(16)                      # work runs in the session's own context
    assert fake.current is a._ctx and ptr
    b.mem_alloc(16)
    assert fake.current is b._ctx
    a.mem_get_info()                           # back to a: its context is made current again
    assert fake.current is a._ctx
    a.release()
    b.release()
    assert fake.contexts == []


def test_a_jit_link_container_is_linked_by_the_driver_before_loading(fake):
    # the container cricket.client.jit_link makes of cuLinkAddData inputs: the backend hands each
    # entry to the driver's linker in order and loads the cubin cuLinkComplete returns
    from cricket.fatbin.format import EntryKind
    from cricket.fatbin.writer import LINK_INPUT_PREFIX, NewEntry, container
    ptx = b".version 9.0\n.target sm_75\n.address_size 64\n.visible .entry vadd()\n{\n\tret;\n}\n"
    image = container([NewEntry(EntryKind.PTX, 75, ptx, LINK_INPUT_PREFIX + "kernel.ptx", (9, 0)),
                       NewEntry(EntryKind.ELF, 75, b"\x7fELF relocatable", LINK_INPUT_PREFIX + "device.cubin")])
    dev = cuda_backend.CudaBackend().device(0)
    module = dev.module_load(image, ImageKind.FATBIN)
    assert fake.link_inputs == [(1, ptx + b"\0", b"kernel.ptx"), (0, b"\x7fELF relocatable", b"device.cubin")]
    assert module.name == b"linked kernel.ptx,device.cubin"
    calls = [c for c in fake.calls if c.startswith(("cuLink", "cuModuleLoad"))]
    assert calls == ["cuLinkCreate", "cuLinkAddData", "cuLinkAddData", "cuLinkComplete", "cuLinkDestroy",
                     "cuModuleLoadData"]
