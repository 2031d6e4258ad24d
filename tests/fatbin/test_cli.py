"""``cricket fatbin FILE [--json] [--extract DIR]``."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cricket.fatbin import Cubin

from .helpers import fixture
from .signatures import PARAMS_KERNELS, expected_layout


def cricket(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cricket", "fatbin", *args], capture_output=True,
                          text=True, timeout=120)


def test_text_lists_entries_and_kernel_parameters():
    r = cricket(str(fixture("params_sm75_lz4frame.fatbin")))
    assert r.returncode == 0, r.stderr
    assert "[0] ELF   sm_75        lz4-frame" in r.stdout
    assert "[1] PTX   compute_75   lz4-frame" in r.stdout
    assert "kernel _Z5k_big7Big4000i: 2 params, 4004 bytes" in r.stdout
    assert "0:0x0:4000 1:0xfa0:4" in r.stdout


def test_json_gives_the_same_layouts():
    r = cricket(str(fixture("params_multi.fatbin")), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (fb,) = doc["fatbins"]
    assert [(e["kind"], e["arch"], e["compression"]) for e in fb["entries"]] == [
        ("ELF", 90, "zstd"), ("PTX", 90, "zstd"), ("ELF", 100, "zstd"), ("PTX", 100, "zstd")]
    for e in fb["entries"]:
        kernels = {k["name"]: k for k in (e.get("cubin") or e.get("ptx"))["kernels"]}
        assert set(kernels) == set(PARAMS_KERNELS)
        for name, types in PARAMS_KERNELS.items():
            got = [(p["ordinal"], p["offset"], p["size"]) for p in kernels[name]["params"]]
            assert got == expected_layout(types)[0]


def test_extract_writes_decompressed_cubins_and_ptx(tmp_path):
    r = cricket(str(fixture("params_multi.fatbin")), "--extract", str(tmp_path))
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["params_multi.fatbin.0.0.sm_90.cubin", "params_multi.fatbin.0.1.compute_90.ptx",
                     "params_multi.fatbin.0.2.sm_100.cubin", "params_multi.fatbin.0.3.compute_100.ptx"]
    cubin = Cubin((tmp_path / names[2]).read_bytes())
    assert cubin.arch == 100 and set(cubin.kernel_names) == set(PARAMS_KERNELS)
    ptx = (tmp_path / names[1]).read_text()
    assert ".target sm_90" in ptx and "\0" not in ptx
    # an extracted cubin is itself an input the command reads
    r = cricket(str(tmp_path / names[2]), "--records")
    assert r.returncode == 0 and "EIATTR_KPARAM_INFO" in r.stdout


@pytest.mark.parametrize("content, message", [
    (b"", "empty file"),
    (b"hello", "not an ELF file, fatbin or cubin"),
    (b"\x50\xed\x55\xba\x01\x00\x10\x00" + (10 ** 6).to_bytes(8, "little"), "container claims"),
])
def test_bad_input_is_a_one_line_error(tmp_path, content, message):
    p = tmp_path / "bad"
    p.write_bytes(content)
    r = cricket(str(p))
    assert r.returncode == 1
    assert r.stderr.startswith("cricket fatbin: error: ") and message in r.stderr
    assert "Traceback" not in r.stderr


def test_arch_option_names_the_image_a_device_loads():
    r = cricket(str(fixture("params_multi.fatbin")), "--arch", "103")
    assert r.returncode == 0 and "sm_103 loads [2] ELF sm_100" in r.stdout
    r = cricket(str(fixture("params_multi.fatbin")), "--arch", "86", "--json")
    assert json.loads(r.stdout)["fatbins"][0]["selected"] is None


@pytest.mark.parametrize("arch", ["sm_90", "compute_90", "90"])
def test_arch_option_takes_every_spelling(arch):
    r = cricket(str(fixture("params_multi.fatbin")), "--arch", arch)
    assert r.returncode == 0, r.stderr
    assert "sm_90 loads [0] ELF sm_90" in r.stdout


def test_an_arch_that_is_no_arch_is_refused_by_name():
    r = cricket(str(fixture("params_multi.fatbin")), "--arch", "sm_9x")
    assert r.returncode == 2
    assert "'sm_9x' is not an arch" in r.stderr and "Traceback" not in r.stderr


def test_a_file_without_device_code_says_so_in_one_line(tmp_path):
    host_only = tmp_path / "host_only"
    host_only.write_bytes(open(sys.executable, "rb").read())
    r = cricket(str(host_only))
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.strip().splitlines()[-1] == f"{host_only} has no CUDA device code"
    assert "wrappers" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("form", [[], ["--json"]])
def test_a_closed_stdout_ends_the_listing_quietly(form):
    read_end, write_end = os.pipe()
    os.close(read_end)      # as `| head` does once it has what it wants
    try:
        r = subprocess.run([sys.executable, "-m", "cricket", "fatbin", str(fixture("params_multi.fatbin")),
                            "--records", *form], stdout=write_end, stderr=subprocess.PIPE, text=True,
                           timeout=120)
    finally:
        os.close(write_end)
    assert r.returncode == 141, r.stderr
    assert "Traceback" not in r.stderr and "Broken pipe" not in r.stderr and "Exception" not in r.stderr


def test_help_shows_examples():
    r = cricket("--help")
    assert r.returncode == 0
    assert "examples:\n  cricket fatbin " in r.stdout
