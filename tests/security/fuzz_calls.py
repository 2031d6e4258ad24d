"""The fuzzing of every procedure's argument body (test_fuzz_procedures.py, and the combined attack
of test_all_attacks_at_once.py): a valid call of every procedure (``valid_calls``; a new RPC
procedure gets one here), structure-aware mutations of them, and a session on the fuzzed server
that reconnects and refills its handles when a call broke them."""
from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest
from hypothesis import assume
from hypothesis import strategies as st

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.fatbin import Fatbin
from cricket.protocol import PROCEDURES, PROGRAM, VERSION, SyncClient
from cricket.protocol import gen as P
from cricket.rpc.errors import GarbageArgs

FATBIN = (Path(__file__).resolve().parents[1] / "fatbin" / "fixtures" / "params_sm75_zstd.fatbin").read_bytes()
CUBIN = next(bytes(e.payload) for e in Fatbin.from_bytes(FATBIN).entries if e.is_elf)
NVCC_PTX = next(bytes(e.payload) for e in Fatbin.from_bytes(FATBIN).entries if e.is_ptx)
MAX_THREADS = 1 << 12      # mutated launches stay this small: an endless grid is the kernels' issue
BOUNDARY = [0, 1, 2, 3, 4, 0x7F, 0x80, 0xFF, 0x1000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
NO_STATUS = {"CR_NULL", "CR_ERROR_STRING"}       # results that are not a status union


class _Recorded(Exception):
    pass


class _Recorder:
    """Stands where a generated stub expects its RPC client and keeps the encoded argument body."""

    def __init__(self) -> None:
        self.body = b""

    def call(self, prog: int, vers: int, proc: int, buffers=()):
        self.body = b"".join(bytes(b) for b in buffers)
        raise _Recorded


def encoded(name: str, *args) -> bytes:
    recorder = _Recorder()
    with pytest.raises(_Recorded):
        getattr(SyncClient(recorder), name)(*args)
    return recorder.body


class Context:
    """Valid handles of one session, for valid calls to mutate."""

    def __init__(self, conn) -> None:
        self.buf = conn.alloc(1 << 16)
        self.module = conn.load_module(NVCC_PTX)
        self.kernel = self.module.get_function("k_externc")     # (int i, float *out): out[i] = 1.0
        self.stream = conn._stub.CR_STREAM_CREATE(0).handle
        self.event = conn._stub.CR_EVENT_CREATE(0).handle
        self.event2 = conn._stub.CR_EVENT_CREATE(0).handle
        conn._stub.CR_EVENT_RECORD(P.cr_event_record_args(event=self.event, stream=0))
        self.array = conn._stub.CR_ARRAY_CREATE(ARRAY).array.base
        self.texture = conn._stub.CR_TEXOBJ_CREATE(_texobj(self.array)).ptr
        self.graph = conn._stub.CR_GRAPH_CREATE(P.cr_graph_args(nodes=graph_nodes(self))).handle


ARRAY = P.cr_array_args(format=P.cr_channel_format(x=32, y=0, z=0, w=0, kind=2), width=16, height=8, depth=0,
                        flags=0, levels=2)


def _texobj(array: int) -> P.cr_texobj_args:
    return P.cr_texobj_args(surface=False, resource=0, base=array, format=ARRAY.format, width=0, height=0,
                            pitch=0, address=[1, 1, 1], filter=1, read_mode=0, normalized=True,
                            border=[0.0] * 4, mip_filter=0, lod_bias=0.0, min_lod=0.0, max_lod=1.0)


def graph_nodes(c: Context) -> list:
    """An executable graph's nodes: a kernel, a memset, a copy and an event record."""
    n = 4096
    launch = P.cr_launch_args(function=c.kernel.handle, grid=P.cr_dim3(x=1, y=1, z=1),
                              block=P.cr_dim3(x=32, y=1, z=1), shared_mem=0, stream=0,
                              params=c.kernel.pack([7, c.buf]))
    return [P.cr_graph_node(kind=0, kernel=launch),
            P.cr_graph_node(kind=2, memset=P.cr_memset_args(dst=c.buf.device_ptr, value=1, element_size=4,
                                                            count=64, stream=0)),
            P.cr_graph_node(kind=1, copy=P.cr_dtod_args(dst=c.buf.device_ptr + n, src=c.buf.device_ptr,
                                                        size=n, stream=0)),
            P.cr_graph_node(kind=3, event_record=c.event2)]


def _ptx_module(image: bytes, kind=P.CR_IMAGE_PTX) -> P.cr_module_load_args:
    return P.cr_module_load_args(hash=hashlib.sha256(image).digest(), kind=kind, image=image)


def valid_calls(c: Context) -> dict[str, tuple]:
    """One valid argument tuple per procedure (a test checks that none is missing)."""
    buf, n = c.buf.device_ptr, 4096
    launch = P.cr_launch_args(function=c.kernel.handle, grid=P.cr_dim3(x=1, y=1, z=1),
                              block=P.cr_dim3(x=32, y=1, z=1), shared_mem=0, stream=0,
                              params=c.kernel.pack([7, c.buf]))
    htod = P.cr_htod_args(dst=buf, stream=0, data=bytes(range(256)) * 4)
    dtod = P.cr_dtod_args(dst=buf + n, src=buf, size=n, stream=c.stream)
    memset = P.cr_memset_args(dst=buf, value=0x01020304, element_size=4, count=64, stream=0)
    shm_htod = P.cr_shm_htod_args(dst=buf, stream=0, offset=4096, size=64, sequence=1)
    wait = P.cr_stream_wait_args(stream=c.stream, event=c.event)
    record = P.cr_event_record_args(event=c.event2, stream=c.stream)
    get = P.cr_get_args(module=c.module.handle, name="k_externc")
    box = P.cr_box(base=c.array, pitch=64, slice=512)
    graph_launch = P.cr_graph_launch_args(graph=c.graph, stream=c.stream, first=0, count=4)
    copy3d = P.cr_memcpy3d_args(dst=box, src=P.cr_box(base=buf, pitch=64, slice=512), width=64, height=8,
                                depth=1, stream=0, data=b"")
    return {
        "CR_ARRAY_CREATE": (ARRAY,),
        "CR_ARRAY_DESTROY": (c.array,),
        "CR_MEMCPY_3D": (copy3d,),
        "CR_MEMCPY_3D_DTOH": (copy3d,),
        "CR_TEXOBJ_CREATE": (_texobj(c.array),),
        "CR_TEXOBJ_DESTROY": (c.texture,),
        "CR_IPC_GET_MEM_HANDLE": (buf,),
        "CR_IPC_OPEN_MEM_HANDLE": (bytes(64),),       # no such handle: refused before anything is made
        "CR_IPC_CLOSE_MEM_HANDLE": (buf,),
        "CR_IPC_GET_EVENT_HANDLE": (c.event,),
        "CR_IPC_OPEN_EVENT_HANDLE": (bytes(64),),
        "CR_VMM_RESERVE": (4 << 20,),
        "CR_VMM_FREE": (buf,),                          # not a reservation: refused
        "CR_NULL": (),
        "CR_HELLO": (P.cr_hello_args(protocol=P.CRICKET_PROTOCOL, client="fuzz", token="", backend=""),),
        "CR_SET_DEVICE": (0,),
        "CR_CTX_SYNCHRONIZE": (),
        "CR_ERROR_STRING": (700,),
        "CR_DEVICE_RESET": (),
        "CR_CTX_SET_LIMIT": (P.cr_limit_args(limit=2, value=1 << 20),),
        "CR_SERVER_STATUS": (),
        "CR_MEM_ALLOC": (4096,),
        "CR_MEM_FREE": (buf,),
        "CR_MEM_GET_INFO": (),
        "CR_MEMCPY_HTOD": (htod,),
        "CR_MEMCPY_HTOD_ASYNC": (htod,),
        "CR_MEMCPY_DTOH": (P.cr_dtoh_args(src=buf, size=n, stream=0),),
        "CR_MEMCPY_DTOD": (dtod,),
        "CR_MEMCPY_DTOD_ASYNC": (dtod,),
        "CR_MEMSET": (memset,),
        "CR_MEMSET_ASYNC": (memset,),
        "CR_SHM_ATTACH": (P.cr_shm_attach_args(path="/dev/shm/cricket-shm-1-" + "0" * 32, size=1 << 20),),
        "CR_MEMCPY_HTOD_SHM": (shm_htod,),
        "CR_MEMCPY_HTOD_SHM_ASYNC": (shm_htod,),
        "CR_MEMCPY_DTOH_SHM": (P.cr_shm_dtoh_args(src=buf, stream=0, offset=4096, size=64),),
        "CR_SHM_TICKET": (),
        "CR_SHM_ATTACH_FD": (1 << 20,),
        "CR_SHM_ATTACH_PINNED": (1 << 20,),
        "CR_SHM_DETACH_PINNED": (1,),
        "CR_MEMCPY_HTOD_PINNED": (P.cr_pinned_copy_args(region=1, device=buf, stream=0, offset=0, size=64),),
        "CR_MEMCPY_DTOH_PINNED": (P.cr_pinned_copy_args(region=1, device=buf, stream=0, offset=0, size=64),),
        "CR_MODULE_LOAD": (_ptx_module(NVCC_PTX),),
        "CR_MODULE_UNLOAD": (c.module.handle,),
        "CR_MODULE_GET_FUNCTION": (get,),
        "CR_MODULE_GET_GLOBAL": (P.cr_get_args(module=c.module.handle, name="g_dev_var"),),
        "CR_LAUNCH": (launch,),
        "CR_LAUNCH_ASYNC": (launch,),
        "CR_LAUNCH_COOPERATIVE_ASYNC": (launch,),
        "CR_STREAM_CREATE": (0,),
        "CR_STREAM_DESTROY": (c.stream,),
        "CR_STREAM_SYNCHRONIZE": (c.stream,),
        "CR_STREAM_QUERY": (c.stream,),
        "CR_STREAM_WAIT_EVENT": (wait,),
        "CR_STREAM_WAIT_EVENT_ASYNC": (wait,),
        "CR_EVENT_CREATE": (0,),
        "CR_EVENT_DESTROY": (c.event2,),
        "CR_EVENT_RECORD": (record,),
        "CR_EVENT_RECORD_ASYNC": (record,),
        "CR_EVENT_SYNCHRONIZE": (c.event,),
        "CR_EVENT_QUERY": (c.event,),
        "CR_EVENT_ELAPSED_TIME": (P.cr_elapsed_args(start=c.event, end=c.event),),
        "CR_DEVICE_OUTPUT": (),
        "CR_SET_OUTPUT_LIMIT": (1 << 16,),
        "CR_LOAD_BACKEND": (P.cr_load_backend_args(type="emu", spec=""),),
        "CR_LIST_BACKENDS": (),
        "CR_SERVER_STATS": (),
        "CR_SESSION_STATS": (),
        "CR_GRAPH_CREATE": (P.cr_graph_args(nodes=graph_nodes(c)),),
        "CR_GRAPH_LAUNCH": (graph_launch,),
        "CR_GRAPH_LAUNCH_ASYNC": (graph_launch,),
        "CR_GRAPH_DESTROY": (c.graph,),
        "CR_PEER_ACCESS": (P.cr_peer_access_args(device=0, peer=1, enable=True),),
        "CR_P2P_ATTRIBUTE": (P.cr_p2p_attribute_args(src=0, dst=1, attribute=2),),
        "CR_PLACE_DEVICES": (P.cr_place_args(first=2),),     # refused: the session has allocated
    }


# --- mutations ---------------------------------------------------------------------------

@st.composite
def mutated(draw, body: bytes) -> bytes:
    data = bytearray(body)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "word", "cut", "extend", "duplicate"]))
        if op == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "word" and len(data) >= 4:
            i = draw(st.integers(0, len(data) // 4 - 1)) * 4
            struct.pack_into(">I", data, i, draw(st.sampled_from(BOUNDARY)))
        elif op == "cut":
            del data[draw(st.integers(0, len(data))):]
        elif op == "extend":
            data += draw(st.binary(max_size=64))
        elif op == "duplicate" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i:i] = data[i:i + draw(st.integers(1, 64))]
    return bytes(data)


@st.composite
def mutated_image(draw) -> bytes:
    """CR_MODULE_LOAD of a PTX text or fatbin mutated in its bytes, with its hash made right."""
    kind, image = draw(st.sampled_from([(P.CR_IMAGE_PTX, NVCC_PTX),
                                        (P.CR_IMAGE_FATBIN, FATBIN), (P.CR_IMAGE_CUBIN, CUBIN)]))
    data = bytearray(image)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "word", "cut", "splice"]))
        i = draw(st.integers(0, len(data) - 1)) if data else 0
        if op == "flip" and data:
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "word" and len(data) >= i + 4:
            struct.pack_into("<I", data, i, draw(st.sampled_from(BOUNDARY)))
        elif op == "cut":
            del data[i:i + draw(st.integers(1, 256))]
        elif op == "splice":
            data[i:i] = draw(st.sampled_from([b"{", b"}", b";", b".reg .b32 %r<99999>;", b"\0",
                                              b"%r1", b"[", b".entry", b"\xff\xfe"]))
    return encoded("CR_MODULE_LOAD", _ptx_module(bytes(data), kind))


