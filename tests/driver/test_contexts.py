"""State answered in the process: initialisation, the device snapshot, primary-context reference
counts, the per-thread current context and context-local storage."""
from __future__ import annotations

from .driver_support import run_probe

NOT_INITIALIZED, INVALID_VALUE, INVALID_DEVICE, INVALID_CONTEXT, INVALID_HANDLE = 3, 1, 101, 201, 400


def test_device_queries_need_cuinit_first(driver_lib):
    p = run_probe(driver_lib, """
import ctypes
n = ctypes.c_int(-1)
v = ctypes.c_int()
result["before"] = [lib.cuDeviceGetCount(ctypes.byref(n)), lib.cuDriverGetVersion(ctypes.byref(v))]
result["bad_flags"] = lib.cuInit(1)
result["init"] = lib.cuInit(0)
result["after"] = [lib.cuDeviceGetCount(ctypes.byref(n)), n.value, v.value]
""")
    assert p["before"] == [NOT_INITIALIZED, 0]      # the version is answered before cuInit
    assert p["bad_flags"] == INVALID_VALUE and p["init"] == 0
    assert p["after"] == [0, 1, 13000]


def test_builtin_device_is_the_emulated_sm75(driver_lib):
    p = run_probe(driver_lib, """
import ctypes
lib.cuInit(0)
name = ctypes.create_string_buffer(256)
mem = ctypes.c_size_t()
u = CUuuid()
major, minor, warp, bad = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
result["rc"] = [lib.cuDeviceGetName(name, 256, 0), lib.cuDeviceTotalMem_v2(ctypes.byref(mem), 0),
                lib.cuDeviceGetUuid_v2(ctypes.byref(u), 0), lib.cuDeviceComputeCapability(ctypes.byref(major), ctypes.byref(minor), 0),
                lib.cuDeviceGetAttribute(ctypes.byref(warp), 10, 0)]
result["bad"] = [lib.cuDeviceGetAttribute(ctypes.byref(bad), 10, 1), lib.cuDeviceGetAttribute(ctypes.byref(bad), 0, 0),
                 lib.cuDeviceGetAttribute(ctypes.byref(bad), 100000, 0)]
bus = ctypes.create_string_buffer(32)
lib.cuDeviceGetPCIBusId(bus, 32, 0)
dev = ctypes.c_int(-1)
result["by_bus"] = [lib.cuDeviceGetByPCIBusId(ctypes.byref(dev), bus.value), dev.value, bus.value.decode()]
result.update(name=name.value.decode(), mem=mem.value, uuid=bytes(u.bytes).hex(), cc=[major.value, minor.value], warp=warp.value)
""")
    assert p["rc"] == [0] * 5
    assert p["name"] == "cricket emulated sm_75" and p["cc"] == [7, 5] and p["warp"] == 32
    assert p["mem"] == 15 << 30 and bytes.fromhex(p["uuid"]) == b"cricket-emu-sm75"
    assert p["bad"] == [INVALID_DEVICE, INVALID_VALUE, INVALID_VALUE]
    assert p["by_bus"] == [0, 0, "00000000:01:00.0"]


def test_devices_file_replaces_the_builtin_snapshot(driver_lib, tmp_path):
    spec = tmp_path / "devices.txt"
    spec.write_text("driver_version 13020\n"
                    "device\nname First Test GPU\nuuid 00112233-4455-6677-8899-aabbccddeeff\nattr 75 9\nattr 76 0\n"
                    "device   # second device: built-in values except the name and bus\nname Second Test GPU\nattr 33 7\n")
    p = run_probe(driver_lib, """
import ctypes
lib.cuInit(0)
n, v, cc, bus = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
name = ctypes.create_string_buffer(64)
u = CUuuid()
lib.cuDeviceGetCount(ctypes.byref(n)); lib.cuDriverGetVersion(ctypes.byref(v))
lib.cuDeviceGetAttribute(ctypes.byref(cc), 75, 0); lib.cuDeviceGetUuid_v2(ctypes.byref(u), 0)
lib.cuDeviceGetName(name, 64, 1); lib.cuDeviceGetAttribute(ctypes.byref(bus), 33, 1)
result.update(n=n.value, v=v.value, cc=cc.value, uuid=bytes(u.bytes).hex(), name=name.value.decode(), bus=bus.value)
""", env={"CRICKET_DRIVER_DEVICES": str(spec)})
    assert p == {**p, "n": 2, "v": 13020, "cc": 9, "uuid": "00112233445566778899aabbccddeeff",
                 "name": "Second Test GPU", "bus": 7}


