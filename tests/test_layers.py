"""The layers stay layers: the import-linter contracts of pyproject.toml hold, no Python module of
cricket imports itself back through others (nor a compiled one, which grimp cannot read: each is
imported first in a fresh interpreter), and no C file of a native library calls back into a
file that calls it (docs/architecture.md)."""
from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The C files linked into each native library (generated sources hold no hand-written calls).
LIBRARIES = {
    "libcricket-cuda": ["cext/driver/*.c", "cext/common/*.c"],
    "libcricket-cudart": ["cext/preload/*.c", "cext/common/*.c"],
}

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__",
                       "_Alignof", "__typeof__", "typeof", "_Static_assert", "__builtin_expect"})


def _code(path: Path) -> str:
    """The file without comments and string literals (their words are no calls)."""
    return _LITERAL.sub('""', _COMMENT.sub(" ", path.read_text()))


def c_functions(code: str) -> set[str]:
    """The functions a C file defines with external linkage: at brace depth 0, the name before the
    parameter list of a declaration that opens a body and is not ``static``."""
    code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*\n", "\n", code, flags=re.M)     # directives, continued ones too
    names, depth, start = set(), 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[start:i]
                head = re.sub(r"^\s*#[^\n]*\n", "", head, flags=re.M)
                call = _CALL.search(head)
                if call and "=" not in head[:call.start()] and not re.match(r"\s*static\b", head):
                    names.add(call.group(1))
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1
    return names


def c_file_graph(files: list[Path]) -> dict[str, set[str]]:
    """File -> the other files it depends on: those defining a function it calls, and the local
    headers it includes (a header's own includes too)."""
    codes = {f.name: _code(f) for f in files}
    headers = {h.name: h for f in files for h in f.parent.glob("*.h")}
    defined = {name: f for f, code in codes.items() for name in c_functions(code)}
    graph: dict[str, set[str]] = {}
    for f, code in codes.items():
        calls = {m.group(1) for m in _CALL.finditer(code)} - _KEYWORDS
        graph[f] = {defined[c] for c in calls if c in defined and defined[c] != f}
        graph[f] |= set(_INCLUDE.findall(code)) & set(headers)
    for name, path in headers.items():
        graph[name] = set(_INCLUDE.findall(_code(path))) & set(headers) - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _library_files(patterns: list[str]) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern))


def test_import_linter_contracts_are_kept(capsys):
    from importlinter.cli import lint_imports
    # import-linter configures logging with disable_existing_loggers: the tests after this one
    # must still see cricket's log records
    loggers = [lg for lg in logging.root.manager.loggerDict.values()
               if isinstance(lg, logging.Logger) and not lg.disabled]
    try:
        status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    finally:
        for lg in loggers:
            lg.disabled = False
    report = capsys.readouterr().out
    assert status == 0, report
    assert "2 kept, 0 broken" in report


def test_no_python_import_cycle():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("cricket", exclude_type_checking_imports=True, cache_dir=None)
    modules = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert cycles(modules) == []


COMPILED = sorted({p.name.split(".")[0] for p in (ROOT / "cricket" / "_cext").glob("*.so")})


@pytest.mark.skipif(not COMPILED, reason="no compiled module is built (make build)")
def test_each_compiled_module_imports_before_anything_else():
    # A compiled module imports the plain modules of the package that loads it; a package whose
    # __init__ loads it back made a cycle, seen only when the compiled module came first.
    failed = {}
    for name in COMPILED:                  # one fresh interpreter each
        done = subprocess.run([sys.executable, "-c", f"import cricket._cext.{name}"], cwd=ROOT,
                              capture_output=True, text=True)
        if done.returncode:
            failed[name] = done.stderr.strip().splitlines()[-1]
    assert failed == {}


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_no_cycle_among_the_c_files(library):
    graph = c_file_graph(_library_files(LIBRARIES[library]))
    assert cycles(graph) == []


def test_the_c_graph_sees_calls_across_files():
    graph = c_file_graph(_library_files(LIBRARIES["libcricket-cuda"]))
    # the device snapshot comes through the bridge, which calls back into none of its callers
    assert "bridge.c" in graph["devices.c"] and "bridge.c" in graph["contexts.c"]
    assert "devices.c" in graph["forward.c"]
    assert not graph["bridge.c"] & {"devices.c", "contexts.c", "forward.c"}


def test_a_c_cycle_is_found(tmp_path):
    (tmp_path / "a.c").write_text('int a_entry(int x)\n{\n    return b_entry(x) + 1;   /* calls b.c */\n}\n')
    (tmp_path / "b.c").write_text('static int helper(void) { return 2; }\n'
                                  'int b_entry(int x)\n{\n    if (x) return a_entry(x - 1);\n    return helper();\n}\n')
    assert cycles(c_file_graph([tmp_path / "a.c", tmp_path / "b.c"])) == [["a.c", "b.c"]]
