"""Look up any job by id: an input for the ids, then the jobs as they are now.

From the job list the operator launches a requeue, a forced requeue or a
dead-letter; the app then asks for confirmation as for stale leases.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from dashboard.actions import ObservedJob, Skipped, foresee
from dashboard.actions.requests import ActionKind
from dashboard.models import QueueSpec
from dashboard.text.untrusted import shown
from dashboard.ui.plain import plain
from dashboard.ui.screens.confirm import MAX_IDS, dead_line, job_line


def parse_ids(text: str) -> list[str]:
    """'12, 13 14' -> ['12', '13', '14'], duplicates dropped, order kept."""
    return list(dict.fromkeys(t for t in re.split(r"[\s,;]+", text) if t))


class JobLookupScreen(ModalScreen[list[str] | None]):
    """Asks for job ids; Enter looks them up, Escape closes.

    `check` names the ids the queue cannot take (a typo); the dialog then stays open with
    the input as typed and the problem on an error line, and nothing is looked up.
    """

    BINDINGS = [
        # priority: the Input would take Enter first, and hide it from the footer
        Binding(
            "enter",
            "look_up",
            "Look up",
            key_display="Enter",
            priority=True,
            tooltip="Look up the ids typed (a plain read, nothing changes)",
        ),
        Binding(
            "escape",
            "cancel",
            "Close",
            key_display="Esc",
            tooltip="Close the look-up, look nothing up",
        ),
    ]

    def __init__(
        self,
        check: Callable[[list[str]], str | None] | None = None,
        value: str = "",
        error: str = "",
    ) -> None:
        super().__init__()
        self.check = check
        self.value = value
        self.error = error

    def compose(self) -> ComposeResult:
        with Vertical(id="lookup-body") as body:
            body.border_title = "Look up jobs by id (Escape closes)"
            yield Input(
                self.value, placeholder="job ids, separated by spaces or commas", id="lookup-ids"
            )
            yield Static(id="lookup-error")
            yield Static(Text("Enter: look up (a plain read, nothing changes)", style="dim"))
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(Input).action_end()  # reopened with the input: edit where it ends
        self.show_error(self.error, self.value)

    def focus_input(self) -> None:
        """Focus the input now, not after the keys already queued (Widget.focus defers)."""
        self.set_focus(self.query_one(Input))

    def show_error(self, error: str, value: str) -> None:
        """Show `error` (or hide the line) about the input as it is: `value`."""
        self.error, self.value = error, value
        line = self.query_one("#lookup-error", Static)
        line.update(plain(error, "bold red"))
        line.display = bool(error)

    def problem(self, ids: list[str]) -> str:
        if not ids:
            return "type one or more job ids"
        why = self.check(ids) if self.check else None
        return f"{why}; fix it and press Enter" if why else ""

    def on_input_changed(self, event: Input.Changed) -> None:
        # an error on show follows the edits, and goes once they fix it (the Input also
        # reports its initial value: that is what the error is about, keep it)
        if self.error and event.value != self.value:
            ids = parse_ids(event.value)
            self.show_error(self.problem(ids) if ids else "", event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._look_up_typed()  # the input's own Enter: it comes after the keys before it

    def action_look_up(self) -> None:
        """Enter is a priority key: it runs at once, maybe before the input has taken the
        keys typed just before it. Look up once the input has taken them (they are in its
        queue, ahead of this call)."""
        self.query_one(Input).call_later(self._look_up_typed)

    def _look_up_typed(self) -> None:
        value = self.query_one(Input).value
        ids = parse_ids(value)
        error = self.problem(ids)
        if error:
            self.show_error(error, value)
            return
        self.dismiss(ids)

    def action_cancel(self) -> None:
        self.dismiss(None)


class JobListScreen(ModalScreen[None]):
    """The looked-up jobs as they are now.

    R, F or D posts `Chosen` when the action would change something; the app then asks
    for confirmation on top of this list, so a "no" there comes back here. The keys stay
    in sight (the border under the list and the footer); the list scrolls on its own.
    """

    BINDINGS = [
        Binding(
            "R",
            "choose('requeue', False)",
            "Requeue",
            tooltip="Requeue the jobs found (expired leases only)",
        ),
        Binding(
            "F",
            "choose('requeue', True)",
            "Force requeue",
            tooltip="Requeue even leases that have not expired",
        ),
        Binding(
            "D",
            "choose('dead-letter', False)",
            "Dead-letter",
            tooltip="Dead-letter the jobs found (asks for a reason)",
        ),
        Binding(
            "Y",
            "choose('retry-dead', False)",
            "Retry dead",
            tooltip="Move the jobs found in the dead-letter table back into the queue",
        ),
        Binding(
            "escape,q",
            "close",
            "Close",
            key_display="Esc",
            tooltip="Close the list, change nothing",
        ),
        # the list is not focusable, so these reach the screen: they jump at once (an
        # animated End looked as if it stopped a few rows short)
        *(
            Binding(key, f"scroll_list('{key}')", key, show=False)
            for key in ("up", "down", "pageup", "pagedown", "home", "end")
        ),
    ]
    KEYS_LINE = "R requeue  F force requeue  D dead-letter  Esc close"
    DEAD_KEYS_LINE = "Y retry from the dead-letter table  Esc close"

    class Chosen(Message):
        """The operator chose `action` (forced or not) for the jobs of `listing`."""

        def __init__(self, listing: JobListScreen, action: ActionKind, force: bool) -> None:
            super().__init__()
            self.listing = listing
            self.action = action
            self.force = force

    def __init__(
        self,
        jobs: Sequence[ObservedJob],
        missing: Sequence[Skipped],
        spec: QueueSpec,
        dead: Sequence[ObservedJob] = (),
    ) -> None:
        super().__init__()
        self.jobs = list(jobs)
        self.missing = list(missing)
        self.spec = spec
        self.dead = list(dead)  # in the dead-letter table: Y retries them

    def compose(self) -> ComposeResult:
        dead_table = self.spec.policy.dead_letter.table if self.dead else None
        lines = Text("\n").join(
            [Text(job_line(job)) for job in self.jobs]  # job_line escapes what it shows
            + [
                Text(f"{dead_line(job)}  already dead-lettered: in {shown(dead_table)}", "red")
                for job in self.dead
            ]
            + [plain(f"  {s.id:>6}  {s.reason}", "yellow") for s in self.missing]
        )
        lines.no_wrap, lines.overflow = True, "ellipsis"
        keys = [self.KEYS_LINE.removesuffix("  Esc close")] if self.jobs else []
        keys += [self.DEAD_KEYS_LINE.removesuffix("  Esc close")] if self.dead else []
        with VerticalScroll(id="joblist-body", can_focus=False) as body:
            body.border_title = (
                f"{len(self.jobs)} job(s) found, "
                + (f"{len(self.dead)} in the dead-letter table, " if self.dead else "")
                + f"{len(self.missing)} not found"
            )
            body.border_subtitle = "  ".join([*keys, "Esc close"])
            yield Static(lines, id="joblist-lines")
        yield Footer(compact=True, show_command_palette=False)

    def action_scroll_list(self, key: str) -> None:
        body = self.query_one("#joblist-body", VerticalScroll)
        move = {
            "up": body.scroll_up,
            "down": body.scroll_down,
            "pageup": body.scroll_page_up,
            "pagedown": body.scroll_page_down,
            "home": body.scroll_home,
            "end": body.scroll_end,
        }[key]
        move(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_choose(self, name: str, force: bool) -> None:
        action = ActionKind(name)  # the binding's word, typed from here on
        if action is ActionKind.RETRY_DEAD:
            if self.dead:
                self.post_message(self.Chosen(self, action, force))
            else:
                self.notify("no job found in the dead-letter table", severity="warning")
            return
        if not self.jobs:
            self.notify(
                "the jobs found are in the dead-letter table: Y retries them"
                if self.dead
                else "no job to act on",
                severity="warning",
            )
            return
        change, skipped = foresee(self.spec, self.jobs, action, force)
        if not change:  # nothing would change as looked up: say why instead of asking
            self.notify(
                skipped_text(skipped, action, force),
                severity="warning",
                timeout=8,
                title=f"{'force ' if force else ''}{action}: nothing to change",
            )
            return
        self.post_message(self.Chosen(self, action, force))


def skipped_text(skipped: Sequence[Skipped], action: str, force: bool) -> str:
    """'1673: already done, 1674: lease not expired (F forces a requeue)'."""
    text = ", ".join(f"{s.id}: {s.reason}" for s in skipped[:MAX_IDS])
    text += f" +{len(skipped) - MAX_IDS} more" if len(skipped) > MAX_IDS else ""
    leases = any(s.reason.startswith("lease") for s in skipped)
    if leases and action == ActionKind.REQUEUE and not force:
        text += " (F forces a requeue)"
    return text
