"""What the two native build scripts share (``cext/driver/build.py`` for the libcuda.so.1
replacement, ``cext/preload/build.py`` for the libcudart.so.13 shim): the default CUDA include
folder, running the compiler into a temporary file that replaces the library atomically, and the
command line. Each script puts ``cext/common`` on ``sys.path`` and imports it (no package needed).
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path


def default_cuda_include() -> Path:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return Path(home) / "include"


def optimisation_flags() -> list[str]:
    """-O2, and debug information only with ``CRICKET_DEBUG_BUILD=1`` (as setup.py does)."""
    debug = os.environ.get("CRICKET_DEBUG_BUILD", "").strip().lower() not in ("", "0", "no", "false")
    return ["-O2", "-g"] if debug else ["-O2"]


def inputs(source_dir: Path, cuda_include: Path) -> list[Path]:
    """What a library is built from: the sources and generators of ``source_dir`` and of
    ``cext/common``, and the CUDA headers the generators read."""
    files = [p for d in (source_dir, Path(__file__).resolve().parent) for p in d.iterdir()
             if p.suffix in (".c", ".h", ".py", ".txt")]
    return files + [cuda_include / h for h in ("cuda.h", "cuda_runtime_api.h", "cudaTypedefs.h")]


def up_to_date(target: Path, stamp: Path, cmd: list[str], sources: Iterable[Path]) -> bool:
    """True when ``target`` was built by this very ``cmd`` (recorded in ``stamp`` by
    :func:`compile_into`) and is newer than each of ``sources``: then the build is skipped."""
    try:
        if stamp.read_text() != shlex.join(cmd):
            return False
        built = target.stat().st_mtime
        return all(p.stat().st_mtime <= built for p in sources if p.exists())
    except OSError:
        return False


def compile_into(cmd: list[str], tmp: Path, target: Path, verbose: bool, stamp: Path | None = None) -> None:
    """Run the compiler command ``cmd`` (which writes ``tmp``), then move ``tmp`` to ``target``;
    record ``cmd`` in ``stamp`` for :func:`up_to_date`."""
    if verbose:
        print(shlex.join(cmd))
    subprocess.run(cmd, check=True)
    tmp.replace(target)    # atomic: a running test never sees a half-written library
    if stamp is not None:
        stamp.write_text(shlex.join(cmd))


def main(argv: list[str] | None, *, description: str, what: str, header: str,
         build: Callable[..., Path], generation_error: type[Exception]) -> int:
    """The command line of a build script: ``OUTDIR [--cuda-include DIR] [--optional]
    [--gen-dir DIR] [-v]``; ``what`` names the library in messages, ``header`` is the CUDA header
    whose presence shows the toolkit is there."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--cuda-include", type=Path, default=default_cuda_include())
    parser.add_argument("--optional", action="store_true",
                        help="skip with a message (exit 0) when the CUDA headers or a compiler are missing")
    parser.add_argument("--gen-dir", type=Path, help="where the generated sources go (default OUTDIR/gen)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    compiler = shlex.split(os.environ.get("CC", "cc"))[0]
    missing = [what_ for what_, ok in ((f"CUDA headers in {args.cuda_include}",
                                        (args.cuda_include / header).exists()),
                                       (f"C compiler {compiler!r}", shutil.which(compiler) is not None)) if not ok]
    if missing:
        msg = f"build.py: cannot build {what}: no {' and no '.join(missing)}"
        print(msg + ("; skipped" if args.optional else ""), file=sys.stderr)
        return 0 if args.optional else 1
    started = time.time()
    try:
        target = build(args.outdir, args.cuda_include, verbose=args.verbose, gen_dir=args.gen_dir)
    except generation_error as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"build.py: compiler failed with status {exc.returncode}", file=sys.stderr)
        return 1
    print(f"build.py: {target} is up to date" if target.stat().st_mtime < started else f"build.py: built {target}")
    return 0
