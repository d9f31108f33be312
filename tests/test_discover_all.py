"""`queuetop discover` on one database holding every library it knows: the twelve of
test_discover.py and the eleven of the other ecosystems (delayed_job, queue_classic,
Laravel, pgmq, Hangfire, db-scheduler, JobRunr, dramatiq-pg, django-q2, awa, Absurd), each
schema made by the library itself (its migrations or installer) or by its published SQL.
Each is listed with the right preset and version, at high confidence; none of a library's
side tables is listed as a queue of its own."""

from __future__ import annotations

import json

import psycopg
from library_apps.hangfire_app import install as hangfire_install
from test_adapter_absurd import UUID_OSSP, UUID_V4, absurd_python  # noqa: F401 (fixture)
from test_adapter_awa import Awa
from test_adapter_delayed_job import app as delayed_job_app
from test_adapter_django_q2 import DjangoQ, q2_python  # noqa: F401 (fixture)
from test_adapter_dramatiq_pg import Dramatiq, dramatiq_python  # noqa: F401 (fixture)
from test_discover import (  # noqa: F401 (fixtures)
    DECOY_TABLES,
    EXPECTED,
    dbos_python,
    django_python,
    oban_python,
    twelve,
)

from dashboard.cli import main
from tests.emulated_workers import SCHEMAS

# table -> (adapter, version) as discovery must name them
OTHER_ECOSYSTEMS = {
    "public.delayed_jobs": ("delayed-job", "4.x"),
    "public.queue_classic_jobs": ("queue-classic", "4.x"),
    "public.jobs": ("laravel", "5.x-13.x"),
    "pgmq.q_orders": ("pgmq", "1.10 to 1.13"),
    "hangfire.job": ("hangfire", "1.20.10-1.21.x"),
    "public.scheduled_tasks": ("db-scheduler", "15.x-16.x"),
    "public.jobrunr_jobs": ("jobrunr", "8.x"),
    "dramatiq.queue": ("dramatiq-pg", "0.10 to 0.12"),
    "public.django_q_ormq": ("django-q2", "1.10 to 1.11"),
    "awa.jobs_hot": ("awa", "0.6.5 to 0.6.9"),
    "absurd.r_mail": ("absurd", "0.5.1"),
}


def test_every_library_in_one_database(tmp_path, request, capsys):
    dsn = request.getfixturevalue("twelve")  # the twelve of test_discover.py first
    with psycopg.connect(dsn, autocommit=True) as conn:
        delayed_job_app(dsn, "schema")
        for script in ("queue_classic.sql", "laravel.sql", "db_scheduler.sql", "jobrunr.sql"):
            conn.execute((SCHEMAS / script).read_text().encode())
        conn.execute((SCHEMAS / "pgmq.sql").read_bytes())  # its install script
        conn.execute("SELECT pgmq.create('orders')")
        hangfire_install(conn, 23)
        absurd_sql = (SCHEMAS / "absurd.sql").read_bytes()
        if not conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'uuid-ossp'"
        ).fetchone():
            absurd_sql = absurd_sql.replace(UUID_OSSP, UUID_V4)
        conn.execute(absurd_sql)
        conn.execute("SELECT absurd.create_queue('mail')")
    # the tests' worker apps each keep a side_effects table of their own: not a library's
    drop_side_table = "DROP TABLE IF EXISTS side_effects"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(drop_side_table)
    Dramatiq(request.getfixturevalue("dramatiq_python"), dsn, tmp_path).app("init")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(drop_side_table)
    DjangoQ(request.getfixturevalue("q2_python"), dsn, tmp_path).run(
        "manage.py", "migrate", "--verbosity", "0"
    )
    Awa("0.6.9", dsn, tmp_path).run("migrate")  # canonical until a worker starts

    assert main(["discover", "--json", "--dsn", dsn]) == 0
    listed = json.loads(capsys.readouterr().out)["queues"]
    by_table = {q["table"]: q for q in listed}
    everything = {**EXPECTED, **OTHER_ECOSYSTEMS}
    found = {
        t: (by_table[t]["adapter"], by_table[t]["version"]) for t in everything if t in by_table
    }
    assert found == everything
    assert all(by_table[t]["confidence"] == "high" for t in OTHER_ECOSYSTEMS)
    for table, (adapter, _) in OTHER_ECOSYSTEMS.items():
        assert by_table[table]["command"].startswith(f"queuetop watch --preset {adapter}")
    # nothing else is a queue: no library's side table (logs, archives, servers, results)
    assert set(by_table) - DECOY_TABLES == set(everything), sorted(
        set(by_table) - DECOY_TABLES - set(everything)
    )
