"""Link symbols (what a relocatable module defines and what it needs from others) read from PTX
and from relocatable cubins, and fatbin containers written by cricket.fatbin.writer and read back.
The modules are examples/jit_link's two halves, built by nvcc at test time."""
from __future__ import annotations

from pathlib import Path

import pytest

from cricket.fatbin import Cubin, Fatbin
from cricket.fatbin.format import EntryKind
from cricket.fatbin.ptx import PtxModule
from cricket.fatbin.writer import LINK_INPUT_PREFIX, NewEntry, container, link_inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def built(nvcc_build) -> dict[str, Path]:
    """Both halves of examples/jit_link as relocatable PTX and cubins (the PTX builds are
    tests/driver/test_jit_link.py's too: nvcc_build runs them once)."""
    return {f"{half}.{kind}": nvcc_build("-rdc=true", f"-{kind}", "-arch=sm_75", EXAMPLES / f"jit_link_{half}.cu",
                                         output=f"{half}.{kind}")
            for half in ("kernel", "device") for kind in ("ptx", "cubin")}


@pytest.mark.nvcc
def test_ptx_link_symbols_of_an_rdc_module(built):
    kernel = PtxModule(built["kernel.ptx"].read_text()).link_symbols
    device = PtxModule(built["device.ptx"].read_text()).link_symbols
    assert kernel.defined == {"scale_all"} and kernel.undefined == {"scale", "offset"}
    assert device.defined == {"scale", "offset", "scaled_calls"} and not device.undefined
    assert not kernel.weak and not device.weak


@pytest.mark.nvcc
def test_relocatable_cubin_link_symbols(built):
    kernel = Cubin(built["kernel.cubin"].read_bytes()).link_symbols
    device = Cubin(built["device.cubin"].read_bytes()).link_symbols
    assert {"scale", "offset"} <= kernel.undefined and "scale_all" in kernel.defined
    assert {"scale", "offset", "scaled_calls"} <= device.defined and not device.undefined & {"scale", "offset"}


def test_ptx_declarations_by_linkage():
    text = """
.version 9.0
.target sm_75
.address_size 64
// .extern .func commented_out();
.extern .func (.param .b32 r) needed(.param .b32 a);
.extern .global .align 4 .u32 counter;
.extern .shared .align 16 .b8 dynamic_smem[];      /* dynamic shared memory: not a link symbol */
.visible .global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.global .align 4 .u32 private_var;
.common .global .align 8 .u64 shared_tail;
.weak .func helper() { ret; }
.func internal() { ret; }
.visible .func (.param .b32 r) later(.param .b32 a);
.weak .func (.param .b32 r) declared_only(.param .b32 a);     // a prototype defines nothing
.visible .func (.param .b32 r) later(.param .b32 a) { { .reg .b32 %x; } ret; }
.visible .entry kern(.param .u64 p) { { call.uni internal, (); } ret; }
"""
    symbols = PtxModule(text).link_symbols
    assert symbols.defined == {"table", "shared_tail", "helper", "later", "kern"}
    assert symbols.weak == {"shared_tail", "helper"}
    assert symbols.undefined == {"needed", "counter"}


@pytest.mark.nvcc
def test_written_container_reads_back(built):
    ptx = built["kernel.ptx"].read_bytes()
    cubin = built["device.cubin"].read_bytes()
    image = container([NewEntry(EntryKind.PTX, 75, ptx, "kernel.ptx", (9, 0)),
                       NewEntry(EntryKind.ELF, 75, cubin, "device.cubin")])
    fb = Fatbin.from_bytes(image)
    assert len(image) == fb.size and len(image) % 8 == 0
    first, second = fb.entries
    assert (first.name, first.arch_name, first.ptx.version) == ("kernel.ptx", "compute_75", (9, 0))
    assert first.ptx_text == ptx.decode()
    assert (second.name, second.arch_name, second.payload) == ("device.cubin", "sm_75", cubin)
    assert second.cubin.kernel_names == Cubin(cubin).kernel_names


@pytest.mark.nvcc
def test_only_a_container_of_link_inputs_is_taken_for_a_link(built):
    ptx = built["kernel.ptx"].read_bytes()
    linked = container([NewEntry(EntryKind.PTX, 75, ptx, LINK_INPUT_PREFIX + "kernel.ptx", (9, 0)),
                        NewEntry(EntryKind.ELF, 75, built["device.cubin"].read_bytes(),
                                 LINK_INPUT_PREFIX + "device.cubin")])
    assert [e.name for e in link_inputs(linked)] == ["cricket-link:kernel.ptx", "cricket-link:device.cubin"]
    mixed = container([NewEntry(EntryKind.PTX, 75, ptx, LINK_INPUT_PREFIX + "kernel.ptx", (9, 0)),
                       NewEntry(EntryKind.PTX, 75, ptx, "", (9, 0))])
    assert link_inputs(mixed) == [] and link_inputs(b"not a fatbin") == []
