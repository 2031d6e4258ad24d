"""Reading cricket's settings: on/off flags, byte sizes and polling windows, as the environment
variables and specs in the README write them."""
from __future__ import annotations

import logging
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


MAX_POLL_US = 10_000.0


def poll_us(name: str, default: float) -> tuple[float, str]:
    """A polling window in microseconds from the variable ``name``: ``default`` when unset, bounded
    to 0 .. 10 ms. Returns (value, complaint): the complaint says why a value that is not a number
    was replaced by the default ("" when none), for the caller to log or print."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default, ""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value:          # not a number, or NaN
        return default, f"{name}={text!r} is not a number of microseconds; using {default:g}"
    return min(max(value, 0.0), MAX_POLL_US), ""


def count(name: str, default: int, most: int | None = None) -> int:
    """A count from ``$name`` (``default`` when unset or not a number), between 0 and ``most``."""
    text = os.environ.get(name, "").strip()
    try:
        value = int(text) if text else default
    except ValueError:
        logging.getLogger(__name__).warning("%s=%r is not a number; using %d", name, text, default)
        value = default
    return max(0, min(value, most) if most is not None else value)
