"""Which column holds which part of a job: its state, claim time, worker, lease, attempts…

Each column gets evidence for each part it may hold: what the workers' statements do to it
(a claim's `SET locked_at = now()` is a claim time in any language), its type, and its name
(a hint). A part goes to the column with the most evidence, each column to one part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dashboard.understand import words
from dashboard.understand.catalog import check_values, default_value, predicate_values
from dashboard.understand.evidence import CATALOG, STATEMENTS, WORDS, Evidence, Tally
from dashboard.understand.facts import ColumnFacts, TableFacts
from dashboard.understand.statements import (
    INCREMENT,
    LITERAL,
    NOW,
    NOW_PLUS,
    NULL,
    PARAM,
    Seen,
)

TIME_CONCEPTS = (
    "created_at",
    "scheduled_at",
    "started_at",
    "finished_at",
    "failed_at",
    "lease_until",
    "heartbeat",
)
# parts of a job the spec has a column for, and the two the understanding reads alone
CONCEPTS = (
    *TIME_CONCEPTS,
    "worker",
    "attempts",
    "max_attempts",
    "lease_token",
    "last_error",
    "group",
    "payload",
)
# booleans whose true means a role (their name says which)
BOOLEAN_TRUE = {
    "running": {
        "picked",
        "claimed",
        "locked",
        "running",
        "processing",
        "taken",
        "reserved",
        "in_progress",
        "busy",
        "leased",
        "started",
    },
    "done": {
        "processed",
        "done",
        "completed",
        "delivered",
        "sent",
        "published",
        "handled",
        "acked",
        "finished",
        "succeeded",
    },
}


def fits(concept: str, col: ColumnFacts) -> bool:
    """Whether a column's type can hold a part of a job."""
    if concept in TIME_CONCEPTS:
        return col.is_time
    if concept == "worker":
        return col.is_text or col.type.endswith("[]") or col.type == "uuid"
    if concept in ("attempts", "max_attempts"):
        return col.is_integer
    if concept == "lease_token":
        return col.is_integer or col.type == "uuid"
    if concept in ("last_error", "group"):
        return col.is_text or col.type in ("jsonb", "json")
    if concept == "payload":
        return col.is_text or col.type in ("jsonb", "json", "bytea", "xml")
    return False


def _claim_sets(seen: Seen, state: str | None) -> dict[str, str]:
    """Column -> what the claims write in it (kind), the state column left out."""
    out: dict[str, str] = {}
    for claim in seen.claims:
        for atom in claim.sets:
            if atom.column != state:
                out.setdefault(atom.column, atom.kind)
    return out


def column_tally(facts: TableFacts, seen: Seen, state: str | None, key: tuple[str, ...]) -> dict:
    """concept -> Tally of columns."""
    tallies: dict[str, Tally] = {c: Tally() for c in CONCEPTS}
    claim_sets = _claim_sets(seen, state)
    claim_filters = {a.column: a for claim in seen.claims for a in claim.where if a.column != state}
    finish_sets = {a.column: a.kind for sets in seen.finishes for a in sets if a.column != state}
    # a bare lock read (SELECT … FOR UPDATE, nothing set) filtering on a time says it is
    # due once past, not whether it is a run time or a visibility timeout
    filtered_by_writes = {a.column for claim in seen.claims if claim.sets for a in claim.where}
    for name, col in facts.columns.items():
        if name in key or name == state:
            continue
        named = [c for c in words.column_concept(name) if fits(c, col)]
        for rank, concept in enumerate(named):
            tallies[concept].add(name, 2.0 if rank == 0 else 1.0, WORDS, f"named {name}")
        kind = claim_sets.get(name)
        said = f"the claim statement sets {name}"
        if kind == NOW and col.is_time:
            concept = "heartbeat" if "heartbeat" in words.column_concept(name) else "started_at"
            tallies[concept].add(name, 4, STATEMENTS, f"{said} = now()")
        elif kind == NOW_PLUS and col.is_time:
            tallies["lease_until"].add(name, 4, STATEMENTS, f"{said} = now() + a delay")
        elif kind == INCREMENT and col.is_integer:
            named = words.column_concept(name)
            concept = "lease_token" if "lease_token" in named else "attempts"
            tallies[concept].add(name, 3, STATEMENTS, f"{said} = {name} + 1")
        elif kind in (PARAM, LITERAL) and fits("worker", col):
            tallies["worker"].add(name, 3, STATEMENTS, f"{said} to the worker's name")
        atom = claim_filters.get(name)
        if atom is not None and col.is_time:
            if atom.op in ("<=", "<") and atom.kind in (NOW, PARAM):
                past = f"the claim takes rows whose {name} is past"
                if kind == NOW_PLUS:
                    tallies["lease_until"].add(name, 2, STATEMENTS, past)
                elif name in filtered_by_writes:
                    tallies["scheduled_at"].add(name, 2, STATEMENTS, past)
                else:
                    for concept in ("scheduled_at", "lease_until"):
                        tallies[concept].add(name, 1, STATEMENTS, past)
            elif atom.op == "is null" and atom.kind == NULL:
                tallies["started_at"].add(
                    name, 1, STATEMENTS, f"the claim takes rows whose {name} is null"
                )
        if finish_sets.get(name) == NOW and col.is_time:
            tallies["finished_at"].add(name, 3, STATEMENTS, f"a finish sets {name} = now()")
        if (
            col.is_time
            and default_value(col.default) is None
            and (col.default or "").lower()
            in (
                "now()",
                "current_timestamp",
                "clock_timestamp()",
            )
        ):
            tallies["created_at"].add(name, 1, CATALOG, f"{name} defaults to now()")
    return tallies


