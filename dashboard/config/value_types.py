"""State values and condition values checked against their column's type, before any read.

A value the column cannot hold (`--running-values abc` on a smallint, a label an enum does
not have) would otherwise fail in the first count as a cast error, read as "the schema
changed under queuetop". It is one line here instead, naming the value, the column, its
type and what PostgreSQL said. A value only guessed (`--table` alone: the common words of
each role) that the column cannot hold is dropped: it can match no row.

Each value is cast by the server itself (`SELECT 'value'::type`, in a savepoint), so every
type is judged as PostgreSQL judges it: integers, booleans, enums, domains.
"""

from __future__ import annotations

from dataclasses import replace

import psycopg
from psycopg import errors, sql

from dashboard.errors import UserError
from dashboard.models import QueueSpec

TEXT_TYPES = ("text", "character varying", "character", "name", "citext")


def _problem(conn: psycopg.Connection, value: str, kind: str) -> str | None:
    """What the server says casting `value` to `kind`, or None when it takes it."""
    if kind.startswith(TEXT_TYPES):
        return None
    try:
        with conn.transaction():
            # no parameters: a `%` in a type's name is then no placeholder
            conn.execute(sql.SQL("SELECT {}::{}").format(sql.Literal(value), sql.SQL(kind)))
    except (errors.DataError, errors.InvalidTextRepresentation) as exc:
        return (exc.diag.message_primary or str(exc)).strip()
    return None


def _refuse(spec: QueueSpec, what: str, value: str, column: str, kind: str, why: str) -> None:
    raise UserError(
        f"{what} {value!r} cannot be a value of {column} ({kind}) in {spec.table}: {why}; "
        f"give values of that type, as PostgreSQL prints them"
    )


def check_values(conn: psycopg.Connection, spec: QueueSpec, types: dict[str, str]) -> QueueSpec:
    """`spec` with guessed values its state column cannot hold dropped; a UserError for a
    given one (a flag, the TOML, a rule) the column cannot hold."""
    status = spec.columns.status
    if isinstance(status, str) and status in types:
        kind = types[status]
        states = dict(spec.states)
        for role, values in spec.states.items():
            given = f"states.{role}" in spec.given or not spec.guessed_states
            kept = []
            for value in values:
                why = _problem(conn, value, kind)
                if why is None:
                    kept.append(value)
                elif given:
                    _refuse(spec, f"{role} value", value, status, kind, why)
            states[role] = tuple(kept)
        spec = replace(spec, states=states)
    for rule in spec.rules:
        for cond in rule.conditions:
            kind = types.get(cond.column)
            if kind is None or cond.test not in ("equals", "not"):
                continue
            for value in cond.values:
                why = _problem(conn, value, kind)
                if why is not None:
                    _refuse(spec, f"{rule.role} condition value", value, cond.column, kind, why)
    return spec
