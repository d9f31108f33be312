"""The threshold in force: --stale-after sets the limit of the spec's own liveness signal,
a spec file's keys set theirs, and where there is no single limit the flag is refused in
one line. (The real workers' side is in the adapter tests: procrastinate, pgqueuer,
chancy, Oban.)"""

from __future__ import annotations

import json

import pytest
from rich.text import Text
from test_cli_errors import assert_one_line_error, run_cli

from dashboard import config
from dashboard.cli import main
from dashboard.errors import UserError
from dashboard.models import Threshold
from dashboard.ui.widgets.tables import stale_threshold_text

WORKERS_SPEC = """
[queue]
table = "app.jobs"
worker = "worker_id"
started_at = "started_at"
[queue.states]
ready = ["ready"]
running = ["running"]
[queue.workers]
table = "app.workers"
key = "id"
last_seen = "seen_at"
{timeout}
[queue.policy]
{stale_after}
"""


def spec_file(tmp_path, timeout: str = "", stale_after: str = ""):
    path = tmp_path / "q.toml"
    path.write_text(WORKERS_SPEC.format(timeout=timeout, stale_after=stale_after))
    return str(path)


@pytest.mark.parametrize(
    ("preset", "signal", "seconds", "field"),
    [
        ("procrastinate", "workers", 4.0, lambda s: s.workers.timeout_s),
        ("chancy", "workers", 4.0, lambda s: s.workers.timeout_s),
        ("oban", "workers", 4.0, lambda s: s.workers.timeout_s),
        ("solid-queue", "workers", 4.0, lambda s: s.workers.timeout_s),
        ("pgqueuer", "heartbeat", 4.0, lambda s: s.policy.heartbeat_timeout_s),
        ("river", "start", 4.0, lambda s: s.policy.stale_after_s),
        ("graphile-worker", "start", 4.0, lambda s: s.policy.stale_after_s),
        ("django-tasks", "start", 4.0, lambda s: s.policy.stale_after_s),
        ("dbos", "start", 4.0, lambda s: s.policy.stale_after_s),
    ],
)
def test_the_flag_sets_the_limit_of_the_presets_own_signal(preset, signal, seconds, field):
    default = config.load_preset(preset)
    assert default.threshold.source.startswith(f"preset {preset} default")
    spec = config.build_spec(preset=preset, stale_after="4s")
    assert (spec.threshold.signal, spec.threshold.seconds) == (signal, seconds)
    assert spec.threshold.source == "--stale-after"
    assert field(spec) == seconds


@pytest.mark.parametrize(
    ("preset", "words"),
    [
        ("pg-boss", "each running job carries its own expiry (lease_until, derived by the"),
        ("demo", "each running job carries its own expiry (leased_until)"),
        ("que", "advisory lock tells a live worker, not a time limit"),
    ],
)
def test_no_single_limit_refuses_the_flag_in_one_line(preset, words, tmp_path):
    with pytest.raises(UserError, match="--stale-after"):
        config.build_spec(preset=preset, stale_after="4s")
    result = run_cli(
        "snapshot",
        "--preset",
        preset,
        "--stale-after",
        "4s",
        "--dsn",
        "host=/nowhere",
        env_home=str(tmp_path),
    )
    assert_one_line_error(result, "--stale-after", words)


def test_a_spec_files_keys_set_their_signal_and_stale_after_stands_for_a_missing_one(tmp_path):
    own = config.build_spec(queue_file=spec_file(tmp_path, timeout='timeout = "20s"'))
    assert (own.workers.timeout_s, own.threshold.source) == (
        20.0,
        f"spec {tmp_path / 'q.toml'}, workers.timeout",
    )
    fallback = config.build_spec(queue_file=spec_file(tmp_path, stale_after='stale_after = "7s"'))
    assert (fallback.workers.timeout_s, fallback.threshold.source) == (
        7.0,
        f"spec {tmp_path / 'q.toml'}, stale_after",
    )
    both = config.build_spec(
        queue_file=spec_file(tmp_path, 'timeout = "20s"', 'stale_after = "7s"'), stale_after="3s"
    )
    assert (both.workers.timeout_s, both.threshold.source) == (3.0, "--stale-after")
    plain = config.build_spec(queue_file=spec_file(tmp_path))
    assert (plain.workers.timeout_s, plain.threshold.source) == (
        60.0,
        f"spec {tmp_path / 'q.toml'}, workers.timeout",
    )


def test_presets_name_the_threshold_and_versions(capsys):
    assert main(["presets", "--json"]) == 0
    rows = {row["preset"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["procrastinate"]["threshold"] == {
        "signal": "workers",
        "seconds": 30.0,
        "source": "preset procrastinate default, workers.timeout",
        "text": "stale after 30s of silence in procrastinate_workers.last_heartbeat "
        "[preset procrastinate default, workers.timeout]",
    }
    assert rows["pg-boss"]["threshold"]["seconds"] is None
    assert rows["pg-boss"]["versions"] == (
        "pg-boss 10 (schema 24), 11 (and 12.0 to 12.5) (schema 26), 12.38 (schema 46)"
    )
    assert rows["graphile-worker"]["versions"] == (
        "graphile-worker 0.17 (migration 19), 0.18 (migration 20)"
    )
    assert main(["presets"]) == 0
    assert "    threshold stale after 4h of running since the claim" in capsys.readouterr().out


def test_presets_shows_one_preset_by_name(capsys):
    # `queuetop --help` advertises `presets (--preset NAME)`: it was refused before
    assert main(["presets", "--preset", "demo"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("demo: ") and "\nprocrastinate:" not in out
    assert main(["presets", "--preset", "pg-boss", "--json"]) == 0
    assert [row["preset"] for row in json.loads(capsys.readouterr().out)] == ["pg-boss"]
    assert main(["presets", "--preset", "nope"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no preset named 'nope'" in err


def test_the_stale_tabs_line_is_plain_text_with_controls_escaped():
    hostile = Threshold("workers", 4.0, "--stale-after", "silence in [b]x[/b]\x1b[2J.seen")
    line = stale_threshold_text(hostile)
    assert isinstance(line, Text) and "\x1b" not in line.plain
    assert line.plain == "stale after 4s of silence in [b]x[/b]\\x1b[2J.seen [--stale-after]"
    assert stale_threshold_text(None) is None
