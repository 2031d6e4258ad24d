"""What the cuda-python programs of the memory tests share: a call that must succeed, a PASS/FAIL
line per check, and the last line with the exit status."""
import sys

from cuda.bindings import driver as d

failed = False


def check(result, what):
    """The values of a cuda-python call that must succeed; FAIL and exit otherwise."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != d.CUresult.CUDA_SUCCESS:
        print(f"FAIL: {what}: {err.name}")
        sys.exit(1)
    return values[0] if len(values) == 1 else values


def report(what, ok):
    global failed
    failed |= not ok
    print(f"{'PASS' if ok else 'FAIL'}: {what}")


def finish(what):
    print(f"FAIL: {what}" if failed else f"PASS: {what}")
    sys.exit(1 if failed else 0)
