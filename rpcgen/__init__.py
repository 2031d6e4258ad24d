"""rpcgen: compile ONC RPC / XDR interface definitions (.x) into Python and Cython.

Pipeline: :mod:`rpcgen.cpp` (preprocess) → :mod:`rpcgen.lexer` → :mod:`rpcgen.parser`
(AST of dataclasses, :mod:`rpcgen.ast`) → :mod:`rpcgen.check` (resolved
:mod:`rpcgen.model`) → emitters (:mod:`rpcgen.emit_python`, :mod:`rpcgen.emit_cython`).
rpcgen itself imports nothing from ``cricket``; the code it writes does.
"""
from __future__ import annotations

from rpcgen.errors import CheckError, Loc, ParseError, PreprocessError, RpcgenError


def load(path: str, defines: dict[str, str] | None = None,
         include_dirs: list[str] | None = None, use_system_cpp: bool | None = None,
         use_x: list[str] | None = None):
    """Preprocess, parse and check ``path``; returns the :class:`rpcgen.model.Module`.

    ``use_x``: other .x files whose constants and types ``path`` uses (as rpcsvc's
    nis_callback.x uses nis.x's): their definitions, less their programs, come first, as if
    written at the top of ``path``, so the module generated from ``path`` carries them too."""
    from rpcgen import ast
    from rpcgen.check import check
    spec = _parse(path, defines, include_dirs, use_system_cpp)
    used = []
    for other in use_x or ():
        used += [d for d in _parse(other, defines, include_dirs, use_system_cpp).definitions
                 if not isinstance(d, ast.ProgramDef)]
    spec.definitions[:0] = used
    return check(spec)


def _parse(path: str, defines: dict[str, str] | None, include_dirs: list[str] | None,
           use_system_cpp: bool | None):
    from rpcgen.cpp import preprocess
    from rpcgen.lexer import tokenize
    from rpcgen.parser import parse
    pp = preprocess(path, defines, include_dirs, use_system_cpp)
    return parse(tokenize(pp.text, path, pp.macros), path)


__all__ = ["load", "RpcgenError", "ParseError", "CheckError", "PreprocessError", "Loc"]
