"""Build the libcudart.so.13 shim: ``python cext/preload/build.py OUTDIR``.

Writes ``OUTDIR/libcricket-cudart.so`` (SONAME ``libcudart.so.13``, every export in the
``libcudart.so.13`` version node, no libpython dependency). The file name deliberately does not
contain ``libcudart.so``: PyTorch loads NVIDIA's real runtime by path when it sees a mapped file
of that name. The generated sources (stubs, prototypes, version script) go to ``OUTDIR/gen``
(or ``--gen-dir``).

Needs a C compiler (``CC``, default ``cc``) and the CUDA 13 headers (``--cuda-include``, default
``$CUDA_HOME/include`` or ``/usr/local/cuda/include``). With ``--optional`` a missing toolkit is
reported and skipped (exit 0) instead of failing, for package builds on machines without CUDA.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "common")]     # gen_stubs, and buildlib (shared)
import buildlib  # noqa: E402
import gen_stubs  # noqa: E402

default_cuda_include = buildlib.default_cuda_include

SHIM_NAME = "libcricket-cudart.so"
SONAME = "libcudart.so.13"
SOURCES = ("shim.c", "forward.c", "forward_runtime.c", "forward_devices.c", "forward_libraries.c", "driver_link.c", "capture.c",
           "graphs.c", "client_finished.c", "primary_context.c", "forward_memory.c")


def build(outdir: Path, cuda_include: Path, cc: str | None = None, verbose: bool = False,
          gen_dir: Path | None = None) -> Path:
    """Generate the stubs and compile the shim, unless it is up to date; returns the path of the shared library."""
    gen = gen_dir or outdir / "gen"
    target = outdir / SHIM_NAME
    compiler = shlex.split(cc or os.environ.get("CC", "cc"))
    tmp = outdir / (SHIM_NAME + ".tmp")
    cmd = [*compiler, "-shared", "-fPIC", *buildlib.optimisation_flags(), "-std=gnu11", "-Wall", "-Wextra",
           "-Wno-unused-parameter", "-Werror=implicit-function-declaration", "-fvisibility=hidden",
           "-pthread", f"-I{HERE}", f"-I{HERE.parent / 'common'}", f"-I{gen}", f"-I{cuda_include}",
           *[str(HERE / s) for s in SOURCES], str(HERE.parent / "common" / "bootstrap.c"), str(HERE.parent / "common" / "log.c"), str(gen / "stubs.c"),
           "-o", str(tmp), f"-Wl,-soname,{SONAME}", f"-Wl,--version-script={gen / 'libcudart13.map'}",
           "-Wl,-z,now", "-ldl"]
    stamp = gen / "build.cmd"
    if buildlib.up_to_date(target, stamp, cmd, buildlib.inputs(HERE, cuda_include)):
        return target
    outdir.mkdir(parents=True, exist_ok=True)
    gen_stubs.generate(gen, cuda_include)
    buildlib.compile_into(cmd, tmp, target, verbose, stamp)
    return target


def main(argv: list[str] | None = None) -> int:
    return buildlib.main(argv, description="Build the cricket libcudart.so.13 shim.",
                         what="the libcudart shim",
                         header="cuda_runtime_api.h", build=build, generation_error=gen_stubs.GenerationError)


if __name__ == "__main__":
    sys.exit(main())
