"""Run by test_client_per_thread through `cricket run`: two host threads on two devices, calling
libcudart (the shim) through ctypes in lock step. Prints one line per check, then PASS or FAIL."""
import ctypes
import threading

cudart = ctypes.CDLL("libcudart.so.13")
results = []


def total_memory() -> int:
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    assert cudart.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)) == 0
    return total.value


def current() -> int:
    dev = ctypes.c_int(-1)
    assert cudart.cudaGetDevice(ctypes.byref(dev)) == 0
    return dev.value


count = ctypes.c_int()
assert cudart.cudaGetDeviceCount(ctypes.byref(count)) == 0 and count.value == 2
step = [threading.Event() for _ in range(4)]


def other() -> None:
    assert cudart.cudaSetDevice(1) == 0
    step[0].set()
    step[1].wait()
    results.append(("other thread", current(), total_memory()))
    step[2].set()


t = threading.Thread(target=other)
t.start()
step[0].wait()                                      # the other thread has chosen device 1
results.append(("main thread", current(), total_memory()))
step[1].set()
step[2].wait()
results.append(("main thread again", current(), total_memory()))
t.join()
for r in results:
    print(*r)
ok = [(d, m) for _, d, m in results] == [(0, 64 << 20), (1, 32 << 20), (0, 64 << 20)]
print("PASS" if ok else "FAIL")
