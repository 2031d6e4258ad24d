"""Reading cricket's settings: on/off flags and byte sizes, as the environment variables and
specs in the README write them."""
from __future__ import annotations

import os

_OFF = ("0", "no", "off", "false")
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def flag(name: str) -> bool:
    """A setting that is on unless the variable ``name`` says 0/no/off/false."""
    return os.environ.get(name, "1").strip().lower() not in _OFF


def parse_size(text: str) -> int:
    """Bytes from ``4096``, ``0x1000``, ``64K``, ``2M``, ``1.5G`` or ``32MiB``; ValueError otherwise."""
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = _UNITS.get(text[-1:], 1)
    number = text[:-1] if scale > 1 else text
    value = int(number, 0) if scale == 1 else int(float(number) * scale)
    if value < 0:
        raise ValueError(f"a size cannot be negative: {text!r}")
    return value
