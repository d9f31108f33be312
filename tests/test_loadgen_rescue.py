"""The rescuer against a real server: off by default, and when on, guarded and audited like an
operator's requeue, in the same transaction as the change."""

from __future__ import annotations

import json

import psycopg
import pytest
from helpers import wait_until
from test_ui_live import demo_spec

from dashboard.actions import TableAudit
from dashboard.cli import main
from dashboard.loadgen import LoadGenerator, LoadSettings
from dashboard.loadgen.rescuer import ACTION, ACTOR, rescue_expired
from dashboard.loadgen.rescuer import connect as rescuer_session
from dashboard.loadgen.strategies import build

STALE_WORKER = "queuetop-worker-7"  # a worker that died before the run
# running jobs whose lease expired a minute ago: (lease token, attempts)
SEED = (
    "INSERT INTO {table} (status, worker, lease_token, attempts, leased_until, started_at) "
    "SELECT 'running', %s, 3, a, now() - interval '1 minute', now() - interval '2 minutes' "
    "FROM unnest(%s::int[]) AS a RETURNING id"
)
STATE = "SELECT id, status, worker, lease_token FROM {table} ORDER BY id"
AUDIT = (
    "SELECT target, action, from_state, to_state, outcome, detail, db_user "
    "FROM queuetop.audit_log ORDER BY audit_id"
)


def seed(dsn: str, attempts: list[int], table: str = "queuetop_demo.jobs") -> list[int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [r[0] for r in conn.execute(SEED.format(table=table), (STALE_WORKER, attempts))]


def state(dsn: str, table: str = "queuetop_demo.jobs") -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(STATE.format(table=table)).fetchall()


def audit_rows(dsn: str) -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(AUDIT).fetchall()


def load(dsn: str, *extra: str) -> list[str]:
    return ["load", "--dsn", dsn, "--workers", "1", "--duration", "1", "--json", *extra]


def test_without_rescue_stale_leases_from_before_the_run_are_left_alone(dsn, capsys):
    demo_spec(dsn)
    ids = seed(dsn, [1, 1, 1, 3])
    before = state(dsn)
    assert main(load(dsn)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rescue"] is False and doc["rescued"] == 0
    assert state(dsn) == before and [r[1] for r in before] == ["running"] * len(ids)
    assert audit_rows(dsn) == []


def test_with_rescue_each_rescued_job_has_one_audit_row_and_the_summary_counts_them(dsn, capsys):
    demo_spec(dsn)
    retried, last_attempt = seed(dsn, [1, 2, 1]), seed(dsn, [3])
    assert main(load(dsn, "--rescue")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rescue"] is True and doc["rescued"] == 4 and doc["dead"] == 1
    rows = audit_rows(dsn)
    assert sorted(int(r[0]) for r in rows) == sorted(retried + last_attempt)  # one row each
    for target, action, from_state, to_state, outcome, detail, db_user in rows:
        assert (action, outcome, detail["actor"]) == (ACTION, "changed", ACTOR)
        assert from_state["status"] == "running" and from_state["worker"] == STALE_WORKER
        assert from_state["lease_token"] == "3" and detail["new_lease_token"] == "4"
        assert to_state == ("dead" if int(target) in last_attempt else "ready")
        assert db_user
    # the worker took the requeued ones; the last-attempt one stays dead
    states = {r[0]: r[1] for r in state(dsn)}
    assert states[last_attempt[0]] == "dead"
    assert all(states[i] in ("ready", "running", "done") for i in retried)


def test_a_rescue_commits_with_its_audit_rows_or_not_at_all(dsn):
    spec = demo_spec(dsn)
    ids = seed(dsn, [1, 1, 1])
    before = state(dsn)
    queue_sql = build(spec)
    with psycopg.connect(dsn, autocommit=True) as admin:  # the audit insert fails
        admin.execute(
            "CREATE FUNCTION queuetop.refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$BEGIN RAISE EXCEPTION 'audit refused'; END$$"
        )
        admin.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON queuetop.audit_log "
            "FOR EACH STATEMENT EXECUTE FUNCTION queuetop.refuse()"
        )
    with rescuer_session(dsn) as conn:
        with pytest.raises(psycopg.errors.RaiseException):
            rescue_expired(conn, queue_sql, str(spec.table), TableAudit(), 30.0)
        assert state(dsn) == before and audit_rows(dsn) == []  # rolled back together

        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("DROP TRIGGER refuse ON queuetop.audit_log")
        rescued = rescue_expired(conn, queue_sql, str(spec.table), TableAudit(), 30.0)
    assert sorted(int(r.id) for r in rescued) == ids
    with psycopg.connect(dsn) as conn:  # written by one transaction: the same xmin
        same_tx = conn.execute(
            "SELECT j.id, j.xmin::text = a.xmin::text, j.status FROM queuetop_demo.jobs AS j "
            "JOIN queuetop.audit_log AS a ON a.target = j.id::text ORDER BY j.id"
        ).fetchall()
    assert same_tx == [(i, True, "ready") for i in ids]


def test_the_generator_reports_a_failed_rescue_and_changes_nothing(dsn):
    spec = demo_spec(dsn)
    seed(dsn, [1, 1])
    before = state(dsn)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "CREATE FUNCTION queuetop.refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$BEGIN RAISE EXCEPTION 'audit refused'; END$$"
        )
        admin.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON queuetop.audit_log "
            "FOR EACH STATEMENT EXECUTE FUNCTION queuetop.refuse()"
        )
    with LoadGenerator(dsn, spec, LoadSettings(workers=1, lease_s=0.5), rescue=TableAudit()) as gen:
        wait_until(
            lambda: any(e.startswith("rescuer: audit refused") for e in gen.stats().errors),
            timeout=30,
        )
    assert gen.stats().rescued == 0
    assert state(dsn) == before and audit_rows(dsn) == []


