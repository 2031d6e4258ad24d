"""Choosing between the compiled client core and its Python source (``_select.use_core_sources``):
the source is imported when forced (CRICKET_PUREPYTHON=1) or when the extension is older than it,
and either way the module has one name and one object in ``sys.modules``."""
from __future__ import annotations

import importlib
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES

import pytest

from cricket import _select


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``corepkg_<n>`` holding ``core.py`` and a stand-in for its extension."""
    name = f"corepkg_{os.getpid()}_{len(sys.modules)}"
    pkg = tmp_path / name
    pkg.mkdir()
    (tmp_path / "setup.py").write_text("")             # a source checkout, built in place
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("STATE = object()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, pkg
    for module in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[module]
    _select._source_finder.sources.pop(f"{name}.core", None)


def _fake_extension(pkg, age: float) -> None:
    ext = pkg / ("core" + EXTENSION_SUFFIXES[0])
    ext.write_bytes(b"not a real extension")
    source_mtime = os.path.getmtime(pkg / "core.py")
    os.utime(ext, (source_mtime + age, source_mtime + age))


def test_an_extension_older_than_its_source_is_passed_over(package, monkeypatch, caplog):
    monkeypatch.delenv("CRICKET_PUREPYTHON", raising=False)
    name, pkg = package
    _fake_extension(pkg, age=-60)
    assert _select.use_core_sources(name, str(pkg), ("core",)) == {f"{name}.core": "pure"}
    assert "older than" in caplog.text and "make build" in caplog.text
    module = importlib.import_module(f"{name}.core")
    assert module.__file__.endswith("core.py")
    assert importlib.import_module(f"{name}.core") is module is sys.modules[f"{name}.core"]


def test_a_current_extension_is_chosen(package, monkeypatch):
    monkeypatch.delenv("CRICKET_PUREPYTHON", raising=False)
    name, pkg = package
    _fake_extension(pkg, age=60)
    assert _select.use_core_sources(name, str(pkg), ("core",)) == {f"{name}.core": "compiled"}
    assert f"{name}.core" not in _select._source_finder.sources


def test_pure_python_forced_takes_the_source_even_with_a_current_extension(package, monkeypatch):
    monkeypatch.setenv("CRICKET_PUREPYTHON", "1")
    name, pkg = package
    _fake_extension(pkg, age=60)
    assert _select.use_core_sources(name, str(pkg), ("core",)) == {f"{name}.core": "pure"}
    assert importlib.import_module(f"{name}.core").__file__.endswith("core.py")


def test_no_extension_means_the_source(package, monkeypatch):
    monkeypatch.delenv("CRICKET_PUREPYTHON", raising=False)
    name, pkg = package
    assert _select.use_core_sources(name, str(pkg), ("core",)) == {f"{name}.core": "pure"}
    assert importlib.import_module(f"{name}.core").__file__.endswith("core.py")


def test_an_installed_extension_is_chosen_whatever_the_file_times(package, monkeypatch):
    """Outside a source checkout (an installed wheel) file times say nothing about staleness."""
    monkeypatch.delenv("CRICKET_PUREPYTHON", raising=False)
    name, pkg = package
    (pkg.parent / "setup.py").unlink()
    _fake_extension(pkg, age=-60)
    assert _select.use_core_sources(name, str(pkg), ("core",)) == {f"{name}.core": "compiled"}
