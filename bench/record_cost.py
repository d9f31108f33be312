"""What recording costs: bytes per frame, CPU per frame beside the poll's own, seek time.

    .venv/bin/python bench/record_cost.py [--dsn DSN] [--seconds 60] [--interval 1]
                                          [--day-frames 86400] [--seeks 200]

Three runs, each with its numbers printed side by side:
1. the demo under load (4 workers and the producer: skip-locked for SECONDS (default 60), then
   for-update holding the claim transaction, a pile-up, for SECONDS), recorded at INTERVAL
   by `queuetop record`'s own loop (RecordLoop, the audit trail followed too);
2. a 1,000-row lock table (10 sessions each holding 100 table locks), recorded the same way;
   for both: compressed bytes per frame (median and mean), per hour and per day at 1 s, the
   file's size per frame, and the recorder's CPU per frame as a share of the poll's own CPU
   (this thread's CPU, measured around each, in the same loop);
   for the skip-locked phase, the floor beside it: the same poll followed only by one
   commit of a frame-sized row (what a SIGKILL losing at most one frame asks for), for
   SECONDS / 2;
3. a day-long recording, DAY_FRAMES frames one second apart built from run 1's snapshots in
   order: its size, and the time to show a random frame (Recording.frame_at, then snapshot,
   on a reader opened afresh, so that no frame is cached) over SEEKS seeks.
Targets: a day at 1 s under 200 MB for the demo, seek under 50 ms, recording CPU under 10 %
of the poll's. Without --dsn a private embedded server is used and removed at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import fresh_demo, server  # noqa: E402
from dashboard.loadgen import DEMO_SETTINGS, LoadGenerator  # noqa: E402
from dashboard.models import QueueSpec, Snapshot  # noqa: E402
from dashboard.recorder import Recorder, Recording, RecordingWriter, store  # noqa: E402
from dashboard.recorder.audit_follow import AuditFollower  # noqa: E402
from dashboard.recorder.headless import RecordLoop  # noqa: E402
from dashboard.recorder.writer import ROW_OVERHEAD  # noqa: E402

SQL_DIR = Path(__file__).resolve().parent / "record_sql"
DAY_TARGET_MB = 200.0
SEEK_TARGET_MS = 50.0
CPU_TARGET = 0.10


def statement(name: str, **identifiers: str) -> sql.Composed:
    text = (SQL_DIR / f"{name}.sql").read_text()
    return sql.SQL(text).format(
        **{k: sql.Identifier(*v.split(".")) for k, v in identifiers.items()}
    )


class TimedRecorder(Recorder):
    """The recorder, its CPU measured per frame (writing and following the audit trail)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.cpu_s = 0.0
        self.kept: list[Snapshot] = []

    def record(self, snap: Snapshot) -> None:
        started = time.thread_time()
        super().record(snap)
        self.cpu_s += time.thread_time() - started
        self.kept.append(snap)


class CommitOnly:
    """Stands in for the recorder: after each poll it only inserts and commits one row of
    `size` bytes, in a file of its own opened as a recording is (store.connect: WAL,
    synchronous=NORMAL). One commit per frame is what a SIGKILL losing at most the frame
    being written asks for, so this is the least a frame can cost on this thread."""

    follower = None

    def __init__(self, path: Path, size: int):
        self.conn = store.connect(path, write=True)
        for statement in store.SCHEMA:
            self.conn.execute(statement)
        self.data = os.urandom(size)  # incompressible, as a compressed frame is
        self.cpu_s: list[float] = []

    def record(self, snap: Snapshot) -> None:
        started = time.thread_time()
        self.conn.execute(
            "INSERT INTO frames (at, kind, data) VALUES (?, ?, ?)",
            (snap.taken_at.timestamp(), store.DELTA, self.data),
        )
        self.cpu_s.append(time.thread_time() - started)

    def follow(self) -> None:
        pass

    def close(self) -> None:
        self.conn.close()


