"""The confirmation says what the guard really checks for this spec, and warns when the
change is not fenced (no lease token): it never promises a token the table lacks."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from ui_snapshots import demo_spec, fixed_history

from dashboard.actions import ObservedJob, requests
from dashboard.models import Columns, DeadLetter, Policy, QueueSpec, TableName
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.confirm import ConfirmScreen, confirm_jobs

LAPSED = datetime.now(timezone.utc) - timedelta(minutes=5)


def tokenless(**policy) -> QueueSpec:
    """A hand-rolled queue: state, worker and an expiry, but no lease token."""
    return QueueSpec(
        TableName("jobs", "app"),
        Columns(
            id="id",
            status="status",
            worker="worker_id",
            lease_until="leased_until",
            attempts="attempts",
        ),
        states={
            "ready": ("pending",),
            "running": ("processing",),
            "done": ("done",),
            "failed": ("failed",),
        },
        policy=Policy(**policy),
        column_types={
            "id": "bigint",
            "status": "text",
            "worker_id": "text",
            "leased_until": "timestamp with time zone",
            "attempts": "integer",
        },
    )


def job_request(action: str, spec: QueueSpec, jobs: list, force: bool = False):
    """What the confirmation shows of the request `actions` builds."""
    return confirm_jobs(requests.job_request(requests.ActionKind(action), spec, jobs, force=force))


def job(status: str = "processing", token: str | None = None) -> ObservedJob:
    return ObservedJob(
        id="7", status=status, worker="w-1", lease_token=token, lease_until=LAPSED, expired=True
    )


def test_requeue_without_a_lease_token_claims_no_token_and_warns():
    request = job_request("requeue", tokenless(), [job()])
    assert "token" not in request.effect.replace("no lease token", "")
    assert "late completion changes nothing" not in request.effect
    assert "state (status) and worker (worker_id) are as shown" in request.effect
    assert "its lease has run out (leased_until)" in request.effect
    assert request.warning.startswith("NOT FENCED: app.jobs has no lease token")
    assert "state and worker are guarded" in request.warning


def test_requeue_with_a_lease_token_says_it_advances_and_does_not_warn():
    request = job_request("requeue", demo_spec(), [job("running", "3")])
    assert "lease token (lease_token) advances" in request.effect
    assert (
        "state (status), worker (worker) and lease token (lease_token) are as shown"
        in request.effect
    )
    assert request.warning == ""


def test_forced_requeue_keeps_both_warnings():
    request = job_request("requeue", tokenless(), [job()], force=True)
    assert "FORCE:" in request.warning and "NOT FENCED" in request.warning
    assert "run out" not in request.effect  # the expiry is exactly what force lifts


def test_a_spec_with_neither_expiry_nor_start_says_only_force_requeues():
    spec = replace(tokenless(), columns=replace(tokenless().columns, lease_until=None))
    assert "only force requeues it" in job_request("requeue", spec, [job()]).effect


def test_dead_letter_to_a_table_is_fenced_by_the_move_and_to_a_state_is_not():
    moved = tokenless(dead_letter=DeadLetter("table", table=TableName("jobs_dead", "app")))
    request = job_request("dead-letter", moved, [job("failed")])
    assert "leaves the queue table" in request.effect and request.warning == ""
    marked = tokenless(dead_letter=DeadLetter("status", status="failed"))
    assert "NOT FENCED" in job_request("dead-letter", marked, [job()]).warning


def test_the_warning_is_on_the_screen():
    async def go() -> str:
        app = QueuetopApp(demo_spec(), None, poll=False, snapshots=fixed_history())
        async with app.run_test(size=(80, 24)) as pilot:
            app.push_screen(ConfirmScreen(job_request("requeue", tokenless(), [job()])))
            await pilot.pause()
            return str(app.screen.query_one("#confirm-warning").render())

    assert "NOT FENCED" in asyncio.run(go())
