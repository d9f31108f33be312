"""Look up any job by id: an input for the ids, then the jobs as they are now.

From the job list the operator launches a requeue, a forced requeue or a
dead-letter; the app then asks for confirmation as for stale leases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from dashboard.actions import ObservedJob, Skipped
from dashboard.ui.screens.confirm import job_line


def parse_ids(text: str) -> list[str]:
    """'12, 13 14' -> ['12', '13', '14'], duplicates dropped, order kept."""
    return list(dict.fromkeys(t for t in re.split(r"[\s,;]+", text) if t))


class JobLookupScreen(ModalScreen[list[str] | None]):
    """Asks for job ids; Enter looks them up, Escape closes."""

    BINDINGS = [Binding("escape", "cancel", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="lookup-body") as body:
            body.border_title = "Look up jobs by id (Escape closes)"
            yield Input(placeholder="job ids, separated by spaces or commas", id="lookup-ids")
            yield Static(Text("Enter: look up (a plain read, nothing changes)", style="dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        ids = parse_ids(event.value)
        if not ids:
            self.notify("type one or more job ids", severity="warning")
            return
        self.dismiss(ids)

    def action_cancel(self) -> None:
        self.dismiss(None)


class JobListScreen(ModalScreen[tuple[str, bool] | None]):
    """The looked-up jobs as they are now; returns (action, force) or None."""

    BINDINGS = [
        Binding("R", "choose('requeue', False)", "Requeue",
                tooltip="Requeue these jobs (expired leases only)"),
        Binding("F", "choose('requeue', True)", "Force requeue",
                tooltip="Requeue even leases that have not expired"),
        Binding("D", "choose('dead-letter', False)", "Dead-letter",
                tooltip="Dead-letter these jobs (asks for a reason)"),
        Binding("escape,q", "choose('', False)", "Close"),
    ]

    def __init__(self, jobs: Sequence[ObservedJob], missing: Sequence[Skipped]) -> None:
        super().__init__()
        self.jobs = list(jobs)
        self.missing = list(missing)

    def compose(self) -> ComposeResult:
        lines = Text("\n").join(
            [Text(job_line(job)) for job in self.jobs]
            + [Text(f"  {s.id:>6}  {s.reason}", style="yellow") for s in self.missing])
        lines.no_wrap, lines.overflow = True, "ellipsis"
        with VerticalScroll(id="joblist-body") as body:
            body.border_title = f"{len(self.jobs)} job(s) found, {len(self.missing)} not found"
            yield Static(lines)
            yield Static(Text("\nR requeue   F force requeue   D dead-letter   Escape close",
                              style="dim"))

    def action_choose(self, action: str, force: bool) -> None:
        if action and not self.jobs:
            self.notify("no job to act on", severity="warning")
            return
        self.dismiss((action, force) if action else None)
