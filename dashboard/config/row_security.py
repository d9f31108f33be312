"""Row-level security that hides a whole queue table from the connecting role.

graphile-worker turns row-level security on for its jobs table without a policy: any role
but its owner (or a superuser or BYPASSRLS role) reads it as empty, which would show an idle
queue. Refuse that with a line naming who can read it.
"""

from __future__ import annotations

import psycopg

import queries
from dashboard.errors import UserError
from dashboard.models import TableName


def check_rows_visible(conn: psycopg.Connection, table: TableName, oid: int) -> None:
    row = conn.execute(queries.load("config/check_row_security"), {"oid": oid}).fetchone()
    if row and row[0]:
        raise UserError(
            f"role {conn.info.user} can read no rows of {table}: row-level security "
            f"is on and no policy grants any; connect as its owner ({row[1]}, "
            "who ran the migrations), a superuser or a BYPASSRLS role"
        )
