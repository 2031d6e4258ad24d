"""Run a CUDA program with its runtime-API calls executed by a cricket server.

    cricket run [--server ADDR] [--backend NAME] [--stats] -- CMD ARGS...

The program may link NVIDIA's runtime statically (nvcc's default; it then reaches cricket's
``libcuda.so.1`` replacement) or use the shared one (``nvcc -cudart shared``, or a Python program
that loads ``libcudart.so.13``, reaching cricket's runtime shim). With no ``--server`` (and no ``CRICKET_SERVER``) a local server is
started with the best backend available (``--backend`` picks one) and stopped afterwards. The exit
status is the program's (128 + N when signal N ended it).

SIGTERM, SIGINT and SIGHUP sent to ``cricket run`` reach the program as if it had been started
directly (one a terminal sends to its whole foreground group is not sent twice). Neither the
program nor the local server outlives ``cricket run``, even when SIGKILL ends it: the kernel then
sends them SIGTERM (``PR_SET_PDEATHSIG``).
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

from cricket._checkout import in_source_checkout
from cricket.client import driver_env
from cricket.client.tied_child import tied_preexec

log = logging.getLogger(__name__)

EXAMPLES = """\
examples:
  cricket run -- ./saxpy 1024               a local server with the best backend (cuda, else emu)
  cricket run --server gpuhost:20100 --stats -- python train.py
                                            the GPU of a running server; what ran where, at the end
"""

#: signals sent to ``cricket run`` that the program gets too
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: si_code of a signal the kernel sent, as a terminal does to its whole foreground process group
SI_KERNEL = 0x80

PACKAGE = Path(__file__).resolve().parents[1]
SHIM = PACKAGE / "_preload" / "libcricket-cudart.so"


class RunError(Exception):
    """``cricket run`` cannot start the program (missing shim, no Python runtime to embed)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--server", metavar="ADDR", default=os.environ.get("CRICKET_SERVER"),
                        help="HOST:PORT or Unix socket path of a running cricket server, or several "
                             "separated by commas (their devices as one list); default "
                             "$CRICKET_SERVER; none: start a local one")
    parser.add_argument("--backend", metavar="NAME", default=os.environ.get("CRICKET_BACKEND", ""),
                        help="backend to run on (emu, cuda); default: the server's best")
    parser.add_argument("--stats", action="store_true",
                        help="print what ran where and how long it took when the program ends")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS",
                        help="the program and its arguments")


def libpython() -> str | None:
    """The shared libpython of this interpreter, for native programs to embed (None if static)."""
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return None
    path = Path(sysconfig.get_config_var("LIBDIR")) / sysconfig.get_config_var("INSTSONAME")
    return str(path) if path.exists() else None


