"""Emulated kernels in worker processes, so that they can be stopped and cannot starve the server.

A server's event loop and its sessions' kernels must not share one interpreter: a spinning kernel
would hold the GIL against every other client, and a thread cannot be stopped. Instead each device
that runs kernels gets a worker process of its own:

- one *zygote* process per backend, started once, imports NumPy and the emulator and forks a
  worker for each device on request (a fork of an idle single-threaded process is cheap and safe);
- the device's arena is a memfd mapped shared by the server and its worker, passed to the worker
  with ``SCM_RIGHTS``; copies stay in the server, kernels run in the worker on the same bytes;
- each launch sends the kernel (the module's PTX texts once per worker), the allocation table when
  it changed, and the launch configuration; device printf lines come back as they are written, then
  the counts or the error with its details, then the allocation table if the kernel changed it;
- stopping a kernel is ``SIGKILL`` through a pidfd (never a reused pid); the device forks a fresh
  worker at its next launch. Workers die with the zygote (``PR_SET_PDEATHSIG``), and the zygote
  when the server's end of its socket closes, so nothing outlives a killed server.

The server trusts its worker less than the worker trusts the server: server→worker messages are
pickles, worker→server messages JSON of bounded length, so a worker subverted by a hostile kernel
cannot run code in the server.
"""
from __future__ import annotations

import array
import ctypes
import json
import logging
import os
import pickle
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np

from .executor import block_threads, grid_ctas
from .errors import CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_OUT_OF_MEMORY, EmuError
from .device_launch import queue_launches, take_launches
from .heap import adopt_heap, heap_state

log = logging.getLogger(__name__)

_HEADER = struct.Struct("<Q")
MAX_REPLY = 64 << 20            # longest message the server accepts from a worker
MAX_FDS = 16                    # descriptors one message may carry (a device's peers' arenas)
TIMEOUT_GRACE = 1.0             # seconds the worker gets to report its own launch timeout first
_ZYGOTE_FD = "CRICKET_EMU_ZYGOTE_FD"
KERNEL_NICE = 10                # workers' niceness: the event loop wins the CPU when it wants it, and
                                # kernels still get a share beside other busy programs of the host
_PR_SET_PDEATHSIG = 1


# ---- framing: a length header, then the body; descriptors ride on the header -------------------

def _send(sock: socket.socket, body: bytes, fds: tuple[int, ...] = ()) -> None:
    header = _HEADER.pack(len(body))
    if fds:
        sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        sock.sendall(body)
    else:
        sock.sendall(header + body)


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            raise EOFError("the peer closed the connection")
        got += k
    return buf


def _recv(sock: socket.socket, limit: int | None = None) -> tuple[bytes, list[int]]:
    """One message and the descriptors that came with it; EOFError when the peer is gone."""
    fds: list[int] = []
    head = b""
    while len(head) < _HEADER.size:
        data, ancillary, _, _ = sock.recvmsg(_HEADER.size - len(head), socket.CMSG_SPACE(4 * MAX_FDS))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", payload[:len(payload) - len(payload) % 4]))
        if not data:
            for fd in fds:
                os.close(fd)
            raise EOFError("the peer closed the connection")
        head += data
    (n,) = _HEADER.unpack(head)
    if limit is not None and n > limit:
        raise EOFError(f"a {n}-byte message exceeds the {limit}-byte limit")
    return bytes(_recv_exact(sock, n)), fds


