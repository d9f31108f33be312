"""Which role each state value stands for, or, without a state column, which conditions.

Evidence per value, strongest first: the workers' claim (`WHERE status = 'pendente'` names
the ready value, `SET status = 'processando'` the running one), the column's default (what
a new job is), the rows (a value whose rows carry a claim time and no finish time is
running), the declared order of an enum or a CHECK, and words.
"""

from __future__ import annotations

from dashboard.models import Condition, RoleRule
from dashboard.understand import words
from dashboard.understand.catalog import check_values, default_value, predicate_values
from dashboard.understand.columns import BOOLEAN_TRUE, known_values
from dashboard.understand.evidence import CATALOG, SAMPLE, STATEMENTS, WORDS, Tally
from dashboard.understand.facts import Sample, TableFacts
from dashboard.understand.statements import LITERAL, NOW, Seen

SET = ("set", "past", "future", "positive", "true")
MOSTLY = 0.8
RARELY = 0.2


def values_of(facts: TableFacts, state: str, sample: Sample) -> list[str]:
    """The state values known: the catalog's (in its order), the statistics', the sample's."""
    col = facts.columns[state]
    values = known_values(col, check_values(facts.checks).get(state, []))
    for v in sorted(sample.values(), key=lambda v: -sample.values()[v]):
        if v not in values:
            values.append(v)
    return values


