"""CUDA arrays, texture and surface objects through a real emu server (CR_ARRAY_*, CR_TEXOBJ_*,
CR_MEMCPY_3D*): the kernels of tests/emu/cuda/textures.cu read what the host put in, and the
server refuses what is not the session's."""
from pathlib import Path

import numpy as np
import pytest

from cricket.client import arrays as ca
from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult

PTX = (Path(__file__).resolve().parents[1] / "emu" / "ptx" / "textures.sm75.ptx").read_bytes()
F32 = ca.ChannelFormat(32)
U8x4 = ca.ChannelFormat(8, 8, 8, 8, ca.FORMAT_UNSIGNED)


def test_2d_texture_on_an_array_point_and_linear(emu_server):
    img = np.arange(20, dtype=np.float32).reshape(4, 5) * 1.5
    with connect(emu_server.address) as conn:
        arr = ca.create_array(conn, F32, 5, 4)
        arr.copy_from_host(img)
        assert np.array_equal(np.frombuffer(arr.to_host(), np.float32).reshape(4, 5), img)
        res = ca.Resource(ca.RESOURCE_ARRAY, array=arr)
        point = ca.create_texture(conn, res, ca.Sampling(address=(ca.ADDRESS_CLAMP,) * 3))
        linear = ca.create_texture(conn, res, ca.Sampling(address=(ca.ADDRESS_CLAMP,) * 3, filter=ca.FILTER_LINEAR))
        fn = conn.load_module(PTX).get_function("fetch2d_scalar")
        xs = conn.alloc(16)
        ys = conn.alloc(16)
        xs.copy_from_host(np.float32([0.5, 2.5, 3.0, 9.0]))
        ys.copy_from_host(np.float32([0.5, 1.5, 1.0, 2.5]))
        out = conn.alloc(16)
        fn(1, 4, np.uint64(point), out, xs, ys, np.int32(4))
        assert out.to_host(np.float32).tolist() == [img[0, 0], img[1, 2], img[1, 3], img[2, 4]]
        fn(1, 4, np.uint64(linear), out, xs, ys, np.int32(4))
        # (3.0, 1.0): halfway between columns 2 and 3 and rows 0 and 1
        want = [img[0, 0], img[1, 2], img[0:2, 2:4].mean(), img[2, 4]]
        np.testing.assert_allclose(out.to_host(np.float32), want, rtol=1e-6)
        ca.destroy_object(conn, point)
        ca.destroy_object(conn, linear)
        arr.free()


def test_surface_written_by_a_kernel_reads_back(emu_server):
    w, h = 8, 2
    src = np.arange(w * h * 4, dtype=np.uint8).reshape(h, w, 4)
    with connect(emu_server.address) as conn:
        a = ca.create_array(conn, U8x4, w, h, flags=ca.ARRAY_SURFACE_LDST)
        b = ca.create_array(conn, U8x4, w, h, flags=ca.ARRAY_SURFACE_LDST)
        a.copy_from_host(src)
        sa = ca.create_surface(conn, ca.Resource(ca.RESOURCE_ARRAY, array=a))
        sb = ca.create_surface(conn, ca.Resource(ca.RESOURCE_ARRAY, array=b))
        conn.load_module(PTX).get_function("surf_bump")((1, h), 8, np.uint64(sa), np.uint64(sb), np.int32(w),
                                                          np.int32(h))
        got = np.frombuffer(b.to_host(), np.uint8).reshape(h, w, 4)
        want = src.copy()
        want[..., 0] += 1
        want[..., 3] = np.add.outer(np.arange(h), np.arange(w))
        assert (got == want).all()


def test_partial_box_copies_between_device_and_array(emu_server):
    with connect(emu_server.address) as conn:
        arr = ca.create_array(conn, F32, 6, 3)
        arr.copy_from_host(np.zeros((3, 6), np.float32))
        lin = conn.alloc(4 * 4 * 2)
        lin.copy_from_host(np.float32([[1, 2, 3, 4], [5, 6, 7, 8]]))
        # a 2x2 box from column 1 of the linear rows to column 3, row 1 of the array
        ca.copy_dtod(conn, arr.box(x_bytes=12, y=1), ca.P.cr_box(base=int(lin) + 4, pitch=16, slice=32), 8, 2, 1)
        want = np.zeros((3, 6), np.float32)
        want[1:3, 3:5] = [[2, 3], [6, 7]]
        assert np.array_equal(np.frombuffer(arr.to_host(), np.float32).reshape(3, 6), want)


def test_mipmapped_array_levels_have_halved_extents(emu_server):
    with connect(emu_server.address) as conn:
        arr = ca.create_array(conn, F32, 8, 4, levels=3)
        assert [(lv.width, lv.height) for lv in arr.levels] == [(8, 4), (4, 2), (2, 1)]
        one = arr.level(1)
        one.copy_from_host(np.full((2, 4), 7, np.float32))
        assert np.frombuffer(arr.level(1).to_host(), np.float32).tolist() == [7.0] * 8


def test_objects_of_another_session_are_refused(emu_server):
    with connect(emu_server.address) as a, connect(emu_server.address) as b:
        arr = ca.create_array(a, F32, 4, 4)
        with pytest.raises(CudaError) as e:
            ca.create_texture(b, ca.Resource(ca.RESOURCE_ARRAY, array=arr))
        assert e.value.code == curesult.INVALID_VALUE
        t = ca.create_texture(a, ca.Resource(ca.RESOURCE_ARRAY, array=arr))
        with pytest.raises(CudaError):
            ca.destroy_object(b, t)
        with pytest.raises(CudaError):
            ca.copy_dtoh(b, arr.box(), 16, 4, 1)


def test_hostile_extents_are_refused_before_allocating(emu_server):
    with connect(emu_server.address) as conn:
        for bad in [dict(width=0), dict(width=1 << 30), dict(width=4, height=4, levels=99),
                    dict(width=4, height=4, flags=0x80), dict(width=4, height=5, depth=6, flags=ca.ARRAY_CUBEMAP)]:
            with pytest.raises(CudaError) as e:
                ca.create_array(conn, F32, **bad)
            assert e.value.code == curesult.INVALID_VALUE
        with pytest.raises(CudaError) as e:
            ca.create_array(conn, ca.ChannelFormat(8, 16), 4)
        assert e.value.code == curesult.INVALID_VALUE


def test_non_finite_sampling_values_are_refused(emu_server):
    with connect(emu_server.address) as conn:
        arr = ca.create_array(conn, F32, 4, 4)
        with pytest.raises(CudaError) as e:
            ca.create_texture(conn, ca.Resource(ca.RESOURCE_ARRAY, array=arr), ca.Sampling(max_lod=float("nan")))
        assert e.value.code == curesult.INVALID_VALUE


def test_an_array_freed_by_a_device_reset_is_refused(emu_server):
    with connect(emu_server.address) as conn:
        arr = ca.create_array(conn, F32, 64, 64)
        conn.reset()
        conn.alloc(16)                                   # memory that may reuse the array's address
        with pytest.raises(CudaError) as e:
            ca.create_texture(conn, ca.Resource(ca.RESOURCE_ARRAY, array=arr))
        assert e.value.code == curesult.INVALID_VALUE
