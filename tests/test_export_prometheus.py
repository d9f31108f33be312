"""Debian's real Prometheus scrapes `queuetop export`; what it stored equals `snapshot --json`.

Also `promtool check metrics` (the Prometheus naming and exposition lint) on the output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from export_stage import STAGED_COUNTS, ExportProcess, StagedQueue, queuetop_env
from helpers import wait_until
from system_tools import free_port, require_binary

SCRAPE_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: queuetop
    static_configs:
      - targets: ['127.0.0.1:{port}']
"""


class Prometheus:
    """A private Prometheus server (Debian's package) scraping one target every second (or
    as `config_text` says)."""

    def __init__(self, binary: str, target_port: int, home: Path, config_text: str | None = None):
        home.mkdir(parents=True, exist_ok=True)
        config = home / "prometheus.yml"
        config.write_text(config_text or SCRAPE_CONFIG.format(port=target_port))
        self.port = free_port()
        self.log = home / "prometheus.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={home / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--log.level=warn",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_until(self._ready, timeout=60, interval=0.2)

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"prometheus exited: {self.log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def query(self, promql: str) -> list[tuple[dict, float]]:
        """An instant query through the HTTP API: (labels, value) per series."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(
            {"query": promql}
        )
        with urllib.request.urlopen(url, timeout=10) as response:
            doc = json.load(response)
        assert doc["status"] == "success", doc
        return [(r["metric"], float(r["value"][1])) for r in doc["data"]["result"]]

    def value(self, promql: str) -> float:
        series = self.query(promql)
        assert len(series) == 1, (promql, series)
        return series[0][1]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def prometheus_binary() -> str:
    return require_binary("prometheus", "prometheus")


def snapshot_json(dsn: str, home: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "snapshot", "--json", "--dsn", dsn],
        capture_output=True,
        text=True,
        timeout=60,
        env=queuetop_env(home),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def stored(prom: Prometheus) -> dict[str, float]:
    """What Prometheus holds of every queuetop value, by a name like the JSON's."""
    values = {f"jobs.{m['role']}": v for m, v in prom.query('queuetop_jobs{job="queuetop"}')}
    values.update(
        {
            f"estimated.{m['role']}": m["estimated"] == "true"
            for m, _ in prom.query('queuetop_jobs{job="queuetop"}')
        }
    )
    values.update(
        {
            f"locked.{m['role']}": v
            for m, v in prom.query('queuetop_row_locked_jobs{job="queuetop"}')
        }
    )
    for name in (
        "oldest_ready_age_seconds",
        "stale_leases",
        "stale_lease_max_overdue_seconds",
        "waiting_sessions",
        "waiting_max_seconds",
        "idle_in_transaction_sessions",
        "idle_in_transaction_max_age_seconds",
        "last_success_timestamp_seconds",
        "up",
    ):
        values[name] = prom.value(f'queuetop_{name}{{job="queuetop"}}')
    return values


def from_json(doc: dict) -> dict[str, float]:
    """The same values, as `queuetop snapshot --json` gives them."""
    values = {f"jobs.{role}": n for role, n in doc["counts"].items()}
    values.update({f"estimated.{role}": role in doc["estimated"] for role in doc["counts"]})
    values.update({f"locked.{role}": n for role, n in doc["locked"].items()})
    idle = doc["idle_in_transaction"]
    values.update(
        {
            "oldest_ready_age_seconds": doc["oldest_ready_age_s"] or 0.0,
            "stale_leases": len(doc["stale_leases"]),
            "stale_lease_max_overdue_seconds": max(s["overdue_s"] for s in doc["stale_leases"]),
            "waiting_sessions": len(doc["waiting"]),
            "waiting_max_seconds": max(w["wait_s"] for w in doc["waiting"]),
            "idle_in_transaction_sessions": len(idle),
            "idle_in_transaction_max_age_seconds": max(
                i["xact_age_s"] if i["xact_age_s"] is not None else i["idle_s"] for i in idle
            ),
        }
    )
    return values


AGES = (
    "oldest_ready_age_seconds",
    "stale_lease_max_overdue_seconds",
    "waiting_max_seconds",
    "idle_in_transaction_max_age_seconds",
)


def assert_same(prom_values: dict, json_values: dict, taken_at: float) -> None:
    """Counts equal; ages equal once moved to the JSON's moment (what Prometheus holds was
    read at its own poll: `last_success_timestamp_seconds`)."""
    shift = taken_at - prom_values["last_success_timestamp_seconds"]
    for key, expected in json_values.items():
        got = prom_values[key]
        if key in AGES:
            assert got + shift == pytest.approx(expected, abs=1.0), (key, got, shift, expected)
        else:
            assert got == expected, (key, got, expected)


