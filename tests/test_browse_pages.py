"""The job browser's reads against a real server: keyset pages, filters, the dead-letter
table, the whole row; paging deep into 100k rows costs what the first page costs."""

from __future__ import annotations

import json

import psycopg
from demo_queue import setup_demo

from dashboard import browse, db
from dashboard.browse import DEAD_TABLE, QUEUE, BrowseQuery, PageReader, read_row
from dashboard.text.untrusted import escape_controls


class CountingCursor(psycopg.Cursor):
    """Counts the statements run through it (a real cursor: nothing is faked)."""

    executed: list[str] = []

    def execute(self, query, params=None, **kwargs):
        CountingCursor.executed.append(str(query))
        return super().execute(query, params, **kwargs)


def _fill(conn, n: int, status: str = "failed", error: str = "boom") -> None:
    conn.execute(
        "INSERT INTO queuetop_demo.jobs (status, attempts, worker, last_error, payload) "
        "SELECT %s, 1 + g %% 3, 'w-' || g %% 7, %s || ' ' || g, 'p' || g "
        "FROM generate_series(1, %s) AS g",
        (status, error, n),
    )


def test_pages_walk_100k_rows_one_statement_each_in_id_order(dsn, connect):
    spec = setup_demo(dsn)
    setup = connect(autocommit=True)
    _fill(setup, 100_000)
    setup.execute("VACUUM ANALYZE queuetop_demo.jobs")
    reader = PageReader(spec)
    query = BrowseQuery(role="failed", newest_first=True, limit=1000)
    seen: list[int] = []
    pages = 0
    with db.connect_monitor(dsn, timeout_ms=5000) as conn:
        conn.cursor_factory = CountingCursor
        start = None
        while True:
            CountingCursor.executed = []
            page = reader.read(conn, query, start)
            assert len(CountingCursor.executed) == page.statements == 1
            seen += [r.sort_key for r in page.rows]
            pages += 1
            start = page.next_start
            if start is None:
                break
    assert pages == 100
    assert seen == list(range(100_000, 0, -1))  # every job once, newest first


def _plan(conn, reader, query, start) -> dict:
    stmt, params = reader.statement(conn, query, QUEUE, start)
    explain = psycopg.sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) {}").format(stmt)
    return conn.execute(explain, params).fetchone()[0][0]["Plan"]


def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def test_a_deep_page_reads_only_its_own_rows(dsn, connect):
    """EXPLAIN ANALYZE: page 500 of 1,000 reads about a page of rows through the primary key,
    as the first page does, where OFFSET would read the 50,000 rows before it."""
    spec = setup_demo(dsn)
    setup = connect(autocommit=True)
    _fill(setup, 100_000)
    setup.execute("VACUUM ANALYZE queuetop_demo.jobs")
    reader = PageReader(spec)
    query = BrowseQuery(role="failed", limit=100)
    with db.connect_monitor(dsn, timeout_ms=5000) as conn:
        first = _plan(conn, reader, query, None)
        deep = _plan(conn, reader, query, browse.PageStart(50_000, QUEUE))
    for plan in (first, deep):
        nodes = list(_nodes(plan))
        assert plan["Node Type"] == "Limit"
        assert not any(n["Node Type"] in ("Sort", "Seq Scan") for n in nodes), nodes
        read = sum(
            n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0)
            for n in nodes
            if "Scan" in n["Node Type"]
        )
        assert read <= 2 * (query.limit + 1), read


def test_dead_role_merges_the_dead_letter_table_and_pages_across_both(dsn, connect):
    spec = setup_demo(dsn)
    setup = connect(autocommit=True)
    setup.execute(
        "INSERT INTO queuetop_demo.jobs (id, status) VALUES (1, 'dead'), (3, 'dead'), "
        "(5, 'dead'), (6, 'ready')"
    )
    setup.execute(
        "INSERT INTO queuetop_demo.jobs_dead (id, status, dead_reason, payload) VALUES "
        "(2, 'failed', 'poison', 'p2'), (4, 'running', 'gone', 'p4'), "
        "(5, 'failed', 'twin', 'p5')"
    )
    reader = PageReader(spec)
    assert reader.sources("dead") == (QUEUE, DEAD_TABLE)
    with db.connect_monitor(dsn) as conn:
        order = []
        start = None
        while True:
            page = reader.read(conn, BrowseQuery(role="dead", limit=2), start)
            assert page.statements == 2
            order += [(r.id, r.source) for r in page.rows]
            if (start := page.next_start) is None:
                break
        oldest = reader.read(conn, BrowseQuery(role="dead", newest_first=False, limit=10))
        poison = reader.read(conn, BrowseQuery(role="dead", text="POIS"))
    assert order == [
        ("5", QUEUE),
        ("5", DEAD_TABLE),
        ("4", DEAD_TABLE),
        ("3", QUEUE),
        ("2", DEAD_TABLE),
        ("1", QUEUE),
    ]
    assert [r.id for r in oldest.rows] == ["1", "2", "3", "4", "5", "5"]
    assert [(r.id, r.dead_reason, r.expired) for r in poison.rows] == [("2", "poison", None)]


