"""The PyTorch ladder on a GPU: each step natively and through `cricket run`, results compared.

    python bench/torch_gpu.py run [--backend cuda] [--reference native|cpu] [--python TORCH_PY]
                                  [--size gpu|tiny] [--steps NAME,...] [--out DIR]

Steps: elementwise ops, a reduction, a matmul, an ``nn.Linear`` forward and backward, ResNet-18
inference on random data (built here from ``torch.nn`` layers: torchvision may be missing and
nothing is downloaded). Each step runs in a worker process (``worker``, below), once natively on
the GPU (the reference) and once under ``cricket run --backend BACKEND``; this process needs only
NumPy and cricket, the workers' interpreter (``--python``) torch and, as any program under ``cricket
run`` that is Python, cricket's own dependencies (`make test-torch` makes such a venv). The report is a Markdown table (what, native ms,
cricket ms, ratio, largest difference, verdict) on stdout and in DIR/torch.md, with DIR/torch.json.

Inputs and weights are made on the CPU from a fixed seed, so both runs compute the same thing;
TF32 is off and cuDNN deterministic, so the same GPU gives equal results through cricket. Where no
GPU exists (``--reference cpu``) the reference is the CPU and the tolerance is a float32 one; a
step that cannot run through cricket (on emu: torch's SASS-only kernels, cudaErrorNoKernelImage)
is reported as not run, with torch's message, and does not stop the others.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("elementwise", "reduction", "matmul", "linear", "resnet18")
# (rtol, atol) when the reference ran on the same GPU (the same kernels: only a different
# algorithm choice could differ) and when it ran on the CPU (another summation order)
TOLERANCE = {"native": (1e-5, 1e-5), "cpu": (1e-3, 1e-3)}
# sizes per step: "gpu" to time something, "tiny" for emu (seconds per kernel on the CPU)
SIZES = {
    "gpu": {"elementwise": 1 << 24, "reduction": (4096, 4096), "matmul": 2048, "linear": (256, 1024, 4096),
            "resnet18": (8, 224)},
    "tiny": {"elementwise": 256, "reduction": (4, 64), "matmul": 8, "linear": (2, 8, 4), "resnet18": (1, 32)},
}


# ------------------------------------------------------------------ the steps (worker side)

def _resnet18(torch):
    """ResNet-18 (He et al. 2015: basic blocks, [2, 2, 2, 2], 1000 classes) from torch.nn layers."""
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.down is None else self.down(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + identity)

    layers, cin = [], 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                         nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(512, 1000))


def _prepare(torch, step: str, size, device: str):
    """(a function that runs the step once and returns its outputs, inputs on ``device``)."""
    torch.manual_seed(0)
    if step == "elementwise":
        x, y = torch.randn(size), torch.randn(size)
        x, y = x.to(device), y.to(device)
        return lambda: {"out": torch.sin(x) * y + 1}
    if step == "reduction":
        x = torch.randn(*size).to(device)
        return lambda: {"sum": x.sum(), "rows": x.sum(dim=1), "max": x.amax(dim=0)}
    if step == "matmul":
        a, b = torch.randn(size, size).to(device), torch.randn(size, size).to(device)
        return lambda: {"product": a @ b}
    if step == "linear":
        batch, cin, cout = size
        layer = torch.nn.Linear(cin, cout)
        x, g = torch.randn(batch, cin), torch.randn(batch, cout)
        layer, x, g = layer.to(device), x.to(device).requires_grad_(), g.to(device)

        def forward_backward():
            layer.zero_grad()
            x.grad = None
            y = layer(x)
            (y * g).sum().backward()
            return {"y": y.detach(), "x.grad": x.grad, "weight.grad": layer.weight.grad,
                    "bias.grad": layer.bias.grad}
        return forward_backward
    if step == "resnet18":
        batch, side = size
        model = _resnet18(torch).eval()
        x = torch.randn(batch, 3, side, side)
        model, x = model.to(device), x.to(device)

        def inference():
            with torch.no_grad():
                return {"logits": model(x)}
        return inference
    raise ValueError(f"unknown step {step!r}")


def worker(args: argparse.Namespace) -> int:
    """Run the steps on one device; after each, write DIR/STEP.npz (its outputs) and DIR/timings.json
    (every step so far), so that a worker stopped midway still reports the steps it finished."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    cuda = args.device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    out, timings = Path(args.out), {}
    for step in args.steps.split(","):
        try:
            run = _prepare(torch, step, SIZES[args.size][step], args.device)
            t0 = time.perf_counter()
            results = run()
            sync()
            first = time.perf_counter() - t0
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                results = run()
                sync()
                times.append(time.perf_counter() - t0)
            np.savez(out / f"{step}.npz", **{name: t.detach().cpu().numpy() for name, t in results.items()})
            timings[step] = {"first_ms": first * 1e3, "ms": float(np.median(times)) * 1e3, "error": None}
        except Exception as exc:        # noqa: BLE001 - each step reports its own failure and the rest go on
            message = str(exc).strip().splitlines()
            timings[step] = {"error": f"{type(exc).__name__}: {message[0] if message else ''}"}
        print(f"{step}: {timings[step]}", file=sys.stderr, flush=True)
        (out / "timings.json.new").write_text(json.dumps(timings))
        os.replace(out / "timings.json.new", out / "timings.json")    # whole, even if stopped now
    return 0


