"""Never a false all-clear, and what discovery prints holds up.

Rows in a state no role claims (tests/queue_shapes.py UNMAPPABLE: 'on_hold_by_ops', a word
no list knows) are said by `check` (UNKNOWN, exit 3, one line naming the value and the flag
that maps it), carried by `snapshot --json`, and shown whole on an 80x24 dashboard. The
pins discovery prints (flags and TOML) count what its own command counts. Tables that are
not queues (orders, users, an audit log, settings, payments) are never offered above low.
"""

from __future__ import annotations

import asyncio
import json
import shlex

import psycopg
import pytest
from helpers.cli import run_out as run
from helpers.pilot import until
from queue_shapes import DECOYS, SHAPES, UNMAPPABLE, UNMAPPED_ROWS, create, role_counts, stage
from test_hostile_screens import rendered

from dashboard import config, db
from dashboard.cli import main
from dashboard.ui.app import QueuetopApp
from dashboard.ui.widgets.unknowns_bar import UnknownsBar

each_shape = pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])


def found_in(capsys, dsn: str) -> dict[str, dict]:
    code, out = run(capsys, "discover", "--json", "--dsn", dsn)
    assert code == 0
    return {q["table"]: q for q in json.loads(out)["queues"]}


def unmappable(connect):
    conn = connect(autocommit=True)
    create(conn, UNMAPPABLE)
    stage(conn, UNMAPPABLE)
    return conn


def test_check_answers_unknown_over_rows_no_role_claims(dsn, connect, capsys):
    conn = unmappable(connect)
    flags = ["--table", UNMAPPABLE.table, "--dsn", dsn]
    # ground truth: the rows are there, in a value none of the shape's roles holds
    held = conn.execute("SELECT count(*) FROM tasks WHERE state = 'on_hold_by_ops'").fetchone()[0]
    assert held == UNMAPPED_ROWS
    code, out = run(capsys, "check", "--max-waiting", "1000", *flags)
    assert code == 3, out
    unknown = [line for line in out.splitlines() if line.startswith("UNKNOWN")]
    assert len(unknown) == 1, out
    assert "'on_hold_by_ops'" in unknown[0] and f"{UNMAPPED_ROWS} rows" in unknown[0]
    assert "--running-values on_hold_by_ops" in unknown[0] or "-values on_hold_by_ops" in unknown[0]
    # over a threshold beats unknown: the stuck job is over --max-stale 0
    code, out = run(capsys, "check", "--max-stale", "0", *flags)
    assert code == 1 and "OVER" in out and "UNKNOWN" in out

    # the value it names maps them: the same rows counted, nothing left unknown
    code, out = run(
        capsys, "check", "--max-waiting", "1000", *flags, "--failed-values", "error,on_hold_by_ops"
    )
    assert code == 0, out
    code, out = run(capsys, "snapshot", "--json", *flags, "--failed-values", "error,on_hold_by_ops")
    assert json.loads(out)["counts"]["failed"] == UNMAPPED_ROWS + 1


def test_snapshot_json_carries_the_unmapped_rows(dsn, connect, capsys):
    unmappable(connect)
    code, out = run(capsys, "snapshot", "--json", "--table", UNMAPPABLE.table, "--dsn", dsn)
    assert code == 0
    snap = json.loads(out)
    unmapped = {u["value"]: u for u in snap["unmapped"]}
    assert set(unmapped) == {"on_hold_by_ops"}
    assert unmapped["on_hold_by_ops"]["rows"] == UNMAPPED_ROWS
    assert snap["status"] == "unknown"
    assert any("on_hold_by_ops" in line for line in snap["unknowns"])
    # the rows it could map are counted as PostgreSQL has them
    truth = role_counts(connect(autocommit=True), UNMAPPABLE)
    assert {r: snap["counts"][r] for r in truth} == truth


def test_the_dashboard_shows_them_whole_at_80x24(dsn, connect):
    unmappable(connect)
    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, config.build_spec(table=UNMAPPABLE.table))
    asyncio.run(_whole_at_80x24(spec, dsn))


