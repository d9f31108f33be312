"""Property: random interleavings of claims, completions, stalls (crashes), renewals,
requeues and dead-letters keep the queue sound.

Afterwards every job is in exactly one place, no job has two live owners,
attempts never go backwards, and every change an action made has its audit
record (a job's lease token advances only by claims and audited requeues).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import psycopg
import pytest
from demo_queue import claim, finish, setup_demo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard import db
from dashboard.actions import TableAudit, dead_letter, observe_jobs, requeue
from dashboard.models import DeadLetter

JOBS = 4
WORKERS = 2

worker_ids = st.integers(0, WORKERS - 1)
claim_op = st.tuples(st.just("claim"), worker_ids)
stall_op = st.tuples(st.just("stall"), worker_ids)
# Actions pick jobs by bitmask from the operator's view; `fresh` looks right before acting,
# otherwise the view may be many steps old (the operator looked, then went for coffee).
operations = st.lists(
    st.one_of(
        claim_op,
        claim_op,
        stall_op,
        st.tuples(
            st.just("complete"), worker_ids, st.integers(0, 3), st.sampled_from(["done", "failed"])
        ),
        st.tuples(st.just("renew"), worker_ids),
        st.tuples(st.just("look")),
        st.tuples(
            st.just("requeue"),
            st.integers(1, 2**JOBS - 1),
            st.booleans(),
            st.booleans(),
            st.booleans(),
        ),
        st.tuples(
            st.just("requeue"),
            st.integers(1, 2**JOBS - 1),
            st.booleans(),
            st.just(False),
            st.booleans(),
        ),
        st.tuples(
            st.just("dead_letter"),
            st.sampled_from([1 << i for i in range(JOBS)]),
            st.booleans(),
            st.just(False),
            st.booleans(),
        ),
    ),
    min_size=10,
    max_size=40,
)


@pytest.fixture(params=["table", "status"])
def rig(dsn, request):
    spec = setup_demo(dsn)
    if request.param == "status":
        spec = replace(spec, policy=replace(spec.policy, dead_letter=DeadLetter("status", "dead")))
    conns = [
        psycopg.connect(dsn, autocommit=True, application_name=f"w{i}") for i in range(WORKERS)
    ]
    admin = psycopg.connect(dsn, autocommit=True)
    holder = psycopg.connect(dsn, application_name="holder")
    action = db.connect_action(dsn, lock_timeout_ms=500)
    yield spec, conns, admin, holder, action
    for conn in (*conns, admin, holder, action):
        conn.close()


def _reset(admin: psycopg.Connection) -> None:
    admin.execute("TRUNCATE queuetop_demo.jobs, queuetop_demo.jobs_dead, queuetop.audit_log")
    admin.execute(
        "INSERT INTO queuetop_demo.jobs (id, payload) "
        "SELECT g, 'job ' || g FROM generate_series(1, %s) AS g",
        (JOBS,),
    )


def _attempts(admin: psycopg.Connection) -> dict[int, int]:
    return dict(
        admin.execute(
            "SELECT id, attempts FROM queuetop_demo.jobs UNION ALL "
            "SELECT id, attempts FROM queuetop_demo.jobs_dead"
        ).fetchall()
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_random_interleavings_keep_the_queue_sound(rig, ops):
    spec, conns, admin, holder, action = rig
    _reset(admin)
    held: list[list[tuple[int, int]]] = [[] for _ in range(WORKERS)]
    claims: Counter[int] = Counter()
    changed: Counter[tuple[str, str]] = Counter()
    view: list = []
    attempts = _attempts(admin)
    for op in ops:
        kind = op[0]
        if kind == "claim":
            got = claim(conns[op[1]], f"w{op[1]}")
            if got:
                held[op[1]].append(got)
                claims[got[0]] += 1
        elif kind == "complete" and held[op[1]]:
            job_id, token = held[op[1]].pop(op[2] % len(held[op[1]]))
            finish(conns[op[1]], job_id, token, status=op[3])  # a zombie's finish may not stick
        elif kind == "stall":  # the worker hangs: its leases lapse, it still holds its tokens
            for job_id, token in held[op[1]]:
                admin.execute(
                    "UPDATE queuetop_demo.jobs SET leased_until = now() - interval "
                    "'1 minute' WHERE id = %s AND lease_token = %s",
                    (job_id, token),
                )
        elif kind == "renew":
            for job_id, token in held[op[1]]:
                admin.execute(
                    "UPDATE queuetop_demo.jobs SET leased_until = now() + interval "
                    "'1 minute' WHERE id = %s AND lease_token = %s AND status = "
                    "'running'",
                    (job_id, token),
                )
        elif kind == "look":
            view, _ = observe_jobs(action, spec, [str(i) for i in range(1, JOBS + 1)])
        elif kind in ("requeue", "dead_letter"):
            if op[4]:
                view, _ = observe_jobs(action, spec, [str(i) for i in range(1, JOBS + 1)])
            # Like the stale-lease table, a requeue offers running and failed jobs here (a
            # requeue of a dead job, a person's retry, is tested with the presets).
            offered = [
                o for o in view if kind == "dead_letter" or o.status not in ("ready", "dead")
            ]
            picked = [o for o in offered if op[1] >> (int(o.id) - 1) & 1]
            locked = None
            if kind == "requeue" and op[3] and picked:  # a worker holds one row right now
                locked = picked[0].id
                holder.execute(
                    "SELECT 1 FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (int(locked),)
                )
            if kind == "requeue":
                result = requeue(action, spec, picked, audit=TableAudit(), force=op[2])
            else:
                result = dead_letter(
                    action, spec, picked, audit=TableAudit(), reason="prop", force=op[2]
                )
            holder.rollback()
            if locked is not None:
                reasons = {s.id: s.reason for s in result.skipped}
                # gone since the look: moved to the dead-letter table, which says so
                assert reasons.get(locked) in ("locked", "already dead-lettered", "not found")
            assert len(result.changed) + len(result.skipped) == len(picked)
            changed.update((kind.replace("_", "-"), i) for i in result.changed)
        now = _attempts(admin)
        # Every job in exactly one place (the UNION ALL keeps duplicates), attempts monotone.
        assert sorted(now) == list(range(1, JOBS + 1))
        assert all(now[i] >= attempts[i] for i in now)
        attempts = now

    rows = admin.execute("SELECT id, status, lease_token FROM queuetop_demo.jobs").fetchall()
    for job_id, status, token in rows:
        # A live owner is a worker whose finish would still stick.
        owners = [w for w in range(WORKERS) if (job_id, token) in held[w]]
        assert len(owners) <= (1 if status == "running" else 0)
    audited = Counter(
        (action_name, target)
        for action_name, target in admin.execute(
            "SELECT action, target FROM queuetop.audit_log WHERE outcome = 'changed'"
        )
    )
    assert audited == changed
    # The token moves only by claims and audited actions: no unaudited change slipped in.
    in_place = spec.policy.dead_letter.kind == "status"
    for job_id, _status, token in rows:
        fenced = changed[("requeue", str(job_id))]
        fenced += changed[("dead-letter", str(job_id))] if in_place else 0
        assert token == claims[job_id] + fenced
    where = (
        "SELECT id FROM queuetop_demo.jobs WHERE status = 'dead'"
        if in_place
        else "SELECT id FROM queuetop_demo.jobs_dead"
    )
    dead = {r[0] for r in admin.execute(where)}
    assert dead == {int(t) for (a, t), n in changed.items() if a == "dead-letter" and n}
