"""Managed memory round trips against explicit copies, through the cricket shim on a real server.

    python bench/managed_memory.py [--mib N] [--rounds N] [--backend NAME]

``bench/managed_memory.cu`` (nvcc -cudart shared) runs through ``cricket run``: each round the
host changes a buffer, a kernel adds one to an element of each page, the host reads it. Explicit copies move
the whole buffer both ways; managed memory (cricket.client.managed) pushes only the pages the host
changed and pulls the whole buffer back after the synchronisation. Two shapes of host change: every
element ("all"), and one element of every 64th page ("sparse"). Prints a Markdown table: what,
ours (managed), reference (explicit), ratio, goal.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(out: Path) -> Path:
    exe = out / "managed_memory"
    subprocess.run(["nvcc", "-cudart", "shared", "-O2", "-o", str(exe), str(ROOT / "bench" / "managed_memory.cu")],
                   check=True, capture_output=True)
    return exe


def run(exe: Path, mib: int, rounds: int, backend: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", backend, "--", str(exe),
                           str(mib), str(rounds)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    if proc.returncode:
        raise SystemExit(f"managed_memory failed:\n{proc.stdout}{proc.stderr}")
    return {name: float(value) for name, value in (line.split() for line in proc.stdout.splitlines())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--backend", default="emu")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        times = run(build(Path(tmp)), args.mib, args.rounds, args.backend)
    print(f"Managed memory round trip, {args.mib} MiB buffer, {args.backend} backend (ms per round)\n")
    print("| what | ours: managed | reference: explicit copies | ratio | goal |")
    print("| --- | ---: | ---: | ---: | --- |")
    for shape, goal in (("all", "≤ 1.5 (same bytes moved, plus a page compare)"),
                        ("sparse", "< 1 (only changed pages go out)")):
        ours, ref = times[f"managed_{shape}"] / 1e3, times[f"explicit_{shape}"] / 1e3
        print(f"| host changes {shape} | {ours:.1f} | {ref:.1f} | {ours / ref:.2f} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
