"""Chaos: the load generator under killed workers, terminated backends, a server restart,
an idle transaction holding a row and a stopped worker past its lease; then recovery.

    python bench/chaos.py [--jobs 3000] [--workers 4] [--seed N] [--short]

It runs on a private embedded PostgreSQL (it restarts the server). A trigger logs
every change of a job's state or lease token in the changing transaction itself:
that log, not the workers' own counters, is the ground truth for the result:

    produced      jobs inserted
    done / dead   their final states
    lost          produced but neither done nor dead once recovery is over
    done twice    jobs that entered 'done' more than once
    double claims two live owners of one job (the load generator's ledger), and
                  claims of a job that was still running (the log)

Exit 0 when lost, done twice and double claims are all 0; 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dashboard import config, db  # noqa: E402
from dashboard.actions import TableAudit  # noqa: E402
from dashboard.loadgen import LoadGenerator, LoadSettings  # noqa: E402
from dashboard.setup import schema  # noqa: E402

SQL_DIR = Path(__file__).resolve().parent / "chaos_sql"
SETUP = ("create_schema", "create_transitions", "create_log_function", "create_log_trigger")


@dataclass(frozen=True)
class Plan:
    """How hard to push: jobs, workers, and how many of each fault."""

    jobs: int = 3000
    workers: int = 4
    work_ms: float = 20.0
    lease_s: float = 2.0
    fail_rate: float = 0.02
    kills: int = 3  # workers SIGKILLed, one at a time
    terminations: int = 2  # rounds of pg_terminate_backend on every worker's session
    restarts: int = 1
    stops: int = 1  # workers SIGSTOPped, with a job in hand, past their lease
    produce_over_s: float = 20.0  # half the jobs queued at the start, the rest over this
    recovery_timeout_s: float = 180.0
    seed: int | None = None


SHORT = Plan(
    jobs=300,
    workers=3,
    work_ms=10.0,
    lease_s=1.0,
    kills=1,
    terminations=1,
    restarts=1,
    stops=1,
    produce_over_s=8.0,
    recovery_timeout_s=90.0,
)


@dataclass
class Outcome:
    produced: int
    done: int
    dead: int
    lost: int
    done_twice: int
    rescued: int
    claimed_while_running: int
    transitions: int
    double_claims: int = 0  # the load generator's ledger
    reported_completed: int = 0  # what the workers said; a lower bound
    fenced: int = 0  # late writes by a worker that lost its lease, refused by the token
    faults: list[str] = field(default_factory=list)
    stopped_job_rescued: bool = False
    held_job_done: bool = False

    @property
    def ok(self) -> bool:
        return not (
            self.lost or self.done_twice or self.double_claims or self.claimed_while_running
        )


def sql_text(name: str) -> str:
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def wait_for(what: str, fn: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := fn()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"chaos: gave up waiting for {what} after {timeout:g}s")
        time.sleep(0.05)
    return value


class Chaos:
    """One run on the server in `pgdata`; `say` prints the timeline."""

    def __init__(self, pgdata: Path, dsn: str, plan: Plan, say: Callable[[str], None]):
        self.pgdata, self.dsn, self.plan = pgdata, dsn, plan
        self.rng = random.Random(plan.seed)
        self.say_line = say
        self.started = time.monotonic()
        self.faults: list[str] = []

    def say(self, text: str) -> None:
        self.faults.append(text)
        self.say_line(f"{time.monotonic() - self.started:7.1f}s  {text}")

    def query(self, name: str, params: dict | None = None) -> list[tuple]:
        with psycopg.connect(self.dsn, autocommit=True, application_name="chaos") as conn:
            return conn.execute(sql_text(name), params).fetchall()

    # --- setting up ----------------------------------------------------------------------

    def prepare(self):  # -> QueueSpec, validated
        with db.connect_admin(self.dsn) as conn:
            schema.init_demo(conn, reset=True)
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for name in SETUP:
                conn.execute(sql_text(name))
            return config.validate(conn, config.load_preset("demo"))

    # --- the faults ----------------------------------------------------------------------

    def live(self, gen: LoadGenerator) -> list:
        return [w for w in gen.stats().workers if w.alive and w.connected]

    def settle(self, gen: LoadGenerator, what: str) -> None:
        wait_for(
            f"{self.plan.workers} live workers ({what})",
            lambda: (s := gen.stats()).live_workers == self.plan.workers and not s.reconnecting,
            timeout=90,
        )
        done = gen.stats().totals["completed"]
        wait_for(
            f"progress after {what}",
            lambda: (
                gen.stats().totals["completed"] > done or self.query("count_unfinished")[0][0] == 0
            ),
        )

    def kill_worker(self, gen: LoadGenerator) -> None:
        victim = self.rng.choice(self.live(gen))
        crashed = gen.stats().crashed
        os.kill(victim.pid, signal.SIGKILL)
        self.say(f"SIGKILL {victim.session} (pid {victim.pid})")
        wait_for("the killed worker to be replaced", lambda: gen.stats().crashed > crashed)
        self.settle(gen, "the kill")

    def terminate_backends(self, gen: LoadGenerator) -> None:
        before = {w.session for w in gen.stats().workers}
        [(n,)] = self.query("terminate_workers")
        self.say(f"pg_terminate_backend on {n} worker sessions")
        # each worker notices at its next statement and comes back as a new session
        wait_for(
            "every worker on a new session",
            lambda: (
                len([w for w in self.live(gen) if w.session not in before]) == self.plan.workers
            ),
        )
        self.settle(gen, "the terminated backends")

    def restart_server(self, gen: LoadGenerator) -> None:
        self.say("server stop (fast)")
        db.stop_embedded(self.pgdata)
        wait_for("everyone to notice", lambda: gen.stats().live_workers == 0)
        time.sleep(0.5)  # reconnect attempts fail meanwhile: the backoff is exercised
        start_elsewhere(self.pgdata)
        self.say("server started again")
        self.settle(gen, "the restart")

    def stop_past_lease(self, gen: LoadGenerator) -> list[tuple[int, int]]:
        """SIGSTOP a worker that holds a job; SIGCONT once the job was rescued."""
        for _ in range(50):
            victim = self.rng.choice(wait_for("a live worker", lambda: self.live(gen)))
            os.kill(victim.pid, signal.SIGSTOP)
            time.sleep(0.05)  # its last statement, if one was in flight, has landed
            held = self.query("get_running_of_worker", {"worker": victim.session})
            if held:
                break
            os.kill(victim.pid, signal.SIGCONT)
        else:
            raise RuntimeError("chaos: no worker was ever caught holding a job")
        leases = [(job, token) for job, token in held]
        lease_s = self.plan.lease_s
        self.say(f"SIGSTOP {victim.session} holding job {leases[0][0]} (lease {lease_s:g}s)")
        try:
            wait_for(
                "the stopped worker's job to be rescued",
                lambda: self.rescues_of(leases) >= len(leases),
                timeout=lease_s * 10 + 30,
            )
            self.say(f"job {leases[0][0]} rescued (lease expired); SIGCONT {victim.session}")
        finally:
            os.kill(victim.pid, signal.SIGCONT)
        return leases

    def rescues_of(self, leases: list[tuple[int, int]]) -> int:
        """Rescues of exactly these leases (job and token), not of an earlier lease of a job."""
        ids, tokens = [job for job, _ in leases], [token for _, token in leases]
        return self.query("count_rescues_of_leases", {"ids": ids, "tokens": tokens})[0][0]

    def hold_a_row(self) -> tuple[psycopg.Connection, int]:
        conn = psycopg.connect(self.dsn, application_name="chaos-idle-tx")
        row = conn.execute(sql_text("lock_a_ready_job")).fetchone()
        if row is None:
            conn.close()
            raise RuntimeError("chaos: no ready job left to hold")
        self.say(f"idle transaction holds ready job {row[0]} (workers and rescuer skip it)")
        return conn, row[0]

    def release(self, holder: psycopg.Connection, job: int) -> None:
        if holder.closed:
            return
        try:
            holder.rollback()
            self.say(f"idle transaction ends; job {job} is free again")
        except psycopg.OperationalError:  # the restart ended it already
            self.say(f"idle transaction ended by the restart; job {job} is free again")
        holder.close()

    # --- the run ---------------------------------------------------------------------------

    def run(self) -> Outcome:
        p = self.plan
        spec = self.prepare()
        settings = LoadSettings(
            workers=p.workers,
            prefill=p.jobs // 2,
            rate=(p.jobs - p.jobs // 2) / p.produce_over_s,
            work_ms=p.work_ms,
            lease_s=p.lease_s,
            fail_rate=p.fail_rate,
            seed=p.seed,
        )
        gen = LoadGenerator(self.dsn, spec, settings, rescue=TableAudit())
        gen.start()
        try:
            outcome = self._torture(gen)
        finally:
            gen.stop()
            gen.wait(60)
        snap = gen.stats()
        return replace(
            outcome,
            double_claims=snap.double_claims,
            reported_completed=snap.totals["completed"],
            fenced=snap.totals["fenced"],
        )

    def _torture(self, gen: LoadGenerator) -> Outcome:
        p = self.plan
        self.say(
            f"start: {p.workers} workers, {p.jobs // 2} jobs queued, the rest over "
            f"{p.produce_over_s:g}s"
        )
        self.settle(gen, "the start")
        holder, held_job = self.hold_a_row()
        faults = fault_order(
            p.kills,
            p.terminations,
            p.restarts,
            self.kill_worker,
            self.terminate_backends,
            self.restart_server,
        )
        stopped: list[tuple[int, int]] = []
        for i, fault in enumerate(faults):
            fault(gen)
            if i == 0:
                self.release(holder, held_job)
        self.release(holder, held_job)
        for _ in range(p.stops):
            stopped += self.stop_past_lease(gen)
        wait_for("every job to be produced", lambda: gen.stats().enqueued >= p.jobs, 120)
        gen.pause_producer()
        self.say(f"producer paused at {gen.stats().enqueued} jobs; recovery")
        wait_for(
            "nothing ready or running",
            lambda: self.query("count_unfinished")[0][0] == 0,
            timeout=p.recovery_timeout_s,
        )
        self.say("recovered: nothing ready or running")
        [row] = self.query("get_outcome")
        held = self.query("get_job", {"id": held_job})
        return Outcome(
            *row,
            faults=self.faults,
            stopped_job_rescued=bool(stopped) and self.rescues_of(stopped) >= len(stopped),
            held_job_done=bool(held) and held[0][0] in ("done", "dead"),
        )


def fault_order(
    kills: int,
    terminations: int,
    restarts: int,
    kill: Callable,
    terminate: Callable,
    restart: Callable,
) -> list[Callable]:
    """A kill first (the held row outlives it), then kills and terminations taking turns,
    each restart in the middle of them."""
    turns = [kill] if kills else []
    kills -= bool(kills)
    while kills or terminations:
        if terminations:
            turns.append(terminate)
            terminations -= 1
        if kills:
            turns.append(kill)
            kills -= 1
    middle = max(1, len(turns) // 2)
    return turns[:middle] + [restart] * restarts + turns[middle:]


def start_elsewhere(pgdata: Path) -> None:
    """Start the server from another process: this one caches the stopped server's handle."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from dashboard import db; db.start_embedded(Path(sys.argv[1]))",
            str(pgdata),
        ],
        check=True,
        timeout=120,
        cwd=str(Path(__file__).resolve().parent.parent),
    )


