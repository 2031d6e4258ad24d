"""Authentication flavors: AUTH_NONE and AUTH_SYS, and the interfaces further flavors implement.

Client side, a flavor is a :class:`ClientAuth`: it supplies the encoded credential and verifier put
into every call, and may check the verifier of each reply. Server side, an :class:`Authenticator` checks the credential of a call and returns
what the handler sees as ``current_call().credentials`` (``None`` for AUTH_NONE, an
:class:`AuthSysParms` for AUTH_SYS); it rejects a call by raising :class:`~cricket.rpc.errors.AuthError`.
"""
from __future__ import annotations

import os
import socket
import struct
import time
from dataclasses import dataclass, field

from .constants import MAX_AUTH_BYTES, MAX_GROUPS, MAX_MACHINE_NAME, AuthFlavor, AuthStat
from .errors import AuthError

_U32 = struct.Struct(">I")
_U32x2 = struct.Struct(">II")
_U32x3 = struct.Struct(">III")


def encode_opaque_auth(flavor: int, body: bytes) -> bytes:
    """``struct opaque_auth { auth_flavor flavor; opaque body<400>; }`` on the wire."""
    if len(body) > MAX_AUTH_BYTES:
        raise ValueError(f"auth body of {len(body)} bytes exceeds MAX_AUTH_BYTES ({MAX_AUTH_BYTES})")
    return _U32x2.pack(flavor, len(body)) + body + b"\0" * (-len(body) % 4)


@dataclass(frozen=True, slots=True)
class AuthSysParms:
    """The AUTH_SYS credential body (RFC 5531 Appendix A ``authsys_parms``)."""

    stamp: int
    machinename: str
    uid: int
    gid: int
    gids: tuple[int, ...] = field(default_factory=tuple)

    def encode(self) -> bytes:
        name = self.machinename.encode("utf-8", "surrogateescape")
        if len(name) > MAX_MACHINE_NAME:
            raise ValueError(f"AUTH_SYS machine name of {len(name)} bytes exceeds {MAX_MACHINE_NAME}")
        if len(self.gids) > MAX_GROUPS:
            raise ValueError(f"AUTH_SYS carries at most {MAX_GROUPS} groups, got {len(self.gids)}")
        return b"".join((
            _U32x2.pack(self.stamp & 0xFFFFFFFF, len(name)), name, b"\0" * (-len(name) % 4),
            _U32x3.pack(self.uid, self.gid, len(self.gids)),
            struct.pack(f">{len(self.gids)}I", *self.gids)))

    @classmethod
    def decode(cls, body: bytes) -> AuthSysParms:
        """Decode a credential body; ``ValueError`` if it is malformed, over-long or has extra bytes."""
        try:
            stamp, nlen = _U32x2.unpack_from(body, 0)
            if nlen > MAX_MACHINE_NAME:
                raise ValueError(f"machine name of {nlen} bytes exceeds {MAX_MACHINE_NAME}")
            pos = 8 + nlen + (-nlen % 4)
            if pos > len(body):
                raise ValueError("machine name runs past the end of the credential")
            name = bytes(body[8:8 + nlen]).decode("utf-8", "surrogateescape")
            uid, gid, ngids = _U32x3.unpack_from(body, pos)
            if ngids > MAX_GROUPS:
                raise ValueError(f"{ngids} groups exceed the limit of {MAX_GROUPS}")
            pos += 12
            gids = struct.unpack_from(f">{ngids}I", body, pos)
        except struct.error as exc:
            raise ValueError(f"truncated AUTH_SYS credential: {exc}") from None
        if pos + 4 * ngids != len(body):
            raise ValueError("AUTH_SYS credential has trailing bytes")
        return cls(stamp, name, uid, gid, gids)


# --- client side ----------------------------------------------------------------------------------

class ClientAuth:
    """A flavor as a client uses it: the credential and verifier sent with every call."""

    flavor: int = AuthFlavor.AUTH_NONE

    def credential(self) -> bytes:
        """The credential body."""
        return b""

    def verifier(self) -> tuple[int, bytes]:
        """The verifier (flavor, body); AUTH_NONE for the flavors here."""
        return AuthFlavor.AUTH_NONE, b""

    def check_verifier(self, flavor: int, body: bytes) -> None:
        """Check the verifier of an accepted reply; raise ``AuthError(AUTH_INVALIDRESP)`` to
        reject it. Flavors that need no check leave this alone (the client then skips it)."""

    def header_bytes(self) -> bytes:
        """cred and verf as they follow the call header on the wire."""
        vflavor, vbody = self.verifier()
        return encode_opaque_auth(self.flavor, self.credential()) + encode_opaque_auth(vflavor, vbody)


class AuthNone(ClientAuth):
    """AUTH_NONE: no credential."""

    flavor = AuthFlavor.AUTH_NONE


class AuthSys(ClientAuth):
    """AUTH_SYS: uid, gid, groups and machine name, by default those of this process."""

    flavor = AuthFlavor.AUTH_SYS

    def __init__(self, uid: int | None = None, gid: int | None = None,
                 gids: tuple[int, ...] | None = None, machinename: str | None = None,
                 stamp: int | None = None) -> None:
        if gids is None:
            gids = tuple(os.getgroups()[:MAX_GROUPS])
        self.parms = AuthSysParms(
            stamp=int(time.time()) if stamp is None else stamp,
            machinename=socket.gethostname()[:MAX_MACHINE_NAME] if machinename is None else machinename,
            uid=os.getuid() if uid is None else uid,
            gid=os.getgid() if gid is None else gid,
            gids=tuple(gids))
        self._body = self.parms.encode()

    def credential(self) -> bytes:
        return self._body


# --- server side ----------------------------------------------------------------------------------

class Authenticator:
    """A flavor as a server checks it. Subclass and register with ``Server(authenticators=...)``."""

    flavor: int = AuthFlavor.AUTH_NONE

    def authenticate(self, cred_body: bytes, verf_flavor: int, verf_body: bytes) -> object:
        """Check a call's credential; return what handlers see, or raise ``AuthError(stat)``."""
        raise NotImplementedError

    def reply_verifier(self, credentials: object) -> tuple[int, bytes]:
        """The verifier to put into replies to calls authenticated by this flavor."""
        return AuthFlavor.AUTH_NONE, b""


class NoneAuthenticator(Authenticator):
    flavor = AuthFlavor.AUTH_NONE

    def authenticate(self, cred_body: bytes, verf_flavor: int, verf_body: bytes) -> None:
        return None


class SysAuthenticator(Authenticator):
    """Accepts any well-formed AUTH_SYS credential (RFC 5531 gives it no proof of identity)."""

    flavor = AuthFlavor.AUTH_SYS

    def authenticate(self, cred_body: bytes, verf_flavor: int, verf_body: bytes) -> AuthSysParms:
        try:
            return AuthSysParms.decode(cred_body)
        except ValueError as exc:
            raise AuthError(AuthStat.AUTH_BADCRED, f"malformed AUTH_SYS credential: {exc}") from None


def default_authenticators() -> dict[int, Authenticator]:
    """AUTH_NONE and AUTH_SYS, as a libtirpc server accepts by default."""
    return {AuthFlavor.AUTH_NONE: NoneAuthenticator(), AuthFlavor.AUTH_SYS: SysAuthenticator()}
