"""Static libraries read by cricket.fatbin.archive: members in order with their names (short and
GNU long ones), symbol tables skipped, damage reported. The archives are made by binutils' ar."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from cricket.fatbin.archive import archive_members, is_archive
from cricket.fatbin.errors import FormatError


@pytest.fixture
def library(tmp_path):
    if not shutil.which("ar"):
        pytest.skip("binutils ar not found")
    files = {"a.o": b"odd", "a_member_with_a_long_name.o": b"even", "b.o": b"\x7fELF" + bytes(9)}
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)
    out = tmp_path / "libx.a"
    subprocess.run(["ar", "rcs", str(out), *files], cwd=tmp_path, check=True)
    return out, files


def test_members_come_back_in_order_with_their_names(library):
    path, files = library
    data = path.read_bytes()
    assert is_archive(data)
    assert archive_members(data, "libx.a") == list(files.items())


def test_truncated_or_foreign_data_is_an_error(library):
    path, _ = library
    data = path.read_bytes()
    with pytest.raises(FormatError, match="truncated"):
        archive_members(data[:-3], "libx.a")
    with pytest.raises(FormatError, match="not an ar archive"):
        archive_members(b"\x7fELF", "x.o")