def _die_with_parent() -> None:
    """Have the kernel send SIGKILL to this process when its parent exits."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        log.debug("prctl(PR_SET_PDEATHSIG) unavailable")


# ---- the server's side ---------------------------------------------------------------------

class WorkerProcess:
    """One forked worker: its socket and a pidfd to kill it by."""

    def __init__(self, sock: socket.socket, pid: int) -> None:
        self.sock = sock
        self.pid = pid
        self.pidfd: int | None = None
        try:
            self.pidfd = os.pidfd_open(pid)
        except OSError as exc:       # gone already, or a kernel without pidfds (before Linux 5.3)
            log.debug("no pidfd for worker %d (%s): killing it by pid", pid, exc)

    def kill(self) -> None:
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            elif self.pid:
                os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        self.kill()
        self.pid = 0                 # dead now: its number may go to another process
        self.sock.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class KernelWorkers:
    """A backend's zygote process, which forks a kernel worker for each device that asks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._zygote: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self.closed = False

    def start(self) -> None:
        """Start the zygote now (it imports NumPy and the emulator: a few hundred ms)."""
        with self._lock:
            self._ensure_zygote()

    def _ensure_zygote(self) -> None:
        if self.closed:
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, "the emu backend is shutting down")
        if self._zygote is not None and self._zygote.poll() is None:
            return
        if self._sock is not None:
            self._sock.close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # One worker is one core: no BLAS or OpenMP thread pools inside it (unless the operator says).
        env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **os.environ,
               _ZYGOTE_FD: str(theirs.fileno()), "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self._zygote = subprocess.Popen([sys.executable, "-m", __name__], pass_fds=[theirs.fileno()],
                                            env=env, stdin=subprocess.DEVNULL)
        except OSError as exc:
            ours.close()
            raise EmuError(CUDA_ERROR_OUT_OF_MEMORY, f"cannot start the emu kernel worker process: {exc}") from exc
        finally:
            theirs.close()
        self._sock = ours
        log.info("emu kernel zygote started (pid %d)", self._zygote.pid)

    def spawn(self) -> WorkerProcess:
        """A new worker process, connected to us by its own socket."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                for attempt in (0, 1):          # a zygote that died is started again once
                    self._ensure_zygote()
                    try:
                        _send(self._sock, b"fork", (theirs.fileno(),))
                        reply, _ = _recv(self._sock, 4096)
                        break
                    except (OSError, EOFError):
                        if attempt:
                            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, "the emu kernel zygote does not answer")
                        self._zygote.kill()
                        self._zygote.wait()
        finally:
            theirs.close()
        return WorkerProcess(ours, int(json.loads(reply)["pid"]))

    def remote(self, arena, max_split: int = 1) -> "RemoteKernels":
        return RemoteKernels(self, arena, max_split)

    def close(self) -> None:
        """Stop the zygote; its workers die with it."""
        with self._lock:
            self.closed = True
            if self._zygote is not None:
                self._zygote.kill()
                self._zygote.wait()
            if self._sock is not None:
                self._sock.close()


class _Peer:
    """One worker process of a device, and what it was sent."""

    def __init__(self, proc: WorkerProcess) -> None:
        self.proc = proc
        self.sent: set[str] = set()            # module digests whose PTX the worker has
        self.version = -1                       # the arena table version the worker has
        self.peers: list = []                   # the peer arenas the worker maps (peer access)
        self.peer_versions: dict[int, int] = {}     # their table versions it has, by base


# Instructions that keep a kernel in one worker, its CTAs in order: atomics on global memory (not
# atomic across processes), calls left after inlining, device malloc/free (the allocation table),
# printf and assert (their lines in CTA order, as one process writes them), device-side launches.
_ATOMIC_OPS = frozenset({"atom", "red"})
_ONE_WORKER_OPS = frozenset({"call", "vprintf", "assertfail", "malloc", "free", "device_runtime"})


def splittable(ir) -> bool:
    """Whether the CTAs of a kernel may run in several processes at once."""
    for block in ir.blocks:
        for ins in block.instrs:
            if ins.op in _ONE_WORKER_OPS or (ins.op in _ATOMIC_OPS and "shared" not in ins.mods):
                return False
    return True


# A launch this small whose kernel cannot loop runs in the calling process instead of a worker:
# its work is bounded (each block runs at most once per batch), so it needs no cancelling, and
# it saves the hand-off to the worker and back (issue 21: empty launch + sync; a SCHED_IDLE worker
# may also wait long for a CPU on a busy host).
# At most about a millisecond of the server's CPU (1024 straight-line instructions over 1024
# threads: 0.9 ms measured; 4096 x 4096 took 13 ms, too long to hold the server's interpreter).
INLINE_THREADS = 1024          # threads of the whole grid
INLINE_INSTRUCTIONS = 1024     # instructions of the kernel


def loop_free(ir) -> bool:
    """Whether every branch of a kernel goes forward and it makes no real calls, so that it ends
    after each block ran at most once per batch; device malloc and printf are left to workers."""
    if ir.calls is not None:
        return False
    for block in ir.blocks:
        for nxt in (block.target, block.fallthrough):
            if nxt != -1 and nxt <= block.index:
                return False
        for ins in block.instrs:
            if ins.op in _ONE_WORKER_OPS or ins.op == "brx":
                return False
    return True


class RemoteKernels:
    """A device's kernels in its worker processes: one, forked at the first launch (again after a
    kill), and up to ``max_split`` for a launch of many CTAs whose kernel allows it (issue 21: a
    large kernel on every core). A CTA never spans workers: each runs whole batches of CTAs."""

    def __init__(self, workers: KernelWorkers, arena, max_split: int = 1) -> None:
        self.workers = workers
        self.arena = arena
        self.max_split = max(1, max_split)
        self._peers: list[_Peer] = []
        self._splittable: dict[tuple[str, str], bool] = {}
        self._inline: dict[tuple[str, str], bool] = {}
        self._cancelled = False                 # for good: the device's session is closing

    def _peer(self, k: int) -> _Peer:
        while len(self._peers) <= k:
            if self._cancelled:
                raise EOFError("cancelled")
            proc = self.workers.spawn()
            try:
                _send(proc.sock, pickle.dumps({"op": "attach", "size": self.arena.size,
                                                        "base": self.arena.base}), (self.arena.fd,))
            except OSError:
                proc.close()
                raise
            self._peers.append(_Peer(proc))
            if self._cancelled:           # kill() ran while this one was forked: it missed it
                proc.kill()
        return self._peers[k]

    def runs_inline(self, function, grid, block, threads: int = INLINE_THREADS,
                    instructions: int = INLINE_INSTRUCTIONS) -> bool:
        """Whether a launch of ``function`` over ``grid`` x ``block`` is one to run in the calling
        process: at most ``threads`` threads, a kernel of at most ``instructions`` that cannot
        loop (see :func:`loop_free`)."""
        ir = function.ir
        if grid_ctas(grid) * block_threads(block) > threads or ir.source_count > instructions:
            return False
        key = (function.module.hash, function.name)
        ok = self._inline.get(key)
        if ok is None:
            ok = self._inline[key] = loop_free(ir)
        return ok

    def concurrency(self, function, cfg) -> int:
        """How many batches of this launch run at once (one per worker it is spread over)."""
        return len(self._parts(function, cfg))

    def _parts(self, function, cfg) -> list[tuple[int, int] | None]:
        """The CTA ranges of one launch, one per worker (whole batches each)."""
        from .executor import ctas_per_batch, grid_ctas
        if self.max_split < 2:
            return [None]
        n = grid_ctas(cfg.grid)
        per = ctas_per_batch(function.ir, cfg)
        batches = -(-n // per)
        if batches < 2:
            return [None]
        key = (function.module.hash, function.name)
        ok = self._splittable.get(key)
        if ok is None:
            ok = self._splittable[key] = splittable(function.ir)
        if not ok:
            return [None]
        k = min(self.max_split, batches)
        edges = [min(n, (i * batches // k) * per) for i in range(k)] + [n]
        return [(edges[i], edges[i + 1]) for i in range(k)]

    def run(self, function, cfg, timeout: float | None, peer_arenas: list | None = None) -> dict:
        """Run one launch in the worker(s); returns its counts, raises its EmuError. ``peer_arenas``:
        the arenas of other devices the kernel may reach (peer access)."""
        parts = self._parts(function, cfg)
        module = function.module
        digest = module.hash
        base = {"op": "launch", "digest": digest, "name": function.name, "globals": module.global_addrs.tobytes(),
                "grid": cfg.grid, "block": cfg.block, "shared": cfg.dynamic_shared, "params": bytes(cfg.params),
                "max_lanes": cfg.max_lanes, "max_steps": cfg.max_steps, "timeout": timeout, "grid_id": cfg.grid_id,
                "depth": getattr(self.arena, "grid_depth", 0),
                "local_limit": cfg.local_limit, "workspace": cfg.grid_workspace}
        replies: list[dict | None] = [None] * len(parts)
        try:
            peers = [self._peer(k) for k in range(len(parts))]
            for peer, ctas in zip(peers, parts):
                self._send_peers(peer, peer_arenas or [])
                request = dict(base, ctas=ctas, sources=None if digest in peer.sent else module.sources,
                               state=None if peer.version == self.arena.version else self.arena.state(),
                               heap=heap_state(self.arena), peer_states=self._peer_states(peer))
                _send(peer.proc.sock, pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
                peer.sent.add(digest)
                peer.version = self.arena.version
            self._collect(peers, replies, cfg.sink, None if timeout is None else timeout + TIMEOUT_GRACE)
        except socket.timeout:
            self._lost()
            raise EmuError(CUDA_ERROR_LAUNCH_TIMEOUT, f"kernel ran longer than the {timeout:g} s kernel timeout "
                                                      "and was stopped", kernel=function.name) from None
        except (OSError, EOFError, ValueError) as exc:
            self._lost()
            if self._cancelled:
                raise EmuError(CUDA_ERROR_LAUNCH_FAILED, "the kernel was cancelled (its session is closing)",
                               kernel=function.name) from None
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"the emu kernel worker process was lost ({exc})",
                           kernel=function.name) from None
        stats: dict[str, Any] = {}
        for peer, reply in zip(peers, replies):
            if reply.get("state") is not None:
                self.arena.load_state(reply["state"])
                peer.version = self.arena.version
            if isinstance(reply.get("heap"), dict):       # kernels using malloc run in one worker
                adopt_heap(self.arena, reply["heap"])
            queue_launches(self.arena, reply.get("launches"))    # and those launching kernels
        for reply in replies:
            error = reply.get("error")
            if error is not None:
                raise EmuError(int(error["code"]), str(error["message"]), kernel=error.get("kernel"),
                               instruction=error.get("instruction"), source=error.get("source"))
            for key, value in reply["stats"].items():
                if isinstance(value, (int, float)):
                    stats[key] = max(stats.get(key, 0), value) if key == "lanes_per_batch" else \
                        stats.get(key, 0) + value
        stats["workers"] = len(parts)
        return stats

    @staticmethod
    def _send_peers(peer: _Peer, arenas: list) -> None:
        """Have the worker map ``arenas`` (their memfds) beside its own, where it maps others."""
        if len(arenas) == len(peer.peers) and all(a is b for a, b in zip(arenas, peer.peers)):
            return
        _send(peer.proc.sock, pickle.dumps({"op": "peers", "arenas": [(a.size, a.base) for a in arenas]}),
              tuple(a.fd for a in arenas))
        peer.peers = list(arenas)
        peer.peer_versions = {}

    @staticmethod
    def _peer_states(peer: _Peer) -> dict[int, tuple]:
        """The allocation tables of the worker's peer arenas that changed since it saw them."""
        states = {}
        for arena in peer.peers:
            if peer.peer_versions.get(arena.base) != arena.version:
                states[arena.base] = arena.state()
                peer.peer_versions[arena.base] = arena.version
        return states

    @staticmethod
    def _collect(peers: list[_Peer], replies: list, sink, timeout: float | None) -> None:
        """Read every worker's messages (printf lines to ``sink``) until each has answered."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            for k, peer in enumerate(peers):
                peer.proc.sock.settimeout(None)
                selector.register(peer.proc.sock, selectors.EVENT_READ, k)
            left = len(peers)
            while left:
                wait = None if deadline is None else deadline - time.monotonic()
                events = selector.select(wait) if wait is None or wait > 0 else []
                if not events:
                    raise socket.timeout("kernel timeout")
                for key, _ in events:
                    body, fds = _recv(key.fileobj, MAX_REPLY)
                    for fd in fds:
                        os.close(fd)
                    reply = json.loads(body)
                    if "out" in reply:
                        sink(str(reply["out"]))
                        continue
                    replies[key.data] = reply
                    selector.unregister(key.fileobj)
                    left -= 1

    def _lost(self) -> None:
        peers, self._peers = self._peers, []
        for peer in peers:
            peer.proc.close()

    def kill(self) -> None:
        """Stop the running kernel now and every later one (from any thread); the waiting launch
        raises."""
        self._cancelled = True
        for peer in list(self._peers):
            peer.proc.kill()

    def close(self) -> None:
        self._lost()


# ---- the worker's side ---------------------------------------------------------------------

class _Worker:
    """What one worker process holds: the device's arena and the PTX texts of its modules."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.arena = None
        self.peers: dict[int, Any] = {}          # other devices' arenas by base (peer access)
        self.sources: dict[str, list[str]] = {}
        self.kernels: dict[tuple[str, str], Any] = {}     # (digest, name) -> compiled kernel

    def serve(self) -> None:
        while True:
            try:
                body, fds = _recv(self.sock)
            except EOFError:
                return
            msg = pickle.loads(body)
            if msg["op"] == "attach":
                from .memory import DeviceArena
                self.arena = DeviceArena(msg["size"], fd=fds[0], base=msg["base"])
            elif msg["op"] == "peers":
                self.map_peers(msg["arenas"], fds)
            elif msg["op"] == "launch":
                self._send(self.launch(msg))

    def map_peers(self, arenas: list[tuple[int, int]], fds: list[int]) -> None:
        """Map the peer arenas the server sent (size, base; their memfds in ``fds``) instead."""
        from .memory import DeviceArena
        self.arena.set_peers([])
        for old in self.peers.values():
            old.close()
        self.peers = {base: DeviceArena(size, fd=fd, base=base) for (size, base), fd in zip(arenas, fds)}
        self.arena.set_peers(list(self.peers.values()))

    def _send(self, reply: dict) -> None:
        _send(self.sock, json.dumps(reply).encode())

    def _print(self, text: str) -> None:
        self._send({"out": text})

    def launch(self, msg: dict) -> dict:
        from .device import compiled_kernel, program_of
        from .executor import LaunchConfig, run_kernel
        arena = self.arena
        if msg["state"] is not None:
            arena.load_state(msg["state"])
        for base, state in (msg.get("peer_states") or {}).items():
            self.peers[base].load_state(state)
        adopt_heap(arena, msg.get("heap"))
        arena.grid_depth = msg.get("depth", 0)
        before = arena.version
        digest = msg["digest"]
        if msg["sources"] is not None:
            self.sources[digest] = msg["sources"]
        reply: dict[str, Any] = {}
        try:
            kernel = self.kernels.get((digest, msg["name"]))
            if kernel is None:              # Program.kernel builds the IR anew: once per worker
                ir = program_of(self.sources[digest], digest).kernel(msg["name"])
                kernel = self.kernels[digest, msg["name"]] = compiled_kernel(digest, msg["name"], ir)
            cfg = LaunchConfig(msg["grid"], msg["block"], msg["shared"], msg["params"], msg["max_lanes"],
                               self._print, msg["max_steps"], msg["timeout"], msg["grid_id"], msg["ctas"],
                               msg.get("local_limit"), msg["workspace"])
            stats = run_kernel(kernel, arena, np.frombuffer(msg["globals"], dtype=np.uint64), cfg)
            reply["stats"] = stats
        except EmuError as e:
            reply["error"] = {"code": e.code, "message": e.message, "kernel": e.kernel,
                              "instruction": e.instruction, "source": e.source}
        except MemoryError as e:
            reply["error"] = {"code": CUDA_ERROR_OUT_OF_MEMORY, "kernel": msg["name"],
                              "message": f"host memory exhausted while running {msg['name']}: {e}; "
                                         "use a smaller max_lanes"}
        except Exception as e:  # an emulator bug fails the launch, never the worker
            log.debug("internal error in %s", msg["name"], exc_info=True)
            reply["error"] = {"code": CUDA_ERROR_LAUNCH_FAILED, "kernel": msg["name"],
                              "message": f"internal emulator error ({type(e).__name__}: {e})"}
        reply["launches"] = take_launches(arena)      # frees unlaunched buffers: before the state
        if arena.version != before:
            reply["state"] = arena.state()
        reply["heap"] = heap_state(arena)
        return reply


