"""The server status as text: a header (version, pid, uptime, backends, devices) and one table row
per session. ``cricket status`` prints it once, ``cricket top`` with call rates, refreshing."""
from __future__ import annotations

from typing import Any

from ..cudafacts import curesult

COLUMNS = ("SESSION", "PEER", "CLIENT", "BACKEND", "UP", "MEMORY", "ALLOCS", "MODULES", "STREAMS",
           "CALLS", "CALLS/S", "TO DEVICE", "FROM DEVICE", "KERNELS", "KERNEL TIME")


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""    # unreachable


def duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def header(status: dict[str, Any], address: str) -> list[str]:
    backends = ", ".join(f"{b['type']} ({b['reason']})" for b in status["backends"]) or "none"
    devices = "; ".join(f"{d['backend']} {d['index']}: {d['name']} ({size(d['total_memory'])})"
                        for d in status["devices"]) or "none"
    return [f"{status['server_version']} at {address}: server pid {status['pid']}, "
            f"up {duration(status['uptime_ms'] / 1000)}",
            f"backends: {backends}",
            f"devices: {devices}",
            f"sessions: {status['sessions_total']} (besides this one)"]


def rows(status: dict[str, Any], rates: dict[int, float] | None = None) -> list[tuple[str, ...]]:
    out = []
    for s in status["sessions"]:
        rate = (rates or {}).get(s["id"])
        out.append((str(s["id"]), s["peer"], s["client"] + (" (admin)" if s["admin"] else ""),
                    f"{s['backend']}:{s['device']}", duration(s["seconds"]), size(s["memory"]),
                    str(s["allocations"]), str(s["modules"]), str(s["streams"]), str(s["calls"]),
                    "-" if rate is None else f"{rate:.1f}", size(s["bytes_htod"]), size(s["bytes_dtoh"]),
                    str(s["kernels"]), f"{s['kernel_us'] / 1e6:.3f} s"))
    return out


def table(lines: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in lines]


def render(status: dict[str, Any], address: str, rates: dict[int, float] | None = None) -> str:
    lines = header(status, address)
    body = rows(status, rates)
    if body:
        lines += [""] + table([COLUMNS, *body])
    errors = [s for s in status["sessions"] if s["last_error"]]
    if errors:
        lines.append("")
        for s in errors:
            lines.append(f"session {s['id']} last error: {curesult.error_name(s['last_error'])} "
                         f"({s['last_error']}): {s['last_error_message']}")
    return "\n".join(lines) + "\n"


def call_rates(before: dict[str, Any], after: dict[str, Any], seconds: float) -> dict[int, float]:
    """Calls per second of each session present in both reports."""
    earlier = {s["id"]: s["calls"] for s in before["sessions"]}
    return {s["id"]: (s["calls"] - earlier[s["id"]]) / seconds
            for s in after["sessions"] if s["id"] in earlier and seconds > 0}
