"""`--table` alone: the table understood against the catalog, what the flags named kept."""

from __future__ import annotations

import psycopg

from dashboard import understand
from dashboard.config.pins import pinned
from dashboard.errors import UserError
from dashboard.models import OPTIONAL_COLUMNS, ROLES, QueueSpec


def given(spec: QueueSpec) -> understand.Given:
    """What the user's flags named (spec.given), which no inference overrides."""
    status = spec.columns.status
    return understand.Given(
        key=spec.columns.key if "id" in spec.given else (),
        state=status if "status" in spec.given and isinstance(status, str) else None,
        states={r: spec.values(r) for r in ROLES if f"states.{r}" in spec.given},
        rules=tuple(r for r in spec.rules if f"rules.{r.role}" in spec.given),
        columns={k: c for k in OPTIONAL_COLUMNS if k in spec.given and (c := spec.columns.real(k))},
    )


def understood(conn: psycopg.Connection, spec: QueueSpec, oid: int) -> QueueSpec:
    """The spec `--table` describes: the understanding's, with the flags' pieces in it."""
    pins = given(spec)
    u = understand.table(conn, oid, pins)
    if u.locked and not (pins.state and pins.states or pins.rules):
        raise UserError(
            f"{spec.table} is locked by another session, so its rows cannot be read to "
            "understand it; retry once the lock is gone, or name its states: "
            "--status-column and --ready-values/--running-values (--ready-value for requeue)"
        )
    return pinned(understand.to_spec(u, spec, pins))
