"""Dynamic parallelism on emu: device-side launches run after the launching grid, in launch order,
each with its descendants before the next, tail launches last; nesting and pending-launch limits
and the device runtime's per-thread last error (CDP2, the CUDA programming guide)."""
import numpy as np
import pytest

from cricket.backends.emu import device_launch as dl
from cricket.backends.emu import pack_params
from cricket.backends.emu.errors import EmuError

CONFIGURATION_ERROR = 9       # cudaErrorInvalidConfiguration


@pytest.fixture
def mod(runner):
    return runner.module("device_launch", "rdc75")


def test_children_run_in_launch_order_after_the_parent(runner, mod):
    log, errors = runner.zeros(16, np.int32), runner.zeros(6, np.int32)
    runner.launch(mod, "parent", (3,), (32,), log, errors)
    got = runner.get(log, 16, np.int32)
    # parent; A and its child A1 (21); B (created stream); F (fire and forget); T (tail) last
    assert got[1:1 + got[0]].tolist() == [1, 2, 21, 4, 5, 3]
    assert runner.get(errors, 6, np.int32).tolist() == [0, 0, 0, CONFIGURATION_ERROR, CONFIGURATION_ERROR, 0]


def test_nesting_stops_at_the_documented_depth(runner, mod):
    levels, error = runner.zeros(32, np.int32), runner.zeros(2, np.int32)
    runner.launch(mod, "nest", (1,), (1,), levels, error, np.int32(0))
    assert runner.get(levels, 32, np.int32).tolist() == [1] * dl.MAX_NESTING_DEPTH + [0] * (32 - dl.MAX_NESTING_DEPTH)
    assert runner.get(error, 2, np.int32).tolist() == [dl.LAUNCH_MAX_DEPTH_EXCEEDED, dl.MAX_NESTING_DEPTH - 1]


def test_pending_launch_limit(runner, mod):
    counter, failed = runner.zeros(1, np.int32), runner.zeros(1, np.int32)
    extra = 5
    runner.launch(mod, "many", (1,), (1,), counter, failed, np.int32(dl.PENDING_LAUNCH_LIMIT + extra))
    assert runner.get(counter, 1, np.int32)[0] == dl.PENDING_LAUNCH_LIMIT
    assert runner.get(failed, 1, np.int32)[0] == extra


def test_every_thread_of_many_blocks_launches(runner, mod):
    blocks, threads, width = 3, 8, 4
    out = runner.zeros(blocks * threads * width, np.int32)
    runner.launch(mod, "fan_out", (blocks,), (threads,), out, np.int32(width))
    ids = np.arange(blocks * threads)
    want = (ids[:, None] * 100 + np.arange(width)).reshape(-1)
    assert np.array_equal(runner.get(out, blocks * threads * width, np.int32), want)


UNLAUNCHED = """
.version 8.0
.target sm_75
.address_size 64
.extern .func (.param .b64 func_retval0) __cudaCDP2GetParameterBufferV2
(.param .b64 f, .param .align 4 .b8 g[12], .param .align 4 .b8 b[12], .param .b32 s);
.visible .entry child(.param .u64 p) { ret; }
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<4>;
    mov.u64 %rd1, child;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd1;
    .param .align 4 .b8 param1[12];
    st.param.b32 [param1+0], 1;
    st.param.b32 [param1+4], 1;
    st.param.b32 [param1+8], 1;
    .param .align 4 .b8 param2[12];
    st.param.b32 [param2+0], 1;
    st.param.b32 [param2+4], 1;
    st.param.b32 [param2+8], 1;
    .param .b32 param3;
    st.param.b32 [param3+0], 0;
    .param .b64 retval0;
    call.uni (retval0), __cudaCDP2GetParameterBufferV2, (param0, param1, param2, param3);
    ld.param.b64 %rd2, [retval0+0];
    }
    ld.param.u64 %rd3, [out];
    st.global.u64 [%rd3], %rd2;
    ret;
}
"""


def test_buffers_never_launched_are_freed_with_the_grid(runner, mod):
    fn = runner.dev.load_module([UNLAUNCHED]).get_function("k")
    out = runner.zeros(64, np.uint64)
    used = runner.dev.arena.used
    runner.dev.launch(fn, (2,), (32,), 0, pack_params(fn, out))
    assert (runner.get(out, 1, np.uint64) != 0).all()        # each thread got a buffer
    assert runner.dev.arena.used == used
    counter, failed = runner.zeros(1, np.int32), runner.zeros(1, np.int32)
    used = runner.dev.arena.used
    runner.launch(mod, "many", (1,), (1,), counter, failed, np.int32(10))
    assert runner.get(counter, 1, np.int32)[0] == 10 and runner.dev.arena.used == used


def test_device_cuda_malloc_and_free_use_the_heap(runner, mod):
    n = 16
    out, errors = runner.zeros(1, np.int32), runner.zeros(3, np.int32)
    runner.launch(mod, "heap_parent", (1,), (1,), np.int32(n), out, errors)
    assert runner.get(out, 1, np.int32)[0] == sum(range(1, n + 1))
    assert runner.get(errors, 3, np.int32).tolist() == [0, dl.MEMORY_ALLOCATION, 0]


def test_other_device_runtime_calls_are_refused_by_name(runner):
    text = UNLAUNCHED.replace("__cudaCDP2GetParameterBufferV2", "__cudaCDP2EventCreateWithFlags")
    with pytest.raises(EmuError) as e:
        runner.dev.load_module([text])
    assert e.value.code == 801 and "__cudaCDP2EventCreateWithFlags" in str(e.value)
