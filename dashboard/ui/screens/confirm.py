"""The confirmation modal of a recovery action: what, which ids, their state, what happens.

Returns True (go) or False (Escape: nothing happens). When the action needs a
reason (dead-letter), an Input asks for it and Enter is refused while it is empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from dashboard.actions import ObservedJob, ObservedSession, Skipped
from dashboard.actions.describe import fencing_text, fencing_warning, guard_text
from dashboard.models import IdleTransaction, QueueSpec, SessionInfo, WaitingSession
from dashboard.render.report import age

MAX_IDS = 10  # ids named in the title line before "+K more"
MAX_ROWS = 8  # state lines before "... and K more"


def ids_text(ids: Sequence[str], limit: int = MAX_IDS) -> str:
    """'1, 2, 3' or '1, 2, 3 +7 more'."""
    shown = ", ".join(ids[:limit])
    return shown + (f" +{len(ids) - limit} more" if len(ids) > limit else "")


def overdue_s(job: ObservedJob, now: datetime | None = None) -> float | None:
    """Seconds past the lease expiry (negative: not expired yet); None without an expiry."""
    if job.lease_until is None:
        return None
    return ((now or datetime.now(timezone.utc)) - job.lease_until).total_seconds()


def unexpired(jobs: Sequence[ObservedJob], spec: QueueSpec) -> list[ObservedJob]:
    """Running jobs whose lease has not expired: a requeue of those needs force."""
    running = set(spec.values("running"))
    return [j for j in jobs if j.status in running and (overdue_s(j) or 0.0) < 0]


def job_line(job: ObservedJob, overdue: float | None = None) -> str:
    over = overdue if overdue is not None else overdue_s(job)
    lease = (
        "-"
        if over is None
        else (f"overdue {age(over)}" if over >= 0 else f"lease ends in {age(-over)}")
    )
    return (
        f"  {job.id:>6}  {job.status:<8} worker {job.worker or '-':<12} "
        f"token {job.lease_token or '-':<4} {lease}"
    )


@dataclass(frozen=True)
class ConfirmRequest:
    """Everything the modal shows; `action` and `payload` go back to whoever asked."""

    action: str
    title: str
    lines: tuple[str, ...]
    effect: str
    warning: str = ""
    needs_reason: bool = False
    payload: dict = field(default_factory=dict)


def job_request(
    action: str,
    spec: QueueSpec,
    jobs: Sequence[ObservedJob],
    *,
    force: bool = False,
    overdue: dict[str, float] | None = None,
    all_stale: int | None = None,
    left_out: Sequence[Skipped] = (),
) -> ConfirmRequest:
    """Requeue or dead-letter these jobs, as observed.

    `left_out`: jobs the operator chose that the action would skip as observed; they are
    named with their reason, and not sent.
    """
    ids = [j.id for j in jobs]
    overdue = overdue or {}
    line = dead_line if action == "retry-dead" else job_line
    rows = [line(j, overdue.get(j.id)) for j in jobs[:MAX_ROWS]]
    if len(jobs) > MAX_ROWS:
        rows.append(f"  ... and {len(jobs) - MAX_ROWS} more")
    if left_out:
        rows.append(
            "Left out (as shown, the action would skip them): "
            + ids_text([f"{s.id} {s.reason}" for s in left_out])
        )
    scope = f" (all {all_stale} stale leases shown)" if all_stale else ""
    noun = "job" if len(ids) == 1 else "jobs"
    head = f"{len(ids)} {noun}{scope}: {ids_text(ids)}"
    # what the guard and the fence really are for this spec: never a token it lacks
    guard = guard_text(spec, force)
    fence = fencing_text(spec, action)
    warnings = []
    if action == "requeue":
        title = f"Force requeue {len(ids)} {noun}?" if force else f"Requeue {len(ids)} {noun}?"
        cols = spec.columns
        cleared = [
            name for name, col in (("worker", cols.worker), ("lease", cols.lease_until)) if col
        ]
        effect = (
            "Back to ready"
            + (f", {' and '.join(cleared)} cleared" if cleared else "")
            + (", attempts kept" if cols.attempts else "")
            + ". "
            + (fence + " " if fence else "")
            + guard
        )
        if force:
            live = unexpired(jobs, spec)
            warnings.append(
                f"FORCE: {len(live)} of these leases have not expired; their workers "
                "may still be running them. Only the expiry check is lifted."
                if live
                else "FORCE: the lease expiry check is lifted (these leases have expired already)."
            )
    elif action == "retry-dead":
        title = f"Retry {len(ids)} {noun} from the dead-letter table?"
        effect = retry_dead_effect(spec)
        fence = ""
    else:
        title = f"Dead-letter {len(ids)} {noun}?"
        dead = spec.policy.dead_letter
        where = (
            f"moved to {dead.table} in one transaction (reason, time and actor kept)"
            if dead and dead.kind == "table" and dead.table
            else f"set to {dead.status if dead and dead.status else 'the dead state'}"
            ", the reason kept with the job"
        )
        effect = (
            f"Each job is {where}. "
            + (fence + " " if fence else "")
            + f"{guard} A reason is required."
        )
    if action != "retry-dead" and fencing_warning(spec, action):
        warnings.append(fencing_warning(spec, action))
    warning = "\n".join(warnings)
    return ConfirmRequest(
        action,
        title,
        (head, *rows),
        effect,
        warning,
        needs_reason=action == "dead-letter",
        payload={"jobs": list(jobs), "force": force},
    )


def dead_line(job: ObservedJob, overdue: float | None = None) -> str:
    """A job as the dead-letter table holds it: the state it was moved in."""
    return (
        f"  {job.id:>6}  was {job.status:<8} worker {job.worker or '-':<12} "
        f"token {job.lease_token or '-'}"
    )


def retry_dead_effect(spec: QueueSpec) -> str:
    dead = spec.policy.dead_letter.table if spec.policy.dead_letter else None
    cols = spec.columns
    cleared = [name for name, col in (("worker", cols.worker), ("lease", cols.lease_until)) if col]
    token = f", its lease token ({cols.lease_token}) advanced" if cols.lease_token else ""
    return (
        f"Each job is moved from {dead} back into {spec.table} in one statement (deleted "
        f"there, inserted here) as {spec.values('ready')[0]!r}"
        + (f", {' and '.join(cleared)} cleared" if cleared else "")
        + (", attempts kept" if cols.attempts else "")
        + token
        + ". Guarded: only while "
        "it is still in the dead-letter table as shown and its id is free in the queue; "
        "the others are skipped, each with its reason."
    )


def session_request(
    action: str, item: IdleTransaction | SessionInfo | WaitingSession, seen: ObservedSession
) -> ConfirmRequest:
    """Cancel or terminate the backend behind one table row."""
    what = (
        "cancel its current query (the session stays)"
        if action == "cancel"
        else "end the backend: its open transaction rolls back, its locks are released"
    )
    lines = [
        f"pid {seen.pid}, started {seen.backend_start:%Y-%m-%d %H:%M:%S}, "
        f"application {item.application_name or '-'}"
    ]
    if isinstance(item, IdleTransaction):
        lines.append(
            f"idle in transaction for {age(item.idle_s)} "
            f"(transaction {age(item.xact_age_s)} old, {item.locks_held} locks), "
            f"user {item.user}"
        )
    elif isinstance(item, WaitingSession):
        lines.append(
            f"waiting {age(item.wait_s)} on {item.wait_event}, blocked by "
            + ", ".join(map(str, item.blocked_by))
        )
    else:
        lines.append(f"{item.state}, transaction {age(item.xact_age_s)} old, blocking others")
    lines.append(f"last query: {' '.join(item.query.split())[:200] or '-'}")
    return ConfirmRequest(
        action,
        f"{action.capitalize()} backend {seen.pid}?",
        tuple(lines),
        f"This will {what}. Guarded: only if pid and backend start still match"
        + (" and it is still idle in the same transaction." if seen.state else "."),
        payload={"session": seen},
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
        r = self.request
        with VerticalScroll(id="confirm-body") as body:
            body.border_title = r.title
            yield Static(
                Text("\n".join(r.lines), no_wrap=True, overflow="ellipsis"), id="confirm-what"
            )
            if r.warning:
                yield Static(Text(r.warning, style="bold black on yellow"), id="confirm-warning")
            yield Static(r.effect, id="confirm-effect")
            if r.needs_reason:
                yield Input(
                    placeholder="reason (required), e.g. poison message: bad payload",
                    id="confirm-reason",
                )
            yield Static(
                Text(
                    "Enter: yes"
                    + ("" if r.needs_reason else " (or y)")
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
        if yes and self.request.needs_reason:
            self.reason = self.query_one(Input).value.strip()
            if not self.reason:
                self.notify(
                    "a reason is required: it goes into the audit trail", severity="warning"
                )
                return
        self.dismiss(yes)
