"""The integrity-check hash (INTEGRITY_CHECK slot 1) against every end-to-end vector of
driver-dark-api.md §6.3, and the library's real slot 1 against the same function fed with the
calling process's own pid, thread, table addresses and device snapshot."""
from __future__ import annotations

import ctypes

import pytest

from .driver_support import run_probe


class Device(ctypes.Structure):
    _fields_ = [("uuid", ctypes.c_ubyte * 16), ("pci_domain", ctypes.c_int32), ("pci_bus", ctypes.c_int32),
                ("pci_device", ctypes.c_int32)]


class Inputs(ctypes.Structure):
    _fields_ = [("driver_version", ctypes.c_uint32), ("version", ctypes.c_uint32), ("pid", ctypes.c_uint32),
                ("thread", ctypes.c_uint32), ("cudart_interface_table", ctypes.c_uint64),
                ("integrity_table", ctypes.c_uint64), ("integrity_slot1", ctypes.c_uint64),
                ("unix_seconds", ctypes.c_uint64), ("devices", ctypes.POINTER(Device)),
                ("device_count", ctypes.c_size_t)]


DEVICES = {
    "DEV-S": ("deadbeef0102030405060708090a0b0c", 0, 1, 0),
    "DEV-Z": ("9afe2b8aac252d38ea37aec56d71325f", 0, 2, 0),
    "DEV-B0": ("000102030405060708090a0b0c0d0e0f", 0, 23, 0),
    "DEV-B1": ("f0e1d2c3b4a5968778695a4b3c2d1e0f", 1, 202, 0),
    "DEV-F": ("ff" * 16, -1, -1, -1),
}
A = (13000, 0x125D, 0xB863A740, 0x7FB4B85BB960, 0x7FB4B85BBB60, 0x7FB4B854DEAC)
Z = (12080, 0x2FA423, 0xF79C1000, 0x7FFFF6958240, 0x7FFFF6958220, 0x7FFFF2AAF4A0)
M = 0xFFFFFFFF
# id: version, seconds, (driver, pid, thread, CI table, IC table, slot 1), devices, result[0], result[1], inner
VECTORS = {
    "E1": (13000, 1795976827, A, ["DEV-S"], 0x3341181C03CB675C, 0x8ED383AA1F4CD1E8, None),
    "E2": (13001, 1795976827, A, ["DEV-S"], 0x1841181C03CB675C, 0x8ED383AA1F4CD1E8, None),
    "E3": (12082, 1747688686, Z, ["DEV-Z"], 0xF7CE26B071A14844, 0xDD021B05393E8C6C, "3724a753a8f2b078dcff25bc71c3f5e8"),
    "E4": (12082, 1747688686, Z, [], 0xD22DFA4F5EEF7907, 0xFA7B90D103755207, "09e69b14dcb527569818c52e3a0f09fa"),
    "E5": (13002, 1795976827, A, ["DEV-S"], 0x495F2476CD34C09B, 0xEF98D5F62C7568E7, "5ce92fd718e30643052b5d3676831dc7"),
    "E6": (13022, 1795976827, A, ["DEV-S"], 0x024DFF37A4AEAB03, 0x9CB2A19BBD82D5BA, "b0eb8cfa422ab94a01a583697a7f49b3"),
    "E7": (13052, 1795976827, A, ["DEV-S"], 0xDCFB7809B0EDE944, 0xA26329B04DAC7C2C, "1ca394beec5f2a4b3d0aad1cc48f7390"),
    "E8": (13009, 1795976827, A, ["DEV-S"], 0x64F5CA99ABF30052, 0x87EA9F0866DC8F5B, "7995bd5626de0f12229391379868ae24"),
    "E9": (13002, 1700000000, (13000, 0x125D, 0xB85216C0, *A[3:]), ["DEV-S"], 0x822FEDC621D9E803,
           0xF1C5AA4495C95FA4, "245d199722a0f66ff166c81e2011357f"),
    "E10": (13002, 1795976827, A, ["DEV-B0", "DEV-B1"], 0xEA238FD6E0C340D2, 0x6CA5EB0A0F32C805,
            "fd7f38e51e40ea7cf034e637572d2ccf"),
    "E11": (2, 0, (0, 0, 0, 0, 0, 0), [], 0xD00EF1873549F6E4, 0xB27EAA2028B04C14, "f64880eadf6bf9c8b272080f62e6ca4a"),
    "E12": (M, 2**64 - 1, (M, M, M, 2**64 - 1, 2**64 - 1, 2**64 - 1), ["DEV-F"], 0xCBC166F480658B6E,
            0xE6EAD1996185C170, "6264a5a09f25bc04c1abe99eeacf6c60"),
}


@pytest.fixture(scope="module")
def hasher(md2_so):
    lib = ctypes.CDLL(str(md2_so))
    lib.cricket_integrity_hash.argtypes = [ctypes.POINTER(Inputs), ctypes.c_char_p, ctypes.c_char_p]
    lib.cricket_integrity_hash.restype = None
    return lib


