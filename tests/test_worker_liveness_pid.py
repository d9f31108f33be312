"""A worker's liveness by its session needs the claiming backend's pid, not only its name:
any role may name its session `queuetop-worker-1`, and must not make a dead worker's
lease look alive by doing so (issue 19, item 8)."""

from __future__ import annotations

import pytest
from demo_queue import setup_demo
from helpers import wait_until

from dashboard import monitor
from dashboard.loadgen import strategies

WORKER = "queuetop-worker-1"


def claim_as_the_load_generator(conn, spec) -> int:
    """One ready job claimed by the load generator's own claim statement on `conn`."""
    queue_sql = strategies.build(spec)
    params = queue_sql.params(worker=WORKER, lease_s=0.01, batch=1)
    (job_id, _token) = conn.execute(queue_sql.claims["skip-locked"], params).fetchone()
    return job_id


def lease(mon, spec, job_id):
    stale = {s.id: s for s in monitor.collect(mon, spec).stale_leases}
    return stale.get(job_id)


@pytest.mark.matrix
def test_a_session_named_like_a_dead_worker_keeps_nothing_alive(server, dsn, connect):
    spec = setup_demo(dsn, jobs=2)
    mon = connect(autocommit=True, application_name="queuetop")
    worker = connect(autocommit=True, application_name=WORKER)
    job_id = claim_as_the_load_generator(worker, spec)
    claimed_by = worker.info.backend_pid
    row = mon.execute(
        "SELECT worker, worker_pid FROM queuetop_demo.jobs WHERE id = %s", (job_id,)
    ).fetchone()
    assert row == (WORKER, claimed_by)  # the claim records the backend that made it
    # the real worker, alive: its lease (run out at once) is a live worker's
    live = wait_until(lambda: lease(mon, spec, job_id))  # its 10 ms lease has run out
    assert live.worker_alive is True
    worker.close()  # the worker dies; an impostor takes its name
    impostor = connect(autocommit=True, application_name=WORKER)
    assert impostor.info.backend_pid != claimed_by

    def named() -> set[int]:
        query = "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
        return {r[0] for r in mon.execute(query, (WORKER,))}

    # the name is live, the claimer is gone (a closed backend leaves pg_stat_activity a
    # moment after its client: CI saw both once)
    wait_until(lambda: named() == {impostor.info.backend_pid})
    assert lease(mon, spec, job_id).worker_alive is False


def test_a_lease_without_a_pid_is_unknown_not_alive(dsn, connect):
    """A row claimed by something that recorded no pid: the name alone proves nothing."""
    spec = setup_demo(dsn)
    setup = connect(autocommit=True)
    (job_id,) = setup.execute(
        "INSERT INTO queuetop_demo.jobs (status, worker, leased_until) "
        "VALUES ('running', %s, now() - interval '1 minute') RETURNING id",
        (WORKER,),
    ).fetchone()
    connect(autocommit=True, application_name=WORKER)  # a session of that name exists
    mon = connect(autocommit=True, application_name="queuetop")
    assert lease(mon, spec, job_id).worker_alive is None


def _columns(conn, table: str) -> set[str]:
    return {
        r[0]
        for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
            "AND NOT attisdropped",
            (table,),
        )
    }


def test_init_demo_adds_the_column_to_an_older_demo_queue(dsn, connect, capsys):
    from dashboard.cli import main

    setup_demo(dsn, jobs=1)
    setup = connect(autocommit=True)
    for table in ("queuetop_demo.jobs_dead", "queuetop_demo.jobs"):  # as an older release made it
        setup.execute(f"ALTER TABLE {table} DROP COLUMN worker_pid")
    holder = connect()  # the demo still running on it: its ALTER cannot take the lock
    holder.execute("SELECT * FROM queuetop_demo.jobs LIMIT 1")
    assert main(["init-demo", "--dsn", dsn]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "init-demo --reset" in err
    assert "worker_pid" not in _columns(setup, "queuetop_demo.jobs")
    holder.rollback()
    assert main(["init-demo", "--dsn", dsn]) == 0
    for table in ("queuetop_demo.jobs", "queuetop_demo.jobs_dead"):
        assert "worker_pid" in _columns(setup, table)
    assert setup.execute("SELECT count(*) FROM queuetop_demo.jobs").fetchone()[0] == 1
