"""Peer access between two emulated devices (emu.peer_window, emu_devices.enable_peer): kernels
in worker processes reach the other device's live allocations once access is enabled, see its
later allocations and frees, and fault on its memory when access is not enabled."""
import numpy as np
import pytest

from cricket.backends import emu_devices
from cricket.backends.emu import EmuDevice, EmuError
from cricket.backends.emu.errors import CUDA_ERROR_ILLEGAL_ADDRESS

from emu_support import launch, put


@pytest.fixture
def pair(workers):
    """Devices 0 and 1 of one session: arenas at their own device pointers, kernels in workers."""
    made = [EmuDevice(arena_size=1 << 26, kernel_workers=workers, split_launches=2, max_lanes=1024,
                      arena_base=emu_devices.arena_base(i)) for i in (0, 1)]
    yield made
    for dev in made:
        dev.close()


def test_a_kernel_adds_the_peers_memory_into_its_own_in_several_workers(pair, rng, ptx):
    here, there = pair
    n = 1 << 14
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    pa, pb, pc = put(there, a), put(here, b), here.mem_alloc(4 * n)
    emu_devices.enable_peer(here, there)
    launch(here, here.load_module([ptx("basic")]), "vecadd", (n // 256,), (256,), pa, pb, pc, n)
    assert here.last_launch["workers"] == 2           # each worker maps the peer
    assert np.array_equal(np.frombuffer(here.memcpy_dtoh(pc, 4 * n), np.float32), a + b)
    # and the other way round, writing into the peer's memory
    emu_devices.enable_peer(there, here)
    pd = there.mem_alloc(4 * n)
    launch(there, there.load_module([ptx("basic")]), "vecadd", (n // 256,), (256,), pc, pa, pd, n)
    assert np.array_equal(np.frombuffer(there.memcpy_dtoh(pd, 4 * n), np.float32), a + b + a)


def test_atomics_on_the_peers_memory_count_every_lane(pair, rng, ptx):
    here, there = pair
    n, nbins = 20000, 37
    data = rng.integers(-10000, 10000, n, dtype=np.int32)
    ph = there.mem_alloc(4 * nbins)
    there.memset_d8(ph, 0, 4 * nbins)
    emu_devices.enable_peer(here, there)
    launch(here, here.load_module([ptx("histogram")]), "histogram_global", ((n + 255) // 256,), (256,),
           put(here, data), ph, nbins, n)
    counts = np.frombuffer(there.memcpy_dtoh(ph, 4 * nbins), np.uint32)
    assert np.array_equal(counts, np.bincount(np.mod(data, nbins), minlength=nbins))


def test_the_peers_later_allocations_are_reached_and_its_frees_fault(pair, rng, ptx):
    here, there = pair
    n = 4096
    module = here.load_module([ptx("basic")])
    b, out = put(here, np.ones(n, np.float32)), here.mem_alloc(4 * n)
    emu_devices.enable_peer(here, there)
    launch(here, module, "vecadd", (n // 256,), (256,), b, b, out, n)       # the worker maps the peer now
    later = put(there, np.full(n, 5, np.float32))                          # allocated after that
    launch(here, module, "vecadd", (n // 256,), (256,), later, b, out, n)
    assert np.array_equal(np.frombuffer(here.memcpy_dtoh(out, 4 * n), np.float32), np.full(n, 6, np.float32))
    there.mem_free(later)
    with pytest.raises(EmuError) as err:
        launch(here, module, "vecadd", (n // 256,), (256,), later, b, out, n)
    assert err.value.code == CUDA_ERROR_ILLEGAL_ADDRESS


def test_without_access_the_peers_memory_is_an_illegal_address(pair, ptx):
    here, there = pair
    n = 4096                                    # enough threads to run in a worker, not inline
    theirs, mine = put(there, np.ones(n, np.float32)), put(here, np.ones(n, np.float32))
    module = here.load_module([ptx("basic")])
    emu_devices.enable_peer(here, there)
    launch(here, module, "vecadd", (n // 256,), (256,), theirs, mine, mine, n)   # mapped in the worker
    emu_devices.disable_peer(here, there)
    with pytest.raises(EmuError) as err:
        launch(here, module, "vecadd", (n // 256,), (256,), theirs, mine, mine, n)
    assert err.value.code == CUDA_ERROR_ILLEGAL_ADDRESS and f"{theirs:#x}" in err.value.message


def test_a_kernel_reaches_three_peers_at_once(workers, rng, ptx):
    devices = [EmuDevice(arena_size=1 << 24, kernel_workers=workers, arena_base=emu_devices.arena_base(i))
               for i in range(4)]
    try:
        n = 4096
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        pa, pb, pc = put(devices[1], a), put(devices[2], b), devices[3].mem_alloc(4 * n)
        for peer in devices[1:]:
            emu_devices.enable_peer(devices[0], peer)
        launch(devices[0], devices[0].load_module([ptx("basic")]), "vecadd", (n // 256,), (256,), pa, pb, pc, n)
        assert np.array_equal(np.frombuffer(devices[3].memcpy_dtoh(pc, 4 * n), np.float32), a + b)
    finally:
        for dev in devices:
            dev.close()
