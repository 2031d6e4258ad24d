"""CuPy's CUDA graphs (cupy.cuda.Graph from stream.begin_capture / end_capture): elementwise
kernels captured on a stream, the graph launched twice, each result compared with NumPy; and what
the capture left behind (the stream is no longer capturing). Prints ``name value`` lines."""
import numpy as np

import cupy as cp

x = cp.arange(1000, dtype=cp.float32)
y = cp.empty_like(x)
ref = np.arange(1000, dtype=np.float32)
scale = cp.ElementwiseKernel("float32 x, float32 a", "float32 y", "y = a * x + 1", "cricket_axpb")
scale(x, 2.0, y)                              # compiled and loaded before the capture
stream = cp.cuda.Stream(non_blocking=True)
with stream:
    stream.begin_capture()
    print("capturing", stream.is_capturing())
    scale(x, 2.0, y)
    scale(y, 3.0, y)
    graph = stream.end_capture()
print("capturing_after", stream.is_capturing())
y.fill(0)
stream.synchronize()
print("not_run_at_capture", bool((cp.asnumpy(y) == 0).all()))
for launch in (1, 2):
    x += 1                                    # on the null stream, before the launch below
    cp.cuda.Device().synchronize()
    graph.launch(stream)
    stream.synchronize()
    host = ref + launch
    print(f"launch{launch}", bool((cp.asnumpy(y) == 3 * (2 * host + 1) + 1).all()))
