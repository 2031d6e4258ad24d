"""Struct-by-value parameters, templates, device functions (-O3 and -G), separate compilation."""
import struct

import numpy as np
import pytest

from cricket.backends.emu import pack_params


@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
def test_struct_parameter_fields_read_at_their_offsets(two_batches, variant):
    # struct Params {double; float; int; short; signed char; long long; unsigned short[2];} = 40 bytes
    raw = struct.pack("<dfihb5xqHH4x", 2.5, 7.75, -3, -300, -5, 1 << 40, 11, 65000)
    assert len(raw) == 40
    n = 32

    def body(r):
        m = r.module("params", variant)
        fn = m.get_function("struct_param")
        assert fn.param_layout == [(0, 40), (40, 8)]
        po = r.zeros(n, np.int64)
        r.dev.launch(fn, (1,), (n,), 0, pack_params(fn, raw, po))
        return {"o": r.get(po, n, np.int64)}

    out = two_batches(body)
    i = np.arange(n)
    ref = (2.5 * i).astype(np.int64) + 7 + -3 * i - 300 - 5 + (1 << 40) + 11 * 3 + 65000
    assert np.array_equal(out["o"], ref)


@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
@pytest.mark.parametrize("tname,dtype,factor,addend", [("f", np.float32, 1.5, -2.0), ("i", np.int32, -3, 7),
                                                        ("d", np.float64, 0.25, 1e10)])
def test_template_instantiations(two_batches, rng, variant, tname, dtype, factor, addend):
    n = 300
    x = (rng.standard_normal(n) * 100).astype(dtype)

    def body(r):
        m = r.module("params", variant)
        po = r.zeros(n, dtype)
        r.launch(m, f"_Z9scale_addI{tname}EvPKT_PS0_S0_S0_i", (3,), (128,), r.put(x), po, factor, addend, n)
        return {"o": r.get(po, n, dtype)}

    out = two_batches(body)
    ref = (x * dtype(factor) + dtype(addend)).astype(dtype)
    if dtype == np.int32:
        assert np.array_equal(out["o"], ref)
    else:
        np.testing.assert_allclose(out["o"], ref, rtol=1e-6 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("variant", ["sm75", "sm75G", "sm75L"])
def test_device_functions_inlined_noinline_and_debug_builds(two_batches, rng, variant):
    n = 500
    x = rng.uniform(-5, 5, n).astype(np.float32)

    def body(r):
        m = r.module("devfunc", variant)
        py, pz = r.zeros(n, np.float32), r.zeros(n, np.int32)
        r.launch(m, "devfunc", ((n + 127) // 128,), (128,), r.put(x), py, pz, n)
        return {"y": r.get(py, n, np.float32), "z": r.get(pz, n, np.int32)}

    out = two_batches(body)
    f = np.float32
    ref_y = f(0.5) * x * x + f(-2.0) * x + f(1.0) + np.sqrt(np.abs(x))
    np.testing.assert_allclose(out["y"], ref_y, rtol=1e-5, atol=1e-5)
    digits = np.array([sum(int(c) for c in str((i * 37) & 0xFFFFFFFF)) for i in range(n)])
    assert np.array_equal(out["z"], np.clip(digits, 3, 20))


def test_rdc_modules_are_linked_across_translation_units(two_batches, ptx, rng):
    n = 200
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)

    def body(r):
        m = r.dev.load_module([ptx("rdc_a", "rdc"), ptx("rdc_b", "rdc")])
        pc = r.zeros(n, np.float32)
        r.launch(m, "rdc_kernel", (2,), (128,), r.put(a), r.put(b), pc, n)
        ptr, size = m.get_global("rdc_scale")
        assert size == 4 and r.get(ptr, 1, np.int32)[0] == 3      # the initialiser from part B
        r.dev.memcpy_htod(ptr, np.array([5], np.int32))           # cudaMemcpyToSymbol
        pc2 = r.zeros(n, np.float32)
        r.launch(m, "rdc_kernel", (2,), (128,), r.put(a), r.put(b), pc2, n)
        return {"c": r.get(pc, n, np.float32), "c2": r.get(pc2, n, np.float32)}

    out = two_batches(body)
    assert np.array_equal(out["c"], (a * np.float32(2) + b) * np.float32(3))
    assert np.array_equal(out["c2"], (a * np.float32(2) + b) * np.float32(5))


def test_rdc_module_alone_reports_the_missing_definition(make_runner, ptx):
    from cricket.backends.emu import EmuError
    r = make_runner()
    with pytest.raises(EmuError) as e:
        r.dev.load_module([ptx("rdc_a", "rdc")])
    assert e.value.code == 500
    assert "rdc" in str(e.value)
