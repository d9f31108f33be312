"""An Incident as text a person pastes into a postmortem, or as JSON.

Everything that came from the database or the audit trail (queries, application names,
job ids, workers, who, reasons) is untrusted: the text escapes its control characters,
the JSON keeps it exact.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from dashboard.recorder.incident import Blocker, Incident, WaitPeak
from dashboard.render.report import age, one_line
from dashboard.text.untrusted import escape_controls

QUERY_WIDTH = 160


def _iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, timezone.utc).isoformat()


def _clock(at: float | None) -> str:
    if at is None:
        return "-"
    return f"{datetime.fromtimestamp(at, timezone.utc).astimezone():%Y-%m-%d %H:%M:%S}"


def _safe(text: Any, width: int | None = None) -> str:
    flat = escape_controls(str(text))
    return one_line(flat, width) if width else flat


# --- JSON -----------------------------------------------------------------------------------


_TIMES = ("since", "until", "start", "end", "peak_at", "at", "first_seen", "last_seen", "gone_at")


def _times_as_iso(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: _iso(v) if k in _TIMES and isinstance(v, (int, float)) else _times_as_iso(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_times_as_iso(v) for v in node]
    return node


def incident_json(incident: Incident) -> str:
    """Times in ISO 8601 (UTC); text exactly as recorded."""
    data = asdict(incident)
    data["audit"] = [r.as_dict() for r in incident.audit]
    data = _times_as_iso({k: v for k, v in data.items() if k != "audit"}) | {"audit": data["audit"]}
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


# --- text -----------------------------------------------------------------------------------


def _blocker_line(b: Blocker | None, pid: int | None) -> str:
    if b is None:
        return f"pid {pid} (its session was not in the frame)"
    parts = [f"pid {b.pid}", f"application {_safe(b.application) or '-'}"]
    if b.state:
        parts.append(_safe(b.state))
    if b.xact_age_s is not None:
        parts.append(f"transaction {age(b.xact_age_s)} old")
    return ", ".join(parts) + f"\n      query: {_safe(b.query, QUERY_WIDTH) or '-'}"


def _moment(title: str, m: WaitPeak) -> list[str]:
    chain = " -> ".join(str(p) for p in m.chain) or "-"
    root = m.chain[0] if m.chain else None
    return [
        f"{title} at {_clock(m.at)}: {m.waiting} waiting session(s); longest chain {chain}",
        f"    root blocker: {_blocker_line(m.blocker, root)}",
        f"    sessions waiting behind it: {m.waiters_of_blocker}",
    ]


def incident_text(incident: Incident) -> str:
    i = incident
    lines = [
        f"Incident summary: queue {_safe(i.queue)}, recording {i.file}",
        f"window {_clock(i.since)} .. {_clock(i.until)} ({age(i.until - i.since)}, "
        f"{i.frames} frames)",
        "",
        f"Backed up (oldest ready job over {age(i.max_oldest_ready_s)}):",
    ]
    lines += [
        f"  {_clock(b.start)} .. {_clock(b.end)} ({age(b.end - b.start)}): oldest ready "
        f"{age(b.peak_age_s)} at {_clock(b.peak_at)}, {b.peak_ready} ready then"
        for b in i.backlogs
    ] or ["  never"]
    lines += ["", "Waiting sessions:"]
    if i.peak_waiting is None:
        lines.append("  none waited on a lock")
    else:
        lines += ["  " + line for line in _moment("peak", i.peak_waiting)]
        if i.longest_chain is not None and i.longest_chain.at != i.peak_waiting.at:
            lines += ["  " + line for line in _moment("longest chain", i.longest_chain)]
    lines += ["", "Stale leases:"]
    for s in i.stale_leases:
        already = " (already stale when the window began)" if s.stale_before_window else ""
        lines.append(
            f"  job {_safe(s.job_id)} (worker {_safe(s.worker or '-')}): stale "
            f"{_clock(s.first_seen)}{already}, up to {age(s.max_overdue_s)} overdue"
        )
        if s.recovery is not None:
            r = s.recovery
            actor = f", {_safe(r.actor)}" if r.actor else ""
            reason = f", reason {_safe(r.reason, 80)}" if r.reason else ""
            lines.append(
                f"      recovered: {_safe(r.action)} at {_clock(r.at)} by {_safe(r.who)}{actor}"
                f" ({_safe(r.outcome)}{reason})"
            )
        elif s.gone_at is not None:
            lines.append(
                f"      gone at {_clock(s.gone_at)}, by no recorded action (it finished, or "
                "was recovered outside queuetop)"
            )
        else:
            lines.append("      still stale at the end of the window")
    if not i.stale_leases:
        lines.append("  none")
    lines += ["", "Oldest idle transaction:"]
    h = i.oldest_idle
    if h is None:
        lines.append("  none")
    else:
        horizon = (
            f"held the xmin horizon {age(h.held_horizon_s)} (xmin age up to {h.max_xmin_age})"
            if h.held_horizon_s is not None
            else "held no snapshot (the xmin horizon was not held)"
        )
        lines += [
            f"  pid {h.pid}, application {_safe(h.application) or '-'}, user {_safe(h.user)}: "
            f"transaction {age(h.max_xact_age_s)} old, seen {_clock(h.first_seen)} .. "
            f"{_clock(h.last_seen)}; {horizon}",
            f"      last query: {_safe(h.query, QUERY_WIDTH) or '-'}",
        ]
    d = i.deadlocks
    lines += ["", "Deadlocks:"]
    if not d.recorded:
        lines.append("  not in this recording (its snapshots carry no deadlock figure)")
    else:
        peak = f", at most {d.peak:g}/s at {_clock(d.peak_at)}" if d.peak_at is not None else ""
        lines.append(f"  {d.total:g} counted by the server (pg_stat_database){peak}")
    lines += ["", "The monitor's own cost:"]
    m = i.monitor
    if m is None:
        lines.append("  no frame")
    else:
        load = (
            f"; database time {m.load_median:.1%} of wall time (median), {m.load_max:.1%} at most"
            if m.load_median is not None and m.load_max is not None
            else ""
        )
        lines.append(
            f"  {m.polls} polls: {m.poll_ms_median:.0f} ms median, {m.poll_ms_p95:.0f} ms p95, "
            f"{m.poll_ms_max:.0f} ms at most{load}"
        )
        if m.slowest_section:
            lines.append(
                f"  costliest section: {m.slowest_section} ({m.slowest_section_ms:.0f} ms)"
            )
        for name, n in sorted(m.section_errors.items()):
            lines.append(f"  section {name} behind (timed out or blocked) in {n} frame(s)")
    lines += ["", f"Audit records in the window: {len(i.audit)}"]
    lines += [
        f"  {_clock(r.at.timestamp())} {_safe(r.action)} {_safe(r.target)}: "
        f"{_safe(r.what_happened)} by {_safe(r.who)}"
        for r in i.audit[-20:]
    ]
    return "\n".join(lines)
