"""The twin pass of `make test` (``CRICKET_PUREPYTHON=1`` over the Makefile's ``TWIN_TESTS``): every
file and test it names exists, every compiled module has a pure-Python twin, and every twin is
exercised by a file of the pass."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def twin_tests() -> list[str]:
    """The paths the Makefile's TWIN_TESTS names (backslash-continued lines)."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"^TWIN_TESTS\s*=\s*((?:.*\\\n)*.*)$", text, re.M)
    assert m, "the Makefile has no TWIN_TESTS"
    return m.group(1).replace("\\\n", " ").split()


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


@functools.cache
def twins() -> dict[str, tuple[str, set[str]]]:
    """compiled module -> (its pure-Python twin, the modules that choose between them), as the code
    has them: the pairs given to ``cricket._select.load``, the twins whose docstring names their
    compiled module, and the generated modules' codecs (``load_codec(__name__, "_NAME_xdr")``,
    chosen when the generated module's package loads it)."""
    pairs: dict[str, tuple[str, set[str]]] = {}
    for path in sorted((ROOT / "cricket").rglob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        module = _module_name(path).removesuffix(".__init__")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and len(node.args) == 2 and all(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                compiled, pure = (a.value for a in node.args)
                if name == "load" and compiled.startswith("cricket._cext."):
                    pairs.setdefault(compiled, (pure, set()))[1].add(module)
        doc = ast.get_docstring(tree) or ""
        m = re.match(r"Pure-Python twin of ``(cricket\._cext\.\w+)``", doc)
        if m:
            pairs.setdefault(m.group(1), (module, set()))
        for codec in re.findall(r"load_codec\(__name__, '(\w+)'\)", source):
            package = module.rpartition(".")[0]
            pairs[f"{package}.{codec}"] = (module, {package})
    return pairs


def test_every_file_and_test_of_the_twin_pass_exists():
    missing = []
    for entry in twin_tests():
        path, _, test = entry.partition("::")
        if not (ROOT / path).exists() or test and not re.search(rf"^def {test}\(", (ROOT / path).read_text(), re.M):
            missing.append(entry)
    assert not missing, f"TWIN_TESTS names files or tests that are gone: {missing}"


def test_every_compiled_module_has_a_twin():
    compiled = {f"cricket._cext.{p.stem}" for p in (ROOT / "cext").glob("*.pyx")}
    pairs = twins()
    assert compiled <= pairs.keys(), f"no pure-Python twin found for {sorted(compiled - pairs.keys())}"
    for twin, _ in pairs.values():
        assert (ROOT / (twin.replace(".", "/") + ".py")).exists(), twin


def test_every_twin_is_exercised_by_a_file_of_the_twin_pass():
    """A file exercises a twin when it (or a helper module beside it) names the twin or its compiled
    module, or imports the twin or a module that chooses it."""
    texts = {}
    for entry in twin_tests():
        path = ROOT / entry.partition("::")[0]
        files = [path] if path.is_file() else sorted(path.glob("test_*.py"))
        for f in files:
            helpers = [h for h in f.parent.glob("*.py") if not h.name.startswith("test_")]
            texts[entry] = "\n".join(p.read_text() for p in [*files, *helpers])
    unexercised = []
    for compiled, (twin, choosers) in twins().items():
        names = [rf"{re.escape(compiled)}\b"]
        for module in (twin, *choosers):
            package, _, name = module.rpartition(".")
            names += [rf"\b{re.escape(module)}\b", rf"from {re.escape(package)} import [^\n]*\b{name}\b"]
        pattern = re.compile("|".join(names))
        if not any(pattern.search(text) for text in texts.values()):
            unexercised.append(twin)
    assert not unexercised, (f"no file of the Makefile's TWIN_TESTS exercises {unexercised}: add the "
                             f"tests of that module to TWIN_TESTS")
