"""Registration with rpcbind / the portmapper (RFC 1833, PMAP version 2 over TCP)."""
from __future__ import annotations

import struct

from .client import Client
from .transport import Address

PMAP_PROG = 100000
PMAP_VERS = 2
PMAPPROC_SET = 1
PMAPPROC_UNSET = 2
PMAPPROC_GETPORT = 3
IPPROTO_TCP = 6
IPPROTO_UDP = 17

_MAPPING = struct.Struct(">4I")      # struct mapping { prog, vers, prot, port }
_U32 = struct.Struct(">I")


def _pmap(proc: int, prog: int, vers: int, port: int, rpcbind: Address, prot: int) -> int:
    with Client(rpcbind, timeout=5.0, connect_timeout=5.0) as client:
        result = client.call(PMAP_PROG, PMAP_VERS, proc, [_MAPPING.pack(prog, vers, prot, port)])
        return _U32.unpack_from(result, 0)[0]


def pmap_set(prog: int, vers: int, port: int, rpcbind: Address = ("127.0.0.1", 111),
             prot: int = IPPROTO_TCP) -> bool:
    """PMAPPROC_SET: tell rpcbind that ``prog``/``vers`` is served on ``port``; True if accepted."""
    return bool(_pmap(PMAPPROC_SET, prog, vers, port, rpcbind, prot))


def pmap_unset(prog: int, vers: int, port: int = 0, rpcbind: Address = ("127.0.0.1", 111),
               prot: int = IPPROTO_TCP) -> bool:
    """PMAPPROC_UNSET: remove the registration of ``prog``/``vers``."""
    return bool(_pmap(PMAPPROC_UNSET, prog, vers, port, rpcbind, prot))


def pmap_getport(prog: int, vers: int, rpcbind: Address = ("127.0.0.1", 111),
                 prot: int = IPPROTO_TCP) -> int:
    """PMAPPROC_GETPORT: the port rpcbind has for ``prog``/``vers`` (0 when none)."""
    return _pmap(PMAPPROC_GETPORT, prog, vers, 0, rpcbind, prot)
