"""Plain-text and JSON renderings of a Snapshot, for `queuetop snapshot`."""

from __future__ import annotations

import dataclasses
import json
import shlex
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from dashboard.models import NO_STATE, Snapshot, Understood, id_text, state_label
from dashboard.render.latency import latency_lines
from dashboard.render.who_holds import (
    MEMBER_MODES,
    fold_ordinary,
    jobs_text,
    lock_kind,
    lock_state,
    lock_target,
    row_lock_mode,
)
from dashboard.text.untrusted import escape_controls


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (UUID, Decimal)):
        return str(value)
    return value


def snapshot_dict(snap: Snapshot) -> dict[str, Any]:
    """The JSON shape of a snapshot (see `queuetop snapshot --json`)."""
    data = _plain(snap)
    data["taken_at"] = snap.taken_at.isoformat()
    data["estimated"] = list(snap.estimated)
    data["by_status"] = {state_label(k): v for k, v in snap.by_status.items()}
    # a NULL state (or no rule's conditions) is null here, never a made-up word
    data["unmapped"] = [
        {"value": None if v == NO_STATE else v, "rows": n} for v, n in snap.unmapped.items()
    ]
    data["status"] = "unknown" if snap.unknowns else "known"
    return data


def understood_dict(understood: Understood | None) -> dict[str, Any] | None:
    """How `--table` understood the table: confidence, evidence, doubts, the pins."""
    if understood is None:
        return None
    return {
        "confidence": understood.confidence,
        "evidence": list(understood.evidence),
        "doubts": list(understood.doubts),
        "pin_flags": list(understood.pin_flags),
        "pin_toml": understood.pin_toml,
    }


def understood_text(understood: Understood) -> list[str]:
    """The understanding of a table, for a person: what, why, and the flags that pin it."""
    out = [f"understood with {understood.confidence} confidence (nobody described this table):"]
    out += [f"  + {escape_controls(line)}" for line in understood.evidence]
    out += [f"  ? {escape_controls(line)}" for line in understood.doubts]
    if understood.pin_flags:
        words = " ".join(shlex.quote(w) for w in understood.pin_flags)
        out.append(f"  pin it: queuetop watch {escape_controls(words)}")
    return out


def snapshot_json(snap: Snapshot) -> str:
    return json.dumps(snapshot_dict(snap), indent=2, sort_keys=False)


