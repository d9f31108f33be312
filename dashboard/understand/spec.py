"""An understanding as a queue spec, merged with what the user gave (which always wins)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dashboard.models import (
    OPTIONAL_COLUMNS,
    ROLES,
    Columns,
    DeadLetter,
    QueueSpec,
    RoleRule,
    Understood,
)
from dashboard.understand.catalog import check_values
from dashboard.understand.evidence import LOW, MEDIUM, ORDER
from dashboard.understand.infer import Understanding

PRECEDENCE = ("dead", "failed", "done", "running", "scheduled", "ready")
# Where no row holds a value of a role yet (a new table), the common words stand for it, on
# a text state column: they count nothing that is not there, an action writes one only if
# the table holds it, and the missing role stays a doubt (check: UNKNOWN).
GUESSES = {
    "ready": ("pending", "queued", "ready", "available", "new"),
    "scheduled": (),
    "running": ("running", "processing", "active", "in_progress"),
    "done": ("done", "completed", "succeeded", "finished"),
    "failed": ("failed", "error", "errored"),
    "dead": ("dead", "discarded", "cancelled"),
}


@dataclass(frozen=True)
class Given:
    """What the user named on the command line: it wins over any inference."""

    key: tuple[str, ...] = ()
    state: str | None = None
    states: dict[str, tuple[str, ...]] = field(default_factory=dict)  # --ROLE-values
    rules: tuple[RoleRule, ...] = ()  # --ROLE-when
    columns: dict[str, str] = field(default_factory=dict)  # --X-column


def merged_states(u: Understanding, given: Given) -> dict[str, tuple[str, ...]]:
    """The inferred values per role, each value a flag names moved to that role."""
    named = {v for vs in given.states.values() for v in vs}
    states = {r: tuple(v for v in u.states.get(r, ()) if v not in named) for r in ROLES}
    for role, values in given.states.items():
        states[role] = tuple(values)
    return states


def merged_rules(u: Understanding, given: Given) -> tuple[RoleRule, ...]:
    by_role = {r.role: r for r in u.rules}
    by_role.update({r.role: r for r in given.rules})
    return tuple(by_role[role] for role in PRECEDENCE if role in by_role)


def to_spec(u: Understanding, base: QueueSpec, given: Given) -> QueueSpec:
    """`base` (the flags' spec) with the understanding filling what the user did not give."""
    concepts = {c: col for c, col in u.columns.items() if c in OPTIONAL_COLUMNS}
    concepts.update(given.columns)
    key = given.key or u.key or base.columns.key
    use_rules = bool(given.rules) or (not u.state and not given.state and bool(u.rules))
    columns = Columns(
        id=key[0] if len(key) == 1 else tuple(key),
        status=None if use_rules else (given.state or u.state or base.columns.status),
        **concepts,
    )
    policy = replace(base.policy, worker_session="none")
    guessed = True  # a role's first value is never written for being first
    if use_rules:
        rules = merged_rules(u, given)
        states = {role: () for role in ROLES}
        for rule in rules:
            states[rule.role] = (rule.label,)
        guessed = False
    else:
        rules = ()
        states = merged_states(u, given)
        # the values actions write: only what the rows, the catalog or a flag say, never a
        # guess (the spec's values stay guesses otherwise: see actions/writes.py)
        ready, dead = states.get("ready", ()), states.get("dead", ())
        sure = "ready" in given.states or u.confidence != LOW
        if len(ready) == 1 and sure and base.policy.ready_value is None:
            policy = replace(policy, ready_value=ready[0])
        if len(dead) >= 1 and base.policy.dead_letter is None:
            policy = replace(policy, dead_letter=DeadLetter("status", dead[0]))
        state = given.state or u.state
        column = u.facts.columns.get(state) if state else None
        # a CHECK that lists the column's values closes the set: no other word can appear
        closed = bool(state and check_values(u.facts.checks).get(state))
        if column is not None and column.is_text and not closed:
            taken = {v for vs in states.values() for v in vs} | set(u.unmapped)
            for role, words in GUESSES.items():
                if not states.get(role) and role not in given.states:
                    states[role] = tuple(w for w in words if w not in taken)
    spec = replace(
        base,
        columns=columns,
        states=states,
        rules=rules,
        policy=policy,
        guessed_states=guessed,
    )
    return replace(spec, understood=understood(u, spec, given))


def understood(u: Understanding, spec: QueueSpec, given: Given) -> Understood:
    doubts = list(u.doubts)
    for role, values in given.states.items():  # a flag settles a doubt about its values
        doubts = [d for d in doubts if not any(f"= {v!r}" in d for v in values)]
        doubts = [d for d in doubts if f"--{role}-values VALUE" not in d]
    if given.rules:
        doubts = [d for d in doubts if "--ROLE-when" not in d]
    level = u.confidence
    if given.states or given.rules:
        level = MEDIUM if ORDER[level] > ORDER[MEDIUM] and not doubts else level
    return Understood(
        confidence=level,
        evidence=tuple(u.evidence + [f"not read: {n}" for n in u.notes]),
        doubts=tuple(doubts),
    )