def test_invalid_devices_file_is_reported_with_its_line(driver_lib, tmp_path):
    spec = tmp_path / "devices.txt"
    spec.write_text("device\nuuid 0011\n")
    p = run_probe(driver_lib, "result['init'] = lib.cuInit(0)", env={"CRICKET_DRIVER_DEVICES": str(spec)})
    assert p["init"] == 100     # CUDA_ERROR_NO_DEVICE
    assert f"{spec}:2: uuid needs 32 hex digits" in p["_stderr"]


def test_primary_context_reference_counts(driver_lib):
    p = run_probe(driver_lib, """
import ctypes
lib.cuInit(0)
a, b = ctypes.c_void_p(), ctypes.c_void_p()
flags, active = ctypes.c_uint(), ctypes.c_int()
def state():
    lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active))
    return active.value
s = [state()]
lib.cuDevicePrimaryCtxRetain(ctypes.byref(a), 0); s.append(state())
lib.cuDevicePrimaryCtxRetain(ctypes.byref(b), 0)
r = [lib.cuDevicePrimaryCtxRelease_v2(0)]; s.append(state())
r.append(lib.cuDevicePrimaryCtxRelease_v2(0)); s.append(state())
r.append(lib.cuDevicePrimaryCtxRelease_v2(0))
r.append(lib.cuDevicePrimaryCtxRetain(ctypes.byref(b), 5))
result.update(same=a.value == b.value and a.value is not None, states=s, releases=r)
""")
    assert p["same"]
    assert p["states"] == [0, 1, 1, 0]
    assert p["releases"] == [0, 0, INVALID_CONTEXT, INVALID_DEVICE]


def test_current_context_is_per_thread_with_a_stack(driver_lib):
    p = run_probe(driver_lib, """
import ctypes, threading
lib.cuInit(0)
ctx = ctypes.c_void_p()
lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
cur, dev = ctypes.c_void_p(), ctypes.c_int(-1)
steps = []
lib.cuCtxGetCurrent(ctypes.byref(cur)); steps.append(cur.value)
steps.append(lib.cuCtxGetDevice_v2(ctypes.byref(dev), None))
lib.cuCtxSetCurrent(ctx); lib.cuCtxGetCurrent(ctypes.byref(cur)); steps.append(cur.value == ctx.value)
steps.append([lib.cuCtxGetDevice_v2(ctypes.byref(dev), None), dev.value])
other = []
t = threading.Thread(target=lambda: (lib.cuCtxGetCurrent(ctypes.byref(c := ctypes.c_void_p())), other.append(c.value)))
t.start(); t.join()
steps.append(lib.cuCtxSetCurrent(ctypes.c_void_p(0x1234)))
popped = ctypes.c_void_p()
steps.append([lib.cuCtxPushCurrent_v2(ctx), lib.cuCtxPopCurrent_v2(ctypes.byref(popped)), popped.value == ctx.value])
lib.cuCtxSetCurrent(None); lib.cuCtxGetCurrent(ctypes.byref(cur)); steps.append(cur.value)
steps.append(lib.cuCtxPopCurrent_v2(ctypes.byref(popped)))
result.update(steps=steps, other=other)
""")
    assert p["steps"] == [None, INVALID_CONTEXT, True, [0, 0], INVALID_CONTEXT, [0, 0, True], None, INVALID_CONTEXT]
    assert p["other"] == [None]


def test_export_tables_have_fixed_addresses_and_sizes(driver_lib):
    p = run_probe(driver_lib, """
names = [CUDART_INTERFACE, TOOLS_RUNTIME_CALLBACK_HOOKS, TOOLS_TLS, CONTEXT_CHECKS, INTEGRITY_CHECK,
         TABLE_F8CFF951, TABLE_21318C60]
first = [export_table(lib, n) for n in names]
again = [export_table(lib, n) for n in names]
cls = export_table(lib, CONTEXT_LOCAL_STORAGE)
slots_again = [[slot(t, i) for i in range(1, 3)] for _, t in again]
result.update(first=first, again=again, sizes=[word(t, 0) for _, t in first],
              slots=[[slot(t, i) for i in range(1, 3)] for _, t in first], slots_again=slots_again,
              cls=[cls[0], slot(cls[1], 0) > 4096],
              refused=[export_table(lib, NVRTC_TABLE), export_table(lib, "00" * 16)])
""")
    assert [rc for rc, _ in p["first"]] == [0] * 7
    assert p["first"] == p["again"] and p["slots"] == p["slots_again"]
    assert p["sizes"] == [13 * 8, 7 * 8, 4 * 8, 4 * 8, 3 * 8, 64 * 8, 64 * 8]
    assert p["cls"] == [0, True]          # CLS has no size word: slot 0 is a function
    assert p["refused"] == [[500, 0], [500, 0]]


