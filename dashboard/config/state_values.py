"""--ready-value and --dead-value: the state values an action writes, named by the user.

With `--table` alone the states are guesses (several common values per role), and a
requeue that wrote `pending` into a table whose workers claim `queued` would strand the
job. These flags name the value each action writes; the value joins its role (taken
from another role where that was only a guess too).
"""

from __future__ import annotations

from dataclasses import replace

from dashboard.errors import UserError
from dashboard.models import ROLES, DeadLetter, QueueSpec

FLAGS = {"ready": "--ready-value", "dead": "--dead-value"}


def _into_role(spec: QueueSpec, role: str, value: str) -> QueueSpec:
    """`value` first among `role`'s values; out of any other role it was guessed into."""
    states = dict(spec.states)
    for other in ROLES:
        if other != role and value in states.get(other, ()):
            if not spec.guessed_states:
                raise UserError(
                    f"{FLAGS[role]} {value!r}: the queue spec {spec.source} has it as a "
                    f"{other} value; name a {role} value, or fix [queue.states]"
                )
            states[other] = tuple(v for v in states[other] if v != value)
    states[role] = (value, *(v for v in states.get(role, ()) if v != value))
    return replace(spec, states=states)


def with_ready_value(spec: QueueSpec, value: str) -> QueueSpec:
    """Requeue and retry-dead write `value` (a ready value from now on)."""
    spec = _into_role(spec, "ready", value)
    return replace(spec, policy=replace(spec.policy, ready_value=value))


def with_dead_value(spec: QueueSpec, value: str) -> QueueSpec:
    """Dead-letter sets the state to `value` (a dead value from now on)."""
    dead = spec.policy.dead_letter
    if dead is not None and dead.kind == "table":
        raise UserError(
            f"--dead-value {value!r}: the queue spec {spec.source} moves dead jobs to the "
            f"table {dead.table}; drop --dead-value, or set dead_letter = 'status:VALUE'"
        )
    spec = _into_role(spec, "dead", value)
    return replace(spec, policy=replace(spec.policy, dead_letter=DeadLetter("status", value)))
