"""The short chaos run (bench/chaos.py --short): killed workers, terminated backends, a
server restart, an idle transaction holding a row, a stopped worker past its lease. The
trigger's log of every state change is the judge: nothing lost, nothing done twice."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.chaos import SHORT, report, run_chaos

pytestmark = pytest.mark.db  # tier: see tests/conftest.py


def test_short_chaos_run_loses_nothing_and_does_nothing_twice(tmp_path):
    timeline: list[str] = []
    plan = replace(SHORT, seed=11)
    outcome = run_chaos(plan, tmp_path, say=timeline.append)
    text = "\n".join(timeline) + "\n" + report(plan, outcome)
    assert outcome.ok, text
    assert (outcome.lost, outcome.done_twice, outcome.double_claims) == (0, 0, 0), text
    assert outcome.claimed_while_running == 0, text
    assert outcome.produced >= plan.jobs and outcome.done + outcome.dead == outcome.produced
    # every fault did happen, and did what it is for
    for fault in (
        "SIGKILL",
        "pg_terminate_backend",
        "server stop",
        "server started again",
        "idle transaction holds",
        "SIGSTOP",
        "rescued (lease expired)",
    ):
        assert any(fault in line for line in outcome.faults), (fault, text)
    assert outcome.stopped_job_rescued and outcome.held_job_done, text
    assert outcome.rescued >= 1 and outcome.fenced >= 1, text  # the stopped worker's late write
