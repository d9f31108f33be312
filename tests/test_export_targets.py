"""`queuetop export --targets FILE`: `/probe?target=NAME` answers each target from its own
database, a cache spares it a second poll, a name not in the file is a 400 that connects
nowhere, a hung target holds nothing but its own scrape, and a real Prometheus scraping
two targets through docs/targets.md's relabelling stores what `snapshot --json --target`
reads."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
import target_stage
from export_stage import queuetop_env
from fleet_export import FleetExport, jobs, samples, scrape_config
from helpers import wait_until
from system_tools import require_binary
from target_stage import A_COUNTS, B_COUNTS, B_TABLE, Listener, counts_in
from test_export_prometheus import Prometheus

other_dsn = target_stage.other_dsn  # fixtures
fleet = target_stage.fleet


def exporter_backends(conn: psycopg.Connection, database: str) -> list[tuple]:
    """Ground truth: the exporter's sessions on `database`, with when each last ran a query."""
    return conn.execute(
        "SELECT pid, query_start FROM pg_stat_activity WHERE datname = %s "
        "AND application_name = 'queuetop' ORDER BY pid",
        (database,),
    ).fetchall()


def test_each_probe_reads_its_own_target_and_the_cache_spares_a_second_poll(
    fleet, connect, tmp_path
):
    path, a, b = fleet
    # interval 20: the cache lives 10 s, longer than this test's probes of one target take
    export = FleetExport(path, tmp_path / "export", interval=20)
    watcher = connect(autocommit=True)
    try:
        status, alpha = export.get("/probe?target=alpha")
        assert status == 200, alpha
        assert jobs(alpha) == {"queuetop_demo.jobs": A_COUNTS}
        assert counts_in(a, "queuetop_demo.jobs") == A_COUNTS
        status, beta = export.get("/probe?target=beta")
        assert status == 200 and jobs(beta) == {B_TABLE: B_COUNTS} == {
            B_TABLE: counts_in(b, B_TABLE)
        }
        status, bare = export.get("/probe?target=bare")  # no queue in the file: discovered
        assert status == 200 and jobs(bare) == {B_TABLE: B_COUNTS}
        assert samples(alpha, "queuetop_up")[0].value == 1

        # two scrapes of alpha at once, then a third: all within the cache's life, so the
        # exporter's session on A ran no query since the first poll (the server's own view)
        a_name = psycopg.conninfo.conninfo_to_dict(a)["dbname"]
        before = exporter_backends(watcher, a_name)
        assert len(before) == 1
        answers: list[str] = []
        threads = [
            threading.Thread(target=lambda: answers.append(export.get("/probe?target=alpha")[1]))
            for _ in range(2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        answers.append(export.get("/probe?target=alpha")[1])
        assert exporter_backends(watcher, a_name) == before
        taken = {samples(t, "queuetop_last_success_timestamp_seconds")[0].value for t in answers}
        assert len(taken) == 1 and all(jobs(t) == jobs(alpha) for t in answers)

        status, own = export.get("/metrics")
        assert status == 200
        by_target = {
            s.labels["target"]: s.value for s in samples(own, "queuetop_target_probes_total")
        }
        hits = {
            s.labels["target"]: s.value
            for s in samples(own, "queuetop_target_probe_cache_hits_total")
        }
        assert by_target == {"alpha": 4, "beta": 1, "bare": 1} and hits["alpha"] == 3
        up = {s.labels["target"]: s.value for s in samples(own, "queuetop_target_up")}
        assert up == {"alpha": 1, "beta": 1, "bare": 1}
        polls = {
            s.labels["target"]: s.value
            for s in samples(own, "queuetop_target_poll_duration_seconds_count")
        }
        assert polls == {"alpha": 1, "beta": 1, "bare": 1}
    finally:
        assert export.stop() == 0, export.err.read_text()


BAD_PROBES = [
    "/probe?target=nosuch",
    "/probe?target=host%3D127.0.0.1%20port%3D{port}%20dbname%3Dx",
    "/probe?target=postgresql%3A%2F%2Fu%40127.0.0.1%3A{port}%2Fx",
    "/probe?target=127.0.0.1%3A{port}",
    "/probe?target=",
    "/probe",
    "/probe?target=alpha&target=beta",
    "/probe?target=ALPHA",
    "/probe?target=alpha%00",
    "/probe?auth_module=x&target=..%2Falpha",
]


def test_an_unknown_target_is_a_400_and_connects_nowhere(fleet, connect, tmp_path):
    path, _, _ = fleet
    listener = Listener()
    watcher = connect(autocommit=True)
    export = FleetExport(path, tmp_path / "export")
    try:
        # the server's sessions, sampled all along: the exporter opens none for these
        seen: list[int] = []
        stop = threading.Event()
        sampler = connect(autocommit=True)

        def sample() -> None:
            while not stop.is_set():
                seen.append(
                    sampler.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'queuetop'"
                    ).fetchone()[0]
                )

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        wait_until(lambda: seen, timeout=10)
        # and the test server's own DSN, whole: no connection to it either
        own_dsn = "/probe?target=" + urllib.parse.quote(fleet[1], safe="")
        for url in [*BAD_PROBES, own_dsn]:
            status, body = export.get(url.format(port=listener.port))
            assert status == 400, (url, body)
            assert body.startswith("no such target") and "127.0.0.1" not in body, body
        stop.set()
        thread.join(10)
        assert set(seen) == {0}  # no queuetop session ever, on any database of the server
        assert listener.accepted == 0  # nor any connection to an address the URL named
        status, own = export.get("/metrics")
        refused = {
            s.labels["reason"]: s.value for s in samples(own, "queuetop_probe_refused_total")
        }
        assert refused == {"unknown_target": 8, "missing_target": 3}
        assert not samples(own, "queuetop_target_up")  # no target was polled
        assert {s.value for s in samples(own, "queuetop_target_connected")} == {0}
        # another path, or another method: no probe either
        assert export.get("/")[0] == 404
        request = urllib.request.Request(
            f"http://127.0.0.1:{export.port}/probe?target=alpha", method="POST", data=b""
        )
        with pytest.raises(urllib.error.HTTPError) as refused_post:
            urllib.request.urlopen(request, timeout=10)
        assert refused_post.value.code == 405
        assert not watcher.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = 'queuetop'"
        ).fetchall()
    finally:
        assert export.stop() == 0, export.err.read_text()
        listener.close()


