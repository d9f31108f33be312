"""The demo schema and a snapshot of it, end to end through the CLI."""

import json

from dashboard.cli import main


def test_init_demo_then_snapshot_json(dsn, capsys):
    assert main(["init-demo", "--dsn", dsn]) == 0
    capsys.readouterr()
    assert main(["snapshot", "--json", "--dsn", dsn]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["queue"] == "queuetop_demo.jobs"
    assert data["counts"] == {"ready": 0, "running": 0, "done": 0, "failed": 0, "dead": 0}
    for key in (
        "taken_at",
        "estimated",
        "by_status",
        "locked",
        "oldest_ready_age_s",
        "locks",
        "waiting",
        "idle_in_transaction",
        "stale_leases",
    ):
        assert key in data