def test_the_guard_changes_only_jobs_still_as_observed_and_still_expired(dsn, connect):
    spec = demo_spec(dsn)
    queue_sql = build(spec)
    expired, held, renewed = seed(dsn, [1, 1, 1])
    holder = connect()  # a worker that holds one expired row locked right now
    holder.execute("SELECT 1 FROM queuetop_demo.jobs WHERE id = %s FOR UPDATE", (held,))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE queuetop_demo.jobs SET leased_until = now() + interval '1 minute' "
            "WHERE id = %s",
            (renewed,),
        )  # its worker renewed the lease meanwhile
        params = queue_sql.params(stale_after_s=30.0)
        exact = {**params, "ids": [str(renewed)], "workers": [STALE_WORKER], "tokens": ["3"]}
        assert conn.execute(queue_sql.rescue, exact).fetchall() == []  # no longer expired
        # an observation out of date (another owner, another token) changes nothing
        for worker, token in (("queuetop-worker-8", "3"), (STALE_WORKER, "2"), (None, "3")):
            stale = {**params, "ids": [str(expired)], "workers": [worker], "tokens": [token]}
            assert conn.execute(queue_sql.rescue, stale).fetchall() == []
    assert state(dsn) == [(i, "running", STALE_WORKER, 3) for i in (expired, held, renewed)]
    with rescuer_session(dsn) as conn:
        rescued = rescue_expired(conn, queue_sql, str(spec.table), TableAudit(), 30.0)
        assert [int(r.id) for r in rescued] == [expired]  # the held row is skipped, not waited on
        holder.rollback()
        rescued = rescue_expired(conn, queue_sql, str(spec.table), TableAudit(), 30.0)
        assert [int(r.id) for r in rescued] == [held]  # the next round takes it
    assert sorted(int(r[0]) for r in audit_rows(dsn)) == [expired, held]


USER_QUEUE = """
[queue]
table = "app.jobs"
id = "id"
status = "status"
started_at = "started_at"
worker = "worker"
attempts = "attempts"
lease_until = "leased_until"
lease_token = "lease_token"

[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
failed = ["failed"]
dead = ["dead"]

[queue.policy]
stale_after = "30 seconds"
max_attempts = 3
"""


def test_rescue_refuses_to_start_without_an_audit_trail_and_takes_an_audit_file(
    dsn, tmp_path, capsys
):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA app")
        conn.execute(
            "CREATE TABLE app.jobs (id bigint GENERATED BY DEFAULT AS IDENTITY "
            "PRIMARY KEY, status text NOT NULL DEFAULT 'ready', attempts int NOT NULL "
            "DEFAULT 0, worker text, lease_token bigint NOT NULL DEFAULT 0, "
            "leased_until timestamptz, started_at timestamptz)"
        )
    ids = seed(dsn, [1, 1], table="app.jobs")
    before = state(dsn, "app.jobs")
    spec = tmp_path / "queue.toml"
    spec.write_text(USER_QUEUE)
    args = load(dsn, "--queue", str(spec), "--yes-write-to-my-table", "--rescue")

    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "queuetop init-audit" in err and "--audit-file" in err and "without --rescue" in err
    assert state(dsn, "app.jobs") == before

    audit_file = tmp_path / "audit.jsonl"
    assert main([*args, "--audit-file", str(audit_file)]) == 0
    assert json.loads(capsys.readouterr().out)["rescued"] == 2
    lines = [json.loads(line) for line in audit_file.read_text().splitlines()]
    records, outcomes = lines[:-1], lines[-1]
    assert sorted(int(r["target"]) for r in records) == ids
    assert all(r["action"] == ACTION and r["outcome"] == "pending" for r in records)
    assert outcomes["outcome"] == "committed"
    assert {r["action_id"] for r in records} == {outcomes["action_id"]}
