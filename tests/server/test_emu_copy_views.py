"""The emu device copies without intermediate buffers: device-to-host as a read-only view of the
arena, host-to-device from any buffer (a view into a received record included)."""
import pytest

from cricket.cudafacts import curesult
from cricket.backends.base import BackendError

emu_backend = pytest.importorskip("cricket.backends.emu_backend")
pytest.importorskip("cricket.backends.emu")


@pytest.fixture
def device():
    backend = emu_backend.EmuBackend("memory=64M")
    dev = backend.open_device(0)
    yield dev
    dev.release()


def test_copy_back_view_is_read_only_and_shows_the_memory_itself(device):
    ptr = device.mem_alloc(1 << 20)
    device.memcpy_htod(ptr, b"\x01" * (1 << 20))
    view = device.memcpy_dtoh_view(ptr + 16, 64)
    assert isinstance(view, memoryview) and view.readonly and view == b"\x01" * 64
    with pytest.raises(TypeError):
        view[0] = 9
    device.memcpy_htod(ptr + 16, b"\x02" * 8)
    assert view[:9] == b"\x02" * 8 + b"\x01"          # no copy: a later write shows through
    assert device.memcpy_dtoh(ptr + 16, 9) == b"\x02" * 8 + b"\x01"   # the copying form is a copy
    device.mem_free(ptr)


def test_copy_back_view_is_bounds_checked(device):
    ptr = device.mem_alloc(4096)
    with pytest.raises(BackendError) as err:
        device.memcpy_dtoh_view(ptr + 4000, 200)
    assert err.value.code == curesult.INVALID_VALUE
    device.mem_free(ptr)


def test_host_to_device_takes_views_of_any_shape(device):
    ptr = device.mem_alloc(4096)
    record = b"HEAD" + bytes(range(256)) * 4
    device.memcpy_htod(ptr, memoryview(record)[4:])           # a read-only view into a record
    assert device.memcpy_dtoh(ptr, 1024) == bytes(range(256)) * 4
    words = memoryview(bytearray(b"\xAB" * 64)).cast("I")      # items of 4 bytes
    device.memcpy_htod(ptr, words)
    assert device.memcpy_dtoh(ptr, 65) == b"\xAB" * 64 + bytes([64])
    device.mem_free(ptr)


def test_device_release_with_a_view_still_alive_does_not_fail():
    backend = emu_backend.EmuBackend("memory=64M")
    dev = backend.open_device(0)
    ptr = dev.mem_alloc(4096)
    view = dev.memcpy_dtoh_view(ptr, 4096)
    dev.release()                          # the mapping stays until the view goes
    assert len(view) == 4096
