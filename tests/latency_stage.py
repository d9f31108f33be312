"""A staged workload with known wait and run times, and the truth computed from its rows.

The demo queue (tests/demo_queue.py), its `queue` column as the group. Per group a
producer enqueues a job every `gap` seconds and workers (threads, each with its own
connection) claim a job only once it has been ready for the group's wait time, then work
the group's run time and finish it (every FAIL_EVERY-th job of a group ends failed):

    stage = Stage(dsn, seconds=4.0)
    stage.start(); ...; stage.stop()          # or stage.run()
    truth(conn, window_s=300)                 # {None: …, "fast": …, "slow": …}

Each wait is at least the group's wait time and each run at least its run time by
construction (the claim's and the finish's now() are taken after them); what they are
beyond that is whatever the machine made them, which is why the truth is read from the
rows, never assumed. Reused by the latency acceptance of the dashboard and of /metrics.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

import psycopg
from demo_queue import setup_demo

from dashboard.models import QueueSpec


@dataclass(frozen=True)
class Timing:
    wait_s: float  # how long a job is ready before a worker may claim it
    run_s: float  # how long a worker works on it


GROUPS = {"fast": Timing(wait_s=0.3, run_s=0.2), "slow": Timing(wait_s=1.0, run_s=0.6)}
FAIL_EVERY = 5
GAP_S = 0.2  # a producer enqueues a job of its group this often
# the flags that watch this queue with its groups (the demo preset maps no group)
FLAGS = ("--preset", "demo", "--group-column", "queue")

CLAIM = """
UPDATE queuetop_demo.jobs
SET status = 'running', worker = %(worker)s, worker_pid = pg_backend_pid(),
    started_at = now(), attempts = attempts + 1, lease_token = lease_token + 1,
    leased_until = now() + interval '1 minute'
WHERE id = (SELECT id FROM queuetop_demo.jobs
            WHERE status = 'ready' AND queue = %(group)s
              AND created_at <= now() - make_interval(secs => %(wait)s)
            ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id
"""
FINISH = """
UPDATE queuetop_demo.jobs
SET status = CASE WHEN id %% %(every)s = 0 THEN 'failed' ELSE 'done' END,
    finished_at = now(), leased_until = NULL,
    last_error = CASE WHEN id %% %(every)s = 0 THEN 'staged failure' END
WHERE id = %(id)s
"""
ENQUEUE = "INSERT INTO queuetop_demo.jobs (queue, payload) VALUES (%s, 'staged')"


def create_queue(dsn: str) -> QueueSpec:
    """The empty demo queue; its validated spec with the `queue` column as the group."""
    spec = setup_demo(dsn)
    return replace(spec, columns=replace(spec.columns, group="queue"))


class Stage:
    """Producers and workers per group, running until stop() (then every job claimed is
    finished, and every job enqueued is claimed and finished)."""

    def __init__(self, dsn: str, seconds: float = 4.0, gap: float = GAP_S, workers: int = 3):
        self.dsn, self.seconds, self.gap, self.workers = dsn, seconds, gap, workers
        self._producing = threading.Event()
        self._working = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def start(self) -> None:
        self._producing.set()
        self._working.set()
        for group, timing in GROUPS.items():
            self._spawn(self._produce, group)
            for n in range(self.workers):
                self._spawn(self._work, group, timing, f"stage-{group}-{n}")

    def stop(self, timeout: float = 30.0) -> None:
        """No more jobs; the workers drain what was enqueued, then stop."""
        self._producing.clear()
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while conn.execute(
                "SELECT count(*) FROM queuetop_demo.jobs WHERE status IN ('ready', 'running')"
            ).fetchone()[0]:
                if time.monotonic() > deadline or self.errors:
                    break
                time.sleep(0.05)
        self._working.clear()
        for thread in self._threads:
            thread.join(timeout)
        if self.errors:
            raise self.errors[0]

    def run(self) -> None:
        """The whole stage: `seconds` of production, then the drain."""
        self.start()
        time.sleep(self.seconds)
        self.stop()

    def _spawn(self, fn, *args) -> None:
        def guarded() -> None:
            try:
                fn(*args)
            except BaseException as exc:  # a failed thread fails the stage, not silently
                self.errors.append(exc)

        thread = threading.Thread(target=guarded, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _produce(self, group: str) -> None:
        with psycopg.connect(self.dsn, autocommit=True, application_name="stage-producer") as c:
            while self._producing.is_set():
                c.execute(ENQUEUE, (group,))
                time.sleep(self.gap)

    def _work(self, group: str, timing: Timing, name: str) -> None:
        with psycopg.connect(self.dsn, autocommit=True, application_name=name) as conn:
            while self._working.is_set():
                row = conn.execute(
                    CLAIM, {"worker": name, "group": group, "wait": timing.wait_s}
                ).fetchone()
                if row is None:
                    time.sleep(0.01)
                    continue
                time.sleep(timing.run_s)
                conn.execute(FINISH, {"id": row[0], "every": FAIL_EVERY})


def fill_history(conn: psycopg.Connection, rows: int) -> None:
    """`rows` finished demo jobs, one every 8 s back from 6 s ago (37 in a window of 300 s,
    the oldest of them 6 s from leaving it; every tenth failed), vacuumed."""
    conn.execute(
        """INSERT INTO queuetop_demo.jobs (status, created_at, started_at, finished_at)
           SELECT CASE WHEN g %% 10 = 0 THEN 'failed' ELSE 'done' END,
                  now() - make_interval(secs => g * 8.0 + 1),
                  now() - make_interval(secs => g * 8.0 - 1),
                  now() - make_interval(secs => g * 8.0 - 2)
           FROM generate_series(1, %s) AS g""",
        (rows,),
    )
    conn.execute("VACUUM ANALYZE queuetop_demo.jobs")


# --- the truth, from the rows -----------------------------------------------------------------

ROWS = """
SELECT queue,
       started_at >= now() - make_interval(secs => %(w)s) AS started_in_window,
       finished_at >= now() - make_interval(secs => %(w)s) AS finished_in_window,
       extract(epoch FROM started_at - created_at)::float8 AS wait_s,
       extract(epoch FROM finished_at - started_at)::float8 AS run_s,
       status
FROM queuetop_demo.jobs
"""


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile with linear interpolation between the two nearest (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


@dataclass(frozen=True)
class Truth:
    waits: tuple[float, ...]
    runs: tuple[float, ...]
    finished: int
    failed: int

    def wait(self, q: float) -> float | None:
        return percentile(list(self.waits), q)

    def run(self, q: float) -> float | None:
        return percentile(list(self.runs), q)


def truth(conn: psycopg.Connection, window_s: float = 300.0) -> dict[str | None, Truth]:
    """Per group (and None: the whole queue) the waits of the jobs started in the window,
    the runs of those finished in it, how many finished and how many of them failed: read
    as raw rows, computed here."""
    rows = conn.execute(ROWS, {"w": window_s}).fetchall()
    out: dict[str | None, Truth] = {}
    for group in (None, *sorted({r[0] for r in rows})):
        mine = [r for r in rows if group is None or r[0] == group]
        out[group] = Truth(
            waits=tuple(r[3] for r in mine if r[1]),
            runs=tuple(r[4] for r in mine if r[2]),
            finished=sum(1 for r in mine if r[2]),
            failed=sum(1 for r in mine if r[2] and r[5] in ("failed", "dead")),
        )
    return out
