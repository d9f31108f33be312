"""Recovery actions in the dashboard: confirm, run off the UI thread, show the result.

Each action runs in a thread worker on its own action connection (never the
monitor's), as one short guarded transaction; the result comes back as a
message, is shown, and a poll follows at once so the tables catch up.
Capabilities (read-only, audit sink, grants) are checked once, at startup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from functools import partial

import psycopg
from textual import work
from textual.actions import SkipAction
from textual.message import Message
from textual.worker import Worker, WorkerState

from dashboard import actions, db
from dashboard.actions import ActionResult, ObservedJob, ObservedSession, Skipped, dead_letters
from dashboard.actions.capabilities import ACTIONS
from dashboard.errors import UserError
from dashboard.models import IdleTransaction
from dashboard.queue_sql.dead_table import ALREADY_DEAD
from dashboard.ui.poller import _one_line_error
from dashboard.ui.screens.action_result import ActionResultScreen, result_title
from dashboard.ui.screens.confirm import (
    ConfirmRequest,
    ConfirmScreen,
    job_request,
    session_request,
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
    return _one_line_error(exc)


class CapabilitiesReady(Message):
    def __init__(self, reasons: dict[str, str | None], failed: bool = False) -> None:
        super().__init__()
        self.reasons = reasons
        self.failed = failed


class RecoveryDone(Message):
    def __init__(self, result: ActionResult) -> None:
        super().__init__()
        self.result = result


class RecoveryFailed(Message):
    def __init__(self, action: str, reason: str) -> None:
        super().__init__()
        self.action = action
        self.reason = reason


class LookupRefused(Message):
    """The server refused an id the look-up dialog could not check: ask again."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__()
        self.value = value
        self.reason = reason


class JobsObserved(Message):
    def __init__(
        self, jobs: list[ObservedJob], missing: list[Skipped], dead: list[ObservedJob] = ()
    ) -> None:
        super().__init__()
        self.jobs = jobs
        self.missing = missing
        self.dead = list(dead)  # found in the dead-letter table: offered a retry


