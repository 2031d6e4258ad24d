"""Where the time of each bench goes: measured once, by hand, and printed under its table.

The report's figures change with every run; these notes say what limits a row and how that was
found (py-spy of the server at 2 kHz, ``strace -c``, the server's record handling timed alone), so
that the next person starts from there. Measured 2026-12-02 on the 2-core AMD EPYC box that runs
the quick suite (issue 21), with other work on both cores (load average 4-12): read the figures as
proportions, not as absolute times. Re-measure with the commands named before relying on one.
"""
from __future__ import annotations

NOTES: dict[str, list[str]] = {
    "xdr": [
        "breakdown (int<10000> unpack): the decoder does one bounds check for the array and fills the "
        "list in one C loop; what is left per item is the int object. Before, each item was a new "
        "int (116 µs for 0…9999, list(range(10000)) alone ~70-120 µs: 15× xdrlib3 at best); now "
        "ints below 65536 are shared objects made on first use, so counts, sizes and handles cost "
        "a reference each. The \"values ≥ 65536\" row is the other case: still one allocation per "
        "item, at the list(range()) floor (printed by `python bench/xdr.py`).",
    ],
    "rpc": [
        "breakdown (NULL, server side): `strace -c -f -p SERVER` under a libtirpc client: exactly "
        "3 system calls per call (20,000 calls: 20,202 epoll_pwait, 20,200 read, 20,200 write), the "
        "same as libtirpc's svc_run (poll, read, write); write takes ~64% of the system-call time "
        "(loopback TCP delivers to the client inside the sender's write). py-spy of the server: "
        "~48% of samples in the event loop's C code (epoll, read), ~41% in transport.write, ~10% in "
        "Python frames (buffer_updated → RecordReader.feed → _deliver → handle, 0.3-1 µs per "
        "record with a transport that only counts). A NULL call is bound by the kernel, not by Python.",
        "breakdown (NULL, client side): user-space instructions per call counted by callgrind "
        "(the system calls are the same two on both clients): libtirpc's client 1,470; ours 24,911 "
        "when `Client.call` was Python (header by struct, locks, recv_into, RecordReader.feed, "
        "slices to match the xid and the header), 6,700 since the call runs in C "
        "(cext/rpc_call.pyx: ~3,900 in the C call, the rest the Python frame of Client.call and "
        "the client's locks). What is left against the C pair is the server: C client → our server "
        "prices it (our server 14,388 instructions per NULL on main, 7,561 since a record's path "
        "runs in C, cext/dispatch.pyx, against 1,991 for libtirpc's: uvloop's protocol callback "
        "and the write are most of the rest). See docs/rpc-call-path.md and docs/rpc-dispatch.md.",
        "breakdown (many clients): one event loop is one core; 8-32 C clients keep it busy, and "
        "then the server's ~10-15 µs of CPU per call (system calls included) is the limit. "
        "`--workers N` (cricket.rpc.server_workers) serves from N processes; the parent hands "
        "connections out in turn, so each worker has the same number and fairness holds. "
        "SO_REUSEPORT (the kernel hashes each connection to a worker) was measured first: 8 "
        "clients split 5/3 or 6/2 most of the time, fastest client 2.9× the slowest against 1.4× "
        "for libtirpc. `cricket server --workers N` serves the same way, with the server-wide "
        "bounds in a shared ledger and the status view and metrics over every worker "
        "(docs/server-workers.md); its NULL costs more than the bare RPC server's (its program's "
        "admission and per-call hooks).",
    ],
    "latency": [
        "breakdown (ECHO 4 B - 1 KiB): the same 3 system calls per call on the server as NULL "
        "(strace -c); the difference is user space, counted by callgrind on each end alone "
        "(`python bench/echo_instructions.py`: many calls minus few). Both ends now go through "
        "the stub and skeleton rpcgen generates from echo.x, whose compiled codec does each "
        "procedure's arguments and result in one C call (the stub's two steps; the server's two "
        "through Procedure.codec, called from cext/dispatch.pyx with no Python call but the "
        "handler). Server, ECHO 4 B: 16,401 instructions on main (hand-written skeleton: three "
        "Python callables, an Unpacker and a Packer), 10,221 now, against 7,562 per NULL and "
        "2,752 for libtirpc's server; what is left over NULL is the call context's set and reset "
        "(~1,280) and the handler's frame (~520). Client, ECHO 4 B: 12,927 on main, 9,350 now, "
        "against ~7,000 per NULL and 2,397 for libtirpc's client; what NULL itself costs over "
        "libtirpc's is mostly the client's locks, taken through their Python methods "
        "(docs/rpc-procedure-codec.md). At load average 11-15 single runs spread 0.5-2.5x "
        "(docs/rpc-dispatch.md); compare instruction counts, or many interleaved runs.",
        "breakdown (ECHO 256 KiB): not the work. Per call (strace -c -f, 2,000 calls, libtirpc's "
        "client against each server): our server 3.2 read, 1 writev, 3.1 epoll_pwait; libtirpc's "
        "server 5 read, 5 write, 6 poll. Our client 1 sendmsg and 2 recvfrom, libtirpc's 5 write, "
        "5 read, 5 poll. Callgrind, user-space instructions per call: our server 557 k, libtirpc's "
        "791 k; our client 307 k. Idle, the row is 1.1x; beside a hog single runs went 1.35-1.8x for "
        "both trees measured (2026-12-02): with one core left, a 256 KiB record fills the loopback "
        "socket's buffer, so each side waits for the other to be scheduled, and how often the hog "
        "holds the core then decides the row.",
    ],
    "copy": [
        "breakdown (shared memory vs memcpy): a host → device copy through shared memory is two "
        "memcpys (the client into the region, the server from the region into device memory; no "
        "third copy on either side), cut into parts of a quarter of the copy (4 MiB slots, 3 in "
        "flight) so that the two can overlap. Done one after the other they make 0.5× a memcpy "
        "at best; overlap does not help on this box because two 16 MiB memcpys at once share the "
        "memory bandwidth: one process alone copies 31-34 GB/s, two processes at once 10.7-13.2 "
        "GB/s each (numpy.copyto in a loop, 2026-12-03). So the two halves together run at "
        "~12 GB/s, ~0.38× the reference, which is what the row measures (idle 0.33-0.52, beside "
        "a hog 0.28-0.40, three runs). Only one copy can reach 0.5×: pinned memory the server "
        "maps (the row above it, 0.52-0.89×).",
    ],
    "calls": [
        "breakdown (cudaMemcpy 4 KiB - 64 KiB through `cricket run`, pinned): one request and a status "
        "reply per copy, either way (the bytes go through the mapping); the server answers inline. "
        "User-space instructions per 4 KiB copy (callgrind, 2026-12-03): the server 43-45 k, 22.7-23.7 k"
        " since its handler runs in C (cext/pinned_copy_handler.pyx); the program 23-27 k, 10.1-11.2 k "
        "since cudaMemcpy's plain case runs in C (cext/pinned_copy.pyx). Beside a CPU hog both ends "
        "share the one core left, so a copy costs the CPU of both ends: the program ~6.7 µs (of it user "
        "~2.4), the server ~7 µs. The raw socket's download is the least exchange there is (one send and"
        " one receive a side; its upload sends the command and the bytes apart, three system calls a "
        "side), so the same cricket copy reads ~1× the upload and ~0.65-0.8× the download: D→H 4-16 KiB "
        "needs ≤ ~13.6 µs of both ends' CPU beside the hog (beside `yes`, 2026-12-03: cricket 13-22 µs "
        "per 4 KiB D→H copy, the raw download 11.0-11.7 µs, its upload 14.4-14.8 µs; of the program's "
        "5.4-9 µs of CPU, 3.5-7.8 µs is system time). What is left is mostly the kernel's (sendmsg, a "
        "sleeping recvfrom, two wake-ups), the server's record path (~10 k instructions: uvloop's "
        "callback, cext/dispatch.pyx, the codec, the reply), the handler's two Python method calls "
        "(Session._device_at and the emu device's host_address, four frames: ~7 k of the server's "
        "~29 k per D→H copy, callgrind 2026-12-03) and the client's locks and GIL release in "
        "cext/rpc_call.pyx (~2.8 k). "
        "docs/copies.md and docs/client-copy-path.md have the tables.",
    ],
    "kernels": [
        "breakdown (one launch over every core): the launch's CTAs are cut into one range per kernel "
        "worker process, each worker runs its range on the arena's shared mapping, and the launch "
        "returns when every worker has answered (cricket/backends/emu/workers.py). A spread launch costs"
        " a request and a reply per worker and the arena's state: on the short launch (~2 ms on one "
        "core) that fixed cost keeps the ratio at 1.43-1.79× (idle, six runs); the large one reaches "
        "1.97-2.00× (20 ms on one core, 2026-12-03) on an idle box. Beside a CPU hog both workers share "
        "the one core left, so no split can beat one core there (1.00-1.06× large, 0.84-1.08× short): "
        "the goal is for a box with a free core per worker, as the two-sessions row is.",
    ],
}


def notes_for(bench: str) -> list[str]:
    """The breakdown notes of one bench (none for benches not measured this way)."""
    return list(NOTES.get(bench, ()))
