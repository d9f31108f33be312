"""A large demo-shaped queue for the cost benches, built in one INSERT … SELECT generate_series.

Per 10,000 rows: `ready` ready and `running` running jobs (`stale_percent` % of the running
ones past their lease, the others leased for a day); per 1,000: up to 40 failed and 5 dead;
the rest done. Created over the last days, one row every 50 ms; a finished job started 0 to
1 s after it was created and ran 0 to 3 s (so a latency window of 5 minutes holds the last
6,000 of them, whatever the table's size).
"""

from __future__ import annotations

import psycopg

FILL_SQL = """
INSERT INTO queuetop_demo.jobs (status, created_at, started_at, finished_at, worker,
                                attempts, lease_token, leased_until, payload)
SELECT s.status,
       now() - make_interval(secs => (%(rows)s - g) * 0.05),
       CASE WHEN s.status = 'running' THEN now() - make_interval(secs => g %% 600)
            WHEN s.status <> 'ready' THEN least(now(), now() - make_interval(
                secs => (%(rows)s - g) * 0.05 - (g %% 20) * 0.05)) END,
       CASE WHEN s.status IN ('done', 'failed', 'dead') THEN least(now(), now() - make_interval(
                secs => (%(rows)s - g) * 0.05 - (g %% 20) * 0.05 - (g %% 30) * 0.1)) END,
       CASE WHEN s.status = 'running' THEN 'worker-' || g %% 8 END,
       CASE WHEN s.status = 'ready' THEN 0 ELSE 1 END,
       CASE WHEN s.status = 'ready' THEN 0 ELSE 1 END,
       CASE WHEN s.status = 'running' THEN now() + make_interval(
                secs => CASE WHEN g / 10000 %% 100 < %(stale_percent)s THEN -300 ELSE 86400 END)
       END,
       'job ' || g
FROM generate_series(1, %(rows)s) AS g
CROSS JOIN LATERAL (SELECT CASE WHEN g %% 10000 < %(ready)s THEN 'ready'
                                WHEN g %% 10000 < %(ready)s + %(running)s THEN 'running'
                                WHEN g %% 1000 < 40 THEN 'failed'
                                WHEN g %% 1000 < 45 THEN 'dead'
                                ELSE 'done' END AS status) AS s
"""


def fill_jobs(
    conn: psycopg.Connection, rows: int, *, ready: int, running: int, stale_percent: int
) -> None:
    """Insert the rows into an empty queuetop_demo.jobs, then VACUUM ANALYZE it (autocommit)."""
    conn.execute("SET statement_timeout = 0")
    conn.execute(
        FILL_SQL, {"rows": rows, "ready": ready, "running": running, "stale_percent": stale_percent}
    )
    conn.execute("VACUUM ANALYZE queuetop_demo.jobs")