def _zygote(sock: socket.socket) -> None:
    """Fork a worker for each descriptor the server sends; answer with its pid."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)        # the kernel reaps the workers
    while True:
        try:
            _, fds = _recv(sock, 4096)
        except EOFError:
            return
        if not fds:
            continue
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                _die_with_parent()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _Worker(socket.socket(fileno=fds[0])).serve()
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        _send(sock, json.dumps({"pid": pid}).encode())


def main() -> None:
    # No PR_SET_PDEATHSIG here: it follows the *thread* that started us (a session's, which ends
    # with its session). The zygote ends at EOF on its socket instead, which the server's exit
    # closes; the workers follow the zygote (it is single-threaded, so their death signal holds).
    # Ctrl-C reaches the whole process group: the server decides what stops, not the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Kernels yield the CPU to the server's event loop (and to everything else interactive).
    # SCHED_IDLE: a worker runs only on CPU time nothing else of the host wants, so four endless
    # kernels leave another session's small calls as fast as without them (bench/kernels.py); the
    # niceness stays where the policy cannot be set.
    os.nice(KERNEL_NICE)
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError) as exc:
        log.debug("kernel workers keep niceness %d (no SCHED_IDLE: %s)", KERNEL_NICE, exc)
    fd = int(os.environ.pop(_ZYGOTE_FD))
    # What every worker needs, imported once here rather than after each fork.
    from . import codegen, device, executor, memory  # noqa: F401
    _zygote(socket.socket(fileno=fd))


if __name__ == "__main__":
    main()
