"""The header line: where queuetop looks, how often, and whether the connection is live."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from dashboard import db
from dashboard.models import QueueSpec, Snapshot
from dashboard.text.untrusted import shown
from dashboard.ui.widgets.text_strip import Part, parts_strip, parts_text


@dataclass(frozen=True)
class LinkState:
    """What the header says about the connection."""

    kind: str  # connecting, live, slow, paused, static; disconnected, timed out, blocked, error
    detail: str = ""  # short, shown next to the state: "retrying in 4s"
    reason: str = ""  # long, shown last: the error that broke the poll


SCHEMA_CHANGED = "schema changed"
FRESH = ("connecting", "live", "slow", "paused", "static", "REPLAY", "REWIND")
STYLES = {
    "connecting": "bold yellow",
    "live": "bold green",
    "slow": "bold yellow",
    "paused": "bold cyan",
    "disconnected": "bold white on red",
    "timed out": "bold black on yellow",
    "blocked": "bold black on yellow",
    "error": "bold white on red",
    "internal error": "bold white on red",
    "static": "bold",
    "REPLAY": "bold white on magenta",  # queuetop replay: a recorded frame, not the server now
    "REWIND": "bold white on magenta",  # the dashboard's rewind: a frame of its last minutes
    # the library under the queue was upgraded (or downgraded) mid-watch: the connection is
    # fine, the spec no longer maps the schema
    SCHEMA_CHANGED: "bold white on dark_magenta",
}


def place(snap: Snapshot | None, dsn: str | None, spec: QueueSpec | None) -> tuple[str, str]:
    """Where queuetop looks and at which queue: from the snapshot, else from the DSN (its
    password never shown) and the spec."""
    if snap is not None:
        server = snap.server  # names from the server: escaped, as everything shown
        return shown(f"{server.user}@{server.address}/{server.database}"), shown(snap.queue)
    where = db.safe_dsn(dsn) if dsn else "libpq defaults"
    return shown(where), shown(spec.table) if spec else "-"


def deadlock_rate(per_s: float) -> str:
    """Deadlocks per second as the header shows them: two figures below 0.1/s."""
    return f"{per_s:.2f}/s" if per_s < 0.1 else f"{per_s:.1f}/s"


class StatusBar(Widget):
    """One line: server, database, queue table, refresh interval, connection state.

    Drawn from its (text, style) parts straight into a strip: as a Static, laying out one
    line of text cost more than building it, on every poll, and so did laying out a Text."""

    DEFAULT_CSS = "StatusBar { height: 1; }"

    _parts: list[Part] = []
    _strip: Strip | None = None  # _parts drawn at _strip_width
    _strip_width = 0

    @property
    def _text(self) -> Text | None:
        """The line as text (tests read it)."""
        return parts_text(self._parts) if self._parts else None

    def render(self) -> Text:
        """The line as text (what render_line draws)."""
        return self._text or Text()

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self.rich_style
        if y or not self._parts:
            return Strip.blank(width, base)
        if self._strip is None or self._strip_width != width:
            self._strip = parts_strip(self._parts, width)
            self._strip_width = width
        return self._strip.apply_style(base)

    def show(
        self,
        *,
        snap: Snapshot | None,
        fallback: tuple[str | None, QueueSpec | None],
        interval: float,
        link: LinkState,
        read_only: bool,
        actions: str = "",
    ) -> None:
        """Draw the line; `fallback` (dsn, spec) names server and queue before a snapshot."""
        where, queue = place(snap, *fallback)
        parts: list[Part] = [(" queuetop ", "bold reverse")]
        add = parts.append
        state = link.kind + (f", {shown(link.detail)}" if link.detail else "")
        add((f" ● {state} ", STYLES.get(link.kind, "bold")))
        # early in the line: a long server address must not cut these off
        if read_only:
            add((" read-only ", "italic"))
        if actions:  # e.g. "actions off": pressing an action key says why
            add((f" {actions} ", "yellow"))
        if snap is not None and snap.deadlocks_per_s:  # pg_stat_database: only when not 0
            add((f" deadlocks {deadlock_rate(snap.deadlocks_per_s)} ", "bold red"))
        if snap is not None:  # how fresh the data is: before anything a long name could cut
            add((f" {'at' if link.kind in FRESH else 'last data'} {snap.taken_at:%H:%M:%S}", "dim"))
            add((f" ({snap.elapsed_ms:.0f} ms", "dim"))
            if snap.monitor_load is not None:  # the monitor's own share of the server
                add((f", db {snap.monitor_load:.1%}", "dim"))
            add((") ", "dim"))
            behind = [
                s for s in snap.sections if s.age_s and s.age_s > 2 * interval and not s.error
            ]
            if behind:  # paced by their cost: old on purpose, and said so
                add(
                    (
                        " " + ", ".join(f"{s.name} {s.age_s:.0f}s old" for s in behind) + " ",
                        "yellow",
                    )
                )
        add((f" every {interval:g}s ", "dim"))
        add((" queue ", "dim"))
        add((queue, "bold"))
        add((" on ", "dim"))
        add((where, ""))
        if link.reason:
            add((f"  {shown(link.reason)}", "red"))
        if parts != self._parts:  # one line, always: a new text never moves anything else
            self._parts, self._strip = parts, None
            self.refresh()
