"""Faults are reported as CUDA would (code, kernel, instruction, source line) and never crash the process."""
import logging

import numpy as np
import pytest

from cricket.backends.emu import EmuError

HEADER = ".version 9.0\n.target sm_75\n.address_size 64\n"


def launch(r, kernel, grid, block, *args):
    m = r.module("faults", "sm75L")
    r.launch(m, kernel, grid, block, *args)


def test_write_past_an_allocation_is_an_illegal_address_with_source_line(make_runner, caplog):
    r = make_runner()
    p = r.zeros(100, np.int32)
    with caplog.at_level(logging.ERROR), pytest.raises(EmuError) as e:
        launch(r, "write_past_end", (1,), (128,), p, 100)
    err = e.value
    assert err.code == 700 and err.name == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert err.kernel == "write_past_end"
    assert err.instruction.startswith("st.global.u32")
    assert err.source == "faults.cu:6"
    assert "write_past_end" in caplog.text and "faults.cu:6" in caplog.text


def test_fault_is_sticky_until_reset(make_runner):
    r = make_runner()
    p = r.zeros(10, np.int32)
    with pytest.raises(EmuError):
        launch(r, "write_past_end", (1,), (32,), p, 10)
    with pytest.raises(EmuError) as e:
        r.dev.mem_alloc(16)
    assert e.value.code == 700
    with pytest.raises(EmuError):
        r.dev.synchronize()
    r.dev.reset()
    old = r.module("faults", "sm75L")
    with pytest.raises(EmuError) as e:                        # modules do not survive a reset
        r.dev.launch(old.get_function("write_past_end"), (1,), (32,), 0, bytes(16))
    assert e.value.code == 400
    r._mods.clear()
    p = r.zeros(32, np.int32)
    launch(r, "write_past_end", (1,), (32,), p, 32)          # usable again after reset
    assert np.array_equal(r.get(p, 32, np.int32), np.arange(32))


def test_misaligned_load_reports_716(make_runner):
    r = make_runner()
    src = r.zeros(256, np.int8)
    out = r.zeros(32, np.int32)
    with pytest.raises(EmuError) as e:
        launch(r, "misaligned_load", (1,), (32,), src, out)
    assert e.value.code == 716 and e.value.source == "faults.cu:11"


def test_trap_reports_launch_failed(make_runner):
    r = make_runner()
    p = r.zeros(32, np.int32)
    with pytest.raises(EmuError) as e:
        launch(r, "trap_kernel", (1,), (32,), p)
    assert e.value.code == 719
    assert "thread [5, 0, 0]" in str(e.value)


def test_assert_reports_710_and_prints_the_assertion(make_runner):
    r = make_runner()
    v = r.put(np.array([1, 2, -3, 4], np.int32))
    with pytest.raises(EmuError) as e:
        launch(r, "assert_kernel", (1,), (4,), v)
    assert e.value.code == 710
    text = "".join(r.printed)
    assert "faults.cu:22: void assert_kernel(const int *): block: [0,0,0], thread: [2,0,0] Assertion " \
           "`v[threadIdx.x] >= 0` failed." in text


def test_passing_assert_is_silent(make_runner):
    r = make_runner()
    v = r.put(np.array([1, 2, 3, 4], np.int32))
    launch(r, "assert_kernel", (1,), (4,), v)
    assert r.printed == []


@pytest.mark.parametrize("bad", [0, 0x1000, 0x7FFF_0000_0000])
def test_null_or_host_pointer_read_is_illegal_address(make_runner, bad):
    r = make_runner()
    p = r.zeros(32, np.int32)
    with pytest.raises(EmuError) as e:
        launch(r, "null_deref", (1,), (32,), p, bad)
    assert e.value.code == 700


def test_unsupported_instruction_is_refused_at_load_with_its_name(make_runner):
    r = make_runner()
    text = HEADER + """
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<8>;
    wgmma.fence.sync.aligned;
    ret;
}
"""
    with pytest.raises(EmuError) as e:
        r.dev.load_module([text])
    assert e.value.code == 801
    assert "tensor-core" in str(e.value) and "wgmma.fence" in str(e.value)


def test_unsupported_instruction_form_is_refused_at_load(make_runner):
    r = make_runner()
    text = HEADER + """
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<3>;
    prmt.b32.ecx %r1, %r2, %r2, %r2;
    ret;
}
"""
    with pytest.raises(EmuError) as e:
        r.dev.load_module([text])
    assert e.value.code == 801 and "prmt" in str(e.value)


def test_module_without_ptx_loads_but_launch_gives_209_with_rebuild_hint(make_runner, caplog):
    r = make_runner()
    mod = r.dev.load_module([], sass_archs=[75])
    fn = mod.get_function("vecadd")
    with caplog.at_level(logging.ERROR), pytest.raises(EmuError) as e:
        r.dev.launch(fn, (1,), (1,), 0, b"")
    assert e.value.code == 209 and e.value.name == "CUDA_ERROR_NO_BINARY_FOR_GPU"
    assert "-arch=sm_75" in str(e.value) and "75-real" in str(e.value)
    assert "no PTX" in caplog.text


def test_invalid_launch_configuration_is_invalid_value(runner):
    m = runner.module("basic")
    fn = m.get_function("vecadd")
    with pytest.raises(EmuError) as e:
        runner.dev.launch(fn, (1,), (2048,), 0, bytes(fn.param_size))
    assert e.value.code == 1
    with pytest.raises(EmuError) as e:
        runner.dev.launch(fn, (1,), (32,), 0, b"\0" * 4)        # parameters too short
    assert e.value.code == 1
    runner.dev.synchronize()                                   # not sticky


def test_endless_loop_is_stopped_with_launch_timeout(make_runner):
    r = make_runner(max_steps=2000)
    text = HEADER + """
.visible .entry spin(.param .u64 p)
{
LOOP:
    bra.uni LOOP;
}
"""
    mod = r.dev.load_module([text])
    fn = mod.get_function("spin")
    with pytest.raises(EmuError) as e:
        r.dev.launch(fn, (1,), (32,), 0, bytes(8))
    assert e.value.code == 702
    r2 = make_runner(launch_timeout=0.2)
    fn2 = r2.dev.load_module([text]).get_function("spin")
    with pytest.raises(EmuError) as e:
        r2.dev.launch(fn2, (1,), (32,), 0, bytes(8))
    assert e.value.code == 702


def test_shuffle_by_a_diverged_warp_is_reported_not_guessed(make_runner):
    r = make_runner()
    m = r.module("shfl")
    p = r.zeros(64, np.int32)
    with pytest.raises(EmuError) as e:
        r.launch(m, "shfl_diverged", (1,), (64,), r.put(np.arange(64, dtype=np.int32)), p)
    assert e.value.code == 801 and "warp" in str(e.value)


def test_unsupported_ptx_version_is_222(make_runner):
    r = make_runner()
    with pytest.raises(EmuError) as e:
        r.dev.load_module([".version 12.0\n.target sm_75\n.address_size 64\n"])
    assert e.value.code == 222


def test_syntax_error_is_invalid_ptx(make_runner):
    r = make_runner()
    with pytest.raises(EmuError) as e:
        r.dev.load_module([HEADER + ".visible .entry k( { ret; }"])
    assert e.value.code == 218
