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
        "flight) so that the two overlap. Done one after the other they make 0.5× a memcpy; only "
        "overlap on two free cores beats that, and a 16 MiB memcpy is itself out of cache (~20 "
        "GB/s here against ~50 GB/s at 1 MiB). With the other core busy the parts cannot overlap "
        "and the ratio falls; an idle run of main measured 11.6 GB/s (0.58×).",
    ],
    "calls": [
        "breakdown (cudaMemcpy 4 KiB - 64 KiB through `cricket run`, pinned): one round trip each; "
        "the server answers inline (epoll_pwait, read, write per copy), the client sends one "
        "sendmsg and reads with recvfrom. Beside a CPU hog the polling windows went wrong: a "
        "sched_yield next to a busy process on the same core came back in 14 µs at the median "
        "but 12 ms at the 90th percentile, a time slice handed away per wait. Server and client "
        "now follow one rule (cricket/rpc/contention.py): a yield back after more than 200 µs stops "
        "polling for 50 ms. What is left beside the hog is CPU: per 4 KiB copy the server spends "
        "~77-100 µs (71% in libpython) and the client ~27-44 µs, against ~12-20 µs for each end of "
        "the raw socket; with both ends on the one core the hog leaves, the ratio cannot pass "
        "their CPU ratio (~0.2-0.3) until the server's per-record Python shrinks "
        "(docs/copies.md, \"The client's wait beside a hog\").",
    ],
}


def notes_for(bench: str) -> list[str]:
    """The breakdown notes of one bench (none for benches not measured this way)."""
    return list(NOTES.get(bench, ()))
