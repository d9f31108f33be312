"""`queuetop export`: the metric families of a snapshot, stale values while the database is
down, the listen address, and one-line errors. (Prometheus itself: test_export_prometheus.)"""

from __future__ import annotations

import argparse
import subprocess
import sys
import urllib.request
from dataclasses import replace

import psycopg
import pytest
from export_stage import ExportProcess, StagedQueue
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from psycopg import conninfo, sql
from test_cli_errors import assert_one_line_error, run_cli
from ui_snapshots import demo_spec, fixed_snapshot

from dashboard.cli.export_command import listen_address
from dashboard.metrics.exporter import Exporter, serve_metrics
from dashboard.metrics.families import PollStats, exporter_families, snapshot_families


def samples(text: str) -> dict[tuple, float]:
    """Exposition text -> {(sample name, sorted labels): value}."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


class Families:
    def __init__(self, *families):
        self.families = families

    def collect(self):
        yield from self.families


def exposition(*families) -> dict[tuple, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families(*families))
    return samples(generate_latest(registry).decode())


def test_snapshot_families_carry_every_number_under_its_own_name():
    snap = fixed_snapshot(step=3, rows=4)
    got = exposition(*snapshot_families(snap, demo_spec()))
    table = ("table", "queuetop_demo.jobs")
    for role, n in snap.counts.items():
        estimated = ("estimated", "true" if role in snap.estimated else "false")
        assert got[("queuetop_jobs", (estimated, ("role", role), table))] == n
    assert got[("queuetop_row_locked_jobs", (("role", "ready"), table))] == 2
    assert got[("queuetop_row_locked_jobs", (("role", "running"), table))] == 8
    assert got[("queuetop_oldest_ready_age_seconds", (table,))] == 45.0
    assert got[("queuetop_stale_leases", (table,))] == len(snap.stale_leases) == 4
    assert got[("queuetop_stale_lease_max_overdue_seconds", (table,))] == 240 + 6 + 4
    assert got[("queuetop_waiting_sessions", ())] == len(snap.waiting) == 4
    assert got[("queuetop_waiting_max_seconds", ())] == 12.5 + 3
    assert got[("queuetop_idle_in_transaction_sessions", ())] == 4
    assert got[("queuetop_idle_in_transaction_max_age_seconds", ())] == 95.0 + 6


def test_a_quiet_queue_reads_zero_and_unknown_sections_are_absent():
    quiet = replace(
        fixed_snapshot(),
        oldest_ready_age_s=None,
        stale_leases=(),
        waiting=(),
        idle_in_transaction=(),
    )
    got = exposition(*snapshot_families(quiet, demo_spec()))
    table = ("table", "queuetop_demo.jobs")
    assert got[("queuetop_oldest_ready_age_seconds", (table,))] == 0
    assert got[("queuetop_stale_lease_max_overdue_seconds", (table,))] == 0
    assert got[("queuetop_waiting_max_seconds", ())] == 0
    # a spec without created_at or lease columns: no value rather than a made-up 0
    bare = replace(
        demo_spec(),
        columns=replace(demo_spec().columns, created_at=None, started_at=None, lease_until=None),
    )
    names = {name for name, _ in exposition(*snapshot_families(quiet, bare))}
    assert not names & {
        "queuetop_oldest_ready_age_seconds",
        "queuetop_stale_leases",
        "queuetop_stale_lease_max_overdue_seconds",
    }
    assert "queuetop_jobs" in names


def test_exporter_families_say_up_age_cost_and_errors():
    snap = fixed_snapshot()
    stats = PollStats(
        up=False,
        now_unix=snap.taken_at.timestamp() + 42,
        polls=7,
        poll_seconds_sum=0.35,
        last_poll_s=0.05,
        errors={"disconnected": 2},
    )
    got = exposition(*exporter_families(stats, snap))
    assert got[("queuetop_up", ())] == 0
    assert got[("queuetop_last_success_timestamp_seconds", ())] == snap.taken_at.timestamp()
    assert got[("queuetop_snapshot_age_seconds", ())] == pytest.approx(42)
    assert got[("queuetop_poll_duration_seconds_count", ())] == 7
    assert got[("queuetop_poll_duration_seconds_sum", ())] == 0.35
    assert got[("queuetop_poll_errors_total", (("reason", "disconnected"),))] == 2
    assert got[("queuetop_poll_errors_total", (("reason", "timeout"),))] == 0


@pytest.mark.matrix
def test_exporter_keeps_the_last_values_marked_stale_while_the_database_refuses(
    dsn, connect, background
):
    staged = StagedQueue(dsn, connect, background)
    exporter = Exporter(dsn, staged.spec, interval=0.5, log=lambda line: None)
    httpd = serve_metrics(exporter, "127.0.0.1", 0)
    name = conninfo.conninfo_to_dict(dsn)["dbname"]
    admin = psycopg.connect(conninfo.make_conninfo(dsn, dbname="postgres"), autocommit=True)
    try:
        assert exporter.poll_once() is None
        port = httpd.server_address[1]
        live = samples(_get(port))
        assert live[("queuetop_up", ())] == 1
        assert live[("queuetop_stale_leases", (("table", "queuetop_demo.jobs"),))] == 2

        # the database goes away for queuetop: no new connection, the current one ended
        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(name))
        )
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'queuetop'"
        )
        staged.stager.execute(
            "UPDATE queuetop_demo.jobs SET status = 'done' WHERE status = 'failed'"
        )  # unseen while down
        assert exporter.poll_once() is not None
        assert exporter.poll_once() is not None  # reconnecting, refused again
        down = samples(_get(port))
        assert down[("queuetop_up", ())] == 0
        assert down[("queuetop_poll_errors_total", (("reason", "disconnected"),))] == 2
        for key, value in live.items():  # the last values, still served
            if key[0].startswith(("queuetop_jobs", "queuetop_stale", "queuetop_waiting_s")):
                assert down[key] == value, key
        assert (
            down[("queuetop_last_success_timestamp_seconds", ())]
            == live[("queuetop_last_success_timestamp_seconds", ())]
        )
        assert down[("queuetop_snapshot_age_seconds", ())] > 0
        assert exporter.next_delay() == 1.0  # backing off: 0.5, then 1.0

        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(name))
        )
        assert exporter.poll_once() is None
        back = samples(_get(port))
        assert back[("queuetop_up", ())] == 1
        failed = (("estimated", "false"), ("role", "failed"), ("table", "queuetop_demo.jobs"))
        assert back[("queuetop_jobs", failed)] == 0  # fresh values again
        assert exporter.next_delay() == 0.5
    finally:
        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(name))
        )
        admin.close()
        httpd.shutdown()
        httpd.server_close()
        exporter.close()
        staged.release()


def _get(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def test_export_process_serves_until_sigterm_and_exits_0(dsn, tmp_path):
    from demo_queue import setup_demo

    setup_demo(dsn, jobs=2)
    export = ExportProcess(dsn, tmp_path / "home")
    try:
        got = samples(export.scrape())
        ready = (("estimated", "false"), ("role", "ready"), ("table", "queuetop_demo.jobs"))
        assert got[("queuetop_jobs", ready)] == 2
        assert got[("queuetop_up", ())] == 1
    finally:
        assert export.stop() == 0, export.err.read_text()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:9187", ("127.0.0.1", 9187)),
        ("localhost:0", ("localhost", 0)),
        (":9187", ("0.0.0.0", 9187)),
        ("[::1]:9187", ("::1", 9187)),
    ],
)
def test_listen_address(text, expected):
    assert listen_address(text) == expected


@pytest.mark.parametrize("text", ["9187", "host:", "host:70000", "::1:9187", "a:b", ""])
def test_bad_listen_address(text):
    with pytest.raises(argparse.ArgumentTypeError):
        listen_address(text)


def test_bad_listen_flag_is_one_line_and_exit_2(tmp_path):
    result = run_cli("export", "--listen", "nowhere", env_home=str(tmp_path))
    assert_one_line_error(result, "argument --listen", "HOST:PORT")


@pytest.mark.matrix
def test_missing_table_is_one_line_and_exit_2_before_serving(dsn, tmp_path):
    result = run_cli("export", "--dsn", dsn, "--listen", "127.0.0.1:0", env_home=str(tmp_path))
    assert_one_line_error(result, "queuetop_demo.jobs not found")


def test_port_in_use_is_one_line_and_exit_2(dsn, tmp_path):
    from demo_queue import setup_demo

    setup_demo(dsn)
    first = ExportProcess(dsn, tmp_path / "first")
    try:
        result = run_cli(
            "export", "--dsn", dsn, "--listen", f"127.0.0.1:{first.port}", env_home=str(tmp_path)
        )
        assert_one_line_error(result, f"cannot listen on 127.0.0.1:{first.port}")
    finally:
        assert first.stop() == 0


def test_unreachable_database_at_start_still_serves_up_0(tmp_path):
    """A service started before its database: it serves `queuetop_up 0` and keeps trying."""
    unreachable = "host=127.0.0.1 port=1 dbname=nothing connect_timeout=1"
    export = ExportProcess(unreachable, tmp_path / "home", interval=0.5)
    try:
        got = samples(export.scrape())
        assert got[("queuetop_up", ())] == 0
        assert got[("queuetop_poll_errors_total", (("reason", "disconnected"),))] >= 1
        assert not any(name == "queuetop_jobs" for name, _ in got)
        assert "poll failed (disconnected)" in export.err.read_text()
    finally:
        assert export.stop() == 0


def test_export_and_check_run_without_the_ui_toolkit():
    code = (
        "import sys, dashboard.metrics.exporter, dashboard.metrics.families, "
        "dashboard.metrics.checks, dashboard.ui.web; "
        "assert not [m for m in sys.modules if m.startswith(('textual', 'plotext'))]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
