"""Build the example CUDA programs with ``nvcc -cudart shared``: ``python examples/build.py [OUTDIR]``.

Default OUTDIR is ``build/examples``. A program whose output is newer than its sources is kept.
``--cudart static`` builds them with nvcc's default, NVIDIA's static cudart, which reaches cricket
through its ``libcuda.so.1`` (default OUTDIR then ``build/examples-static``). The object files are
compiled once into ``examples-obj`` beside OUTDIR and linked with either cudart (the compile is
nine tenths of nvcc's time).
Each program prints PASS or FAIL and exits with status 0 or 1; run one through cricket with
``cricket run -- build/examples/vector_add``. Driver-API programs link with ``-lcuda``: the
package's ``libcuda.so.1`` (``cricket/_driver``, built by ``make build``), which ``cricket run``
puts in front at run time; the PTX they link at run time is built beside them.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVER_DIR = HERE.parent / "cricket" / "_driver"     # the libcuda.so.1 replacement (make build)
PTX_ARCH = "sm_75"                                   # runs on the emulated device and JITs on newer GPUs


@dataclass(frozen=True)
class Example:
    name: str                          # the output file in OUTDIR
    sources: tuple[str, ...]
    flags: tuple[str, ...] = ()
    shared: bool = False               # a shared library (lib<name>.so)
    needs: tuple[str, ...] = field(default=())   # other examples it loads at run time
    driver: bool = False               # a driver-API program: links with -lcuda
    ptx: tuple[str, ...] = ()          # sources built (-rdc=true) into <stem>.ptx beside the program

    @property
    def output(self) -> str:
        return f"lib{self.name}.so" if self.shared else self.name


EXAMPLES = (
    Example("vector_add", ("vector_add.cu",)),
    Example("device_info", ("device_info.cu",)),
    Example("matmul_tiled", ("matmul_tiled.cu",)),
    Example("reduction", ("reduction.cu",)),
    Example("streams_events", ("streams_events.cu",)),
    Example("symbols", ("symbols.cu",)),
    Example("struct_by_value", ("struct_by_value.cu",)),
    Example("templates", ("templates.cu",)),
    Example("printf_kernel", ("printf_kernel.cu",)),
    Example("launch_kernel", ("launch_kernel.cu",)),
    Example("memory", ("memory.cu",)),
    Example("error_paths", ("error_paths.cu",)),
    Example("kernel_lib", ("kernel_lib.cu",), shared=True),
    Example("dlopen_host", ("dlopen_host.cu",), ("-ldl",), needs=("kernel_lib",)),
    Example("two_tu", ("two_tu_main.cu", "two_tu_kernels.cu")),
    Example("rdc", ("two_tu_main.cu", "two_tu_kernels.cu"), ("-rdc=true", "-DUSE_RDC")),
    Example("threads", ("threads.cu",), ("-Xcompiler", "-pthread")),
    Example("fork_child", ("fork_child.cu",)),
    Example("long_running", ("long_running.cu",)),
    Example("empty_kernel", ("empty_kernel.cu",)),
    Example("driver_contexts", ("driver_contexts.cu",), driver=True),
    Example("jit_link", ("jit_link.cu",), driver=True, ptx=("jit_link_kernel.cu", "jit_link_device.cu")),
    Example("mapped_memory", ("mapped_memory.cu",)),
    Example("device_query", ("device_query.cu",), ("-ldl",)),
    Example("warp_reduce", ("warp_reduce.cu",)),
    Example("shared_memory_config", ("shared_memory_config.cu",)),
    Example("wmma_gemm", ("wmma_gemm.cu",), ("-arch=sm_80",)),
    Example("mma_ldmatrix", ("mma_ldmatrix.cu",), ("-arch=sm_80",)),
    Example("recursion", ("recursion.cu",)),
    Example("function_pointers", ("function_pointers.cu",)),
    Example("device_malloc", ("device_malloc.cu",)),
    Example("texture_2d", ("texture_2d.cu",)),
    Example("surface_rw", ("surface_rw.cu",)),
    Example("texture_layered_3d", ("texture_layered_3d.cu",)),
    Example("texture_driver", ("texture_driver.cu",), driver=True),
    Example("tma_tile", ("tma_tile.cu",), ("-arch=sm_90",)),
    Example("dynamic_parallelism", ("dynamic_parallelism.cu",), ("-rdc=true", "-lcudadevrt")),
    Example("graphs", ("graphs.cu",)),
    Example("host_callbacks", ("host_callbacks.cu",)),
    Example("multi_device", ("multi_device.cu",)),
    Example("peer_access", ("peer_access.cu",)),
    Example("cooperative_groups", ("cooperative_groups.cu",)),
    Example("libraries", ("libraries.cu",), ptx=("library_kernels.cu",)),
    Example("rdc_static", ("rdc_static_main.cu", "rdc_static_a.cu", "rdc_static_b.cu"), ("-rdc=true",)),
    Example("runtime_primary_context", ("runtime_primary_context.cu",), ("-Xcompiler", "-pthread"), driver=True),
)
EXAMPLES += (Example("stream_ordered_memory", ("stream_ordered_memory.cu",)),
             Example("managed_memory", ("managed_memory.cu",)),
             Example("ipc_memory", ("ipc_memory.cu",)),
             Example("vmm_growable", ("vmm_growable.cu",), driver=True),
             Example("split_vector_add", ("split_vector_add.cu",)))
BY_NAME = {e.name: e for e in EXAMPLES}


class BuildError(RuntimeError):
    """nvcc failed on an example; the message holds its output."""


CUDARTS = ("shared", "static")


def object_dir(example: Example, outdir: Path) -> Path:
    """Where ``example``'s object files are kept: shared by its builds with either cudart."""
    return outdir.parent / "examples-obj" / example.name


