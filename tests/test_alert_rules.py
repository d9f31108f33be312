"""docs/alerts/queuetop-rules.yml, the alerting rules queuetop ships: valid (`promtool check
rules`), each firing when its unit test says (`promtool test rules` with
docs/alerts/queuetop-rules.test.yml), and naming only series a real exporter serves: the
rules' and the unit test's series are looked up in a scrape of `queuetop export` over a
staged queue, and a real Prometheus loading the rules evaluates each one to an alert there.
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from export_stage import ExportProcess
from helpers import wait_until
from prometheus_client.parser import text_string_to_metric_families
from system_tools import require_binary
from test_export_prometheus import Prometheus

ALERTS = Path(__file__).resolve().parents[1] / "docs" / "alerts"
RULES = ALERTS / "queuetop-rules.yml"
UNIT = ALERTS / "queuetop-rules.test.yml"
# Prometheus's own series for a target (not the exporter's), and the labels it adds
PROMETHEUS_OWN = {"up"}
TARGET_LABELS = {"job", "instance"}
# a selector: a metric name, then its label matchers if any (a name before "(" is a function)
SELECTOR = re.compile(r"\b(queuetop_\w+|up)\b(?!\s*\()(?:\{([^}]*)\})?")
MATCHER = re.compile(r'(\w+)\s*(=~|!=|!~|=)\s*"([^"]*)"')
# what a rule needs to fire that no staged row can give: a failed poll, time to grow
NEEDS_TIME = {"QueuetopDown", "QueuetopOldestReadyAgeGrowing"}


def rules() -> list[dict[str, str]]:
    """Each rule's name and expression, as the file writes them (one line each; the live
    test compares them with what Prometheus itself parsed)."""
    text = RULES.read_text()
    names = re.findall(r"^\s*- alert: (\w+)$", text, re.M)
    exprs = re.findall(r"^\s*expr: (.+)$", text, re.M)
    assert len(names) == len(exprs), (names, exprs)
    return [{"alert": n, "expr": e} for n, e in zip(names, exprs, strict=True)]


def selectors(expr: str) -> list[tuple[str, dict[str, str]]]:
    """The series an expression selects: (metric name, its `=` label matchers)."""
    found = []
    for name, matchers in SELECTOR.findall(expr):
        labels = {}
        for label, op, value in MATCHER.findall(matchers or ""):
            assert op == "=", f"{name}: only = matchers are checked against the scrape"
            labels[label] = value
        found.append((name, labels))
    return found


def unit_series() -> list[tuple[str, dict[str, str]]]:
    """The input series of the rules' unit test: (name, labels)."""
    out = []
    for series in re.findall(r"^\s*- series: '(.+)'$", UNIT.read_text(), re.M):
        name, _, rest = series.partition("{")
        out.append((name, dict((k, v) for k, _, v in MATCHER.findall(rest))))
        assert len(out[-1][1]) == rest.count("="), series  # every label read
    return out


def fired_in_unit_test() -> set[str]:
    """The alerts the unit test expects to fire at some evaluation."""
    fired, current = set(), None
    for line in UNIT.read_text().splitlines():
        if m := re.match(r"\s*alertname: (\w+)$", line):
            current = m.group(1)
        elif re.match(r"\s*exp_alerts:", line) and current:
            fired.add(current)
    return fired


