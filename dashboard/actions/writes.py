"""The state value an action writes: named by the spec, or seen in the table, never guessed.

With `--table` alone the spec's states are guesses (config GENERIC_STATES: several
common values per role). A requeue that wrote the first guess, `pending`, into a table
whose workers claim `queued` would strand the job (and the dashboard, counting `pending`
as ready, would hide it). So where a role's values are guesses, an action writes a value
only if the table already holds it in that role, and exactly one of them; otherwise it
refuses in one line naming the flag that says which (`--ready-value`, `--dead-value`).

Where it runs, and why there: on the action's own connection, in the action's
transaction, under its statement and lock timeouts (db.connect_action), as one
`EXISTS` per candidate value (at most five), which an index on the state serves; a
spec that names its values (a preset, a TOML file, a flag) reads nothing. The CLI asks
once before its first batch (so a refusal comes before anything changes, and a dry run
names the value); the dashboard asks with its permission check, so that the
confirmation names the value it will write. The value a queue's workers claim does not
change while queuetop runs, so reading it once per command is enough; what can change
(the jobs themselves) stays guarded row by row in SQL.
"""

from __future__ import annotations

from dataclasses import replace

import psycopg
from psycopg import errors

import queries
from dashboard.errors import UserError
from dashboard.models import DeadLetter, QueueSpec
from dashboard.queue_sql.parts import queue_parts

# action -> the role whose value it writes
WRITES = {"requeue": "ready", "retry-dead": "ready", "dead-letter": "dead"}
FLAGS = {"ready": "--ready-value", "dead": "--dead-value"}
SPEC_KEYS = {"ready": "policy.ready_value", "dead": "policy.dead_letter = 'status:VALUE'"}


def needs_reading(spec: QueueSpec, action: str) -> bool:
    """Whether `action`'s value is a guess the table must confirm."""
    role = WRITES.get(action)
    if role is None or not spec.guessed_states or spec.written_value(role) is not None:
        return False
    dead = spec.policy.dead_letter
    return not (role == "dead" and dead is not None and dead.kind == "table")


def held_values(conn: psycopg.Connection, spec: QueueSpec, role: str) -> list[str]:
    """The values of `role` that some row of the queue table holds, in the spec's order."""
    statement = queries.get("actions/find_state_value", **queue_parts(spec))
    return [
        value
        for value in spec.values(role)
        if conn.execute(statement, {"value": value}).fetchone()[0]
    ]


def resolve(conn: psycopg.Connection, spec: QueueSpec, action: str) -> QueueSpec:
    """`spec` with the value `action` writes named (unchanged when it already is); a
    UserError naming the flag to set when the table does not say which value it is."""
    if not needs_reading(spec, action):
        return spec
    role = WRITES[action]
    try:
        held = held_values(conn, spec, role)
    except (errors.QueryCanceled, errors.LockNotAvailable) as exc:
        conn.rollback()  # nothing was changed: the action has not begun
        why = (
            "is locked by another session"
            if isinstance(exc, errors.LockNotAvailable)
            else "could not be read within the statement timeout (no index serves its state)"
        )
        raise UserError(
            f"{action}: with --table alone the {role} state is a guess, and {spec.table} "
            f"{why}, so {action} cannot tell which value it holds; pass {FLAGS[role]} VALUE"
        ) from None
    if len(held) != 1:
        raise UserError(refusal(spec, action, held))
    if role == "ready":
        return replace(spec, policy=replace(spec.policy, ready_value=held[0]))
    return replace(spec, policy=replace(spec.policy, dead_letter=DeadLetter("status", held[0])))


def refusal(spec: QueueSpec, action: str, held: list[str]) -> str:
    """One line: why `action` will not guess, and the flag (or spec key) that says."""
    role = WRITES[action]
    guesses = ", ".join(spec.values(role))
    if held:
        seen = f"{spec.table} holds several of them ({', '.join(sorted(held))})"
    else:
        seen = f"{spec.table} holds none of them"
    what = "the value your workers claim" if role == "ready" else "the value of a dead job"
    return (
        f"{action}: with --table alone the {role} state is a guess ({guesses}) and {seen}, "
        f"so {action} will not write one; pass {FLAGS[role]} VALUE ({what}) or set "
        f"{SPEC_KEYS[role]} in a queue TOML"
    )


def resolve_all(conn: psycopg.Connection, spec: QueueSpec) -> tuple[QueueSpec, dict[str, str]]:
    """Every action's value resolved as far as the table says; action -> refusal for the
    others (for a UI, which names the values in its confirmations)."""
    refused: dict[str, str] = {}
    for action in WRITES:
        try:
            spec = resolve(conn, spec, action)
        except UserError as exc:
            refused[action] = str(exc)
    return spec, refused
