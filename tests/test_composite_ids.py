"""A composite key's id as an operator sees and types it: its JSON array (["globex", 7]),
in snapshot text, in the stale-lease table, and in what the dashboard's requeue sends (the
table showed and sent Python's ['globex', 7], which no statement could read)."""

from __future__ import annotations

import asyncio

import queue_shapes
from helpers.pilot import until

from dashboard import config, db
from dashboard.cli import main
from dashboard.setup import schema
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.confirm import ConfirmScreen

SHAPE = queue_shapes.COMPOSITE_JOBS
STUCK = '["globex", 7]'  # running for 3 hours: the one stale lease past 1 hour


def test_snapshot_text_shows_a_composite_id_as_its_json_array(dsn, connect, capsys):
    conn = connect(autocommit=True)
    queue_shapes.create(conn, SHAPE)
    queue_shapes.stage(conn, SHAPE)
    argv = ["snapshot", "--table", SHAPE.table, "--stale-after", "1h", "--dsn", dsn]
    assert main(argv) in (0, 1)
    out = capsys.readouterr().out
    assert STUCK in out and "['globex', 7]" not in out


def test_the_dashboard_requeues_a_composite_key_job(dsn, connect):
    conn = connect(autocommit=True)
    schema.init_audit(conn)
    queue_shapes.create(conn, SHAPE)
    queue_shapes.stage(conn, SHAPE)
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, config.build_spec(table=SHAPE.table, stale_after="1h"))

    async def go():
        app = QueuetopApp(spec, dsn, interval=0.5)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: list(app.stale_table.items) == [STUCK])
            # its cell, cut to the column: the array, not Python's ['globex', 7]
            assert app.stale_table.cell_text(STUCK, "id").startswith('["globex')
            # the permission check done (it says "still checking" until then): allowed
            await until(pilot, lambda: app.recovery.reasons.get("requeue", "?") is None)
            await pilot.press("4", "space", "R")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ActionResultScreen))
            assert app.screen.result.changed == (STUCK,), app.screen.result.summary()

    asyncio.run(go())
    row = conn.execute(
        "SELECT status, worker FROM tenant_jobs WHERE tenant = 'globex' AND job_no = 7"
    ).fetchone()
    assert row == ("queued", None)