def program_environment(server: str, backend: str = "", stats: bool = False,
                        base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment that makes a program load the shim and reach ``server``."""
    if not SHIM.exists():
        # Never built here at run time: an installed package is what its build made.
        how = ("run `make build` in the checkout" if in_source_checkout()
               else "this installed cricket was built without it: build and install it again")
        raise RunError(f"the libcudart shim {SHIM} is not built; {how} (the build needs the "
                       f"CUDA 13 headers and cc)")
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONHOME", None)
    preload = [p for p in env.get("LD_PRELOAD", "").split(":") if p and p != str(SHIM)]
    env["LD_PRELOAD"] = ":".join([str(SHIM), *preload])
    # nvcc's default static cudart, CuPy, cuda-python and -lcuda programs reach the GPU through
    # libcuda.so.1: the replacement goes first on the loader's path (the application only; the
    # server was started before, without it)
    if driver_env.available():
        env = driver_env.application_environment(env)
    env["CRICKET_SERVER"] = server
    env["CRICKET_PYTHON"] = sys.executable
    paths = [str(PACKAGE.parent), *[p for p in env.get("CRICKET_PYTHONPATH", "").split(os.pathsep) if p]]
    env["CRICKET_PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    # A Python program started by the command must find this cricket too.
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(
        [str(PACKAGE.parent), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]))
    lib = libpython()
    if lib:
        env["CRICKET_LIBPYTHON"] = lib
    else:
        log.warning("this Python (%s) has no shared libpython: native programs cannot start the "
                    "cricket client; use a Python built with --enable-shared", sys.executable)
    if backend:
        env["CRICKET_BACKEND"] = backend
    if stats:
        env["CRICKET_STATS"] = "1"
    return env


class _Relay(threading.Thread):
    """Copies the local server's log (its warnings and errors, so a failing server says why) to our
    stderr as it grows. Kernel printf lines are not there: the program fetches and prints them to
    its own stdout (cricket.client.device_output)."""

    def __init__(self, local: object) -> None:
        super().__init__(name="cricket-server-output", daemon=True)
        self.local = local
        self.done = threading.Event()
        self.sent = 0

    def run(self) -> None:
        while not self.done.wait(0.05):
            self.flush()

    def flush(self) -> None:
        text = self.local.output()
        if len(text) > self.sent:
            new = text[self.sent:]
            if self.sent == 0 and new.startswith("cricket server listening"):
                if "\n" not in new:
                    return
                self.sent = text.index("\n") + 1
                new = text[self.sent:]
            self.sent = len(text)
            try:
                sys.stderr.write(new)
                sys.stderr.flush()
            except (OSError, ValueError):     # our stderr was closed: the log stays in the file
                self.done.set()

    def stop(self) -> None:
        self.done.set()
        self.join()
        self.flush()


def run(command: list[str], server: str | None = None, backend: str = "", stats: bool = False) -> int:
    """Run ``command`` through cricket and return its exit status."""
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise RunError("no command given: cricket run [--server ADDR] -- CMD ARGS...")
    # In the main thread the signals to pass on are held from here (before any thread starts, so
    # no other thread takes them) and taken one by one while the program runs; elsewhere the mask
    # would be that thread's only, so the program is just waited for.
    if threading.current_thread() is not threading.main_thread():
        return _run(command, server, backend, stats, forwarding=False)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {*FORWARDED, signal.SIGCHLD})
    try:
        return _run(command, server, backend, stats, forwarding=True)
    finally:
        while _pending(FORWARDED):        # taken here, not raised once unblocked
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _run(command: list[str], server: str | None, backend: str, stats: bool, forwarding: bool) -> int:
    local = relay = None
    started = time.monotonic()
    if server:
        from cricket.client.servers import parse_servers
        try:
            parse_servers(server)
        except ValueError as exc:
            raise RunError(f"--server: {exc}") from None
    if not server:
        from cricket.client.local_server import LocalServer
        # unbuffered: the server's log lines reach the terminal while the program runs
        local = LocalServer([backend] if backend else None, env={"PYTHONUNBUFFERED": "1"}, tied=True)
        server = local.address
        relay = _Relay(local)
        relay.start()
    try:
        env = program_environment(server, backend, stats)
        if stats:
            where = f"a local server (server pid {local.process.pid})" if local else f"the server at {server}"
            _say(f"[cricket] running {' '.join(command)} on {where}"
                 f"{f' (backend {backend})' if backend else ''}")
        early = _pending(FORWARDED) if forwarding else None
        if early:                             # it came while the local server started
            return 128 + early
        try:
            proc = subprocess.Popen(command, env=env, preexec_fn=tied_preexec() if forwarding else None)
        except OSError as exc:
            raise RunError(f"cannot start {command[0]}: {exc}") from exc
        status = _wait_forwarding(proc) if forwarding else proc.wait()
        if stats:
            _say(f"[cricket] {command[0]} exited with status {status} after "
                 f"{time.monotonic() - started:.3f} s wall")
        return 128 - status if status < 0 else status
    finally:
        if local is not None:
            relay.stop()
            local.stop()


def _say(text: str) -> None:
    """One line on stderr; a closed stderr does not end the program's run."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _pending(signals: tuple[int, ...]) -> int | None:
    """Take one of ``signals`` that is pending; its number, or None."""
    info = signal.sigtimedwait(signals, 0)
    return info.si_signo if info else None


def _wait_forwarding(proc: subprocess.Popen) -> int:
    """Wait for ``proc`` while passing on the signals sent to us; its wait status."""
    watched = {*FORWARDED, signal.SIGCHLD}
    while (status := proc.poll()) is None:
        info = signal.sigtimedwait(watched, 1.0)   # the timeout only guards a lost SIGCHLD
        if info is None or info.si_signo == signal.SIGCHLD:
            continue
        if info.si_code == SI_KERNEL:
            continue        # a terminal's ^C or hangup: the program, in our group, has it already
        log.info("passing signal %d on to %s", info.si_signo, proc.pid)
        try:
            proc.send_signal(info.si_signo)
        except ProcessLookupError:
            pass
    return status


def main(args: argparse.Namespace) -> int:
    try:
        return run(list(args.command), args.server, args.backend, args.stats)
    except RunError as exc:
        _say(f"cricket run: {exc}")
        return 2
    except Exception as exc:                  # the local server failed to start, for one
        _say(f"cricket run: {exc}")
        return 2
