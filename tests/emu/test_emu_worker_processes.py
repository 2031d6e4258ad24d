"""Kernels in worker processes (emu.workers): the same results, errors and output as in-process,
a large launch spread over several processes, kernels that stop when told."""
import threading
from pathlib import Path

import numpy as np
import pytest

from cricket.backends.emu import EmuDevice, EmuError

from emu_support import launch, put


ENDLESS = (Path(__file__).resolve().parents[2] / "examples" / "endless_kernels.ptx").read_text()


@pytest.fixture
def device(workers):
    made = []

    def make(split: int = 1, **kw) -> EmuDevice:
        printed: list[str] = []
        dev = EmuDevice(arena_size=1 << 28, kernel_workers=workers, split_launches=split,
                        printf_sink=printed.append, **kw)
        dev.printed = printed
        made.append(dev)
        return dev
    yield make
    for dev in made:
        dev.close()


def test_a_large_launch_spreads_over_workers_with_the_same_result(device, rng, ptx):
    dev = device(split=3, max_lanes=1024)
    n = 1 << 16
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    pa, pb, pc = put(dev, a), put(dev, b), dev.mem_alloc(4 * n)
    launch(dev, dev.load_module([ptx("basic")]), "vecadd", (n // 256,), (256,), pa, pb, pc, n)
    assert dev.last_launch["workers"] == 3
    assert np.array_equal(np.frombuffer(dev.memcpy_dtoh(pc, 4 * n), np.float32), a + b)


def test_a_kernel_with_global_atomics_stays_in_one_worker(device, rng, ptx):
    dev = device(split=3, max_lanes=256)
    n, nbins = 20000, 37
    data = rng.integers(-10000, 10000, n, dtype=np.int32)
    ph = dev.mem_alloc(4 * nbins)
    dev.memset_d8(ph, 0, 4 * nbins)
    launch(dev, dev.load_module([ptx("histogram")]), "histogram_global", ((n + 255) // 256,), (256,),
           put(dev, data), ph, nbins, n)
    assert dev.last_launch["workers"] == 1
    counts = np.frombuffer(dev.memcpy_dtoh(ph, 4 * nbins), np.uint32)
    assert np.array_equal(counts, np.bincount(np.mod(data, nbins), minlength=nbins))


def test_printf_lines_come_back_in_order_from_one_worker(device, ptx):
    dev = device(split=3, max_lanes=6)
    launch(dev, dev.load_module([ptx("printf")]), "hello", (2,), (6,), 1000, 0.5)
    assert dev.last_launch["workers"] == 1
    text = "".join(dev.printed)
    assert text.startswith("thread 0 of block 0: 1000 0.000 even A 0 0\n")
    assert "thread 9 of block 1: 1009 4.500 odd J " in text


def test_a_fault_comes_back_with_its_details_and_is_sticky(device, ptx):
    dev = device()
    p = dev.mem_alloc(400)
    with pytest.raises(EmuError) as info:
        launch(dev, dev.load_module([ptx("faults", "sm75L")]), "write_past_end", (1,), (128,), p, 100)
    err = info.value
    assert err.code == 700 and err.kernel == "write_past_end"
    assert err.instruction.startswith("st.global.u32") and err.source == "faults.cu:6"
    with pytest.raises(EmuError) as again:
        dev.mem_alloc(16)
    assert again.value.code == 700


def test_cancel_stops_a_running_kernel_and_refuses_the_next(device):
    dev = device()
    module = dev.load_module([ENDLESS])
    errors: list[EmuError] = []

    def spin() -> None:
        try:
            launch(dev, module, "forever", (1,), (32,), dev.mem_alloc(128))
        except EmuError as exc:
            errors.append(exc)
    thread = threading.Thread(target=spin)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive(), "the endless kernel ended by itself"
    dev.cancel()
    thread.join()
    assert errors and errors[0].code == 719 and "cancelled" in errors[0].message
    with pytest.raises(EmuError, match="cancelled"):
        launch(dev, module, "nothing", (1,), (1,))


def test_launch_timeout_ends_an_endless_kernel_with_702(device):
    dev = device(launch_timeout=0.5)
    with pytest.raises(EmuError) as info:
        launch(dev, dev.load_module([ENDLESS]), "forever", (1,), (32,), dev.mem_alloc(128))
    assert info.value.code == 702 and info.value.kernel == "forever"
