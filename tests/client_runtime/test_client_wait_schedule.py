"""cudaSetDeviceFlags' schedule through `cricket run` and the libcudart shim: waiting for the
server is the process's waiting for the device, so Auto and Yield poll the socket giving the CPU
away between polls, Spin polls keeping it, BlockingSync sleeps in the read at once. A Python host
(ctypes) holds the client in its own interpreter, so the script can look at the wait it got."""
from __future__ import annotations

import json
import sys
import textwrap

from client_runtime_support import cricket_run

PROGRAM = textwrap.dedent("""
    import ctypes, json
    cudart = ctypes.CDLL("libcudart.so.13")
    cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    from cricket.client.runtime import RUNTIME

    def state(label):
        flags = ctypes.c_uint(99)
        rc = cudart.cudaGetDeviceFlags(ctypes.byref(flags))
        rpc = RUNTIME.conn._rpc
        out[label] = [rc, flags.value, rpc._spin, rpc._spin_yields]

    out = {}
    d = ctypes.c_void_p()
    host = ctypes.create_string_buffer(b"x" * 4096)
    back = ctypes.create_string_buffer(4096)
    out["malloc"] = cudart.cudaMalloc(ctypes.byref(d), ctypes.c_size_t(4096))
    state("auto")
    for name, flags in [("blocking", 4), ("spin", 1 | 8), ("yield", 2), ("both", 3), ("unknown", 0x100)]:
        out[name + "_rc"] = cudart.cudaSetDeviceFlags(ctypes.c_uint(flags))
        state(name)
        out[name + "_copy"] = [cudart.cudaMemcpy(d, host, 4096, 1), cudart.cudaMemcpy(back, d, 4096, 2),
                               back.raw == host.raw[:4096]]
        ctypes.memset(back, 0, 4096)
    print(json.dumps(out))
""")


def test_device_flags_choose_how_the_process_waits_for_the_server(tmp_path, shim, server):
    script = tmp_path / "schedule.py"
    script.write_text(PROGRAM)
    res = cricket_run([sys.executable, str(script)], server=server.address, env={"CRICKET_SPIN_US": "200"})
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["malloc"] == 0
    assert out["auto"] == [0, 0, 200e-6, True]                  # polls for CRICKET_SPIN_US, yielding
    assert out["blocking_rc"] == 0 and out["blocking"] == [0, 4, 0.0, True]
    assert out["spin_rc"] == 0 and out["spin"] == [0, 9, 200e-6, False]
    assert out["yield_rc"] == 0 and out["yield"] == [0, 2, 200e-6, True]
    for bad in ("both", "unknown"):                             # cudaErrorInvalidValue, nothing changed
        assert out[bad + "_rc"] == 1 and out[bad] == [0, 2, 200e-6, True]
    for name in ("blocking", "spin", "yield", "both", "unknown"):
        assert out[name + "_copy"] == [0, 0, True], name        # every wait still gets its reply
