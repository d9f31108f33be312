"""Table and column names with quotes, spaces and semicolons work and inject nothing."""

from __future__ import annotations

import json

from psycopg import sql

from dashboard import config, db, monitor
from dashboard.cli import main

SCHEMA = 'we"ird; schema'
TABLE = 'my "jobs"; DROP TABLE canary; --'
COLS = {
    "id": "job id",
    "status": 'st"at;us',
    "started_at": "started at; --",
    "worker": "wor'ker",
    "lease_token": 'tok"en',
}

SPEC_TOML = """
[queue]
table = '"we""ird; schema"."my ""jobs""; DROP TABLE canary; --"'
id = 'job id'
status = 'st"at;us'
started_at = 'started at; --'
worker = "wor'ker"
lease_token = 'tok"en'
[queue.states]
ready = ["it's ready"]
running = ['run"ning']
done = ["done; DROP TABLE canary"]
[queue.policy]
stale_after = "1 minute"
"""


def make_table(conn) -> None:
    t = sql.Identifier(SCHEMA, TABLE)
    c = {k: sql.Identifier(v) for k, v in COLS.items()}
    conn.execute("CREATE TABLE canary (x int)")
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(SCHEMA)))
    conn.execute(
        sql.SQL(
            "CREATE TABLE {t} ({id} serial PRIMARY KEY, {status} text NOT NULL, "
            "{started_at} timestamptz, {worker} text, {lease_token} int NOT NULL DEFAULT 0)"
        ).format(t=t, **c)
    )
    insert = sql.SQL("INSERT INTO {t} ({status}, {started_at}, {worker}) VALUES (%s, %s, %s)")
    insert = insert.format(t=t, **c)
    conn.execute(insert, ("it's ready", None, None))
    conn.execute(insert, ("it's ready", None, None))
    running = sql.SQL(
        "INSERT INTO {t} ({status}, {started_at}, {worker}, {lease_token}) "
        "VALUES ('run\"ning', now() - interval '1 hour', 'w;1', 3)"
    )
    conn.execute(running.format(t=t, **c))
    conn.execute(insert, ("done; DROP TABLE canary", None, None))


def test_snapshot_of_oddly_named_table(dsn, connect, tmp_path, capsys):
    setup = connect(autocommit=True)
    make_table(setup)
    holder = connect()
    holder.execute(sql.SQL("SELECT 1 FROM {} FOR UPDATE").format(sql.Identifier(SCHEMA, TABLE)))

    spec_file = tmp_path / "odd.toml"
    spec_file.write_text(SPEC_TOML)
    assert main(["snapshot", "--json", "--dsn", dsn, "--queue", str(spec_file)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["ready"] == 2
    assert data["counts"]["running"] == 1
    assert data["counts"]["done"] == 1
    assert data["locked"] == {"ready": 2, "running": 1}
    [lease] = data["stale_leases"]
    assert (lease["worker"], lease["lease_token"]) == ("w;1", 3)
    assert data["queue"] == '"we""ird; schema"."my ""jobs""; DROP TABLE canary; --"'
    holder.rollback()
    assert setup.execute("SELECT to_regclass('canary') IS NOT NULL").fetchone()[0]


def test_table_flag_parses_quoted_names(dsn, connect):
    make_table(connect(autocommit=True))
    spec = config.build_spec(
        table='"we""ird; schema"."my ""jobs""; DROP TABLE canary; --"',
        id_column="job id",
        status_column='st"at;us',
    )
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, spec)
        assert spec.table.schema == SCHEMA and spec.table.name == TABLE
        snap = monitor.collect(mon, spec)
    assert snap.by_status == {"it's ready": 2, 'run"ning': 1, "done; DROP TABLE canary": 1}
