"""Which tables are worth a closer look, from their columns alone: in a database of ten
thousand tables, discovery reads the constraints, statistics and rows of a few."""

from __future__ import annotations

from dashboard.understand import words
from dashboard.understand.facts import TableFacts
from dashboard.understand.statements import Seen

CLAIM_CONCEPTS = ("started_at", "lease_until", "heartbeat", "worker")


def worth_reading(facts: TableFacts) -> bool:
    """A column a claim would set (a claim time, a lease, a heartbeat, a worker), by its
    name: read the table's catalog more closely. A state column alone does not make a
    queue (orders, users, payments have one); a table whose claim statement the server
    shows is read whatever its columns are called (see `tables`)."""
    for name, col in facts.columns.items():
        if col.is_time or col.is_text or col.is_integer or col.is_bool:
            if set(words.column_concept(name)) & set(CLAIM_CONCEPTS):
                return True
    return False


def worth_sampling(columns: dict[str, str], state: str | None, seen: Seen) -> bool:
    """A queue claims its jobs: a claim statement seen, or a column a claim sets."""
    if seen.claims:
        return True
    return any(c in columns for c in CLAIM_CONCEPTS)
