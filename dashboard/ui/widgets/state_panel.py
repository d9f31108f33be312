"""Counts per role with the raw values behind them, locked-now counts, oldest ready age."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dashboard.models import ROLES, QueueSpec, Snapshot
from dashboard.report import age, one_line

ROLE_STYLES = {"ready": "cyan", "running": "yellow", "done": "green", "failed": "red",
               "dead": "magenta"}


def raw_values(role: str, snap: Snapshot, spec: QueueSpec | None) -> str:
    """The raw state values behind a role and their counts, e.g. 'ready 12, queued 3'."""
    values = spec.values(role) if spec else ()
    if not values:
        return "-"
    return ", ".join(f"{v} {snap.by_status.get(v, 0)}" for v in values)


HOLDER_ROW = "{:<10}{:>7} {:>5} {:<7} {}"


def clip(text: str, width: int) -> str:
    """Cut to width with an ellipsis, keeping the spaces that align columns."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


class StatePanel(Static):
    """The queue at a glance; '~' marks planner estimates."""

    _last: tuple[Snapshot | None, QueueSpec | None] = (None, None)
    _shown: tuple | None = None

    def on_resize(self) -> None:
        self.show(*self._last)  # the clipping depends on the width

    def show(self, snap: Snapshot | None, spec: QueueSpec | None) -> None:
        # the header and every refresh of it show the same snapshot: render it once
        shown = (id(snap), id(spec), self.content_size)
        if self._last[0] is snap and self._last[1] is spec and shown == self._shown:
            return
        self._last, self._shown = (snap, spec), shown
        if snap is None:
            self.update(Text("waiting for the first snapshot…", style="dim"), layout=False)
            return
        width = max(self.content_size.width, 30)
        table = Table.grid(padding=(0, 1), expand=False)
        table.add_column("role", no_wrap=True)
        table.add_column("rows", justify="right", no_wrap=True)
        table.add_column("locked", justify="right", no_wrap=True)
        table.add_column("raw values", no_wrap=True, overflow="ellipsis")
        table.add_row(Text("role", "dim"), Text("rows", "dim"), Text("locked", "dim"),
                      Text("raw values", "dim"))
        for role in ROLES:
            mark = "~" if role in snap.estimated else ""
            locked = snap.locked.get(role)
            table.add_row(
                Text(role, ROLE_STYLES[role]),
                Text(f"{mark}{snap.counts.get(role, 0):,}"),
                Text("" if locked is None else f"{locked:,}", "bold" if locked else "dim"),
                Text(raw_values(role, snap, spec), "dim"),
            )
        notes = Text(no_wrap=True, overflow="ellipsis")
        notes.append("oldest ready ", "dim")
        notes.append(age(snap.oldest_ready_age_s), "bold")
        if snap.estimated:
            notes.append("  ~ estimate", "dim")
        extra: list[tuple[str, str]] = []
        if snap.row_lock_holders:
            extra.append((clip(HOLDER_ROW.format("row locks", "pid", "rows", "role", "app"),
                               width), "dim"))
            for h in sorted(snap.row_lock_holders, key=lambda h: -h.rows)[:8]:
                extra.append((clip(HOLDER_ROW.format("", h.pid, h.rows, h.role,
                                                     h.application_name), width), ""))
        extra += [("! " + one_line(w, width - 2), "yellow") for w in snap.warnings[:3]]
        # never cut silently: what does not fit is counted on the last line that does
        room = max(self.content_size.height - 1 - len(ROLES) - 1, 0) if self.content_size.height \
            else len(extra)
        if len(extra) > room:
            hidden = len(extra) - max(room - 1, 0)
            extra = extra[: max(room - 1, 0)]
            more = f"… {hidden} more line{'s' if hidden > 1 else ''} (taller terminal)"
            if room:
                extra.append((more, "dim italic"))
            else:
                notes.append(f"  +{hidden} more", "dim italic")
        for line, style in extra:
            notes.append("\n" + line, style)
        # a fixed size in app.tcss: new numbers never move anything else on the screen
        self.update(Group(table, notes), layout=False)
