"""Settings as the README writes them: on/off flags and byte sizes (cricket._env)."""
from __future__ import annotations

import pytest

from cricket._env import flag, parse_size


@pytest.mark.parametrize("value, on", [(None, True), ("1", True), ("yes", True), ("0", False),
                                       ("no", False), (" Off ", False), ("FALSE", False)])
def test_flags_are_on_unless_turned_off(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv("CRICKET_TEST_FLAG", raising=False)
    else:
        monkeypatch.setenv("CRICKET_TEST_FLAG", value)
    assert flag("CRICKET_TEST_FLAG") is on


@pytest.mark.parametrize("text, size", [("4096", 4096), ("0x1000", 4096), ("64K", 65536), ("2m", 2 << 20),
                                        ("1.5G", 3 << 29), ("32MiB", 32 << 20), ("8KB", 8192)])
def test_sizes_take_suffixes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "12Q", "-4K"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError):
        parse_size(text)
