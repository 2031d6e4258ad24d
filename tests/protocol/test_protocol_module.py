"""The generated protocol module: what the server and client rely on."""
import inspect

import pytest

from cricket.protocol import NEED_IMAGE, PROGRAM, VERSION, Skeleton, gen
from cricket.backends.registry import BackendRegistry
from cricket.server.program import CricketProgram
from cricket.server.service import CricketService
from cricket.xdr.errors import XdrError


def test_program_number_is_in_the_user_range_and_version_one():
    assert 0x20000000 <= PROGRAM <= 0x3FFFFFFF
    assert VERSION == 1
    assert NEED_IMAGE == -1


def test_every_procedure_but_null_is_served():
    # An instance: the pinned copies' handlers are bound in __init__ (cricket.server.pinned_copy_handler).
    program = CricketProgram(CricketService(BackendRegistry(), token="t"))
    missing = [p.name for n, p in Skeleton.procedures.items()
               if n != 0 and getattr(type(program), p.name, None) is getattr(Skeleton, p.name)
               and p.name not in vars(program)]
    assert missing == []


def test_result_unions_round_trip_through_xdr():
    res = gen.cr_function_res(status=0, function=gen.cr_function(
        handle=7, max_threads_per_block=1024, num_regs=10, shared_size_bytes=0, const_size_bytes=0,
        local_size_bytes=0, ptx_version=75, binary_version=75, param_size=28, params=[gen.cr_param(offset=0, size=8, kind=gen.CR_PARAM_INT)]))
    assert gen.unpack_cr_function_res(gen.pack_cr_function_res(res)) == res
    err = gen.cr_status_res(status=700, message="an illegal memory access was encountered")
    data = gen.pack_cr_status_res(err)
    assert len(data) == 4 + 4 + 40     # status, string length, text padded to 4
    assert gen.unpack_cr_status_res(data) == err


def test_async_procedures_have_no_reply():
    for name in ("CR_LAUNCH_ASYNC", "CR_MEMCPY_HTOD_ASYNC", "CR_MEMSET_ASYNC", "CR_EVENT_RECORD_ASYNC",
                 "CR_STREAM_WAIT_EVENT_ASYNC", "CR_MEMCPY_DTOD_ASYNC"):
        assert hasattr(gen.CRICKET_V1_Client, f"{name}_batched")
    assert inspect.iscoroutinefunction(gen.CRICKET_V1_AsyncClient.CR_HELLO)


def test_server_constants_match_cricket_x():
    from cricket.server import service
    assert service.PROTOCOL_VERSION == gen.CRICKET_PROTOCOL
    assert service.NEED_IMAGE == gen.CRICKET_NEED_IMAGE
    assert service.MAX_INLINE == gen.CRICKET_MAX_INLINE
    assert [k.value for k in gen.cr_image_kind] == [0, 1, 2]
    from cricket.backends.base import ImageKind
    assert {k.name.removeprefix("CR_IMAGE_"): k.value for k in gen.cr_image_kind} == \
        {k.name: k.value for k in ImageKind}


def test_kernel_names_as_long_as_cub_mangles_them_are_carried():
    # CUB's device-wide kernels have mangled names of several hundred characters
    name = "_ZN3cub" + "x" * 1500
    args = gen.cr_get_args(module=3, name=name)
    assert gen.unpack_cr_get_args(gen.pack_cr_get_args(args)).name == name
    with pytest.raises(XdrError):
        gen.pack_cr_get_args(gen.cr_get_args(module=3, name="y" * (gen.CRICKET_MAX_SYMBOL + 1)))
