"""The worker's hot path: its statements prepared once per session and run straight on libpq.

A psycopg cursor costs a worker ~90 us of CPU per statement (placeholder
conversion, dumping a params dict, the non-blocking wait loop, the result
machinery); with no simulated work that was most of the client's time and
capped the generator well below pgbench. A `Statement` uses psycopg for
what needs thought (quoting, loading result values, turning an error
result into the right psycopg exception) once, and each execution is then
one `PQexecPrepared` round trip with pre-encoded parameters, which is what
`pgbench -M prepared` does.

The text is the rendered `queries/loadgen/*.sql`. Values fixed for the
session (state values, worker name, lease length, max attempts, batch
size) are bound client-side, as literals quoted by psycopg's adapters, the
way `ClientCursor` binds them: the server can then plan a claim once, with
the state value matched against a partial index such as `WHERE status =
'ready'`. Bound as server-side parameters it cannot: the generic plan of
`status = $1 ... LIMIT $2` is a sequential scan and a sort, so the server
re-plans every claim (measured: ~150 us more server CPU per job). Values
that change per execution (job id, lease token, error text) stay `$n`
parameters, sent as text with the type the server infers from the column
they meet.
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
_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


def bind_fixed(
    query: bytes, fixed: Mapping[str, Any], varying: Sequence[str], as_literal: Any
) -> tuple[bytes, list[str]]:
    """`%(name)s` -> a literal for a fixed name, `$n` for a varying one; `%%` -> `%`.

    Returns the query and the varying names in `$n` order."""
    names: list[str] = []

    def bind(m: re.Match[bytes]) -> bytes:
        if m.group(1) is None:
            return b"%"
        name = m.group(1).decode()
        if name in varying:
            if name not in names:
                names.append(name)
            return b"$%d" % (names.index(name) + 1)
        if name not in fixed:
            raise ValueError(f"no value for %({name})s")
        return as_literal(fixed[name])

    return _PLACEHOLDER.sub(bind, query), names


class Statement:
    """One statement of a worker's session: prepared on first use, then one round trip each run.

    `fixed` holds the values that stay the same for the session; every other
    placeholder must be named in `varying`, whose values `run()` takes in that
    order (a name the statement does not use is accepted and ignored).
    """

    def __init__(
        self,
        conn: psycopg.Connection,
        name: str,
        query: bytes,
        fixed: Mapping[str, Any],
        varying: Sequence[str] = (),
    ):
        self.conn, self.name = conn, name.encode()
        self._tx = Transformer.from_context(conn)
        self.query, names = bind_fixed(query, fixed, varying, self._tx.as_literal)
        # position in run()'s arguments of each $n
        self._args = [list(varying).index(n) for n in names]
        self._columns: list[tuple[int, Any]] | None = None  # (column, its loader)
        self.prepared = False

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
                pq.error_message(pgconn) or "the connection to the server was lost"
            )
        raise errors.error_from_result(res, encoding=self.conn.info.encoding)

    def run(self, *values: Any) -> list[tuple[Any, ...]]:
        """Execute with the varying values; the rows, loaded as psycopg would load them."""
        pgconn = self.conn.pgconn
        if not self.prepared:
            self._check(pgconn.prepare(self.name, self.query))
            self.prepared = True
        encode = self._encode
        res = self._check(pgconn.exec_prepared(self.name, [encode(values[i]) for i in self._args]))
        ntuples = res.ntuples
        if not ntuples:
            return []
        if self._columns is None:
            self._columns = [
                (c, self._tx.get_loader(res.ftype(c), _TEXT).load) for c in range(res.nfields)
            ]
        get = res.get_value
        columns = self._columns
        return [
            tuple([None if (v := get(r, c)) is None else load(v) for c, load in columns])
            for r in range(ntuples)
        ]
