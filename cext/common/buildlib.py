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
from collections.abc import Callable
from pathlib import Path


def default_cuda_include() -> Path:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return Path(home) / "include"


def compile_into(cmd: list[str], tmp: Path, target: Path, verbose: bool) -> None:
    """Run the compiler command ``cmd`` (which writes ``tmp``), then move ``tmp`` to ``target``."""
    if verbose:
        print(shlex.join(cmd))
    subprocess.run(cmd, check=True)
    tmp.replace(target)    # atomic: a running test never sees a half-written library


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
    try:
        target = build(args.outdir, args.cuda_include, verbose=args.verbose, gen_dir=args.gen_dir)
    except generation_error as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"build.py: compiler failed with status {exc.returncode}", file=sys.stderr)
        return 1
    print(f"build.py: built {target}")
    return 0
