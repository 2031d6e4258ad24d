"""Every attack of this folder at once against ONE server (issue 15: "the server must hold under
all of them at once"), while a victim session runs a real workload and checks its data: each
attacker gets its error, the victim's results stay right, and once everyone left the server's RSS,
descriptors and threads are back where they were and no kernel worker is left running."""
from __future__ import annotations

import os
import threading
import time
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cricket.client.api import connect
from cricket.protocol import PROCEDURES

import attacks
from hostile_peers import assert_back_to, warmed_up
from kernel_peers import PTX, descendants

MIB = 1 << 20
SHARE = 64 * MIB
CAP = MIB
ADMIN = "adm"
FUZZ_EXAMPLES = 40


def fuzz_every_procedure(server) -> None:
    """The fuzz test's mutations of valid calls, over procedures drawn at random."""
    from fuzz_calls import Target, fuzz_one
    target = Target(server)

    @given(name=st.sampled_from(sorted(PROCEDURES)), data=st.data())
    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def fuzz(name, data) -> None:
        fuzz_one(target, name, data)

    try:
        fuzz()
    finally:
        target.close()


class Victim:
    """A session that copies and computes while the attacks run, checking every result."""

    def __init__(self, server) -> None:
        self.conn = connect(server.address)
        self.fill = self.conn.load_module(PTX).get_function("fill")
        self.rounds = 0
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        rng = np.random.default_rng(15)
        n = 4096
        out = self.conn.alloc(4 * n)
        try:
            while not self.stop.is_set():
                data = rng.bytes(2 * MIB)
                buf = self.conn.to_device(data)
                value = int(rng.integers(1, 1 << 31))
                self.fill.launch(n // 256, 256, [out, value], sync=True)
                if bytes(buf.to_host()) != data:
                    self.failures.append(f"round {self.rounds}: copied data came back changed")
                if not (out.to_host(np.uint32) == value).all():
                    self.failures.append(f"round {self.rounds}: the kernel's results are wrong")
                buf.free()
                self.rounds += 1
        except Exception:
            self.failures.append(traceback.format_exc())

    def __enter__(self) -> "Victim":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(120)
        self.conn.close()


def _attempt(name: str, attack, results: dict[str, str]) -> None:
    try:
        attack()
        results[name] = "ok"
    except pytest.skip.Exception as skipped:
        results[name] = f"skipped: {skipped}"
    except BaseException:
        results[name] = traceback.format_exc()


def test_every_attack_at_once_leaves_the_victim_and_the_server_whole(start_server, tmp_path):
    mark = tmp_path / "imported"
    server = start_server("--backend", "emu", "--session-memory", str(SHARE), "--max-image", str(CAP),
                          "--hello-timeout", "2", "--admin-token", ADMIN,
                          env={"CRICKET_TEST_IMPORT_MARK": str(mark)})
    baseline = warmed_up(server)
    started = time.monotonic()
    with Victim(server) as victim:
        kept = os.urandom(MIB)
        target = victim.conn.to_device(kept)
        every = {
            "shrink a region": lambda: attacks.shrink_a_region(server),
            "reach for another region": lambda: attacks.reach_for_another_region(server, target.device_ptr),
            "hard link": lambda: attacks.hard_link_to_another_programs_object(server),
            "silent inbox connections": lambda: attacks.silent_inbox_connections(server),
            "large record before HELLO": lambda: attacks.large_record_before_hello(server),
            "idle connections before HELLO": lambda: attacks.idle_connections_before_hello(server, 100),
            "fragments before HELLO": lambda: attacks.fragments_past_the_limit_before_hello(server),
            "silent until the HELLO timeout": lambda: attacks.silent_until_the_hello_timeout(server),
            "past the memory share": lambda: attacks.allocate_past_the_share(server, SHARE),
            "copies queued behind a kernel": lambda: attacks.copies_queued_behind_a_kernel(server, seconds=2.0),
            "junk image": lambda: attacks.junk_image(server, CAP // 2),
            "image over the cap": lambda: attacks.image_over_the_cap(server, CAP),
            "endless kernel, then leave": lambda: attacks.spin_and_leave(server),
            "2^31-1 blocks, then leave": lambda: attacks.spin_and_leave(server, 2**31 - 1, "nothing"),
            "backend by module": lambda: attacks.load_backend_by_module(server, ADMIN, mark),
            "fuzzed calls": lambda: fuzz_every_procedure(server),
        }
        results: dict[str, str] = {}
        threads = [threading.Thread(target=_attempt, args=(name, attack, results), name=name)
                   for name, attack in every.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not [t.name for t in threads if t.is_alive()], "attacks still running after 300 s"
        failed = {name: r for name, r in results.items() if r != "ok" and not r.startswith("skipped")}
        assert not failed, "\n".join(f"--- {name}:\n{r}" for name, r in failed.items())
        assert victim.conn.memcpy_dtoh(target, MIB) == kept
    assert not victim.failures, victim.failures
    assert victim.rounds > 0
    print(f"all attacks at once: {time.monotonic() - started:.1f} s, victim rounds {victim.rounds}")
    assert server.alive(), server.output()[-3000:]
    deadline = time.monotonic() + 30                 # every session left: every kernel worker ends
    while descendants(server.process.pid, below=1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not descendants(server.process.pid, below=1), "a kernel worker outlived its session"
    assert_back_to(server, baseline, rss_slack=32 << 20)
    assert not mark.exists()
