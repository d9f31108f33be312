"""A job's whole row (to_jsonb of it), every column shown safely: cut, control characters
escaped, so a payload can neither flood the screen nor drive the terminal."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from dashboard.browse.pages import PageReader
from dashboard.queue_sql.parts import statement
from dashboard.text.untrusted import escape_controls

CUT = 2000  # characters of each column read and shown; the detail says how many more


@dataclass(frozen=True)
class RowField:
    name: str
    text: str | None  # the column as JSON gives it as text (None: SQL NULL), already cut
    length: int | None  # its full length in characters
    kind: str  # jsonb_typeof: string, number, object, array, boolean, null

    @property
    def cut_off(self) -> int:
        """Characters left out of `text`."""
        if self.text is None or self.length is None:
            return 0
        return max(self.length - len(self.text), 0)

    def shown(self) -> str:
        """The value as the detail shows it: escaped, and what was cut said."""
        if self.text is None:
            return "NULL"
        more = f" … ({self.cut_off:,} more characters)" if self.cut_off else ""
        return escape_controls(self.text) + more


@dataclass(frozen=True)
class JobRow:
    """A job's columns, in the table's order; `source` says which table holds it."""

    id: str
    source: str
    fields: tuple[RowField, ...]

    @property
    def found(self) -> bool:
        return bool(self.fields)


def read_row(
    conn: psycopg.Connection, reader: PageReader, job_id: str, source: str, cut: int = CUT
) -> JobRow:
    """The whole row, each column cut to `cut` characters on the server."""
    parts = reader.source_parts(conn, source)
    stmt = statement(reader.spec, "browser/get_job_row", **parts)
    rows = conn.execute(stmt, {"id": job_id, "cut": cut}).fetchall()
    order = {name: i for i, name in enumerate(reader.spec.column_types)}
    found = sorted(
        (RowField(name, text, length, kind) for name, text, length, kind in rows),
        key=lambda f: (order.get(f.name, len(order)), f.name),
    )
    return JobRow(job_id, source, tuple(found))
