"""``cricket server --metrics HOST:PORT``: the server's figures in the Prometheus text format.

The figures are read from :mod:`cricket.server.stats` and the live sessions when Prometheus
scrapes (a collector), so serving calls costs nothing extra for it. Needs ``prometheus_client``
(``pip install 'cricket[metrics]'``).
"""
from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .stats import LATENCY_BUCKETS

if TYPE_CHECKING:
    from .service import CricketService

log = logging.getLogger(__name__)


class MetricsUnavailable(Exception):
    """prometheus_client is not installed, or the address cannot be served."""


def figures(service: CricketService) -> dict[str, Any]:
    """One server process's figures, in plain values (the workers of ``--workers N`` send them as
    JSON to the process that serves the metrics, which adds them up with :func:`merge`)."""
    stats = service.stats
    sessions, calls, copied = service.snapshot()
    for s in sessions:
        calls.update(dict(s.stats.calls))
        copied.update(dict(s.stats.copied))
    return {
        "sessions": sum(not s.closed for s in sessions),
        "sessions_opened": service.counters["sessions_opened"],
        "uptime": stats.uptime,
        "calls": dict(calls),
        "latency": {name: [list(h.counts), h.sum] for name, h in list(stats.latency.items())},
        "copied": [[d, p, n] for (d, p), n in copied.items()],
        "kernels": dict(stats.kernels), "kernel_seconds": dict(stats.kernel_seconds),
        "errors": dict(stats.errors),
        "memory": [[s.id, s.peer, s.allocations.total_bytes] for s in sessions if not s.closed],
    }


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of several processes of one server as one server's."""
    out: dict[str, Any] = {"sessions": 0, "sessions_opened": 0, "uptime": 0.0, "latency": {},
                           "copied": [], "memory": []}
    counted = ("calls", "kernels", "kernel_seconds", "errors")
    totals: dict[str, Counter] = {key: Counter() for key in counted}
    copied: Counter = Counter()
    for part in parts:
        out["sessions"] += part["sessions"]
        out["sessions_opened"] += part["sessions_opened"]
        out["uptime"] = max(out["uptime"], part["uptime"])
        out["memory"] += part["memory"]
        for key in counted:
            totals[key].update(part[key])
        copied.update({(d, p): n for d, p, n in part["copied"]})
        for name, (counts, total) in part["latency"].items():
            mine = out["latency"].setdefault(name, [[0] * len(counts), 0.0])
            mine[0] = [a + b for a, b in zip(mine[0], counts)]
            mine[1] += total
    out.update({key: dict(totals[key]) for key in counted})
    out["copied"] = [[d, p, n] for (d, p), n in copied.items()]
    return out


class ServerCollector:
    """A prometheus_client collector over one server's figures (``source()``, read per scrape)."""

    def __init__(self, source: Callable[[], dict[str, Any]]) -> None:
        self.source = source

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
        f = self.source()

        yield GaugeMetricFamily("cricket_sessions", "Client sessions connected now", value=f["sessions"])
        yield CounterMetricFamily("cricket_sessions_opened", "Client sessions opened since start",
                                  value=f["sessions_opened"])
        yield GaugeMetricFamily("cricket_uptime_seconds", "Seconds since the server started",
                                value=f["uptime"])

        family = CounterMetricFamily("cricket_calls", "Calls served, by procedure", labels=["procedure"])
        for name, count in sorted(f["calls"].items()):
            family.add_metric([name], count)
        yield family

        family = HistogramMetricFamily("cricket_call_duration_seconds",
                                       "Time from a call's arrival to its reply, by procedure "
                                       "(calls that send no reply are not timed)", labels=["procedure"])
        bounds = [repr(b) for b in LATENCY_BUCKETS] + ["+Inf"]
        for name, (counts, total) in sorted(f["latency"].items()):
            family.add_metric([name], list(zip(bounds, itertools.accumulate(counts))), total)
        yield family

        family = CounterMetricFamily("cricket_copied_bytes", "Bytes copied, by direction (htod, dtoh, "
                                     "dtod) and path (socket, shm, device)", labels=["direction", "path"])
        for direction, path, count in sorted(f["copied"]):
            family.add_metric([direction, path], count)
        yield family

        kernels = CounterMetricFamily("cricket_kernels", "Kernels launched, by backend", labels=["backend"])
        seconds = CounterMetricFamily("cricket_kernel_seconds", "Time the backend spent in kernel "
                                      "launches, by backend", labels=["backend"])
        for backend in sorted(f["kernels"]):
            kernels.add_metric([backend], f["kernels"][backend])
            seconds.add_metric([backend], f["kernel_seconds"].get(backend, 0.0))
        yield kernels
        yield seconds

        family = CounterMetricFamily("cricket_errors", "Calls that failed, by CUDA error", labels=["code"])
        for code, count in sorted(f["errors"].items()):
            family.add_metric([code], count)
        yield family

        family = GaugeMetricFamily("cricket_session_memory_bytes", "Device memory each session holds",
                                   labels=["session", "peer"])
        for session_id, peer, held in f["memory"]:
            family.add_metric([str(session_id), peer], held)
        yield family


class MetricsServer:
    """The HTTP endpoint (prometheus_client's, on its own thread)."""

    def __init__(self, source: Callable[[], dict[str, Any]], host: str, port: int) -> None:
        try:
            from prometheus_client import CollectorRegistry, start_http_server
        except ImportError:
            raise MetricsUnavailable("--metrics needs prometheus_client: pip install "
                                     "'cricket[metrics]' (or prometheus_client)") from None
        registry = CollectorRegistry()
        registry.register(ServerCollector(source))
        try:
            self._httpd, self._thread = start_http_server(port, addr=host, registry=registry)
        except OSError as exc:
            raise MetricsUnavailable(f"--metrics {host}:{port}: cannot listen ({exc.strerror or exc}); "
                                     "choose another address") from None
        self.address = f"{host}:{self._httpd.server_port}"
        log.info("metrics at http://%s/metrics", self.address)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
