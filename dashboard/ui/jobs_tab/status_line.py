"""The job browser's status line: which role and order, the filters, which page, the
marks, a read under way or its error, and the keys that move around."""

from __future__ import annotations

from rich.text import Text

from dashboard.browse import BrowseQuery, Page
from dashboard.models import QueueSpec
from dashboard.queue_sql.dead_table import dead_table
from dashboard.text.untrusted import shown

KEYS = "   v role  o order  / filter  g group  [ ] pages  Enter row"


def role_text(spec: QueueSpec, role: str) -> str:
    """The role as the line names it: `dead` says which tables hold the dead jobs."""
    dead = dead_table(spec)
    if role == "dead" and dead is not None:
        return f"dead (in {spec.table} and {dead})" if spec.values("dead") else f"dead (in {dead})"
    return role


def status_line(
    spec: QueueSpec,
    query: BrowseQuery,
    page: Page | None,
    pages_read: int,
    *,
    marked: int,
    loading: bool,
    error: str,
) -> Text:
    """One line, cut with an ellipsis; names and typed text are shown escaped."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(shown(role_text(spec, query.role)), style="bold")
    line.append(f"  {'newest' if query.newest_first else 'oldest'} first")
    if query.text:
        line.append("  filter ")
        line.append(shown(repr(query.text)), style="bold yellow")
    if query.group is not None:
        line.append("  group ")
        line.append(shown(query.group), style="bold yellow")
    if page is not None and not error:
        if page.rows:
            first = (pages_read - 1) * query.limit + 1
            line.append(
                f"  page {pages_read}: rows {first}-{first + len(page.rows) - 1}"
                + (", more after (])" if page.has_more else ", the last")
            )
        else:
            line.append("  no job here" if pages_read == 1 else "  no more jobs")
    if marked:
        line.append(f"  {marked} marked", style="bold")
    if loading:
        line.append("  reading…", style="dim")
    if error:
        line.append(f"  {shown(error)}", style="bold red")
    line.append(KEYS, style="dim")
    return line
