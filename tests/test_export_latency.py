"""`/metrics` against a staged workload (tests/latency_stage.py), read by a real HTTP GET:
the wait and run quantiles per queue and group are within one poll interval of the truth
computed from the rows while the workload runs, and equal it once the rows stop moving,
with the gauge histogram's buckets, count and sum, the throughput and the failure ratio;
the exposition passes `promtool check metrics`."""

from __future__ import annotations

import math
import subprocess
import time

import pytest
from export_stage import ExportProcess
from helpers import wait_until
from latency_stage import FLAGS, Stage, create_queue, truth
from prometheus_client.parser import text_string_to_metric_families
from system_tools import require_binary

from dashboard.models import LATENCY_BUCKETS

INTERVAL = 0.5
WINDOW_S = 300.0
QUANTILES = {"0.5": 0.5, "0.95": 0.95, "0.99": 0.99}


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of a scrape by (name, labels without `table`)."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = frozenset((k, v) for k, v in s.labels.items() if k != "table")
            out[(s.name, labels)] = s.value
    return out


def quantile(got: dict, kind: str, group: str | None, q: str) -> float | None:
    if group is None:
        return got.get((f"queuetop_job_{kind}_seconds", frozenset({("quantile", q)})))
    labels = frozenset({("quantile", q), ("queue", group)})
    return got.get((f"queuetop_group_job_{kind}_seconds", labels))


def off(got: dict, truths: dict, tolerance: float, quantiles=("0.5", "0.95")) -> list[str]:
    """Where a served quantile is further than `tolerance` from the truth, or missing."""
    bad = []
    for group, t in truths.items():
        for kind in ("wait", "run"):
            for q in quantiles:
                want = (t.wait if kind == "wait" else t.run)(QUANTILES[q])
                value = quantile(got, kind, group, q)
                if value is None or want is None or abs(value - want) > tolerance:
                    bad.append(f"{group} {kind} {q}: served {value}, truth {want}")
    return bad


def test_metrics_serve_the_staged_waits_and_runs_within_a_poll_of_the_rows(dsn, connect, tmp_path):
    create_queue(dsn)
    reader = connect(autocommit=True)
    stage = Stage(dsn, seconds=4.0)
    stage.start()
    export = ExportProcess(dsn, tmp_path / "export", *FLAGS, interval=INTERVAL)
    stopped = False
    try:
        # while jobs flow: each scrape against the rows read right after it
        checked = 0
        deadline = time.monotonic() + 30
        while checked < 3 and time.monotonic() < deadline:
            got = samples(export.scrape())
            truths = truth(reader, WINDOW_S)
            if set(truths) != {None, "fast", "slow"} or any(not t.runs for t in truths.values()):
                time.sleep(INTERVAL)
                continue  # a group without a finished job yet
            assert not off(got, truths, INTERVAL), off(got, truths, INTERVAL)
            checked += 1
            time.sleep(INTERVAL)
        assert checked == 3, "no scrape while the workload ran had every group's latency"
        stage.stop()
        stopped = True

        # the rows stand still: once a scrape counts every finished job, it equals them
        truths = truth(reader, WINDOW_S)
        count = ("queuetop_job_run_window_seconds_gcount", frozenset())
        got = wait_until(
            lambda: (g := samples(export.scrape())).get(count) == len(truths[None].runs) and g,
            timeout=30,
            interval=INTERVAL,
        )
        every = tuple(QUANTILES)
        assert not off(got, truths, 1e-6, every), off(got, truths, 1e-6, every)
        t = truths[None]
        for kind, values in (("wait", t.waits), ("run", t.runs)):
            name = f"queuetop_job_{kind}_window_seconds"
            assert got[(f"{name}_gcount", frozenset())] == len(values)
            assert got[(f"{name}_gsum", frozenset())] == pytest.approx(sum(values))
            for le in LATENCY_BUCKETS:
                bucket = got[(f"{name}_bucket", frozenset({("le", f"{le:g}")}))]
                assert bucket == sum(v <= le for v in values), (kind, le)
            assert got[(f"{name}_bucket", frozenset({("le", "+Inf")}))] == len(values)
        for group, tg in truths.items():
            labels = frozenset() if group is None else frozenset({("queue", group)})
            prefix = "queuetop_" if group is None else "queuetop_group_"
            rate = got[(f"{prefix}jobs_finished_per_second", labels)]
            assert rate == pytest.approx(tg.finished / WINDOW_S), group
            ratio = got[(f"{prefix}jobs_failed_ratio", labels)]
            assert ratio == pytest.approx(tg.failed / tg.finished), group
        assert got[("queuetop_latency_window_seconds", frozenset())] == WINDOW_S

        # the exposition, latency families and all, passes Prometheus's own lint
        promtool = require_binary("promtool", "prometheus")
        lint = subprocess.run(
            [promtool, "check", "metrics"],
            input=export.scrape(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert lint.returncode == 0 and not (lint.stdout + lint.stderr).strip(), lint
    finally:
        if not stopped:
            stage.stop()
        assert export.stop() == 0, export.err.read_text()


def test_no_job_in_the_window_serves_nan_quantiles_never_zero(dsn, tmp_path):
    """An empty window: the quantiles are NaN (a summary without observations), the counts
    0, and no failure ratio at all (nothing finished to divide by)."""
    create_queue(dsn)
    export = ExportProcess(dsn, tmp_path / "export", *FLAGS, interval=INTERVAL)
    try:
        key = ("queuetop_job_wait_seconds", frozenset({("quantile", "0.95")}))
        got = wait_until(lambda: (g := samples(export.scrape())).get(key) is not None and g)
        assert math.isnan(got[key])
        assert got[("queuetop_job_wait_window_seconds_gcount", frozenset())] == 0
        assert got[("queuetop_jobs_finished_per_second", frozenset())] == 0
        assert ("queuetop_jobs_failed_ratio", frozenset()) not in got
    finally:
        assert export.stop() == 0, export.err.read_text()
