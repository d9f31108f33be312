"""What doctor reports: findings, each with the SQL that would fix it, and its thresholds."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Finding:
    """One thing to fix: what, why (with the numbers), and the SQL a person would run."""

    check: str  # index, lease_index, vacuum, fillfactor, xmin_horizon, idle_timeout
    title: str
    detail: str
    fix: str  # SQL (comments say what to decide before running it); queuetop never runs it

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Limits:
    """Where doctor starts to complain (defaults for production; tests pass small ones)."""

    horizon_age_s: float = 60.0  # a transaction or snapshot older than this holds vacuum back
    dead_rows: int = 1000  # dead rows worth a vacuum finding, when also dead_share of the live
    dead_share: float = 0.2
    churn_rows: int = 1000  # updates + deletes that make a table "high-churn"
    hot_share: float = 0.5  # below this share of HOT updates, suggest a fillfactor


@dataclass(frozen=True)
class Report:
    queue: str
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()  # what doctor could not check, and why
    checks: tuple[str, ...] = field(default=())  # the checks that ran

    @property
    def healthy(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return {
            "queue": self.queue,
            "healthy": self.healthy,
            "findings": [f.as_dict() for f in self.findings],
            "notes": list(self.notes),
            "checks": list(self.checks),
        }

    def text(self) -> str:
        if self.healthy:
            lines = [f"{self.queue}: healthy ({', '.join(self.checks)} checked)"]
        else:
            lines = [
                f"{self.queue}: {len(self.findings)} finding"
                f"{'s' if len(self.findings) != 1 else ''}",
                "",
            ]
            for n, f in enumerate(self.findings, 1):
                lines += [f"{n}. [{f.check}] {f.title}"]
                lines += [f"   {line}" for line in f.detail.splitlines()]
                lines += ["   fix:"] + [f"     {line}" for line in f.fix.splitlines()] + [""]
            lines.append(
                "queuetop runs none of these statements: read them, then run them "
                "yourself (CREATE INDEX CONCURRENTLY outside a transaction)."
            )
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)