# ------------------------------------------------------------------ comparison and report

@dataclass
class Row:
    step: str
    reference_ms: float | None
    cricket_ms: float | None
    cricket_first_ms: float | None
    ratio: float | None
    max_abs_diff: float | None
    verdict: str            # "equal", "close", "DIFFERENT", "not run: ...", "reference failed: ..."


def compare_step(step: str, reference: dict, candidate: dict, ref_time: dict, cand_time: dict,
                 tolerance: tuple[float, float]) -> Row:
    """One row: the outputs of ``step`` (name -> array) through cricket against the reference."""
    row = Row(step, ref_time.get("ms"), cand_time.get("ms"), cand_time.get("first_ms"), None, None, "")
    if ref_time.get("error"):
        row.verdict = f"reference failed: {ref_time['error']}"
        return row
    if cand_time.get("error"):
        row.verdict = f"not run: {cand_time['error']}"
        return row
    if row.reference_ms and row.cricket_ms is not None:
        row.ratio = row.cricket_ms / row.reference_ms
    if set(reference) != set(candidate):
        row.verdict = f"DIFFERENT: outputs {sorted(candidate)} instead of {sorted(reference)}"
        return row
    rtol, atol = tolerance
    equal = close = True
    worst = 0.0
    for name, want in reference.items():
        got = candidate[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            row.verdict = f"DIFFERENT: {name} is {got.dtype}{list(got.shape)}, not {want.dtype}{list(want.shape)}"
            return row
        equal = equal and np.array_equal(got, want, equal_nan=True)
        close = close and np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if got.size:
            worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
    row.max_abs_diff = worst
    row.verdict = "equal" if equal else "close" if close else "DIFFERENT"
    return row


def compare(steps: list[str], reference: dict, candidate: dict, ref_times: dict, cand_times: dict,
            tolerance: tuple[float, float]) -> list[Row]:
    """Rows for ``steps``; ``reference``/``candidate`` map "step/output" to arrays."""
    def outputs(arrays: dict, step: str) -> dict:
        return {k.split("/", 1)[1]: v for k, v in arrays.items() if k.split("/", 1)[0] == step}
    missing = {"error": "the worker wrote no result for this step"}
    return [compare_step(step, outputs(reference, step), outputs(candidate, step),
                         ref_times.get(step, missing), cand_times.get(step, missing), tolerance)
            for step in steps]


def markdown(rows: list[Row], reference: str, backend: str) -> str:
    def ms(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"
    lines = [f"| step | {reference} ms | cricket ({backend}) ms | cricket first call ms | ratio | "
             f"largest difference | result |", "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        ratio = "–" if r.ratio is None else f"{r.ratio:.2f}×"
        diff = "–" if r.max_abs_diff is None else f"{r.max_abs_diff:.3g}"
        lines.append(f"| {r.step} | {ms(r.reference_ms)} | {ms(r.cricket_ms)} | {ms(r.cricket_first_ms)} | "
                     f"{ratio} | {diff} | {r.verdict.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ running the workers

def run_worker(command: list[str], directory: Path, steps: list[str], timeout: float,
               env: dict[str, str]) -> tuple[dict, dict]:
    """Run a worker: ("step/output" -> array, step -> timing). The steps a worker that died or
    overran did not finish report how it ended."""
    directory.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=ROOT, start_new_session=True)     # a group: cricket run's server goes too
    try:
        log = proc.communicate(timeout=timeout)[0]
        tail = (log.strip().splitlines() or [""])[-1]
        why = f"the worker exited with status {proc.returncode}: {tail}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log = proc.communicate()[0]
        why = f"the worker ran past {timeout:.0f} s"
    (directory / "worker.log").write_text(log)
    done = directory / "timings.json"
    timings = json.loads(done.read_text()) if done.exists() else {}
    arrays = {}
    for step, timing in timings.items():
        if not timing.get("error"):
            with np.load(directory / f"{step}.npz") as data:
                arrays.update({f"{step}/{name}": data[name] for name in data.files})
    for step in steps:
        timings.setdefault(step, {"error": why})
    return arrays, timings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the ladder natively and through cricket, compare, report")
    run.add_argument("--backend", default="cuda", help="cricket's backend (default cuda)")
    run.add_argument("--reference", choices=["native", "cpu"], default="native",
                     help="what cricket is compared with: the same GPU natively, or torch on the CPU")
    run.add_argument("--python", default=os.environ.get("TORCH_PYTHON", sys.executable),
                     help="the interpreter with torch (default $TORCH_PYTHON, else this one)")
    run.add_argument("--timeout", type=float, default=300, help="seconds for each worker")
    work = sub.add_parser("worker", help="(internal) run the steps on one device")
    work.add_argument("--device", default="cuda")
    work.add_argument("--out", required=True)
    for p in (run, work):
        p.add_argument("--size", choices=sorted(SIZES), default="gpu")
        p.add_argument("--steps", default=",".join(STEPS),
                       help=f"comma-separated, of {', '.join(STEPS)} (default all)")
        p.add_argument("--repeat", type=int, default=5, help="timed runs after the first")
    run.add_argument("--out", default=None, help="folder for torch.md, torch.json and the workers' files")
    args = ap.parse_args(argv)
    steps = args.steps.split(",")
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        ap.error(f"unknown steps {', '.join(unknown)}; known: {', '.join(STEPS)}")
    if args.command == "worker":
        return worker(args)

    probe = subprocess.run([args.python, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"torch is not importable by {args.python}: nothing to run (--python, TORCH_PYTHON)")
        return 0
    out = Path(args.out or tempfile.mkdtemp(prefix="cricket-torch-"))
    out.mkdir(parents=True, exist_ok=True)
    base = [args.python, str(Path(__file__).resolve()), "worker", "--size", args.size, "--steps", args.steps,
            "--repeat", str(args.repeat)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_SERVER")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    device = "cuda" if args.reference == "native" else "cpu"
    reference = run_worker(base + ["--device", device, "--out", str(out / args.reference)],
                           out / args.reference, steps, args.timeout, env)
    through = [sys.executable, "-m", "cricket", "run", "--backend", args.backend, "--"]
    candidate = run_worker(through + base + ["--device", "cuda", "--out", str(out / "cricket")],
                           out / "cricket", steps, args.timeout, env)
    rows = compare(steps, reference[0], candidate[0], reference[1], candidate[1], TOLERANCE[args.reference])
    header = (f"PyTorch {probe.stdout.strip()} through `cricket run --backend {args.backend}` against "
              f"{'the same GPU natively' if args.reference == 'native' else 'torch on the CPU'} "
              f"(sizes: {args.size}; median of {args.repeat} runs after the first)\n\n")
    report = header + markdown(rows, args.reference, args.backend)
    (out / "torch.md").write_text(report)
    (out / "torch.json").write_text(json.dumps([asdict(r) for r in rows], indent=1))
    print(report, end="")
    print(f"(files in {out})")
    return 1 if any(r.verdict.startswith("DIFFERENT") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
