import os
import subprocess
import sys

import pytest

from cricket import _select
from cricket.cli import SUBCOMMANDS


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "cricket", *args], capture_output=True, text=True)


def test_help_lists_usage():
    r = run_cli("--help")
    assert r.returncode == 0
    assert "usage: cricket" in r.stdout


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0
    assert r.stdout.startswith("cricket ")


def test_purepython_env_forces_twin(monkeypatch):
    monkeypatch.setenv("CRICKET_PUREPYTHON", "1")
    assert _select.pure_python_forced()
    mod = _select.load("cricket._cext.does_not_exist", "json")
    assert mod.__name__ == "json"
    monkeypatch.setenv("CRICKET_PUREPYTHON", "0")
    assert not _select.pure_python_forced()


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_subcommand_help_shows_examples(command):
    r = run_cli(command, "--help")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert f"examples:\n  cricket {command}" in r.stdout


def test_every_other_help_shows_examples_too():
    top = run_cli("--help")
    assert "examples:\n  cricket " in top.stdout
    facts = subprocess.run([sys.executable, "-m", "cricket.cudafacts.generate", "--help"],
                           capture_output=True, text=True)
    assert facts.returncode == 0 and "examples:\n  python -m cricket.cudafacts.generate" in facts.stdout
    for module in ("rpcgen", "cricket.rpc"):
        tool = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True)
        assert tool.returncode == 0 and f"examples:\n  python -m {module}" in tool.stdout, tool.stdout
