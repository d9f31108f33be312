"""Counts per role with the raw values behind them, locked-now counts, oldest ready age."""

from __future__ import annotations

import textwrap

from dashboard.models import QueueSpec, Snapshot, state_label
from dashboard.render.report import age, one_line
from dashboard.text.untrusted import shown as safe  # `shown` is a name of show()'s
from dashboard.ui.widgets.lines_panel import Line, LinesPanel
from dashboard.ui.widgets.text_strip import Part

ROLE_STYLES = {
    "ready": "cyan",
    "scheduled": "blue",
    "running": "yellow",
    "done": "green",
    "failed": "red",
    "dead": "color(135)",  # the plots' colour for dead (see plots.ROLE_COLORS)
}


def raw_values(role: str, snap: Snapshot, spec: QueueSpec | None) -> str:
    """The raw state values behind a role and their counts, e.g. 'ready 12, queued 3'."""
    values = spec.values(role) if spec else ()
    if not values:
        return "-"
    return ", ".join(f"{safe(v)} {snap.by_status.get(v, 0):,}" for v in values)


HOLDER_ROW = "{:<10}{:>7} {:>5} {:<7} {}"


def wrap(text: str, width: int) -> list[str]:
    """Text in lines of at most `width`, broken at spaces where it can be: nothing cut."""
    return textwrap.wrap(text, max(width, 10), break_long_words=True, break_on_hyphens=False)


def clip(text: str, width: int) -> str:
    """Cut to width with an ellipsis, keeping the spaces that align columns."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


GROUP_ROW = "{:<10} {:>6} {:>5} {:>5} {:>5} {:>6}"


def group_lines(snap: Snapshot, width: int, most: int = 8) -> list[tuple[str, str]]:
    """Active jobs per group (queue name, task kind), the busiest first."""
    if not snap.groups:
        return []
    scheduled = "scheduled" in snap.roles
    lines = [
        (
            clip(
                GROUP_ROW.format(
                    "group", "ready", "sched" if scheduled else "", "run", "stale", "oldest"
                ),
                width,
            ),
            "dim",
        )
    ]
    busiest = sorted(snap.groups, key=lambda g: (-(g.ready + g.running + g.stale_leases), g.name))
    for g in busiest[:most]:
        style = "red" if g.stale_leases else ""
        lines.append(
            (
                clip(
                    GROUP_ROW.format(
                        clip(safe(g.name), 10),
                        f"{g.ready:,}",
                        f"{g.scheduled:,}" if scheduled else "",
                        f"{g.running:,}",
                        f"{g.stale_leases:,}",
                        age(g.oldest_ready_age_s),
                    ),
                    width,
                ),
                style,
            )
        )
    if len(busiest) > most:
        lines.append(
            (f"… {len(busiest) - most} more groups (snapshot --json has them all)", "dim italic")
        )
    return lines


class StatePanel(LinesPanel):
    """The queue at a glance; '~' marks planner estimates.

    Drawn line by line from (text, style) parts, as the header is: a poll that changes two
    numbers repaints those two lines, not the panel, and neither builds nor lays out a Rich
    Text (laid out as a Static, the whole panel cost more than a millisecond on every poll,
    a fifth of the dashboard's CPU under load; as one Text split into lines, a third of
    what drawing a poll cost the screen)."""

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
            self._draw([(("waiting for the first snapshot…", "dim"),)])
            return
        width = max(self.content_size.width, 30)
        # plain text in columns, not a Rich table: this repaints on every poll
        rows = [
            (
                role,
                f"{'~' if role in snap.estimated else ''}{snap.counts.get(role, 0):,}",
                snap.locked.get(role),
            )
            for role in snap.roles
        ]
        count_w = max(4, *(len(count) for _, count, _ in rows))
        lines: list[Line] = []
        height = self.content_size.height
        # a short panel (80x24) with six roles keeps the numbers and drops the column titles
        header = not height or height >= len(rows) + 2
        if header:
            lines.append(((f"{'role':<7} {'rows':>{count_w}} {'locked':>6} raw values", "dim"),))
        room = max(width - 7 - count_w - 8 - 1, 1)
        for role, count, locked in rows:
            lines.append(
                (
                    (f"{role[:7]:<7}", ROLE_STYLES[role]),
                    (f" {count:>{count_w}} ", ""),
                    (
                        f"{'' if locked is None else f'{locked:,}':>6}",
                        "bold" if locked else "dim",
                    ),
                    (" " + clip(raw_values(role, snap, spec), room), "dim"),
                )
            )
        notes: list[Part] = [("oldest ready ", "dim"), (age(snap.oldest_ready_age_s), "bold")]
        if snap.estimated:
            notes.append(("  ~ estimate", "dim"))
        extra: list[tuple[str, str]] = group_lines(snap, width)
        if snap.row_lock_holders:
            extra.append(
                (clip(HOLDER_ROW.format("row locks", "pid", "rows", "role", "app"), width), "dim")
            )
            for h in sorted(snap.row_lock_holders, key=lambda h: -h.rows)[:8]:
                extra.append(
                    (
                        clip(
                            HOLDER_ROW.format(
                                "",
                                safe(h.pid),
                                safe(h.rows),
                                safe(h.role),
                                safe(h.application_name),
                            ),
                            width,
                        ),
                        "",
                    )
                )
        # rows no role claims: whole, wrapped (the bar under the header says what to do)
        if snap.unmapped:
            listed = ", ".join(
                f"{safe(state_label(v))} {n:,}" for v, n in sorted(snap.unmapped.items())
            )
            extra += [(line, "bold yellow") for line in wrap(f"! no role: {listed}", width)]
        extra += [("! " + safe(one_line(w, width - 2)), "yellow") for w in snap.warnings[:3]]
        # never cut silently: what does not fit is counted on the last line that does
        room = max(height - int(header) - len(snap.roles) - 1, 0) if height else len(extra)
        if len(extra) > room:
            hidden = len(extra) - max(room - 1, 0)
            extra = extra[: max(room - 1, 0)]
            more = f"… {hidden} more line{'s' if hidden > 1 else ''} (taller terminal)"
            if room:
                extra.append((more, "dim italic"))
            else:
                notes.append((f"  +{hidden} more lines", "dim italic"))
        lines.append(tuple(notes))
        lines += [((line, style),) for line, style in extra]
        # a fixed size in app.tcss: new numbers never move anything else on the screen;
        # the same numbers as last time paint nothing
        self._draw(lines)
