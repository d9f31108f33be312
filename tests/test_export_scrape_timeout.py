"""export --targets under a client's scrape timeout (X-Prometheus-Scrape-Timeout-Seconds):
a target whose poll outlasts it is answered in time, with its last values, while the poll
goes on; checked with urllib and with a real Prometheus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import target_stage
from fleet_export import FleetExport, samples, scrape_config
from helpers import wait_until
from system_tools import require_binary
from target_stage import Listener
from test_export_prometheus import Prometheus

from dashboard.metrics.probe_server import scrape_deadline

other_dsn = target_stage.other_dsn  # fixtures
fleet = target_stage.fleet


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
