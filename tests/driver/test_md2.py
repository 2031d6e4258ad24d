"""MD2 written in C (cext/driver/md2.c) against RFC 1319's test suite and ZLUDA's intermediate-state
vectors (driver-dark-api.md §6.1, §6.2), and HMAC-MD2 against a Python HMAC over the same MD2."""
from __future__ import annotations

import ctypes
import hmac

import pytest


class MD2State(ctypes.Structure):
    """The 66-byte state of md2.h / driver-dark-api.md §5.2."""
    _fields_ = [("w", ctypes.c_ubyte * 48), ("c", ctypes.c_ubyte * 16), ("n", ctypes.c_ubyte),
                ("last", ctypes.c_ubyte)]

    @classmethod
    def from_rows(cls, a: str, b: str, x: str, c: str, n: int, last: int) -> "MD2State":
        s = cls()
        s.w[:] = bytes.fromhex(a + b + x)
        s.c[:] = bytes.fromhex(c)
        s.n, s.last = n, last
        return s

    def rows(self) -> tuple[str, str, str, str, int, int]:
        w = bytes(self.w)
        return w[:16].hex(), w[16:32].hex(), w[32:].hex(), bytes(self.c).hex(), self.n, self.last


@pytest.fixture(scope="module")
def md2(md2_so):
    lib = ctypes.CDLL(str(md2_so))
    lib.cricket_md2.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    lib.cricket_md2_update.argtypes = [ctypes.POINTER(MD2State), ctypes.c_char_p, ctypes.c_size_t]
    lib.cricket_md2_final.argtypes = [ctypes.POINTER(MD2State), ctypes.c_char_p]
    lib.cricket_hmac_md2.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                     ctypes.c_char_p]
    return lib


def digest(md2, message: bytes) -> str:
    out = ctypes.create_string_buffer(16)
    md2.cricket_md2(message, len(message), out)
    return out.raw.hex()


RFC1319 = [
    (b"", "8350e5a3e24c153df2275c9f80692773"),
    (b"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"),
    (b"abc", "da853b0d3f88d99b30283a69e6ded6bb"),
    (b"message digest", "ab4f496bfb2a530b219ff33031fe06b0"),
    (b"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"),
    (b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "da33def2a42df13975352846c30338cd"),
    (b"1234567890" * 8, "d5976f79d83d3a0dc9806c3c66f3efd8"),
]


@pytest.mark.parametrize("message,expected", RFC1319, ids=[m[:12].decode() or "empty" for m, _ in RFC1319])
def test_md2_matches_rfc1319_suite(md2, message, expected):
    assert digest(md2, message) == expected


def test_md2_incremental_updates_equal_one_shot(md2):
    message = bytes(range(256)) * 3
    s = MD2State()
    for start in range(0, len(message), 7):        # pieces that straddle block boundaries
        piece = message[start:start + 7]
        md2.cricket_md2_update(ctypes.byref(s), piece, len(piece))
    out = ctypes.create_string_buffer(16)
    md2.cricket_md2_final(ctypes.byref(s), out)
    assert out.raw.hex() == digest(md2, message)


def test_hmac_md2_equals_rfc2104_construction_over_md2(md2):
    class MD2:   # hashlib-like wrapper over the C MD2, so the standard hmac module can drive it
        digest_size = 16
        block_size = 16

        def __init__(self, data: bytes = b"") -> None:
            self.data = bytes(data)

        def update(self, data: bytes) -> None:
            self.data += bytes(data)

        def copy(self) -> "MD2":
            return MD2(self.data)

        def digest(self) -> bytes:
            return bytes.fromhex(digest(md2, self.data))

    key = bytes.fromhex("146addae53a9a752aa0841360bf55a9f")
    for message in (b"", b"x", bytes(range(100))):
        out = ctypes.create_string_buffer(16)
        md2.cricket_hmac_md2(key, len(key), message, len(message), out)
        assert out.raw == hmac.new(key, message, MD2).digest()


