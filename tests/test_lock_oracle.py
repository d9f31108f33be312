"""The lock oracle, short: staged sessions frozen at a few hundred moments, queuetop's
holders, waiters, blocker tree and job ids compared at each with what PostgreSQL holds
(pgrowlocks, pg_locks, pg_blocking_pids). bench/lock_oracle.py is the long run."""

from __future__ import annotations

from bench.lock_oracle import run_oracle

SAMPLES = 500


def test_queuetop_reads_locks_as_postgresql_holds_them(dsn):
    said: list[str] = []
    result = run_oracle(dsn, SAMPLES, seed=18, say=said.append)
    print(
        f"lock oracle: {result.samples} samples compared, {result.discarded} discarded, "
        f"{len(result.mismatches)} mismatches; {dict(result.kinds)}"
    )
    assert result.samples >= SAMPLES
    assert result.mismatches == [], "\n".join(result.mismatches[:20])
    # the scenes did what they are for: every kind of moment was compared
    for kind in (
        "first in line",
        "queued behind the first",
        "multixact holders",
        "one session in two modes of a row",
        "holder and waiter",
        "advisory lock waits",
        "waits for another table's row",
        "LockNotAvailable",  # NOWAIT
        "skip",
        "carried holders (scan mode)",
    ):
        assert result.kinds[kind] > 0, (kind, result.kinds)
