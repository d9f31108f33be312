"""The monitor's statements as the server receives them, composed once per connection.

A statement built from the spec (queries.get: the template, the quoted names, `%` escaped)
and then turned into bytes by psycopg (as_bytes, for the connection's encoding) is the same
on every poll of one connection, and composing it was a third of the poll's own CPU on the
demo under load: the sessions, counts and stale-lease statements are kept here as bytes,
keyed by what they depend on. Cleared when the connection changes (quoting is the
connection's) and, as a bound, when it holds more than MOST statements (a count plan made
again makes a new key each time)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import psycopg
from psycopg import sql

MOST = 32


class StatementBytes:
    """Composed statements, as bytes, for one connection at a time."""

    def __init__(self) -> None:
        self._conn: object = None
        self._bytes: dict[Hashable, bytes] = {}

    def get(
        self, conn: psycopg.Connection, key: Hashable, build: Callable[[], sql.Composable]
    ) -> bytes:
        """The bytes of the statement `build` makes, made once per `key` and connection
        (the key says all the statement depends on beside the monitor's spec)."""
        if self._conn is not conn.pgconn or len(self._bytes) >= MOST:
            self._conn, self._bytes = conn.pgconn, {}
        data = self._bytes.get(key)
        if data is None:
            data = self._bytes[key] = build().as_bytes(conn)
        return data
