"""``cricket server --metrics HOST:PORT``: the server's figures in the Prometheus text format.

The figures are read from :mod:`cricket.server.stats` and the live sessions when Prometheus
scrapes (a collector), so serving calls costs nothing extra for it. Needs ``prometheus_client``
(``pip install 'cricket[metrics]'``).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .service import CricketService

log = logging.getLogger(__name__)


class MetricsUnavailable(Exception):
    """prometheus_client is not installed, or the address cannot be served."""


class ServerCollector:
    """A prometheus_client collector over one server's service."""

    def __init__(self, service: CricketService) -> None:
        self.service = service

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
        service = self.service
        stats = service.stats
        sessions, calls, copied = service.snapshot()

        yield GaugeMetricFamily("cricket_sessions", "Client sessions connected now",
                                value=sum(not s.closed for s in sessions))
        yield CounterMetricFamily("cricket_sessions_opened", "Client sessions opened since start",
                                  value=service.counters["sessions_opened"])
        yield GaugeMetricFamily("cricket_uptime_seconds", "Seconds since the server started",
                                value=stats.uptime)

        for s in sessions:
            calls.update(dict(s.stats.calls))
            copied.update(dict(s.stats.copied))
        family = CounterMetricFamily("cricket_calls", "Calls served, by procedure", labels=["procedure"])
        for name, count in sorted(calls.items()):
            family.add_metric([name], count)
        yield family

        family = HistogramMetricFamily("cricket_call_duration_seconds",
                                       "Time from a call's arrival to its reply, by procedure "
                                       "(calls that send no reply are not timed)", labels=["procedure"])
        for name, latency in sorted(list(stats.latency.items())):
            buckets = [("+Inf" if b == float("inf") else repr(b), n) for b, n in latency.cumulative()]
            family.add_metric([name], buckets, latency.sum)
        yield family

        family = CounterMetricFamily("cricket_copied_bytes", "Bytes copied, by direction (htod, dtoh, "
                                     "dtod) and path (socket, shm, device)", labels=["direction", "path"])
        for (direction, path), count in sorted(copied.items()):
            family.add_metric([direction, path], count)
        yield family

        kernels = CounterMetricFamily("cricket_kernels", "Kernels launched, by backend", labels=["backend"])
        seconds = CounterMetricFamily("cricket_kernel_seconds", "Time the backend spent in kernel "
                                      "launches, by backend", labels=["backend"])
        for backend in sorted(stats.kernels):
            kernels.add_metric([backend], stats.kernels[backend])
            seconds.add_metric([backend], stats.kernel_seconds[backend])
        yield kernels
        yield seconds

        family = CounterMetricFamily("cricket_errors", "Calls that failed, by CUDA error", labels=["code"])
        for code, count in sorted(dict(stats.errors).items()):
            family.add_metric([code], count)
        yield family

        family = GaugeMetricFamily("cricket_session_memory_bytes", "Device memory each session holds",
                                   labels=["session", "peer"])
        for s in sessions:
            if not s.closed:
                family.add_metric([str(s.id), s.peer], s.allocations.total_bytes)
        yield family


class MetricsServer:
    """The HTTP endpoint (prometheus_client's, on its own thread)."""

    def __init__(self, service: CricketService, host: str, port: int) -> None:
        try:
            from prometheus_client import CollectorRegistry, start_http_server
        except ImportError:
            raise MetricsUnavailable("--metrics needs prometheus_client: pip install "
                                     "'cricket[metrics]' (or prometheus_client)") from None
        registry = CollectorRegistry()
        registry.register(ServerCollector(service))
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
