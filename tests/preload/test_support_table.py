"""The support table of cext/preload/README.md is what the code says (cext/preload/support_table.py):
every export once, implemented exactly when a hand-written C body reaches an existing
implementation; the README is regenerated after a function is added."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cricket_support_table", ROOT / "cext" / "preload" / "support_table.py")
support_table = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = support_table
_spec.loader.exec_module(support_table)


def test_readme_table_is_up_to_date():
    # fails after a function is added or removed: run python cext/preload/support_table.py
    assert support_table.main(["--check"]) == 0


def test_every_export_is_listed_once_and_every_forwarded_function_is_implemented():
    from cricket.client import runtime_api
    table = support_table.support()
    assert len(table) == len(support_table.gen_stubs.read_export_names()) == 422
    assert all(table[name] for name in runtime_api.FORWARDED)
    text = support_table.README.read_text()
    share = f"**{sum(table.values())} of 422 exports implemented"
    assert share in text


def test_a_body_forwarding_to_a_missing_implementation_is_not_supported():
    body = '{ CALL_AS("cudaSomethingElse", U(x)); }'
    assert support_table.python_target("cudaFoo", body) == "cudaSomethingElse"
    assert support_table.python_target("cudaFoo", "{ FORWARD(U(x)); }") == "cudaFoo"
    assert support_table.python_target("cudaFoo", "{ *x = 0; return cudaSuccess; }") is None
    # without its implementation registered an export counts as not supported
    implemented = support_table.support(set())
    assert not implemented["cudaMalloc"] and implemented["cudaCreateChannelDesc"]