# ZLUDA's unit tests on the intermediate state (driver-dark-api.md §6.2): (before, bytes absorbed, after).
Z1_BEFORE = ("00" * 16, "38c09bf7ff7f0000a361e442f66794ff", "18c09bf7ff7f0000a45772f7ff7f0000", "00" * 16, 0, 0)
Z1_AFTER = ("00" * 16, "22c09bf7ff7f0000a361e442f66794ff", "22c09bf7ff7f0000a45772f7ff7f0000",
            "57" + "00" * 15, 1, 0x57)
Z2_AFTER = ("8b219a49e86d1aeef237f9b54a8c3c75", "c71eee21cf298ae51383f4ec3304e2fd",
            "b02f09014ff7686d6946437eb62b21ed", "57a110860e60441e705f67d1eb67a13d", 0, 0x3d)
Z3_R = bytes.fromhex("302f0000322f000023a42f0000109cf7408295f6ff7f0000208295f6ff7f0000a0f4aaf2ff7f0000ee9c2b6800000000")
Z3_AFTER = ("0afdabc9ff9ba0be4d303282744fa748", "9d2382a387fa6cdb9249d9b54b2b5e51",
            "6ef7f94d288a640619b3e6bea4ec7e54", "6428d9e1d434c0a94988c96158dd6674", 0, 0x74)
Z4_BEFORE = ("84fd9310c6dbb3bc49c225e7da6e226f", "9bbd8159c3019a7a2634390f2a5613b1",
             "f6bc7fa18f04a54d0d78ab20f82320a5", "3f6736e2de8ae5dfe1f20394addc9ada", 0, 0xda)
Z4_RECORD = bytes.fromhex("9afe2b8aac252d38ea37aec56d71325f000000000200000000000000")
Z4_AFTER = ("1fd825d2dffa64c7b61aaf22b879fb96", "000000000200000000000000" + "7c9d46d2",
            "1fd825d2ddfa64c7b61aaf22e617bd3a", "d7dd5f828c87ce8666afa0507a7dbbbc", 0x0c, 0x50)
Z5_BEFORE = ("3e4bf29571f56b5107bf4bf1040e8e0b", "5f4d300c0f0caefb48af23b5ea4cc2db",
             "d7df88743958163a1f7c9b207e7e94c8", "8bc6b2380d077dbd90d53963eb1d4f40", 0, 0x40)
Z5_AFTER = ("002353065e96f69c61aa962d2ecda858", "e9cac02e35ed5fcae10ecd1fd08e8b9c",
            "294d1c946bf710b0070891d61406c0ec", "e19c8e33d4e9435c860c724d2798917f", 0, 0x7f)
KEY = bytes.fromhex("146addae53a9a752aa0841360bf55a9f")


def absorb(md2, state: MD2State, data: bytes) -> MD2State:
    md2.cricket_md2_update(ctypes.byref(state), data, len(data))
    return state


def test_absorbing_one_byte_matches_zluda_z1(md2):
    assert absorb(md2, MD2State.from_rows(*Z1_BEFORE), b"\x22").rows() == Z1_AFTER


def test_inner_key_block_matches_zluda_z2(md2):
    assert absorb(md2, MD2State(), bytes(k ^ 0x36 for k in KEY)).rows() == Z2_AFTER


def test_integrity_record_matches_zluda_z3(md2):
    assert absorb(md2, MD2State.from_rows(*Z2_AFTER), Z3_R).rows() == Z3_AFTER


def test_device_record_matches_zluda_z4(md2):
    assert absorb(md2, MD2State.from_rows(*Z4_BEFORE), Z4_RECORD).rows() == Z4_AFTER


def test_finalisation_matches_zluda_z5(md2):
    state = MD2State.from_rows(*Z5_BEFORE)
    out = ctypes.create_string_buffer(16)
    md2.cricket_md2_final(ctypes.byref(state), out)
    assert state.rows() == Z5_AFTER
    assert out.raw.hex() == "002353065e96f69c61aa962d2ecda858"
