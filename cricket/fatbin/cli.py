"""List or extract the device code in an executable, shared object, object file, .fatbin or .cubin.

Shows every fatbin wrapper and container, each entry (kind, arch, compression,
sizes) and each kernel with its parameters (ordinal, offset, size).

Exit status: 0 when it listed device code; 1 for an unreadable file or one with no CUDA device
code (one line on stderr says which); 141 (as for a tool that SIGPIPE ended) when stdout was
closed early, as by ``| head``, which ends the command quietly.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys

from .._stdout import closed_stdout
from .container import Fatbin
from .cubin import Cubin
from .errors import FatbinError, NoImageError
from .hostelf import DeviceCode, find_device_code
from .layout import KernelLayout

log = logging.getLogger(__name__)

EXAMPLES = """\
examples:
  cricket fatbin ./saxpy --arch sm_90     list the kernels and the image an H100 loads
  cricket fatbin libfoo.so --json --extract out/   as JSON, and write the cubins and PTX to out/
"""

_ARCH = re.compile(r"(?:sm_|compute_)?(\d+)")


def parse_arch(text: str) -> int:
    """``sm_90``, ``compute_90`` or ``90`` → 90."""
    m = _ARCH.fullmatch(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not an arch: give sm_90, compute_90 or 90")
    return int(m.group(1))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("file", metavar="FILE", help="executable, .so, .o, .fatbin or .cubin")
    parser.add_argument("--json", action="store_true", help="print the same as JSON")
    parser.add_argument("--extract", metavar="DIR",
                        help="write every decompressed cubin (.cubin) and PTX text (.ptx) to DIR")
    parser.add_argument("--records", action="store_true",
                        help="also list each kernel's raw .nv.info records")
    parser.add_argument("--arch", type=parse_arch, metavar="SM",
                        help="also say which image a device of this arch (sm_90, compute_90 or 90) "
                             "would load")


def main(args: argparse.Namespace) -> int:
    try:
        code = find_device_code(args.file)
        if not args.json and not (code.wrappers or code.fatbins or code.cubins):
            print(f"{args.file} has no CUDA device code", file=sys.stderr)
            return 1
        if args.json:
            json.dump(to_json(code, args.records, args.arch), sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            print_text(code, args.records, args.arch)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        if args.extract:
            written = extract(code, args.extract)
            print(f"wrote {len(written)} files to {args.extract}", file=sys.stderr)
    except BrokenPipeError:
        return closed_stdout()
    except FatbinError as exc:
        print(f"cricket fatbin: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"cricket fatbin: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _params(layout: KernelLayout) -> str:
    return " ".join(f"{p.ordinal}:0x{p.offset:x}:{p.size}" for p in layout.params)


def _kernel_line(layout: KernelLayout, indent: str) -> str:
    extra = []
    if layout.params_v2:
        extra.append("v2")
    if layout.max_threads:
        extra.append("max_threads=" + "x".join(map(str, layout.max_threads)))
    if layout.reqntid:
        extra.append("reqntid=" + "x".join(map(str, layout.reqntid)))
    if layout.registers is not None:
        extra.append(f"regs={layout.registers}")
    if layout.shared_static:
        extra.append(f"shared={layout.shared_static}")
    tail = f" [{' '.join(extra)}]" if extra else ""
    return (f"{indent}kernel {layout.name}: {len(layout.params)} params, {layout.param_size} bytes"
            f"{tail}\n{indent}  (ordinal:offset:size) {_params(layout) or '-'}")


def _print_cubin(cubin: Cubin, indent: str, records: bool) -> None:
    print(f"{indent}cubin sm_{cubin.arch} e_flags=0x{cubin.e_flags:08x} {len(cubin.kernel_names)} kernels")
    for v in cubin.variables:
        print(f"{indent}variable {v.name}: {v.size} bytes ({v.kind}, {v.section})")
    for k in cubin.kernels():
        print(_kernel_line(k, indent))
        if records:
            for r in k.records:
                value = r.data.hex() if r.data is not None else hex(r.value or 0)
                print(f"{indent}    {r.name} {r.format_name} {value}")


def _selection(fb: Fatbin, arch: int | None) -> str | None:
    if arch is None:
        return None
    try:
        e = fb.select_image(arch)
    except NoImageError:
        return f"nothing runs on sm_{arch}"
    return f"sm_{arch} loads [{e.index}] {e.kind_name} {e.arch_name}"


def _print_fatbin(fb: Fatbin, indent: str, records: bool, arch: int | None = None) -> None:
    w = fb.wrapper
    wtext = f"wrapper v{w.version} {w.location}" if w else "no wrapper"
    reg = {True: ", registered", False: ", not registered at start-up", None: ""}[fb.registered]
    print(f"{indent}fatbin {fb.origin}: {fb.size} bytes, {len(fb.entries)} entries ({wtext}{reg})")
    chosen = _selection(fb, arch)
    if chosen:
        print(f"{indent}  {chosen}")
    for e in fb.entries:
        extra = f" name={e.name!r}" if e.name else ""
        opts = e.options
        if opts:
            extra += f" options={opts.hex() if isinstance(opts, bytes) else repr(opts)}"
        print(f"{indent}  [{e.index}] {e.kind_name:5} {e.arch_name:12} {e.compression.value:9} "
              f"stored={e.stored_size} size={e.size}{extra}")
        if e.is_elf:
            _print_cubin(e.cubin, indent + "      ", records)
        elif e.is_ptx:
            m = e.ptx
            print(f"{indent}      ptx .version {m.version[0]}.{m.version[1]} .target {', '.join(m.targets)}: "
                  f"{len(m.entry_names)} entries")
            for k in m.kernels():
                print(_kernel_line(k, indent + "      "))
        else:
            print(f"{indent}      (LTO-IR: recognised, not decoded)")
    for i, p in enumerate(fb.prelinked):
        print(f"{indent}  prelinked[{i}]:")
        _print_fatbin(p, indent + "    ", records, arch)


def print_text(code: DeviceCode, records: bool = False, arch: int | None = None) -> None:
    print(f"{code.path}: {code.file_kind}, {len(code.wrappers)} wrappers, {len(code.fatbins)} containers")
    for fb in code.fatbins:
        _print_fatbin(fb, "  ", records, arch)
    for c in code.cubins:
        _print_cubin(c, "  ", records)


def _kernel_json(k: KernelLayout, records: bool) -> dict:
    d = k.as_dict()
    if records:
        d["records"] = [r.as_dict() for r in k.records]
    return d


def _cubin_json(c: Cubin, records: bool) -> dict:
    return {"arch": c.arch, "e_flags": c.e_flags, "variables": [v.as_dict() for v in c.variables],
            "kernels": [_kernel_json(k, records) for k in c.kernels()]}


def _fatbin_json(fb: Fatbin, records: bool, arch: int | None = None) -> dict:
    d = fb.as_dict()
    if arch is not None:
        try:
            d["selected"] = fb.select_image(arch).index
        except NoImageError:
            d["selected"] = None
    for e, ed in zip(fb.entries, d["entries"]):
        if e.is_elf:
            ed["cubin"] = _cubin_json(e.cubin, records)
        elif e.is_ptx:
            ed["ptx"] = {"version": "%d.%d" % e.ptx.version, "targets": e.ptx.targets,
                         "kernels": [_kernel_json(k, False) for k in e.ptx.kernels()]}
    d["prelinked"] = [_fatbin_json(p, records, arch) for p in fb.prelinked]
    return d


def to_json(code: DeviceCode, records: bool = False, arch: int | None = None) -> dict:
    return {"path": code.path, "file_kind": code.file_kind,
            "wrappers": [w.as_dict() for w in code.wrappers],
            "fatbins": [_fatbin_json(f, records, arch) for f in code.fatbins],
            "cubins": [_cubin_json(c, records) for c in code.cubins]}


def extract(code: DeviceCode, directory: str) -> list[str]:
    """Write each decompressed cubin and PTX text; returns the paths written."""
    os.makedirs(directory, exist_ok=True)
    base = os.path.basename(code.path)
    written = []
    for n, fb in enumerate(code.fatbins):
        groups = [(f"{n}", fb)] + [(f"{n}.prelinked{i}", p) for i, p in enumerate(fb.prelinked)
                                   if p not in code.fatbins]
        for tag, container in groups:
            for e in container.entries:
                if e.is_elf:
                    path, data = f"{base}.{tag}.{e.index}.{e.arch_name}.cubin", e.payload
                elif e.is_ptx:
                    path, data = f"{base}.{tag}.{e.index}.{e.arch_name}.ptx", e.payload.rstrip(b"\0")
                else:
                    log.info("%s: LTO-IR is not extracted", e.describe())
                    continue
                full = os.path.join(directory, path)
                with open(full, "wb") as f:
                    f.write(data)
                written.append(full)
    for i, c in enumerate(code.cubins):
        full = os.path.join(directory, f"{base}.{i}.sm_{c.arch}.cubin")
        with open(full, "wb") as f:
            f.write(c.data)
        written.append(full)
    return written
