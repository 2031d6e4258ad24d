"""The CUDA facts are stated once: the checked-in tables are what the generator makes from the CUDA
headers installed here, the leaf package imports nothing of cricket, and no other module keeps a
table of error names of its own."""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from cricket.cudafacts import cudart_errors, curesult, device_attributes, generate, streams

PACKAGE = Path(generate.__file__).resolve().parent
ROOT = PACKAGE.parents[1]
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))


def test_checked_in_tables_are_what_the_headers_give(tmp_path):
    if not (CUDA_HOME / "include" / "cuda.h").exists() or not (CUDA_HOME / "lib64" / "libcudart.so.13").exists():
        pytest.skip(f"needs the CUDA 13 headers and libcudart.so.13 under {CUDA_HOME}")
    generate.main(["--cuda-home", str(CUDA_HOME), "--out", str(tmp_path)])
    for name in ("cudart_errors.py", "curesult.py", "device_attributes.py", "streams.py"):
        assert (tmp_path / name).read_text() == (PACKAGE / name).read_text(), \
            f"{name} is stale: run python -m cricket.cudafacts.generate"


def test_the_leaf_package_imports_nothing_of_cricket():
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level > 0 or not (node.module or "").startswith("cricket"), f"{path.name}: {node.module}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("cricket") for a in node.names), path.name


def test_no_other_module_spells_out_error_names():
    # A dict literal mapping numbers to "CUDA_ERROR_..." or "cudaError..." strings outside cudafacts
    # would be a second table that can drift.
    pattern = re.compile(r"""\d+\s*:\s*\(?["'](CUDA_ERROR_|cudaError)\w+["']""")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "cricket").rglob("*.py")
                 if PACKAGE not in p.parents and pattern.search(p.read_text())]
    assert not offenders


def test_driver_and_runtime_messages_agree_where_both_define_a_code():
    assert curesult.error_string(curesult.INVALID_VALUE) == cudart_errors.ERRORS[1][1] == "invalid argument"
    assert curesult.error_string(curesult.ILLEGAL_ADDRESS) == "an illegal memory access was encountered"
    assert curesult.error_name(700) == "CUDA_ERROR_ILLEGAL_ADDRESS" and curesult.error_name(12345) == "CUresult(12345)"
    assert device_attributes.MAX_BLOCKS_PER_MULTIPROCESSOR == 106


def test_stream_handles_and_flags_are_the_headers_values():
    include = CUDA_HOME / "include"
    names = ("driver_types.h", "cuda.h", "cuda_device_runtime_api.h")
    if not all((include / n).exists() for n in names):
        pytest.skip(f"needs the CUDA 13 headers under {include}")
    # parse_stream_facts also fails when cuda.h's CU_STREAM_* disagree with the runtime's names
    facts = generate.parse_stream_facts(*((include / n).read_text(errors="replace") for n in names))
    assert facts == {"LEGACY": streams.LEGACY, "PER_THREAD": streams.PER_THREAD, "TAIL_LAUNCH": streams.TAIL_LAUNCH,
                     "FIRE_AND_FORGET": streams.FIRE_AND_FORGET, "NON_BLOCKING": streams.NON_BLOCKING}
    assert (streams.LEGACY, streams.PER_THREAD, streams.NON_BLOCKING) == (1, 2, 1)


def test_no_other_module_states_a_stream_handle():
    # A number bound to a name for a special stream or the non-blocking flag, in Python or in C
    # (where the CUDA headers' cudaStreamPerThread and friends are at hand), is a second copy.
    special = r"\w*(LEGACY|PER_THREAD|NON_BLOCKING|TAIL_LAUNCH|FIRE_AND_FORGET)\w*"
    python = re.compile(rf"^\s*{special}(\s*,\s*\w+)*\s*=\s*[(\d]", re.M)
    c = re.compile(rf"#define\s+{special}\s+[(\s\w]*?(0x[0-9a-fA-F]+|\d)")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "cricket").rglob("*.py")
                 if PACKAGE not in p.parents and python.search(p.read_text())]
    offenders += [str(p.relative_to(ROOT)) for ext in ("pyx", "pxd") for p in (ROOT / "cext").rglob(f"*.{ext}")
                  if python.search(p.read_text())]
    offenders += [str(p.relative_to(ROOT)) for ext in ("c", "h") for p in (ROOT / "cext").rglob(f"*.{ext}")
                  if "gen" not in p.parts and c.search(p.read_text())]
    assert not offenders


def test_the_fatbin_wrapper_magic_is_the_headers_value():
    from cricket.cudafacts import fatbin_magic
    header = (CUDA_HOME / "include" / "fatbinary_section.h")
    if not header.exists():
        pytest.skip(f"no {header}")
    found = re.search(r"#define\s+FATBINC_MAGIC\s+(0x[0-9a-fA-F]+)", header.read_text())
    assert found and int(found.group(1), 16) == fatbin_magic.WRAPPER_MAGIC


def test_no_other_module_states_a_fatbin_magic():
    # The client checks the magics without importing cricket.fatbin; each check takes them from
    # cudafacts.fatbin_magic, so no other source file spells the numbers out.
    magic = re.compile(r"466243b1|ba55ed50|\\x50\\xed\\x55\\xba", re.I)
    sources = [p for p in (ROOT / "cricket").rglob("*.py") if PACKAGE not in p.parents]
    sources += [p for ext in ("pyx", "pxd", "c", "h") for p in (ROOT / "cext").rglob(f"*.{ext}")]
    offenders = [str(p.relative_to(ROOT)) for p in sources if magic.search(p.read_text())]
    assert not offenders
