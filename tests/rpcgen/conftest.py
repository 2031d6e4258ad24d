"""Fixtures: generated modules for tests/rpcgen/data/everything.x with each codec."""
from __future__ import annotations

import shutil

import pytest

from cricket._select import pure_python_forced

# tests/rpcgen is on sys.path (rootdir-less conftest)
from rpcgen_testlib import DATA, generate, import_package, write_package


@pytest.fixture(scope="session")
def everything_pure(tmp_path_factory):
    return generate(DATA / "everything.x", tmp_path_factory.mktemp("gen"), "gen_pure")


@pytest.fixture(scope="session")
def everything_cython(run_once):
    """With its compiled codec, built once per run: the test files using it may run in different
    pytest-xdist workers."""
    if pure_python_forced():
        pytest.skip("CRICKET_PUREPYTHON=1: compiled codecs are not used")
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler to build the generated Cython codec")
    root = run_once("rpcgen everything.x gen_cy",
                    lambda folder: write_package(DATA / "everything.x", folder, "gen_cy", cython=True))
    mod = import_package(root, "gen_cy", "everything")
    assert mod._codec is not None, "the compiled codec was built but not loaded"
    return mod


@pytest.fixture(params=["pure", "cython"], scope="session")
def ev(request):
    """The generated everything module, once with each codec."""
    return request.getfixturevalue(f"everything_{request.param}")
