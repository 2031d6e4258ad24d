"""The suite shares code the way its rules say: a fixture several folders need is defined once, in
tests/conftest.py, and no folder's conftest defines it again under the same name."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def fixtures_of(path: Path) -> set[str]:
    """The names of the fixtures a file defines at its top level."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and any(
                "fixture" in ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list):
            names.add(node.name)
    return names


def test_the_shared_fixtures_are_defined_once():
    shared = fixtures_of(TESTS / "conftest.py")
    assert {"shim", "driver_dir", "vadd_ptx", "nvcc_build", "run_lock"} <= shared
    again = {str(c.relative_to(TESTS)): sorted(fixtures_of(c) & shared) for c in TESTS.rglob("*/conftest.py")}
    assert {where: names for where, names in again.items() if names} == {}
