"""Pure logic of the load generator: percentiles, the double-claim ledger, work times, SQL."""

import dataclasses
import random
import statistics

import pytest

from dashboard import config
from dashboard.cli.load_command import live_line, summary_text
from dashboard.errors import UserError
from dashboard.loadgen import LoadSettings, faults
from dashboard.loadgen.stats import (
    ClaimLedger,
    Histogram,
    Latency,
    LoadSnapshot,
    StatsBook,
    summary,
)
from dashboard.loadgen.strategies import build


def test_histogram_percentiles_within_a_few_percent():
    hist = Histogram()
    for ms in range(1, 1001):
        hist.add(float(ms))
    assert hist.percentile(50) == pytest.approx(500, rel=0.03)
    assert hist.percentile(99) == pytest.approx(990, rel=0.03)
    assert Histogram().percentile(50) is None


def test_recent_claim_latency_covers_the_last_ten_seconds_only():
    book = StatsBook()
    book.add(1, {"claims": 100}, [500.0] * 100, now=1000.0)  # for-update behind a held row
    book.add(1, {"claims": 100}, [0.5] * 100, now=1009.5)  # then nowait: fast
    assert Latency.of(book.recent.at(1009.5)).p95 == pytest.approx(500, rel=0.03)
    assert Latency.of(book.recent.at(1011.0)).p95 == pytest.approx(0.5, rel=0.03)
    assert Latency.of(book.latency).p95 == pytest.approx(500, rel=0.03)  # the run keeps both
    assert Latency.of(book.recent.at(1030.0)) == Latency(None, None, None)  # no claims lately


def test_ledger_flags_two_live_owners_with_the_same_token():
    ledger = ClaimLedger()
    ledger.claim(1, job=7, token=1, at=10.0, alive={1, 2})
    ledger.claim(2, job=7, token=1, at=11.0, alive={1, 2})
    ledger.finish(1, job=7, token=1, at=12.0)  # the first owner still worked on it after the claim
    assert ledger.double_claims == 1


def test_ledger_excuses_late_records_of_a_release_and_a_token_advance():
    ledger = ClaimLedger()
    ledger.claim(1, job=7, token=1, at=10.0, alive={1, 2})
    ledger.claim(2, job=7, token=1, at=11.0, alive={1, 2})  # arrives before worker 1's rollback
    ledger.finish(1, job=7, token=1, at=10.5)
    ledger.claim(3, job=7, token=2, at=12.0, alive={1, 2, 3})  # requeued: the token moved on
    ledger.claim(4, job=8, token=1, at=12.0, alive={4})
    ledger.worker_gone(4)
    ledger.claim(5, job=8, token=1, at=13.0, alive={5})  # the owner died: its locks died too
    ledger.expire(now=float("inf"))
    assert ledger.double_claims == 0


def test_ledger_takes_an_older_claim_heard_late_for_what_it_is():
    """A worker stopped with its claim record unsent: its job was rescued (the token
    advanced) and claimed again before the old record arrived. Not a double claim; the
    owner with the newer token is still the owner."""
    ledger = ClaimLedger()
    ledger.claim(2, job=160, token=3, at=4.2, alive={1, 2})  # after the rescue: token 3
    ledger.claim(1, job=160, token=1, at=2.8, alive={1, 2})  # the stopped worker's, late
    ledger.finish(2, job=160, token=3, at=4.5)
    ledger.finish(1, job=160, token=1, at=4.6)  # its late write, refused by the token
    ledger.expire(now=float("inf"))
    assert ledger.double_claims == 0 and ledger.owners == {}
    ledger.claim(1, job=9, token=5, at=1.0, alive={1, 2})
    ledger.claim(2, job=9, token=4, at=2.0, alive={1, 2})  # an older record: passed over
    ledger.claim(3, job=9, token=5, at=3.0, alive={1, 2, 3})  # the same token twice: counted
    ledger.expire(now=float("inf"))
    assert ledger.double_claims == 1


def test_ledger_counts_a_suspect_that_never_resolves():
    ledger = ClaimLedger()
    ledger.claim(1, job=7, token=1, at=10.0, alive={1, 2})
    ledger.claim(2, job=7, token=1, at=11.0, alive={1, 2})
    ledger.expire(now=float("inf"))
    assert ledger.double_claims == 1 and ledger.examples


def test_work_time_is_spread_around_its_mean():
    rng = random.Random(1)
    samples = [faults.work_seconds(rng, 20.0) * 1000 for _ in range(4000)]
    assert statistics.mean(samples) == pytest.approx(20.0, rel=0.05)
    assert statistics.pstdev(samples) > 5  # a distribution, not a constant
    assert faults.work_seconds(rng, 0) == 0


def test_summary_keys_and_the_rescue_count_in_the_live_line_and_summary():
    snap = LoadSnapshot(
        running=False,
        strategy="nowait",
        hold_tx=False,
        batch=1,
        work_ms=1.0,
        target_workers=2,
        live_workers=0,
        producer_paused=False,
        rate=0.0,
        elapsed_s=2.0,
        totals={
            k: 4
            for k in (
                "claimed",
                "completed",
                "failed",
                "dead",
                "lock_waits",
                "lock_errors",
                "empty_claims",
            )
        },
        crashed=1,
        double_claims=0,
        enqueued=4,
        rescued=0,
        claims_per_s=0,
        completions_per_s=0,
        latency=Latency(1.0, 2.0, 3.0),
    )
    doc = summary(snap, "nowait", 2)
    assert list(doc) == [
        "strategy",
        "workers",
        "duration_s",
        "claimed",
        "completed",
        "failed",
        "dead",
        "crashed",
        "rescue",
        "rescued",
        "claims_per_s",
        "completions_per_s",
        "claim_latency_ms",
        "lock_waits",
        "lock_errors",
        "lock_errors_by_kind",
        "lock_waits_per_s",
        "lock_errors_per_s",
        "empty_claims",
        "double_claims",
    ]
    assert doc["claims_per_s"] == 2.0 and doc["claim_latency_ms"] == {
        "p50": 1.0,
        "p95": 2.0,
        "p99": 3.0,
    }
    assert doc["rescue"] is False and doc["rescued"] == 0
    assert "rescue off" in live_line(snap) and "rescue off" in summary_text(doc)
    rescuing = dataclasses.replace(snap, rescue=True, rescued=23)
    assert "rescued 23" in live_line(rescuing)
    assert "rescued 23 (expired leases requeued, audited)" in summary_text(
        summary(rescuing, "nowait", 2)
    )


def test_settings_refuse_nonsense():
    with pytest.raises(UserError):
        LoadSettings(strategy="yolo")
    with pytest.raises(UserError):
        LoadSettings(fail_rate=1.5)


def test_claim_sql_quotes_identifiers_and_keeps_values_as_parameters():
    types = {"priority": "integer", "payload": "text", "finished_at": "timestamptz"}
    spec = dataclasses.replace(config.load_preset("demo"), column_types=types)
    queue_sql = build(spec)
    text = queue_sql.claims["skip-locked"].as_string(None)
    assert '"queuetop_demo"."jobs"' in text and "FOR UPDATE SKIP LOCKED" in text
    assert "%(ready)s" in text and "'ready'" not in text
    assert '"lease_token" = t."lease_token" + 1' in text
    assert queue_sql.fenced_by == "lease_token"