def run_loop(dsn: str, spec: QueueSpec, interval: float, recorder, seconds: float) -> RecordLoop:
    """`queuetop record`'s loop into `recorder` for `seconds`; the recorder closed after."""
    loop = RecordLoop(dsn, spec, interval, recorder, log=lambda line: print("  ", line))
    stop = threading.Event()
    threading.Timer(seconds, stop.set).start()
    loop.run(stop)
    loop.close()
    recorder.close()
    return loop


def commit_floor(dsn: str, spec: QueueSpec, path: Path, seconds: float, interval: float, size):
    """The poll, then only a commit of a frame-sized row (CommitOnly), for `seconds`."""
    floor = CommitOnly(path, size)
    loop = run_loop(dsn, spec, interval, floor, seconds)
    poll_ms = loop.poll_cpu_s / loop.frames * 1e3
    commit_ms = statistics.median(floor.cpu_s) * 1e3
    print(
        f"  the floor, {loop.frames} polls each followed only by one commit of a {size:,}-byte "
        f"row (a file of its own, as a recording is opened): poll {poll_ms:.2f} ms, commit "
        f"median {commit_ms:.3f} ms = {commit_ms / poll_ms:.1%} of the poll's CPU"
    )


def record_for(dsn: str, spec: QueueSpec, path: Path, seconds: float, interval: float):
    """Record for `seconds`; (the recorder, the loop, the frames' (kind, bytes) rows)."""
    started = datetime.now(timezone.utc)
    recorder = TimedRecorder(
        RecordingWriter(path, spec, interval), AuditFollower(dsn, None, started)
    )
    loop = run_loop(dsn, spec, interval, recorder, seconds)
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT kind, length(data) FROM frames ORDER BY id").fetchall()
    conn.close()
    return recorder, loop, rows


def report(title: str, recorder: TimedRecorder, loop: RecordLoop, rows, path: Path) -> dict:
    sizes = [n for _, n in rows]
    frames = len(sizes)
    mean = sum(sizes) / frames
    per_row = mean + ROW_OVERHEAD  # what a frame adds to the file beside its data
    poll_ms = loop.poll_cpu_s / loop.frames * 1e3
    rec_ms = recorder.cpu_s / loop.frames * 1e3
    write_ms = recorder.writer.stats.cpu_s / loop.frames * 1e3
    print(f"\n{title}: {frames} frames ({sum(1 for k, _ in rows if k == 0)} full)")
    locks = statistics.median(len(s.locks) for s in recorder.kept)
    waiting = max(len(s.waiting) for s in recorder.kept)
    print(f"  rows: locks {locks:.0f} (median), waiting sessions up to {waiting}")
    print(
        f"  bytes per frame: median {statistics.median(sizes):,.0f}, mean {mean:,.0f} "
        f"(+{ROW_OVERHEAD} for its row and index entry)"
    )
    print(
        f"  at 1 s: {per_row * 3600 / 1e6:,.2f} MB per hour, {per_row * 86400 / 1e6:,.1f} MB "
        f"per day (target for the demo: under {DAY_TARGET_MB:.0f} MB)"
    )
    share = rec_ms / poll_ms
    verdict = "within" if share < CPU_TARGET else "OVER"
    print(
        f"  CPU per frame: poll {poll_ms:.2f} ms, recorder {rec_ms:.3f} ms = {share:.1%} of the "
        f"poll's ({verdict} the {CPU_TARGET:.0%} target); of which frames {write_ms:.3f} ms "
        f"({write_ms / poll_ms:.1%}), the audit trail's reads {rec_ms - write_ms:.3f} ms"
    )
    stats = recorder.writer.stats
    parts = ("encode", "json", "zlib", "sql")
    split = ", ".join(
        f"{part} {getattr(stats, f'{part}_s') / loop.frames * 1e3:.3f}" for part in parts
    )
    print(f"  a frame's CPU, ms: {split}")
    return {"per_day_mb": per_row * 86400 / 1e6, "share": share}


