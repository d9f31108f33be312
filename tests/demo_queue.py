"""A demo queue for action tests: jobs, and workers that obey the lease token (fencing)."""

from __future__ import annotations

import psycopg

from dashboard import config
from dashboard.models import QueueSpec
from dashboard.setup import schema

JOBS = "queuetop_demo.jobs"


def setup_demo(dsn: str, jobs: int = 0) -> QueueSpec:
    """The demo schema with `jobs` ready jobs; the validated demo spec."""
    with psycopg.connect(dsn) as conn:
        schema.init_demo(conn)
        if jobs:
            conn.execute(
                "INSERT INTO queuetop_demo.jobs (payload) "
                "SELECT 'job ' || g FROM generate_series(1, %s) AS g",
                (jobs,),
            )
        conn.commit()
        spec = config.validate(conn, config.load_preset("demo"))
        conn.commit()
    return spec


def claim(conn: psycopg.Connection, worker: str, lease_s: float = 30.0) -> tuple[int, int] | None:
    """Claim one ready job (skip-locked), advancing its token and recording this backend's
    pid as the demo's workers do; (id, token) or None."""
    row = conn.execute(
        "UPDATE queuetop_demo.jobs SET status = 'running', worker = %(w)s, "
        "worker_pid = pg_backend_pid(), "
        "lease_token = lease_token + 1, attempts = attempts + 1, started_at = now(), "
        "leased_until = now() + make_interval(secs => %(s)s) "
        "WHERE id = (SELECT id FROM queuetop_demo.jobs WHERE status = 'ready' ORDER BY id "
        "FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id, lease_token",
        {"w": worker, "s": lease_s},
    ).fetchone()
    if not conn.autocommit:
        conn.commit()
    return (row[0], row[1]) if row else None


def finish(conn: psycopg.Connection, job_id: int, token: int, status: str = "done") -> bool:
    """The owner's completion: changes the job only while it holds the same token."""
    cur = conn.execute(
        "UPDATE queuetop_demo.jobs SET status = %(st)s, finished_at = now() "
        "WHERE id = %(id)s AND status = 'running' AND lease_token = %(t)s",
        {"st": status, "id": job_id, "t": token},
    )
    if not conn.autocommit:
        conn.commit()
    return cur.rowcount == 1


def expire(conn: psycopg.Connection, job_id: int) -> None:
    """Make a job's lease lapse, as if its worker died a while ago."""
    conn.execute(
        "UPDATE queuetop_demo.jobs SET leased_until = now() - interval '1 minute' WHERE id = %s",
        (job_id,),
    )
    if not conn.autocommit:
        conn.commit()


def job(conn: psycopg.Connection, job_id: int) -> dict | None:
    cur = conn.execute(
        "SELECT status, worker, lease_token, attempts, leased_until, last_error "
        "FROM queuetop_demo.jobs WHERE id = %s",
        (job_id,),
    )
    row = cur.fetchone()
    return dict(zip([c.name for c in cur.description], row, strict=True)) if row else None


def audit_rows(conn: psycopg.Connection) -> list[dict]:
    cur = conn.execute(
        "SELECT action, target, from_state, to_state, reason, outcome, detail, "
        "db_user, os_user FROM queuetop.audit_log ORDER BY audit_id"
    )
    return [dict(zip([c.name for c in cur.description], r, strict=True)) for r in cur.fetchall()]
