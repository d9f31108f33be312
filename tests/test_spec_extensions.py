"""The spec's extensions on a table of our own: scheduled jobs, groups, worker heartbeat
tables, per-job heartbeats, array worker columns, naive UTC timestamps, history tables."""

from __future__ import annotations

import pytest

from dashboard import config, db, monitor
from dashboard.actions import ObservedJob, TableAudit, observe_jobs, requeue
from dashboard.errors import UserError

DDL = """
CREATE SCHEMA app;
CREATE TABLE app.tasks (
    id       bigserial PRIMARY KEY,
    queue    text NOT NULL DEFAULT 'default',
    state    text NOT NULL,
    run_at   timestamp without time zone NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
    created  timestamp without time zone NOT NULL DEFAULT (now() AT TIME ZONE 'UTC'),
    owner    text[] NOT NULL DEFAULT '{}',
    beat     timestamptz,
    tries    integer NOT NULL DEFAULT 0,
    error    text
);
CREATE TABLE app.workers (worker_id text PRIMARY KEY, seen timestamp without time zone);
CREATE TABLE app.tasks_log (task_id bigint, state text);
"""

SPEC = """
[queue]
table = "app.tasks"
status = "state"
group = "queue"
created_at = "created"
scheduled_at = "run_at"
worker = "owner"
worker_element = 2
attempts = "tries"
last_error = "error"
time_zone = "UTC"

[queue.workers]
table = "app.workers"
key = "worker_id"
last_seen = "seen"
timeout = "30 seconds"

[queue.states]
ready = ["queued"]
scheduled = ["retrying"]
running = ["working"]
done = ["ok"]
failed = ["error"]
dead = ["gave_up"]
"""


@pytest.fixture
def tasks(dsn, connect, tmp_path):
    setup = connect(autocommit=True)
    setup.execute(DDL)
    setup.execute("CREATE SCHEMA queuetop")
    from dashboard.setup import schema

    schema.init_audit(setup)
    path = tmp_path / "tasks.toml"
    path.write_text(SPEC)
    return setup, path


def _insert(conn, state, queue="default", run_in_s=0, owner=None, age_s=0):
    return conn.execute(
        "INSERT INTO app.tasks (queue, state, run_at, created, owner) VALUES (%s, %s, "
        "(now() AT TIME ZONE 'UTC') + make_interval(secs => %s), "
        "(now() AT TIME ZONE 'UTC') - make_interval(secs => %s), %s) RETURNING id",
        (queue, state, run_in_s - age_s, age_s, owner or []),
    ).fetchone()[0]


def _monitor(dsn, zone="America/New_York"):
    """A monitoring session in another zone: naive UTC timestamps must still read right."""
    conn = db.connect_monitor(dsn)
    conn.execute(f"SET TimeZone = '{zone}'")
    return conn


def test_scheduled_groups_and_worker_liveness_through_a_heartbeat_table(dsn, tasks):
    setup, path = tasks
    for _ in range(3):
        _insert(setup, "queued", "emails", age_s=120)
    _insert(setup, "queued", "emails", run_in_s=3600)  # due in an hour: scheduled
    _insert(setup, "retrying", "reports", run_in_s=60)
    _insert(setup, "queued", "reports", age_s=10)
    setup.execute(
        "INSERT INTO app.workers VALUES ('w-live', now() AT TIME ZONE 'UTC'), "
        "('w-dead', (now() AT TIME ZONE 'UTC') - interval '5 minutes')"
    )
    live = _insert(setup, "working", "emails", owner=["node-1", "w-live"], age_s=3600)
    dead = _insert(setup, "working", "reports", owner=["node-2", "w-dead"])
    gone = _insert(setup, "working", "reports", owner=["node-3", "w-gone"])
    setup.execute("INSERT INTO app.tasks (state) SELECT 'ok' FROM generate_series(1, 4)")

    with _monitor(dsn) as mon:
        spec = config.validate(mon, config.load_file(path))
        snap = monitor.collect(mon, spec)
    assert snap.counts == {
        "ready": 4,
        "scheduled": 2,
        "running": 3,
        "done": 4,
        "failed": 0,
        "dead": 0,
    }
    assert snap.roles[1] == "scheduled"
    assert 115 < snap.oldest_ready_age_s < 3600  # the due ones, read as UTC in any zone
    stale = {s.id: s for s in snap.stale_leases}
    assert set(stale) == {dead, gone}  # the live worker's hour-long job is not stale
    assert stale[dead].worker == "w-dead" and stale[dead].worker_alive is False
    assert stale[gone].worker_alive is False
    assert snap.stale_count == 2
    groups = {g.name: g for g in snap.groups}
    assert (
        groups["emails"].ready,
        groups["emails"].scheduled,
        groups["emails"].running,
        groups["emails"].stale_leases,
    ) == (3, 1, 1, 0)
    assert (
        groups["reports"].ready,
        groups["reports"].scheduled,
        groups["reports"].running,
        groups["reports"].stale_leases,
    ) == (1, 1, 2, 2)
    assert groups["emails"].oldest_ready_age_s > 115
    assert live not in stale


def test_without_time_zone_naive_utc_reads_in_the_session_zone(dsn, tasks):
    """What time_zone fixes: a worker seen 1 minute ago in UTC reads as hours off in New York."""
    setup, path = tasks
    setup.execute("INSERT INTO app.workers VALUES ('w', now() AT TIME ZONE 'UTC')")
    _insert(setup, "working", owner=["n", "w"])
    spec = config.load_file(path)
    with _monitor(dsn, "Asia/Tokyo") as mon:  # UTC+9: the fresh heartbeat reads 9 h old
        wrong = monitor.collect(
            mon, config.validate(mon, spec.__class__(**{**spec.__dict__, "time_zone": None}))
        )
        right = monitor.collect(mon, config.validate(mon, spec))
    assert len(wrong.stale_leases) == 1 and right.stale_leases == ()


