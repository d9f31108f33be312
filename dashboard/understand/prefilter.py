"""Which tables are worth a closer look, from their columns alone: in a database of ten
thousand tables, discovery reads the constraints, statistics and rows of a few."""

from __future__ import annotations

from dashboard.understand import words
from dashboard.understand.columns import BOOLEAN_TRUE
from dashboard.understand.facts import TableFacts
from dashboard.understand.statements import Seen

CLAIM_CONCEPTS = ("started_at", "lease_until", "heartbeat", "worker")
_BOOLEANS = set().union(*BOOLEAN_TRUE.values())


def worth_reading(facts: TableFacts) -> bool:
    """A state-like column, or a claim-like one: read its catalog more closely."""
    concepts: set[str] = set()
    for name, col in facts.columns.items():
        named = words.column_concept(name)
        if col.is_enum or ("state" in named and not col.is_time):
            return True
        if col.is_bool and words.normalise(name).removeprefix("is_") in _BOOLEANS:
            return True
        if col.is_time or col.is_text or col.is_integer:
            concepts.update(named)
    return bool(concepts & set(CLAIM_CONCEPTS))


def worth_sampling(columns: dict[str, str], state: str | None, seen: Seen) -> bool:
    """A queue claims its jobs: a claim statement seen, or a column a claim sets."""
    if seen.claims:
        return True
    return any(c in columns for c in CLAIM_CONCEPTS)