async def _whole_at_80x24(spec, dsn):
    app = QueuetopApp(spec, dsn, interval=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        bar = app.screen.query_one(UnknownsBar)
        await until(pilot, lambda: "on_hold_by_ops" in str(bar.render()))
        await pilot.pause()
        # what the terminal shows, row by row: the sentence whole, to the flag at its end
        shown = " ".join(line.strip() for line in rendered(app)[0])
        words = " ".join(next(ln for ln in app.snapshot.unknowns if "on_hold_by_ops" in ln).split())
        assert " ".join(shown.split()).count(words[:40]) == 1
        assert "map it with" in shown and "on_hold_by_ops (or the" in " ".join(shown.split())
        assert bar.region.height >= 2 and bar.region.width <= 80


def test_decoys_are_not_offered_as_queues(dsn, connect, capsys):
    conn = connect(autocommit=True)
    conn.execute(DECOYS)
    found = found_in(capsys, dsn)
    for name in ("orders", "users", "audit_log", "settings", "payments"):
        offered = found.get(f"public.{name}")
        assert offered is None or offered["confidence"] == "low", offered


@each_shape
def test_the_pins_discovery_prints_count_what_its_command_counts(
    shape, dsn, connect, tmp_path, capsys
):
    conn = connect(autocommit=True)
    create(conn, shape)
    stage(conn, shape)
    found = found_in(capsys, dsn)[shape.table]
    command = shlex.split(found["command"])[2:]
    code, out = run(capsys, "snapshot", "--json", *command)
    assert code == 0
    by_command = json.loads(out)["counts"]
    truth = role_counts(conn, shape)
    assert {r: by_command[r] for r in truth} == truth

    code, out = run(capsys, "snapshot", "--json", *found["pin_flags"], "--dsn", dsn)
    assert code == 0, out
    pinned = json.loads(out)
    assert pinned["counts"] == by_command
    assert pinned["unmapped"] == []

    toml = tmp_path / "queue.toml"
    toml.write_text(found["pin_toml"])
    code, out = run(capsys, "snapshot", "--json", "--queue", str(toml), "--dsn", dsn)
    assert code == 0, out
    assert json.loads(out)["counts"] == by_command


def test_the_exporter_exposes_the_unmapped_rows(dsn, connect, tmp_path):
    from export_stage import ExportProcess
    from helpers import wait_until
    from prometheus_client.parser import text_string_to_metric_families

    unmappable(connect)
    export = ExportProcess(dsn, tmp_path / "home", "--table", UNMAPPABLE.table)
    try:

        def samples() -> dict | None:
            found = {
                (s.name, s.labels.get("value")): s.value
                for family in text_string_to_metric_families(export.scrape())
                for s in family.samples
                if s.name in ("queuetop_unmapped_jobs", "queuetop_unknowns")
            }
            return found or None

        found = wait_until(samples, timeout=60)
        assert found[("queuetop_unmapped_jobs", "on_hold_by_ops")] == UNMAPPED_ROWS
        assert found[("queuetop_unknowns", None)] >= 1
    finally:
        export.stop()


@pytest.mark.parametrize(
    "shape_name, flags, says",
    [
        ("int_jobs", ["--running-values", "abc"], 'invalid input syntax for type smallint: "abc"'),
        ("enum_jobs", ["--running-values", "pending"], "invalid input value for enum"),
        ("int_jobs", ["--running-when", "status = abc"], "running condition value 'abc'"),
        ("int_jobs", ["--running-when", "status above x"], "needs a number, got 'x'"),
    ],
)
def test_a_value_the_column_cannot_hold_is_one_line(shape_name, flags, says, dsn, connect, capfd):
    shape = next(s for s in SHAPES if s.name == shape_name)
    conn = connect(autocommit=True)
    create(conn, shape)
    stage(conn, shape)
    capfd.readouterr()
    code = main(["snapshot", "--table", shape.table, *flags, "--dsn", dsn])
    err = capfd.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and says in err, err
    assert "changed under queuetop" not in err and "Pipeline" not in err


def test_a_weak_guess_about_a_value_no_row_holds_waits_for_a_row(dsn, connect, capsys):
    """The seed's tarefas_demo under --table alone: its CHECK names 'concluida', which only
    the word says is done. On a fresh queue no row holds it, and `check` is ok; once a row
    does, the weak guess bears on a count, and `check` answers UNKNOWN naming the pin."""
    import seeds

    conn = connect(autocommit=True)
    seeds.create(conn, seeds.TAREFAS)
    seeds.fill_ready(conn, seeds.TAREFAS, 3)
    flags = ["--table", seeds.TAREFAS.table, "--dsn", dsn]
    code, out = run(capsys, "snapshot", "--json", *flags)
    doubts = json.loads(out)["understood"]["doubts"]
    assert any("'concluida' is taken for done on weak evidence" in d for d in doubts)  # said
    code, out = run(capsys, "check", "--max-waiting", "9", *flags)
    assert code == 0 and "UNKNOWN" not in out, out
    # a session that leaves no statement behind (an idle session's last statement, a
    # `SET estado = 'concluida'` by key, would be a worker's finish: evidence, no guess)
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("UPDATE tarefas_demo SET estado = 'concluida' WHERE id = 1")
    code, out = run(capsys, "check", "--max-waiting", "9", *flags)
    assert code == 3 and "--done-values concluida" in out, out
    # pinned, it is no guess
    code, out = run(capsys, "check", "--max-waiting", "9", *flags, "--done-values", "concluida")
    assert code == 0, out