def test_prometheus_scrapes_export_and_matches_snapshot_json(
    dsn, connect, background, prometheus_binary, tmp_path
):
    staged = StagedQueue(dsn, connect, background)
    export = ExportProcess(dsn, tmp_path / "export")
    prom = None
    try:
        prom = Prometheus(prometheus_binary, export.port, tmp_path / "prometheus")
        # Prometheus scraped it and parsed every sample (its own `up` for the target)
        wait_until(lambda: prom.query('up{job="queuetop"} == 1'), timeout=60, interval=0.5)
        wait_until(
            lambda: prom.query('queuetop_waiting_sessions{job="queuetop"} == 1'),
            timeout=30,
            interval=0.5,
        )
        doc = snapshot_json(dsn, tmp_path / "cli")
        values = stored(prom)
        assert values["up"] == 1
        assert {role: values[f"jobs.{role}"] for role in STAGED_COUNTS} == STAGED_COUNTS
        assert values["locked.ready"] == 1 and values["stale_leases"] == 2
        assert values["waiting_sessions"] == 1 and values["idle_in_transaction_sessions"] == 2
        assert values["oldest_ready_age_seconds"] > 300  # the 6-minute-old ready job
        assert_same(values, from_json(doc), datetime.fromisoformat(doc["taken_at"]).timestamp())

        # jobs move: Prometheus follows, and still equals a snapshot taken with it
        staged.stager.execute(
            "UPDATE queuetop_demo.jobs SET status = 'done' WHERE id IN "
            "(SELECT id FROM queuetop_demo.jobs WHERE status = 'ready' "
            "AND id <> %s ORDER BY id LIMIT 2)",
            (staged.locked_id,),
        )
        # (each section of a poll is read as often as its cost allows: wait for both)
        wait_until(
            lambda: (
                prom.query('queuetop_jobs{job="queuetop",role="done"} == 6')
                and prom.query('queuetop_jobs{job="queuetop",role="ready"} == 4')
            ),
            timeout=30,
            interval=0.5,
        )
        doc = snapshot_json(dsn, tmp_path / "cli")
        assert doc["counts"]["ready"] == 4 and doc["counts"]["done"] == 6
        assert_same(
            stored(prom), from_json(doc), datetime.fromisoformat(doc["taken_at"]).timestamp()
        )

        # the exposition itself passes Prometheus's own lint
        promtool = require_binary("promtool", "prometheus")
        lint = subprocess.run(
            [promtool, "check", "metrics"],
            input=export.scrape(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert lint.returncode == 0 and not (lint.stdout + lint.stderr).strip(), lint
    finally:
        if prom is not None:
            prom.stop()
        assert export.stop() == 0, export.err.read_text()
        staged.release()


# Group names that collided with each other or with the capped remainder's `(other)`.
CLASHING = {"(other)": 7, "a\nb": 6, "a\\nb": 5, "\\(other)": 4}


def test_no_two_series_share_labels_and_the_groups_sum_to_the_total(
    dsn, connect, prometheus_binary, tmp_path
):
    conn = connect(autocommit=True)
    conn.execute(
        "CREATE TABLE public.grouped (id bigserial PRIMARY KEY, status text NOT NULL, "
        "queue text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
    )
    for name, jobs in CLASHING.items():
        conn.execute(
            "INSERT INTO public.grouped (status, queue) "
            "SELECT 'ready', %s FROM generate_series(1, %s)",
            (name, jobs),
        )
    conn.execute(  # 40 quiet groups of one job: beyond the cap, summed into (other)
        "INSERT INTO public.grouped (status, queue) "
        "SELECT 'ready', 'quiet-' || g FROM generate_series(1, 40) g"
    )
    total = sum(CLASHING.values()) + 40
    spec = tmp_path / "q.toml"
    spec.write_text(
        '[queue]\ntable = "public.grouped"\nid = "id"\nstatus = "status"\n'
        'created_at = "created_at"\ngroup = "queue"\n[queue.states]\nready = ["ready"]\n'
        'running = ["running"]\ndone = ["done"]\n'
    )
    export = ExportProcess(dsn, tmp_path / "export", "--queue", str(spec), "--max-groups", "8")
    prom = None
    try:
        # what the exporter serves: no label set twice in a family
        from prometheus_client.parser import text_string_to_metric_families

        text = wait_until(
            lambda: (t := export.scrape()) and "queuetop_group_jobs" in t and t, timeout=60
        )
        for family in text_string_to_metric_families(text):
            keys = [(s.name, tuple(sorted(s.labels.items()))) for s in family.samples]
            assert len(keys) == len(set(keys)), family.name
        prom = Prometheus(prometheus_binary, export.port, tmp_path / "prometheus")
        wait_until(
            lambda: prom.query('queuetop_group_jobs{job="queuetop"}'), timeout=60, interval=0.5
        )
        series = prom.query('queuetop_group_jobs{job="queuetop",role="ready"}')
        names = [m["queue"] for m, _ in series]
        assert len(names) == len(set(names)) == 8  # seven groups and the remainder
        assert "(other)" in names and "\\(other)" in names  # the group named (other), apart
        assert prom.value('sum(queuetop_group_jobs{job="queuetop",role="ready"})') == total
        assert prom.value('queuetop_jobs{job="queuetop",role="ready"}') == total
    finally:
        if prom is not None:
            prom.stop()
        export.stop()