def test_per_job_heartbeat_and_history_table(dsn, tasks):
    setup, path = tasks
    path.write_text(
        SPEC.replace("worker_element = 2", 'worker_element = 2\nheartbeat = "beat"').replace(
            "[queue.states]",
            '[queue.history]\ntable = "app.tasks_log"\nstatus = "state"\n\n[queue.states]',
        )
        + '\n[queue.policy]\nheartbeat_timeout = "20s"\n'
    )
    beating = _insert(setup, "working", owner=["n", "w1"])
    silent = _insert(setup, "working", owner=["n", "w2"])
    setup.execute("UPDATE app.tasks SET beat = now() WHERE id = %s", (beating,))
    setup.execute(
        "UPDATE app.tasks SET beat = now() - interval '1 minute' WHERE id = %s", (silent,)
    )
    setup.execute(
        "INSERT INTO app.tasks_log SELECT g, CASE WHEN g % 5 = 0 THEN 'error' "
        "ELSE 'ok' END FROM generate_series(1, 50) g"
    )
    setup.execute("INSERT INTO app.tasks (state) VALUES ('ok')")  # not counted: history is
    with _monitor(dsn) as mon:
        spec = config.validate(mon, config.load_file(path))
        assert spec.liveness == "heartbeat"
        snap = monitor.collect(mon, spec)
    assert [s.id for s in snap.stale_leases] == [silent]
    assert snap.stale_leases[0].worker_alive is False
    assert (snap.counts["done"], snap.counts["failed"]) == (40, 10)


def test_requeue_keeps_an_array_worker_column_and_works_across_zones(dsn, tasks):
    setup, path = tasks
    setup.execute(
        "INSERT INTO app.workers VALUES ('w-dead', "
        "(now() AT TIME ZONE 'UTC') - interval '5 minutes')"
    )
    job = _insert(setup, "working", owner=["node-2", "w-dead"])
    with _monitor(dsn) as mon:
        spec = config.validate(mon, config.load_file(path))
    action = db.connect_action(dsn)
    action.execute("SET TimeZone = 'Asia/Tokyo'")
    action.commit()
    seen, _ = observe_jobs(action, spec, [str(job)])
    assert seen[0].expired is True and seen[0].worker == "w-dead"
    result = requeue(action, spec, seen, audit=TableAudit())
    action.close()
    assert result.changed == (str(job),)
    assert setup.execute("SELECT state, owner FROM app.tasks WHERE id = %s", (job,)).fetchone() == (
        "queued",
        ["node-2", "w-dead"],
    )


@pytest.mark.parametrize(
    "text,message",
    [
        (
            '[queue]\ntable = "t"\nstatus = { derived = "x" }\n[queue.states]\nready = "a"\n'
            'running = "b"',
            "needs adapter",
        ),
        ('[queue]\ntable = "t"\n[queue.states]\nready = "a"\nrunning = "a"', "more than one role"),
        (
            '[queue]\ntable = "t"\nworker_element = 0\n[queue.states]\nready = "a"\nrunning = "b"',
            "worker_element",
        ),
        (
            '[queue]\ntable = "t"\n[queue.workers]\ntable = "w"\n[queue.states]\nready = "a"\n'
            'running = "b"',
            "[queue.workers] needs key, last_seen",
        ),
        (
            '[queue]\ntable = "t"\n[queue.states]\nready = "a"\nrunning = "b"\n[queue.policy]\n'
            'dead_letter = "status:faild"',
            "not a value of any role",
        ),
    ],
)
def test_bad_extensions_are_one_line(tmp_path, text, message):
    path = tmp_path / "q.toml"
    path.write_text(text)
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("]", r"\]")):
        config.load_file(path)


def test_adapter_sql_that_does_not_exist_is_named(dsn, tasks, tmp_path):
    setup, _ = tasks
    path = tmp_path / "q.toml"
    path.write_text(
        '[queue]\ntable = "app.tasks"\nadapter = "nosuch"\n'
        'status = { derived = "state" }\n[queue.states]\nready = "a"\nrunning = "b"'
    )
    with db.connect_monitor(dsn) as mon, pytest.raises(UserError, match="has no SQL for status"):
        config.validate(mon, config.load_file(path))


def test_a_timestamp_lease_token_guards_a_requeue_from_the_dashboard(dsn, tasks):
    """The dashboard acts on what the snapshot showed: the token as PostgreSQL prints it."""
    setup, path = tasks
    path.write_text(SPEC.replace("worker_element = 2", 'worker_element = 2\nlease_token = "beat"'))
    setup.execute(
        "INSERT INTO app.workers VALUES ('w-dead', "
        "(now() AT TIME ZONE 'UTC') - interval '5 minutes')"
    )
    job = _insert(setup, "working", owner=["node-2", "w-dead"])
    setup.execute("UPDATE app.tasks SET beat = now() - interval '1.234567 seconds'")
    with _monitor(dsn, "UTC") as mon:
        spec = config.validate(mon, config.load_file(path))
        [lease] = monitor.collect(mon, spec).stale_leases
    action = db.connect_action(dsn)
    result = requeue(action, spec, [ObservedJob.from_stale(lease)], audit=TableAudit())
    action.close()
    assert result.changed == (str(job),) and not result.skipped
