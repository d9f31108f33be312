"""What the rewind costs: the bytes it holds for 15 minutes of the demo under load at 1 s, and
its CPU per frame beside the poll's own.

    .venv/bin/python bench/rewind_cost.py [--dsn DSN] [--frames 900] [--every 0.25]
                                          [--at-1s 30]

1. The demo under load (its 4 workers and producer, with failures and crashes: skip-locked for
   the first half of the frames, then for-update holding the claim transaction, a pile-up),
   polled by the dashboard's own monitor (Monitor.poll on a monitor connection) every EVERY
   seconds, faster than 1 s so that FRAMES real snapshots take minutes rather than 15. Each
   snapshot, with the generator's state as the demo keeps it, is re-timed one second after
   the one before and handed to a 15-minute RewindBuffer right after its poll, on the same
   thread (keep(): what the buffer's own thread does with each): the poll's CPU and the
   rewind's, side by side, per frame (this thread's CPU, measured around each).
2. The same at a real 1 s for AT_1S frames, the dashboard's pace: code that has not run for a
   second takes longer than code run again at once (bench/record_cost.py saw 4x), so this is
   the CPU a frame costs in the dashboard.
3. What the 15-minute buffer holds once it has run 1's frames: its frames' bytes as it counts
   them (what its 32 MiB cap bounds), and all the memory it allocated (tracemalloc, over the
   same snapshots again); and what the screen's thread pays per frame, add() (a queue put:
   the encoding runs on the buffer's thread).
Targets: under 30 MB for the 15 minutes, under 0.1 % of a core beyond the poll at one poll a
second (1 ms of CPU per frame). Without --dsn a private embedded server is used and removed
at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import fresh_demo, server  # noqa: E402
from dashboard import db  # noqa: E402
from dashboard.loadgen import DEMO_SETTINGS, LoadGenerator  # noqa: E402
from dashboard.models import LoadState, Snapshot  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402
from dashboard.recorder import store  # noqa: E402
from dashboard.recorder.rewind import MAX_BYTES, RewindBuffer  # noqa: E402
from dashboard.ui.loadgen_controls import crash_causes  # noqa: E402

SPAN_S = 15 * 60
BYTES_TARGET_MB = 30.0
CORE_TARGET = 0.001  # of a core, beyond the poll, at one poll a second


def load_state(gen: LoadGenerator) -> LoadState:
    """The generator as the demo keeps it with each frame (LoadGenControls.state)."""
    snap = gen.stats()
    return LoadState(
        strategy=snap.strategy,
        hold_tx=snap.hold_tx,
        done_per_s=snap.completions_per_s,
        claim_p95_ms=snap.recent_latency.p95,
        lock_waits_per_s=snap.lock_waits_per_s,
        lock_errors_per_s=snap.lock_errors_per_s,
        live_workers=snap.live_workers,
        target_workers=snap.target_workers,
        crashes=crash_causes(snap),
    )


class Run:
    """Polls, each followed by the rewind's keep(), on this thread; CPU of each per frame."""

    def __init__(self, dsn: str, monitor: Monitor, buffer: RewindBuffer, first_at):
        self.conn = db.connect_monitor(dsn, timeout_ms=db.monitor_timeout_ms(1.0))
        self.monitor = monitor
        self.buffer = buffer
        self.first_at = first_at
        self.poll_s: list[float] = []
        self.keep_s: list[float] = []
        self.kept: list[Snapshot] = []

    def frame(self, gen: LoadGenerator) -> None:
        clock = time.thread_time
        started = clock()
        snap = self.monitor.poll(self.conn)
        polled = clock()
        at = self.first_at + timedelta(seconds=len(self.kept))
        snap = replace(snap, taken_at=at, load=load_state(gen))
        kept_from = clock()
        self.buffer.keep(snap)
        self.keep_s.append(clock() - kept_from)
        self.poll_s.append(polled - started)
        self.kept.append(snap)

    def run(self, gen: LoadGenerator, frames: int, every: float) -> None:
        for _ in range(frames):
            started = time.monotonic()
            self.frame(gen)
            time.sleep(max(0.0, every - (time.monotonic() - started)))

    def close(self) -> None:
        self.conn.close()


def cpu_line(title: str, poll_s: list[float], keep_s: list[float]) -> float:
    """The poll's and the rewind's CPU per frame, side by side; the rewind's share of a core
    at one poll a second."""
    poll_ms = statistics.mean(poll_s) * 1e3
    keep_ms = statistics.mean(keep_s) * 1e3
    median_ms = statistics.median(keep_s) * 1e3
    core = keep_ms / 1e3  # seconds of CPU per second at one poll a second
    verdict = "within" if core < CORE_TARGET else "OVER"
    print(
        f"  {title}: {len(keep_s)} frames; CPU per frame: poll {poll_ms:.2f} ms, rewind "
        f"{keep_ms:.3f} ms (median {median_ms:.3f}) = {keep_ms / poll_ms:.1%} of the poll's; "
        f"at 1 poll/s {core:.3%} of a core beyond the poll ({verdict} the {CORE_TARGET:.1%} "
        "target)"
    )
    return core


