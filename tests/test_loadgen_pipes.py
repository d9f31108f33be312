"""Each worker sends its events up a pipe of its own: one killed in the middle of a
message (SIGKILL, the OOM killer) cuts only its own pipe. With one shared
multiprocessing.Queue, a worker that died holding the queue's write lock froze every
other worker's reports and its replacement's hello."""

from __future__ import annotations

import os
import signal

import psycopg
from helpers import wait_until
from test_ui_live import demo_spec

from dashboard.loadgen import LoadGenerator, LoadSettings

WRITE_SYSCALL = {"x86_64": "1", "aarch64": "64"}[os.uname().machine]


def blocked_writing(pid: int) -> bool:
    """The process's main thread sits in write(2): its pipe is full, its message half sent."""
    with open(f"/proc/{pid}/syscall") as f:
        return f.read().split()[0] == WRITE_SYSCALL


def db_count(dsn: str, where: str, *params: object) -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            f"SELECT count(*) FROM queuetop_demo.jobs WHERE {where}", params
        ).fetchone()[0]


def test_a_worker_killed_in_the_middle_of_a_message_cuts_only_its_own_pipe(dsn):
    spec = demo_spec(dsn)
    settings = LoadSettings(workers=2, prefill=12000, rate=0, work_ms=0, lease_s=600)
    with LoadGenerator(dsn, spec, settings) as gen:
        wait_until(lambda: gen.stats().live_workers == 2, timeout=30)
        victim, survivor = gen.stats().workers
        # while the parent's reader waits for this lock it reads nothing: pipes fill up
        with gen._lock:
            wait_until(lambda: blocked_writing(victim.pid), timeout=60)
            os.kill(victim.pid, signal.SIGKILL)
        # the replacement's hello gets through, and every job the survivor finished (the
        # database's count, by its session) reaches the parent
        wait_until(
            lambda: (
                (s := gen.stats()).live_workers == 2
                and victim.k not in {w.k for w in s.workers}
                and db_count(dsn, "status = 'ready'") == 0
            ),
            timeout=90,
        )

        def survivor_reported() -> tuple[int, int] | None:
            [me] = [w for w in gen.stats().workers if w.k == survivor.k]
            done = db_count(dsn, "status = 'done' AND worker = %s", survivor.session)
            said = me.counters["completed"]
            return (said, done) if said == done and done > 0 else None

        wait_until(survivor_reported, timeout=30)
        assert gen.stats().crashed == 1 and gen.stats().double_claims == 0
