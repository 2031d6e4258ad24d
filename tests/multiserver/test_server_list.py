"""The server list (``CRICKET_SERVER`` / ``cricket run --server``): parsed in one place, a bad
list is one line that says what to write, and the combined list's UUIDs and PCI ids are distinct."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cricket.client.servers import ServerListError, distinct_pci, distinct_uuid, parse_servers
from cricket.cudafacts import device_attributes as A


def test_list_keeps_the_order_given():
    assert parse_servers("gpu1:7391, gpu2:7391,/run/cricket.sock") == ["gpu1:7391", "gpu2:7391", "/run/cricket.sock"]
    assert parse_servers("/run/cricket.sock") == ["/run/cricket.sock"]


@pytest.mark.parametrize("text, says", [
    ("", "empty"),
    ("a:1,,b:2", "empty entry"),
    ("a:1,b", "not an RPC address"),
    ("a:1,b:99999", "out of range"),
    ("a:1,127.0.0.1:5,a:1", "twice"),
    (",".join(f"h{i}:1" for i in range(17)), "at most 16"),
])
def test_bad_lists_say_what_is_wrong(text, says):
    with pytest.raises(ServerListError, match=says) as info:
        parse_servers(text)
    assert "\n" not in str(info.value)


def test_cricket_run_refuses_a_bad_list_in_one_line():
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", "a:1,,b:2", "--", "true"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "empty entry" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_program_with_a_bad_list_gets_one_line_and_an_error_code(tmp_path):
    """The Python client of a program (what the shims reach) with a list naming one server twice."""
    program = ("from cricket.client.runtime import RUNTIME\n"
               "from cricket.client.errors import cuda_error_of\n"
               "try:\n    RUNTIME.conn\nexcept Exception as exc:\n    print(cuda_error_of(exc))\n")
    env = {**os.environ, "CRICKET_SERVER": "/tmp/x.sock,/tmp/x.sock"}
    res = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=60)
    assert res.stdout.strip() == "46"                       # cudaErrorDevicesUnavailable
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "twice" in lines[0], res.stderr


def test_a_repeated_uuid_gets_a_stable_distinct_one():
    real = bytes(range(16))
    other = distinct_uuid(real, "b:7391", 0)
    assert other != real and len(other) == 16
    assert other == distinct_uuid(real, "b:7391", 0)
    assert other != distinct_uuid(real, "c:7391", 0) != distinct_uuid(real, "b:7391", 1)
    assert other[6] >> 4 == 8 and other[8] >> 6 == 2         # RFC 4122: version 8, variant 10


def test_a_repeated_pci_id_gets_the_next_free_domain():
    taken: set = set()
    first = {A.PCI_BUS_ID: 1, A.PCI_DEVICE_ID: 0}
    assert distinct_pci(first, taken) is first
    second = distinct_pci(dict(first), taken)
    assert second[A.PCI_DOMAIN_ID] == 1
    assert distinct_pci({A.PCI_BUS_ID: 2, A.PCI_DEVICE_ID: 0}, taken).get(A.PCI_DOMAIN_ID, 0) == 0
