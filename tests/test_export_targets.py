"""`queuetop export --targets FILE`: `/probe?target=NAME` answers each target from its own
database, a cache spares it a second poll, a name not in the file is a 400 that connects
nowhere, a hung target holds nothing but its own scrape, and a real Prometheus scraping
two targets through docs/targets.md's relabelling stores what `snapshot --json --target`
reads."""

from __future__ import annotations

import json
import re
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
from helpers import wait_until
from prometheus_client.parser import text_string_to_metric_families
from system_tools import require_binary
from target_stage import A_COUNTS, B_COUNTS, B_TABLE, Listener, counts_in
from test_export_prometheus import Prometheus

from dashboard.metrics.probe_server import scrape_deadline

other_dsn = target_stage.other_dsn  # fixtures
fleet = target_stage.fleet
DOCS = Path(__file__).resolve().parents[1] / "docs" / "targets.md"


class FleetExport:
    """`queuetop export --targets FILE --listen 127.0.0.1:0` in its own process."""

    def __init__(self, targets: str, home: Path, *extra: str, interval: float = 1.0):
        home.mkdir(parents=True, exist_ok=True)
        self.out, self.err = home / "export.out", home / "export.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dashboard",
                    "export",
                    "--targets",
                    targets,
                    "--listen",
                    "127.0.0.1:0",
                    "--interval",
                    f"{interval:g}",
                    *extra,
                ],
                stdout=out,
                stderr=err,
                env=queuetop_env(home),
            )
        self.port = int(wait_until(self._bound_port, timeout=60))

    def _bound_port(self) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"export exited {self.proc.returncode}: {self.err.read_text()}")
        match = re.search(r"http://127\.0\.0\.1:(\d+)/probe\?target=NAME", self.out.read_text())
        return match.group(1) if match else None

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", headers=headers or {}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(30)


def samples(text: str, name: str) -> list:
    return [
        s
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    ]


def jobs(text: str) -> dict[str, dict[str, float]]:
    """queuetop_jobs of a scrape: table -> role -> value (roles with jobs)."""
    out: dict[str, dict[str, float]] = {}
    for s in samples(text, "queuetop_jobs"):
        if s.value:
            out.setdefault(s.labels["table"], {})[s.labels["role"]] = s.value
    return out


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


@pytest.mark.parametrize(
    ("header", "deadline"),
    [
        ("10", 9.5),
        ("1", 0.75),
        ("0.2", 0.15),
        (None, None),
        ("", None),
        ("ten", None),
        ("0", None),
        ("-3", None),
        ("inf", None),
        ("nan", None),
    ],
)
def test_the_scrape_deadline_is_the_clients_timeout_less_an_offset(header, deadline):
    assert scrape_deadline(header) == (None if deadline is None else pytest.approx(deadline))


def test_a_scrape_is_answered_within_the_timeout_its_client_gives(fleet, tmp_path):
    """Prometheus sends X-Prometheus-Scrape-Timeout-Seconds: a target whose poll hangs
    (a server that accepts and never answers) is answered within it, queuetop_up 0,
    while its poll goes on; the next scrape after the poll ends serves the poll's result."""
    path, _, _ = fleet
    hung = Listener(hold=True)
    Path(path).write_text(
        Path(path).read_text() + f"[targets.hung]\ndsn = {json.dumps(hung.dsn())}\n"
    )
    export = FleetExport(path, tmp_path / "export")
    try:
        status, text = export.get(
            "/probe?target=hung", headers={"X-Prometheus-Scrape-Timeout-Seconds": "1"}
        )
        assert status == 200 and samples(text, "queuetop_up")[0].value == 0
        assert hung.accepted >= 1 and hung.held  # its poll is still connecting
        _, health = export.get("/metrics")
        # no poll of it has ended yet: the answer did not wait for one
        assert not [
            s for s in samples(health, "queuetop_target_up") if s.labels["target"] == "hung"
        ]
        hung.release()  # the poll fails now; a later scrape serves its result
        wait_until(
            lambda: [
                s
                for s in samples(export.get("/metrics")[1], "queuetop_target_up")
                if s.labels["target"] == "hung"
            ],
            timeout=30,
        )
        status, text = export.get("/probe?target=hung")
        assert status == 200 and samples(text, "queuetop_up")[0].value == 0
    finally:
        assert export.stop() == 0, export.err.read_text()
        hung.close()


def test_prometheus_gets_an_answer_from_a_hung_target_within_its_scrape_timeout(fleet, tmp_path):
    """A real Prometheus (scrape_timeout 1s) scraping a target whose server never answers:
    the scrape succeeds (Prometheus's own up is 1) and says the target is down
    (queuetop_up 0), rather than timing out with nothing stored."""
    binary = require_binary("prometheus", "prometheus")
    path, _, _ = fleet
    hung = Listener(hold=True)
    Path(path).write_text(
        Path(path).read_text() + f"[targets.hung]\ndsn = {json.dumps(hung.dsn())}\n"
    )
    # --interval 3: a scrape that finds the poll under way would wait 3 s for it, and one
    # that starts it would wait for its end (the 5 s connect timeout): far past the 1 s
    # Prometheus gives, were that not read
    export = FleetExport(path, tmp_path / "export", interval=3)
    prom = None
    try:
        config = scrape_config(export.port, names="[alpha, hung]")
        prom = Prometheus(binary, export.port, tmp_path / "prometheus", config)
        hung_up = 'up{job="queuetop",instance="hung"}[10s]'
        wait_until(  # eight scrapes of it, a second apart
            lambda: (
                prom.query(f"count_over_time({hung_up})")
                and prom.value(f"count_over_time({hung_up})") >= 8
            ),
            timeout=60,
            interval=0.5,
        )
        # each answered in time (one or two late on a loaded machine); unread, the
        # header leaves one in five: a scrape that came just before the 5 s poll ended
        scrapes = prom.value(f"count_over_time({hung_up})")
        assert prom.value(f"sum_over_time({hung_up})") >= scrapes - 2
        assert prom.value('queuetop_up{job="queuetop",instance="hung"}') == 0
        assert prom.value('queuetop_up{job="queuetop",instance="alpha"}') == 1
    finally:
        if prom is not None:
            prom.stop()
        assert export.stop() == 0, export.err.read_text()
        hung.close()


def scrape_config(exporter_port: int, names: str = "[alpha, beta]") -> str:
    """docs/targets.md's scrape config, its names and the exporter's address replaced."""
    block = next(
        b
        for b in re.findall(r"```yaml\n(.*?)```", DOCS.read_text(), re.S)
        if b.startswith("scrape_configs:")
    )
    assert block.count("[prod, staging]") == 1 and block.count("127.0.0.1:9187") == 2
    block = block.replace("[prod, staging]", names)
    block = block.replace("127.0.0.1:9187", f"127.0.0.1:{exporter_port}")
    return "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n" + block


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
