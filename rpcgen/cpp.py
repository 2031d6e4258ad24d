"""Preprocessing: the system ``cpp`` when present (as rpcgen does), else a built-in subset.

The built-in subset knows object-like ``#define``/``#undef``, ``#ifdef``, ``#ifndef``,
``#if``/``#elif`` with integers, names and ``defined(NAME)`` joined by ``!``, ``&&``,
``||``, ``#else``, ``#endif``, ``#include "file"``/``<file>`` and ``#error``; other
directives are ignored.  Either way the result carries ``# LINE "FILE"`` markers so
that errors point into the original files.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from rpcgen.errors import Loc, PreprocessError

log = logging.getLogger(__name__)

#: rpcgen defines one of RPC_HDR/RPC_XDR/... per output.  We read the header's view: it
#: holds every type and the ``%#define`` constants that system .x files use as sizes.
DEFAULT_DEFINES = {"RPC_HDR": "1"}


@dataclass
class Preprocessed:
    text: str
    macros: dict[str, str] = field(default_factory=dict)  # built-in mode: expanded by the lexer


def preprocess(path: str, defines: dict[str, str] | None = None,
               include_dirs: list[str] | None = None, use_system_cpp: bool | None = None
               ) -> Preprocessed:
    """Preprocess ``path``; ``use_system_cpp=None`` means "when cpp is installed"."""
    defines = {**DEFAULT_DEFINES, **(defines or {})}
    include_dirs = list(include_dirs or [])
    if use_system_cpp is None:
        use_system_cpp = shutil.which("cpp") is not None
    if use_system_cpp:
        return Preprocessed(_system_cpp(path, defines, include_dirs))
    pp = _BuiltinCpp(defines, include_dirs)
    text = pp.run(path)
    return Preprocessed(text, pp.macros)


#: Starts a pass-through line that continues the one before it. cpp splices a ``%`` line that
#: ends in a backslash with the next (a ``%#define`` over several lines, as in rpcsvc/nis.x) and
#: then writes the pieces as lines of their own, indistinguishable from XDR; so before cpp runs,
#: such a line loses its backslash and each continuation line becomes ``%`` + this mark, which
#: the lexer joins back (line numbers stay those of the file).
CONTINUED = "\x01"


def splice_passthrough(text: str) -> str | None:
    """``text`` with ``%`` lines continued by a backslash written as :data:`CONTINUED` lines, or
    None when it has none."""
    lines = text.split("\n")
    changed = False
    continuing = False
    for i, line in enumerate(lines):
        starts = line.startswith("%")
        if continuing:
            lines[i] = "%" + CONTINUED + line
        if not (starts or continuing):
            continue
        continuing = line.rstrip("\r").endswith("\\")
        if continuing:
            body = lines[i].rstrip("\r")
            lines[i] = body[:-1]
            changed = True
    return "\n".join(lines) if changed else None


def _system_cpp(path: str, defines: dict[str, str], include_dirs: list[str]) -> str:
    cmd = ["cpp", "-C"] + [f"-D{k}={v}" for k, v in defines.items()]
    cmd += [f"-I{d}" for d in include_dirs]
    cmd += [f"-I{os.path.dirname(os.path.abspath(path))}"]
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            spliced = splice_passthrough(f.read())
    except OSError as exc:
        raise PreprocessError(None, f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if spliced is None:
            res = subprocess.run(cmd + [path], capture_output=True, text=True, errors="surrogateescape")
        else:
            with tempfile.TemporaryDirectory() as tmp:
                copy = os.path.join(tmp, os.path.basename(path))
                with open(copy, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(spliced)
                res = subprocess.run(cmd + [copy], capture_output=True, text=True,
                                     errors="surrogateescape")
                # the line markers name the file itself, not its spliced copy
                res.stdout = res.stdout.replace(f'"{copy}"', f'"{path}"')
                res.stderr = res.stderr.replace(copy, path)
    except OSError as exc:
        raise PreprocessError(None, f"cannot run cpp: {exc}") from None
    if res.returncode != 0:
        raise PreprocessError(Loc(path, 1, 1), "cpp failed:\n" + res.stderr.strip())
    return res.stdout


_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*?)\s*$")
_IDENT = re.compile(r"[A-Za-z_]\w*")


class _BuiltinCpp:
    def __init__(self, defines: dict[str, str], include_dirs: list[str]) -> None:
        self.macros = dict(defines)
        self.include_dirs = include_dirs
        self.depth = 0

    def run(self, path: str) -> str:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().split("\n")
        except OSError as exc:
            raise PreprocessError(None, f"cannot read {path}: {exc.strerror}") from None
        out = [f'# 1 "{path}"']
        # stack of (this branch active, some branch taken, parent active)
        stack: list[list[bool]] = []
        active = True
        in_comment = False
        for lineno, line in enumerate(lines, 1):
            loc = Loc(path, lineno, 1)
            m = None if in_comment else _DIRECTIVE.match(line)
            if m is None:
                if active:
                    out.append(line)
                else:
                    out.append("")
                in_comment = _ends_in_comment(line, in_comment)
                continue
            name, arg = m.group(1), _strip_comment(m.group(2))
            if name in ("ifdef", "ifndef"):
                cond = (arg.split()[0] if arg else "") in self.macros
                cond = cond if name == "ifdef" else not cond
                stack.append([active and cond, cond, active])
            elif name == "if":
                cond = self._eval(arg, loc)
                stack.append([active and cond, cond, active])
            elif name == "elif":
                if not stack:
                    raise PreprocessError(loc, "#elif without #if")
                top = stack[-1]
                cond = not top[1] and self._eval(arg, loc)
                top[0] = top[2] and cond
                top[1] = top[1] or cond
            elif name == "else":
                if not stack:
                    raise PreprocessError(loc, "#else without #if")
                top = stack[-1]
                top[0] = top[2] and not top[1]
                top[1] = True
            elif name == "endif":
                if not stack:
                    raise PreprocessError(loc, "#endif without #if")
                stack.pop()
            elif not active:
                pass
            elif name == "define":
                parts = arg.split(None, 1)
                if not parts or not _IDENT.fullmatch(parts[0]):
                    raise PreprocessError(loc, f"#define needs a macro name, got {arg!r} "
                                               "(function-like macros need the system cpp)")
                self.macros[parts[0]] = parts[1] if len(parts) > 1 else ""
            elif name == "undef":
                self.macros.pop(arg.split()[0] if arg else "", None)
            elif name == "include":
                out.append(self._include(arg, path, loc))
                out.append(f'# {lineno + 1} "{path}"')
                continue
            elif name == "error":
                raise PreprocessError(loc, f"#error {arg}")
            else:
                log.debug("%s: ignoring #%s", loc, name)
            active = stack[-1][0] if stack else True
            out.append("")
        if stack:
            raise PreprocessError(Loc(path, len(lines), 1), "missing #endif")
        return "\n".join(out) + "\n"

    def _include(self, arg: str, path: str, loc: Loc) -> str:
        m = re.fullmatch(r'"([^"]+)"|<([^>]+)>', arg)
        if not m:
            raise PreprocessError(loc, f"bad #include {arg!r}")
        name = m.group(1) or m.group(2)
        dirs = ([os.path.dirname(os.path.abspath(path))] if m.group(1) else []) + self.include_dirs
        for d in dirs:
            cand = os.path.join(d, name)
            if os.path.exists(cand):
                self.depth += 1
                if self.depth > 50:
                    raise PreprocessError(loc, f"#include nested too deeply at {name}")
                try:
                    return self.run(cand)
                finally:
                    self.depth -= 1
        raise PreprocessError(loc, f"#include file {name!r} not found (searched {dirs})")

    def _eval(self, expr: str, loc: Loc) -> bool:
        e = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
                   lambda m: " 1 " if (m.group(1) or m.group(2)) in self.macros else " 0 ", expr)

        def name(m: re.Match) -> str:
            v = self.macros.get(m.group(0), "0").strip() or "0"
            return v if re.fullmatch(r"-?\d+|0[xX][0-9a-fA-F]+", v) else "0"
        e = re.sub(r"\b[A-Za-z_]\w*", name, e)
        e = e.replace("&&", " and ").replace("||", " or ")
        e = re.sub(r"!(?!=)", " not ", e)
        if not re.fullmatch(r"(\s|0[xX][0-9a-fA-F]+|\d+|and|or|not|[()<>=!+\-*/%])*", e):
            raise PreprocessError(loc, f"#if expression {expr!r} is beyond the built-in cpp")
        try:
            return bool(eval(e, {"__builtins__": {}}, {}))  # only digits/operators remain
        except Exception:
            raise PreprocessError(loc, f"cannot evaluate #if {expr!r}") from None


def _strip_comment(s: str) -> str:
    return re.sub(r"/\*.*?(\*/|$)", " ", s).strip()


def _ends_in_comment(line: str, in_comment: bool) -> bool:
    i = 0
    while True:
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return True
            in_comment, i = False, j + 2
        else:
            j = line.find("/*", i)
            if j < 0:
                return False
            in_comment, i = True, j + 2