def test_text_and_group_filters_take_wildcards_literally(dsn, connect):
    spec = setup_demo(dsn)
    spec = spec.__class__(
        **{
            **spec.__dict__,
            "columns": spec.columns.__class__(
                **{**spec.columns.__dict__, "group": "queue", "payload": "payload"}
            ),
        }
    )
    setup = connect(autocommit=True)
    setup.execute(
        "INSERT INTO queuetop_demo.jobs (queue, status, last_error, payload) VALUES "
        "('mail', 'failed', 'smtp 50% down', 'a'), ('mail', 'failed', 'smtp 50x', 'b'),"
        " ('sms', 'failed', 'quota', 'order-77'), ('sms', 'ready', 'quota', 'c')"
    )
    reader = PageReader(spec)
    with db.connect_monitor(dsn) as conn:

        def ids(**kw):
            return [r.id for r in reader.read(conn, BrowseQuery(role="failed", **kw)).rows]

        assert ids(text="50%") == ["1"]  # % is a character here, not a wildcard
        assert ids(text="order-77") == ["3"]  # the payload
        assert ids(text="2") == ["2"]  # an id
        assert ids(group="sms") == ["3"]
        assert ids(group="mail", text="smtp") == ["2", "1"]
        assert ids(group="none") == []


def test_scheduled_and_ready_split_on_the_due_time(dsn, connect):
    setup = connect(autocommit=True)
    setup.execute(
        "CREATE TABLE jobs (id bigserial PRIMARY KEY, status text NOT NULL, "
        "run_at timestamptz NOT NULL DEFAULT now(), created_at timestamptz "
        "NOT NULL DEFAULT now())"
    )
    setup.execute(
        "INSERT INTO jobs (status, run_at) VALUES ('ready', now() - interval '1 min'),"
        " ('ready', now() + interval '1 hour'), ('queued', now() + interval '1 day')"
    )
    from dashboard import config

    with db.connect_monitor(dsn) as conn:
        spec = config.validate(conn, config.build_spec(table="jobs"))
        reader = PageReader(spec)
        assert "scheduled" in browse.browse_roles(spec)  # run_at, found by its usual name
        ready = reader.read(conn, BrowseQuery(role="ready"))
        later = reader.read(conn, BrowseQuery(role="scheduled"))
    assert [r.id for r in ready.rows] == ["1"]
    assert [r.id for r in later.rows] == ["3", "2"]


def test_the_whole_row_is_cut_on_the_server_and_escaped(dsn, connect):
    spec = setup_demo(dsn)
    setup = connect(autocommit=True)
    payload = "\x1b[2J" + "x" * 5000 + "\nend"
    (job_id,) = setup.execute(
        "INSERT INTO queuetop_demo.jobs (status, payload) VALUES ('failed', %s) RETURNING id",
        (payload,),
    ).fetchone()
    setup.execute(
        "INSERT INTO queuetop_demo.jobs_dead (id, status, dead_reason) VALUES (99, 'failed', %s)",
        ("bad\tinput",),
    )
    reader = PageReader(spec)
    with db.connect_monitor(dsn) as conn:
        row = read_row(conn, reader, str(job_id), QUEUE, cut=100)
        dead = read_row(conn, reader, "99", DEAD_TABLE)
        gone = read_row(conn, reader, "12345", QUEUE)
    names = [f.name for f in row.fields]
    assert names[:3] == ["id", "queue", "status"]  # the table's order
    [field] = [f for f in row.fields if f.name == "payload"]
    assert field.length == len(payload) and field.cut_off == len(payload) - 100
    shown = field.shown()
    assert shown.startswith("\\x1b[2Jxxx") and "\x1b" not in shown and "\n" not in shown
    assert shown.endswith(f"… ({len(payload) - 100:,} more characters)")
    assert {f.name: f.shown() for f in dead.fields}["dead_reason"] == "bad\\tinput"
    assert not gone.found
    assert escape_controls("a\u202eb\u2028") == "a\\u202eb\\u2028"
    assert json.loads({f.name: f.text for f in row.fields}["id"]) == job_id


def test_a_job_that_failed_then_succeeded_is_found_in_the_done_view(dsn, connect):
    # it ends done with its last error: the browser had no done view, so a job that panel 5
    # counted as failed could not be found again
    spec = setup_demo(dsn)
    assert "done" in browse.browse_roles(spec)
    setup = connect(autocommit=True)
    _fill(setup, 50, status="done", error="")
    setup.execute("UPDATE queuetop_demo.jobs SET last_error = NULL")
    retried = setup.execute(
        "INSERT INTO queuetop_demo.jobs (status, attempts, last_error) "
        "VALUES ('done', 2, 'timeout talking to smtp') RETURNING id"
    ).fetchone()[0]
    reader = PageReader(spec)
    with db.connect_monitor(dsn, timeout_ms=5000) as conn:
        page = reader.read(conn, BrowseQuery(role="done", text="smtp"), None)
        assert [(r.id, r.status, r.last_error) for r in page.rows] == [
            (str(retried), "done", "timeout talking to smtp")
        ]
        everything = reader.read(conn, BrowseQuery(role="done"), None)
    truth = setup.execute("SELECT count(*) FROM queuetop_demo.jobs WHERE status = 'done'")
    assert len(everything.rows) == truth.fetchone()[0] == 51
