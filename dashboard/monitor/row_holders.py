"""Who holds which queue rows, as one moment's sessions reading says, into the snapshot.

Two facts make the picture complete without reading the whole table each poll:
- A session queued on a row whose holder then finishes it locks the row's new version
  before re-checking it, and keeps that lock when the row no longer matches and it moves
  on to the next candidate. The monitor remembers the jobs a transaction was queued on
  (SeenRows) and reads them again, by primary key, while that transaction lives.
- A row lock lasts until its transaction (or subtransaction) ends. Holders found by an
  earlier read (the one pass of scan mode, paced) still hold those rows while their
  transaction id is still running at this moment with the same session.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from dashboard.models import (
    ACTIVE_ROLES,
    GroupStats,
    IdleTransaction,
    QueueSpec,
    RowLockHolder,
    WaitingSession,
)
from dashboard.monitor.sessions import SessionsRead

SEEN_LIMIT = 200  # remembered jobs at most: a pile-up of 200 sessions is read in full
IDS_SHOWN = 5


class SeenRows:
    """The jobs each live transaction was seen queued on: (pid, its xact start) -> ids."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, datetime | None], list[Any]] = {}

    def ids(self) -> list[Any]:
        out: list[Any] = []
        for ids in self._seen.values():
            out.extend(i for i in ids if i not in out)
        return out[:SEEN_LIMIT]

    def update(self, read: SessionsRead) -> None:
        """Forget transactions that ended; remember the rows queued on now."""
        live = {(pid, start) for pid, start in read.xact_start.items()}
        self._seen = {k: v for k, v in self._seen.items() if k in live}
        for pid, row in read.queued.items():
            if row.job_id is None:
                continue
            ids = self._seen.setdefault((pid, read.xact_start.get(pid)), [])
            if row.job_id not in ids and sum(map(len, self._seen.values())) < SEEN_LIMIT:
                ids.append(row.job_id)


@dataclass(frozen=True)
class Holdings:
    """The snapshot's fields about held rows, all of one moment."""

    row_lock_holders: tuple[RowLockHolder, ...]
    held_jobs: dict[int, tuple[Any, ...]]
    locked: dict[str, int] | None  # per role; None: the count's own (scan mode)
    group_locked: dict[str, int] | None


@dataclass(frozen=True)
class Carried:
    """Holders an earlier read found: (pid, role) -> rows, pid -> ids, pid -> its xids."""

    rows: dict[tuple[int, str], int]
    ids: dict[int, list[Any]]
    xids: dict[int, set[str]]


def _sort_ids(ids: list[Any]) -> list[Any]:
    try:
        return sorted(set(ids))
    except TypeError:  # mixed types cannot happen for one column; be safe anyway
        return list(dict.fromkeys(ids))


def holdings(
    read: SessionsRead, spec: QueueSpec, apps: dict[int, str], carried: Carried | None
) -> Holdings:
    rows: dict[tuple[int, str, str | None], int] = defaultdict(int)
    ids: dict[int, list[Any]] = defaultdict(list)
    for g in read.held:
        role = spec.role_of(g.status) or "other"
        rows[(g.pid, role, g.mode)] += g.rows
        ids[g.pid].extend(g.ids)
    if carried is not None:  # still the same transaction now: it still holds them
        for (pid, role), n in carried.rows.items():
            if any(read.xacts.get(x) == pid for x in carried.xids.get(pid, ())):
                held_now = sum(v for (p, r, _), v in rows.items() if p == pid and r == role)
                rows[(pid, role, None)] += max(n - held_now, 0)
                ids[pid].extend(carried.ids.get(pid, []))
    holders = tuple(
        RowLockHolder(
            pid=pid,
            role=role,
            rows=n,
            application_name=apps.get(pid, ""),
            job_ids=tuple(_sort_ids(ids[pid])[:IDS_SHOWN]),
            mode=mode,
        )
        for (pid, role, mode), n in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1]))
        if n
    )
    held_jobs = {pid: tuple(_sort_ids(v)[:IDS_SHOWN]) for pid, v in ids.items() if v}
    if carried is not None or not read.rows_read:
        return Holdings(holders, held_jobs, None, None)
    locked: dict[str, int] = defaultdict(int)
    group_locked: dict[str, int] = defaultdict(int)
    for (status, grp), n in read.locked.items():
        role = spec.role_of(status)
        if role:
            locked[role] += n
        if grp is not None and role in ACTIVE_ROLES:
            group_locked[grp] += n
    return Holdings(holders, held_jobs, dict(locked), dict(group_locked))


def with_held_rows(
    idle: list[IdleTransaction], holders: tuple[RowLockHolder, ...], held: dict[int, tuple]
) -> tuple[IdleTransaction, ...]:
    """Each idle transaction with the queue rows it holds."""
    rows: dict[int, int] = defaultdict(int)
    for h in holders:
        rows[h.pid] += h.rows
    return tuple(
        replace(i, job_ids=held.get(i.pid, ()), rows_held=rows.get(i.pid, 0)) for i in idle
    )


def with_group_locks(
    groups: tuple[GroupStats, ...], group_locked: dict[str, int] | None
) -> tuple[GroupStats, ...]:
    if group_locked is None:
        return groups
    return tuple(replace(g, locked=group_locked.get(g.name, 0)) for g in groups)


def waiting_sessions(read: SessionsRead) -> tuple[WaitingSession, ...]:
    return tuple(read.waiting)
