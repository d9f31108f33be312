"""Queue spec parsing: names, durations, presets, TOML shape, warnings (no database)."""

from __future__ import annotations

import pytest

from dashboard import config
from dashboard.errors import UserError
from dashboard.models import TableName
from dashboard.monitor import wait_chain


@pytest.mark.parametrize(
    "text,expected",
    [
        ("jobs", TableName("jobs")),
        ("app.jobs", TableName("jobs", "app")),
        ('"My Schema"."my.table"', TableName("my.table", "My Schema")),
        ('"a""b".c', TableName("c", 'a"b')),
        ('app."Jobs"', TableName("Jobs", "app")),
    ],
)
def test_parse_table_name(text, expected):
    assert config.parse_table_name(text) == expected


@pytest.mark.parametrize("text", ["", "a.b.c", '"unclosed', '"a"x', "a..b", "."])
def test_parse_table_name_rejects(text):
    with pytest.raises(UserError, match="bad table name"):
        config.parse_table_name(text)


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("10 minutes", 600),
        ("30s", 30),
        ("1h", 3600),
        ("2 days", 172800),
        (45, 45),
        ("1.5m", 90),
    ],
)
def test_parse_duration(text, seconds):
    assert config.parse_duration(text) == seconds


def test_parse_duration_rejects_nonsense():
    with pytest.raises(UserError, match="bad stale_after 'soon'"):
        config.parse_duration("soon", "stale_after")


@pytest.mark.parametrize("text", ["0", "0 minutes", "0.0s", 0, -5, float("nan"), float("inf")])
def test_parse_duration_rejects_zero_negative_and_infinite(text):
    # a stale_after of 0 would call every running job stale the moment it starts
    with pytest.raises(UserError, match="above zero"):
        config.parse_duration(text, "stale_after")


def test_every_preset_loads():
    names = config.preset_names()
    assert {"demo", "fila-documentos", "tarefas-demo", "node-jobs"} <= set(names)
    for name in names:
        spec = config.load_preset(name)
        assert spec.values("ready") and spec.values("running")


def test_presets_describe_the_seed_schemas():
    fila = config.load_preset("fila-documentos")
    assert fila.table == TableName("fila_documentos", "sql_semana_12")
    assert (fila.columns.id, fila.columns.attempts, fila.columns.lease_until) == (
        "documento_id",
        "tentativas",
        "reservado_ate",
    )
    tarefas = config.load_preset("tarefas-demo")
    assert tarefas.columns.status == "estado" and tarefas.columns.lease_token == "versao_posse"
    node = config.load_preset("node-jobs")
    assert node.policy.stale_after_s == 600 and node.values("running") == ("processing",)


def test_spec_from_dict_full():
    spec = config.spec_from_dict(
        {
            "queue": {
                "table": "app.jobs",
                "id": "job_id",
                "status": "state",
                "lease_until": "until",
                "states": {"ready": "queued", "running": ["working", "retrying"]},
                "policy": {
                    "stale_after": "2 minutes",
                    "max_attempts": 4,
                    "dead_letter": "table:app.dead",
                    "worker_session": "pid",
                },
            }
        },
        "test",
    )
    assert spec.columns.id == "job_id" and spec.columns.lease_until == "until"
    assert spec.values("ready") == ("queued",)
    assert spec.role_of("retrying") == "running" and spec.role_of("other") is None
    assert spec.policy.stale_after_s == 120 and spec.policy.max_attempts == 4
    assert spec.policy.dead_letter.table == TableName("dead", "app")
    assert spec.policy.worker_session == "pid"


@pytest.mark.parametrize(
    "queue,message",
    [
        ({}, "needs table"),
        ({"table": "j", "states": {"ready": ["a"]}}, "needs ready and running"),
        (
            {"table": "j", "states": {"ready": ["a"], "running": ["b"], "zombie": ["c"]}},
            "unknown role(s) zombie",
        ),
        (
            {
                "table": "j",
                "states": {"ready": "a", "running": "b"},
                "policy": {"dead_letter": "trash"},
            },
            "bad dead_letter 'trash'",
        ),
        (
            {"table": "j", "states": {"ready": "a", "running": "b"}, "policy": {"max_attempts": 0}},
            "max_attempts must be a positive integer",
        ),
        (
            {"table": "j", "id": 5, "states": {"ready": "a", "running": "b"}},
            "id must be a column name",
        ),
        (
            {"table": "j", "states": {"ready": "a", "running": "b"}, "policy": {"stale_after": 0}},
            "bad stale_after 0",
        ),
        (
            {
                "table": "j",
                "states": {"ready": "a", "running": "b"},
                "policy": {"exact_count_limit": "lots"},
            },
            "exact_count_limit must be a whole number",
        ),
        (
            {
                "table": "j",
                "states": {"ready": "a", "running": "b"},
                "policy": {"exact_count_limit": -1},
            },
            "exact_count_limit must be a whole number",
        ),
    ],
)
def test_spec_from_dict_rejects(queue, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config.spec_from_dict({"queue": queue}, "test")


def test_build_spec_flags_override_preset():
    spec = config.build_spec(preset="node-jobs", table="other.q", stale_after="1m")
    assert spec.table == TableName("q", "other") and spec.policy.stale_after_s == 60
    assert spec.values("ready") == ("pending",)


def test_build_spec_refuses_file_and_preset(tmp_path):
    with pytest.raises(UserError, match="either --queue FILE or --preset"):
        config.build_spec(queue_file=str(tmp_path / "x.toml"), preset="demo")


def test_state_warnings():
    spec = config.load_preset("node-jobs")
    by_status = {"pending": 3, "archived": 1}
    assert config.state_warnings(spec, by_status) == (
        "status value 'archived' (1 rows) is not mapped to any role in the queue spec",
    )
    assert config.unmatched_values(spec, by_status) == (
        "no rows in jobs with running='processing', done='done'; "
        "if such rows should exist, check [queue.states]"
    )
    assert config.unmatched_values(spec, {}) is None  # an empty table says nothing


def test_no_failed_or_dead_rows_is_healthy_not_a_warning():
    spec = config.load_preset("demo")  # failed = ["failed"], dead = ["dead"]
    assert config.unmatched_values(spec, {"ready": 5, "running": 2, "done": 40}) is None
    assert config.unmatched_values(spec, {"ready": 5, "done": 40}) is None  # a quiet queue
    # rows no role claims: the spec value that matches nothing is likely the typo
    assert config.unmatched_values(spec, {"ready": 5, "done": 40, "runing": 2}) == (
        "no rows in queuetop_demo.jobs with running='running'; "
        "if such rows should exist, check [queue.states]"
    )


def test_wait_chain_follows_first_blocker_to_the_root():
    blocked_by = {30: (20,), 20: (10,), 40: (10,)}
    assert wait_chain(30, blocked_by) == (10, 20, 30)
    assert wait_chain(40, blocked_by) == (10, 40)
    assert wait_chain(10, blocked_by) == (10,)
    assert wait_chain(1, {1: (2,), 2: (1,)}) == (2, 1)  # a deadlock cycle stops


def test_one_line_drops_leading_sql_comments_and_cuts_with_ellipsis():
    from dashboard.render.report import one_line

    query = "-- purpose: claim a job\n-- second\nSELECT  id\nFROM jobs FOR UPDATE"
    assert one_line(query, 80) == "SELECT id FROM jobs FOR UPDATE"
    assert one_line(query, 10) == "SELECT id…"
    assert one_line("-- only a comment", 80) == "-- only a comment"
