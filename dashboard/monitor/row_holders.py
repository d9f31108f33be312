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

import uuid
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
    """Holders an earlier read found, each group keyed (pid, role, multixact mode): its
    rows and first ids; and pid -> the transaction ids it held them by."""

    rows: dict[tuple[int, str, str | None], int]
    ids: dict[tuple[int, str, str | None], list[Any]]
    xids: dict[int, set[str]]


def one_form(job_id: Any) -> Any:
    """A job id in one hashable form, whichever read gave it: a composite key (a JSON
    array) as a tuple, a uuid as its text."""
    if isinstance(job_id, list):
        return tuple(job_id)
    if isinstance(job_id, uuid.UUID):
        return str(job_id)
    return job_id


def _sort_ids(ids: list[Any]) -> list[Any]:
    try:
        return sorted(set(ids))
    except TypeError:  # mixed types cannot happen for one column; be safe anyway
        return list(dict.fromkeys(ids))


def _merge_carried(
    rows: dict[tuple[int, str, str | None], int],
    ids: dict[tuple[int, str, str | None], list[Any]],
    carried: Carried,
    xacts: dict[str, int],
) -> None:
    """Add what the last pass found to this moment's groups, per (pid, role): job by job
    where every group names all its jobs (this moment's mode wins: a plain holding may
    have become a multixact member's since), else by count (the larger of the two)."""
    keys = {(pid, role) for pid, role, _ in carried.rows}
    for pid, role in keys:
        if not any(xacts.get(x) == pid for x in carried.xids.get(pid, ())):
            continue  # that transaction ended, and its row locks with it
        now = [k for k in rows if k[:2] == (pid, role)]
        old = [k for k in carried.rows if k[:2] == (pid, role)]
        complete = all(rows[k] == len(set(ids[k])) for k in now) and all(
            carried.rows[k] == len(set(carried.ids.get(k, []))) for k in old
        )
        if complete:
            # job -> its modes: one session can hold a row in two (a key share and a share
            # are two members of one multixact)
            modes_of: dict[Any, set[str | None]] = defaultdict(set)
            for k in old:
                for j in carried.ids.get(k, []):
                    modes_of[j].add(k[2])
            fresh: dict[Any, set[str | None]] = defaultdict(set)
            for k in now:
                for j in ids[k]:
                    fresh[j].add(k[2])
            modes_of.update(fresh)
            for k in now:
                del rows[k], ids[k]
            for job, modes in modes_of.items():
                for mode in modes:
                    rows[(pid, role, mode)] += 1
                    ids[(pid, role, mode)].append(job)
        else:
            extra = sum(carried.rows[k] for k in old) - sum(rows[k] for k in now)
            seen = {j for k in now for j in ids[k]}
            if extra > 0:
                rows[(pid, role, None)] += extra
                ids[(pid, role, None)].extend(
                    j for k in old for j in carried.ids.get(k, []) if j not in seen
                )


def holdings(
    read: SessionsRead, spec: QueueSpec, apps: dict[int, str], carried: Carried | None
) -> Holdings:
    """Holders from this moment's reading, plus (scan mode) those the last pass found
    whose transaction still runs with the same session."""
    rows: dict[tuple[int, str, str | None], int] = defaultdict(int)
    ids: dict[tuple[int, str, str | None], list[Any]] = defaultdict(list)
    for g in read.held:
        key = (g.pid, spec.role_of(g.status) or "other", g.mode)
        rows[key] += g.rows
        ids[key].extend(one_form(j) for j in g.ids)
    if carried is not None:
        _merge_carried(rows, ids, carried, read.xacts)
    holders = tuple(
        RowLockHolder(
            pid=pid,
            role=role,
            rows=n,
            application_name=apps.get(pid, ""),
            job_ids=tuple(_sort_ids(ids[(pid, role, mode)])[:IDS_SHOWN]),
            mode=mode,
        )
        for (pid, role, mode), n in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1]))
        if n
    )
    per_pid: dict[int, list[Any]] = defaultdict(list)
    for (pid, _, _), v in ids.items():
        per_pid[pid].extend(v)
    held_jobs = {pid: tuple(_sort_ids(v)[:IDS_SHOWN]) for pid, v in per_pid.items() if v}
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
