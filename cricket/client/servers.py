"""Several cricket servers as one device list: ``CRICKET_SERVER=a:7391,b:7391,/run/cricket.sock``.

The list is parsed here once (:func:`parse_servers`; ``cricket run --server``, the runtime and the
Python API use it). :class:`Servers` holds one session per server, opened together at the first
call, and the combined device list the program sees: every server's devices in the order the list
names the servers, then ``CUDA_VISIBLE_DEVICES`` applied to that combined list (each session
itself shows all of its server's devices). Per combined device it keeps its server (a
:class:`Member`) and the server's own ordinal, and per server the address ranges its devices'
memory lies in (``CR_PLACE_DEVICES``), so that a device pointer finds its server.

Two emu servers report the same UUIDs (and PCI ids); CUDA requires a device's UUID to be unique in
the process, so a UUID already seen earlier in the combined list is replaced by one derived from
the server's address and ordinal (see :func:`distinct_uuid`); the first holder keeps the real one.
Their PCI ids repeat as well: a repeated one gets the next free PCI domain (:func:`distinct_pci`).
The routing itself (which call goes where) is ``server_routing``'s.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import queue
import threading
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from cricket.client import visible_devices
from cricket.cudafacts import device_attributes as A
from cricket.client.errors import CudaError, SessionUnavailable
from cricket.rpc.transport import parse_address

log = logging.getLogger(__name__)

ACROSS_CHUNK = 4 << 20      # a copy between two servers moves this many bytes per step
ACROSS_BUFFERS = 2          # ... through this many buffers: the memory it holds in this process
MAX_SERVERS = 16            # servers in one list (each has at least one device; CRICKET_MAX_DEVICES is 64)
MAX_DEVICES = 64            # CRICKET_MAX_DEVICES (cricket.x): the combined index of any device stays below


class ServerListError(ValueError):
    """A server list that cannot be used; the message is one line saying what to write instead."""


def parse_servers(text: str) -> list[str]:
    """The addresses of a comma-separated server list (``host:port``, a Unix socket path, or
    ``unix:PATH``), in order; one address gives a list of one."""
    if not text or not text.strip():
        raise ServerListError("the server list is empty; give HOST:PORT or a socket path, several "
                              "separated by commas")
    entries = [entry.strip() for entry in text.split(",")]
    if any(not entry for entry in entries):
        raise ServerListError(f"{text!r} has an empty entry; separate the servers by single commas")
    if len(entries) > MAX_SERVERS:
        raise ServerListError(f"{text!r} names {len(entries)} servers; at most {MAX_SERVERS} may be listed")
    seen: dict[Any, str] = {}
    for entry in entries:
        try:
            key = parse_address(entry)
        except ValueError as exc:
            raise ServerListError(f"{text!r}: {exc}") from None
        if key in seen:
            raise ServerListError(f"{text!r} names the server {entry} twice (as {seen[key]!r} before); "
                                  "list each server once")
        seen[key] = entry
    return entries


def copy_between(dst_session: Any, dst: int, src_session: Any, src: int, count: int) -> None:
    """Copy ``count`` bytes from device address ``src`` of one server to ``dst`` of another through
    this process: device to host from the one, host to device to the other, in chunks of
    ``ACROSS_CHUNK`` (each side's default stream orders it after the work queued there before).
    Above one chunk it is pipelined: a helper thread fetches the next chunk from the source while
    this thread sends the last one, through ``ACROSS_BUFFERS`` buffers (the memory it holds).
    Complete when it returns; the first failure of either side is raised."""
    if count <= ACROSS_CHUNK:
        buffer = memoryview(bytearray(count))
        src_session.memcpy_dtoh(src, count, into=buffer)
        dst_session.memcpy_htod(dst, buffer, sync=True)
        return
    free: queue.Queue = queue.Queue()
    full: queue.Queue = queue.Queue()
    for _ in range(ACROSS_BUFFERS):
        free.put(memoryview(bytearray(ACROSS_CHUNK)))

    def fetch() -> None:
        try:
            for off in range(0, count, ACROSS_CHUNK):
                buffer = free.get()
                if buffer is None:          # the sending side failed: stop
                    return
                n = min(ACROSS_CHUNK, count - off)
                src_session.memcpy_dtoh(src + off, n, into=buffer[:n])
                full.put((off, n, buffer))
        except BaseException as exc:        # handed to the sending side, which raises it
            full.put(exc)

    reader = threading.Thread(target=fetch, name="cricket-copy-across", daemon=True)
    reader.start()
    try:
        for _ in range(0, count, ACROSS_CHUNK):
            item = full.get()
            if isinstance(item, BaseException):
                raise item
            off, n, buffer = item
            dst_session.memcpy_htod(dst + off, buffer[:n], sync=True)
            free.put(buffer)
    except BaseException:
        free.put(None)
        raise
    finally:
        reader.join()


def distinct_uuid(uuid: bytes, address: str, ordinal: int) -> bytes:
    """A UUID for a device whose real one an earlier device of the combined list holds already:
    the first 16 bytes of SHA-256 over the real UUID, the server's address and the ordinal there,
    with the RFC 4122 version (8: derived) and variant bits set. The same list gives the same UUIDs
    in every run, so ``CUDA_VISIBLE_DEVICES=GPU-...`` can name them."""
    digest = bytearray(hashlib.sha256(bytes(uuid) + f"|{address}|{ordinal}".encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x80
    digest[8] = (digest[8] & 0x3F) | 0x80
    return bytes(digest)


def distinct_pci(attributes: dict[int, int], taken: set[tuple[int, int, int]]) -> dict[int, int]:
    """``attributes`` with a PCI domain no earlier device of the combined list has at the same bus
    and device id (``cudaDeviceGetByPCIBusId`` must find each device): the server's own domain
    when it is free, else the next free one (two emu servers both report 0000:01:00.0)."""
    domain = attributes.get(A.PCI_DOMAIN_ID, 0)
    bus, slot = attributes.get(A.PCI_BUS_ID, 0), attributes.get(A.PCI_DEVICE_ID, 0)
    while (domain, bus, slot) in taken:
        domain += 1
    taken.add((domain, bus, slot))
    if domain == attributes.get(A.PCI_DOMAIN_ID, 0):
        return attributes
    return {**attributes, A.PCI_DOMAIN_ID: domain}


@dataclasses.dataclass(eq=False)
class Member:
    """One server of the list: its session, the combined index of its device 0, the address ranges
    its devices answered, and why it is unusable (``broken``)."""

    index: int
    address: str
    session: Any
    first: int
    ranges: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    broken: str | None = None
    current: int = 0            # the server ordinal the session is on

    def check(self) -> Any:
        """The session, or SessionUnavailable when this server is gone."""
        if self.broken:
            raise SessionUnavailable(self.broken)
        return self.session

    def switch(self, ordinal: int) -> Any:
        """The session, switched to the server's device ``ordinal``."""
        session = self.check()
        if self.current != ordinal:
            session._check(session._stub.CR_SET_DEVICE(ordinal), "cuCtxSetCurrent")
            self.current = ordinal
        return session


class Servers:
    """The sessions with every server of a list, and the combined device list (module docstring)."""

    def __init__(self, members: list[Member], spec: str | None = None) -> None:
        self.members = members
        combined, owners = [], []
        seen: set[bytes] = set()
        places: set[tuple[int, int, int]] = set()
        for member in members:
            for device in member.session.server_devices:
                uuid = bytes(device.uuid)
                if uuid in seen:
                    uuid = distinct_uuid(uuid, member.address, device.ordinal)
                seen.add(uuid)
                combined.append(dataclasses.replace(device, uuid=uuid,
                                                    attributes=distinct_pci(device.attributes, places)))
                owners.append(member)
        chosen = visible_devices.visible_indices([d.uuid for d in combined], spec if spec is not None
                                                 else os.environ.get(visible_devices.VARIABLE))
        self.all_devices = combined
        self.devices = [combined[i] for i in chosen]          # what the program sees, by its ordinal
        self.device_member = [owners[i] for i in chosen]
        self._starts: list[int] = []
        self._ends: list[tuple[int, Member]] = []

    @classmethod
    def open(cls, addresses: Sequence[str], open_session: Callable[[str], Any]) -> Servers:
        """A session with every server (``open_session(address)``, showing all its devices), each
        placed at its first combined index; an unreachable server raises SessionUnavailable naming
        it (without its device count the list cannot be built)."""
        members: list[Member] = []
        first = 0
        try:
            for index, address in enumerate(addresses):
                try:
                    session = open_session(address)
                except CudaError as exc:
                    raise SessionUnavailable(f"the cricket server at {address} (server {index + 1} of "
                                             f"{len(addresses)}) refused this process: {exc.message}") from exc
                except Exception as exc:
                    raise SessionUnavailable(f"cannot reach the cricket server at {address} (server "
                                             f"{index + 1} of {len(addresses)}): {exc}; start it or "
                                             "take it out of CRICKET_SERVER") from exc
                members.append(Member(index, address, session, first))
                first += len(session.server_devices)
            if first > MAX_DEVICES:
                raise SessionUnavailable(f"the servers {', '.join(addresses)} have {first} devices together; "
                                         f"at most {MAX_DEVICES} fit one process's device list")
            servers = cls(members)
            for member in members:
                try:
                    servers.place(member)
                except CudaError as exc:
                    raise SessionUnavailable(f"the cricket server at {member.address} cannot place its "
                                             f"devices at index {member.first} of the combined list: "
                                             f"{exc.message}") from exc
        except BaseException:
            for member in members:
                member.session.close()
            raise
        return servers

    def place(self, member: Member) -> None:
        """Ask ``member``'s server to put its devices' memory at its combined indices, so that no two
        servers hand out the same device address; file the ranges it answers (none: the cuda
        backend, whose driver picks addresses; allocations are checked against each other then)."""
        from cricket.protocol import gen as P
        session = member.session
        res = session._check(session._stub.CR_PLACE_DEVICES(P.cr_place_args(first=member.first)),
                             "CR_PLACE_DEVICES")
        member.ranges = [(r.base, r.size) for r in res.ranges if r.size]
        for base, size in member.ranges:
            i = bisect_right(self._starts, base)
            if i and self._ends[i - 1][0] > base or i < len(self._starts) and base + size > self._starts[i]:
                other = self._ends[i - 1][1] if i and self._ends[i - 1][0] > base else self._ends[i][1]
                raise SessionUnavailable(f"the servers {other.address} and {member.address} answered "
                                         f"overlapping device address ranges; restart them")
            self._starts.insert(i, base)
            self._ends.insert(i, (base + size, member))
        log.info("server %s: devices from combined index %d, %d address range(s)", member.address,
                 member.first, len(member.ranges))

    def member_at(self, ptr: int) -> Member | None:
        """The server whose answered address ranges hold ``ptr`` (None: in none of them)."""
        i = bisect_right(self._starts, ptr) - 1
        if i >= 0 and ptr < self._ends[i][0]:
            return self._ends[i][1]
        return None

    def lost(self, fallback: Member | None, exc: BaseException) -> list[Member]:
        """A call failed with a connection error: the servers whose connection is gone (the one of
        ``fallback`` when none says so) are marked broken; returns those newly marked."""
        dead = [m for m in self.members if not m.broken and getattr(m.session._rpc, "_error", None) is not None]
        if not dead and fallback is not None and not fallback.broken:
            dead = [fallback]
        for member in dead:
            devices = [i for i, m in enumerate(self.device_member) if m is member]
            member.broken = (f"the connection to the cricket server at {member.address} was lost ({exc}); "
                             f"its device(s) {', '.join(map(str, devices)) or '(none visible)'} are unavailable")
            log.error("%s; their calls now fail with cudaErrorDevicesUnavailable, the other servers' "
                      "devices keep working", member.broken)
        return dead

    def close(self) -> None:
        for member in self.members:
            try:
                member.session.close()
            except Exception as exc:        # closing anyway; say what was left behind
                log.debug("closing the session with %s: %s", member.address, exc)
