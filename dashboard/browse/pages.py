"""Pages of the job browser: a role's jobs, keyset-paged, filtered by text and group.

A page is read in id order from just past the last row of the page before (never
OFFSET): each page reads about its own rows through the primary key, however deep.
The dead role reads the dead-letter table too, when dead jobs are moved to one; its
rows and the queue's are merged by id, each source read once per page.

    reader = PageReader(spec)
    page = reader.read(conn, BrowseQuery(role="failed"))
    more = reader.read(conn, query, page.next_start)     # the next page
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import class_row

import queries
from dashboard.models import QueueSpec
from dashboard.observed.records import ObservedJob
from dashboard.queue_sql.dead_table import dead_parts, dead_table
from dashboard.queue_sql.parts import queue_parts, state_in, statement

# The roles an operator browses, in the order the role key cycles through them.
# done last: finished jobs, among them those that failed and then succeeded on a retry (they
# end done with their last error, which the text filter finds)
BROWSE_ROLES = ("failed", "dead", "ready", "scheduled", "running", "done")
PAGE_ROWS = 100
ERROR_CHARS = 500  # of last_error per row: the whole row (Enter) has the rest
QUEUE, DEAD_TABLE = "queue", "dead-letter table"


@dataclass(frozen=True)
class BrowseQuery:
    """What the browser shows: a role, newest (highest id) or oldest first, filters."""

    role: str = "failed"
    newest_first: bool = True
    text: str = ""
    group: str | None = None
    limit: int = PAGE_ROWS


@dataclass(frozen=True)
class BrowsedJob:
    """One row of a page; `source` says which table holds it (queue or dead-letter)."""

    sort_key: Any
    id: str
    status: str
    attempts: int | None
    worker: str | None
    age_s: float | None
    last_error: str | None
    group: str | None
    lease_token: str | None
    lease_until: datetime | None
    expired: bool | None
    requeue_refusal: str | None
    dead_letter_refusal: str | None
    dead_reason: str | None
    source: str = QUEUE

    @property
    def key(self) -> str:
        return f"{self.source}:{self.id}"

    @property
    def in_dead_table(self) -> bool:
        return self.source == DEAD_TABLE

    def observed(self) -> ObservedJob:
        """The job as the operator sees it on the page: what a guarded action needs."""
        return ObservedJob(
            id=self.id,
            status=self.status,
            worker=self.worker,
            lease_token=self.lease_token,
            lease_until=self.lease_until,
            expired=self.expired,
            requeue_refusal=self.requeue_refusal,
            dead_letter_refusal=self.dead_letter_refusal,
        )


@dataclass(frozen=True)
class PageStart:
    """Where a page starts: just past this row (its id, and the source it came from)."""

    sort_key: Any
    source: str


@dataclass(frozen=True)
class Page:
    query: BrowseQuery
    rows: tuple[BrowsedJob, ...] = ()
    start: PageStart | None = None  # None: the first page
    has_more: bool = False
    sources: tuple[str, ...] = (QUEUE,)
    statements: int = 0  # statements this page ran (one per source)

    @property
    def next_start(self) -> PageStart | None:
        if not self.has_more or not self.rows:
            return None
        last = self.rows[-1]
        return PageStart(last.sort_key, last.source)


def browse_roles(spec: QueueSpec) -> tuple[str, ...]:
    """The roles this queue has rows for: scheduled where jobs can be due later, dead where
    the spec has a dead value or table."""

    def has(role: str) -> bool:
        if role == "scheduled":
            return "scheduled" in spec.roles
        if role == "dead":
            return bool(spec.values("dead")) or dead_table(spec) is not None
        return bool(spec.values(role))

    return tuple(r for r in BROWSE_ROLES if has(r))


def first_role_with_jobs(roles: Sequence[str], counts: Mapping[str, int]) -> str | None:
    """The first of `roles` that `counts` (a snapshot's rows per role) says has jobs: where
    a browser opens, rather than on an empty `failed`. None: no role has any, or no count
    is known yet. Never done: it is there to look back, not where work waits."""
    return next((r for r in roles if r != "done" and counts.get(r, 0) > 0), None)


def like_pattern(text: str) -> str:
    """'50%_off' -> '%50\\%\\_off%': the text anywhere, its wildcards taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass
class PageReader:
    """Reads pages of one queue; remembers the dead-letter table's columns once read."""

    spec: QueueSpec
    parts: dict[str, sql.Composable] = field(init=False)
    _dead_parts: dict[str, sql.Composable] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.parts = {**queue_parts(self.spec), "dead_reason": sql.SQL("NULL::text")}

    def sources(self, role: str) -> tuple[str, ...]:
        if role != "dead" or dead_table(self.spec) is None:
            return (QUEUE,)
        return (QUEUE, DEAD_TABLE) if self.spec.values("dead") else (DEAD_TABLE,)

    def dead_parts(self, conn: psycopg.Connection) -> dict[str, sql.Composable]:
        """The parts over the dead-letter table, with its dead_reason where it has one."""
        if self._dead_parts is None:
            table = dead_table(self.spec)
            assert table is not None
            names = {
                r[0]
                for r in conn.execute(
                    queries.load("browser/get_table_columns"),
                    {"schema": table.schema or "public", "table": table.name},
                ).fetchall()
            }
            reason = (
                sql.SQL("t.{}").format(sql.Identifier("dead_reason"))
                if "dead_reason" in names
                else sql.SQL("NULL::text")
            )
            self._dead_parts = {**dead_parts(self.spec), "dead_reason": reason}
        return self._dead_parts

    def source_parts(self, conn: psycopg.Connection, source: str) -> dict[str, sql.Composable]:
        return self.dead_parts(conn) if source == DEAD_TABLE else self.parts

    def rows_of(
        self, role: str, source: str, parts: dict[str, sql.Composable]
    ) -> tuple[sql.Composable, dict]:
        """The role's rows: its values' states (ready rows due later are scheduled); every
        row of the dead-letter table."""
        if source == DEAD_TABLE:
            return sql.SQL("true"), {}
        spec = self.spec
        if role in ("ready", "scheduled"):
            ready, params = state_in(spec, ("ready",), parts, prefix="r")
            due_later = sql.SQL("coalesce({} > now(), false)").format(parts["scheduled_at"])
            if role == "ready":
                return sql.SQL("{} AND NOT {}").format(ready, due_later), params
            scheduled, more = state_in(spec, ("scheduled",), parts, prefix="s")
            return (
                sql.SQL("({} OR ({} AND {}))").format(scheduled, ready, due_later),
                {**params, **more},
            )
        return state_in(spec, (role,), parts)

    def statement(
        self, conn: psycopg.Connection, query: BrowseQuery, source: str, start: PageStart | None
    ) -> tuple[sql.Composed, dict[str, Any]]:
        """The page statement of one source, with its parameters (limit + 1: one more row
        says whether a next page exists)."""
        parts = self.source_parts(conn, source)
        rows, params = self.rows_of(query.role, source, parts)
        params.update(limit=query.limit + 1, error_chars=ERROR_CHARS)
        after = in_group = matches = sql.SQL("true")
        if start is not None:
            # rows of the same id in the other source sort queue first: past (id, source)
            ties = source != start.source and start.source == QUEUE
            op = ("<" if query.newest_first else ">") + ("=" if ties else "")
            after = sql.SQL("{} {} %(after)s::text::{}").format(
                parts["job_id"], sql.SQL(op), parts["id_type"]
            )
            params["after"] = str(start.sort_key)
        if query.group is not None:
            in_group = sql.SQL("{}::text = %(group)s").format(parts["group"])
            params["group"] = query.group
        if query.text:
            fields = [
                sql.SQL("{}::text ILIKE %(pattern)s").format(parts[name])
                for name in ("last_error", "worker", "payload", "group", "dead_reason")
            ]
            matches = sql.SQL("({}::text = %(text)s OR {})").format(
                parts["job_id"], sql.SQL(" OR ").join(fields)
            )
            params.update(text=query.text, pattern=like_pattern(query.text))
        stmt = statement(
            self.spec,
            "browser/get_jobs_page",
            **{
                **parts,
                "rows": rows,
                "after": after,
                "in_group": in_group,
                "matches": matches,
                "direction": sql.SQL("DESC" if query.newest_first else "ASC"),
            },
        )
        return stmt, params

    def read(
        self, conn: psycopg.Connection, query: BrowseQuery, start: PageStart | None = None
    ) -> Page:
        """One page: each source read once (limit + 1 rows), merged by id."""
        sources = self.sources(query.role)
        found: list[BrowsedJob] = []
        for source in sources:
            stmt, params = self.statement(conn, query, source, start)
            with conn.cursor(row_factory=class_row(BrowsedJob)) as cur:
                found += [replace(r, source=source) for r in cur.execute(stmt, params).fetchall()]
        rank = {QUEUE: 0, DEAD_TABLE: 1}
        found.sort(key=lambda r: rank[r.source])
        found.sort(key=lambda r: r.sort_key, reverse=query.newest_first)
        return Page(
            query,
            tuple(found[: query.limit]),
            start,
            len(found) > query.limit,
            sources,
            statements=len(sources),
        )
