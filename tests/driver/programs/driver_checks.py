"""What the cuda-python programs beside it share: a driver call that must succeed, and a PASS or
FAIL line per fact, remembered."""
import sys

from cuda.bindings import driver as d

failures: list[str] = []


def check(result, what):
    """The values of a cuda-python call's result; prints FAIL and exits when it is an error."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != d.CUresult.CUDA_SUCCESS:
        print(f"FAIL: {what}: {err.name}")
        sys.exit(1)
    return values[0] if len(values) == 1 else values


def report(what, ok):
    if not ok:
        failures.append(what)
    print(f"{'PASS' if ok else 'FAIL'}: {what}")


def finish(what):
    """The last line, PASS or FAIL for ``what`` as a whole, and the exit status with it."""
    print(f"FAIL: {what}" if failures else f"PASS: {what}")
    sys.exit(1 if failures else 0)