def age(seconds: float | None) -> str:
    """A short human age: 0.4s, 9.5s, 14s, 3m12s, 2h05m, 3d04h (tenths below 10 s:
    lock waits and claims are often shorter than a second)."""
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{max(seconds, 0):.1f}s"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def one_line(text: str, width: int) -> str:
    """Whitespace folded, cut with an ellipsis to `width` characters.

    Leading `--` comment lines are dropped: in a narrow column the statement itself says
    more than its comment (the detail view shows both).
    """
    lines = text.strip().splitlines()
    while len(lines) > 1 and lines[0].lstrip().startswith("--"):
        lines.pop(0)
    flat = " ".join(" ".join(lines).split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


MAX_CELL = 80  # a cell's characters: one 10 KB group name must not pad every line to it
GROUPS_SHOWN = 50  # the busiest groups listed; --all-groups lists them all


def _cell(text: str) -> str:
    """A cell: the database's text on its one line, escaped, cut (marked) at MAX_CELL."""
    shown = escape_controls(text)
    return shown if len(shown) <= MAX_CELL else shown[: MAX_CELL - 1] + "…"


def _table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return [f"{title}: none"]
    rows = [[_cell(cell) for cell in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [f"{title} ({len(rows)})", "  " + fmt.format(*header)] + [
        "  " + fmt.format(*r) for r in rows
    ]


def busiest_groups(groups, limit: int | None):
    """The `limit` busiest groups (active jobs, then stale leases), and how many are left."""
    if limit is None or len(groups) <= limit:
        return list(groups), 0
    ranked = sorted(
        groups, key=lambda g: (-(g.ready + g.scheduled + g.running), -g.stale_leases, g.name)
    )
    return ranked[:limit], len(groups) - limit


def snapshot_text(snap: Snapshot, all_groups: bool = False) -> str:
    """A readable multi-section report of one snapshot (the busiest GROUPS_SHOWN groups
    unless `all_groups`)."""
    out = [
        escape_controls(
            f"queue {snap.queue} on {snap.server.database} ({snap.server.address}, "
            f"PostgreSQL {snap.server.version}) at {snap.taken_at:%Y-%m-%d %H:%M:%S %Z}"
        ),
        "",
    ]
    # what could not be read or mapped first, whole: never read past as an all-clear
    out += [f"UNKNOWN: {escape_controls(line)}" for line in snap.unknowns]
    if snap.unknowns:
        out.append("")
    rows = []
    for role in snap.roles:
        n = snap.counts.get(role, 0)
        mark = "~" if role in snap.estimated else ""
        locked = snap.locked.get(role)
        rows.append([role, f"{mark}{n}", "" if locked is None else str(locked)])
    out += _table("states", ["role", "rows", "locked now"], rows)
    out.append(f"  oldest ready: {age(snap.oldest_ready_age_s)}")
    out.append(
        "  by status: "
        + ", ".join(
            f"{escape_controls(state_label(k))}={v}" + (" (no role)" if k in snap.unmapped else "")
            for k, v in sorted(snap.by_status.items())
        )
    )
    if snap.stale_count is not None:
        out.append(f"  stale leases: {snap.stale_count}")
    if snap.threshold is not None:
        out.append(f"  {escape_controls(snap.threshold.describe())}")
    out.append(
        f"  counted {'through indexes' if snap.count_mode == 'index' else 'in one pass'}"
        + (
            ""
            if snap.monitor_load is None
            else f"; monitor load {snap.monitor_load:.1%} of the server's time"
        )
    )
    if snap.deadlocks_total is not None:
        rate = "" if snap.deadlocks_per_s is None else f", {snap.deadlocks_per_s:.2f}/s lately"
        out.append(f"  deadlocks in this database: {snap.deadlocks_total} in all{rate}")
    for section in snap.sections:
        if section.error:
            old = "never read" if section.age_s is None else f"{age(section.age_s)} old"
            out.append(f"  {section.name}: {old}: {escape_controls(section.error)}")
    out += latency_lines(snap.latency)
    out.append("")
    if snap.groups:
        shown, rest = busiest_groups(snap.groups, None if all_groups else GROUPS_SHOWN)
        out += _table(
            "groups",
            ["group", "ready", "scheduled", "running", "locked", "oldest ready", "stale"],
            [
                [
                    g.name,
                    str(g.ready),
                    str(g.scheduled),
                    str(g.running),
                    str(g.locked),
                    age(g.oldest_ready_age_s),
                    str(g.stale_leases),
                ]
                for g in shown
            ],
        )
        if rest:
            out[-len(shown) - 2] = f"groups ({len(snap.groups)}, the {len(shown)} busiest shown)"
            out.append(f"  … and {rest} more groups (--all-groups lists them)")
    out += _table(
        "row-lock holders",
        ["pid", "role", "rows", "mode", "jobs", "application"],
        [
            [
                str(h.pid),
                h.role,
                str(h.rows),
                MEMBER_MODES.get(h.mode, h.mode) if h.mode else "-",
                jobs_text(h.job_ids, h.rows, 40) or "-",
                h.application_name,
            ]
            for h in snap.row_lock_holders
        ],
    )
    out += _table(
        "waiting sessions",
        ["pid", "blocked by", "waiting", "queued for", "held by", "holds", "chain", "query"],
        [
            [
                str(w.pid),
                ",".join(map(str, w.blocked_by)),
                age(w.wait_s),
                "-" if w.job_id is None else f"job {w.job_id}" + (" (first)" * w.first_in_line),
                ",".join(map(str, w.row_holders)) or "-",
                jobs_text(snap.held_jobs.get(w.pid, ()), len(snap.held_jobs.get(w.pid, ())), 20)
                or "-",
                " -> ".join(map(str, w.chain)),
                one_line(w.query, 50),
            ]
            for w in snap.waiting
        ],
    )
    out += _table(
        "idle in transaction",
        ["pid", "application", "xact age", "idle", "locks", "holds jobs", "xmin age"],
        [
            [
                str(i.pid),
                i.application_name,
                age(i.xact_age_s),
                age(i.idle_s),
                str(i.locks_held),
                jobs_text(i.job_ids, i.rows_held, 20) or "-",
                "-" if i.xmin_age is None else str(i.xmin_age),
            ]
            for i in snap.idle_in_transaction
        ],
    )
    stale_header = ["id", "worker", "token", "attempts", "overdue", "worker alive"]
    out += _table(
        "stale leases",
        stale_header,
        [
            [
                id_text(s.id),
                s.worker or "-",
                "-" if s.lease_token is None else str(s.lease_token),
                "-" if s.attempts is None else str(s.attempts),
                age(s.overdue_s),
                {True: "yes", False: "no", None: "unknown"}[s.worker_alive],
            ]
            for s in snap.stale_leases
        ],
    )
    waits_for = {w.pid: w.job_id for w in snap.waiting if w.job_id is not None}
    kept, folded = fold_ordinary(list(snap.locks))
    out += _table(
        "locks (each session's ordinary table locks on one line)",
        ["pid", "mode", "granted", "type", "on", "application"],
        [
            [
                str(lk.pid),
                row_lock_mode(lk),
                lock_state(lk),
                lock_kind(lk),
                lock_target(lk, waits_for.get(lk.pid)),
                lk.application_name,
            ]
            for lk in kept[:40]
        ]
        + [
            [str(f.pid), f.strongest, "yes", f"{f.count} locks", f.describe(), f.application_name]
            for f in folded[:40]
        ],
    )
    for note in snap.warnings:
        out.append(f"warning: {escape_controls(note)}")
    return "\n".join(out)
