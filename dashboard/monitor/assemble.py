"""A Snapshot from a Monitor's sections, each as fresh as its last read (monitor/poll.py).

Ages read by an older section have grown since: they are given as of now. The row locks
of the sessions read this poll decide which jobs are held, and by whom.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from dashboard.models import ACTIVE_ROLES, ServerInfo, Snapshot
from dashboard.monitor import counts as counting
from dashboard.monitor import finished, row_holders, unknowns
from dashboard.monitor.latency import snapshot_latency
from dashboard.monitor.sessions import SessionsRead

if TYPE_CHECKING:
    from dashboard.monitor.poll import Monitor


def snapshot(m: Monitor, server: ServerInfo, elapsed: float, now: float) -> Snapshot:
    """The snapshot of this poll: `elapsed` its wall time, `now` the monitor's clock."""
    spec, mode = m.spec, m.plan.mode if m.plan else "index"
    source = m.sections["scan" if mode == "scan" else "counts"].data
    counted = source or counting.QueueCounts()
    by_status, estimated = finished.with_finished(
        spec, m.sections["finished"].data, dict(counted.by_status), counted.counted
    )
    role_counts = counting.QueueCounts(by_status=by_status, later=counted.later).role_counts(spec)
    counts = {role: role_counts.get(role, 0) for role in spec.roles}
    read = m.sections["finished"].data
    if read is not None and read.dead_rows is not None:  # the dead-letter table's rows
        counts["dead"] += read.dead_rows
        if read.dead_estimated and "dead" not in estimated:
            estimated.append("dead")
    notes = list(m.notes) + list(m.unreadable.notes)
    sections = tuple(s.state(now) for s in m.sections.values() if m.shown(s.name))
    unmapped_rows = unknowns.unmapped(spec, by_status)
    # ages read by an older section have grown since: they are given as of now
    counts_age = m.age("scan" if mode == "scan" else "counts", now)
    stale_age = m.age("stale", now)
    stale = [
        replace(lease, overdue_s=lease.overdue_s + stale_age)
        for lease in m.sections["stale"].data or []
    ]
    read = m.sections["locks"].data
    read = read if isinstance(read, SessionsRead) else SessionsRead()
    carried = counting.carried(counted) if mode == "scan" and source is not None else None
    apps = {lk.pid: lk.application_name for lk in read.locks}
    held = row_holders.holdings(read, spec, apps, carried)
    locked = held.locked if held.locked is not None else counted.locked
    return Snapshot(
        taken_at=datetime.now(timezone.utc),
        queue=str(spec.table),
        server=server,
        counts=counts,
        estimated=tuple(estimated),
        by_status=by_status,
        locked={role: locked.get(role, 0) for role in ACTIVE_ROLES if role in spec.roles},
        row_lock_holders=held.row_lock_holders,
        oldest_ready_age_s=None
        if counted.oldest_ready_s is None
        else counted.oldest_ready_s + counts_age,
        locks=tuple(read.locks),
        waiting=tuple(read.waiting),
        idle_in_transaction=row_holders.with_held_rows(
            read.idle, held.row_lock_holders, held.held_jobs
        ),
        stale_leases=tuple(stale),
        blockers=tuple(read.blockers),
        warnings=tuple(notes),
        elapsed_ms=elapsed * 1000,
        groups=row_holders.with_group_locks(
            tuple(
                replace(g, oldest_ready_age_s=g.oldest_ready_age_s + counts_age)
                if g.oldest_ready_age_s is not None
                else g
                for g in counted.group_stats()
            ),
            held.group_locked,
        ),
        sections=sections,
        monitor_load=m.meter.load(now),
        count_mode=mode,
        held_jobs=held.held_jobs,
        stale_count=counted.stale
        if source is not None and spec.can_find_stale() and not m.unreadable.workers
        else None,
        roles=spec.roles,
        threshold=spec.threshold,
        deadlocks_total=read.deadlocks,
        deadlocks_per_s=m.deadlocks_per_s,
        count_read_at=finished.read_times(
            spec,
            m.sections["scan" if mode == "scan" else "counts"],
            m.sections["finished"],
        ),
        unmapped=unmapped_rows,
        unknowns=unknowns.lines(spec, unmapped_rows, sections, by_status),
        latency=snapshot_latency(
            m.latency,
            m.sections["latency"].data,
            m.sections["latency"].error,
            m.sections["latency"].every_s,
        ),
    )
