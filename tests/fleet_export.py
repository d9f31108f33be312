"""`queuetop export --targets FILE` in its own process, and reading what it serves: shared
by test_export_targets.py and test_export_scrape_timeout.py."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

from export_stage import ExportRun
from prometheus_client.parser import text_string_to_metric_families

DOCS = Path(__file__).resolve().parents[1] / "docs" / "targets.md"


class FleetExport(ExportRun):
    """`queuetop export --targets FILE --listen 127.0.0.1:0` in its own process."""

    def __init__(self, targets: str, home: Path, *extra: str, interval: float = 1.0):
        super().__init__(
            ["--targets", targets], r"/probe\?target=NAME", home, *extra, interval=interval
        )

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", headers=headers or {}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()


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
