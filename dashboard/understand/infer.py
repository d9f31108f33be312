"""One understanding of a table: its key, its state (a column's values, or conditions),
which column holds which part of a job, how sure each is, and why.

    u = infer(facts, seen, sample)      # facts: catalog + statistics; seen: statements
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dashboard.models import ROLES, RoleRule
from dashboard.understand.columns import assign, column_tally, state_tally
from dashboard.understand.evidence import (
    HIGH,
    LOW,
    MEDIUM,
    STATEMENTS,
    WORDS,
    confidence,
    weakest,
)
from dashboard.understand.facts import Sample, TableFacts
from dashboard.understand.roles import rules_for, value_tallies, values_of
from dashboard.understand.statements import Seen

STATE_MIN = 3.0  # evidence a column needs to be taken for the state
QUEUE_WORDS = ("job", "task", "queue", "fila", "cola", "tarefa", "trabajo", "message", "outbox")
QUEUE_WORDS += ("work", "webhook", "delivery", "deliveries", "inbox", "msg", "q_")


@dataclass
class Understanding:
    facts: TableFacts
    key: tuple[str, ...] = ()
    key_why: str = ""
    state: str | None = None
    states: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role -> values
    rules: tuple[RoleRule, ...] = ()
    columns: dict[str, str] = field(default_factory=dict)  # concept -> column
    confidence: str = LOW  # of the mapping
    queue: str | None = None  # how sure it is a queue at all: high, medium, low, None
    evidence: list[str] = field(default_factory=list)  # one line per inference
    doubts: list[str] = field(default_factory=list)  # what is only guessed
    unmapped: list[str] = field(default_factory=list)  # values held that no role claims
    deletes_done: bool = False  # finished jobs are deleted (no done role)
    locked: bool = False  # its rows could not be read: another session locks the table
    notes: list[str] = field(default_factory=list)  # sources not read, and why

    @property
    def table(self):
        return self.facts.table


def _key(facts: TableFacts) -> tuple[tuple[str, ...], str, str]:
    if facts.primary_key:
        return facts.primary_key, "the primary key", HIGH
    if facts.unique_keys:
        key = min(facts.unique_keys, key=len)
        return key, "a unique index over NOT NULL columns", MEDIUM
    for name in ("id", f"{facts.table.name}_id", "job_id", "task_id", "uuid"):
        if name in facts.columns:
            return (name,), f"the column named {name} (no primary key)", LOW
    return (), "", LOW


def _evidence_line(what: str, conf: str, why: list) -> str:
    reasons = "; ".join(e.text for e in why[:4])
    return f"{what} [{conf}]: {reasons}" if reasons else f"{what} [{conf}]"


def infer(
    facts: TableFacts,
    seen: Seen,
    sample: Sample,
    state: str | None,
    state_why: list[str],
    key: tuple[str, ...] | None = None,
    given_columns: dict[str, str] | None = None,
) -> Understanding:
    """The understanding of `facts`: the state column chosen by `choose_state` (or given,
    or None for roles by conditions), the key where one is given."""
    u = Understanding(facts)
    if key:
        u.key, u.key_why, key_conf = key, "given", HIGH
    else:
        u.key, u.key_why, key_conf = _key(facts)
    if u.key:
        u.evidence.append(f"key {', '.join(u.key)} [{key_conf}]: {u.key_why}")
    else:
        u.doubts.append(
            f"{facts.table} has no primary key nor a column named id: pass --id-column "
            "(actions and the job list need a key)"
        )
    tallies = column_tally(facts, seen, state, u.key)
    assigned = assign(tallies)
    for concept, column in (given_columns or {}).items():  # a flag's column wins
        assigned.columns = {c: col for c, col in assigned.columns.items() if col != column}
        assigned.columns[concept] = column
        assigned.why[concept] = []
    u.columns = assigned.columns
    for concept, col in assigned.columns.items():
        why = assigned.why[concept]
        if not why:
            u.evidence.append(f"{concept} = {col} [given]")
            continue
        score = sum(e.weight for e in why)
        level = (
            HIGH if any(e.source == STATEMENTS for e in why) else (MEDIUM if score >= 3 else LOW)
        )
        u.evidence.append(_evidence_line(f"{concept} = {col}", level, why))
    u.deletes_done = seen.deletes_by_key
    if seen.deletes_by_key:
        u.evidence.append("finished jobs are deleted [high]: a statement deletes rows by key")
    if state:
        mapped = _map_values(u, facts, seen, sample, state, state_why)
    else:
        mapped = _map_rules(u, facts)
    u.confidence = weakest(key_conf if u.key else LOW, mapped)
    u.queue = _queue_level(u, seen)
    if sample.error:
        u.notes.append(sample.error)
    u.locked = sample.locked
    u.notes += [f"{facts.table}: {n}" for n in facts.notes]
    return u


def _map_values(
    u: Understanding, facts, seen: Seen, sample: Sample, state: str, why: list[str]
) -> str:
    u.state = state
    col = facts.columns[state]
    values = values_of(facts, state, sample)
    tallies = value_tallies(facts, state, values, seen, sample, u.columns)
    states: dict[str, list[str]] = {role: [] for role in ROLES}
    levels: dict[str, str] = {}
    held = sample.values()
    for v in values:
        role, score, second = tallies[v].best()
        level = confidence(score, score - second) if role else None
        if role is None or level is None:
            if v in held or not sample.complete:
                u.unmapped.append(v)
            continue
        worded = any(e.source == WORDS for e in tallies[v].why(role))
        if level == LOW and role in ("ready", "running") and not worded:
            # a weak guess of an active role would put jobs in the backlog or among the
            # leases that are not there: said, and left out of every count
            u.unmapped.append(v)
            u.evidence.append(
                f"{state} = {v} is left unmapped: it might be {role} "
                f"({'; '.join(e.text for e in tallies[v].why(role)[:2])}), too weakly to count"
            )
            continue
        states[role].append(v)
        levels[v] = level
        u.evidence.append(_evidence_line(f"{role} = {v}", level, tallies[v].why(role)))
        if level == LOW:
            u.doubts.append(
                f"{state} = {v!r} is taken for {role} on weak evidence "
                f"({'; '.join(e.text for e in tallies[v].why(role)[:2])}): pin it with "
                f"--{role}-values {v} or map it otherwise"
            )
    u.states = {role: tuple(vs) for role, vs in states.items()}
    level = HIGH if any("claim statement" in w for w in why) else MEDIUM if why else LOW
    line = f"state column {state} ({col.type}) [{level}]" + (
        f": {'; '.join(why[:4])}" if why else ""
    )
    u.evidence.insert(1 if u.key else 0, line)
    for role in ("ready", "running"):
        if not states[role]:
            u.doubts.append(
                f"no value of {state} could be taken for {role}: pass --{role}-values VALUE"
            )
    core = [levels[v] for role in ("ready", "running") for v in states[role]]
    if not states["ready"] or not states["running"]:
        return LOW
    return weakest(*core)


def _map_rules(u: Understanding, facts: TableFacts) -> str:
    u.rules = rules_for(facts, u.columns)
    if not u.rules:
        u.doubts.append(
            f"{facts.table} has no state column and no claim column queuetop could find: "
            "describe its roles with --ROLE-when (e.g. --running-when 'locked_at set')"
        )
        return LOW
    for rule in u.rules:
        u.evidence.append(f"{rule.role} = rows with {rule.label} [medium]: from the columns above")
    claim_known = [u.columns[c] for c in ("started_at", "worker", "lease_until") if c in u.columns]
    return MEDIUM if claim_known else LOW


def _queue_level(u: Understanding, seen: Seen) -> str | None:
    """Whether the table is a queue at all (discovery lists it at this level)."""
    has_roles = bool(u.rules) or (bool(u.states.get("ready")) and bool(u.states.get("running")))
    claim_cols = [c for c in ("started_at", "worker", "lease_until", "heartbeat") if c in u.columns]
    points = 0
    points += 2 if has_roles else 0
    points += 2 if claim_cols else 0
    points += 3 if seen.claims else 0
    points += 1 if "attempts" in u.columns else 0
    name = u.facts.table.name.lower()
    points += 1 if any(w in name for w in QUEUE_WORDS) else 0
    if (
        u.state
        and any(e.startswith(f"state column {u.state}") for e in u.evidence)
        and (u.facts.columns[u.state].is_enum or u.facts.checks)
    ):
        points += 1
    if not has_roles:
        return LOW if points >= 2 or (u.state and len(u.states.get("ready", ())) > 0) else None
    if not claim_cols and not seen.claims:
        return LOW
    # how queue-like the table is, apart from how sure each value's role is (its doubts
    # are said, and `check` answers UNKNOWN over them)
    if points >= 6 and u.confidence == HIGH:
        return HIGH
    return MEDIUM if points >= 4 else LOW


def choose_state(facts: TableFacts, seen: Seen) -> tuple[str | None, list[str]]:
    """The column most likely to hold the state (or None), and why."""
    key = facts.primary_key or ()
    tally = state_tally(facts, seen, key)
    best, score, _ = tally.best()
    if best is None or score < STATE_MIN:
        return None, []
    return best, [e.text for e in tally.why(best)]
