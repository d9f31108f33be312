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

import contextlib
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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

    def _prepare(self) -> None:
        if not self.prepared:
            self._check(self.conn.pgconn.prepare(self.name, self.query))
            self.prepared = True

    def _params(self, values: Sequence[Any]) -> list[bytes | None]:
        encode = self._encode
        return [encode(values[i]) for i in self._args]

    def run(self, *values: Any) -> list[tuple[Any, ...]]:
        """Execute with the varying values; the rows, loaded as psycopg would load them."""
        self._prepare()
        return self._rows(
            self._check(self.conn.pgconn.exec_prepared(self.name, self._params(values)))
        )

    def _rows(self, res: pq.abc.PGresult) -> list[tuple[Any, ...]]:
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


Outcome = list[tuple[Any, ...]] | psycopg.Error  # a statement's rows, or what it raised


@dataclass(frozen=True)
class Pair:
    """What run_pair's two statements did: each one's rows or error, whether their
    transaction committed, and the round trip in ms."""

    first: Outcome
    then: Outcome
    committed: bool
    ms: float


def run_pair(
    first: Statement, first_values: Sequence[Any], then: Statement, then_values: Sequence[Any]
) -> Pair:
    """Two statements of one session in one round trip (libpq pipeline mode, one sync): one
    implicit transaction, so both commit or neither does (an error in either rolls back
    both; `then` does not run after an error in `first`). One message out, one answer
    back, as for a single statement. A lost connection raises OperationalError.

    This is what takes a worker from two round trips per job to one: the completion of
    a job travels with the claim of the next."""
    first._prepare()
    then._prepare()
    pgconn = first.conn.pgconn
    started = time.perf_counter()
    pgconn.enter_pipeline_mode()
    try:
        pgconn.send_query_prepared(first.name, first._params(first_values))
        pgconn.send_query_prepared(then.name, then._params(then_values))
        pgconn.pipeline_sync()  # sends the three messages at once
        done, claimed = _result(first, pgconn), _result(then, pgconn)
        sync = pgconn.get_result()  # the sync point; an error here: the commit failed
        if sync is None:
            raise _lost(pgconn)
        if sync.status != pq.ExecStatus.PIPELINE_SYNC:
            commit_failed = _outcome(first, sync, pgconn)
            while pgconn.get_result() is not None:
                pass
            pgconn.get_result()  # and then the sync
            return Pair(commit_failed, claimed, False, (time.perf_counter() - started) * 1000)
    finally:
        if pgconn.status == pq.ConnStatus.OK and pgconn.pipeline_status:
            with contextlib.suppress(psycopg.Error):  # results left unread: the caller
                pgconn.exit_pipeline_mode()  # gets the error that stopped the reading
    ok = not isinstance(done, psycopg.Error) and not isinstance(claimed, psycopg.Error)
    return Pair(done, claimed, ok, (time.perf_counter() - started) * 1000)


def _lost(pgconn: Any) -> psycopg.OperationalError:
    return psycopg.OperationalError(
        pq.error_message(pgconn) or "the connection to the server was lost"
    )


def _result(stmt: Statement, pgconn: Any) -> Outcome:
    """One statement's outcome in the pipeline, and the NULL that ends its results."""
    res = pgconn.get_result()
    if res is None:
        raise _lost(pgconn)
    while pgconn.get_result() is not None:
        pass
    if res.status == pq.ExecStatus.PIPELINE_ABORTED:
        return errors.PipelineAborted("not run: an earlier statement of the pair failed")
    return _outcome(stmt, res, pgconn)


def _outcome(stmt: Statement, res: Any, pgconn: Any) -> Outcome:
    try:
        return stmt._rows(stmt._check(res))
    except psycopg.Error:
        if pgconn.status == pq.ConnStatus.BAD:
            raise  # the connection is lost: no outcome to act on
        return errors.error_from_result(res, encoding=stmt.conn.info.encoding)
