"""Kernels that never end, and a look at the server's kernel worker processes, for the kernel tests."""
import os
import time
from pathlib import Path

# forever, fill, nothing and count: see the comments in the file.
PTX = (Path(__file__).resolve().parents[2] / "examples" / "endless_kernels.ptx").read_bytes()

LAUNCH_TIMEOUT = 702          # cudaErrorLaunchTimeout (the driver's CUDA_ERROR_LAUNCH_TIMEOUT)


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()       # fields from the state on


def descendants(pid: int, below: int = 0) -> list[int]:
    """Every live process under ``pid`` (for a server: the kernel zygote and its workers), or with
    ``below=1`` those under its children (the workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [(pid, 0)]
    while todo:
        parent, depth = todo.pop()
        for child in children.get(parent, []):
            if depth >= below:
                found.append(child)
            todo.append((child, depth + 1))
    return found


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a live process, None when it is gone."""
    fields = _stat(pid)
    if fields is None or fields[0] == "Z":
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_workers(server, count: int = 1, timeout: float = 120) -> list[int]:
    """Wait until ``count`` kernel workers of the server each used over 0.1 s of CPU; their pids."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [p for p in descendants(server.process.pid, below=1) if (cpu_seconds(p) or 0) > 0.1]
        if len(busy) >= count:
            return busy
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} kernel workers got busy: {descendants(server.process.pid)}")


def gone(pid: int, timeout: float = 30) -> bool:
    """Whether the process ``pid`` ended (and so stopped using CPU) before ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cpu_seconds(pid) is None:
            return True
        time.sleep(0.05)
    return False