@dataclass
class Assigned:
    columns: dict[str, str] = field(default_factory=dict)  # concept -> column
    why: dict[str, list[Evidence]] = field(default_factory=dict)


def assign(tallies: dict[str, Tally]) -> Assigned:
    """Each concept its best column (score 2 or more), each column one concept."""
    offers = sorted(
        (
            (tally.score(col), concept, col)
            for concept, tally in tallies.items()
            for col in tally.votes
        ),
        key=lambda o: (-o[0], CONCEPTS.index(o[1]), o[2]),
    )
    out = Assigned()
    taken: set[str] = set()
    for score, concept, col in offers:
        if score < 2 or concept in out.columns or col in taken:
            continue
        out.columns[concept] = col
        out.why[concept] = tallies[concept].why(col)
        taken.add(col)
    return out


# --- the state column -----------------------------------------------------------------------


def state_tally(facts: TableFacts, seen: Seen, key: tuple[str, ...]) -> Tally:
    """Evidence, per column, that it holds the job's state."""
    tally = Tally()
    checks = check_values(facts.checks)
    predicates = predicate_values(facts.partial_predicates)
    for name, col in facts.columns.items():
        if name in key:
            continue
        if not (col.is_text or col.is_enum or col.is_integer or col.is_bool):
            continue
        if col.is_enum:
            labels = ", ".join(col.enum_labels)
            tally.add(name, 3, CATALOG, f"{name} is an enum ({col.type}: {labels})")
        if name in checks and len(checks[name]) >= 2:
            tally.add(name, 3, CATALOG, f"a CHECK lists its values ({', '.join(checks[name])})")
        for column, values in predicates:
            if column == name:
                shown = ", ".join(values)
                tally.add(name, 2, CATALOG, f"a partial index selects {name} = {shown}")
        for claim in seen.claims:
            if any(a.column == name and a.op in ("=", "in") for a in claim.where):
                tally.add(name, 4, STATEMENTS, f"the claim statement filters on {name}")
            if any(a.column == name and a.kind in (LITERAL, PARAM) for a in claim.sets) and any(
                a.column == name for a in claim.where
            ):
                tally.add(name, 4, STATEMENTS, f"the claim statement changes {name}")
        if "state" in words.column_concept(name):
            tally.add(name, 3, WORDS, f"named {name}")
        if col.is_bool and words.normalise(name).removeprefix("is_") in set().union(
            *BOOLEAN_TRUE.values()
        ):
            tally.add(name, 3, WORDS, f"a boolean named {name}")
        values = known_values(col, checks.get(name, []))
        roles = {r for v in values if (r := words.role_of_word(v))}
        if len(roles) >= 2 and not col.is_bool:
            tally.add(
                name, min(len(roles), 3), WORDS, f"its values read as {', '.join(sorted(roles))}"
            )
        if col.is_integer and not (name in checks or "state" in words.column_concept(name)):
            tally.add(name, -2, CATALOG, f"{name} is a number without a state's name or CHECK")
    return tally


def known_values(col: ColumnFacts, check: list[str]) -> list[str]:
    """The values the catalog and the statistics know a column holds, in lifecycle order
    where the catalog has one (an enum's, a CHECK's)."""
    ordered: list[str] = []
    for v in [*col.enum_labels, *check, *col.common, *col.histogram]:
        if v not in ordered:
            ordered.append(v)
    if col.is_bool and not ordered:
        ordered = ["false", "true"]
    return ordered
