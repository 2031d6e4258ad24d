"""Processes the benches talk to: a ``cricket server`` on TCP loopback, and a raw-socket peer."""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class CricketServer:
    """``python -m cricket server --listen 127.0.0.1:0 --backend NAME``; ``address`` once ready."""

    def __init__(self, backend: str, *args: str, start_timeout: float = 60.0) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="cricket-bench-srv-")
        ready = Path(self._dir.name) / "ready"
        self._log = open(Path(self._dir.name) / "server.log", "wb")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cricket", "server", "--listen", "127.0.0.1:0", "--backend", backend,
             "--ready-file", str(ready), *args], stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + start_timeout
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                log = (Path(self._dir.name) / "server.log").read_text(errors="replace")
                raise RuntimeError(f"cricket server --backend {backend} did not start:\n{log[-2000:]}")
            time.sleep(0.02)
        text = ready.read_text().strip()
        host, _, port = text.rpartition(":")
        self.address = f"{host.strip('[]')}:{port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        self._dir.cleanup()


# ---- raw socket peer: the ceiling a copy over TCP loopback can reach -------------------------
# Request: 1 byte op (U upload, D download) + 8 bytes size. Upload: the client sends size bytes,
# the peer answers one byte once all arrived. Download: the peer sends size bytes.

_HEADER = struct.Struct("!cQ")


def _recv_exactly(sock: socket.socket, view: memoryview) -> None:
    while view.nbytes:
        n = sock.recv_into(view)
        if n == 0:
            raise ConnectionError("peer closed")
        view = view[n:]


def _peer(listener: socket.socket) -> None:
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(1 << 20)
    out = bytes(64 << 20)
    head = bytearray(_HEADER.size)
    try:
        while True:
            _recv_exactly(conn, memoryview(head))
            op, size = _HEADER.unpack(head)
            if op == b"U":
                left = size
                while left:
                    n = conn.recv_into(buf, min(left, len(buf)))
                    if n == 0:
                        return
                    left -= n
                conn.sendall(b"k")
            else:
                conn.sendall(memoryview(out)[:size])
    except ConnectionError:
        return


class RawSocketPeer:
    """A child process that sinks uploads and sources downloads over one TCP connection."""

    def __init__(self) -> None:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        self.address = listener.getsockname()
        pid = os.fork()
        if pid == 0:                       # child: serve one connection, then leave
            try:
                _peer(listener)
            finally:
                os._exit(0)
        self.pid = pid
        listener.close()
        self.sock = socket.create_connection(self.address)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._ack = bytearray(1)

    def upload(self, data: memoryview) -> None:
        self.sock.sendall(_HEADER.pack(b"U", data.nbytes))
        self.sock.sendall(data)
        _recv_exactly(self.sock, memoryview(self._ack))

    def download(self, into: memoryview) -> None:
        self.sock.sendall(_HEADER.pack(b"D", into.nbytes))
        _recv_exactly(self.sock, into)

    def close(self) -> None:
        self.sock.close()
        os.waitpid(self.pid, 0)
