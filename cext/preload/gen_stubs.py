"""Generate the shim's stub exports and version script from the CUDA 13 headers.

Inputs: ``cudart13_exports.txt`` (the names NVIDIA's ``libcudart.so.13`` exports, checked in) and
the prototypes declared in the CUDA headers. The functions written by hand in ``forward.c`` (those
marked ``CRICKET_EXPORT``) are left out of the stubs. Outputs, written to OUTDIR:

- ``stubs.c``: one definition per remaining name with the header's prototype, which logs the name
  once and returns ``cudaErrorNotSupported`` (or the zero value of a non-error return type);
- ``cudart13_prototypes.h``: the header prototypes of every export, included by the shim;
- ``libcudart13.map``: the linker version script putting every export in the ``libcudart.so.13``
  version node.

Run: ``python cext/preload/gen_stubs.py OUTDIR [--cuda-include DIR]``.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPORTS_FILE = HERE / "cudart13_exports.txt"
FORWARD_FILES = (HERE / "forward.c", HERE / "forward_runtime.c", HERE / "capture.c", HERE / "graphs.c",
                 HERE / "forward_devices.c", HERE / "forward_libraries.c", HERE / "forward_memory.c")
# Functions answered in C with no Python implementation (the driver's entry points, capture state).
LOCAL_FILES = (HERE / "driver_link.c",)
VERSION_NODE = "libcudart.so.13"

# Headers searched for prototypes, in order. The first group is compiled into stubs.c with full
# prototypes (their types come from cuda_runtime_api.h); the interop headers need GL/EGL/VDPAU
# types that are not installed everywhere, so their stubs keep the prototype as a comment.
TYPED_HEADERS = ("cuda_runtime_api.h", "crt/host_runtime.h", "crt/device_functions.h",
                 "cuda_profiler_api.h")
INTEROP_HEADERS = ("cuda_gl_interop.h", "cuda_egl_interop.h", "cuda_vdpau_interop.h")


class GenerationError(Exception):
    """The headers or the export list do not allow a faithful stub; the message says which name."""


@dataclass(frozen=True)
class Prototype:
    name: str
    return_type: str      # normalised, e.g. "cudaError_t", "void **", "struct cudaChannelFormatDesc"
    params: str           # normalised parameter list, e.g. "void **devPtr, size_t size"
    header: str           # where it was found ("" when no header declares it)
    typed: bool           # True when stubs.c can use the full prototype

    def declaration(self) -> str:
        params = self.params if self.typed else ""
        return f"{self.return_type} {self.name}({params})"


def read_export_names(path: Path = EXPORTS_FILE) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            if not re.fullmatch(r"[A-Za-z_]\w*", line):
                raise GenerationError(f"{path}: {line!r} is not a C identifier")
            names.append(line)
    if len(set(names)) != len(names):
        raise GenerationError(f"{path}: duplicate names")
    return names


def read_forwarded_names(paths: tuple[Path, ...] = FORWARD_FILES) -> list[str]:
    """Names defined by hand in forward*.c: lines 'CRICKET_EXPORT <type> <name>('."""
    text = "\n".join(Path(p).read_text() for p in ([paths] if isinstance(paths, Path) else paths))
    return re.findall(r"^CRICKET_EXPORT\b[^(;]*?\b(\w+)\s*\(", text, flags=re.M)


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _join_continuations(text: str) -> str:
    return re.sub(r"\\\n", " ", text)


def _drop_macro_calls(text: str, macro: str) -> str:
    """Remove 'macro(...)' with balanced parentheses (e.g. default arguments '__dv(0)')."""
    out, i = [], 0
    pattern = re.compile(rf"\b{re.escape(macro)}\s*\(")
    while True:
        m = pattern.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while depth and j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        i = j


def _normalise_type(tokens: str) -> str:
    # Attribute macros (__host__, __cudart_builtin__, __CUDA_DEPRECATED, ...) all start with "__".
    tokens = re.sub(r'"C"', " ", tokens)
    tokens = re.sub(r"\b__\w+\s*\([^()]*\)", " ", tokens)
    words = [w for w in re.findall(r"[A-Za-z_]\w*|\*", tokens)
             if not w.startswith("__") and w not in ("extern", "CUDARTAPI", "static", "inline")]
    text = " ".join(words)
    return re.sub(r"\s*\*", " *", text).replace("* *", "**").strip()


def _normalise_params(params: str) -> str:
    params = _drop_macro_calls(params, "__dv")
    params = re.sub(r"\b__\w+__\b", " ", params)
    parts = []
    for part in _split_top_level(params):
        part = re.sub(r"=[^,]*$", "", part)          # C++ default arguments
        part = " ".join(part.split())
        if part:
            parts.append(part)
    return ", ".join(parts) if parts else "void"


def _split_top_level(params: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in params:
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur.append(ch)
    parts.append("".join(cur))
    return parts


@dataclass
class HeaderText:
    name: str
    text: str
    typed: bool


def load_headers(include: Path) -> tuple[list[HeaderText], dict[str, str]]:
    """The headers' declaration text and the per-thread-stream renames ('cudaMemcpy_ptds' -> 'cudaMemcpy')."""
    headers, aliases = [], {}
    for rel, typed in [(h, True) for h in TYPED_HEADERS] + [(h, False) for h in INTEROP_HEADERS]:
        path = include / rel
        if not path.exists():
            raise GenerationError(f"CUDA header {path} not found; pass --cuda-include DIR "
                                  "(the include folder of a CUDA 13 toolkit)")
        text = _join_continuations(_strip_comments(path.read_text(errors="replace")))
        for base, kind in re.findall(r"#\s*define\s+(\w+)\s+__CUDART_API_(PTDS|PTSZ)\(\s*\1\s*\)", text):
            aliases[f"{base}_{kind.lower()}"] = base
        text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)
        headers.append(HeaderText(rel, text, typed))
    return headers, aliases


