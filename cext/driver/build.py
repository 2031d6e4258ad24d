"""Build the libcuda.so.1 replacement: ``python cext/driver/build.py OUTDIR``.

Writes ``OUTDIR/libcricket-cuda.so`` (SONAME ``libcuda.so.1``, every ``cu*`` function of the
CUDA 13 ``cuda.h`` exported unversioned, as NVIDIA's driver does; no libpython dependency) and a
link ``OUTDIR/libcuda.so.1`` to it, so ``LD_LIBRARY_PATH=OUTDIR`` puts it in front of a program.
The generated sources go to ``OUTDIR/gen`` (or ``--gen-dir``).

Needs a C compiler (``CC``, default ``cc``) and the CUDA 13 headers (``--cuda-include``, default
``$CUDA_HOME/include`` or ``/usr/local/cuda/include``). With ``--optional`` a missing toolkit or
compiler is reported and skipped (exit 0) instead of failing.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_driver  # noqa: E402

LIBRARY_NAME = "libcricket-cuda.so"
SONAME = "libcuda.so.1"
SOURCES = ("log.c", "devices.c", "contexts.c", "export_tables.c", "procaddr.c", "md2.c", "forward.c")
COMMON_SOURCES = ("bootstrap.c",)   # in cext/common
GENERATED = ("driver_stubs.c", "proc_table.c", "error_strings.c")


def default_cuda_include() -> Path:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return Path(home) / "include"


def build(outdir: Path, cuda_include: Path, cc: str | None = None, verbose: bool = False,
          gen_dir: Path | None = None) -> Path:
    """Generate the entry points and compile the library; returns its path."""
    compiler = cc or os.environ.get("CC", "cc")
    gen = gen_dir or outdir / "gen"
    outdir.mkdir(parents=True, exist_ok=True)
    counts = gen_driver.generate(gen, cuda_include, compiler, [HERE / s for s in SOURCES])
    if verbose:
        print("gen_driver: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    target = outdir / LIBRARY_NAME
    tmp = outdir / (LIBRARY_NAME + ".tmp")
    cmd = [*shlex.split(compiler), "-shared", "-fPIC", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra",
           "-Wno-unused-parameter", "-Werror=implicit-function-declaration",
           "-Werror=incompatible-pointer-types", "-fvisibility=hidden", "-pthread",
           f"-I{HERE}", f"-I{HERE.parent / 'common'}", f"-I{gen}", f"-I{cuda_include}",
           *[str(HERE / s) for s in SOURCES], *[str(HERE.parent / "common" / s) for s in COMMON_SOURCES],
           *[str(gen / s) for s in GENERATED], "-ldl",
           "-o", str(tmp), f"-Wl,-soname,{SONAME}", "-Wl,-z,now", "-Wl,--no-undefined"]
    if verbose:
        print(shlex.join(cmd))
    subprocess.run(cmd, check=True)
    tmp.replace(target)    # atomic: a running test never sees a half-written library
    link = outdir / SONAME
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(LIBRARY_NAME)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the cricket libcuda.so.1 replacement.")
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--cuda-include", type=Path, default=default_cuda_include())
    parser.add_argument("--optional", action="store_true",
                        help="skip with a message (exit 0) when the CUDA headers or a compiler are missing")
    parser.add_argument("--gen-dir", type=Path, help="where the generated sources go (default OUTDIR/gen)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    compiler = shlex.split(os.environ.get("CC", "cc"))[0]
    missing = [what for what, ok in ((f"CUDA headers in {args.cuda_include}",
                                      (args.cuda_include / "cudaTypedefs.h").exists()),
                                     (f"C compiler {compiler!r}", shutil.which(compiler) is not None)) if not ok]
    if missing:
        msg = f"build.py: cannot build the libcuda replacement: no {' and no '.join(missing)}"
        print(msg + ("; skipped" if args.optional else ""), file=sys.stderr)
        return 0 if args.optional else 1
    try:
        target = build(args.outdir, args.cuda_include, verbose=args.verbose, gen_dir=args.gen_dir)
    except gen_driver.GenerationError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"build.py: compiler failed with status {exc.returncode}", file=sys.stderr)
        return 1
    print(f"build.py: built {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
