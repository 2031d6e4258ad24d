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

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_stubs  # noqa: E402

SHIM_NAME = "libcricket-cudart.so"
SONAME = "libcudart.so.13"
SOURCES = ("shim.c", "forward.c", "forward_runtime.c")


def default_cuda_include() -> Path:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return Path(home) / "include"


def build(outdir: Path, cuda_include: Path, cc: str | None = None, verbose: bool = False,
          gen_dir: Path | None = None) -> Path:
    """Generate the stubs and compile the shim; returns the path of the shared library."""
    gen = gen_dir or outdir / "gen"
    outdir.mkdir(parents=True, exist_ok=True)
    gen_stubs.generate(gen, cuda_include)
    target = outdir / SHIM_NAME
    compiler = shlex.split(cc or os.environ.get("CC", "cc"))
    tmp = outdir / (SHIM_NAME + ".tmp")
    cmd = [*compiler, "-shared", "-fPIC", "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra",
           "-Wno-unused-parameter", "-Werror=implicit-function-declaration", "-fvisibility=hidden",
           "-pthread", f"-I{HERE}", f"-I{HERE.parent / 'common'}", f"-I{gen}", f"-I{cuda_include}",
           *[str(HERE / s) for s in SOURCES], str(HERE.parent / "common" / "bootstrap.c"), str(gen / "stubs.c"),
           "-o", str(tmp), f"-Wl,-soname,{SONAME}", f"-Wl,--version-script={gen / 'libcudart13.map'}",
           "-Wl,-z,now", "-ldl"]
    if verbose:
        print(shlex.join(cmd))
    subprocess.run(cmd, check=True)
    tmp.replace(target)    # atomic: a running test never sees a half-written library
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the cricket libcudart.so.13 shim.")
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--cuda-include", type=Path, default=default_cuda_include())
    parser.add_argument("--optional", action="store_true",
                        help="skip with a message (exit 0) when the CUDA headers or a compiler are missing")
    parser.add_argument("--gen-dir", type=Path, help="where the generated sources go (default OUTDIR/gen)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    compiler = shlex.split(os.environ.get("CC", "cc"))[0]
    missing = [what for what, ok in ((f"CUDA headers in {args.cuda_include}",
                                      (args.cuda_include / "cuda_runtime_api.h").exists()),
                                     (f"C compiler {compiler!r}", shutil.which(compiler) is not None)) if not ok]
    if missing:
        msg = f"build.py: cannot build the libcudart shim: no {' and no '.join(missing)}"
        print(msg + ("; skipped" if args.optional else ""), file=sys.stderr)
        return 0 if args.optional else 1
    try:
        target = build(args.outdir, args.cuda_include, verbose=args.verbose, gen_dir=args.gen_dir)
    except gen_stubs.GenerationError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"build.py: compiler failed with status {exc.returncode}", file=sys.stderr)
        return 1
    print(f"build.py: built {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
