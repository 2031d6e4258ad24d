"""``CRICKET_STATS`` (``cricket run --stats``): at exit, what the program did through cricket, each
figure with its unit or name, and the server's side of it (kernel time, calls by procedure)."""
from __future__ import annotations

import sys
import time
from typing import Any

PREFIX = "[cricket] "


def report(stats: Any, conn: Any) -> None:
    """Print the summary of ``stats`` (cricket.client.runtime.Stats) for the session ``conn``."""
    try:
        server = conn.session_stats()
    except Exception:                    # the summary goes out anyway, without the server's part
        server = None
    lines = summary_lines(stats, conn, server, time.monotonic() - stats.started)
    out = conn.output
    lines.append(f"device printf: {out.fetches} fetch(es), {out.dropped} line(s) lost")
    for line in lines:
        print(PREFIX + line, file=sys.stderr, flush=True)


def summary_lines(stats: Any, conn: Any, server: dict[str, int] | None, wall: float) -> list[str]:
    first = (f"{stats.launches} kernel launch(es), {stats.bytes_htod} B to and {stats.bytes_dtoh} B from "
             f"the device, {stats.modules_loaded} module(s) ({stats.images_sent} image(s) sent), "
             f"on {conn.backend} via {conn.server} at {conn.address}, {wall:.3f} s wall")
    if server is None:
        return [first]
    first += f", {server.get('streams', 0)} stream(s) open"
    calls = sorted(((k[len("calls."):], v) for k, v in server.items() if k.startswith("calls.")),
                   key=lambda kv: (-kv[1], kv[0]))
    second = (f"server session {server.get('session', '?')}: {server.get('kernel_us', 0) / 1e6:.3f} s kernel "
              f"time in {server.get('kernels', 0)} kernel(s); calls by function: "
              + (", ".join(f"{name} {count}" for name, count in calls) or "none"))
    return [first, second]
