"""Session advisory locks as a queue's running signal (Que, good_job's default strategy).

Some libraries claim a job by taking a session-level advisory lock on a key derived
from it (Que: the id; good_job: an md5 of the table name and id) and hold it while the
job runs; when the worker dies, its session ends and the lock with it. Where the spec
names that key (`advisory_lock`, a column or an adapter's derived expression, NULL for
jobs that take no lock), three things follow:

- `{lock_held}` / `{lock_holder}`: whether another session holds the job's lock, and
  which backend: an adapter's derived state may use them (running = held);
- liveness: a running job with a key is alive exactly while its lock is held (it never
  expires while held; it expired when it started once nobody holds it); jobs without a
  key keep the other liveness signals (heartbeat, workers table, session);
- the locks view names the job an advisory lock stands for, so the holder's session is
  seen next to the job (`name_jobs`).
"""

from __future__ import annotations

from dataclasses import replace

import psycopg
from psycopg import errors, sql

import queries
from dashboard.models import LockInfo, QueueSpec

HELD = "monitor/advisory_lock_held"
HOLDER = "monitor/advisory_lock_holder"


def lock_parts(spec: QueueSpec, key: sql.Composable) -> dict[str, sql.Composable]:
    """`{lock_held}` and `{lock_holder}` for the key expression (false / NULL without one)."""
    if spec.columns.advisory_lock is None:
        return {"lock_held": sql.SQL("false"), "lock_holder": sql.SQL("NULL::int")}
    return {
        "lock_held": queries.expression(HELD).format(advisory_lock=key),
        "lock_holder": queries.expression(HOLDER).format(advisory_lock=key),
    }


def liveness(
    spec: QueueSpec,
    cols: dict[str, sql.Composable],
    live_expiry: sql.Composable,
    alive: sql.Composable,
) -> tuple[sql.Composable, sql.Composable]:
    """The lock decides for jobs that have a key: alive while held, expired once released."""
    if spec.columns.advisory_lock is None:
        return live_expiry, alive
    key, held = cols["advisory_lock"], cols["lock_held"]
    expiry = sql.SQL(
        "CASE WHEN ({key}) IS NULL THEN {live} WHEN {held} THEN 'infinity'::"
        "timestamptz ELSE coalesce({started}, {created}, now()) END"
    ).format(
        key=key, live=live_expiry, held=held, started=cols["started_at"], created=cols["created_at"]
    )
    alive = sql.SQL("CASE WHEN ({key}) IS NULL THEN {alive} ELSE {held} END").format(
        key=key, alive=alive, held=held
    )
    return expiry, alive


def name_jobs(
    conn: psycopg.Connection,
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    locks: list[LockInfo],
) -> list[LockInfo]:
    """The locks, each advisory lock on a job's key naming that job (and counted among the
    queue's locks). Unnamed where the job cannot be read now (a locked table, a timeout)."""
    keys = sorted({lk.advisory_key for lk in locks if lk.advisory_key is not None})
    if spec.columns.advisory_lock is None or not keys:
        return locks
    stmt = queries.get(queries.resolve("monitor/get_advisory_jobs", spec.adapter), **parts)
    try:
        jobs = dict(conn.execute(stmt, {"keys": keys}).fetchall())
    except (errors.LockNotAvailable, errors.QueryCanceled):
        return locks
    return [
        replace(lk, job_id=jobs[lk.advisory_key], on_queue_table=True)
        if lk.advisory_key in jobs
        else lk
        for lk in locks
    ]
