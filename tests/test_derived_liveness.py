"""worker_alive = { derived = "NAME" }: an adapter's own liveness expression (here pg-boss's
per-job heartbeat, which many jobs lack) says whether a running job's worker lives; a job
whose worker is known dead has run out, one whose liveness is unknown runs out only by its
start time (stale_after)."""

from __future__ import annotations

import json

import pytest

from dashboard import config
from dashboard.actions.describe import guard_text
from dashboard.cli import main

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

SPEC = """
[queue]
table = "app.jobs"
adapter = "pg-boss"
status = "status"
started_at = "started_on"
worker_alive = { derived = "worker_alive" }
[queue.states]
ready = ["ready"]
running = ["running"]
[queue.policy]
stale_after = "1 hour"
"""


def test_derived_worker_alive_decides_liveness_and_expiry(dsn, connect, tmp_path, capsys):
    setup = connect(autocommit=True)
    setup.execute("CREATE SCHEMA app")
    setup.execute("""CREATE TABLE app.jobs (id int PRIMARY KEY, status text NOT NULL,
                     started_on timestamptz, heartbeat_on timestamptz, heartbeat_seconds int)""")
    setup.execute("""INSERT INTO app.jobs VALUES
        (1, 'running', now() - interval '1 minute', now() - interval '5 s', 30),   -- alive
        (2, 'running', now() - interval '1 minute', now() - interval '50 s', 30),  -- dead
        (3, 'running', now() - interval '1 minute', now() - interval '50 s', NULL), -- unknown
        (4, 'running', now() - interval '2 hours', NULL, NULL)  -- unknown, past stale_after
    """)
    spec_file = tmp_path / "q.toml"
    spec_file.write_text(SPEC)
    assert main(["snapshot", "--json", "--dsn", dsn, "--queue", str(spec_file)]) == 0
    stale = json.loads(capsys.readouterr().out)["stale_leases"]
    # 2 is stale only because its worker is known dead (its start + stale_after is ahead),
    # and most overdue after 4: it ran out at its start
    assert [(s["id"], s["worker_alive"]) for s in stale] == [(4, None), (2, False)]
    # the confirmation says so too
    assert (
        "a running one only once it started over 3600s ago (started_on) or its worker is "
        "known dead (derived:worker_alive)"
    ) in guard_text(config.load_file(spec_file), False)
