"""Acceptance: a recording made during a staged pile-up, a crash and a requeue (real sessions,
the real action) replays the same blocker tree, stale lease and audit record at the frame's
time as the snapshots taken live showed, and `incident --json` names them."""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
from datetime import datetime, timezone

import psycopg
from demo_queue import claim, setup_demo
from helpers import is_waiting_on_lock, wait_until
from helpers.pilot import until

from dashboard import db
from dashboard.actions import ObservedJob, TableAudit, requeue
from dashboard.cli import main
from dashboard.cli.replay_command import replay_app
from dashboard.models import Snapshot
from dashboard.recorder import Recorder, Recording, RecordingWriter, codec
from dashboard.recorder.audit_follow import AuditFollower
from dashboard.recorder.headless import RecordLoop
from dashboard.ui.app import QueuetopApp
from dashboard.ui.screens.audit import AuditScreen, AuditTable

INTERVAL = 0.3
TABLES = ("waiting", "locks", "idle", "stale")


class KeepingRecorder(Recorder):
    """The recorder, keeping each snapshot it was handed: what the screen showed live."""

    def __init__(self, *args):
        super().__init__(*args)
        self.kept: list[Snapshot] = []

    def record(self, snap: Snapshot) -> None:
        self.kept.append(snap)
        super().record(snap)


def stage_and_record(dsn, connect, background, path):
    """Pile-up (a holder and two waiters in a chain), a crashed claim gone stale, the
    requeue that recovers it; all while a real RecordLoop records. Returns the facts."""
    spec = setup_demo(dsn, jobs=6)
    with psycopg.connect(dsn) as clock:
        began = clock.execute("SELECT now()").fetchone()[0]
    follower = AuditFollower(dsn, None, datetime.now(timezone.utc), every_s=INTERVAL)
    recorder = KeepingRecorder(RecordingWriter(path, spec, INTERVAL), follower)
    loop = RecordLoop(dsn, spec, INTERVAL, recorder, log=lambda line: None)
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    thread.start()
    kept = recorder.kept
    try:
        look = connect(autocommit=True, application_name="ground-truth")
        holder = connect(application_name="holder")
        holder.execute("SELECT id FROM queuetop_demo.jobs WHERE id = 1 FOR UPDATE")
        w1, w2 = connect(application_name="waiter-1"), connect(application_name="waiter-2")
        lock = "SELECT id FROM queuetop_demo.jobs WHERE id = 1 FOR UPDATE"
        first = background(lambda: w1.execute(lock).fetchall())
        wait_until(lambda: is_waiting_on_lock(look, w1.info.backend_pid))
        second = background(lambda: w2.execute(lock).fetchall())
        wait_until(lambda: is_waiting_on_lock(look, w2.info.backend_pid))
        pids = (holder.info.backend_pid, w1.info.backend_pid, w2.info.backend_pid)
        truth = {  # ground truth, read while they wait
            pid: set(look.execute("SELECT pg_blocking_pids(%s)", (pid,)).fetchone()[0])
            for pid in pids[1:]
        }
        wait_until(lambda: any(len(s.waiting) == 2 for s in kept), timeout=20)
        # the crash: a worker commits its claim (a 1 s lease) and is gone
        worker = psycopg.connect(dsn, application_name="worker-crashed", autocommit=True)
        job_id, _ = claim(worker, "worker-crashed", lease_s=1.0)
        worker.close()
        wait_until(lambda: any(_stale(s, job_id) for s in kept), timeout=20)
        holder.rollback()
        first.join()
        w1.rollback()  # it held the row after the holder: the second waiter waited on it
        second.join()
        w2.rollback()
        # the requeue, as the dashboard's R runs it, on the action connection
        lease = next(_stale(s, job_id) for s in reversed(kept) if _stale(s, job_id))
        with db.connect_action(dsn) as action:
            result = requeue(
                action, spec, [ObservedJob.from_stale(lease)], audit=TableAudit(), reason="crash"
            )
        assert result.changed == (str(job_id),)
        recovered = len(kept)
        wait_until(lambda: len(kept) > recovered + 2 and not _stale(kept[-1], job_id))
        wait_until(lambda: Recording(path).audit(), timeout=20)
        # the loop followed the trail on its poll's session: the server saw one queuetop session
        sessions = look.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'queuetop' "
            "AND backend_start >= %s",
            (began,),
        ).fetchall()
        assert sessions == [(loop._conn.info.backend_pid,)]
    finally:
        stop.set()
        thread.join(10)
        loop.close()
        recorder.close()
    return spec, kept, pids, truth, job_id


