"""The runtime shim's support table: each of the 422 exports of ``libcudart.so.13``, implemented or
answering ``cudaErrorNotSupported``, derived from the code and written into this folder's README.

``python cext/preload/support_table.py`` rewrites the section between the markers of
``cext/preload/README.md``; ``--check`` exits 1 when the README is not what the code says
(tests/preload/test_support_table.py runs that check). An export is implemented when a hand-written
C file defines it (``gen_stubs.FORWARD_FILES``, ``LOCAL_FILES``) and what it forwards to exists: a
``FORWARD``/``CALL_AS``/``call_internal`` body names a Python implementation that
``cricket.client.runtime_api`` registers; a body of C alone (or one calling its own ``cdef api``
entry of ``cricket._cext.cudart_api``) is its own implementation. Every other export is a
generated stub that logs its name once and returns ``cudaErrorNotSupported``.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
PROJECT_README = HERE.parent.parent / "README.md"     # its "N of the M exports (P%)" share
SHARE = re.compile(r"\d+ of the \d+ exports \(\d+%\)")
BEGIN, END = "<!-- support-table:begin -->", "<!-- support-table:end -->"

sys.path.insert(0, str(HERE))
import gen_stubs  # noqa: E402


def _bodies(text: str) -> dict[str, str]:
    """Exported function name -> its body, for every ``CRICKET_EXPORT`` definition in ``text``
    (an alias of another function: that function's body)."""
    bodies: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for m in re.finditer(r"^CRICKET_EXPORT\b[^(;]*?\b(\w+)\s*\(", text, flags=re.M):
        start = text.find("{", m.end())
        end = text.find(";", m.end())
        if start < 0 or 0 <= end < start:
            alias = re.search(r'__attribute__\(\(alias\("(\w+)"\)\)\)', text[m.end():end])
            if alias:
                aliases[m.group(1)] = alias.group(1)
            continue                        # a declaration, not a definition
        depth, i = 0, start
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        bodies[m.group(1)] = text[start:i + 1]
    for name, target in aliases.items():
        if target in bodies:
            bodies[name] = bodies[target].replace("__func__", f'"{target}"')
    return bodies


def python_target(name: str, body: str) -> str | None:
    """The Python implementation a forwarding body calls, None for a body that needs none."""
    called = re.search(r'(?:CALL_AS|call_internal)\(\s*"(\w+)"', body)
    if called:
        return called.group(1)
    if re.search(r"\bFORWARD0?\(|call_internal\(\s*__func__", body):
        return name
    return None


def support(implementations: set[str] | None = None) -> dict[str, bool]:
    """Every export -> whether it is implemented (in the exports file's order)."""
    if implementations is None:
        from cricket.client import runtime_api
        implementations = set(runtime_api.IMPLEMENTATIONS)
    files = (*gen_stubs.FORWARD_FILES, *gen_stubs.LOCAL_FILES)
    bodies: dict[str, str] = {}
    for path in files:
        bodies.update(_bodies(gen_stubs._strip_comments(Path(path).read_text())))
    result = {}
    for name in gen_stubs.read_export_names():
        body = bodies.get(name)
        target = python_target(name, body) if body is not None else None
        result[name] = body is not None and (target is None or target in implementations)
    return result


def share(table: dict[str, bool]) -> str:
    done = sum(table.values())
    return f"{done} of the {len(table)} exports ({100 * done / len(table):.0f}%)"


def render(table: dict[str, bool]) -> str:
    done = sum(table.values())
    rows = [f"| `{name}` | {'implemented' if ok else '`cudaErrorNotSupported`'} |" for name, ok in sorted(table.items())]
    return "\n".join([
        BEGIN,
        "<!-- written by `python cext/preload/support_table.py` from the code: do not edit by hand -->",
        f"**{done} of {len(table)} exports implemented ({100 * done / len(table):.0f}%)**; the rest log their "
        "name once and return `cudaErrorNotSupported`.",
        "",
        "| export | status |",
        "| --- | --- |",
        *rows,
        END,
    ])


def updated_readme(text: str, table: dict[str, bool]) -> str:
    if BEGIN not in text or END not in text:
        return text.rstrip("\n") + "\n\n## Support table\n\n" + render(table) + "\n"
    head, rest = text.split(BEGIN, 1)
    return head + render(table) + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the README is out of date")
    args = parser.parse_args(argv)
    table = support()
    text, project = README.read_text(), PROJECT_README.read_text()
    new, new_project = updated_readme(text, table), SHARE.sub(share(table), project)
    if args.check:
        for path, old, now in ((README, text, new), (PROJECT_README, project, new_project)):
            if now != old or (path is PROJECT_README and not SHARE.search(project)):
                print(f"{path} is out of date: run python cext/preload/support_table.py")
                return 1
        return 0
    if new != text:
        README.write_text(new)
    if new_project != project:
        PROJECT_README.write_text(new_project)
    print(f"{README}: {new.split(BEGIN, 1)[1].splitlines()[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
