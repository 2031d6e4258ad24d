"""Kernels that never end, one that recurses deep, and a look at the server's kernel worker
processes, for the kernel tests."""
import os
import time
from pathlib import Path

# forever, fill, nothing and count: see the comments in the file.
PTX = (Path(__file__).resolve().parents[2] / "examples" / "endless_kernels.ptx").read_bytes()

# down(n) recurses n levels, each frame holding 1 KiB of local memory it writes and reads back.
RECURSION_PTX = b""".version 7.0
.target sm_75
.address_size 64
.func (.param .b32 r) down(.param .b32 n)
{
    .local .align 4 .b8 pad[1024];
    .reg .b32 %n, %m, %v, %w;
    .reg .b64 %a;
    .reg .pred %z;
    ld.param.u32 %n, [n];
    mov.u64 %a, pad;
    st.local.u32 [%a+1020], %n;
    setp.eq.u32 %z, %n, 0;
    @%z bra done;
    sub.u32 %m, %n, 1;
    {
    .param .b32 a0;
    st.param.b32 [a0], %m;
    .param .b32 r0;
    call (r0), down, (a0);
    ld.param.b32 %v, [r0];
    }
    ld.local.u32 %w, [%a+1020];
    add.u32 %n, %v, %w;
done:
    st.param.b32 [r], %n;
    ret;
}
.visible .entry depth(.param .u64 out, .param .u32 n)
{
    .reg .b32 %n, %v, %t;
    .reg .b64 %p, %o;
    ld.param.u32 %n, [n];
    mov.u32 %t, %tid.x;
    {
    .param .b32 a0;
    st.param.b32 [a0], %n;
    .param .b32 r0;
    call (r0), down, (a0);
    ld.param.b32 %v, [r0];
    }
    ld.param.u64 %p, [out];
    mul.wide.u32 %o, %t, 4;
    add.u64 %p, %p, %o;
    st.global.u32 [%p], %v;
    ret;
}
"""

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