def _stale(snap: Snapshot, job_id: int):
    return next((s for s in snap.stale_leases if str(s.id) == str(job_id)), None)


def rows(app: QueuetopApp, table_id: str) -> dict:
    table = app.table(table_id)
    return {key: table.row_texts(table.get_row_index(key)) for key in table.items}


async def shown(app: QueuetopApp) -> dict[str, dict]:
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        return {t: rows(app, t) for t in TABLES}


def replay_at(path, at: float) -> QueuetopApp:
    when = datetime.fromtimestamp(at, timezone.utc).isoformat()
    return replay_app(argparse.Namespace(file=str(path), at=when))


async def audit_targets(path, at: float) -> list[str]:
    """What the replay's audit screen (A) lists at that time."""
    app = replay_at(path, at)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: app.snapshot is not None)
        assert "REPLAY" in str(app.query_one("#status").render())
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.loads)
        return [r.target for r in app.screen.query_one(AuditTable).items.values()]


def test_a_recording_replays_the_pile_up_the_stale_lease_and_the_requeue(
    dsn, connect, background, tmp_path, capsys
):
    path = tmp_path / "incident.qtr"
    spec, kept, (holder, w1, w2), truth, job_id = stage_and_record(dsn, connect, background, path)
    recording = Recording(path)
    b = recording.bounds()
    recorded = list(recording.snapshots(b.first_id, b.last_id))
    assert recorded == kept  # every frame is the snapshot taken live, field for field
    assert [codec.from_tree(codec.to_tree(s), Snapshot) for s in kept] == kept

    pile = next(s for s in kept if len(s.waiting) == 2)
    waiting = {w.pid: w for w in pile.waiting}
    assert set(waiting) == {w1, w2} and waiting[w2].chain == (holder, w1, w2)
    assert all(set(w.blocked_by) <= truth[pid] for pid, w in waiting.items())
    crashed = next(s for s in kept if _stale(s, job_id))
    requeued = next(r for r in recording.audit() if r.target == str(job_id))
    assert (requeued.action, requeued.outcome, requeued.reason) == ("requeue", "changed", "crash")

    async def go():
        for live in (pile, crashed):  # the replay at the frame's time, beside the live view
            replayed = await shown(replay_at(path, live.taken_at.timestamp()))
            assert replayed == await shown(QueuetopApp(spec, None, poll=False, snapshots=[live]))
        assert str(job_id) in replayed["stale"]  # keyed by job id
        # the audit record is there from the frame after the action on, not before
        assert str(job_id) not in await audit_targets(path, crashed.taken_at.timestamp())
        assert str(job_id) in await audit_targets(path, b.last_at)

    asyncio.run(go())

    assert main(["incident", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    peak = report["peak_waiting"]
    assert peak["waiting"] == 2 and peak["chain"] == [holder, w1, w2]
    assert peak["blocker"]["pid"] == holder and peak["blocker"]["application"] == "holder"
    assert "FOR UPDATE" in peak["blocker"]["query"] and peak["waiters_of_blocker"] == 2
    [lease] = [s for s in report["stale_leases"] if s["job_id"] == str(job_id)]
    assert lease["worker"] == "worker-crashed" and lease["gone_at"] is not None
    assert lease["recovery"]["action"] == "requeue" and lease["recovery"]["outcome"] == "changed"
    assert lease["recovery"]["who"] == requeued.who