def memory(kept: list[Snapshot]) -> tuple[int, int, int]:
    """A fresh 15-minute buffer fed `kept`: (bytes it counts, bytes tracemalloc saw it
    allocate and keep, frames held)."""
    buffer = RewindBuffer(SPAN_S)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for snap in kept:
        buffer.keep(snap)
    allocated = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return buffer.held_bytes, allocated, buffer.held_frames


def ui_share(kept: list[Snapshot]) -> tuple[float, float]:
    """What add() costs the caller's thread (the screen's), and the buffer's own thread per
    frame: (µs per add on the caller, ms of the buffer thread's CPU per frame)."""
    buffer = RewindBuffer(SPAN_S)
    spent = []
    for snap in kept:
        started = time.thread_time()
        buffer.add(snap)
        spent.append(time.thread_time() - started)
        time.sleep(0.002)  # polls are never back to back: the queue never fills
    buffer.close(timeout=30)
    if buffer.stats.dropped:
        print(f"  ({buffer.stats.dropped} frames dropped: the buffer's thread fell behind)")
    return statistics.mean(spent) * 1e6, buffer.stats.cpu_s / max(buffer.stats.frames, 1) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--frames", type=int, default=900, help="15 minutes at 1 s")
    parser.add_argument("--every", type=float, default=0.25, help="seconds between polls")
    parser.add_argument("--at-1s", type=int, default=30, help="frames polled at a real 1 s")
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        spec = fresh_demo(dsn, 2000)
        pile_up = replace(DEMO_SETTINGS, strategy="for-update", hold_tx=True)
        phases = (("skip-locked", DEMO_SETTINGS), ("for-update, claim held (a pile-up)", pile_up))
        monitor = Monitor(spec, 1.0)
        buffer = RewindBuffer(SPAN_S)
        run = Run(dsn, monitor, buffer, datetime.now(timezone.utc))
        print(
            f"the demo under load, polled every {args.every:g} s, each frame 1 s after the one "
            f"before, into a {SPAN_S // 60}-minute rewind:"
        )
        core_1s = None
        for n, (name, settings) in enumerate(phases):
            settings = replace(settings, fail_rate=0.02, crash_rate=0.001, prefill=300)
            with LoadGenerator(dsn, spec, settings) as gen:
                while gen.stats().live_workers < settings.workers:
                    time.sleep(0.05)
                time.sleep(1.0)  # claims under way
                begin = len(run.kept)
                run.run(gen, args.frames // 2 if n == 0 else args.frames - begin, args.every)
                cpu_line(name, run.poll_s[begin:], run.keep_s[begin:])
                if n == 1 and args.at_1s:  # the pile-up at the dashboard's own pace
                    paced = Run(dsn, monitor, RewindBuffer(SPAN_S), datetime.now(timezone.utc))
                    paced.run(gen, args.at_1s, 1.0)
                    paced.close()
                    core_1s = cpu_line(f"{name}, at a real 1 s", paced.poll_s, paced.keep_s)
        run.close()
        kept = run.kept
        frames = buffer.frames()
        sizes = [len(f.data) for f in frames]
        full = sum(1 for f in frames if f.kind == store.FULL)
        print(
            f"\n{len(kept)} frames ({len(kept) / 60:.0f} minutes at 1 s; {full} whole in the "
            f"span's {len(frames)}): data per frame median {statistics.median(sizes):,.0f} B, "
            f"mean {statistics.mean(sizes):,.0f} B"
        )
        counted, allocated, held = memory(kept)
        for what, size in (("counted by the buffer", counted), ("allocated", allocated)):
            verdict = "within" if size / 1e6 < BYTES_TARGET_MB else "OVER"
            print(
                f"  held, {what}: {size / 1e6:.2f} MB ({verdict} the {BYTES_TARGET_MB:.0f} MB "
                f"target; {size / len(kept):,.0f} B a frame; its cap {MAX_BYTES / 2**20:.0f} MiB)"
            )
        print(f"  frames held: {held} (the span's {len(frames)}, and the run before it began)")
        cpu_line(f"all {len(kept)}", run.poll_s, run.keep_s)
        add_us, thread_ms = ui_share(kept)
        print(
            f"  the screen's thread: add() {add_us:.1f} µs a frame (a queue put); the buffer's "
            f"own thread: {thread_ms:.3f} ms a frame"
        )
        if core_1s is not None:
            verdict = "within" if core_1s < CORE_TARGET else "OVER"
            print(f"  at the dashboard's pace (1 s): {core_1s:.3%} of a core ({verdict} target)")


if __name__ == "__main__":
    main()
