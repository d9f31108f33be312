"""A real for-update pile-up, staged with the load generator's own claim, and the monitor's
snapshot of it made stable for an SVG snapshot.

queuetop-worker-1 claims the first ready job with the generator's for-update claim and
holds its claim transaction open (hold-tx); workers 2, 3 and 4 run the same claim, one
after the other, each once the one before it waits (PostgreSQL's own pg_locks says so):
worker-2 first in line on the row, the others behind it.

What varies from run to run (pids, transaction ids, timestamps, ages, timings, the server's
address) is replaced by fixed values; the structure (who holds, who waits on whom, which
job, which lock) is what the monitor read.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from datetime import datetime

from demo_queue import setup_demo
from helpers import is_waiting_on_lock, wait_until
from ui_snapshots import SERVER, T0

from dashboard import db, monitor
from dashboard.loadgen.strategies import build
from dashboard.models import ServerInfo, Snapshot

WORKERS = 4
FIRST_PID = 4101  # worker-K is shown as pid 4100 + K


@contextmanager
def staged_pile_up(dsn, connect, background):
    """Yield (spec, pids): the holder's pid first, then the waiters' in the order they
    queued. Everything is rolled back after."""
    spec = setup_demo(dsn, jobs=6)
    claims = build(spec)
    claim = claims.claims["for-update"]

    def params(k: int) -> dict:
        return claims.params(worker=f"queuetop-worker-{k}", lease_s=30.0, batch=1)

    sessions = [connect(application_name=f"queuetop-worker-{k}") for k in range(1, WORKERS + 1)]
    holder = sessions[0]
    assert holder.execute(claim, params(1)).fetchall()  # job 1, the transaction left open
    observer = connect(autocommit=True)  # the holder's last statement stays its claim
    waits = []
    for k, session in enumerate(sessions[1:], start=2):
        waits.append(background(lambda s=session, k=k: s.execute(claim, params(k)).fetchall()))
        wait_until(lambda s=session: is_waiting_on_lock(observer, s.info.backend_pid))
    try:
        yield spec, [s.info.backend_pid for s in sessions]
    finally:
        holder.rollback()
        for session, wait in zip(sessions[1:], waits, strict=True):
            wait.join()
            session.rollback()


def poll(dsn: str, spec) -> Snapshot:
    """The dashboard's first poll of the pile-up."""
    with db.connect_monitor(dsn) as conn:
        return monitor.Monitor(spec, 1.0).poll(conn)


# durations that vary from run to run: shown as one fixed value per session (the holder's
# the longest, each waiter's shorter than the one before it), or as this value
SESSION_SECONDS = ("wait_s", "xact_age_s", "idle_s")
FIXED_FLOATS = {
    "elapsed_ms": 12.0,
    "cost_ms": 1.0,
    "age_s": 0.0,
    "oldest_ready_age_s": 42.0,
    "monitor_load": 0.004,
}


def stable(snap: Snapshot, pids: list[int]) -> Snapshot:
    """`snap` with what varies replaced: pids by 4101.., transaction ids by 9001.. (the
    holding session's), times by T0, durations and timings by fixed values."""
    pid_map = {pid: FIRST_PID + n for n, pid in enumerate(pids)}
    xids = {
        lock.xid: str(9000 + pid_map[lock.pid] - 4100)
        for lock in snap.locks
        if lock.locktype == "transactionid" and lock.granted and lock.pid in pid_map
    }

    def value(name: str, v, owner: int | None):
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, ServerInfo):
            return SERVER
        if isinstance(v, datetime):
            return T0
        if dataclasses.is_dataclass(v):
            return obj(v)
        if isinstance(v, int) and v in pid_map:
            return pid_map[v]
        if isinstance(v, tuple | list):
            return type(v)(value(name, x, owner) for x in v)
        if isinstance(v, dict):
            return {value("", k, owner): value(name, x, owner) for k, x in v.items()}
        if name == "xid":
            return xids.get(v, "9999")
        if name == "xmin_age":
            return 3
        if isinstance(v, float):
            if name in SESSION_SECONDS and owner is not None:
                return float(10 - (owner - 4100) * 2)
            return FIXED_FLOATS.get(name, v)
        return v

    def obj(o):
        owner = pid_map.get(getattr(o, "pid", None))
        return dataclasses.replace(
            o,
            **{
                f.name: value(f.name, getattr(o, f.name), owner)
                for f in dataclasses.fields(o)
                if f.init
            },
        )

    def in_order(rows: tuple) -> tuple:
        # the monitor's order follows the real pids; the tables sort what they show
        return tuple(sorted(rows, key=lambda row: repr(dataclasses.astuple(row))))

    out = obj(snap)
    per_session = ("locks", "waiting", "idle_in_transaction", "row_lock_holders", "blockers")
    return dataclasses.replace(out, **{name: in_order(getattr(out, name)) for name in per_session})