def test_a_hung_target_holds_nothing_but_its_own_scrape(fleet, tmp_path):
    path, a, _ = fleet
    hung = Listener(hold=True)  # accepts, never answers: libpq waits on it
    targets = Path(path).read_text() + f"[targets.hung]\ndsn = {json.dumps(hung.dsn())}\n"
    Path(path).write_text(targets)
    export = FleetExport(path, tmp_path / "export")
    try:
        result: dict[str, tuple[int, str]] = {}
        slow = threading.Thread(target=lambda: result.update(hung=export.get("/probe?target=hung")))
        slow.start()
        wait_until(lambda: hung.accepted >= 1, timeout=30)  # its poll is connecting, held
        status, alpha = export.get("/probe?target=alpha")
        assert status == 200 and jobs(alpha) == {"queuetop_demo.jobs": A_COUNTS}
        assert slow.is_alive()  # still held while alpha was answered
        hung.release()
        slow.join(30)
        status, text = result["hung"]
        assert status == 200 and samples(text, "queuetop_up")[0].value == 0
        assert not jobs(text)
    finally:
        assert export.stop() == 0, export.err.read_text()
        hung.close()


def snapshot_json(path: str, name: str, home: Path) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dashboard",
            "snapshot",
            "--json",
            "--targets",
            path,
            "--target",
            name,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=queuetop_env(home),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_prometheus_scrapes_two_targets_through_the_documented_relabelling(fleet, tmp_path):
    binary = require_binary("prometheus", "prometheus")
    path, _, _ = fleet
    export = FleetExport(path, tmp_path / "export", interval=1)
    prom = None
    try:
        prom = Prometheus(binary, export.port, tmp_path / "prometheus", scrape_config(export.port))
        wait_until(
            lambda: len(prom.query('up{job="queuetop"} == 1')) == 2, timeout=60, interval=0.5
        )
        wait_until(
            lambda: len(prom.query('queuetop_jobs{job="queuetop"}')) >= 2, timeout=30, interval=0.5
        )
        for name in ("alpha", "beta"):
            doc = snapshot_json(path, name, tmp_path / "cli")
            stored = {
                m["role"]: v
                for m, v in prom.query(f'queuetop_jobs{{job="queuetop",instance="{name}"}}')
            }
            tables = {m["table"] for m, _ in prom.query(f'queuetop_jobs{{instance="{name}"}}')}
            assert tables == {doc["queue"]}
            assert stored == {role: float(n) for role, n in doc["counts"].items()}, name
            assert prom.value(f'queuetop_up{{job="queuetop",instance="{name}"}}') == 1
            assert datetime.fromisoformat(doc["taken_at"])  # a real snapshot, read just now
        assert {m["instance"] for m, _ in prom.query('queuetop_jobs{job="queuetop"}')} == {
            "alpha",
            "beta",
        }
        # the exporter's own health, scraped as its own job
        wait_until(
            lambda: len(prom.query('queuetop_target_up{job="queuetop-exporter"} == 1')) == 2,
            timeout=30,
            interval=0.5,
        )
        # both expositions pass Prometheus's own lint (names, units, _total)
        promtool = require_binary("promtool", "prometheus")
        for url in ("/metrics", "/probe?target=beta"):
            lint = subprocess.run(
                [promtool, "check", "metrics"],
                input=export.get(url)[1],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert lint.returncode == 0 and not (lint.stdout + lint.stderr).strip(), lint
    finally:
        if prom is not None:
            prom.stop()
        assert export.stop() == 0, export.err.read_text()
