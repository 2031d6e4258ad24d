"""Helpers for the rpcgen tests: compile a .x into a throw-away package and import it."""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

from rpcgen.build import build_codec
from rpcgen.cli import compile_file

DATA = Path(__file__).parent / "data"


#: The generated codecs are built without optimisation: the tests check what they decode, not
#: how fast (-O0 takes about 60 % of -O2's CPU; docs/test-time.md).
CODEC_OPT = "-O0"


def write_package(x_file: str | os.PathLike, root: Path, package: str, cython: bool = False, **kw) -> None:
    """Write ``root/package/<stem>.py`` and, when ``cython``, build its codec beside it."""
    pkg_dir = root / package
    pkg_dir.mkdir(parents=True, exist_ok=True)
    (pkg_dir / "__init__.py").write_text("")
    compile_file(str(x_file), str(pkg_dir), cython=cython, **kw)
    if cython:
        build_codec(str(root), f"{package}._{Path(x_file).stem}_xdr", opt=CODEC_OPT)


def import_package(root: Path, package: str, stem: str) -> ModuleType:
    """``package.stem`` from ``root`` (a package ``write_package`` wrote)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    return importlib.import_module(f"{package}.{stem}")


def generate(x_file: str | os.PathLike, root: Path, package: str, cython: bool = False,
             **kw) -> ModuleType:
    """Write ``root/package/<stem>.py`` (and build its codec when ``cython``) and import it."""
    write_package(x_file, root, package, cython, **kw)
    return import_package(root, package, Path(x_file).stem)


def generate_with_codec(codec: str, x_file: str | os.PathLike, root: Path, package: str) -> ModuleType:
    """``generate`` with the pure-Python codec (``codec="pure"``) or the compiled one
    (``"cython"``), skipping the test where the compiled one cannot be used or built."""
    import shutil

    import pytest

    from cricket._select import pure_python_forced
    cython = codec == "cython"
    if cython and pure_python_forced():
        pytest.skip("CRICKET_PUREPYTHON=1: compiled codecs are not used")
    if cython and not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler to build the generated Cython codec")
    mod = generate(x_file, root, package, cython=cython)
    assert (mod._codec is not None) == cython
    return mod
