"""Generate the driver library's entry points from the CUDA 13 headers.

Reads ``cuda.h`` (every function, under its ABI symbol name: the headers are preprocessed with
``__CUDA_API_VERSION_INTERNAL``, which is how NVIDIA's driver sees them) and ``cudaTypedefs.h``
(one ``PFN_<name>_v<version>[_ptds|_ptsz]`` typedef per ABI version of each documented name), the
same pair for the profiler API, and the OpenGL/EGL/VDPAU interop headers, and writes to OUTDIR:

- ``driver_stubs.c``: every declared function that no hand-written source defines (a line
  ``CRICKET_DRV_EXPORT CUresult NAME(``), with the header's prototype; it logs its name once and
  returns ``CUDA_ERROR_NOT_SUPPORTED``;
- ``proc_table.c``: the table ``cuGetProcAddress`` answers from: for each documented name, each of
  its versions with the ABI symbol for the legacy stream and its ``_ptds``/``_ptsz`` twin. The
  k-th version of a name (ascending) is its k-th symbol (``name``, ``name_v2``, ``name_v3``, ...),
  and the file assigns every symbol to a variable of its ``PFN_..._v<version>`` type, so the
  compiler checks that each (name, version, flags) resolves to a function of that version's ABI;
- ``error_strings.c``: the ``CUresult`` names and messages of ``cricket/cudafacts/curesult.py``.

The interop headers need GL/EGL/VDPAU types that are not installed everywhere: their functions are
learnt by preprocessing (with empty stand-ins from ``standin/`` where the system lacks a header)
and defined without prototypes (they only return ``CUDA_ERROR_NOT_SUPPORTED``), so their table
entries are not type-checked.

Run: ``python cext/driver/gen_driver.py OUTDIR [--cuda-include DIR] [--cc CC]``.
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "standin"
# (functions header, typedefs header, compiled with full prototypes)
HEADER_GROUPS = (
    ("cuda.h", "cudaTypedefs.h", True),
    ("cudaProfiler.h", "cudaProfilerTypedefs.h", True),
    ("cudaGL.h", "cudaGLTypedefs.h", False),
    ("cudaEGL.h", "cudaEGLTypedefs.h", False),
    ("cudaVDPAU.h", "cudaVDPAUTypedefs.h", False),
)
HAND_WRITTEN = re.compile(r"^CRICKET_DRV_EXPORT\s+CUresult\s+(\w+)\s*\(", re.M)
# forward.c defines a legacy symbol and its per-thread twin with one macro line.
HAND_WRITTEN_PAIR = re.compile(r"^CRICKET_DRV_EXPORT_PAIR\w*\((\w+),\s*(\w+),", re.M)
# CUDAAPI is empty on Linux; it stays in the text of headers that do not include cuda.h (cudaVDPAU.h).
DECLARATION = re.compile(r"\bCUresult\s+(?:CUDAAPI\s+)?(cu\w+)\s*\(([^;{}]*?)\)\s*;")
PFN = re.compile(r"typedef\s+CUresult\s*\(\s*(?:CUDAAPI\s*)?\*\s*PFN_(cu\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)")


class GenerationError(Exception):
    """The headers do not allow a faithful table; the message names the function."""


@dataclass(frozen=True)
class Version:
    name: str           # documented name, "cuMemcpyHtoD"
    version: int        # 3020
    symbol: str         # "cuMemcpyHtoD_v2"
    per_thread: str     # "cuMemcpyHtoD_v2_ptds" or ""
    pfn: str            # "PFN_cuMemcpyHtoD_v3020"
    per_thread_pfn: str  # "PFN_cuMemcpyHtoD_v7000_ptds" or ""


def preprocess(header: str, cuda_include: Path, cc: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".c") as src:
        src.write(f"#include <{header}>\n")
        src.flush()
        cmd = [*shlex.split(cc), "-E", "-P", "-D__CUDA_API_VERSION_INTERNAL", f"-I{cuda_include}",
               f"-idirafter{STANDIN}", src.name]
        result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise GenerationError(f"preprocessing {header} failed: {result.stderr.strip()}")
    return result.stdout


def declarations(text: str) -> dict[str, str]:
    """ABI symbol -> parameter list, for every CUresult function the header declares."""
    found: dict[str, str] = {}
    for name, params in DECLARATION.findall(text):
        params = " ".join(params.split())
        if found.get(name, params) != params:
            raise GenerationError(f"a CUDA header declares {name} twice with different parameters")
        found[name] = params
    return found


@dataclass(frozen=True)
class Declaration:
    params: str         # the header's parameter list
    typed: bool         # compiled with its prototype (False: interop, defined without one)


def all_declarations(cuda_include: Path, cc: str = "cc") -> tuple[dict[str, Declaration], str]:
    """Every function of the header groups, and the concatenated preprocessed typedef headers."""
    found: dict[str, Declaration] = {}
    typedefs = []
    for header, typedef_header, typed in HEADER_GROUPS:
        for name, params in declarations(preprocess(header, cuda_include, cc)).items():
            if name in found and found[name].params != params:
                raise GenerationError(f"{header} declares {name} differently from an earlier header")
            found.setdefault(name, Declaration(params, typed))
        typedefs.append(preprocess(typedef_header, cuda_include, cc))
    return found, "\n".join(typedefs)


def _symbol_rank(symbol: str, base: str, suffix: str) -> int | None:
    """1 for base, k for base_vk (with the per-thread suffix when given), None if unrelated."""
    rest = symbol[len(base):]
    if suffix:
        if not rest.endswith(suffix):
            return None
        rest = rest[: -len(suffix)]
    if rest == "":
        return 1
    match = re.fullmatch(r"_v(\d+)", rest)
    return int(match.group(1)) if match else None


def proc_versions(typedefs: str, declared) -> list[Version]:
    by_name: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for name, version, suffix in set(PFN.findall(typedefs)):
        by_name[name][suffix].append(int(version))
    versions: list[Version] = []
    for name in sorted(by_name):
        symbols_for: dict[str, list[tuple[int, str]]] = {}
        for suffix, numbers in by_name[name].items():
            candidates = sorted((rank, s) for s in declared if s.startswith(name)
                                and (rank := _symbol_rank(s, name, suffix)) is not None)
            if len(candidates) != len(set(numbers)):
                raise GenerationError(
                    f"{name}: cudaTypedefs.h has {len(set(numbers))} versions{suffix and ' ' + suffix} "
                    f"({sorted(set(numbers))}) but cuda.h declares {[s for _, s in candidates]}")
            symbols_for[suffix] = [s for _, s in candidates]
        legacy = sorted(set(by_name[name].get("", [])))
        if not legacy:
            raise GenerationError(f"{name}: only per-thread versions in cudaTypedefs.h")
        per_thread_pfns = {}
        for suffix in ("_ptds", "_ptsz"):
            for number, symbol in zip(sorted(set(by_name[name].get(suffix, []))), symbols_for.get(suffix, [])):
                per_thread_pfns[symbol] = f"PFN_{name}_v{number}{suffix}"
        for number, symbol in zip(legacy, symbols_for[""]):
            twin = next((symbol + s for s in ("_ptds", "_ptsz") if symbol + s in per_thread_pfns), "")
            versions.append(Version(name, number, symbol, twin, f"PFN_{name}_v{number}",
                                    per_thread_pfns.get(twin, "")))
        unpaired = set(per_thread_pfns) - {v.per_thread for v in versions if v.name == name}
        if unpaired:
            raise GenerationError(f"{name}: per-thread symbols {sorted(unpaired)} have no legacy twin")
    return versions


def hand_written(sources: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in sources:
        text = path.read_text()
        names.update(HAND_WRITTEN.findall(text))
        for pair in HAND_WRITTEN_PAIR.findall(text):
            names.update(pair)
    return names


def error_strings() -> list[tuple[str, int, str]]:
    """(name, value, message) of every CUresult, from ``cricket/cudafacts/curesult.py`` (the one
    table of them, generated from cuda.h by ``python -m cricket.cudafacts.generate``). The module
    imports nothing, so it is loaded by path: the build needs no importable cricket."""
    import importlib.util
    path = HERE.parents[1] / "cricket" / "cudafacts" / "curesult.py"
    spec = importlib.util.spec_from_file_location("cricket_curesult_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(name, value, message) for value, (name, message) in module.ERRORS.items()]


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


HEADER = "/* Generated by cext/driver/gen_driver.py from the CUDA headers; do not edit. */\n"


def write_stubs(out: Path, declared: dict[str, Declaration], implemented: set[str]) -> int:
    lines = [HEADER, '#include "driver.h"', "#include <cudaProfiler.h>", ""]
    count = 0
    for name in sorted(declared):
        if name in implemented:
            continue
        count += 1
        d = declared[name]
        if d.typed:
            lines.append(f"CRICKET_DRV_EXPORT CUresult {name}({d.params or 'void'})")
        else:
            lines += [f"/* {name}({d.params}) */", f"CRICKET_DRV_EXPORT CUresult {name}()"]
        lines += ["{",
                  "    static atomic_int seen;",
                  f'    return cricket_drv_unimplemented("{name}", &seen);', "}", ""]
    (out / "driver_stubs.c").write_text("\n".join(lines))
    return count


def write_proc_table(out: Path, versions: list[Version], declared: dict[str, Declaration]) -> None:
    lines = [HEADER, '#include "driver.h"', "#include <cudaTypedefs.h>", "#include <cudaProfilerTypedefs.h>", "",
             "/* Interop functions (GL, EGL, VDPAU), declared without their types. */"]
    untyped = sorted({s for v in versions for s in (v.symbol, v.per_thread) if s and not declared[s].typed})
    lines += [f"CUresult {s}();" for s in untyped]
    lines += ["", "const struct cricket_drv_proc cricket_drv_procs[] = {"]
    for v in versions:
        twin = f"(void *){v.per_thread}" if v.per_thread else "NULL"
        lines.append(f'    {{ "{v.name}", {v.version}, (void *){v.symbol}, {twin} }},')
    lines += ["};", "",
              "const size_t cricket_drv_proc_count = sizeof cricket_drv_procs / sizeof cricket_drv_procs[0];", "",
              "/* Never called: each assignment makes the compiler check that the symbol has the ABI of",
              " * the version it answers for. */",
              "__attribute__((unused)) static void check_abi_versions(void)", "{"]
    for i, v in enumerate(versions):
        if not declared[v.symbol].typed:
            continue
        lines.append(f"    {v.pfn} legacy{i} = {v.symbol}; (void)legacy{i};")
        if v.per_thread:
            lines.append(f"    {v.per_thread_pfn} per_thread{i} = {v.per_thread}; (void)per_thread{i};")
    lines += ["}", ""]
    (out / "proc_table.c").write_text("\n".join(lines))


def write_error_strings(out: Path, errors: list[tuple[str, int, str]]) -> None:
    lines = [HEADER, '#include "driver.h"', "", "const struct cricket_drv_error cricket_drv_errors[] = {"]
    for name, value, text in sorted(errors, key=lambda e: e[1]):
        lines.append(f"    {{ {value}, {_c_string(name)}, {_c_string(text)} }},")
    lines += ["};", "",
              "const size_t cricket_drv_error_count = sizeof cricket_drv_errors / sizeof cricket_drv_errors[0];", ""]
    (out / "error_strings.c").write_text("\n".join(lines))


def generate(out: Path, cuda_include: Path, cc: str = "cc", sources: list[Path] | None = None) -> dict[str, int]:
    """Write the generated sources; returns counts for the build log."""
    out.mkdir(parents=True, exist_ok=True)
    sources = sources if sources is not None else sorted(HERE.glob("*.c"))
    declared, typedefs = all_declarations(cuda_include, cc)
    versions = proc_versions(typedefs, declared)
    implemented = hand_written(sources)
    unknown = implemented - set(declared)
    if unknown:
        raise GenerationError(f"hand-written functions not declared by the CUDA headers: {sorted(unknown)}")
    stubs = write_stubs(out, declared, implemented)
    write_proc_table(out, versions, declared)
    errors = error_strings()
    write_error_strings(out, errors)
    return {"symbols": len(declared), "implemented": len(implemented), "stubs": stubs,
            "names": len({v.name for v in versions}), "versions": len(versions), "errors": len(errors)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--cuda-include", type=Path, default=Path("/usr/local/cuda/include"))
    parser.add_argument("--cc", default="cc")
    args = parser.parse_args(argv)
    try:
        counts = generate(args.outdir, args.cuda_include, args.cc)
    except GenerationError as exc:
        print(f"gen_driver.py: {exc}", file=sys.stderr)
        return 1
    print("gen_driver.py: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
