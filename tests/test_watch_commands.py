"""`queuetop watch` and `queuetop demo`: wiring up to the point where the screen opens."""

from __future__ import annotations

import psycopg

from dashboard.cli import build_parser
from dashboard.setup.schema import ensure_demo


def test_demo_creates_the_demo_schema_only_when_absent(dsn):
    ensure_demo(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO queuetop_demo.jobs DEFAULT VALUES")
    ensure_demo(dsn)  # present: left alone
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM queuetop_demo.jobs").fetchone()[0] == 1


def test_watch_and_demo_parse_the_shared_options():
    parser = build_parser()
    args = parser.parse_args(
        ["watch", "--dsn", "postgresql:///x", "--table", "jobs", "--interval", "0.5", "--read-only"]
    )
    assert (args.dsn, args.table, args.interval, args.read_only) == (
        "postgresql:///x",
        "jobs",
        0.5,
        True,
    )
    args = parser.parse_args(["demo"])
    assert args.dsn is None and args.interval == 1.0 and not args.read_only
