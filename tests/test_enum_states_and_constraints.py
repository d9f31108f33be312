"""Queue tables whose state is an enum, and a queue's own constraint refusing an action."""

from __future__ import annotations

import pytest

from dashboard import config, db, monitor
from dashboard.actions import TableAudit, observe_jobs, requeue
from dashboard.config.parse import spec_from_dict
from dashboard.errors import UserError
from dashboard.setup import schema


def test_enum_state_counted_through_its_partial_indexes(dsn, connect):
    setup = connect(autocommit=True)
    setup.execute("CREATE TYPE job_state AS ENUM ('todo', 'doing', 'succeeded')")
    setup.execute(
        "CREATE TABLE jobs (id bigserial PRIMARY KEY, status job_state NOT NULL, "
        "queue text NOT NULL DEFAULT 'q1')"
    )
    setup.execute("CREATE INDEX jobs_todo ON jobs (id) WHERE status = 'todo'")
    setup.execute("CREATE INDEX jobs_doing ON jobs (id) WHERE status = 'doing'")
    setup.execute("INSERT INTO jobs (status) SELECT 'succeeded' FROM generate_series(1, 3000)")
    setup.execute(
        "INSERT INTO jobs (status, queue) SELECT 'todo', 'q' || (g % 2) "
        "FROM generate_series(1, 5) g"
    )
    setup.execute("INSERT INTO jobs (status) VALUES ('doing')")
    setup.execute("ANALYZE jobs")
    spec = spec_from_dict(
        {
            "queue": {
                "table": "jobs",
                "group": "queue",
                "states": {"ready": "todo", "running": "doing", "done": "succeeded"},
            }
        },
        "test",
    )
    with db.connect_monitor(dsn) as mon:
        snap = monitor.collect(mon, config.validate(mon, spec))
    assert snap.count_mode == "index"  # an enum value compared with its own type: indexes serve
    assert (snap.counts["ready"], snap.counts["running"], snap.counts["done"]) == (5, 1, 3000)
    assert {g.name: g.ready for g in snap.groups} == {"q0": 2, "q1": 3}


def test_a_unique_index_of_the_queue_refusing_a_requeue_is_one_clear_line(dsn, connect):
    setup = connect(autocommit=True)
    schema.init_audit(setup)
    setup.execute("CREATE TABLE jobs (id bigint PRIMARY KEY, status text NOT NULL, key text)")
    setup.execute("CREATE UNIQUE INDEX jobs_one_waiting_key ON jobs (key) WHERE status = 'pending'")
    setup.execute("INSERT INTO jobs VALUES (1, 'failed', 'k'), (2, 'pending', 'k')")
    with db.connect_action(dsn) as action:
        spec = config.validate(action, config.build_spec(table="jobs"))
        seen, _ = observe_jobs(action, spec, ["1"])
        with pytest.raises(
            UserError,
            match="refused the change through its constraint "
            "jobs_one_waiting_key .*nothing changed",
        ):
            requeue(action, spec, seen, audit=TableAudit())
    assert setup.execute("SELECT status FROM jobs WHERE id = 1").fetchone() == ("failed",)


def test_a_check_constraint_refusing_the_state_written_is_explained_as_a_value(dsn, connect):
    # a CHECK refuses a value, not a key: it was explained as "another job may hold the
    # same key", which sent the operator looking for a duplicate
    setup = connect(autocommit=True)
    schema.init_audit(setup)
    setup.execute(
        "CREATE TABLE jobs (id bigint PRIMARY KEY, status text NOT NULL "
        "CONSTRAINT jobs_status_known CHECK (status IN ('pending', 'running', 'failed')))"
    )
    setup.execute("INSERT INTO jobs VALUES (1, 'failed')")
    spec = spec_from_dict(
        {
            "queue": {
                "table": "jobs",
                "states": {"ready": "queued", "running": "running", "failed": "failed"},
            }
        },
        "test",
    )
    with db.connect_action(dsn) as action:
        spec = config.validate(action, spec)
        seen, _ = observe_jobs(action, spec, ["1"])
        with pytest.raises(UserError) as refused:
            requeue(action, spec, seen, audit=TableAudit())
    said = str(refused.value)
    assert "CHECK constraint jobs_status_known" in said and "same key" not in said
    assert "a value the constraint allows" in said and "nothing changed" in said
    assert setup.execute("SELECT status FROM jobs WHERE id = 1").fetchone() == ("failed",)
    assert setup.execute("SELECT count(*) FROM queuetop.audit_log").fetchone() == (0,)
