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

import os
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "common")]     # gen_driver, and buildlib (shared)
import buildlib  # noqa: E402
import gen_driver  # noqa: E402

default_cuda_include = buildlib.default_cuda_include

LIBRARY_NAME = "libcricket-cuda.so"
SONAME = "libcuda.so.1"
SOURCES = ("log.c", "devices.c", "contexts.c", "export_tables.c", "procaddr.c", "md2.c", "forward.c")
COMMON_SOURCES = ("bootstrap.c", "log.c")   # in cext/common
GENERATED = ("driver_stubs.c", "proc_table.c", "error_strings.c")


def build(outdir: Path, cuda_include: Path, cc: str | None = None, verbose: bool = False,
          gen_dir: Path | None = None) -> Path:
    """Generate the entry points and compile the library, unless it is up to date; returns its path."""
    compiler = cc or os.environ.get("CC", "cc")
    gen = gen_dir or outdir / "gen"
    target = outdir / LIBRARY_NAME
    tmp = outdir / (LIBRARY_NAME + ".tmp")
    cmd = [*shlex.split(compiler), "-shared", "-fPIC", *buildlib.optimisation_flags(), "-std=gnu11", "-Wall", "-Wextra",
           "-Wno-unused-parameter", "-Werror=implicit-function-declaration",
           "-Werror=incompatible-pointer-types", "-fvisibility=hidden", "-pthread",
           f"-I{HERE}", f"-I{HERE.parent / 'common'}", f"-I{gen}", f"-I{cuda_include}",
           *[str(HERE / s) for s in SOURCES], *[str(HERE.parent / "common" / s) for s in COMMON_SOURCES],
           *[str(gen / s) for s in GENERATED], "-ldl",
           "-o", str(tmp), f"-Wl,-soname,{SONAME}", "-Wl,-z,now", "-Wl,--no-undefined"]
    stamp = gen / "build.cmd"
    if buildlib.up_to_date(target, stamp, cmd, buildlib.inputs(HERE, cuda_include)) \
            and (outdir / SONAME).is_symlink():
        return target
    outdir.mkdir(parents=True, exist_ok=True)
    counts = gen_driver.generate(gen, cuda_include, compiler, [HERE / s for s in SOURCES])
    if verbose:
        print("gen_driver: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    buildlib.compile_into(cmd, tmp, target, verbose, stamp)
    link = outdir / SONAME
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(LIBRARY_NAME)
    return target


def main(argv: list[str] | None = None) -> int:
    return buildlib.main(argv, description="Build the cricket libcuda.so.1 replacement.",
                         what="the libcuda replacement",
                         header="cudaTypedefs.h", build=build, generation_error=gen_driver.GenerationError)


if __name__ == "__main__":
    sys.exit(main())
