"""How much each bench measures: the full run, ``--quick``, and the tiny set the tests use."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20


@dataclass(frozen=True)
class Config:
    """``repeat`` runs of every figure (median and range reported); ``scale`` shrinks call counts."""

    quick: bool = False
    tiny: bool = False            # CRICKET_BENCH_TINY=1: the smallest set that still fills every table
    work: Path | None = None      # where benches build what they run (`cricket bench`: under --out)

    def build_dir(self, name: str) -> Path:
        """The folder for one bench's build products (the checkout's build/ when run alone)."""
        return (self.work or Path(__file__).resolve().parent.parent / "build") / name

    @property
    def repeat(self) -> int:
        return 2 if self.tiny else 3 if self.quick else 5

    @property
    def payload_sizes(self) -> list[int]:
        """Round-trip payloads, 4 B to 16 MiB."""
        if self.tiny:
            return [4, 4096, 65536]
        if self.quick:
            return [4, 64, 1024, 16384, 262144, 4 * MIB, 16 * MIB]
        return [4 << (2 * k) for k in range(12)]          # 4 B, 16 B, ... 16 MiB

    @property
    def copy_sizes(self) -> list[int]:
        if self.tiny:
            return [4096, 1 * MIB]
        if self.quick:
            return [4096, 65536, 1 * MIB, 16 * MIB]
        return [4096, 16384, 65536, 262144, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB]

    def calls_for(self, size: int, *, most: int | None = None) -> int:
        """Calls per timed run at one payload size: many small ones, a few large ones."""
        most = most or (50 if self.tiny else 300 if self.quick else 2000)
        budget = (4 if self.tiny else 48 if self.quick else 256) * MIB
        return max(3, min(most, budget // max(size, 1)))


def from_env(quick: bool, work: Path | None = None) -> Config:
    return Config(quick=quick or _tiny(), tiny=_tiny(), work=work)


def _tiny() -> bool:
    return os.environ.get("CRICKET_BENCH_TINY", "") not in ("", "0")
