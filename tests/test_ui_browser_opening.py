"""The job browser (b) opens where the jobs are, and tells the demo's workers apart."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers.pilot import run_app, until
from test_ui_browser import status
from ui_snapshots import FixedBrowserSource, demo_spec, fixed_history, fixed_jobs

from dashboard.browse import DEAD_TABLE
from dashboard.ui.app import QueuetopApp


class RoleSource(FixedBrowserSource):
    """Fixed pages of the role asked for: a job's status is its role (the demo's values)."""

    def page(self, query, start=None):
        page = super().page(query, start)
        rows = tuple(j for j in page.rows if j.source == DEAD_TABLE or j.status == query.role)
        return replace(page, rows=rows, has_more=False)


def running_jobs(workers: list[str]) -> list:
    """One ready job, and a running job per worker (the demo never has a failed one)."""
    base = fixed_jobs(1)[0]
    ready = replace(base, id="9000", sort_key=9000, status="ready", worker=None)
    return [ready] + [
        replace(base, id=str(8000 + i), sort_key=8000 + i, status="running", worker=w)
        for i, w in enumerate(workers)
    ]


def app_with(counts: dict[str, int], jobs: list) -> tuple[QueuetopApp, RoleSource]:
    snaps = [replace(s, counts={**s.counts, **counts}) for s in fixed_history()]
    source = RoleSource(jobs)
    app = QueuetopApp(demo_spec(), None, poll=False, snapshots=snaps, browser_source=source)
    return app, source


def run(app: QueuetopApp, body, size=(120, 40)):
    """The app with the browser open and its first page read."""

    async def open_browser(pilot):
        await pilot.press("b")
        await until(pilot, lambda: app.browser.loads >= 1)

    run_app(app, body, size, before=open_browser)


DEMO_WORKERS = [f"queuetop-worker-{k}" for k in (1, 2, 3, 4)]


@pytest.mark.parametrize(
    ("counts", "opens_on"),
    [
        ({"failed": 0, "dead": 0, "ready": 40, "running": 4}, "ready"),  # the demo
        ({"failed": 0, "dead": 0, "ready": 0, "running": 4}, "running"),
        ({"failed": 2, "dead": 0, "ready": 40, "running": 4}, "failed"),
        ({"failed": 0, "dead": 0, "ready": 0, "running": 0}, "failed"),  # none: the first
    ],
)
def test_the_browser_opens_on_the_first_role_that_has_jobs(counts, opens_on):
    app, source = app_with(counts, running_jobs(DEMO_WORKERS))

    async def body(pilot):
        assert app.browser.query.role == opens_on
        assert [q.role for q, _ in source.reads] == [opens_on]  # the one page it read
        assert status(app).startswith(opens_on)
        await pilot.press("v")  # v still goes on from there, and the choice stays
        await until(pilot, lambda: app.browser.loads >= 2)
        chosen = app.browser.query.role
        assert chosen != opens_on
        await pilot.press("1", "b")
        assert app.browser.query.role == chosen

    run(app, body)


def worker_cells(app) -> list[str]:
    table = app.browser.table
    return [table.cell_text(key, "worker").strip() for key in table.items]


@pytest.mark.parametrize(
    "workers",
    [
        DEMO_WORKERS,
        # reconnected sessions and host-qualified names: longer than the column
        ["queuetop-worker-3.1", "queuetop-worker-3.2", "queuetop-worker-13.2"],
        [f"billing-consumer.eu-west-1.internal:{pid}" for pid in (41001, 41002, 41017)],
    ],
)
def test_the_worker_column_tells_every_worker_apart_at_120_columns(workers):
    counts = {"failed": 0, "dead": 0, "ready": 0, "running": len(workers)}
    app, _ = app_with(counts, running_jobs(workers))

    async def body(pilot):
        assert app.browser.query.role == "running"
        table = app.browser.table
        assert table.row_count == len(workers)
        cells = worker_cells(app)
        assert len(set(cells)) == len(workers), cells  # never one shared prefix
        for key, job in table.items.items():  # each row ends as its worker's name ends
            assert table.cell_text(key, "worker").strip().endswith(job.worker[-6:]), cells
        # and so on the screen: each row's worker text is drawn as the table says
        lines = [s.text for s in app.screen._compositor.render_strips()]
        for cell in cells:
            assert any(cell in line for line in lines), cell

    run(app, body)
