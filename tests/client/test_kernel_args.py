"""Packing Python values by a kernel's parameter layout."""
import struct
from dataclasses import dataclass

import numpy as np
import pytest

from cricket.client.kernel_args import KernelArgumentError, pack_kernel_args


@dataclass
class P:
    offset: int
    size: int


@dataclass
class Buf:
    device_ptr: int


# void k(int, float*, size_t, char, double, int3) as nvcc lays it out
LAYOUT = [P(0, 4), P(8, 8), P(16, 8), P(24, 1), P(32, 8), P(40, 12)]


def test_mixed_parameters_land_at_their_offsets():
    int3 = np.array([1, -2, 3], dtype=np.int32).tobytes()
    buf = pack_kernel_args(LAYOUT, 52, [-7, Buf(0xDEAD0000), 1 << 40, 65, 2.5, int3])
    assert len(buf) == 52
    assert struct.unpack_from("<i", buf, 0)[0] == -7
    assert struct.unpack_from("<Q", buf, 8)[0] == 0xDEAD0000
    assert struct.unpack_from("<Q", buf, 16)[0] == 1 << 40
    assert buf[24] == 65
    assert struct.unpack_from("<d", buf, 32)[0] == 2.5
    assert buf[40:52] == int3
    assert buf[4:8] == b"\0\0\0\0"   # padding stays zero


def test_float_fills_by_parameter_size_and_numpy_scalars_by_their_bytes():
    buf = pack_kernel_args([P(0, 4), P(8, 8), P(16, 4)], 20, [1.5, 1.5, np.float32(3.0)])
    assert struct.unpack("<fxxxxdf", buf) == (1.5, 1.5, 3.0)


def test_values_that_do_not_fit_are_refused_with_the_argument_number():
    with pytest.raises(KernelArgumentError, match="argument 0: 300 does not fit in 1 bytes"):
        pack_kernel_args([P(0, 1)], 1, [300])
    with pytest.raises(KernelArgumentError, match="argument 0: 4 bytes given for a 8-byte"):
        pack_kernel_args([P(0, 8)], 8, [np.int32(1)])
    with pytest.raises(KernelArgumentError, match="takes 1 arguments, 2 given"):
        pack_kernel_args([P(0, 4)], 4, [1, 2])
    with pytest.raises(KernelArgumentError, match="cannot pass str"):
        pack_kernel_args([P(0, 8)], 8, ["x"])
