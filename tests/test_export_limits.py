"""`queuetop export` on a queue with 20,000 group names, some of them hostile: the series are
capped per metric and no label value carries a terminal control (a real scrape)."""

from __future__ import annotations

from export_stage import ExportProcess
from helpers import wait_until
from prometheus_client.parser import text_string_to_metric_families

HOSTILE = "evil\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[2J"


def _queue(dsn: str, connect, tmp_path) -> str:
    conn = connect(autocommit=True)
    conn.execute(
        "CREATE TABLE public.q (id bigserial PRIMARY KEY, status text NOT NULL, "
        "queue text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
    )
    conn.execute(
        "INSERT INTO public.q (status, queue) SELECT 'ready', 'queue-' || g "
        "FROM generate_series(1, 20000) g"
    )
    conn.execute(
        "INSERT INTO public.q (status, queue) SELECT 'ready', %s FROM generate_series(1, 9)",
        (HOSTILE,),
    )
    spec = tmp_path / "q.toml"
    spec.write_text(
        '[queue]\ntable = "public.q"\nid = "id"\nstatus = "status"\ncreated_at = "created_at"\n'
        'group = "queue"\n[queue.states]\nready = ["ready"]\nrunning = ["running"]\n'
        'done = ["done"]\nfailed = ["failed"]\ndead = ["dead"]\n'
    )
    return str(spec)


def _scraped(export: ExportProcess) -> str | None:
    text = export.scrape()
    return text if "queuetop_group_jobs" in text else None


def test_group_series_are_capped_and_labels_escaped(dsn, connect, tmp_path):
    spec = _queue(dsn, connect, tmp_path)
    export = ExportProcess(dsn, tmp_path / "home", "--queue", spec, "--max-groups", "25")
    try:
        text = wait_until(lambda: _scraped(export), timeout=60)
    finally:
        export.stop()
    assert "\x1b" not in text and "\x07" not in text
    groups = {
        s.labels["queue"]
        for family in text_string_to_metric_families(text)
        if family.name == "queuetop_group_jobs"
        for s in family.samples
    }
    assert len(groups) == 25 and "(other)" in groups
    # the busiest group (9 jobs, the hostile name) is kept, shown escaped
    assert "evil\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\x1b[2J" in groups
    ready = {
        s.labels["queue"]: s.value
        for family in text_string_to_metric_families(text)
        if family.name == "queuetop_group_jobs"
        for s in family.samples
        if s.labels["role"] == "ready"
    }
    assert sum(ready.values()) == 20009  # nothing lost: the rest summed into (other)
