"""Every key of the dashboard by section, for the help screen (generated from BINDINGS)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.binding import Binding

from dashboard.ui.jobs_tab import JobBrowser
from dashboard.ui.loadgen_controls import LOADGEN_BINDINGS
from dashboard.ui.replay.keys import replay_allows
from dashboard.ui.screens.audit import AuditScreen
from dashboard.ui.screens.confirm import ConfirmScreen
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen
from dashboard.ui.widgets.tables import IdleTable, StaleLeaseTable


def binding_sections(app: Any) -> list[tuple[str, Iterable]]:
    return [
        (
            "dashboard",  # the replay's keys in a replay, the polling keys live
            [
                b
                for b in app.BINDINGS
                if b not in LOADGEN_BINDINGS
                and replay_allows(app.replay, b.action) is not False
                and app.rewind.listed(b.action)
            ],
        ),
        *(app.load.help_sections() if app.load is not None else []),
        ("stale leases", StaleLeaseTable.BINDINGS),
        ("sessions", IdleTable.BINDINGS),
        (
            "job browser (b)",
            [
                *JobBrowser.BINDINGS,
                Binding(
                    "enter",
                    "select",
                    "The job's whole row (to_jsonb), control characters escaped, long values cut",
                ),
            ],
        ),
        (
            "tables",
            [
                Binding("enter", "select", "Show the whole row (query untruncated)"),
                Binding("up,down", "move", "Move the cursor one row"),
                Binding("pageup,pagedown", "move", "Move the cursor one page"),
                Binding("home,end", "move", "First row / last row"),
                Binding("left,right", "scroll", "Scroll sideways (wide columns)"),
            ],
        ),
        (
            "job look-up (j)",
            [
                *JobLookupScreen.BINDINGS,
                *(b for b in JobListScreen.BINDINGS if b.show),
                Binding("up,down,pageup,pagedown", "scroll", "Scroll the jobs found"),
                Binding("home,end", "scroll", "First job / last job"),
            ],
        ),
        ("confirmations", ConfirmScreen.BINDINGS),
        (
            "audit trail (A)",
            [*AuditScreen.BINDINGS, Binding("enter", "select", "The whole record")],
        ),
        ("everywhere", [Binding("ctrl+p", "command_palette", "Command palette")]),
    ]
