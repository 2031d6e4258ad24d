"""One program sees the devices of two servers as one list (server ``emu``: a0; server
``emu=devices=2``: b0, b1 -> devices 0, 1, 2), kernels run on each, and ``CUDA_VISIBLE_DEVICES``
picks from the combined list."""
from __future__ import annotations

import pytest

from cricket.client.api import connect
from cricket.client.visible_devices import uuid_text


def _own_devices(address):
    with connect(address) as conn:
        return [(d.name, bytes(d.uuid).hex()) for d in conn.devices]


def _listed(res):
    assert res.returncode == 0, res.stdout + res.stderr
    lines = [line.split() for line in res.stdout.splitlines() if line.startswith("device ")]
    # "device I NAME... UUID pci BUS"
    return [(" ".join(f[2:-3]), f[-3], f[-1]) for f in lines]


@pytest.mark.nvcc
def test_devices_of_both_servers_in_list_order(servers, across_servers, run_across):
    a, b = (s.address for s in servers)
    own_a, own_b = _own_devices(a), _own_devices(b)
    listed = _listed(run_across([a, b], across_servers, "list"))
    assert [name for name, _, _ in listed] == [n for n, _ in own_a + own_b]
    # the first holder of a UUID keeps it; b0 repeats a0's (two emu servers) and gets its own
    assert listed[0][1] == own_a[0][1] and listed[2][1] == own_b[1][1]
    assert own_b[0][1] == own_a[0][1] and listed[1][1] != own_b[0][1]
    assert len({uuid for _, uuid, _ in listed}) == 3
    assert len({bus for _, _, bus in listed}) == 3            # PCI ids distinct too
    # the other order of the list gives the other order of devices
    swapped = _listed(run_across([b, a], across_servers, "list"))
    assert [name for name, _, _ in swapped] == [n for n, _ in own_b + own_a]


@pytest.mark.nvcc
def test_kernels_run_on_every_device(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "kernels")
    assert res.returncode == 0, res.stdout + res.stderr
    for d in range(3):
        assert f"device {d} kernel: 0 of 65536 wrong" in res.stdout
    assert "PASS: kernels on every device" in res.stdout


@pytest.mark.nvcc
def test_visible_devices_apply_to_the_combined_list(servers, across_servers, run_across):
    addresses = [s.address for s in servers]
    everything = _listed(run_across(addresses, across_servers, "list"))
    picked = _listed(run_across(addresses, across_servers, "list", env={"CUDA_VISIBLE_DEVICES": "2,0"}))
    assert picked == [everything[2], everything[0]]
    # a UUID of the combined list names its device, the derived one included
    by_uuid = _listed(run_across(addresses, across_servers, "list",
                                 env={"CUDA_VISIBLE_DEVICES": uuid_text(bytes.fromhex(everything[1][1]))[:16]}))
    assert by_uuid == [everything[1]]
    res = run_across(addresses, across_servers, "kernels", env={"CUDA_VISIBLE_DEVICES": "1,2"})
    assert res.returncode == 0 and "device 1 kernel: 0 of 65536 wrong" in res.stdout, res.stdout + res.stderr
    assert "device 2 kernel" not in res.stdout


@pytest.mark.nvcc
def test_two_threads_on_devices_of_two_servers(servers, across_servers, run_across):
    """Each host thread's calls go to its own device's server, while the other thread's go to the
    other server."""
    res = run_across([s.address for s in servers], across_servers, "threads", 0, 2)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "thread on device 0: 0 wrong; thread on device 2: 0 wrong" in res.stdout
