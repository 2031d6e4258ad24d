"""What the bench needs is declared, and a missing piece is a reason in the report, not a
traceback: the xdr bench needs Cython at run time (the `bench` extra declares it)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def names(requirements: list[str]) -> set[str]:
    return {r.split(">")[0].split("=")[0].split("[")[0].strip().lower() for r in requirements}


def test_cython_and_prometheus_client_are_declared_where_needed():
    x = extras()
    assert "cython" in names(x["bench"]) and "matplotlib" in names(x["bench"])
    assert "cython" in names(x["test"]) and "cython" in names(x["rpcgen"])
    assert "prometheus_client" in names(x["metrics"]) and "prometheus_client" in names(x["test"])


def test_without_cython_the_xdr_bench_is_skipped_with_the_reason(tmp_path):
    out = tmp_path / "report"
    # sys.modules[name] = None: the import fails and importlib.util.find_spec says None, as when
    # the package is not installed
    script = textwrap.dedent(f"""
        import sys
        sys.modules["Cython"] = None
        from cricket.cli import main
        sys.exit(main(["bench", "--only", "xdr", "--out", {str(out)!r}]))
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env={"CRICKET_BENCH_TINY": "1", "PATH": "/usr/bin:/bin",
                                         "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    report = (out / "report.md").read_text()
    assert "Skipped: needs Cython at run time" in report and "cricket[bench]" in report
    assert "Traceback" not in report + r.stderr
