"""What the benches of nvcc-built programs share: the program built once per source change, and
one run of it through ``cricket run`` against a real server, its ``NAME VALUE`` output lines."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .config import Config, from_env
from .report import BenchResult
from .servers import CricketServer

ROOT = Path(__file__).resolve().parent.parent


def program(name: str, workdir: Path) -> Path:
    """``bench/NAME.cu`` built by nvcc (``-cudart shared``) into ``workdir``, unless the build there is
    newer than its source."""
    exe = workdir / name
    source = ROOT / "bench" / f"{name}.cu"
    if exe.exists() and exe.stat().st_mtime > source.stat().st_mtime:
        return exe
    workdir.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["nvcc", "-O2", "-cudart", "shared", "-o", str(exe), str(source)],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"nvcc failed on bench/{name}.cu:\n{r.stderr[-1500:]}")
    return exe


def figures(exe: Path, server: CricketServer | str, *args: str,
            env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``exe`` through ``cricket run`` on ``server`` (or an address: several, ``a,b``), in this
    environment less its ``CRICKET_`` variables, plus ``env``; the figures it prints, one
    ``NAME VALUE`` a line."""
    address = server if isinstance(server, str) else server.address
    full = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_")}
    full.update(env or {})
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), full.get("PYTHONPATH", "")) if p)
    r = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", address, "--", str(exe), *args],
                       capture_output=True, text=True, env=full, timeout=600)
    if r.returncode:
        raise RuntimeError(f"{exe.name} failed:\n{r.stdout}\n{r.stderr[-1500:]}")
    out = {}
    for words in (line.split() for line in r.stdout.splitlines()):
        if len(words) == 2:
            try:
                out[words[0]] = float(words[1])
            except ValueError:
                pass
    return out


def runs(cfg: Config, progress: Callable[[str], None], res: BenchResult, name: str,
         *args: str) -> list[dict[str, float]] | None:
    """``bench/NAME.cu`` built and run ``cfg.repeat`` times (each its own process) on one fresh emu
    server: the figures of each run, all in seconds (the program prints microseconds). None, with
    ``res`` marked skipped, where nvcc is missing."""
    if not shutil.which("nvcc"):
        res.skipped = f"needs nvcc (CUDA 13) to build bench/{name}.cu"
        return None
    server = CricketServer("emu")
    try:
        progress(f"nvcc builds bench/{name}.cu")
        exe = program(name, cfg.build_dir(f"bench_{res.name}"))
        out = []
        for r in range(cfg.repeat):
            progress(f"run {r + 1}/{cfg.repeat}")
            out.append({k: v * 1e-6 for k, v in figures(exe, server, *args).items()})
        return out
    finally:
        server.stop()


def main(measure: Callable[[Config, Callable[[str], None]], BenchResult], doc: str) -> None:
    """A bench module's command line: ``python -m bench.NAME [--quick]`` prints its table."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(measure(from_env(quick=args.quick), lambda msg: print(msg, file=sys.stderr)).markdown())
