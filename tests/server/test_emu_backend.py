"""The emu adapter in-process: spec parsing, device description, per-session devices, error codes."""
import struct

import pytest

from cricket.cudafacts import curesult
from cricket.backends.base import BackendError, ImageKind

emu_backend = pytest.importorskip("cricket.backends.emu_backend")
pytest.importorskip("cricket.backends.emu")


def test_spec_sets_the_arena_size_and_bad_specs_say_the_form():
    backend = emu_backend.EmuBackend("memory=64M")
    assert backend.devices()[0].total_memory == 64 << 20
    with pytest.raises(BackendError, match="use memory=SIZE"):
        emu_backend.EmuBackend("speed=fast")
    with pytest.raises(BackendError, match="bad size"):
        emu_backend.EmuBackend("memory=lots")
    with pytest.raises(BackendError, match="bad number"):
        emu_backend.EmuBackend("cores=many")
    with pytest.raises(BackendError, match="cores must be positive"):
        emu_backend.EmuBackend("memory=64M,cores=0")


def test_device_is_described_with_cuda_attribute_numbers():
    props = emu_backend.EmuBackend("memory=16M").devices()[0]
    assert props.attributes[10] == 32                      # WARP_SIZE
    assert (props.attributes[75], props.attributes[76]) == (7, 5)
    assert props.attributes[1] == 1024                     # MAX_THREADS_PER_BLOCK
    assert len(props.uuid) == 16


def test_each_session_gets_its_own_device_and_a_fault_stays_in_it(scale_ptx):
    backend = emu_backend.EmuBackend("memory=16M")
    a, b = backend.open_device(0), backend.open_device(0)
    assert a is not b
    mod = a.module_load(scale_ptx, ImageKind.PTX)
    fn = a.module_get_function(mod, "scale")
    assert [(p.offset, p.size) for p in fn.params] == [(0, 8), (8, 4)] and fn.param_size == 12
    ptr = a.mem_alloc(4 * 32)
    a.memcpy_htod(ptr, bytes(range(4)) * 32)
    bad = struct.pack("<Qf", ptr + (1 << 22), 2.0)      # past the 16 MiB arena's allocation
    with pytest.raises(BackendError) as info:
        a.launch(fn.native, (1, 1, 1), (32, 1, 1), 0, None, bad)
    assert info.value.code == curesult.ILLEGAL_ADDRESS
    q = b.mem_alloc(16)                                    # the other session's device is fine
    b.memset(q, 7, 1, 16)
    assert b.memcpy_dtoh(q, 16) == b"\x07" * 16
    a.release()
    b.release()


def test_unknown_device_ordinal_is_invalid_device():
    with pytest.raises(BackendError) as info:
        emu_backend.EmuBackend("memory=16M").open_device(1)
    assert info.value.code == curesult.INVALID_DEVICE
