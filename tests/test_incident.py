"""`queuetop incident` on a recording made of known frames: the backlog, the wait peak and
its root blocker, stale leases and who recovered them (from the audit), the oldest idle
transaction's hold on the xmin horizon, the monitor's cost; hostile text escaped in the
text and exact in the JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.audit.trail import AuditRecord
from dashboard.cli import main
from dashboard.models import IdleTransaction, SessionInfo, StaleLease, WaitingSession
from dashboard.recorder import RecordingWriter

EVIL_APP = "app\x1b]0;owned\x07"
EVIL_QUERY = "SELECT 1 /* \x1b[2J */ FOR UPDATE"


def at(i: int):
    return T0 + timedelta(seconds=i)


def lease(job: int, overdue: float) -> StaleLease:
    return StaleLease(job, "running", "worker\x1b[31m-7", 3, 1, at(-60), at(-30), overdue, False)


def waiter(pid: int, chain: tuple[int, ...]) -> WaitingSession:
    return WaitingSession(pid, T0, "w", chain[-2:-1], 1.0, "Lock:tuple", "SELECT …", chain)


def frames():
    """60 frames, one a second: a backlog from 10 s to 19 s, three waiters behind pid 900
    from 20 s to 29 s (a chain of 3 at 25 s), job 77 stale from 30 s and requeued at 40 s,
    job 88 stale from 50 s to the end, an idle transaction from the start holding xmin, and
    two deadlocks at 22 s."""
    base = fixed_snapshot(0, rows=0)
    blocker = SessionInfo(900, T0, EVIL_APP, "idle in transaction", 50.0, EVIL_QUERY)
    out = []
    for i in range(60):
        waiting: tuple = ()
        if 20 <= i < 30:
            waiting = (waiter(901, (900, 901)), waiter(902, (900, 902)))
            if i >= 25:
                waiting += (waiter(903, (900, 902, 903)),)
        stale = ()
        if 30 <= i < 41:
            stale += (lease(77, i - 29.0),)
        if i >= 50:
            stale += (lease(88, i - 49.0),)
        idle = IdleTransaction(
            700, T0, "psql", "ops", 100.0 + i, 5.0, 1, 12 + i, "BEGIN; SELECT …", at(-100)
        )
        out.append(
            replace(
                base,
                taken_at=at(i),
                oldest_ready_age_s=90.0 + i if 10 <= i < 20 else 5.0,
                waiting=waiting,
                blockers=(blocker,) if waiting else (),
                stale_leases=stale,
                idle_in_transaction=(idle,),
                elapsed_ms=10.0 + (i % 10),
                monitor_load=0.01,
                # the server counted two deadlocks between the frames at 21 s and 22 s
                deadlocks_total=3 if i < 22 else 5,
                deadlocks_per_s=2.0 if i == 22 else 0.0,
            )
        )
    return out


def recorded(tmp_path):
    path = tmp_path / "incident.qtr"
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for snap in frames():
        writer.write(snap)
    writer.add_audit(
        [
            AuditRecord(
                at=at(40) + timedelta(milliseconds=300),
                action="requeue",
                target="77",
                outcome="changed",
                reason="worker died",
                db_user="ops",
                os_user="alice",
                detail={"actor": "queuetop dashboard"},
                record_id="audit_id 5",
            ),
            AuditRecord(at(45), "requeue", "88", "skipped", record_id="audit_id 6"),
        ]
    )
    writer.close()
    return path


def test_the_json_names_the_backlog_blocker_waiters_leases_and_their_recovery(tmp_path, capsys):
    path = recorded(tmp_path)
    assert main(["incident", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["frames"] == 60
    [backlog] = report["backlogs"]
    assert (backlog["start"], backlog["end"]) == (at(10).isoformat(), at(19).isoformat())
    assert backlog["peak_age_s"] == 109.0
    peak = report["peak_waiting"]
    assert peak["waiting"] == 3 and peak["at"] == at(25).isoformat()
    assert peak["chain"] == [900, 902, 903] and peak["waiters_of_blocker"] == 3
    assert peak["blocker"] == {
        "pid": 900,
        "application": EVIL_APP,  # JSON keeps the exact text
        "query": EVIL_QUERY,
        "state": "idle in transaction",
        "xact_age_s": 50.0,
    }
    leases = {s["job_id"]: s for s in report["stale_leases"]}
    assert leases["77"]["first_seen"] == at(30).isoformat()
    assert leases["77"]["gone_at"] == at(41).isoformat()
    recovery = leases["77"]["recovery"]
    assert (recovery["action"], recovery["who"], recovery["actor"]) == (
        "requeue",
        "ops (alice)",
        "queuetop dashboard",
    )
    assert leases["88"]["recovery"] is None and leases["88"]["gone_at"] is None  # skipped
    idle = report["oldest_idle"]
    assert idle["pid"] == 700 and idle["max_xact_age_s"] == 159.0
    assert idle["held_horizon_s"] == 159.0 and idle["max_xmin_age"] == 71
    deadlocks = report["deadlocks"]
    assert deadlocks["recorded"] is True and deadlocks["total"] == 2
    assert deadlocks["peak"] == 2.0 and deadlocks["peak_at"] == at(22).isoformat()
    assert report["monitor"]["polls"] == 60 and report["monitor"]["poll_ms_max"] == 19.0
    assert len(report["audit"]) == 2


def test_a_window_narrows_every_part(tmp_path, capsys):
    path = recorded(tmp_path)
    assert main(["incident", str(path), "--json", "--since", "+30s", "--until", "+45s"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["frames"] == 16 and report["backlogs"] == [] and report["peak_waiting"] is None
    assert [s["job_id"] for s in report["stale_leases"]] == ["77"]
    assert report["stale_leases"][0]["stale_before_window"] is True


def test_the_text_escapes_what_came_from_the_database(tmp_path, capsys):
    path = recorded(tmp_path)
    assert main(["incident", str(path)]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text
    assert "application app\\x1b]0;owned\\x07" in text
    assert "query: SELECT 1 /* \\x1b[2J */ FOR UPDATE" in text
    assert "worker worker\\x1b[31m-7" in text
    assert "recovered: requeue" in text and "by ops (alice), queuetop dashboard" in text
    assert "still stale at the end of the window" in text
    assert "held the xmin horizon 2m39s" in text


def test_bad_windows_are_one_line(tmp_path, capsys):
    path = recorded(tmp_path)
    assert main(["incident", str(path), "--since", "+50s", "--until", "+10s"]) == 2
    assert "--until is before --since" in capsys.readouterr().err
    assert main(["incident", str(path), "--since", "yesterday-ish"]) == 2
    assert "bad --since 'yesterday-ish'" in capsys.readouterr().err


def test_the_root_blocker_is_the_queues_own_over_a_longer_chain_elsewhere(tmp_path, capsys):
    # a longer wait chain on another table (800 -> 801 -> 802 -> 803, no queue row or lock)
    # beside the queue's pile-up (900 holding job 5, 901 and 902 queued on it): incident
    # named 800, a session of another table, as the peak's root blocker
    base = fixed_snapshot(0, rows=0)
    queue_waiters = tuple(replace(waiter(pid, (900, pid)), job_id="5") for pid in (901, 902))
    elsewhere = (waiter(801, (800, 801)), waiter(802, (800, 801, 802)))
    elsewhere += (waiter(803, (800, 801, 802, 803)),)
    path = tmp_path / "two-chains.qtr"
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for i in range(3):
        writer.write(
            replace(
                base,
                taken_at=at(i),
                waiting=queue_waiters + elsewhere,
                blockers=(
                    SessionInfo(900, T0, "worker-1", "idle in transaction", 9.0, "UPDATE jobs"),
                    SessionInfo(800, T0, "billing", "active", 30.0, "LOCK TABLE invoices"),
                ),
                held_jobs={900: ("5",)},
            )
        )
    writer.close()
    assert main(["incident", str(path), "--json"]) == 0
    peak = json.loads(capsys.readouterr().out)["peak_waiting"]
    assert peak["chain"] == [900, 901] and peak["blocker"]["pid"] == 900
    assert peak["waiters_of_blocker"] == 2
