"""Command line: ``python -m rpcgen FILE.x [--check] [-o DIR] [--cython]``."""
from __future__ import annotations

import argparse
import logging
import os
import sys

from rpcgen.errors import RpcgenError


EXAMPLES = """\
examples:
  python -m rpcgen calc.x                     writes calc.py beside calc.x
  python -m rpcgen --cython -o build/ calc.x  also build/_calc_xdr.pyx (compile it with Cython)
  python -m rpcgen --check /usr/include/rpcsvc/nis.x
  python -m rpcgen --use-x /usr/include/rpcsvc/nis.x /usr/include/rpcsvc/nis_callback.x
"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m rpcgen", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile an ONC RPC / XDR interface definition (.x) into a Python module "
                    "(types, codecs, client stubs, server skeletons) and optionally a Cython codec.",
        epilog=EXAMPLES)
    ap.add_argument("file", help="the .x file")
    ap.add_argument("--check", action="store_true", help="only parse and check; write nothing")
    ap.add_argument("-o", "--output-dir", metavar="DIR",
                    help="write DIR/<stem>.py (default: beside the .x file)")
    ap.add_argument("--cython", action="store_true",
                    help="also write DIR/_<stem>_xdr.pyx, a compiled codec for the module, and "
                         "DIR/_<stem>_layout.pxd, its fixed layouts for hand-written Cython")
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                    help="define a preprocessor macro")
    ap.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                    help="add an #include search directory")
    ap.add_argument("--use-x", dest="use_x", action="append", default=[], metavar="OTHER.x",
                    help="take the constants and types of another .x (not its programs) that this "
                         "one uses, e.g. rpcsvc/nis.x for nis_callback.x; the module carries them")
    ap.add_argument("--builtin-cpp", action="store_true",
                    help="use the built-in cpp subset even when the system cpp exists")
    return ap


def outputs(path: str, out_dir: str | None, cython: bool) -> dict[str, str]:
    """The files rpcgen writes for ``path``: kind -> path."""
    stem = os.path.splitext(os.path.basename(path))[0]
    out_dir = out_dir or os.path.dirname(os.path.abspath(path))
    res = {"python": os.path.join(out_dir, f"{stem}.py")}
    if cython:
        res["cython"] = os.path.join(out_dir, f"_{stem}_xdr.pyx")
        res["layout"] = os.path.join(out_dir, f"_{stem}_layout.pxd")
    return res


def compile_file(path: str, out_dir: str | None = None, cython: bool = False,
                 defines: dict[str, str] | None = None, include_dirs: list[str] | None = None,
                 use_system_cpp: bool | None = None, use_x: list[str] | None = None) -> dict[str, str]:
    """Compile ``path``; returns the written files (see :func:`outputs`)."""
    from rpcgen import load
    from rpcgen.emit_python import emit_python
    mod = load(path, defines, include_dirs, use_system_cpp, use_x)
    stem = os.path.splitext(os.path.basename(path))[0]
    files = outputs(path, out_dir, cython)
    texts = {"python": emit_python(mod, stem)}
    if cython:
        from rpcgen.emit_cython import emit_cython
        from rpcgen.emit_layout import emit_layout_pxd
        from rpcgen.layout import fixed_layouts
        texts["cython"] = emit_cython(mod, stem)
        texts["layout"] = emit_layout_pxd(fixed_layouts(mod), stem, os.path.basename(path))
    os.makedirs(os.path.dirname(files["python"]), exist_ok=True)
    for kind, text in texts.items():
        _write_if_changed(files[kind], text)
    return files


def _write_if_changed(path: str, text: str) -> None:
    """Leave an unchanged file alone so that builds stay incremental."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="rpcgen: %(message)s")
    defines = {}
    for d in args.defines:
        k, _, v = d.partition("=")
        defines[k] = v or "1"
    try:
        if args.check:
            from rpcgen import load
            mod = load(args.file, defines, args.include_dirs, False if args.builtin_cpp else None,
                       args.use_x)
            print(f"{args.file}: ok ({len(mod.consts)} constants, {len(mod.types)} types, "
                  f"{len(mod.programs)} programs)")
            return 0
        files = compile_file(args.file, args.output_dir, args.cython, defines, args.include_dirs,
                             False if args.builtin_cpp else None, args.use_x)
    except RpcgenError as exc:
        print(f"rpcgen: {exc}", file=sys.stderr)
        return 1
    for p in files.values():
        print(p)
    return 0