def run_chaos(plan: Plan, home: Path, say: Callable[[str], None] = print) -> Outcome:
    """The whole run on a fresh embedded server in `home` (stopped at the end)."""
    pgdata = home / "pgdata"
    dsn = db.start_embedded(pgdata)
    try:
        return Chaos(pgdata, dsn, plan, say).run()
    finally:
        db.stop_embedded(pgdata)


def report(plan: Plan, out: Outcome) -> str:
    lower = out.done > out.reported_completed
    return "\n".join(
        [
            f"result (ground truth: a trigger logged every state change, {out.transitions} in all)",
            f"  produced        {out.produced:6d}",
            f"  done            {out.done:6d}",
            f"  dead            {out.dead:6d}   (failed on every attempt, {plan.fail_rate:.0%} of "
            "attempts fail; or rescued past max_attempts)",
            f"  lost            {out.lost:6d}",
            f"  done twice      {out.done_twice:6d}",
            f"  double claims   {out.double_claims:6d}   (ledger of the load generator; "
            f"claimed while running in the log: {out.claimed_while_running})",
            f"  rescued         {out.rescued:6d}   expired leases requeued by the audited rescuer",
            f"  fenced          {out.fenced:6d}   late writes refused by the lease token",
            f"  workers said    {out.reported_completed:6d}   completed"
            + (
                "  (a lower bound: a killed worker takes its last reports with it)" if lower else ""
            ),
            f"  stopped worker's job rescued: {'yes' if out.stopped_job_rescued else 'no'}; "
            f"held row finished: {'yes' if out.held_job_done else 'no'}",
            "OK: nothing lost, nothing done twice" if out.ok else "FAILED",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="the test suite's small run")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    plan = SHORT if args.short else Plan()
    plan = replace(
        plan,
        **{
            k: v
            for k, v in (("jobs", args.jobs), ("workers", args.workers), ("seed", args.seed))
            if v is not None
        },
    )
    print(
        f"chaos: {plan.jobs} jobs, {plan.workers} workers, work {plan.work_ms:g} ms, lease "
        f"{plan.lease_s:g}s, fail rate {plan.fail_rate:g}; {plan.kills} kills, "
        f"{plan.terminations} backend terminations, {plan.restarts} restarts, "
        f"{plan.stops} stopped workers, an idle transaction holding a row"
    )
    home = Path(tempfile.mkdtemp(prefix="queuetop-chaos-"))
    try:
        outcome = run_chaos(plan, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(report(plan, outcome))
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
