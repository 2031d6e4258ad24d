"""Containers and entries: header fields, image choice, PTX sources, laziness, content address."""
from __future__ import annotations

import hashlib

import pytest

from cricket.fatbin import (Compression, EntryKind, Fatbin, NoImageError, find_device_code,
                            iter_containers)
from cricket.fatbin import container as container_module

from .helpers import fixture


def load(name: str) -> Fatbin:
    return Fatbin.from_file(str(fixture(name)))


def test_entry_header_fields_are_consistent():
    fb = load("params_sm75_zstd.fatbin")
    assert [(e.kind, e.arch, e.compression) for e in fb.entries] == [
        (EntryKind.ELF, 75, Compression.ZSTD), (EntryKind.PTX, 75, Compression.ZSTD)]
    for e in fb.entries:
        h = e.header
        assert h.version == 0x0101 and h.header_size % 8 == 0 and h.payload_size % 8 == 0
        assert h.payload_size == (h.compressed_size + 7) & ~7
        assert len(e.payload) == h.uncompressed_size == e.size
    elf, ptx = fb.entries
    assert elf.payload[:4] == b"\x7fELF"
    assert (ptx.header.major, ptx.header.minor) == (9, 0)
    assert ptx.payload.endswith(b"\0") and ".version 9.0" in ptx.ptx_text
    assert elf.flag_names == ["bit64", "host_linux", "zstd"]


def test_entries_are_walked_by_their_own_header_size():
    fb = load("params_multi.fatbin")
    # sm_100 ELF headers carry a binary capability descriptor, so they are longer than 64 bytes
    sm100 = next(e for e in fb.entries if e.is_elf and e.arch == 100)
    assert sm100.header.header_size > 64
    assert isinstance(sm100.options, bytes) and sm100.options
    offsets = [e.offset for e in fb.entries]
    sizes = [e.header.header_size + e.header.payload_size for e in fb.entries]
    assert offsets[0] == 16
    assert all(offsets[i] + sizes[i] == offsets[i + 1] for i in range(len(offsets) - 1))
    assert offsets[-1] + sizes[-1] == fb.size


def test_select_image_prefers_cubin_then_compatible_cubin_then_ptx():
    fb = load("params_multi.fatbin")      # sm_90, compute_90, sm_100, compute_100
    assert (fb.select_image(90).kind, fb.select_image(90).arch) == (EntryKind.ELF, 90)
    assert (fb.select_image(100).kind, fb.select_image(100).arch) == (EntryKind.ELF, 100)
    assert (fb.select_image(103).kind, fb.select_image(103).arch) == (EntryKind.ELF, 100)
    assert (fb.select_image(120).kind, fb.select_image(120).arch) == (EntryKind.PTX, 100)
    with pytest.raises(NoImageError, match="nothing runs on sm_86"):
        fb.select_image(86)


def test_ptx_sources_returns_every_ptx_text():
    fb = load("params_multi.fatbin")
    sources = fb.ptx_sources()
    assert len(sources) == 2
    assert all(".entry k_externc" in s for s in sources)
    assert [".target sm_90" in sources[0], ".target sm_100" in sources[1]] == [True, True]


def test_nothing_is_decompressed_until_a_kernel_is_used(monkeypatch):
    calls = []
    real = container_module.decompress

    def counting(*a, **kw):
        calls.append(a[3]() if callable(a[3]) else a[3])
        return real(*a, **kw)

    monkeypatch.setattr(container_module, "decompress", counting)
    fb = load("params_multi.fatbin")
    assert fb.entries and calls == []
    fb.kernel("k_externc", arch=100)
    assert len(calls) == 1 and "sm_100" in calls[0]
    fb.kernel("_Z8k_boundsPf", arch=100)
    fb.kernel("k_externc", arch=100)
    assert len(calls) == 1          # the cubin, its parse and the layouts are cached


def test_digest_is_the_sha256_of_the_container():
    data = fixture("params_sm75_zlib.fatbin").read_bytes()
    fb = Fatbin.from_bytes(data)
    assert fb.digest == hashlib.sha256(data).hexdigest()
    assert bytes(fb.image) == data


def test_a_raw_fatbin_file_with_several_containers():
    a = fixture("params_sm75_zstd.fatbin").read_bytes()
    b = fixture("params_sm75_lz4.fatbin").read_bytes()
    found = list(iter_containers(memoryview(a + b), "two"))
    assert [f.size for f in found] == [len(a), len(b)]
    assert [e.compression for e in found[1].entries] == [Compression.LZ4_BLOCK] * 2


def test_find_device_code_reads_fatbin_and_cubin_files(tmp_path):
    code = find_device_code(fixture("params_multi.fatbin"))
    assert code.file_kind == "fatbin" and len(code.fatbins) == 1
    sm100 = next(e for e in code.fatbins[0].entries if e.is_elf and e.arch == 100)
    cubin_file = tmp_path / "k.cubin"
    cubin_file.write_bytes(sm100.payload)
    code = find_device_code(cubin_file)
    assert code.file_kind == "cubin" and code.cubins[0].arch == 100
    assert "k_externc" in code.kernel_names()
