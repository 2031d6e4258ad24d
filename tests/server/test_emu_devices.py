"""An emu backend with several devices (``emu=devices=N``), in-process: each device its own arena
at its own address range, its own kernels; a device's kernel cannot reach another's memory."""
import struct

import pytest

from cricket.cudafacts import curesult, device_attributes
from cricket.backends.base import BackendError, ImageKind

emu_backend = pytest.importorskip("cricket.backends.emu_backend")
from cricket.backends import emu_devices  # noqa: E402


@pytest.fixture(scope="module")
def backend():
    b = emu_backend.EmuBackend("devices=2,memory=16M")
    yield b
    b.close()


def test_devices_are_told_apart_by_uuid_and_pci_bus(backend):
    first, second = backend.devices()
    assert first.uuid != second.uuid and first.name != second.name
    bus = device_attributes.PCI_BUS_ID
    assert second.attributes[bus] == first.attributes[bus] + 1
    assert first.total_memory == second.total_memory == 16 << 20


def test_each_device_allocates_in_its_own_range_and_runs_its_own_kernels(backend, scale_ptx):
    a, b = backend.open_device(0), backend.open_device(1)
    pa, pb = a.mem_alloc(4 * 32), b.mem_alloc(4 * 32)
    assert emu_devices.arena_base(0) <= pa < emu_devices.arena_base(1) <= pb
    assert a.mem_get_info()[0] == b.mem_get_info()[0]
    b.mem_alloc(1 << 20)
    assert b.mem_get_info()[0] < a.mem_get_info()[0]          # device 1's allocation only
    mod = b.module_load(scale_ptx, ImageKind.PTX)
    fn = b.module_get_function(mod, "scale")
    b.memcpy_htod(pb, struct.pack("<32f", *range(32)))
    b.launch(fn.native, (1, 1, 1), (32, 1, 1), 0, None, struct.pack("<Qf", pb, 3.0))
    assert struct.unpack("<32f", b.memcpy_dtoh(pb, 4 * 32)) == tuple(3.0 * i for i in range(32))
    # no peer access: device 0's kernel faults on device 1's memory
    mod0 = a.module_load(scale_ptx, ImageKind.PTX)
    with pytest.raises(BackendError) as info:
        a.launch(a.module_get_function(mod0, "scale").native, (1, 1, 1), (32, 1, 1), 0, None,
                 struct.pack("<Qf", pb, 2.0))
    assert info.value.code == curesult.ILLEGAL_ADDRESS
    a.release()
    b.release()


def test_device_past_the_count_is_invalid_device(backend):
    with pytest.raises(BackendError) as info:
        backend.open_device(2)
    assert info.value.code == curesult.INVALID_DEVICE


def test_device_counts_and_arenas_that_do_not_fit_are_refused():
    with pytest.raises(BackendError, match=f"at most {emu_devices.MAX_DEVICES} devices"):
        emu_backend.EmuBackend(f"devices={emu_devices.MAX_DEVICES + 1}")
    with pytest.raises(BackendError, match="devices must be positive"):
        emu_backend.EmuBackend("devices=0")
    with pytest.raises(BackendError, match="each arena holds at most"):
        emu_backend.EmuBackend("devices=2,memory=200G")


def test_cooperative_grid_past_the_resident_blocks_is_refused_before_it_runs(backend, scale_ptx):
    a = backend.open_device(0)
    fn = a.module_get_function(a.module_load(scale_ptx, ImageKind.PTX), "scale")
    ptr = a.mem_alloc(4 * 32)
    a.memcpy_htod(ptr, struct.pack("<32f", *range(32)))
    params = struct.pack("<Qf", ptr, 2.0)
    a.launch(fn.native, (1, 1, 1), (32, 1, 1), 0, None, params, cooperative=True)
    assert struct.unpack("<32f", a.memcpy_dtoh(ptr, 4 * 32)) == tuple(2.0 * i for i in range(32))
    # 1024-thread blocks: one per multiprocessor is resident
    sms = a.props.attributes[device_attributes.MULTIPROCESSOR_COUNT]
    with pytest.raises(BackendError) as info:
        a.launch(fn.native, (sms + 1, 1, 1), (1024, 1, 1), 0, None, params, cooperative=True)
    assert info.value.code == curesult.COOPERATIVE_LAUNCH_TOO_LARGE
    assert struct.unpack("<32f", a.memcpy_dtoh(ptr, 4 * 32)) == tuple(2.0 * i for i in range(32))
    a.release()
