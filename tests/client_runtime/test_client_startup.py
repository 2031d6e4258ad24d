"""What a program's first CUDA call pays for: the client core loads without NumPy and asyncio
(NumPy alone took ~60 ms, the asyncio client and the server ~30 ms, at every program's start)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

CORE = "cricket.client.runtime_calls, cricket.client.api, cricket.client.driver_api, cricket.rpc"


@pytest.mark.parametrize("pure", ["0", "1"])
def test_the_client_core_loads_without_numpy_or_asyncio(pure):
    code = (f"import sys, {CORE}\n"
            "heavy = sorted(m for m in ('numpy', 'asyncio', 'uvloop', 'elftools') if m in sys.modules)\n"
            "print(','.join(heavy))")
    env = dict(os.environ, CRICKET_PUREPYTHON=pure)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"the client core imported {out.stdout.strip()}"


def test_what_moved_out_of_the_way_is_still_there_when_asked_for():
    from cricket.rpc import AsyncClient, PayloadSink, Server, ServerThread
    import cricket.rpc
    assert {AsyncClient.__name__, PayloadSink.__name__, Server.__name__, ServerThread.__name__} == {
        "AsyncClient", "PayloadSink", "Server", "ServerThread"}
    with pytest.raises(AttributeError, match="no attribute 'Nonsense'"):
        cricket.rpc.Nonsense  # noqa: B018
