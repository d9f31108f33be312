"""Workers' own statements, read from pg_stat_statements, map words no list knows.

A table whose column names and state words mean nothing to any word list (`k` holds
'blip', 'zorp', 'quux'; `t1`, `who`, `t2`): only its workers' statements say what it is.
Its workers claim and finish jobs on a server with pg_stat_statements loaded, then
disconnect (so pg_stat_activity shows nothing of theirs): discovery reads the claim's
shape there (`SET k = $1, t1 = now(), who = $2 … WHERE k = $3 … FOR UPDATE SKIP LOCKED`,
the constants normalised away), and the rows' columns give the values. The same table on a
server without pg_stat_statements is not offered above low: the statements are the evidence.
"""

from __future__ import annotations

import json
import shlex

import psycopg
import pytest
import servers

from dashboard.cli import main

TABLE = "public.gizmo_flow"
DDL = """
CREATE TABLE gizmo_flow (
    id   bigserial PRIMARY KEY,
    k    text NOT NULL,
    blob jsonb,
    t1   timestamptz,
    who  text,
    t2   timestamptz
)"""
CLAIM = """
UPDATE gizmo_flow SET k = 'zorp', t1 = now(), who = %s
WHERE id = (SELECT id FROM gizmo_flow WHERE k = 'blip' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id"""
FINISH = "UPDATE gizmo_flow SET k = 'quux', t2 = now() WHERE id = %s"
TRUTH = {"ready": 4, "running": 3, "done": 5}


@pytest.fixture(scope="module")
def statements_server():
    try:
        cluster = servers.Cluster(servers.embedded_bindir()).init()
        cluster.start("-c", "shared_preload_libraries=pg_stat_statements")
    except servers.Unavailable as exc:
        pytest.fail(f"a server with pg_stat_statements did not start: {exc}")
    yield cluster
    cluster.remove()


def stage(dsn: str) -> str:
    """The table, its rows staged out of pg_stat_statements' sight, then the workers' own
    claims and finishes in sight; the id of the one stuck claim (three hours old)."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("SET pg_stat_statements.track = 'none'") if _has_pgss(admin) else None
        admin.execute(DDL)
        admin.execute(
            "INSERT INTO gizmo_flow (k, blob, t1, who, t2) SELECT 'quux', "
            "jsonb_build_object('n', g), now() - interval '9 minutes', 'w-1', "
            "now() - interval '8 minutes' FROM generate_series(1, 4) g"
        )
        admin.execute(
            "INSERT INTO gizmo_flow (k, blob) "
            "SELECT 'blip', jsonb_build_object('n', g) FROM generate_series(10, 17) g"
        )
    with psycopg.connect(dsn, application_name="gizmo-worker") as worker:
        claimed = []
        for n in range(4):
            with worker.transaction():
                claimed.append(worker.execute(CLAIM, (f"w-{n}",)).fetchone()[0])
        with worker.transaction():
            worker.execute(FINISH, (claimed[0],))
    stuck = claimed[2]
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("SET pg_stat_statements.track = 'none'") if _has_pgss(admin) else None
        admin.execute(
            "UPDATE gizmo_flow SET t1 = now() - interval '3 hours' WHERE id = %s", (stuck,)
        )
    return str(stuck)


def _has_pgss(conn: psycopg.Connection) -> bool:
    return (
        conn.execute("SELECT current_setting('shared_preload_libraries')")
        .fetchone()[0]
        .find("pg_stat_statements")
        >= 0
    )


def discovered(capsys, dsn: str) -> dict | None:
    assert main(["discover", "--json", "--dsn", dsn]) == 0
    found = {q["table"]: q for q in json.loads(capsys.readouterr().out)["queues"]}
    return found.get(TABLE)


def test_the_claim_in_pg_stat_statements_maps_invented_words(statements_server, capsys):
    dsn = statements_server.dsn
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION pg_stat_statements")
    stuck = stage(dsn)
    with psycopg.connect(dsn) as admin:
        # ground truth: the claim is there, its constants normalised away, and no worker
        # session is left for pg_stat_activity to show
        texts = [r[0] for r in admin.execute("SELECT query FROM pg_stat_statements")]
        assert any("SKIP LOCKED" in t and "gizmo_flow" in t and "$" in t for t in texts)
        assert not any("'zorp'" in t for t in texts)
        assert not admin.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = 'gizmo-worker'"
        ).fetchall()
        counts = dict(admin.execute("SELECT k, count(*) FROM gizmo_flow GROUP BY k").fetchall())
    assert counts == {"blip": TRUTH["ready"], "zorp": TRUTH["running"], "quux": TRUTH["done"]}

    found = discovered(capsys, dsn)
    assert found is not None and found["confidence"] in ("high", "medium"), found
    assert any("pg_stat_statements" in line for line in found["evidence"]), found["evidence"]
    flags = shlex.split(found["command"])[2:]
    assert main(["snapshot", "--json", *flags]) == 0
    snap = json.loads(capsys.readouterr().out)
    assert {r: n for r, n in snap["counts"].items() if n} == TRUTH
    assert snap["unmapped"] == []
    assert [str(s["id"]) for s in snap["stale_leases"]] == [stuck]
    assert main(["check", "--max-stale", "0", *flags]) == 1
    assert capsys.readouterr().out.startswith("OVER  stale leases: 1 > max 0")


def test_without_the_statements_it_is_not_offered_above_low(dsn, capsys):
    stage(dsn)
    found = discovered(capsys, dsn)
    assert found is None or found["confidence"] == "low", found