class RecoveryMixin:
    """Guarded requeue, dead-letter, cancel and terminate for QueuetopApp.

    Expects on the app: dsn, spec, read_only, audit_file, polling_enabled, _in_flight,
    _start_poll(), stale_table, table(), _render_chrome(), refresh_views_after_action().
    """

    action_reasons: dict[str, str | None] = {}
    _caps_failed = False
    _action_busy = False
    _poll_after_action = False

    # --- capabilities ----------------------------------------------------------------------

    def start_recovery(self) -> None:
        """Decide what is allowed: at once when obvious, else by a worker (once)."""
        if self.read_only:
            self.action_reasons = dict.fromkeys(
                ACTIONS, "read-only mode (--read-only): recovery actions are disabled"
            )
        elif not self.polling_enabled:
            self.action_reasons = dict.fromkeys(ACTIONS, "no database: fixed snapshots only")
        else:
            self.action_reasons = dict.fromkeys(ACTIONS, CHECKING)
            self.check_capabilities()

    @work(thread=True, group="recovery-check", exit_on_error=False)
    def check_capabilities(self) -> None:
        try:
            with closing(db.connect_action(self.dsn)) as conn:
                reasons = actions.capabilities(
                    conn, self.spec, read_only=self.read_only, audit_file=self.audit_file
                )
        except (psycopg.Error, UserError, OSError) as exc:
            why = f"cannot check permissions ({_why(exc)}); press again to retry"
            self.post_message(CapabilitiesReady(dict.fromkeys(ACTIONS, why), failed=True))
            return
        self.post_message(CapabilitiesReady(reasons))

    def on_capabilities_ready(self, message: CapabilitiesReady) -> None:
        self.action_reasons = message.reasons
        self._caps_failed = message.failed
        self._render_chrome()

    def recovery_note(self) -> str:
        """For the header: which actions are off (read-only says so itself)."""
        if self.read_only or not self.polling_enabled:
            return ""
        off = [a for a, why in self.action_reasons.items() if why and why != CHECKING]
        if not off:
            return ""
        return "actions off" if len(off) == len(ACTIONS) else f"off: {', '.join(off)}"

    def recovery_help(self) -> list[str]:
        """For the help screen: why each disabled action is disabled."""
        if not self.polling_enabled:
            return []
        return [f"{a}: disabled: {why}" for a, why in self.action_reasons.items() if why]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # a dashboard of fixed snapshots has nothing to act on: those keys are hidden. A
        # disabled action stays bound so that pressing it says why (the header says "off").
        if action in RECOVERY_ACTIONS and not self.polling_enabled:
            return False
        return super().check_action(action, parameters)

    def _refused(self, action: str) -> bool:
        """Say why `action` cannot run now (notification); False when it may."""
        why = self.action_reasons.get(action, CHECKING)
        if why:
            self.notify(why, title=f"{action} is disabled", severity="warning", timeout=8)
            if self._caps_failed:
                self._caps_failed = False
                self.check_capabilities()
            return True
        if self._action_busy:
            self.notify("an action is still running; its result comes first", severity="warning")
            return True
        return False

    # --- the bindings --------------------------------------------------------------------------

    def action_requeue_stale(self) -> None:
        self._stale_action("requeue")

    def action_dead_letter_stale(self) -> None:
        self._stale_action("dead-letter")

    def _stale_action(self, action: str) -> None:
        if self._refused(action):
            return
        table = self.stale_table
        leases = table.selected_leases()
        if not leases and table.cursor_item() is not None:
            leases = [table.cursor_item()]
        if not leases:
            self.notify(
                "no stale lease: mark rows with Space (a marks all) or put the "
                "cursor on one (key 4)",
                severity="warning",
            )
            return
        everything = len(leases) if len(leases) > 1 and len(leases) == len(table.items) else None
        self._confirm(
            job_request(
                action,
                self.spec,
                [ObservedJob.from_stale(s) for s in leases],
                overdue={str(s.id): s.overdue_s for s in leases},
                all_stale=everything,
            )
        )

    def action_signal_session(self, action: str, table_id: str) -> None:
        if self._refused(action):
            return
        item = self.table(table_id).cursor_item()
        if item is None:
            self.notify("no session under the cursor", severity="warning")
            return
        if item.backend_start is None:  # without it a reused pid cannot be ruled out
            self.notify(
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
        self._confirm(session_request(action, item, seen))

    async def action_lookup_jobs(self, value: str = "", error: str = "") -> None:
        if len(self.screen_stack) > 1 and not value:  # j typed in a dialog: its own key
            raise SkipAction()
        check = partial(actions.job_id_problem, self.spec)
        screen = JobLookupScreen(check, value, error)
        # the keys typed right after j (a paste, tmux send-keys, a fast typist) wait in the
        # app's queue behind this priority key: with the dialog mounted and its input
        # focused before this returns, they go to the input, in order (Enter too, see
        # JobLookupScreen.action_look_up), not to the table that had the focus
        await self.push_screen(screen, self._look_up)
        screen.focus_input()

    # --- confirm, run, report ------------------------------------------------------------------

    def _confirm(self, request: ConfirmRequest, on_go: Callable[[], object] | None = None) -> None:
        """Ask; on a yes that may still run, call `on_go` and run the action."""
        screen = ConfirmScreen(request)

        def answered(yes: bool | None) -> None:
            if yes and not self._refused(request.action):
                self._action_busy = True
                if on_go is not None:
                    on_go()
                self.run_recovery(request.action, request.payload, screen.reason or None)

        self.push_screen(screen, answered)

    @work(thread=True, group="recovery", exit_on_error=False)
    def run_recovery(self, action: str, payload: dict, reason: str | None) -> None:
        """One guarded action on its own connection; the result is posted back."""
        try:
            with closing(db.connect_action(self.dsn)) as conn:
                sink = actions.choose_sink(conn, self.audit_file)
                if action in ("cancel", "terminate"):
                    signal = actions.cancel if action == "cancel" else actions.terminate
                    result = signal(conn, payload["session"], audit=sink, reason=reason)
                elif action == "requeue":
                    result = actions.requeue(
                        conn,
                        self.spec,
                        payload["jobs"],
                        audit=sink,
                        force=payload["force"],
                        reason=reason,
                    )
                elif action == "retry-dead":
                    result = dead_letters.retry_dead(
                        conn, self.spec, payload["jobs"], audit=sink, reason=reason
                    )
                else:
                    result = actions.dead_letter(
                        conn,
                        self.spec,
                        payload["jobs"],
                        audit=sink,
                        reason=reason or "",
                        force=payload["force"],
                    )
        except (psycopg.Error, UserError, OSError) as exc:
            self.post_message(RecoveryFailed(action, _why(exc)))
            return
        self.post_message(RecoveryDone(result))

    def on_recovery_done(self, message: RecoveryDone) -> None:
        self._action_busy = False
        result = message.result
        self.notify(
            result.summary(),
            title=result_title(result),
            severity="information" if result.ok else "warning",
            timeout=8,
        )
        self.push_screen(ActionResultScreen(result))
        self.refresh_views_after_action()
        self._poll_soon()

    def on_recovery_failed(self, message: RecoveryFailed) -> None:
        self._action_busy = False
        self.notify(message.reason, title=f"{message.action} failed", severity="error", timeout=12)
        self.refresh_views_after_action()  # a failed action may still have its record
        self._poll_soon()

    def _poll_soon(self) -> None:
        """Poll now; if a poll is running (it may predate the change), once it lands."""
        if self._in_flight:
            self._poll_after_action = True
        else:
            self._start_poll()

    def on_snapshot_ready(self, message: Message) -> None:
        # PollingMixin.on_snapshot_ready runs too (Textual calls the handlers of every
        # class in the MRO); call_later runs after it, replacing the timer it armed
        if self._poll_after_action:
            self._poll_after_action = False
            self.call_later(self._start_poll)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in WORKER_GROUPS and event.state == WorkerState.ERROR:
            self._action_busy = False  # a bug, not the database: say so, keep going
            self.notify(
                _one_line_error(event.worker.error),
                title="internal error",
                severity="error",
                timeout=12,
            )

    # --- look up by id -------------------------------------------------------------------------

    def _look_up(self, ids: Sequence[str] | None) -> None:
        if ids:
            self.observe(list(ids))

    @work(thread=True, group="recovery-lookup", exit_on_error=False)
    def observe(self, ids: list[str]) -> None:
        """A plain read on a read-only connection: allowed in read-only mode too."""
        try:
            with closing(db.connect_monitor(self.dsn)) as conn:
                jobs, missing = actions.observe_jobs(conn, self.spec, ids)
                moved = [m.id for m in missing if m.reason == ALREADY_DEAD]
                dead = self._observe_dead(conn, moved)
        except actions.BadJobId as exc:  # a type the dialog does not check: reopen it
            self.post_message(LookupRefused(" ".join(ids), _why(exc)))
            return
        except (psycopg.Error, UserError, OSError) as exc:
            self.post_message(RecoveryFailed("look-up", _why(exc)))
            return
        found = {d.id for d in dead}
        self.post_message(JobsObserved(jobs, [m for m in missing if m.id not in found], dead))

    def _observe_dead(self, conn: psycopg.Connection, ids: list[str]) -> list[ObservedJob]:
        """The moved jobs as the dead-letter table holds them, to offer their retry; none
        where queuetop cannot retry (a state its adapter derives): they stay named."""
        if not ids:
            return []
        try:
            return dead_letters.observe_dead(conn, self.spec, ids)[0]
        except UserError:
            return []

    async def on_lookup_refused(self, message: LookupRefused) -> None:
        await self.action_lookup_jobs(message.value, message.reason)

    def on_jobs_observed(self, message: JobsObserved) -> None:
        self.push_screen(JobListScreen(message.jobs, message.missing, self.spec, message.dead))

    def on_job_list_screen_chosen(self, message: JobListScreen.Chosen) -> None:
        """Confirm on top of the list: a no (Escape) returns to it, a yes closes it."""
        listing, action = message.listing, message.action
        if action == "retry-dead":
            change, left_out = listing.dead, []
        else:  # the list refused if nothing would change; ask only about what would
            change, left_out = actions.foresee(self.spec, listing.jobs, action, message.force)

        def close_list() -> None:
            if self.screen is listing:
                listing.dismiss(None)

        self.ask_job_action(action, change, message.force, left_out, on_go=close_list)

    def ask_job_action(
        self,
        action: str,
        jobs: Sequence[ObservedJob],
        force: bool,
        left_out: Sequence[Skipped] = (),
        on_go: Callable[[], object] | None = None,
    ) -> None:
        """Confirm a job action on `jobs` as observed (the look-up list, the browser)."""
        if self._refused(action):
            return
        self._confirm(
            job_request(action, self.spec, jobs, force=force, left_out=left_out), on_go=on_go
        )
