#!/usr/bin/env bash
# One run on a lent GPU machine: install cricket, run the cuda backend's tests, then the benches
# with native references (native CUDA vs cricket over loopback), report and plots under $OUT.
# Fits in ten minutes (limits: wheels 45 s, install 120 s, tests 110 s, PyTorch ladder 120 s,
# benches 180 s); every step has its own time limit and the report is written whatever fails.
# `bench/gpu.sh --torch` runs only the install and the PyTorch ladder (bench/torch_gpu.py: torch
# natively and through `cricket run --backend cuda`, results compared, times as ratios); it needs
# a torch with CUDA on the GPU machine ($TORCH_PYTHON, else $PYTHON), and says so where there is none.
#
#   On a machine with nvcc and registry access, once:   bench/gpu.sh --prepare
#       builds build/gpu/ (overhead: the native test program for sm_90; overhead.cricket: the same
#       with -cudart shared, for `cricket run`; overhead.sm_90.fatbin: its kernels for the Python API)
#       and downloads into .whl/ the wheels the GPU machine may lack (no registry there).
#   On the GPU machine (Python 3.12 with cuda-bindings, Cython, uvloop, numpy):
#       OUT=/some/dir bench/gpu.sh                     (carry .whl and build/gpu along)
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PREBUILT=build/gpu

if [ "${1:-}" = "--prepare" ]; then
    set -e
    mkdir -p "$PREBUILT" .whl
    SM90="-gencode arch=compute_90,code=[sm_90,compute_90]"
    nvcc -O2 $SM90 -o "$PREBUILT/overhead" examples/overhead/overhead.cu
    nvcc -O2 -cudart shared $SM90 -o "$PREBUILT/overhead.cricket" examples/overhead/overhead.cu
    nvcc -fatbin -gencode arch=compute_90,code='[sm_90,compute_90]' \
        -o "$PREBUILT/overhead.sm_90.fatbin" examples/overhead/overhead.cu
    # Pure-Python or manylinux wheels for CPython 3.12 on x86_64: what cricket and its test and
    # bench extras need beyond what the GPU machine has.
    $PY -m pip download -q -d .whl --only-binary=:all: --python-version 3.12 \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
        xdrlib3 pyelftools zstandard lz4 pytest pytest-timeout hypothesis matplotlib
    rm -f .whl/numpy-*.whl          # preinstalled on the GPU machine
    du -sh .whl "$PREBUILT"
    exit 0
fi

OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
LOG="$OUT/gpu.log"
start=$(date +%s)
step() { echo "== $(( $(date +%s) - start )) s: $*" | tee -a "$LOG"; }

step "machine"
{ nvidia-smi; $PY --version; nproc; } > "$OUT/machine.txt" 2>&1

missing=$($PY - <<'PYEOF'
import importlib.util
need = {"xdrlib3": "xdrlib3", "elftools": "pyelftools", "zstandard": "zstandard", "lz4": "lz4",
        "pytest": "pytest", "pytest_timeout": "pytest-timeout", "hypothesis": "hypothesis",
        "matplotlib": "matplotlib"}
print(" ".join(dist for mod, dist in need.items() if importlib.util.find_spec(mod) is None))
PYEOF
)
if [ -n "$missing" ]; then
    step "installing from .whl: $missing"
    if [ -d .whl ]; then
        timeout 45 $PY -m pip install -q --no-index --find-links .whl $missing >> "$LOG" 2>&1 \
            || step "some wheels did not install (see gpu.log)"
    else
        step "no .whl folder: run bench/gpu.sh --prepare where a registry is reachable"
    fi
fi

step "pip install --no-build-isolation --no-deps -e ."
if ! timeout 120 $PY -m pip install -q --no-build-isolation --no-deps -e . > "$OUT/install.log" 2>&1; then
    step "install failed: see install.log"; tail -30 "$OUT/install.log" | tee -a "$LOG"; exit 1
fi

if [ -d "$PREBUILT" ]; then export CRICKET_BENCH_PREBUILT=$PWD/$PREBUILT; fi
command -v nvcc > /dev/null || step "no nvcc here: tests that compile CUDA skip; benches use $PREBUILT"

torch_ladder() {
    step "PyTorch ladder: natively and through cricket run --backend cuda (bench/torch_gpu.py)"
    timeout 120 $PY bench/torch_gpu.py run --backend cuda --python "${TORCH_PYTHON:-$PY}" --timeout 55 \
        --out "$OUT/torch" > "$OUT/torch.log" 2>&1
    echo "torch ladder exit status $? (report: torch/torch.md)" | tee -a "$LOG"
    tail -9 "$OUT/torch.log" | tee -a "$LOG"
}
if [ "${1:-}" = "--torch" ]; then
    torch_ladder
    step "done"
    exit 0
fi

step "cuda backend tests: pytest -m gpu"
timeout 110 $PY -m pytest -m gpu -q -p no:cacheprovider --junitxml="$OUT/pytest-gpu.xml" tests \
    > "$OUT/pytest-gpu.log" 2>&1
echo "pytest -m gpu exit status $?" | tee -a "$LOG"
tail -5 "$OUT/pytest-gpu.log" | tee -a "$LOG"

torch_ladder

step "benches: overhead and copies against native CUDA; rpc, latency by size, xdr on this host"
timeout 180 $PY -m cricket bench --quick --backend cuda --only overhead copy calls rpc latency xdr \
    --out "$OUT/report" 2> "$OUT/bench.log"
echo "cricket bench exit status $? (report: report/report.md)" | tee -a "$LOG"
tail -3 "$OUT/bench.log" | tee -a "$LOG"

step "done"
ls -R "$OUT" >> "$LOG"