def test_dark_api_slots_behave_as_cudart_expects(driver_lib):
    p = run_probe(driver_lib, """
import ctypes
lib.cuInit(0)
_, ci = export_table(lib, CUDART_INTERFACE)
_, hooks = export_table(lib, TOOLS_RUNTIME_CALLBACK_HOOKS)
_, cls = export_table(lib, CONTEXT_LOCAL_STORAGE)
_, checks = export_table(lib, CONTEXT_CHECKS)
_, generic = export_table(lib, TABLE_21318C60)
P = ctypes.c_void_p
primary = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(P), ctypes.c_int)(slot(ci, 2))
ctx = P()
flags, active = ctypes.c_uint(), ctypes.c_int()
rc_primary = primary(ctypes.byref(ctx), 0)
lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active))
buffers = []
for i in (2, 6):
    ptr, size = P(), ctypes.c_size_t()
    ctypes.CFUNCTYPE(None, ctypes.POINTER(P), ctypes.POINTER(ctypes.c_size_t))(slot(hooks, i))(ctypes.byref(ptr), ctypes.byref(size))
    buffers.append([ptr.value is not None, size.value, bytes((ctypes.c_ubyte * (4 * size.value)).from_address(ptr.value)) == bytes(4 * size.value)])
put = ctypes.CFUNCTYPE(ctypes.c_int, P, P, P, P)(slot(cls, 0))
delete = ctypes.CFUNCTYPE(ctypes.c_int, P, P)(slot(cls, 1))
get = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(P), P, P)(slot(cls, 2))
value = P(7)
lib.cuCtxSetCurrent(ctx)
cls_steps = [get(ctypes.byref(value), None, P(0xABC)), value.value]
cls_steps.append(put(None, P(0xABC), P(0x5555), None))
cls_steps += [get(ctypes.byref(value), P(-1), P(0xABC)), value.value]
cls_steps += [get(ctypes.byref(value), ctx, P(0xABC)), value.value]
cls_steps.append(put(ctx, P(0xABC), P(0x6666), None))
cls_steps += [get(ctypes.byref(value), None, P(0xABC)), value.value]
cls_steps += [delete(None, P(0xABC)), delete(None, P(0xABC)), get(ctypes.byref(value), None, P(0xABC))]
r1 = ctypes.c_uint32(99)
check = ctypes.CFUNCTYPE(ctypes.c_int, P, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(P))(slot(checks, 2))
check3 = ctypes.CFUNCTYPE(ctypes.c_int)(slot(checks, 3))
unknown = ctypes.CFUNCTYPE(ctypes.c_int)(slot(generic, 5))
result.update(rc_primary=rc_primary, same_ctx=ctx.value is not None, active=active.value, buffers=buffers,
              cls=cls_steps, check=[check(ctx, ctypes.byref(r1), None), r1.value, check3()], unknown=unknown())
""")
    assert p["rc_primary"] == 0 and p["same_ctx"] and p["active"] == 1     # slot 2 retains the primary context
    assert p["buffers"] == [[True, 1024, True], [True, 14, True]]
    assert p["cls"] == [INVALID_HANDLE, 7, 0, 0, 0x5555, 0, 0x5555, 0, 0, 0x6666, 0, INVALID_HANDLE, INVALID_HANDLE]
    assert p["check"] == [0, 0, 0]
    assert p["unknown"] == 801
    assert "TABLE_21318C60 slot 5 called" in p["_stderr"]


def test_primary_context_schedule_sets_how_the_process_waits(driver_lib, server):
    p = run_probe(driver_lib, """
import ctypes
from cricket.client.runtime import RUNTIME
lib.cuInit(0)
flags, active = ctypes.c_uint(), ctypes.c_int()
def state(rc):
    lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active))
    rpc = RUNTIME.conn._rpc
    return [rc, flags.value, rpc._spin, rpc._spin_yields]
result["blocking"] = state(lib.cuDevicePrimaryCtxSetFlags_v2(0, 4))
result["spin"] = state(lib.cuDevicePrimaryCtxSetFlags_v2(0, 1 | 8))
result["both"] = state(lib.cuDevicePrimaryCtxSetFlags_v2(0, 1 | 4))
result["auto"] = state(lib.cuDevicePrimaryCtxSetFlags_v2(0, 0))
""", env={"CRICKET_SERVER": server.address, "CRICKET_SPIN_US": "300"})
    assert p["blocking"] == [0, 4, 0.0, True]               # CU_CTX_SCHED_BLOCKING_SYNC: sleep at once
    assert p["spin"] == [0, 9, 300e-6, False]               # CU_CTX_SCHED_SPIN: poll, keep the CPU
    assert p["both"] == [INVALID_VALUE, 9, 300e-6, False]   # two schedules: refused, nothing changed
    assert p["auto"] == [0, 0, 300e-6, True]                # CU_CTX_SCHED_AUTO: poll, yielding
