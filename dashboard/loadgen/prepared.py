"""The worker's hot path: its statements prepared once per session and run straight on libpq.

A psycopg cursor costs a worker ~90 us of CPU per statement (placeholder
conversion, dumping a params dict, the non-blocking wait loop, the result
machinery); with no simulated work that was most of the client's time and
capped the generator well below pgbench. A `Statement` uses psycopg for
what needs thought (dumping and typing the fixed values, loading result
values, turning an error result into the right psycopg exception) once,
and each execution is then one `PQexecPrepared` round trip with
pre-encoded parameters, which is what `pgbench -M prepared` does.

The text is the rendered `queries/loadgen/*.sql` with its `%(name)s`
placeholders numbered `$1..$n` in order of first appearance, as psycopg
numbers them. Values fixed for the session (state values, worker name,
lease length, max attempts) are dumped once and typed as psycopg types
them; values that change per execution (batch size, job id, lease token,
error text) are sent as text with the type the server infers from the
column or clause they meet, as pgbench sends its variables.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer

_PLACEHOLDER = re.compile(rb"%(?:\(([^)]+)\)s|%)")  # %(name)s, or %% for a literal %
_TEXT = pq.Format.TEXT
_UNKNOWN_OID = 0
_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


def number_placeholders(query: bytes) -> tuple[bytes, list[str]]:
    """`%(name)s` -> `$n` (one number per distinct name) and `%%` -> `%`; returns the names."""
    names: list[str] = []

    def number(m: re.Match[bytes]) -> bytes:
        if m.group(1) is None:
            return b"%"
        name = m.group(1).decode()
        if name not in names:
            names.append(name)
        return b"$%d" % (names.index(name) + 1)

    return _PLACEHOLDER.sub(number, query), names


class Statement:
    """One statement of a worker's session: prepared on first use, then one round trip each run.

    `fixed` holds the values that stay the same for the session; every other
    placeholder must be named in `varying`, whose values `run()` takes in that
    order (a name the statement does not use is accepted and ignored).
    """

    def __init__(self, conn: psycopg.Connection, name: str, query: bytes,
                 fixed: Mapping[str, Any], varying: Sequence[str] = ()):
        self.conn, self.name = conn, name.encode()
        self._tx = Transformer.from_context(conn)
        self.query, names = number_placeholders(query)
        unknown = set(names) - set(fixed) - set(varying)
        if unknown:
            raise ValueError(f"{name}: no value for {', '.join(sorted(unknown))}")
        self.params: list[bytes | None] = []
        self.types: list[int] = []
        for n in names:
            value, oid = (None, _UNKNOWN_OID) if n in varying else self._dump(fixed[n])
            self.params.append(value)
            self.types.append(oid)
        # (position in params, position in run()'s arguments) of each varying value used
        self._slots = [(names.index(n), i) for i, n in enumerate(varying) if n in names]
        self._loaders: list[Any] | None = None
        self.prepared = False

    def _dump(self, value: Any) -> tuple[bytes | None, int]:
        if value is None:
            return None, _UNKNOWN_OID
        dumper = self._tx.get_dumper(value, PyFormat.TEXT)
        return bytes(dumper.dump(value)), dumper.oid

    def _encode(self, value: Any) -> bytes | None:
        if value is None:
            return None
        if type(value) is int:
            return b"%d" % value
        return bytes(self._tx.get_dumper(value, PyFormat.TEXT).dump(value))

    def _check(self, res: pq.abc.PGresult) -> pq.abc.PGresult:
        if res.status in _OK:
            return res
        pgconn = self.conn.pgconn
        if pgconn.status == pq.ConnStatus.BAD:
            raise psycopg.OperationalError(
                pq.error_message(pgconn) or "the connection to the server was lost")
        raise errors.error_from_result(res, encoding=self.conn.info.encoding)

    def run(self, *values: Any) -> list[tuple[Any, ...]]:
        """Execute with the varying values; the rows, loaded as psycopg would load them."""
        pgconn = self.conn.pgconn
        if not self.prepared:
            self._check(pgconn.prepare(self.name, self.query, self.types))
            self.prepared = True
        params = self.params.copy()
        for slot, i in self._slots:
            params[slot] = self._encode(values[i])
        res = self._check(pgconn.exec_prepared(self.name, params))
        ntuples = res.ntuples
        if not ntuples:
            return []
        loaders = self._loaders
        if loaders is None:
            loaders = self._loaders = [self._tx.get_loader(res.ftype(c), _TEXT).load
                                       for c in range(res.nfields)]
        get = res.get_value
        return [tuple(None if (v := get(r, c)) is None else load(v)
                      for c, load in enumerate(loaders))
                for r in range(ntuples)]
