"""Corrupted fatbins and cubins give clean errors that name the place, never crashes or hangs."""
from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cricket.fatbin import (CubinError, Fatbin, FatbinError, FormatError, TruncatedError,
                            find_device_code)
from cricket.fatbin.cubin import Cubin
from cricket.fatbin.format import EntryKind

from .helpers import container_bytes, decode_everything, entry_bytes, fixture

ORIGINAL = fixture("params_sm75_zstd.fatbin").read_bytes()


def mutated(offset: int, fmt: str, value: int) -> bytes:
    data = bytearray(ORIGINAL)
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


def test_the_unmodified_fixture_decodes():
    assert decode_everything(Fatbin.from_bytes(ORIGINAL)) == 16


def test_wrong_container_magic():
    with pytest.raises(FormatError, match="magic 0xba55ed51 is not a fatbin container"):
        Fatbin.from_bytes(mutated(0, "<I", 0xBA55ED51))


def test_truncated_container():
    with pytest.raises(TruncatedError, match="container claims .* bytes, only 100 are there"):
        Fatbin.from_bytes(ORIGINAL[:100])


def test_entry_payload_size_past_the_end_names_the_entry():
    fb = Fatbin.from_bytes(mutated(16 + 8, "<Q", len(ORIGINAL)), "x.fatbin")
    with pytest.raises(TruncatedError, match="entry 0 at offset 0x10 of x.fatbin"):
        fb.entries


def test_entry_header_size_below_64():
    fb = Fatbin.from_bytes(mutated(16 + 4, "<I", 32))
    with pytest.raises(FormatError, match="entry 0 .* header size 32 is below 64"):
        fb.entries


def test_compressed_size_larger_than_stored():
    fb = Fatbin.from_bytes(mutated(16 + 16, "<I", 1 << 20))
    with pytest.raises(FormatError, match="compressed size 1048576 does not fit"):
        fb.entries


def test_fat_size_shorter_than_the_entries():
    fb = Fatbin.from_bytes(mutated(8, "<Q", 200))
    with pytest.raises(TruncatedError, match="entry 0"):
        fb.entries


def test_two_compression_flags_at_once():
    fb = Fatbin.from_bytes(container_bytes(entry_bytes(EntryKind.PTX, 75, b"x" * 8, flags=0x3011,
                                                       uncompressed_size=8)))
    with pytest.raises(FormatError, match="more than one compression"):
        fb.entries[0].payload


def test_ptx_without_nul_and_not_utf8():
    fb = Fatbin.from_bytes(container_bytes(entry_bytes(EntryKind.PTX, 75, b".version 9.0 x" * 4,
                                                       payload_size=56)))
    with pytest.raises(FatbinError, match="no terminating NUL"):
        fb.entries[0].payload
    fb = Fatbin.from_bytes(container_bytes(entry_bytes(EntryKind.PTX, 75, b"\xff\xfe.version\0")))
    with pytest.raises(FatbinError, match="not UTF-8"):
        fb.entries[0].ptx


def test_elf_entry_that_is_not_a_cubin():
    fb = Fatbin.from_bytes(container_bytes(entry_bytes(EntryKind.ELF, 75, b"not an elf at all")))
    with pytest.raises(CubinError, match=r"entry 0 \(ELF sm_75, none\).*not an ELF"):
        fb.entries[0].cubin


def cubin_bytes() -> bytes:
    return Fatbin.from_bytes(ORIGINAL).entries[0].payload


def test_nv_info_record_running_past_its_section_names_the_kernel():
    data = bytearray(cubin_bytes())
    c = Cubin(bytes(data))
    section = next(s for s in c._sections if s.name == ".nv.info.k_externc")
    off = section["sh_offset"]
    # find the first SVAL record and make it claim more bytes than the section holds
    pos = off
    while data[pos] != 4:
        pos += 4
    struct.pack_into("<H", data, pos + 2, 0xFFF0)
    with pytest.raises(CubinError, match="nv.info.k_externc: record EIATTR_.* claims 65520 bytes"):
        Cubin(bytes(data), "k.cubin").kernel("k_externc")


def test_truncated_cubin():
    with pytest.raises(CubinError, match="truncated"):
        Cubin(cubin_bytes()[:2000], "k.cubin").kernel("k_externc")


def test_find_device_code_on_garbage_and_empty_files(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "junk").write_bytes(b"\x7fELF" + b"\x02\x01\x01" + b"\0" * 9 + b"\xff" * 60)
    with pytest.raises(FormatError, match="empty file"):
        find_device_code(tmp_path / "empty")
    with pytest.raises(FormatError, match="malformed ELF"):
        find_device_code(tmp_path / "junk")
    with pytest.raises(FatbinError, match="cannot read"):
        find_device_code(tmp_path / "missing")


def decode_or_fail_cleanly(data: bytes) -> None:
    try:
        fb = Fatbin.from_bytes(data)
        decode_everything(fb)
        for arch in (75, 90):
            try:
                fb.select_image(arch)
            except FatbinError:
                pass
    except FatbinError as exc:
        assert str(exc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(ORIGINAL) - 1), st.integers(0, 255)), min_size=1,
                max_size=8))
def test_random_byte_mutations_give_clean_errors(changes):
    data = bytearray(ORIGINAL)
    for offset, value in changes:
        data[offset] = value
    decode_or_fail_cleanly(bytes(data))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(ORIGINAL)), st.binary(max_size=64))
def test_random_truncations_and_insertions_give_clean_errors(cut, junk):
    decode_or_fail_cleanly(ORIGINAL[:cut] + junk)
    decode_or_fail_cleanly(ORIGINAL[:cut] + junk + ORIGINAL[cut:])


HEADER_FIELDS = [(16 + off, fmt) for off, fmt in
                 [(4, "<I"), (8, "<Q"), (16, "<I"), (20, "<I"), (32, "<I"), (36, "<I"), (40, "<Q"),
                  (56, "<Q")]]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(HEADER_FIELDS), st.integers(0, 2 ** 32 - 1))
def test_random_entry_header_values_give_clean_errors(field, value):
    offset, fmt = field
    decode_or_fail_cleanly(mutated(offset, fmt, value))


UNCOMPRESSED = fixture("params_sm75_zstd.fatbin")


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_random_mutations_inside_an_uncompressed_cubin_give_clean_errors(data):
    cubin = bytearray(cubin_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        cubin[data.draw(st.integers(0, len(cubin) - 1))] = data.draw(st.integers(0, 255))
    decode_or_fail_cleanly(container_bytes(entry_bytes(EntryKind.ELF, 75, bytes(cubin))))


HOST_OBJECT = fixture("params_sm75.obj").read_bytes()


def test_host_object_fixture_is_found_through_its_relocation(tmp_path):
    path = tmp_path / "params.o"
    path.write_bytes(HOST_OBJECT)
    code = find_device_code(path)
    assert code.file_kind == "relocatable"
    (fb,) = code.fatbins
    assert fb.wrapper is code.wrappers[0]
    assert decode_everything(fb) == 16


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(HOST_OBJECT) - 1), st.integers(0, 255)), min_size=1,
                max_size=6))
def test_random_mutations_of_a_host_object_give_clean_errors(tmp_path_factory, changes):
    data = bytearray(HOST_OBJECT)
    for offset, value in changes:
        data[offset] = value
    path = tmp_path_factory.mktemp("mut") / "m.o"
    path.write_bytes(bytes(data))
    try:
        code = find_device_code(path)
        for fb in code.fatbins:
            decode_everything(fb)
    except FatbinError as exc:
        assert str(exc)
