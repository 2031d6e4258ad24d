"""XDR codec speed: the Cython codec vs xdrlib3 vs the pure-Python twin, in one run.

    python bench/xdr.py [--quick]

Generates a small .x with rpcgen, builds its Cython codec under build/bench_xdr/, and
times (µs per operation, best of several timeit rounds):
  * ``int<10000>`` pack and unpack         (goal: ≥ 30× xdrlib3)
  * the same unpack of values above 65535  (no goal: each needs a new int object, see WIDE)
  * a struct of ten ints pack and unpack   (goal: ≥ 8× xdrlib3)
  * a 1 MiB opaque: pack must not copy (Packer.get_buffers hands it over as a view),
    unpack_opaque_view must not copy either.
The pure-Python twin is measured in a child process with CRICKET_PUREPYTHON=1.
Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_X = """\
typedef int intarr<10000>;
struct ten { int a; int b; int c; int d; int e; int f; int g; int h; int i; int j; };
typedef opaque blob<>;
"""
MIB = 1 << 20
# int<10000> with every value above the decoder's shared small ints (< 65536): the worst case,
# where each item costs an int allocation (as list(range(...)) pays)
WIDE = [65536 + i * 214013 for i in range(10000)]
WIDE_ROW = "int<10000> unpack, values ≥ 65536"


def _generate(build_root: Path, package: str, cython: bool):
    from rpcgen.build import build_codec
    from rpcgen.cli import compile_file
    pkg = build_root / package
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    x = build_root / "xdrbench.x"
    x.write_text(BENCH_X)
    compile_file(str(x), str(pkg), cython=cython)
    built = list(pkg.glob("_xdrbench_xdr*.so"))
    # rebuilt when the buffer library or the emitter changed since (a stale codec measures old code)
    sources = [ROOT / "cext" / "xdr_buffer.pxd", ROOT / "rpcgen" / "emit_cython.py"]
    if cython and (not built or min(b.stat().st_mtime for b in built)
                   < max(s.stat().st_mtime for s in sources if s.exists())):
        build_codec(str(build_root), f"{package}._xdrbench_xdr")
    sys.path.insert(0, str(build_root))
    return importlib.import_module(f"{package}.xdrbench")


def _times(fn, quick: bool) -> list[float]:
    """µs per operation in each timeit round."""
    t = timeit.Timer(fn)
    n, _ = t.autorange()
    return [x / n * 1e6 for x in t.repeat(3 if quick else 5, n)]


def _time(fn, quick: bool) -> float:
    return min(_times(fn, quick))


def measure_ours(mod, quick: bool, timer=_time) -> dict[str, float]:
    """The codec the generated module uses (compiled, or pure under CRICKET_PUREPYTHON=1).
    ``timer(fn, quick)`` gives the figure: the best round (default), or ``_times`` for every round."""
    _time = timer
    from cricket.xdr import Packer, Unpacker
    arr = list(range(10000))
    arr_bytes = mod.pack_intarr(arr)
    wide_bytes = mod.pack_intarr(WIDE)
    ten = mod.ten(a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9, j=10)
    ten_bytes = mod.pack_ten(ten)
    blob = bytes(MIB)
    p = Packer()
    p.pack_opaque(blob)
    blob_bytes = p.get_buffer()

    def pack_blob_zero_copy():
        q = Packer()
        q.pack_opaque(blob)
        return q.get_buffers()

    bufs = pack_blob_zero_copy()
    views = [b for b in bufs if isinstance(b, memoryview)]
    zero_copy = len(views) == 1 and views[0].obj is blob
    view = Unpacker(blob_bytes).unpack_opaque_view()
    view_zero_copy = view.obj is blob_bytes
    assert mod.unpack_intarr(arr_bytes) == arr and mod.unpack_ten(ten_bytes) == ten
    assert mod.unpack_intarr(wide_bytes) == WIDE
    return {
        "int<10000> pack": _time(lambda: mod.pack_intarr(arr), quick),
        "int<10000> unpack": _time(lambda: mod.unpack_intarr(arr_bytes), quick),
        WIDE_ROW: _time(lambda: mod.unpack_intarr(wide_bytes), quick),
        "struct of 10 ints pack": _time(lambda: mod.pack_ten(ten), quick),
        "struct of 10 ints unpack": _time(lambda: mod.unpack_ten(ten_bytes), quick),
        "1 MiB opaque pack (get_buffers)": _time(pack_blob_zero_copy, quick),
        "1 MiB opaque unpack (view)": _time(lambda: Unpacker(blob_bytes).unpack_opaque_view(), quick),
        "_zero_copy_pack": float(zero_copy),
        "_zero_copy_unpack": float(view_zero_copy),
    }


def measure_xdrlib3(mod, quick: bool, timer=_time) -> dict[str, float]:
    """Hand-written xdrlib3 code for the same types (the reference)."""
    _time = timer
    import xdrlib3
    arr = list(range(10000))
    ten = mod.ten(a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9, j=10)
    blob = bytes(MIB)

    def pack_arr():
        p = xdrlib3.Packer()
        p.pack_array(arr, p.pack_int)
        return p.get_buffer()

    def unpack_arr(data=pack_arr()):
        u = xdrlib3.Unpacker(data)
        return u.unpack_array(u.unpack_int)

    p = xdrlib3.Packer()
    p.pack_array(WIDE, p.pack_int)
    wide_bytes = p.get_buffer()

    def pack_ten():
        p = xdrlib3.Packer()
        for v in (ten.a, ten.b, ten.c, ten.d, ten.e, ten.f, ten.g, ten.h, ten.i, ten.j):
            p.pack_int(v)
        return p.get_buffer()

    def unpack_ten(data=pack_ten()):
        u = xdrlib3.Unpacker(data)
        i = u.unpack_int
        return mod.ten(a=i(), b=i(), c=i(), d=i(), e=i(), f=i(), g=i(), h=i(), i=i(), j=i())

    def pack_blob():
        p = xdrlib3.Packer()
        p.pack_opaque(blob)
        return p.get_buffer()

    def unpack_blob(data=pack_blob()):
        return xdrlib3.Unpacker(data).unpack_opaque()

    assert unpack_arr() == arr and unpack_ten() == ten and unpack_arr(wide_bytes) == WIDE
    return {
        "int<10000> pack": _time(pack_arr, quick),
        "int<10000> unpack": _time(unpack_arr, quick),
        WIDE_ROW: _time(lambda: unpack_arr(wide_bytes), quick),
        "struct of 10 ints pack": _time(pack_ten, quick),
        "struct of 10 ints unpack": _time(unpack_ten, quick),
        "1 MiB opaque pack (get_buffers)": _time(pack_blob, quick),
        "1 MiB opaque unpack (view)": _time(unpack_blob, quick),
    }


GOALS = {"int<10000> pack": 30, "int<10000> unpack": 30, "struct of 10 ints pack": 8,
         "struct of 10 ints unpack": 8}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer timing rounds")
    ap.add_argument("--child", choices=["pure"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    build_root = ROOT / "build" / "bench_xdr"
    if args.child == "pure":
        mod = _generate(build_root, "xdrbench_pure", cython=False)
        print(json.dumps(measure_ours(mod, args.quick)))
        return 0
    from cricket import xdr
    if xdr.IMPLEMENTATION != "cython":
        print("the Cython XDR core is not built (run `make build`)", file=sys.stderr)
        return 1
    mod = _generate(build_root, "xdrbench_cy", cython=True)
    if mod._codec is None:
        print("the generated Cython codec did not load", file=sys.stderr)
        return 1
    ours = measure_ours(mod, args.quick)
    ref = measure_xdrlib3(mod, args.quick)
    env = dict(os.environ, CRICKET_PUREPYTHON="1")
    child = subprocess.run([sys.executable, __file__, "--child", "pure"] +
                           (["--quick"] if args.quick else []),
                           env=env, capture_output=True, text=True, check=True)
    pure = json.loads(child.stdout)
    floor = _time(lambda: list(range(65536, 75536)), args.quick)

    print("| what | ours: Cython (µs) | reference: xdrlib3 (µs) | ratio | goal | pure twin (µs) |")
    print("|---|---:|---:|---:|---|---:|")
    for what, ref_us in ref.items():
        ratio = ref_us / ours[what]
        if what in GOALS:
            goal = f"≥ {GOALS[what]}× {'✓' if ratio >= GOALS[what] else '✗'}"
        elif what == WIDE_ROW:
            goal = "—"
        elif "pack" in what and "unpack" not in what:
            goal = "no copy " + ("✓" if ours["_zero_copy_pack"] else "✗")
        else:
            goal = "no copy " + ("✓" if ours["_zero_copy_unpack"] else "✗")
        print(f"| {what} | {ours[what]:.2f} | {ref_us:.2f} | {ratio:.1f}× | {goal} | "
              f"{pure[what]:.2f} |")
    print(f"\n{WIDE_ROW} is bound by creating 10,000 int objects: list(range(65536, 75536)) "
          f"alone takes {floor:.2f} µs in this run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