def _markers(columns: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    claim = [columns[c] for c in ("started_at", "worker", "heartbeat") if c in columns]
    finish = [columns[c] for c in ("finished_at",) if c in columns]
    error = [columns[c] for c in ("failed_at", "last_error") if c in columns]
    return claim, finish, error


def value_tallies(
    facts: TableFacts, state: str, values: list[str], seen: Seen, sample: Sample, columns
) -> dict[str, Tally]:
    """value -> Tally of roles."""
    col = facts.columns[state]
    tallies = {v: Tally() for v in values}

    def vote(value: str, role: str, weight: float, source: str, text: str) -> None:
        if value in tallies:
            tallies[value].add(role, weight, source, text)

    for claim in seen.claims:
        for atom in claim.where:
            if atom.column == state and atom.kind == LITERAL and atom.op in ("=", "in"):
                for v in atom.values:
                    vote(v, "ready", 5, STATEMENTS, f"the claim takes rows whose {state} = {v}")
        for atom in claim.sets:
            if atom.column == state and atom.kind == LITERAL:
                for v in atom.values:
                    vote(v, "running", 5, STATEMENTS, f"the claim sets {state} = {v}")
    finish_time = columns.get("finished_at")
    error_cols = {columns.get("last_error"), columns.get("failed_at")} - {None}
    for sets in seen.finishes:
        written = {a.column: a for a in sets}
        atom = written.get(state)
        if atom is None or atom.kind != LITERAL:
            continue
        claim_time = written.get(columns.get("started_at", ""))
        for v in atom.values:
            if claim_time is not None and claim_time.kind == NOW:  # a claim by key
                vote(v, "running", 3, STATEMENTS, f"a claim by key sets {state} = {v}")
            elif set(written) & error_cols:
                vote(v, "failed", 2, STATEMENTS, f"a finish writes {state} = {v} with an error")
            elif finish_time in written or not error_cols:
                vote(v, "done", 2, STATEMENTS, f"a finish writes {state} = {v}")
    for insert in seen.inserts:
        atom = insert.get(state)
        if atom is not None and atom.kind == LITERAL:
            for v in atom.values:
                vote(v, "ready", 3, STATEMENTS, f"jobs are inserted with {state} = {v}")
    default = default_value(col.default)
    if default is not None:
        vote(default, "ready", 3, CATALOG, f"{state} defaults to {default}")
    for column, found in predicate_values(facts.partial_predicates):
        if column == state and len(found) == 1:
            vote(found[0], "ready", 1, CATALOG, f"a partial index selects {state} = {found[0]}")
    ordered = col.enum_labels or check_values(facts.checks).get(state, [])
    if len(ordered) >= 3:
        what = "enum" if col.enum_labels else "CHECK"
        vote(ordered[0], "ready", 1, CATALOG, f"first in the {what}'s declared order")
        vote(ordered[1], "running", 1, CATALOG, f"second in the {what}'s declared order")
    hints = {v: words.role_of_word(v) for v in values}
    if col.is_bool:
        name = words.normalise(state).removeprefix("is_")
        for role, names in BOOLEAN_TRUE.items():
            if name in names:
                vote("true", role, 3, WORDS, f"{state} = true reads as {role}")
                vote("false", "ready", 3, WORDS, f"{state} = false: not yet {name}")
                hints = {"true": role, "false": "ready"}
    _sample_votes(vote, values, sample, columns, hints)
    _shape_votes(vote, values, sample, seen, state, columns)
    for v in values:
        role = words.role_of_word(v)
        if role:
            vote(v, role, 2, WORDS, f"the word {v!r}")
    return tallies


def _sample_votes(
    vote, values: list[str], sample: Sample, columns: dict[str, str], hints: dict
) -> None:
    claim, finish, error = _markers(columns)
    due = columns.get("scheduled_at")
    erring: list[str] = []
    for v in values:
        rows = sample.values().get(v, 0)
        if not rows or not claim:
            continue
        claimed = max(sample.share(v, c, SET) for c in claim)
        finished = max((sample.share(v, c, SET) for c in finish), default=None)
        failed = max((sample.share(v, c, SET) for c in error), default=None)
        later = sample.share(v, due, ("future",)) if due else 0.0
        names = ", ".join(claim)
        word = hints.get(v)
        if claimed <= RARELY and (finished or 0) <= RARELY:
            if word in ("done", "failed", "dead", "running"):
                continue  # never claimed, and its word says otherwise: cancelled before a start
            if later >= MOSTLY:
                vote(v, "scheduled", 2, SAMPLE, f"its {rows} sampled rows are due later")
            else:
                vote(v, "ready", 2, SAMPLE, f"its {rows} sampled rows have no {names}")
            continue
        if claimed < MOSTLY:
            continue
        vote(v, "ready", -2, SAMPLE, f"its sampled rows were claimed ({names} set)")
        if finished is None:  # no finish time: a claimed row is running or finished
            if word == "running":
                vote(v, "running", 2, SAMPLE, f"its {rows} sampled rows have {names} set")
            elif word in ("done", "failed", "dead"):
                vote(v, word, 1, SAMPLE, f"its {rows} sampled rows were claimed")
        elif finished <= RARELY and (failed or 0) <= RARELY:
            vote(v, "running", 3, SAMPLE, f"its {rows} sampled rows have {names}, no finish")
        elif finished >= MOSTLY and failed is None:
            vote(v, "done", 1.5, SAMPLE, f"its {rows} sampled rows have a finish time")
        elif finished >= MOSTLY and failed <= RARELY:
            vote(v, "done", 3, SAMPLE, f"its {rows} sampled rows have a finish time, no error")
        if failed is not None and failed >= MOSTLY:
            vote(v, "failed", 1, SAMPLE, f"its {rows} sampled rows carry an error")
            if word in ("failed", "dead"):
                vote(v, word, 1, SAMPLE, f"its {rows} sampled rows carry an error")
            elif word is None:
                erring.append(v)
    # values whose rows all carry an error and whose words say nothing (integer codes): in
    # their declared order, the first is retried, the later ones given up
    for i, v in enumerate(erring[1:], start=1):
        vote(v, "dead", 2, SAMPLE, f"after {erring[i - 1]} in the declared order, also in error")
    if erring:
        vote(erring[0], "failed", 1, SAMPLE, "first value in error in the declared order")


def _shape_votes(
    vote, values: list[str], sample: Sample, seen: Seen, state: str, columns: dict[str, str]
) -> None:
    """The claim's and the finish's shape, where their values are hidden ($1: what
    pg_stat_statements keeps): a claim that takes rows by the state and writes the state
    and its claim columns takes the rows that have none of them (ready) and leaves rows
    that have them (running); a finish that writes the state and a finish time leaves rows
    that have it (done, unless they carry an error)."""
    claim_cols = {columns[c] for c in ("started_at", "worker") if c in columns}
    by_state = [
        c
        for c in seen.claims
        if any(a.column == state for a in c.where) and any(a.column == state for a in c.sets)
    ]
    written = {a.column for c in by_state for a in c.sets} & claim_cols
    finish = columns.get("finished_at")
    errors = [columns[c] for c in ("failed_at", "last_error") if c in columns]
    finishes = finish and any({a.column for a in sets} >= {state, finish} for sets in seen.finishes)
    for v in values:
        rows = sample.values().get(v, 0)
        if not rows:
            continue
        done = sample.share(v, finish, SET) if finish else 0.0
        erred = max((sample.share(v, c, SET) for c in errors), default=0.0)
        if written:
            claimed = min(sample.share(v, c, SET) for c in written)
            unclaimed = max(sample.share(v, c, SET) for c in written) <= RARELY
            names = ", ".join(sorted(written))
            if unclaimed and done <= RARELY:
                vote(v, "ready", 3, STATEMENTS, f"the claim writes {state} and {names}: "
                     f"its {rows} sampled rows have none of them, the rows it takes")  # fmt: skip
            elif claimed >= MOSTLY and done <= RARELY and erred <= RARELY:
                vote(v, "running", 2, STATEMENTS, f"the claim writes {state} and {names}: "
                     f"its {rows} sampled rows have them, and no finish")  # fmt: skip
        if finishes and done >= MOSTLY and erred <= RARELY:
            vote(v, "done", 2, STATEMENTS, f"a finish writes {state} and {finish}: "
                 f"its {rows} sampled rows have {finish}, no error")  # fmt: skip


# --- without a state column: roles by conditions --------------------------------------------


def rules_for(facts: TableFacts, columns: dict[str, str]) -> tuple[RoleRule, ...]:
    """Roles from the columns a claim sets, in PRECEDENCE order; () where the table has no
    claim column. Visibility timeout (a time ahead while claimed, no claim time): in flight
    while ahead, visible (ready) once past; a claim time (delayed_job): running while set."""
    claim = columns.get("started_at") or columns.get("worker")
    lease = columns.get("lease_until")
    rules: list[RoleRule] = []
    if columns.get("failed_at"):
        rules.append(RoleRule("dead", (Condition(columns["failed_at"], "set"),)))
    if columns.get("finished_at"):
        rules.append(RoleRule("done", (Condition(columns["finished_at"], "set"),)))
    if claim:
        rules.append(RoleRule("running", (Condition(claim, "set"),)))
        if columns.get("scheduled_at"):
            rules.append(RoleRule("scheduled", (Condition(columns["scheduled_at"], "future"),)))
        rules.append(RoleRule("ready", (Condition(claim, "null"),)))
        return tuple(rules)
    if lease:
        attempts = columns.get("attempts")
        running = [Condition(lease, "future")]
        if attempts:
            running.append(Condition(attempts, "above", ("0",)))
        rules.append(RoleRule("running", tuple(running)))
        if attempts:
            rules.append(RoleRule("scheduled", (Condition(lease, "future"),)))
        rules.append(RoleRule("ready", (Condition(lease, "past"),)))
        return tuple(rules)
    return ()
