"""The audit screen (A): the latest actions, read when it opens and after each action,
reads only; SVG snapshots at 120x40 and 80x24."""

from __future__ import annotations

import asyncio
import time

import pytest
from test_ui_live import INTERVAL, add_stale, demo_spec, until
from test_ui_recovery import ready
from ui_snapshots import demo_spec as fixed_spec
from ui_snapshots import fixed_audit_page, fixed_history

from dashboard import db
from dashboard.actions import ObservedJob, TableAudit, observe_jobs, requeue
from dashboard.actions.requests import ActionKind, job_request
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.action_result import ActionResultScreen
from dashboard.ui.screens.audit import AuditScreen, AuditTable
from dashboard.ui.screens.detail import DetailScreen
from dashboard.ui.screens.help import binding_rows


@pytest.fixture
def utc(monkeypatch):
    """Times show in this machine's zone: the snapshots pin it."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def fixed_app() -> QueuetopApp:
    return QueuetopApp(fixed_spec(), None, poll=False, snapshots=fixed_history())


async def open_fixed_audit(pilot) -> None:
    # the tab underline slides into place at start: let it land before the modal covers it
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    pilot.app.push_screen(AuditScreen(fixed_audit_page, "queuetop.audit_log"))
    await until(pilot, lambda: isinstance(pilot.app.screen, AuditScreen) and pilot.app.screen.loads)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_audit_screen_snapshot(snap_compare, size, utc):
    assert snap_compare(fixed_app(), terminal_size=size, run_before=open_fixed_audit)


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def test_the_audit_screen_says_what_each_action_did_and_enter_shows_it_whole(utc):
    async def go():
        app = fixed_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await open_fixed_audit(pilot)
            text = "\n".join(screen_lines(app))
            assert "queuetop.audit_log: 7 latest records" in text
            for shown in (
                "01-15 09:30:00  requeue",
                "running -> ready",
                "changed",
                "skipped: completed meanwh",
                "poison message",
                "skipped: pid reused",
                "lease expired",
            ):
                assert shown in text, shown
            table = app.screen.query_one(AuditTable)
            assert app.focused is table
            await pilot.press("down", "down", "enter")
            await until(pilot, lambda: isinstance(app.screen, DetailScreen))
            detail = " ".join("\n".join(screen_lines(app)).split())
            assert "state before status: failed" in detail
            assert "state after table:queuetop_demo.jobs_dead" in detail
            assert "in the trail audit_id 5" in detail
            await pilot.press("escape", "escape")
            assert not isinstance(app.screen, (AuditScreen, DetailScreen))

    asyncio.run(go())


def test_a_is_a_key_in_the_footer_the_palette_and_the_help(dsn):
    spec = demo_spec(dsn)

    async def go():
        app = QueuetopApp(spec, dsn, interval=INTERVAL)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot, app)
            titles = {c.title for c in app.get_system_commands(app.screen)}
            assert "Audit" in titles
            rows = binding_rows(app.binding_sections())
            assert any(
                section == "dashboard" and keys == "A" and "audit trail" in text
                for section, keys, text in rows
            )
            assert any(section == "audit trail (A)" and keys == "r" for section, keys, _ in rows)

    asyncio.run(go())


def test_the_screen_reads_the_table_when_opened_and_again_after_each_action(dsn, connect):
    asyncio.run(_reads_when_opened_and_after_each_action(dsn, connect))


async def _reads_when_opened_and_after_each_action(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    first, second = add_stale(setup, 2, 120)
    with db.connect_action(dsn) as conn:  # an action before the dashboard opened
        observed, _ = observe_jobs(conn, spec, [str(first)])
        requeue(conn, spec, observed, audit=TableAudit(), reason="before")
    app = QueuetopApp(spec, dsn, interval=INTERVAL, read_only=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app, stale=1)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
        audit = app.screen
        assert [(r.target, r.reason) for r in audit.page.records] == [(str(first), "before")]
        # an action the dashboard runs while the trail is open: it reads it again
        lease = next(s for s in app.snapshot.stale_leases if s.id == second)
        request = job_request(ActionKind.REQUEUE, spec, [ObservedJob.from_stale(lease)])
        app.recovery.run(request, "from the dashboard")
        await until(pilot, lambda: audit.loads >= 2 and len(audit.page.records) == 2)
        assert isinstance(app.screen, ActionResultScreen)  # the result on top, as always
        assert audit.page.records[0].reason == "from the dashboard"
        await pilot.press("escape")
        assert app.screen is audit
        assert audit.query_one(AuditTable).row_count == 2


def test_read_only_mode_reads_the_trail_and_a_missing_table_is_said(dsn, connect):
    asyncio.run(_read_only_and_missing(dsn, connect))


async def _read_only_and_missing(dsn, connect):
    spec = demo_spec(dsn)
    setup = connect(autocommit=True)
    app = QueuetopApp(spec, dsn, interval=INTERVAL, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
        assert "queuetop.audit_log: no audited action" in "\n".join(screen_lines(app))
        setup.execute("DROP TABLE queuetop.audit_log")
        await pilot.press("r")
        await until(pilot, lambda: app.screen.loads >= 2)
        text = "\n".join(screen_lines(app))
        assert "no audit table queuetop.audit_log" in text, text


def test_with_an_audit_file_the_screen_reads_the_file(dsn, tmp_path):
    audit_file = tmp_path / "audit.jsonl"
    audit_file.write_text(
        '{"action_id": "a1", "at": "2026-01-15T09:30:00+00:00", "action": "requeue", '
        '"target": "42", "outcome": "pending", "reason": "from a file"}\n'
        '{"action_id": "a1", "at": "2026-01-15T09:30:00+00:00", "outcome": "committed"}\n'
    )

    async def go():
        app = QueuetopApp(demo_spec(dsn), dsn, interval=INTERVAL, audit_file=str(audit_file))
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.snapshots_applied)
            await pilot.press("A")
            await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
            [record] = app.screen.page.records
            assert (record.target, record.outcome, record.reason) == (
                "42",
                "changed",
                "from a file",
            )
            assert f"{audit_file}: 1 latest record" in "\n".join(screen_lines(app))

    asyncio.run(go())


def test_the_table_of_each_record_is_named_once_or_in_a_column(utc):
    """Issue 32: the audit screen had no table column. One table: the status line names
    it; records of several tables: a column names each row's (a session's is '-')."""
    from dataclasses import replace as replaced

    one = fixed_audit_page()
    mixed = replaced(
        one,
        records=tuple(
            replaced(r, queue_table="billing.jobs") if r.target == "990" else r for r in one.records
        ),
    )

    async def go(page, size):
        app = fixed_app()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            app.push_screen(AuditScreen(lambda: page, "queuetop.audit_log"))
            await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
            await pilot.pause()
            return screen_lines(app), app.screen.query_one(AuditTable).shown_columns()

    lines, columns = asyncio.run(go(one, (120, 40)))
    assert "7 latest records on queuetop_demo.jobs" in "\n".join(lines)
    assert "table" not in columns
    lines, columns = asyncio.run(go(mixed, (160, 50)))
    assert "table" in columns and " on " not in next(x for x in lines if "latest records" in x)
    row = {r.target: r for r in mixed.records}
    for target, table in (("990", "billing.jobs"), ("1001", "queuetop_demo.jobs"), ("4200", "-")):
        line = next(x for x in lines if f" {target} " in x and row[target].action in x)
        inside = max(line.split("\u2502"), key=len)  # the modal's row, no borders
        assert inside.rstrip().endswith(" " + table), line
