"""Recovery actions in the dashboard: what is allowed, then confirm -> request -> run.

The controller owns the permissions (checked once, at startup, by a worker), the
busy flag (one action at a time) and the flow: `actions/` builds a typed request
(ids, guard, what changes, what the audit records), the confirmation shows it, and
on a yes the request runs in a thread worker on its own action connection (never
the monitor's), as one short guarded transaction. The result comes back as a
message, is shown, and the snapshot source is asked for a poll so the tables
catch up. The app forwards the messages (one handler each) to the methods here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from functools import partial
from typing import Any

import psycopg

from dashboard import actions, db
from dashboard.actions import ActionResult, ObservedJob, ObservedSession, Skipped, dead_letters
from dashboard.actions.capabilities import ACTIONS, checked
from dashboard.actions.requests import (
    ActionKind,
    ActionRequest,
    job_request,
    session_request,
)
from dashboard.actions.writes import WRITES, needs_reading
from dashboard.errors import UserError
from dashboard.models import IdleTransaction, QueueSpec, id_text
from dashboard.queue_sql.dead_table import ALREADY_DEAD
from dashboard.ui.messages import (
    CapabilitiesReady,
    JobsObserved,
    LookupRefused,
    RecoveryDone,
    RecoveryFailed,
)
from dashboard.ui.poller import one_line_error
from dashboard.ui.screens.action_result import ActionResultScreen, result_title
from dashboard.ui.screens.confirm import (
    ConfirmRequest,
    ConfirmScreen,
    confirm_jobs,
    confirm_session,
)
from dashboard.ui.screens.job_lookup import JobListScreen, JobLookupScreen

# app actions that need a database; hidden when the dashboard shows fixed snapshots
RECOVERY_ACTIONS = (
    "requeue_stale",
    "dead_letter_stale",
    "signal_session",
    "lookup_jobs",
    "show_audit",
)
CHECKING = "still checking permissions; try again in a moment"
WORKER_GROUPS = ("recovery", "recovery-lookup", "recovery-check")


def _why(exc: BaseException) -> str:
    """An action's own one-line refusal, else the driver's first line."""
    if isinstance(exc, UserError):
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return one_line_error(exc)


class RecoveryController:
    """Guarded requeue, dead-letter, retry-dead, cancel and terminate for the dashboard.

    `app` is used for its screens, notifications and thread workers; `poll_soon` asks
    the snapshot source for a fresh snapshot, `after_action` refreshes views that read
    the database (the audit screen, the job browser), `on_note` gets the header's note
    whenever the permissions change.
    """

    def __init__(
        self,
        app: Any,
        spec: QueueSpec | None,
        dsn: str | None,
        *,
        live: bool,
        read_only: bool,
        audit_file: str | None,
        poll_soon: Callable[[], None],
        after_action: Callable[[], None],
        on_note: Callable[[str], None],
    ) -> None:
        self._app = app
        self.spec = spec
        self.dsn = dsn
        self.live = live  # a database behind the dashboard: otherwise nothing to act on
        self.read_only = read_only
        self.audit_file = audit_file
        self._poll_soon = poll_soon
        self._after_action = after_action
        self._on_note = on_note
        self.reasons: dict[str, str | None] = {}  # action -> None (allowed) or why not
        self.busy = False  # an action runs: the next waits for its result
        self._check_failed = False  # the permission check failed: retried on the next press

    # --- permissions ----------------------------------------------------------------------

    def start(self) -> None:
        """Decide what is allowed: at once when obvious, else by a worker (once)."""
        if self.read_only:
            why = "read-only mode (--read-only): recovery actions are disabled"
            self._set_reasons(dict.fromkeys(ACTIONS, why))
        elif not self.live:
            self._set_reasons(dict.fromkeys(ACTIONS, "no database: fixed snapshots only"))
        else:
            self._set_reasons(dict.fromkeys(ACTIONS, CHECKING))
            self._check_capabilities()

    def _check_capabilities(self) -> None:
        self._app.run_worker(
            self._capabilities, group="recovery-check", thread=True, exit_on_error=False
        )

    def _capabilities(self) -> None:
        try:
            with closing(db.connect_action(self.dsn)) as conn:
                # the spec with the exact state values its actions write (a --table guess
                # only once the table holds it), which the confirmations then name
                spec, reasons = checked(
                    conn, self.spec, read_only=self.read_only, audit_file=self.audit_file
                )
        except (psycopg.Error, UserError, OSError) as exc:
            why = f"cannot check permissions ({_why(exc)}); press again to retry"
            self._app.post_message(CapabilitiesReady(dict.fromkeys(ACTIONS, why), failed=True))
            return
        # a value the table did not confirm yet may be there on the next press: ask again
        unsure = any(needs_reading(spec, a) for a in WRITES)
        self._app.post_message(CapabilitiesReady(reasons, failed=unsure, spec=spec))

    def capabilities_ready(self, message: CapabilitiesReady) -> None:
        self._check_failed = message.failed
        if message.spec is not None:
            self.spec = message.spec
        self._set_reasons(message.reasons)

    def _set_reasons(self, reasons: dict[str, str | None]) -> None:
        self.reasons = reasons
        self._on_note(self.note())

    def note(self) -> str:
        """For the header: which actions are off (read-only says so itself)."""
        if self.read_only or not self.live:
            return ""
        off = [a for a, why in self.reasons.items() if why and why != CHECKING]
        if not off:
            return ""
        return "actions off" if len(off) == len(ACTIONS) else f"off: {', '.join(off)}"

    def help_lines(self) -> list[str]:
        """For the help screen: why each disabled action is disabled."""
        if not self.live:
            return []
        return [f"{a}: disabled: {why}" for a, why in self.reasons.items() if why]

    def hides(self, app_action: str) -> bool:
        """A dashboard of fixed snapshots has nothing to act on: those keys are hidden. A
        disabled action stays bound so that pressing it says why (the header says "off")."""
        return app_action in RECOVERY_ACTIONS and not self.live

    def refused(self, kind: ActionKind) -> bool:
        """Say why `kind` cannot run now (a notification); False when it may."""
        why = self.reasons.get(kind.value, CHECKING)
        if why:
            self._app.notify(why, title=f"{kind} is disabled", severity="warning", timeout=8)
            if self._check_failed:
                self._check_failed = False
                self._check_capabilities()
            return True
        if self.busy:
            self._app.notify(
                "an action is still running; its result comes first", severity="warning"
            )
            return True
        return False

    # --- what the operator starts ---------------------------------------------------------------

    def stale_leases(self, kind: ActionKind, table: Any) -> None:
        """Requeue or dead-letter the stale leases marked in `table` (or under its cursor)."""
        if self.refused(kind):
            return
        leases = table.selected_leases()
        if not leases and table.cursor_item() is not None:
            leases = [table.cursor_item()]
        if not leases:
            self._app.notify(
                "no stale lease: mark rows with Space (a marks all) or put the "
                "cursor on one (key 4)",
                severity="warning",
            )
            return
        everything = len(leases) if len(leases) > 1 and len(leases) == len(table.items) else None
        request = job_request(kind, self.spec, [ObservedJob.from_stale(s) for s in leases])
        overdue = {id_text(s.id): s.overdue_s for s in leases}
        self._confirm(confirm_jobs(request, overdue=overdue, all_stale=everything))

    def signal_session(self, kind: ActionKind, item: Any) -> None:
        """Cancel or terminate the backend behind a row of the waiting or idle table."""
        if self.refused(kind):
            return
        if item is None:
            self._app.notify("no session under the cursor", severity="warning")
            return
        if item.backend_start is None:  # without it a reused pid cannot be ruled out
            self._app.notify(
                f"cannot see when backend {item.pid} started (GRANT pg_read_all_stats"
                " to this role); refusing to signal it",
                severity="warning",
                timeout=8,
            )
            return
        seen = (
            ObservedSession.from_idle(item)
            if isinstance(item, IdleTransaction)
            else ObservedSession.from_session(item)
        )
        self._confirm(confirm_session(session_request(kind, seen), item))

    def jobs(
        self,
        kind: ActionKind,
        jobs: Sequence[ObservedJob],
        force: bool,
        left_out: Sequence[Skipped] = (),
        on_go: Callable[[], object] | None = None,
    ) -> None:
        """Confirm a job action on `jobs` as observed (the look-up list, the browser)."""
        if self.refused(kind):
            return
        request = job_request(kind, self.spec, jobs, force=force, left_out=left_out)
        self._confirm(confirm_jobs(request), on_go=on_go)

    async def look_up(self, value: str = "", error: str = "") -> None:
        """The look-up dialog, then the jobs as they are now (a plain read)."""
        check = partial(actions.job_id_problem, self.spec)
        screen = JobLookupScreen(check, value, error)
        # the keys typed right after j (a paste, tmux send-keys, a fast typist) wait in the
        # app's queue behind this priority key: with the dialog mounted and its input
        # focused before this returns, they go to the input, in order (Enter too, see
        # JobLookupScreen.action_look_up), not to the table that had the focus
        await self._app.push_screen(screen, self._looked_up)
        screen.focus_input()

    def chosen_from_list(self, message: JobListScreen.Chosen) -> None:
        """Confirm on top of the list: a no (Escape) returns to it, a yes closes it."""
        listing, kind = message.listing, message.action
        if kind is ActionKind.RETRY_DEAD:
            change, left_out = listing.dead, []
        else:  # the list refused if nothing would change; ask only about what would
            change, left_out = actions.foresee(self.spec, listing.jobs, kind, message.force)

        def close_list() -> None:
            if self._app.screen is listing:
                listing.dismiss(None)

        self.jobs(kind, change, message.force, left_out, on_go=close_list)

    # --- confirm, run, report -------------------------------------------------------------------

    def _confirm(self, confirm: ConfirmRequest, on_go: Callable[[], object] | None = None) -> None:
        """Ask; on a yes that may still run, call `on_go` and run the request."""
        screen = ConfirmScreen(confirm)
        request = confirm.action

        def answered(yes: bool | None) -> None:
            if yes and not self.refused(request.kind):
                if on_go is not None:
                    on_go()
                self.run(request, screen.reason or None)

        self._app.push_screen(screen, answered)

    def run(self, request: ActionRequest, reason: str | None) -> None:
        """Run `request` in a thread worker; its result (or failure) comes as a message."""
        self.busy = True
        self._app.run_worker(
            partial(self._run, request, reason),
            group="recovery",
            thread=True,
            exit_on_error=False,
        )

    def _run(self, request: ActionRequest, reason: str | None) -> None:
        try:
            with closing(db.connect_action(self.dsn)) as conn:
                sink = actions.choose_sink(conn, self.audit_file)
                result = request.run(conn, audit=sink, reason=reason)
        except (psycopg.Error, UserError, OSError) as exc:
            self._app.post_message(RecoveryFailed(request.kind.value, _why(exc)))
            return
        self._app.post_message(RecoveryDone(result))

    def done(self, result: ActionResult) -> None:
        self.busy = False
        self._app.notify(
            result.summary(),
            title=result_title(result),
            severity="information" if result.ok else "warning",
            timeout=8,
        )
        self._app.push_screen(ActionResultScreen(result))
        self._after_action()
        self._poll_soon()

    def failed(self, message: RecoveryFailed) -> None:
        self.busy = False
        self._app.notify(
            message.reason, title=f"{message.what} failed", severity="error", timeout=12
        )
        self._after_action()  # a failed action may still have its record
        self._poll_soon()

    def crashed(self, error: BaseException | None) -> None:
        """A worker of ours raised: a bug, not the database. Say so, keep going."""
        self.busy = False
        self._app.notify(
            one_line_error(error) if error is not None else "recovery worker failed",
            title="internal error",
            severity="error",
            timeout=12,
        )

    # --- look up by id ----------------------------------------------------------------------

    def _looked_up(self, ids: Sequence[str] | None) -> None:
        if ids:
            self.observe(list(ids))

    def observe(self, ids: list[str]) -> None:
        """Read the jobs `ids` in a thread worker (allowed in read-only mode too)."""
        self._app.run_worker(
            partial(self._observe, ids), group="recovery-lookup", thread=True, exit_on_error=False
        )

    def _observe(self, ids: list[str]) -> None:
        """A plain read on a read-only connection."""
        try:
            with closing(db.connect_monitor(self.dsn)) as conn:
                jobs, missing = actions.observe_jobs(conn, self.spec, ids)
                moved = [m.id for m in missing if m.reason == ALREADY_DEAD]
                dead = self._observe_dead(conn, moved)
        except actions.BadJobId as exc:  # a type the dialog does not check: reopen it
            self._app.post_message(LookupRefused(" ".join(ids), _why(exc)))
            return
        except (psycopg.Error, UserError, OSError) as exc:
            self._app.post_message(RecoveryFailed("look-up", _why(exc)))
            return
        found = {d.id for d in dead}
        missing = [m for m in missing if m.id not in found]
        self._app.post_message(JobsObserved(jobs, missing, dead))

    def _observe_dead(self, conn: psycopg.Connection, ids: list[str]) -> list[ObservedJob]:
        """The moved jobs as the dead-letter table holds them, to offer their retry; none
        where queuetop cannot retry (a state its adapter derives): they stay named."""
        if not ids:
            return []
        try:
            return dead_letters.observe_dead(conn, self.spec, ids)[0]
        except UserError:
            return []

    def observed(self, message: JobsObserved) -> None:
        self._app.push_screen(JobListScreen(message.jobs, message.missing, self.spec, message.dead))
