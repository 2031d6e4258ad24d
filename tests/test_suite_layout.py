"""The suite shares code the way its rules say: through fixtures and helper modules, never by
importing a test module or a conftest; and a fixture several folders need is defined once, in
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


def imported_modules(path: Path) -> list[str]:
    """The last component of every module ``path`` imports, anywhere in it (function bodies too):
    ``from .conftest import x`` and ``import tests.driver.conftest`` both give ``conftest``."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.module:
                names.append(node.module.rsplit(".", 1)[-1])
            else:                                  # from . import test_x
                names.extend(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.extend(a.name.rsplit(".", 1)[-1] for a in node.names)
    return names


def test_no_test_module_imports_another_test_module_or_a_conftest():
    offenders = [f"{path.relative_to(TESTS)} imports {name}"
                 for path in sorted(TESTS.rglob("test_*.py"))
                 for name in imported_modules(path) if name == "conftest" or name.startswith("test_")]
    assert offenders == []


def test_no_module_loads_a_conftest_by_its_path():
    # A helper that executes a folder's conftest.py (importlib, by path) to borrow a class from it
    # runs that conftest twice; what several folders need goes into a helper module instead.
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        text = path.read_text()
        if "spec_from_file_location" in text and any(
                isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith("conftest.py")
                for node in ast.walk(ast.parse(text))):
            offenders.append(str(path.relative_to(TESTS)))
    assert offenders == []
