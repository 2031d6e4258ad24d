"""Repeated measurements: a median with its spread, and how to print one."""
from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    """Repeated runs of one figure, in ``unit`` (seconds, bytes/s, calls/s, ...)."""

    values: tuple[float, ...]
    unit: str

    @classmethod
    def of(cls, values: Iterable[float], unit: str) -> Sample:
        vals = tuple(float(v) for v in values)
        if not vals:
            raise ValueError("a sample needs at least one run")
        return cls(vals, unit)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def lo(self) -> float:
        return min(self.values)

    @property
    def hi(self) -> float:
        return max(self.values)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0.05 means the runs lie within 5 % of the median."""
        m = self.median
        return (self.hi - self.lo) / m if m else 0.0

    def __str__(self) -> str:
        return fmt(self)


def repeat(fn: Callable[[], float], runs: int, unit: str) -> Sample:
    """Call ``fn`` ``runs`` times; each call returns one measurement."""
    return Sample.of((fn() for _ in range(runs)), unit)


# Units a figure can be printed in: the raw unit, then scaled forms from large to small.
_SCALES = {
    "s": [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")],
    "B/s": [(1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")],
    "/s": [(1e9, "G/s"), (1e6, "M/s"), (1e3, "k/s"), (1.0, "/s")],
    "B": [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"), (1, "B")],
}


def scale(value: float, unit: str) -> tuple[float, str]:
    """The factor and the unit name that print ``value`` with 1 to 3 digits before the point."""
    for factor, name in _SCALES.get(unit, [(1.0, unit)]):
        if abs(value) >= factor * 0.9995:
            return factor, name
    factor, name = _SCALES.get(unit, [(1.0, unit)])[-1]
    return factor, name


def _num(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt(s: Sample) -> str:
    """``12.3 µs (11.9–13.0, n=5)``: the median, then the range of the runs."""
    factor, name = scale(s.median, s.unit)
    text = f"{_num(s.median / factor)} {name}"
    if len(s.values) > 1:
        text += f" ({_num(s.lo / factor)}–{_num(s.hi / factor)}, n={len(s.values)})"
    return text


def size_label(nbytes: int) -> str:
    """4 B, 16 KiB, 16 MiB."""
    factor, name = scale(nbytes, "B")
    v = nbytes / factor
    return f"{v:.0f} {name}" if v == int(v) else f"{v:.1f} {name}"