def _find_declaration(header: HeaderText, name: str) -> tuple[str, str] | None:
    found = set()
    for m in re.finditer(rf"\bextern\b(?P<pre>[^;{{}}]*?)\b{re.escape(name)}\s*\(", header.text):
        if "(" in re.sub(r"\b__\w+\s*\([^()]*\)", "", m.group("pre")):
            continue   # the match ran across another declaration
        depth, j = 1, m.end()
        while depth and j < len(header.text):
            depth += {"(": 1, ")": -1}.get(header.text[j], 0)
            j += 1
        params = header.text[m.end():j - 1]
        found.add((_normalise_type(m.group("pre")), _normalise_params(params)))
    if len({(rt, _param_shape(ps)) for rt, ps in found}) > 1:
        raise GenerationError(f"{header.name} declares {name} in {len(found)} different ways: {sorted(found)}")
    return sorted(found)[0] if found else None


def _param_shape(params: str) -> str:
    """The parameter list without parameter names, to compare two declarations of one function."""
    shapes = []
    for part in params.split(", "):
        words = re.findall(r"[A-Za-z_]\w*|\*|\[|\]", part)
        if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", words[-1]) and words[-2] not in ("struct", "enum"):
            words = words[:-1]
        shapes.append(" ".join(words))
    return ", ".join(shapes)


def find_prototypes(names: list[str], include: Path) -> dict[str, Prototype]:
    headers, aliases = load_headers(include)
    protos = {}
    for name in names:
        proto = None
        for candidate in (name, aliases.get(name)):
            if candidate is None:
                continue
            for header in headers:
                decl = _find_declaration(header, candidate)
                if decl:
                    proto = Prototype(name, decl[0], decl[1], header.name, header.typed)
                    break
            if proto:
                break
        if proto is None:
            # A handful of private entry points (__cudaRegisterHostVar, ...) have no prototype in
            # any header: the stub takes no declared parameters and returns an error code.
            proto = Prototype(name, "cudaError_t", "", "", False)
        protos[name] = proto
    return protos


