"""The tasks the test enqueues; each writes side_effects(label, event) on its own connection:
the proof of what ran and how many times (a django-q2 task does not know its own id)."""

import os
import time

import psycopg


def record(label: str, event: str) -> int:
    """Write one side effect; how many times the task has started so far."""
    with psycopg.connect(os.environ["DJANGO_DSN"], autocommit=True) as conn:
        conn.execute("INSERT INTO side_effects (job_id, event) VALUES (%s, %s)", (label, event))
        return conn.execute(
            "SELECT count(*) FROM side_effects WHERE job_id = %s AND event = 'started'", (label,)
        ).fetchone()[0]


def quick(label: str) -> None:
    record(label, "done")


def boom(label: str) -> None:
    record(label, "raised")
    raise RuntimeError("boom")


def long(label: str, seconds: float) -> None:
    """Runs `seconds` on its first run only (so a rerun is quick), or until the test writes
    'release' for it."""
    if record(label, "started") == 1:
        deadline = time.monotonic() + seconds
        with psycopg.connect(os.environ["DJANGO_DSN"], autocommit=True) as conn:
            while time.monotonic() < deadline:
                released = conn.execute(
                    "SELECT 1 FROM side_effects WHERE job_id = %s AND event = 'release'", (label,)
                ).fetchone()
                if released:
                    break
                time.sleep(0.2)
    record(label, "done")
