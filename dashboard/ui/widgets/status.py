"""The header line: where queuetop looks, how often, and whether the connection is live."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from dashboard import db
from dashboard.models import QueueSpec, Snapshot
from dashboard.text.untrusted import shown


@dataclass(frozen=True)
class LinkState:
    """What the header says about the connection."""

    kind: str  # connecting, live, slow, paused, static; disconnected, timed out, blocked, error
    detail: str = ""  # short, shown next to the state: "retrying in 4s"
    reason: str = ""  # long, shown last: the error that broke the poll


FRESH = ("connecting", "live", "slow", "paused", "static", "REPLAY")
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
}


def place(snap: Snapshot | None, dsn: str | None, spec: QueueSpec | None) -> tuple[str, str]:
    """Where queuetop looks and at which queue: from the snapshot, else from the DSN (its
    password never shown) and the spec."""
    if snap is not None:
        server = snap.server  # names from the server: escaped, as everything shown
        return shown(f"{server.user}@{server.address}/{server.database}"), shown(snap.queue)
    where = db.safe_dsn(dsn) if dsn else "libpq defaults"
    return shown(where), shown(spec.table) if spec else "-"


class StatusBar(Static):
    """One line: server, database, queue table, refresh interval, connection state."""

    _text: Text | None = None

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
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" queuetop ", "bold reverse")
        state = link.kind + (f", {shown(link.detail)}" if link.detail else "")
        text.append(f" ● {state} ", STYLES.get(link.kind, "bold"))
        # early in the line: a long server address must not cut these off
        if read_only:
            text.append(" read-only ", "italic")
        if actions:  # e.g. "actions off": pressing an action key says why
            text.append(f" {actions} ", "yellow")
        if snap is not None:  # how fresh the data is: before anything a long name could cut
            text.append(
                f" {'at' if link.kind in FRESH else 'last data'} {snap.taken_at:%H:%M:%S}", "dim"
            )
            text.append(f" ({snap.elapsed_ms:.0f} ms", "dim")
            if snap.monitor_load is not None:  # the monitor's own share of the server
                text.append(f", db {snap.monitor_load:.1%}", "dim")
            text.append(") ", "dim")
            behind = [
                s for s in snap.sections if s.age_s and s.age_s > 2 * interval and not s.error
            ]
            if behind:  # paced by their cost: old on purpose, and said so
                text.append(
                    " " + ", ".join(f"{s.name} {s.age_s:.0f}s old" for s in behind) + " ", "yellow"
                )
        text.append(f" every {interval:g}s ", "dim")
        text.append(" queue ", "dim")
        text.append(queue, "bold")
        text.append(" on ", "dim")
        text.append(where)
        if link.reason:
            text.append(f"  {shown(link.reason)}", "red")
        if text != self._text:  # one line, always: a new text never moves anything else
            self._text = text
            self.update(text, layout=False)
