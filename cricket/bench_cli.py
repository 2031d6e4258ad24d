"""Run the microbenchmark suite and write one report with plots.

    cricket bench [--quick] [--only NAME ...] [--out DIR] [--backend emu|cuda]

Writes DIR/report.md (one table per bench: our figure, the reference measured in the same run,
the ratio, the goal; the machine and the date), DIR/results.json (every run) and PNG plots.
CRICKET_BENCH_TINY=1 shrinks every size set to the least that fills the tables (for tests).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _suite():
    # bench/ sits beside the package in a checkout (an editable install); it is not installed.
    if not (ROOT / "bench" / "suite.py").exists():
        raise SystemExit("cricket bench: bench/ not found beside the cricket package; run it from a "
                         "checkout of the repository (pip install -e .)")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import suite
    return suite


EXAMPLES = """\
examples:
  cricket bench --quick                        every bench, fewer sizes; ./bench-report/report.md
  cricket bench --only rpc copy --backend cuda --out /tmp/gpu-report
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    parser.add_argument("--quick", action="store_true",
                        help="fewer sizes and runs (about two minutes on two cores)")
    parser.add_argument("--only", nargs="+", metavar="NAME", default=None,
                        help="run only these benches, e.g. rpc latency calls (a name that is not a bench "
                             "gets the list of them)")
    parser.add_argument("--out", type=Path, default=Path("bench-report"),
                        help="folder for report.md, results.json and the plots (default ./bench-report)")
    parser.add_argument("--backend", default="emu",
                        help="server backend for the copy and overhead benches (emu; cuda on a GPU host)")


def main(args: argparse.Namespace) -> int:
    suite = _suite()
    from bench.config import from_env
    from bench.plots import draw
    from bench.report import render
    names = args.only or list(suite.BENCHES)
    unknown = [n for n in names if n not in suite.BENCHES]
    if unknown:
        print(f"cricket bench: no bench named {', '.join(unknown)}; "
              f"choose from {' '.join(suite.BENCHES)}", file=sys.stderr)
        return 2
    cfg = from_env(args.quick, args.out.resolve() / "build")     # nothing is written outside --out
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = suite.run(names, cfg, backend=args.backend)
    for r in results:
        if not r.skipped and not r.series:
            r.notes.append("no plot: these figures have no size axis")
    try:
        plots = draw(results, args.out)
    except ImportError as exc:       # matplotlib is the `bench` extra
        plots = []
        print(f"cricket bench: no plots ({exc}); pip install 'cricket[bench]' for them", file=sys.stderr)
    command = "cricket bench" + (" --quick" if args.quick else "") + \
        (f" --only {' '.join(args.only)}" if args.only else "") + \
        (f" --backend {args.backend}" if args.backend != "emu" else "")
    (args.out / "report.md").write_text(render(results, quick=cfg.quick, plots=plots, command=command))
    suite.dump_json(results, args.out / "results.json")
    failed = [r.name for r in results if r.error]
    print(f"cricket bench: {len(results)} benches in {time.perf_counter() - started:.0f} s; "
          f"report in {args.out / 'report.md'}" + (f"; FAILED: {', '.join(failed)}" if failed else ""),
          file=sys.stderr)
    return 1 if failed else 0