def stub_return(proto: Prototype) -> str:
    rt = proto.return_type
    if rt == "void":
        return "    return;"
    if rt == "cudaError_t":
        return "    return cudaErrorNotSupported;"
    if rt.endswith("*"):
        return "    return NULL;"
    if rt.startswith("struct "):
        return f"    {rt} zero;\n    memset(&zero, 0, sizeof zero);\n    return zero;"
    if rt in ("char", "int", "unsigned", "unsigned int", "size_t", "long"):
        # __cudaPushCallConfiguration: non-zero means "skip the launch", which is what we want.
        return f"    return ({rt})cudaErrorNotSupported;"
    raise GenerationError(f"{proto.name}: no stub rule for return type {rt!r} (from {proto.header})")


def render_stubs(protos: dict[str, Prototype], skip: set[str]) -> str:
    names = [n for n in protos if n not in skip]
    out = [
        "/* Generated by cext/preload/gen_stubs.py from cudart13_exports.txt and the CUDA headers.",
        " * Do not edit: change the generator. Every function here is not implemented by cricket:",
        " * it logs its name once and returns cudaErrorNotSupported (801). */",
        "#include <string.h>",
        '#include "shim.h"',
        "",
        f"#define CRICKET_STUB_COUNT {len(names)}",
        "static cricket_once_flag stub_seen[CRICKET_STUB_COUNT];",
        "",
    ]
    for idx, name in enumerate(names):
        proto = protos[name]
        origin = proto.header or "no prototype in the CUDA 13 headers"
        if proto.header and not proto.typed:
            out.append(f"/* {origin}: {proto.return_type} {name}({proto.params}) */")
        else:
            out.append(f"/* {origin} */")
        out.append(f"CRICKET_EXPORT {proto.declaration()}")
        out.append("{")
        out.append(f'    cricket_unimplemented("{name}", &stub_seen[{idx}]);')
        out.append(stub_return(proto))
        out.append("}")
        out.append("")
    return "\n".join(out)


def render_prototypes(protos: dict[str, Prototype]) -> str:
    """Declarations of every typed export, so that hand-written definitions are checked against them."""
    out = ["/* Generated by cext/preload/gen_stubs.py: the CUDA headers' prototypes of the libcudart.so.13",
           " * exports (the __cuda* entry points are declared only in C++ headers there). */",
           "#ifndef CRICKET_CUDART13_PROTOTYPES_H", "#define CRICKET_CUDART13_PROTOTYPES_H",
           "#include <cuda_runtime_api.h>", ""]
    for proto in protos.values():
        if proto.typed:
            out.append(f"{proto.declaration()};")
    out += ["", "#endif", ""]
    return "\n".join(out)


def render_version_script(names: list[str]) -> str:
    body = "\n".join(f"    {n};" for n in names)
    return (f"/* Generated by cext/preload/gen_stubs.py: every export in the {VERSION_NODE} node. */\n"
            f"{VERSION_NODE} {{\n  global:\n{body}\n}};\n")


def generate(outdir: Path, include: Path) -> dict[str, Prototype]:
    names = read_export_names()
    forwarded = read_forwarded_names() + read_forwarded_names(LOCAL_FILES)
    unknown = sorted(set(forwarded) - set(names))
    if unknown:
        raise GenerationError(f"forward.c defines {unknown}, which libcudart.so.13 does not export")
    protos = find_prototypes(names, include)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "stubs.c").write_text(render_stubs(protos, set(forwarded)))
    (outdir / "cudart13_prototypes.h").write_text(render_prototypes(protos))
    (outdir / "libcudart13.map").write_text(render_version_script(names))
    return protos


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--cuda-include", type=Path, default=Path("/usr/local/cuda/include"))
    args = parser.parse_args(argv)
    try:
        protos = generate(args.outdir, args.cuda_include)
    except GenerationError as exc:
        print(f"gen_stubs: {exc}", file=sys.stderr)
        return 1
    missing = [p.name for p in protos.values() if not p.header]
    print(f"gen_stubs: {len(protos)} exports, {len(missing)} without a header prototype: {' '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
