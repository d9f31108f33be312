"""The confirmation modal of a recovery action: what, which ids, their state, what happens.

Returns True (go) or False (Escape: nothing happens). An Input takes the reason the audit
trail records: when the action needs one (dead-letter) it has the focus and Enter is refused
while it is empty; elsewhere it is optional (Tab reaches it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from dashboard.actions import ObservedJob
from dashboard.actions.requests import (
    ActionKind,
    ActionRequest,
    JobRequest,
    SessionRequest,
    overdue_s,
)
from dashboard.models import IdleTransaction, SessionInfo, WaitingSession
from dashboard.render.report import age
from dashboard.text.untrusted import shown
from dashboard.ui.plain import plain, plain_lines

MAX_IDS = 10  # ids named in the title line before "+K more"
MAX_ROWS = 8  # state lines before "... and K more"


def ids_text(ids: Sequence[str], limit: int = MAX_IDS) -> str:
    """'1, 2, 3' or '1, 2, 3 +7 more' (each id escaped: a text id may hold anything)."""
    named = ", ".join(shown(i) for i in ids[:limit])
    return named + (f" +{len(ids) - limit} more" if len(ids) > limit else "")


def job_line(job: ObservedJob, overdue: float | None = None) -> str:
    over = overdue if overdue is not None else overdue_s(job)
    lease = (
        "-"
        if over is None
        else (f"overdue {age(over)}" if over >= 0 else f"lease ends in {age(-over)}")
    )
    return (
        f"  {shown(job.id):>6}  {shown(job.status):<8} worker {shown(job.worker or '-'):<12} "
        f"token {shown(job.lease_token or '-'):<4} {lease}"
    )


def dead_line(job: ObservedJob, overdue: float | None = None) -> str:
    """A job as the dead-letter table holds it: the state it was moved in."""
    return (
        f"  {shown(job.id):>6}  was {shown(job.status):<8} worker {shown(job.worker or '-'):<12} "
        f"token {shown(job.lease_token or '-')}"
    )


@dataclass(frozen=True)
class ConfirmRequest:
    """What the modal shows about `action`, the typed request that runs on a yes."""

    action: ActionRequest
    title: str
    lines: tuple[str, ...]
    effect: str
    warning: str = ""
    audit: str = ""

    @property
    def needs_reason(self) -> bool:
        return self.action.needs_reason


TITLES = {
    ActionKind.REQUEUE: "Requeue {n} {noun}?",
    ActionKind.DEAD_LETTER: "Dead-letter {n} {noun}?",
    ActionKind.RETRY_DEAD: "Retry {n} {noun} from the dead-letter table?",
}


def confirm_jobs(
    request: JobRequest,
    *,
    overdue: dict[str, float] | None = None,
    all_stale: int | None = None,
) -> ConfirmRequest:
    """The confirmation of a job action: the ids, their state as observed, the jobs left
    out with their reason (not sent), what changes and what the guard checks."""
    jobs, ids = request.jobs, request.ids
    overdue = overdue or {}
    line = dead_line if request.kind is ActionKind.RETRY_DEAD else job_line
    rows = [line(j, overdue.get(j.id)) for j in jobs[:MAX_ROWS]]
    if len(jobs) > MAX_ROWS:
        rows.append(f"  ... and {len(jobs) - MAX_ROWS} more")
    if request.left_out:
        rows.append(
            "Left out (as shown, the action would skip them): "
            + ids_text([f"{s.id} {s.reason}" for s in request.left_out])
        )
    scope = f" (all {all_stale} stale leases shown)" if all_stale else ""
    noun = "job" if len(ids) == 1 else "jobs"
    head = f"{len(ids)} {noun}{scope}: {ids_text(ids)}"
    title = TITLES[request.kind].format(n=len(ids), noun=noun)
    if request.kind is ActionKind.REQUEUE and request.force:
        title = "Force " + title[0].lower() + title[1:]
    effect = " ".join(
        part
        for part in (
            request.changes,
            request.fence,
            request.guard,
            "A reason is required." if request.needs_reason else "",
        )
        if part
    )
    return ConfirmRequest(
        request, title, (head, *rows), effect, "\n".join(request.warnings), request.audit
    )


def confirm_session(
    request: SessionRequest, item: IdleTransaction | SessionInfo | WaitingSession
) -> ConfirmRequest:
    """The confirmation of cancel or terminate: the backend behind one table row."""
    seen = request.session
    lines = [
        f"pid {seen.pid}, started {seen.backend_start:%Y-%m-%d %H:%M:%S}, "
        f"application {shown(item.application_name or '-')}"
    ]
    if isinstance(item, IdleTransaction):
        lines.append(
            f"idle in transaction for {age(item.idle_s)} "
            f"(transaction {age(item.xact_age_s)} old, {item.locks_held} locks), "
            f"user {shown(item.user)}"
        )
    elif isinstance(item, WaitingSession):
        lines.append(
            f"waiting {age(item.wait_s)} on {shown(item.wait_event)}, blocked by "
            + ", ".join(map(str, item.blocked_by))
        )
    else:
        lines.append(
            f"{shown(item.state)}, transaction {age(item.xact_age_s)} old, blocking others"
        )
    lines.append(f"last query: {shown(' '.join(item.query.split())[:200] or '-')}")
    verb = request.kind.value.capitalize()
    return ConfirmRequest(
        request,
        f"{verb} backend {seen.pid}?",
        tuple(lines),
        f"{request.changes} {request.guard}",
        audit=request.audit,
    )


class ConfirmScreen(ModalScreen[bool]):
    """Enter or y confirms, Escape or n cancels; `reason` holds the typed reason."""

    BINDINGS = [
        Binding(
            "escape,n",
            "answer(False)",
            "No",
            key_display="Esc",
            tooltip="No: change nothing, go back (to the list, in a look-up)",
        ),
        # priority: the reason's Input would take Enter first, and hide it from the footer
        Binding(
            "enter", "answer(True)", "Yes", key_display="Enter", priority=True, tooltip="Go ahead"
        ),
        Binding(
            "y", "answer(True)", "Yes", show=False, tooltip="Go ahead (where no reason is asked)"
        ),
    ]

    def __init__(self, request: ConfirmRequest) -> None:
        super().__init__()
        self.request = request
        self.reason = ""

    def compose(self) -> ComposeResult:
        r = self.request  # values from the database and the spec: plain, escaped
        with VerticalScroll(id="confirm-body") as body:
            body.border_title = plain(r.title)
            what = plain_lines("\n".join(r.lines), no_wrap=True, overflow="ellipsis")
            yield Static(what, id="confirm-what")
            if r.warning:
                yield Static(plain_lines(r.warning, "bold black on yellow"), id="confirm-warning")
            yield Static(plain_lines(r.effect), id="confirm-effect")
            if r.audit:
                yield Static(plain_lines(r.audit, "dim"), id="confirm-audit")
            # the audit records a reason: asked for always, required where the action
            # needs one (dead-letter); elsewhere Tab reaches it and y still says yes
            yield Input(
                placeholder=(
                    "reason (required), e.g. poison message: bad payload"
                    if r.needs_reason
                    else "reason for the audit trail (optional; Tab to type one)"
                ),
                id="confirm-reason",
            )
            yield Static(
                Text(
                    "Enter: yes"
                    + ("" if r.needs_reason else " (or y)   Tab: type a reason")
                    + "   Escape: no, change nothing",
                    style="dim",
                ),
                id="confirm-keys",
            )
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        if self.request.needs_reason:
            self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_answer(True)

    def action_answer(self, yes: bool) -> None:
        if yes:
            self.reason = self.query_one(Input).value.strip()
        if yes and self.request.needs_reason:
            if not self.reason:
                self.notify(
                    "a reason is required: it goes into the audit trail", severity="warning"
                )
                return
        self.dismiss(yes)
