"""The driver library's built-in device (no server, CRICKET_DRIVER_DEVICES unset) is the part
cricket/backends/reference_device.py states, generated into the library by cext/driver/build.py:
every attribute, the name and the memory size."""
from __future__ import annotations

from cricket.backends import reference_device
from cricket.cudafacts import device_attributes

from .driver_support import run_probe


def test_builtin_device_answers_every_attribute_as_the_reference_part(driver_lib):
    p = run_probe(driver_lib, f"""
        import ctypes
        value, name, total = ctypes.c_int(), ctypes.create_string_buffer(256), ctypes.c_size_t()
        result["init"] = lib.cuInit(0)
        result["attributes"] = {{}}
        for a in range(1, {device_attributes.MAX}):
            rc = lib.cuDeviceGetAttribute(ctypes.byref(value), a, 0)
            result["attributes"][a] = value.value if rc == 0 else f"error {{rc}}"
        lib.cuDeviceGetName(name, 256, 0)
        lib.cuDeviceTotalMem_v2(ctypes.byref(total), 0)
        result["name"], result["total"] = name.value.decode(), total.value
    """, env={"CRICKET_SERVER": "", "CRICKET_DRIVER_DEVICES": ""})
    assert p["init"] == 0, p["_stderr"]
    want = {str(a): reference_device.ATTRIBUTES.get(a, 0) for a in range(1, device_attributes.MAX)}
    assert p["attributes"] == want
    assert p["name"] == reference_device.NAME and p["total"] == reference_device.TOTAL_MEMORY