def test_promtool_checks_the_rules_and_runs_their_unit_tests():
    promtool = require_binary("promtool", "prometheus")
    checked = subprocess.run(
        [promtool, "check", "rules", RULES.name],
        cwd=ALERTS,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules())} rules found" in checked.stdout, checked.stdout
    tested = subprocess.run(
        [promtool, "test", "rules", UNIT.name],
        cwd=ALERTS,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    # every rule has a case that fires in the unit test (and one before it fires)
    assert fired_in_unit_test() == {r["alert"] for r in rules()}


def test_the_selector_reader_reads_what_the_rules_say():
    assert selectors('queuetop_up == 0 or up{job="queuetop"} == 0') == [
        ("queuetop_up", {}),
        ("up", {"job": "queuetop"}),
    ]
    assert selectors("deriv(queuetop_oldest_ready_age_seconds[10m]) > 0.5") == [
        ("queuetop_oldest_ready_age_seconds", {})
    ]


# A queue in which every rule but NEEDS_TIME holds: a stale lease, a ready job 20 minutes
# old, a row in a state no role claims, and in the last minutes 30 finished jobs that each
# waited 60 s, ran 2 s, and a third of which failed.
TABLE_SQL = """
CREATE TABLE public.alerting (
    id bigserial PRIMARY KEY,
    status text NOT NULL,
    queue text NOT NULL DEFAULT 'default',
    created_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz,
    worker text,
    lease_until timestamptz
);
CREATE INDEX ON public.alerting (started_at);
CREATE INDEX ON public.alerting (finished_at);
INSERT INTO public.alerting (status, created_at) VALUES ('ready', now() - interval '20 minutes');
INSERT INTO public.alerting (status, created_at, started_at, worker, lease_until)
VALUES ('running', now() - interval '9 minutes', now() - interval '8 minutes', 'gone',
        now() - interval '5 minutes');
INSERT INTO public.alerting (status) VALUES ('paused');
INSERT INTO public.alerting (status, queue, created_at, started_at, finished_at)
SELECT CASE WHEN g % 3 = 0 THEN 'failed' ELSE 'done' END, 'mail',
       now() - make_interval(secs => 70 + g), now() - make_interval(secs => 10 + g),
       now() - make_interval(secs => 8 + g)
  FROM generate_series(1, 30) AS g;
"""
SPEC_TOML = """\
[queue]
table = "public.alerting"
id = "id"
status = "status"
group = "queue"
created_at = "created_at"
started_at = "started_at"
finished_at = "finished_at"
worker = "worker"
lease_until = "lease_until"
[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
failed = ["failed"]
"""
RULES_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['{rules}']
scrape_configs:
  - job_name: queuetop
    static_configs:
      - targets: ['127.0.0.1:{port}']
"""


def served(text: str) -> dict[str, list[dict[str, str]]]:
    """Every sample of a scrape: sample name -> the label sets it is served with."""
    samples: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(dict(sample.labels))
    return samples


def missing_from(samples: dict, name: str, labels: dict[str, str], exact: bool) -> str | None:
    """Why `name{labels}` is not among the served samples, or None. `exact`: the label
    names must be those served (the unit test's series), not only include these."""
    if name in PROMETHEUS_OWN:
        return None
    if name not in samples:
        return f"{name} is not served"
    wanted = {k: v for k, v in labels.items() if k not in TARGET_LABELS}
    for have in samples[name]:
        names_ok = set(have) == set(wanted) if exact else set(wanted) <= set(have)
        values_ok = all(have[k] == v for k, v in wanted.items() if k not in ("table", "value"))
        if names_ok and values_ok:
            return None
    return f"{name}{wanted} matches none of {samples[name]}"


@pytest.fixture
def prometheus_binary() -> str:
    return require_binary("prometheus", "prometheus")


def test_every_series_the_rules_name_is_served_and_each_rule_fires_on_a_staged_queue(
    dsn, connect, prometheus_binary, tmp_path
):
    connect(autocommit=True).execute(TABLE_SQL)
    spec = tmp_path / "alerting.toml"
    spec.write_text(SPEC_TOML)
    named = [s for rule in rules() for s in selectors(rule["expr"])]
    export = ExportProcess(dsn, tmp_path / "export", "--queue", str(spec))
    prom = None
    try:
        # a scrape once the latency section is read (it may be paced: wait for it)
        text = wait_until(
            lambda: (t := export.scrape()) and "queuetop_job_wait_seconds{" in t and t,
            timeout=60,
            interval=0.5,
        )
        samples = served(text)
        # the checker itself: a name or a label value the exporter does not serve is caught
        assert missing_from(samples, "queuetop_no_such_metric", {}, False)
        assert missing_from(samples, "queuetop_job_wait_seconds", {"quantile": "0.9"}, False)
        problems = [missing_from(samples, name, labels, False) for name, labels in named]
        problems += [missing_from(samples, name, labels, True) for name, labels in unit_series()]
        assert not [p for p in problems if p], [p for p in problems if p]

        # a real Prometheus, the rules loaded, evaluates each one over what it scraped:
        # each rule is one it parsed as written, and all but NEEDS_TIME hold (pending)
        config = RULES_CONFIG.format(rules=RULES, port=export.port)
        prom = Prometheus(prometheus_binary, export.port, tmp_path / "prometheus", config)
        want = {r["alert"] for r in rules()} - NEEDS_TIME

        def evaluated() -> list[dict] | None:
            loaded = loaded_rules(prom.port)
            pending = {x["name"] for x in loaded if x["state"] in ("pending", "firing")}
            return loaded if pending >= want else None

        loaded = wait_until(evaluated, timeout=60, interval=0.5)
        assert sorted(x["name"] for x in loaded) == sorted(r["alert"] for r in rules())
        assert all(x["health"] == "ok" for x in loaded), loaded
        # Prometheus stored the summary and the gauge histogram (OpenMetrics' gaugehistogram)
        # as the rules and the docs read them: 30 jobs that each waited 60 s
        job = '{job="queuetop"}'
        assert prom.value('queuetop_job_wait_seconds{job="queuetop",quantile="0.95"}') == 60
        assert prom.value(f"queuetop_job_wait_window_seconds_gcount{job}") == 30
        assert len(prom.query(f"queuetop_job_wait_window_seconds_bucket{job}")) == 14
        p95 = prom.value(
            f"histogram_quantile(0.95, sum by (le) (queuetop_job_wait_window_seconds_bucket{job}))"
        )
        assert 30 < p95 <= 60, p95  # interpolated in the bucket (30 s, 60 s] that holds them
        parsed = {x["name"]: x["query"] for x in loaded}
        for rule in rules():  # what Prometheus parsed selects what the file names
            assert selectors(parsed[rule["alert"]]) == selectors(rule["expr"]), parsed
    finally:
        if prom is not None:
            prom.stop()
        assert export.stop() == 0, export.err.read_text()


def loaded_rules(port: int) -> list[dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/rules", timeout=10) as r:
        return [x for g in json.load(r)["data"]["groups"] for x in g["rules"]]
