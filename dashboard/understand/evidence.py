"""Evidence: a weight, where it comes from, and what it says, in words a person can check."""

from __future__ import annotations

from dataclasses import dataclass, field

# How much each source weighs: what the server enforces or the workers do outright counts
# most, words least.
STATEMENTS = "statements"
CATALOG = "catalog"
SAMPLE = "sample"
STATISTICS = "statistics"
WORDS = "words"

HIGH, MEDIUM, LOW = "high", "medium", "low"
ORDER = {HIGH: 0, MEDIUM: 1, LOW: 2}


@dataclass(frozen=True)
class Evidence:
    weight: float
    source: str
    text: str


@dataclass
class Tally:
    """Evidence for each of several answers (a value's role, a column's concept)."""

    votes: dict[str, list[Evidence]] = field(default_factory=dict)

    def add(self, answer: str, weight: float, source: str, text: str) -> None:
        self.votes.setdefault(answer, []).append(Evidence(weight, source, text))

    def score(self, answer: str) -> float:
        return sum(e.weight for e in self.votes.get(answer, ()))

    def best(self) -> tuple[str | None, float, float]:
        """(answer, its score, the runner-up's score)."""
        ranked = sorted(((self.score(a), a) for a in self.votes), reverse=True)
        if not ranked or ranked[0][0] <= 0:
            return None, 0.0, 0.0
        second = ranked[1][0] if len(ranked) > 1 else 0.0
        return ranked[0][1], ranked[0][0], max(second, 0.0)

    def why(self, answer: str) -> list[Evidence]:
        return sorted(
            (e for e in self.votes.get(answer, ()) if e.weight > 0), key=lambda e: -e.weight
        )


def confidence(score: float, margin: float) -> str | None:
    """How sure an answer is from its score and its lead over the next; None: no answer."""
    if score < 1.5 or margin < 1.0:
        return None
    if score >= 5 and margin >= 3:
        return HIGH
    if score >= 3:
        return MEDIUM
    return LOW


def weakest(*levels: str) -> str:
    return max(levels, key=lambda c: ORDER[c])