def objects(example: Example, outdir: Path) -> list[Path]:
    return [object_dir(example, outdir) / (Path(s).stem + ".o") for s in example.sources]


def compile_command(example: Example, source: str, obj: Path, nvcc: str = "nvcc") -> list[str]:
    """One source of ``example`` into ``obj`` (its flags without the libraries, which are the link's)."""
    flags = [f for f in example.flags if not f.startswith("-l")]
    pic = ["-Xcompiler", "-fPIC"] if example.shared else []
    return [nvcc, "-O2", "-c", *pic, "-o", str(obj), str(HERE / source), *flags]


def command(example: Example, outdir: Path, nvcc: str = "nvcc", cudart: str = "shared") -> list[str]:
    """The link of ``example``'s objects with ``cudart``."""
    if cudart not in CUDARTS:
        raise BuildError(f"unknown cudart {cudart!r}: choose one of {', '.join(CUDARTS)}")
    cmd = [nvcc, "-cudart", cudart, "-O2", "-o", str(outdir / example.output)]
    if example.shared:
        cmd += ["-shared", "-Xcompiler", "-fPIC"]
    if example.driver:
        cmd += [f"-L{DRIVER_DIR}", "-l:libcuda.so.1"]
    return cmd + [str(o) for o in objects(example, outdir)] + list(example.flags)


def ptx_command(source: str, outdir: Path, nvcc: str = "nvcc") -> list[str]:
    """``source`` as relocatable PTX (its extern device functions left for the JIT linker)."""
    return [nvcc, "-rdc=true", "-ptx", f"-arch={PTX_ARCH}", "-o", str(outdir / (Path(source).stem + ".ptx")),
            str(HERE / source)]


HEADERS = ("check.h", "driver_check.h", "bench_timing.h", "registration.h", "wmma_gemm.cuh",
           "mma_ldmatrix.cuh", "rdc_static_tu.cuh")    # what examples include: a change rebuilds them all


def newer_than_sources(example: Example, outputs: list[Path]) -> bool:
    if not all(o.exists() for o in outputs):
        return False
    newest = max((HERE / s).stat().st_mtime for s in (*example.sources, *example.ptx, *HEADERS))
    return min(o.stat().st_mtime for o in outputs) >= newest


def up_to_date(example: Example, outdir: Path) -> bool:
    out = outdir / example.output
    return newer_than_sources(example, [out, *(outdir / (Path(s).stem + ".ptx") for s in example.ptx)])


def _run(cmd: list[str], example: Example) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"nvcc failed on {example.name}:\n{res.stdout}{res.stderr}")


def compile_objects(example: Example, outdir: Path, nvcc: str = "nvcc") -> None:
    """Compile what is out of date; each object is written under another name and moved in place,
    so a build with the other cudart running at the same time links whole objects only."""
    objs = objects(example, outdir)
    if newer_than_sources(example, objs):
        return
    objs[0].parent.mkdir(parents=True, exist_ok=True)
    for source, obj in zip(example.sources, objs):
        part = obj.with_name(f"{obj.name}.{os.getpid()}.part")
        _run(compile_command(example, source, part, nvcc), example)
        os.replace(part, obj)


def build_one(example: Example, outdir: Path, nvcc: str = "nvcc", cudart: str = "shared") -> Path:
    out = outdir / example.output
    if up_to_date(example, outdir):
        return out
    if example.driver and not (DRIVER_DIR / "libcuda.so.1").exists():
        raise BuildError(f"{example.name} links with the libcuda.so.1 replacement, which is not built in "
                         f"{DRIVER_DIR}: run make build")
    if cudart not in CUDARTS:
        raise BuildError(f"unknown cudart {cudart!r}: choose one of {', '.join(CUDARTS)}")
    for cmd in (ptx_command(s, outdir, nvcc) for s in example.ptx):
        _run(cmd, example)
    compile_objects(example, outdir, nvcc)
    _run(command(example, outdir, nvcc, cudart), example)
    return out


def build(names: list[str] | None = None, outdir: Path = Path("build/examples"), jobs: int = 2,
          nvcc: str = "nvcc", cudart: str = "shared") -> dict[str, Path]:
    """Build the named examples (default all) and what they load; returns name -> path. Keep
    programs built with different ``cudart`` in different ``outdir``s."""
    if shutil.which(nvcc) is None:
        raise BuildError(f"{nvcc} not found: install the CUDA 13 toolkit to build the examples")
    wanted: list[Example] = []
    for name in names or [e.name for e in EXAMPLES]:
        if name not in BY_NAME:
            raise BuildError(f"no example named {name!r}; the examples are {', '.join(BY_NAME)}")
        for dep in (*BY_NAME[name].needs, name):
            if BY_NAME[dep] not in wanted:
                wanted.append(BY_NAME[dep])
    outdir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        paths = list(pool.map(lambda e: build_one(e, outdir, nvcc, cudart), wanted))
    return {e.name: p for e, p in zip(wanted, paths)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", type=Path)
    parser.add_argument("--cudart", choices=CUDARTS, default="shared",
                        help="shared (default: the cricket shim can stand in for it) or static "
                             "(nvcc's default; reaches cricket through its libcuda.so.1)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="build only these examples")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    try:
        outdir = args.outdir or Path("build/examples" if args.cudart == "shared" else "build/examples-static")
        built = build(args.only, outdir, args.jobs, cudart=args.cudart)
    except BuildError as exc:
        print(f"examples/build.py: {exc}", file=sys.stderr)
        return 1
    for name, path in built.items():
        print(f"built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