def demo_run(dsn: str, tmp: Path, seconds: float, interval: float):
    spec = fresh_demo(dsn, 2000)
    path = tmp / "demo.qtr"
    phases = (
        ("skip-locked", DEMO_SETTINGS),
        (
            "for-update, claim transaction held (a pile-up)",
            replace(DEMO_SETTINGS, strategy="for-update", hold_tx=True),
        ),
    )
    results, kept = [], []
    for name, settings in phases:
        settings = replace(settings, fail_rate=0.02, crash_rate=0.001, prefill=300)
        with LoadGenerator(dsn, spec, settings) as gen:
            while gen.stats().live_workers < settings.workers:
                time.sleep(0.05)
            phase_path = path.with_name(f"demo-{len(results)}.qtr")
            recorder, loop, rows = record_for(dsn, spec, phase_path, seconds, interval)
            results.append(report(f"demo under load, {name}", recorder, loop, rows, phase_path))
            if not kept:  # skip-locked: what one commit a frame costs at least, beside it
                size = int(statistics.median(n for _, n in rows))
                floor_path = path.with_name("floor.qtr")
                commit_floor(dsn, spec, floor_path, seconds / 2, interval, size)
        kept += recorder.kept
    return spec, kept, results


def lock_table_run(dsn: str, spec: QueueSpec, tmp: Path, seconds: float, interval: float):
    sessions = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(statement("create_side_schema"))
        for i in range(100):
            conn.execute(statement("create_side_table", table=f"queuetop_bench.t{i}"))
    try:
        for s in range(10):
            conn = psycopg.connect(dsn, application_name=f"lock-holder-{s}")
            for i in range(100):
                conn.execute(statement("lock_side_table", table=f"queuetop_bench.t{i}"))
            sessions.append(conn)
        path = tmp / "locks.qtr"
        recorder, loop, rows = record_for(dsn, spec, path, seconds, interval)
        return report("1,000-row lock table", recorder, loop, rows, path)
    finally:
        for conn in sessions:
            conn.close()


def day_run(spec: QueueSpec, kept: list[Snapshot], tmp: Path, frames: int, seeks: int) -> None:
    path = tmp / "day.qtr"
    start = kept[0].taken_at
    writer = RecordingWriter(path, spec, 1.0)
    built = time.monotonic()
    for i in range(frames):
        snap = kept[i % len(kept)]
        writer.write(replace(snap, taken_at=start + timedelta(seconds=i)))
    writer.close()
    size_mb = path.stat().st_size / 1e6
    print(
        f"\na day at 1 s, built from the demo's {len(kept)} frames in order: {frames:,} frames, "
        f"{size_mb:,.1f} MB ({'within' if size_mb < DAY_TARGET_MB else 'OVER'} the "
        f"{DAY_TARGET_MB:.0f} MB target), written in {time.monotonic() - built:.0f} s"
    )
    rng = random.Random(7)
    times = []
    first = start.timestamp()
    for _ in range(seeks):
        at = first + rng.uniform(0, frames - 1)
        recording = Recording(path)  # nothing cached
        began = time.perf_counter()
        snap = recording.snapshot(recording.frame_at(at))
        times.append((time.perf_counter() - began) * 1e3)
        recording.close()
        assert abs(snap.taken_at.timestamp() - at) <= 1.0
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"  seek to a random frame ({seeks} seeks): median {statistics.median(times):.1f} ms, "
        f"p95 {p95:.1f} ms, max {times[-1]:.1f} ms "
        f"({'within' if p95 < SEEK_TARGET_MS else 'OVER'} the {SEEK_TARGET_MS:.0f} ms target, p95)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--seconds", type=float, default=60.0, help="per recorded run")
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--day-frames", type=int, default=86_400)
    parser.add_argument("--seeks", type=int, default=200)
    args = parser.parse_args()
    with server(args.dsn) as dsn, tempfile.TemporaryDirectory(prefix="queuetop-rec-") as tmp:
        spec, kept, _ = demo_run(dsn, Path(tmp), args.seconds, args.interval)
        lock_table_run(dsn, spec, Path(tmp), args.seconds, args.interval)
        day_run(spec, kept, Path(tmp), args.day_frames, args.seeks)


if __name__ == "__main__":
    main()
