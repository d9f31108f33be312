"""The latency in a few plain lines, for `queuetop snapshot` (the JSON has all of it)."""

from __future__ import annotations

from dashboard.models import Durations, Latency
from dashboard.models.spec import short_duration
from dashboard.text.untrusted import escape_controls


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f}ms" if seconds < 1 else f"{seconds:.1f}s"


def _durations(kind: str, d: Durations, jobs: str) -> str:
    return (
        f"{kind} p50 {_age(d.p50_s)}, p95 {_age(d.p95_s)}, p99 {_age(d.p99_s)} ({d.count} {jobs})"
    )


def latency_lines(latency: Latency | None) -> list[str]:
    """One line of the whole queue's wait and run times over the window, then what is
    missing, paced or not read, each whole."""
    if latency is None:
        return []
    q, said = latency.queue, []
    if q.wait is not None:
        said.append(_durations("wait", q.wait, "started"))
    if q.run is not None:
        said.append(_durations("run", q.run, "timed"))
    if latency.finished_measured:
        said.append(f"{q.finished} finished, {q.failed} failed")
    window = short_duration(latency.window_s)
    out = [f"  latency over the last {window}: " + ("; ".join(said) if said else "not measured")]
    if latency.error:
        out.append(f"  latency: {escape_controls(latency.error)}")
    if latency.paced:
        out.append(f"  latency: {escape_controls(latency.paced)}")
    out += [f"  latency: {escape_controls(line)}" for line in latency.missing]
    return out
