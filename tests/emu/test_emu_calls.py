"""Real calls: recursion and calls through function pointers (per-lane frames), from nvcc's PTX of
``cuda/calls.cu``, checked against the same functions computed on the host."""
import numpy as np
import pytest

from cricket.backends.emu import EmuError

VARIANTS = ["sm75", "sm75G", "sm90"]


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


def walk(values, node, depth):
    size = len(values)
    if node >= size:
        return depth
    seen = [int(values[(node + k) % size]) * (k + 1) for k in range(3)]
    return seen[node % 3] + 2 * walk(values, 2 * node + 1, depth + 1) - walk(values, 2 * node + 2, depth + 1)


def f32(x):
    return np.float32(x)


TABLE = [lambda x: f32(2) * x, lambda x: x * x, lambda x: -x, lambda x: x + f32(1)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_recursive_functions_match_the_host(two_batches, variant):
    n, size = 150, 29
    values = ((np.arange(size) * 37) % 23 - 11).astype(np.int32)

    def body(r):
        m = r.module("calls", variant)
        out = [r.zeros(n, np.int32) for _ in range(3)] + [r.zeros(n, np.int64)]
        r.launch(m, "recursion", ((n + 63) // 64,), (64,), r.put(values), size, *out, n)
        return {k: r.get(p, n, dt) for k, p, dt in zip("fapw", out, [np.int32] * 3 + [np.int64])}

    got = two_batches(body)
    i = np.arange(n)
    assert got["f"].tolist() == [fib(k % 15) for k in i]
    assert got["a"].tolist() == [ackermann(k % 3, k % 4) for k in i]
    assert got["p"].tolist() == [2 if (k % 23) % 2 == 0 else 1 for k in i]
    assert got["w"].tolist() == [walk(values, k % size, 0) for k in i]


@pytest.mark.parametrize("variant", VARIANTS)
def test_calls_through_function_pointers_match_the_host(two_batches, rng, variant):
    n = 300
    x = rng.uniform(-3, 3, n).astype(np.float32)

    def body(r):
        m = r.module("calls", variant)
        po, pr = r.zeros(n, np.float32), r.zeros(n, np.float32)
        r.launch(m, "dispatch", ((n + 127) // 128,), (128,), r.put(x), po, pr, n)
        return {"out": r.get(po, n, np.float32), "rep": r.get(pr, n, np.float32)}

    got = two_batches(body)
    want_out, want_rep = [], []
    for i in range(n):
        want_out.append(TABLE[i % 4](x[i]))
        v = x[i]
        for _ in range(i % 3 + 1):
            v = TABLE[(i // 3) % 4](v)
        want_rep.append(v)
    assert np.array_equal(got["out"], np.array(want_out, np.float32))
    assert np.array_equal(got["rep"], np.array(want_rep, np.float32))


PTX_BAD_POINTER = """
.version 9.0
.target sm_75
.address_size 64
.func (.param .b32 r) one() { st.param.b32 [r], 1; ret; }
.visible .entry call_garbage(.param .u64 out, .param .u64 target)
{
    .reg .b32 %v;
    .reg .b64 %f, %p;
    ld.param.u64 %f, [target];
    {
    .param .b32 retval0;
    proto : .callprototype (.param .b32 _) _ ();
    call (retval0), %f, (), proto;
    ld.param.b32 %v, [retval0];
    }
    ld.param.u64 %p, [out];
    st.global.u32 [%p], %v;
    ret;
}
"""


def test_a_function_pointer_to_nothing_is_an_illegal_address(make_runner):
    r = make_runner()
    mod = r.dev.load_module([PTX_BAD_POINTER])
    out = r.zeros(1, np.uint32)
    with pytest.raises(EmuError) as e:
        r.launch(mod, "call_garbage", (1,), (32,), out, 0x1234)
    assert e.value.name == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert "function pointer 0x1234" in str(e.value)


PTX_DEEP = """
.version 9.0
.target sm_75
.address_size 64
.func (.param .b32 r) down(.param .b32 n)
{
    .reg .b32 %n, %m, %v;
    .reg .pred %z;
    ld.param.u32 %n, [n];
    setp.eq.u32 %z, %n, 0;
    @%z bra done;
    sub.u32 %m, %n, 1;
    {
    .param .b32 a0;
    st.param.b32 [a0], %m;
    .param .b32 r0;
    call (r0), down, (a0);
    ld.param.b32 %v, [r0];
    }
    add.u32 %n, %v, 1;
done:
    st.param.b32 [r], %n;
    ret;
}
.visible .entry depth(.param .u64 out, .param .u32 n)
{
    .reg .b32 %n, %v, %t;
    .reg .b64 %p, %o;
    ld.param.u32 %n, [n];
    mov.u32 %t, %tid.x;
    add.u32 %n, %n, %t;
    {
    .param .b32 a0;
    st.param.b32 [a0], %n;
    .param .b32 r0;
    call (r0), down, (a0);
    ld.param.b32 %v, [r0];
    }
    ld.param.u64 %p, [out];
    mul.wide.u32 %o, %t, 4;
    add.u64 %p, %p, %o;
    st.global.u32 [%p], %v;
    ret;
}
"""


def test_deep_divergent_recursion_counts_every_level(make_runner):
    # each lane recurses n + tid levels: 32 different depths in one warp
    r = make_runner()
    mod = r.dev.load_module([PTX_DEEP])
    out = r.zeros(32, np.uint32)
    r.launch(mod, "depth", (1,), (32,), out, 300)
    assert r.get(out, 32, np.uint32).tolist() == list(range(300, 332))


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_pointer_into_the_callers_frame_reaches_it(two_batches, variant):
    # fill(&mine[1], d - 1) writes into the caller's frame: d*10 + fill(d-1) = 5 d (d + 1)
    n = 100

    def body(r):
        po = r.zeros(n, np.int32)
        r.launch(r.module("calls", variant), "frames", (2,), (64,), po, n)
        return {"out": r.get(po, n, np.int32)}

    got = two_batches(body)["out"]
    d = np.arange(n) % 12
    assert got.tolist() == (5 * d * (d + 1)).tolist()


@pytest.mark.parametrize("variant", VARIANTS)
def test_virtual_functions_dispatch_by_the_objects_type(two_batches, rng, variant):
    n = 200
    x = rng.uniform(0, 5, n).astype(np.float32)

    def body(r):
        po = r.zeros(n, np.float32)
        r.launch(r.module("calls", variant), "areas", (4,), (64,), r.put(x), po, n)
        return {"out": r.get(po, n, np.float32)}

    got = two_batches(body)["out"]
    want = np.where(np.arange(n) % 3 != 0, x * x, np.float32(0.5) * x * np.float32(2))
    assert np.array_equal(got, want.astype(np.float32))
