"""bench/torch_gpu.py's own logic, without torch or a GPU: how a step's outputs through cricket are
judged against the reference, how a failed step or worker is reported, and its arguments. The
ladder itself runs in tests/torch/test_gpu_ladder.py (emu) and on a GPU machine (bench/gpu.sh)."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.torch_gpu import TOLERANCE, compare, main, markdown, run_worker  # noqa: E402

OK = {"ms": 2.0, "first_ms": 9.0, "error": None}


def outputs(seed: int = 0, shape: tuple[int, ...] = (16, 16)) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"matmul/product": rng.standard_normal(shape).astype(np.float32)}


def test_identical_outputs_are_equal_and_the_ratio_is_cricket_over_reference():
    ref = outputs()
    [row] = compare(["matmul"], ref, {k: v.copy() for k, v in ref.items()}, {"matmul": {**OK, "ms": 0.5}},
                    {"matmul": OK}, TOLERANCE["native"])
    assert row.verdict == "equal" and row.max_abs_diff == 0.0
    assert row.ratio == pytest.approx(4.0)
    assert (row.reference_ms, row.cricket_ms, row.cricket_first_ms) == (0.5, 2.0, 9.0)


def test_a_float32_rounding_is_close_against_the_cpu_but_a_real_change_is_different():
    ref = outputs()
    rounded = {k: np.nextafter(v, np.float32(np.inf)) for k, v in ref.items()}
    [row] = compare(["matmul"], ref, rounded, {"matmul": OK}, {"matmul": OK}, TOLERANCE["cpu"])
    assert row.verdict == "close" and 0 < row.max_abs_diff < 1e-5
    changed = {k: v.copy() for k, v in ref.items()}
    changed["matmul/product"][3, 5] += 0.5
    [row] = compare(["matmul"], ref, changed, {"matmul": OK}, {"matmul": OK}, TOLERANCE["native"])
    assert row.verdict == "DIFFERENT" and row.max_abs_diff == pytest.approx(0.5)


def test_a_shape_or_an_output_that_differs_is_different():
    [row] = compare(["matmul"], outputs(), outputs(shape=(16, 8)), {"matmul": OK}, {"matmul": OK},
                    TOLERANCE["native"])
    assert row.verdict == "DIFFERENT: product is float32[16, 8], not float32[16, 16]"
    [row] = compare(["matmul"], outputs(), {}, {"matmul": OK}, {"matmul": OK}, TOLERANCE["native"])
    assert row.verdict.startswith("DIFFERENT: outputs [] instead of ['product']")


def test_a_step_that_failed_is_reported_with_its_error_and_the_others_are_judged():
    error = "AcceleratorError: CUDA error: no kernel image is available for execution on the device"
    rows = compare(["elementwise", "matmul", "resnet18"], outputs(), outputs(),
                   {"elementwise": OK, "matmul": OK, "resnet18": {"error": "RuntimeError: out of memory"}},
                   {"elementwise": {"error": error}, "matmul": OK}, TOLERANCE["native"])
    assert [r.verdict for r in rows] == [f"not run: {error}", "equal",
                                         "reference failed: RuntimeError: out of memory"]
    assert rows[0].cricket_ms is None and rows[0].ratio is None
    table = markdown(rows, "native", "cuda").splitlines()
    assert table[0].startswith("| step | native ms | cricket (cuda) ms |")
    assert table[2] == f"| elementwise | 2.000 | – | – | – | – | not run: {error} |"
    assert table[3] == "| matmul | 2.000 | 2.000 | 9.000 | 1.00× | 0 | equal |"


def test_a_worker_that_dies_fails_every_step_with_its_last_words(tmp_path):
    arrays, timings = run_worker([sys.executable, "-c", "import sys; sys.exit('no CUDA device')"],
                                 tmp_path / "w", ["matmul", "linear"], 60, {})
    assert arrays == {}
    assert timings == {s: {"error": "the worker exited with status 1: no CUDA device"} for s in ("matmul", "linear")}


def test_a_worker_stopped_midway_keeps_the_steps_it_finished(tmp_path):
    out = tmp_path / "w"
    finished = textwrap.dedent(f"""
        import json, pathlib, time
        import numpy as np
        out = pathlib.Path({str(out)!r})
        np.savez(out / "matmul.npz", product=np.eye(2))
        (out / "timings.json").write_text(json.dumps({{"matmul": {{"ms": 2.0, "first_ms": 9.0, "error": None}}}}))
        time.sleep(60)
    """)
    arrays, timings = run_worker([sys.executable, "-c", finished], out, ["matmul", "linear"], 3, {})
    assert np.array_equal(arrays["matmul/product"], np.eye(2))
    assert timings == {"matmul": OK, "linear": {"error": "the worker ran past 3 s"}}


def test_unknown_steps_are_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--steps", "matmul,conv3d"])
    assert exit_.value.code == 2
    assert "unknown steps conv3d" in capsys.readouterr().err


def test_without_torch_the_ladder_says_so_and_runs_nothing(tmp_path, capsys):
    assert main(["run", "--python", "false", "--out", str(tmp_path / "out")]) == 0
    assert "torch is not importable by false" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()
