"""`make demo`: compile a small .x with cricket's rpcgen, then encode and decode values.

(Later issues make the demo run a CUDA program through cricket; for now it shows the
XDR/rpcgen layer that everything else is built on.)
"""
from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEMO_X = """\
/* shapes.x: a tiny interface definition */
const MAXNAME = 16;

enum color { RED = 1, GREEN = 2, BLUE = 3 };

struct point { int x; int y; };

struct waypoint {            /* a linked list through optional data */
    string name<MAXNAME>;
    point at;
    waypoint *next;
};

union paint switch (color kind) {
case RED:   unsigned hyper intensity;
case GREEN: opaque rgb[3];
default:    void;
};

program SHAPES_PROG {
    version SHAPES_V1 {
        int DISTANCE(point, point) = 1;
    } = 1;
} = 0x20000123;
"""


def main() -> int:
    from cricket import xdr
    from rpcgen.cli import compile_file
    with tempfile.TemporaryDirectory() as tmp:
        x = Path(tmp) / "shapes.x"
        x.write_text(DEMO_X)
        files = compile_file(str(x), tmp)
        print(f"rpcgen: {x.name} -> {Path(files['python']).name}  (XDR core: {xdr.IMPLEMENTATION})")
        sys.path.insert(0, tmp)
        shapes = importlib.import_module("shapes")

        route = shapes.waypoint(name="home", at=shapes.point(x=0, y=0),
                                next=shapes.waypoint(name="work", at=shapes.point(x=3, y=4),
                                                     next=None))
        data = shapes.pack_waypoint(route)
        print(f"\nwaypoint list -> {len(data)} bytes of XDR:")
        for i in range(0, len(data), 16):
            print("   ", data[i:i + 16].hex(" ", 4))
        back = shapes.unpack_waypoint(data)
        print("decoded:", back)
        assert back == route

        paints = (shapes.paint(shapes.RED, intensity=2**40),
                  shapes.paint(shapes.GREEN, rgb=b"\x10\x20\x30"), shapes.paint(shapes.BLUE))
        for value in paints:
            raw = shapes.pack_paint(value)
            print(f"{value!r:45} <-> {raw.hex(' ', 4)}")
            assert shapes.unpack_paint(raw) == value

        try:
            shapes.unpack_point(b"\0\0\0\x01")
        except xdr.XdrError as exc:
            print(f"\ntruncated input is refused: {exc}")

        class Shapes(shapes.SHAPES_V1_Server):
            def DISTANCE(self, a, b):
                return abs(a.x - b.x) + abs(a.y - b.y)

        class Loopback:  # stands in for cricket.rpc's client: same call() contract
            def __init__(self, server):
                self.server = server

            def call(self, prog, vers, proc, buffers):
                procedure = self.server.procedures[proc]
                args = procedure.decode_args(xdr.Unpacker(b"".join(buffers)))
                p = xdr.Packer()
                procedure.encode_result(p, getattr(self.server, procedure.name)(*args))
                return p.get_buffer()

        client = shapes.SHAPES_V1_Client(Loopback(Shapes()))
        print("client stub -> server skeleton: DISTANCE((0,0), (3,4)) =",
              client.DISTANCE(shapes.point(x=0, y=0), shapes.point(x=3, y=4)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