def integrity(hasher, version, seconds, fields, devices) -> tuple[int, int, bytes]:
    driver, pid, thread, ci, ic, s1 = fields
    array = (Device * max(1, len(devices)))()
    for i, (uuid, domain, bus, device) in enumerate(devices):
        array[i].uuid[:] = bytes.fromhex(uuid)
        array[i].pci_domain, array[i].pci_bus, array[i].pci_device = domain, bus, device
    inputs = Inputs(driver, version, pid, thread, ci, ic, s1, seconds, array, len(devices))
    result, inner = ctypes.create_string_buffer(16), ctypes.create_string_buffer(16)
    hasher.cricket_integrity_hash(ctypes.byref(inputs), result, inner)
    return int.from_bytes(result.raw[:8], "little"), int.from_bytes(result.raw[8:], "little"), inner.raw


@pytest.mark.parametrize("vector", sorted(VECTORS, key=lambda v: int(v[1:])))
def test_integrity_hash_reproduces_spec_vector(hasher, vector):
    version, seconds, fields, names, r0, r1, inner = VECTORS[vector]
    got0, got1, got_inner = integrity(hasher, version, seconds, fields, [DEVICES[n] for n in names])
    assert (hex(got0), hex(got1)) == (hex(r0), hex(r1))
    if inner:
        assert got_inner.hex() == inner


def test_worked_example_e3_result_bytes(hasher):
    version, seconds, fields, names, *_ = VECTORS["E3"]
    r0, r1, _ = integrity(hasher, version, seconds, fields, [DEVICES[n] for n in names])
    assert (r0.to_bytes(8, "little") + r1.to_bytes(8, "little")).hex() == "4448a171b026cef76c8c3e39051b02dd"


def test_changing_any_input_changes_the_hash(hasher):
    version, seconds, fields, names, r0, r1, _ = VECTORS["E5"]
    devices = [DEVICES[n] for n in names]
    for i in range(len(fields)):
        changed = list(fields)
        changed[i] ^= 1
        assert integrity(hasher, version, seconds, tuple(changed), devices)[:2] != (r0, r1)
    assert integrity(hasher, version, seconds + 1, fields, devices)[:2] != (r0, r1)
    assert integrity(hasher, version, seconds, fields, [("deadbeef0102030405060708090a0b0d", 0, 1, 0)])[:2] != (r0, r1)


SLOT1_PROBE = """
import ctypes, os
assert lib.cuInit(0) == 0
rc_ci, ci = export_table(lib, CUDART_INTERFACE)
rc_ic, ic = export_table(lib, INTEGRITY_CHECK)
rc_again, ic_again = export_table(lib, INTEGRITY_CHECK)
slot1 = slot(ic, 1)
fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64 * 2))(slot1)
out = (ctypes.c_uint64 * 2)()
rcs = []
results = []
for version in (13000, 13001, 13002, 13052):
    rcs.append(fn(version, 1795976827, ctypes.byref(out)))
    results.append([out[0], out[1]])
count = ctypes.c_int()
lib.cuDeviceGetCount(ctypes.byref(count))
devices = []
for d in range(count.value):
    u = CUuuid()
    lib.cuDeviceGetUuid_v2(ctypes.byref(u), d)
    attrs = []
    for a in (50, 33, 34):
        v = ctypes.c_int()
        lib.cuDeviceGetAttribute(ctypes.byref(v), a, d)
        attrs.append(v.value)
    devices.append([bytes(u.bytes).hex(), *attrs])
version = ctypes.c_int()
lib.cuDriverGetVersion(ctypes.byref(version))
libc = ctypes.CDLL(None)
libc.pthread_self.restype = ctypes.c_ulong
result.update(rc=[rc_ci, rc_ic, rc_again], same=ic == ic_again, ci=ci, ic=ic, slot1=slot1, size=word(ic, 0),
              rcs=rcs, results=results, devices=devices, driver=version.value, pid=os.getpid(),
              thread=libc.pthread_self() & 0xFFFFFFFF)
"""


FIXED = [[0x3341181C03CB675C, 0x8ED383AA1F4CD1E8], [0x1841181C03CB675C, 0x8ED383AA1F4CD1E8]]


def expected_results(hasher, p) -> list[list[int]]:
    """What slot 1 must answer in the probed process, for versions 13000, 13001, 13002, 13052."""
    fields = (p["driver"], p["pid"], p["thread"], p["ci"], p["ic"], p["slot1"])
    devices = [tuple(d) for d in p["devices"]]
    return FIXED + [list(integrity(hasher, v, 1795976827, fields, devices)[:2]) for v in (13002, 13052)]


def test_slot1_answers_the_hash_of_this_process(hasher, driver_lib):
    p = run_probe(driver_lib, SLOT1_PROBE)
    assert p["rc"] == [0, 0, 0] and p["same"] and p["size"] == 24
    assert p["rcs"] == [0, 0, 0, 0]
    assert p["results"] == expected_results(hasher, p)


def test_corruption_knob_makes_every_answer_wrong(hasher, driver_lib):
    p = run_probe(driver_lib, SLOT1_PROBE, env={"CRICKET_DRIVER_CORRUPT_INTEGRITY": "1"})
    assert p["rcs"] == [0, 0, 0, 0]
    for got, expected in zip(p["results"], expected_results(hasher, p)):
        assert got != expected
    assert "CRICKET_DRIVER_CORRUPT_INTEGRITY is set" in p["_stderr"]
