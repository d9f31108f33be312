"""The lock oracle: queuetop's holders, waiters, blocker tree and job ids against what
PostgreSQL holds, at many frozen moments of staged sessions.

    .venv/bin/python bench/lock_oracle.py [--dsn DSN] [--samples 5000] [--seed 1]

Real sessions claim jobs FOR UPDATE (piling up behind one row), share rows FOR SHARE
and FOR KEY SHARE (several at once: a multixact), claim with SKIP LOCKED and NOWAIT,
update rows they hold, finish the row others are queued on (the waiters then lock its
new version and move on: holder and waiter at once), take advisory locks others wait
for, and hold rows of another table too. After each step the scene settles (every
session either waits on a lock or is idle in its transaction: nothing moves), and the
step is one sample:

- ground truth is read (pgrowlocks on the queue table, pg_locks, pg_blocking_pids for
  each waiter), then queuetop's Monitor polls, then ground truth is read again; a sample
  whose two readings differ was not frozen (a deadlock broken, a lock granted), or whose
  poll saw locks of a session outside the scene that neither reading saw (it came and
  went between them), and is discarded, never compared;
- compared: which jobs each session holds, with each multixact member's mode; who waits,
  on whom (queuetop's blockers, and its chain, must be edges of pg_blocking_pids' graph);
  the job each waiter is queued on, whether it is first in line, and who holds that job;
  the jobs each idle transaction holds; every pg_locks row; and the words the locks view
  uses for a place in a row's queue (never a row lock held).

Half the rounds run in index mode (the demo's partial indexes serve the active rows),
half in scan mode (no index: the one pass reads them). Prints samples compared,
discarded and mismatches (0 is the bar), each mismatch with its scene.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import server  # noqa: E402
from bench.oracle_truth import JOBS, SIDE, compare, in_cycle, read_truth  # noqa: E402
from dashboard import config, db  # noqa: E402
from dashboard.models import QueueSpec  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402
from dashboard.setup import schema  # noqa: E402

SESSIONS = 7
READY = 8
CLAIM = f"SELECT id FROM {JOBS} WHERE status = 'ready' ORDER BY id LIMIT 1"


class Session:
    """One client session: statements run one at a time in its own thread."""

    def __init__(self, dsn: str, name: str) -> None:
        self.conn = psycopg.connect(dsn, application_name=name)
        self.pid = self.conn.info.backend_pid
        self.busy = threading.Event()
        self.rows: list[Any] = []  # what its last statement returned
        self.error: str | None = None
        self.held: list[Any] = []  # jobs it claimed FOR UPDATE (to finish later)

    def run(self, text: str, params: Any = None, *, then: Callable | None = None) -> None:
        self.busy.set()

        def work() -> None:
            try:
                self.rows = [r[0] for r in self.conn.execute(text, params).fetchall()]
                self.error = None
                if then:
                    then(self)
            except psycopg.Error as exc:  # NOWAIT, a deadlock victim, a cancel: roll back
                self.error = type(exc).__name__
                self.conn.rollback()
                self.held = []
            finally:
                self.busy.clear()

        threading.Thread(target=work, daemon=True).start()

    def commit(self) -> None:
        self.conn.commit()
        self.held = []


@dataclass
class Result:
    samples: int = 0
    discarded: int = 0
    steps: int = 0
    mismatches: list[str] = field(default_factory=list)
    kinds: Counter = field(default_factory=Counter)  # what the samples saw


class Stage:
    """The queue, the sessions on it, and the steps that move them."""

    def __init__(self, dsn: str, rng: random.Random, scan: bool) -> None:
        self.dsn, self.rng, self.scan = dsn, rng, scan
        with psycopg.connect(dsn, autocommit=True) as conn:
            schema.init_demo(conn, reset=True)
            conn.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
            conn.execute(f"CREATE TABLE {SIDE} (id int PRIMARY KEY, note text)")
            conn.execute(f"INSERT INTO {SIDE} SELECT g, 'side' FROM generate_series(1, 4) g")
            if scan:  # no index serves the active rows: the one pass reads them
                conn.execute(
                    "DROP INDEX queuetop_demo.jobs_ready_idx, queuetop_demo.jobs_running_idx"
                )
            else:  # enough finished rows that the planner reads the active ones by index
                conn.execute(
                    f"INSERT INTO {JOBS} (status, payload) "
                    "SELECT 'done', 'old' FROM generate_series(1, 3000)"
                )
            conn.execute(f"VACUUM ANALYZE {JOBS}")
            self.spec: QueueSpec = config.validate(conn, config.load_preset("demo"))
        self.sessions = [Session(dsn, f"oracle-{i}") for i in range(SESSIONS)]
        self.truth_conn = psycopg.connect(dsn, autocommit=True)
        self.mon = db.connect_monitor(dsn, 5000)
        self.monitor = Monitor(self.spec, 1.0)
        self.skip = {self.truth_conn.info.backend_pid, self.mon.info.backend_pid}
        self.outcomes: Counter = Counter()  # moves, and the errors some came to

    def close(self) -> None:
        self.reset()
        for s in self.sessions:
            s.conn.close()
        self.truth_conn.close()
        self.mon.close()

    def refill(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"DELETE FROM {JOBS} WHERE payload = 'oracle'")
            conn.execute(
                f"INSERT INTO {JOBS} (status, payload) "
                f"SELECT 'ready', 'oracle' FROM generate_series(1, {READY})"
            )

    def reset(self) -> None:
        """Every session back to no transaction: cancel what waits, roll back the rest."""
        for s in self.sessions:
            if s.busy.is_set():
                self.truth_conn.execute("SELECT pg_cancel_backend(%s)", (s.pid,))
        deadline = time.monotonic() + 10
        while any(s.busy.is_set() for s in self.sessions):
            if time.monotonic() > deadline:
                raise SystemExit("a session did not stop after its cancel")
            time.sleep(0.002)
        for s in self.sessions:
            s.conn.rollback()
            s.held = []

    def settle(self) -> bool:
        """Until every busy session waits on a lock (nothing moves any more)."""
        deadline = time.monotonic() + 10
        while True:
            busy = {s.pid for s in self.sessions if s.busy.is_set()}
            if not busy:
                return True
            waiting = {  # waiting for a lock now, and still asleep on it
                r[0]
                for r in self.truth_conn.execute(
                    "SELECT a.pid FROM pg_stat_activity AS a WHERE a.wait_event_type = 'Lock' "
                    "AND a.pid = ANY (%s) AND EXISTS (SELECT 1 FROM pg_locks AS l "
                    "WHERE l.pid = a.pid AND NOT l.granted)",
                    (list(busy),),
                ).fetchall()
            }
            if busy <= waiting:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)

    def ready_ids(self) -> list[int]:
        return [
            r[0]
            for r in self.truth_conn.execute(
                f"SELECT id FROM {JOBS} WHERE status IN ('ready', 'running') "
                "AND payload = 'oracle' ORDER BY id"
            ).fetchall()
        ]

    MOVES = {  # move -> weight in the random rounds
        "claim": 6,
        "share": 3,
        "keyshare": 2,
        "skip": 3,
        "nowait": 2,
        "update": 2,
        "finish": 4,
        "advisory": 2,
        "side": 2,
        "commit": 2,
        "rollback": 2,
    }

    def step(self) -> str:
        """One random move of an idle session; what it was."""
        free = [s for s in self.sessions if not s.busy.is_set()]
        if not free:
            self.reset()
            return "reset (every session waits)"
        ids = self.ready_ids()
        move = self.rng.choices(list(self.MOVES), weights=list(self.MOVES.values()))[0]
        job = self.rng.choice(ids) if ids else None
        key = self.rng.choice((7, 7, 8))
        self.do(self.rng.choice(free), move, job, key)
        return move

    def do(self, s: Session, move: str, job: Any = None, key: int = 7) -> None:
        for other in self.sessions:  # what the last moves came to
            if other.error and not other.busy.is_set():
                self.outcomes[other.error] += 1
                other.error = None
        self.outcomes[move] += 1
        keep = lambda sess: sess.held.extend(sess.rows)  # noqa: E731
        if move == "claim":  # plain FOR UPDATE: a pile-up behind the first ready row
            s.run(CLAIM + " FOR UPDATE", then=keep)
        elif move == "skip":
            s.run(CLAIM + " FOR UPDATE SKIP LOCKED", then=keep)
        elif move == "nowait":
            s.run(CLAIM + " FOR UPDATE NOWAIT", then=keep)
        elif move in ("share", "keyshare") and job is not None:
            how = "FOR SHARE" if move == "share" else "FOR KEY SHARE"
            s.run(f"SELECT id FROM {JOBS} WHERE id = %s {how}", (job,))
        elif move == "update" and job is not None:  # a claim's update: no key changed
            s.run(
                f"UPDATE {JOBS} SET status = 'running', worker = 'oracle' WHERE id = %s "
                "RETURNING id",
                (job,),
                then=keep,
            )
        elif move == "finish" and s.held:  # its job done: the waiters move on
            s.run(
                f"UPDATE {JOBS} SET status = 'done' WHERE id = ANY (%s) RETURNING id",
                (list(s.held),),
                then=lambda sess: sess.commit(),
            )
        elif move == "advisory":
            s.run("SELECT pg_advisory_xact_lock(%s)::text", (key,))
        elif move == "side":  # rows of another table too
            s.run(f"SELECT id FROM {SIDE} WHERE id = %s FOR UPDATE", (key - 6,))
        elif move == "rollback":
            s.conn.rollback()
            s.held = []
        else:
            s.commit()

    def scripted(self) -> list[tuple[int, str, Any]]:
        """Every kind of moment at least once, in a fixed order: (session, move, job)."""
        j = self.ready_ids()
        return [
            (6, "nowait", None),  # nothing held yet: it claims the first job
            (6, "rollback", None),
            (0, "claim", None),  # holds j[0]
            (1, "claim", None),  # first in line for j[0]
            (2, "claim", None),  # queued behind 1
            (4, "skip", None),  # SKIP LOCKED: takes j[1]
            (6, "nowait", None),  # NOWAIT on j[0]: lock_not_available
            (3, "share", j[3]),
            (5, "share", j[3]),  # two sharers: a multixact
            (5, "keyshare", j[4]),
            (6, "update", j[4]),  # an update beside a key share: a multixact too
            (0, "finish", None),  # j[0] done: 1 locks it and waits for j[1]; 2 waits for 1
            (3, "advisory", None),
            (6, "advisory", None),  # waits for 3's advisory lock
            (3, "side", None),
            (0, "side", None),  # waits for 3's row of the other table
            (3, "keyshare", j[5]),
            (4, "keyshare", j[5]),
            (4, "share", j[5]),  # one session in two modes of a row shared with another
            (4, "keyshare", j[5]),  # (no change: the next sample is a fresh pass in scan mode)
        ]

    def sample(self, result: Result) -> None:
        """In scan mode every other sample makes the one pass read the table again (as
        when its period comes); the others carry what the last pass found."""
        fresh = not self.scan or result.steps % 2 == 0
        if fresh:
            for section in self.monitor.sections.values():
                section.tried_at = None
        before = read_truth(self.truth_conn, self.skip)
        snap = self.monitor.poll(self.mon)
        after = read_truth(self.truth_conn, self.skip)
        # a session of no scene that came and went between the two readings (an
        # autovacuum worker's ANALYZE, with its transaction id): the server was not frozen
        ours = {s.pid for s in self.sessions}
        passing = {lk.pid for lk in snap.locks} - ours - {k[0] for k in before.locks}
        if before != after or passing:
            result.discarded += 1
            return
        result.samples += 1
        result.kinds.update(
            k
            for k, seen in (
                ("waiters", before.waiting),
                ("multixact holders", any(m for _, _, m in before.held)),
                (
                    "one session in two modes of a row",
                    len({(p, j) for p, j, m in before.held if m})
                    < sum(1 for h in before.held if h[2]),
                ),
                ("first in line", any(g for _, g in before.queued.values())),
                ("queued behind the first", any(not g for _, g in before.queued.values())),
                ("holder and waiter", {p for p, _, _ in before.held} & set(before.waiting)),
                ("advisory lock waits", any(k[1] == "advisory" and not k[3] for k in before.locks)),
                (
                    "waits for another table's row",
                    any(k[1] == "tuple" and k[4] == SIDE for k in before.locks),
                ),
                ("deadlock cycles", any(in_cycle(p, before.waiting) for p in before.waiting)),
            )
            if seen
        )
        result.kinds["carried holders (scan mode)" if not fresh else "fresh"] += 1
        if not self.scan and before.finished:
            result.kinds["finished rows held in passing (index mode: not read)"] += 1
        for line in compare(snap, before, carried=not fresh, index_mode=not self.scan):
            result.mismatches.append(f"[{'scan' if self.scan else 'index'}] {line}")


def run_oracle(dsn: str, samples: int, seed: int, say: Callable[[str], None] = print) -> Result:
    """Sample until `samples` frozen moments were compared, half in each count mode."""
    rng = random.Random(seed)
    result = Result()
    for scan in (False, True):
        stage = Stage(dsn, rng, scan)
        goal = samples // 2 if not scan else samples - result.samples
        started = result.samples
        try:
            stage.reset()
            stage.refill()
            for who, move, job in stage.scripted():
                stage.do(stage.sessions[who], move, job)
                result.steps += 1
                if stage.settle():
                    stage.sample(result)
                else:
                    result.discarded += 1
            while result.samples - started < goal:
                result.kinds.update(stage.outcomes)
                stage.outcomes.clear()
                stage.reset()
                stage.refill()
                for _ in range(rng.randint(4, 14)):
                    stage.step()
                    result.steps += 1
                    if stage.settle():
                        stage.sample(result)
                    else:
                        result.discarded += 1
        finally:
            stage.close()
        say(
            f"{'scan' if scan else 'index'} mode: {result.samples - started} samples, "
            f"count mode {stage.monitor.plan.mode if stage.monitor.plan else '?'}"
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        started = time.monotonic()
        result = run_oracle(dsn, args.samples, args.seed)
        took = time.monotonic() - started
    print(
        f"lock oracle: {result.samples} samples compared, {result.discarded} discarded "
        f"(not frozen), {result.steps} steps in {took:.0f} s: "
        f"{len(result.mismatches)} mismatches"
    )
    print(
        "  moves, their errors, and samples that saw: "
        + ", ".join(f"{k} {n}" for k, n in sorted(result.kinds.items()))
    )
    for line in result.mismatches[:30]:
        print("  MISMATCH " + line)
    sys.exit(1 if result.mismatches else 0)


if __name__ == "__main__":
    main()