# --- the server under fuzzing ------------------------------------------------------------

class Target:
    """A session on the fuzzed server; reconnects and refills its handles when a call broke them."""

    def __init__(self, server) -> None:
        self.server = server
        self.conn = None
        self.context = None

    def fresh(self) -> Context:
        if self.context is None:
            try:
                self.context = Context(self._connection())
            except CudaError:            # e.g. a mutated launch left the context unusable
                self.close()
                self.context = Context(self._connection())
        return self.context

    def _connection(self):
        if self.conn is None:
            self.conn = connect(self.server.address, shared_memory=False)
        return self.conn

    def send(self, name: str, body: bytes) -> None:
        """One call with this body; asserts the server answered as it must."""
        rpc = self.conn._rpc
        proc = PROCEDURES[name]
        if name.endswith("_ASYNC"):
            rpc.call_batched(PROGRAM, VERSION, proc, [body])
            name, reply = "CR_CTX_SYNCHRONIZE", rpc.call(PROGRAM, VERSION, PROCEDURES["CR_CTX_SYNCHRONIZE"])
        else:
            try:
                reply = rpc.call(PROGRAM, VERSION, proc, [body])
            except GarbageArgs:
                return
        if name not in NO_STATUS:
            status = struct.unpack_from(">i", reply)[0]
            assert status != curesult.UNKNOWN, (name, bytes(reply[4:200]))
        if name in ("CR_DEVICE_RESET", "CR_HELLO", "CR_SET_DEVICE", "CR_MODULE_UNLOAD",
                    "CR_STREAM_DESTROY", "CR_EVENT_DESTROY", "CR_MEM_FREE"):
            self.context = None          # its handles may be gone: the next example makes new ones

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = self.context = None


def fuzz_one(fuzzed: Target, name: str, data) -> None:
    """Send ``fuzzed`` one random or mutated body of procedure ``name``, drawn from ``data``
    (hypothesis's ``st.data()``)."""
    context = fuzzed.fresh()
    valid = encoded(name, *valid_calls(context)[name])
    choice = data.draw(st.sampled_from(["random", "mutated", "mutated", "image"]
                                       if name == "CR_MODULE_LOAD" else ["random", "mutated", "mutated"]))
    if choice == "random":
        body = data.draw(st.binary(max_size=512))
    elif choice == "image":
        body = data.draw(mutated_image())
    else:
        body = data.draw(mutated(valid))
    if name in ("CR_LAUNCH", "CR_LAUNCH_ASYNC", "CR_LAUNCH_COOPERATIVE_ASYNC"):
        try:
            a = P.unpack_cr_launch_args(body)
        except Exception:
            a = None
        if a is not None:
            assume(a.grid.x * a.grid.y * a.grid.z * a.block.x * a.block.y * a.block.z <= MAX_THREADS)
    fuzzed.send(name, body)
