"""rpcgen: compile ONC RPC / XDR interface definitions (.x) into Python and Cython.

Pipeline: :mod:`rpcgen.cpp` (preprocess) → :mod:`rpcgen.lexer` → :mod:`rpcgen.parser`
(AST of dataclasses, :mod:`rpcgen.ast`) → :mod:`rpcgen.check` (resolved
:mod:`rpcgen.model`) → emitters (:mod:`rpcgen.emit_python`, :mod:`rpcgen.emit_cython`).
rpcgen itself imports nothing from ``cricket``; the code it writes does.
"""
from __future__ import annotations

from rpcgen.errors import CheckError, Loc, ParseError, PreprocessError, RpcgenError


def load(path: str, defines: dict[str, str] | None = None,
         include_dirs: list[str] | None = None, use_system_cpp: bool | None = None):
    """Preprocess, parse and check ``path``; returns the :class:`rpcgen.model.Module`."""
    from rpcgen.check import check
    from rpcgen.cpp import preprocess
    from rpcgen.lexer import tokenize
    from rpcgen.parser import parse
    pp = preprocess(path, defines, include_dirs, use_system_cpp)
    spec = parse(tokenize(pp.text, path, pp.macros), path)
    return check(spec)


__all__ = ["load", "RpcgenError", "ParseError", "CheckError", "PreprocessError", "Loc"]
