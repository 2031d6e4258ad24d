"""Device printf (vprintf): formatting of every argument kind, lane order, and the chosen sink."""
import io

import pytest

from cricket.backends.emu import EmuDevice, pack_params


def expected_lines(nblocks, bs, base, scale):
    out = []
    for b in range(nblocks):
        for t in range(bs):
            g = t + b * bs
            if g % 3 == 0:
                out.append("thread %d of block %u: %d %.3f %s %c %d %x\n" % (
                    g, b, base + g, scale * g, "odd" if g % 2 else "even", chr(ord("A") + g % 26), g << 33,
                    g * 255))
    return out


@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
def test_printf_output_in_lane_order(two_batches, variant):
    def body(r):
        m = r.module("printf", variant)
        r.launch(m, "hello", (3,), (40,), 1000, 0.5)
        return {}

    out = two_batches(body)
    assert out["printed"][0] == "".join(expected_lines(3, 40, 1000, 0.5))


def test_printf_goes_to_a_file_like_sink(ptx):
    buf = io.StringIO()
    dev = EmuDevice(arena_size=1 << 28, printf_sink=buf)
    try:
        mod = dev.load_module([ptx("printf", "sm75")])
        fn = mod.get_function("hello")
        dev.launch(fn, (1,), (4,), 0, pack_params(fn, -5, 2.0))
    finally:
        dev.close()
    assert buf.getvalue() == "".join(expected_lines(1, 4, -5, 2.0))


def test_printf_defaults_to_stdout(ptx, capsys):
    dev = EmuDevice(arena_size=1 << 28)
    try:
        mod = dev.load_module([ptx("printf", "sm75")])
        fn = mod.get_function("hello")
        dev.launch(fn, (1,), (1,), 0, pack_params(fn, 7, 1.0))
    finally:
        dev.close()
    assert capsys.readouterr().out == expected_lines(1, 1, 7, 1.0)[0]
