"""The latency in recordings: a snapshot's Latency (its groups, durations, buckets, what is
missing, paced or not read) through the codec, through frames patched against the frame
before, and through a recording file written from real polls and read back equal."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import timedelta

from latency_stage import create_queue, fill_history
from ui_snapshots import T0, fixed_snapshot

from dashboard import config, db
from dashboard.models import LATENCY_BUCKETS, Durations, GroupLatency, Latency, Snapshot
from dashboard.monitor import Monitor
from dashboard.recorder import Recording, RecordingWriter, codec, delta, store
from dashboard.recorder.frames import FrameEncoder


def durations(scale: float, count: int) -> Durations:
    return Durations(
        count,
        scale * count,
        scale,
        scale * 2,
        scale * 3,
        tuple(min(count, i * count // 4) for i in range(len(LATENCY_BUCKETS))),
    )


def latency(step: int) -> Latency:
    """The latency of a queue at a step: counts tick, a group comes and goes."""
    groups = [
        GroupLatency("mail", durations(0.2 + step / 10, 10 + step), durations(0.5, 9), 9, 1),
        # a hostile group name, and a group whose start times are gone (run None)
        GroupLatency("x\x1b]0;t\x07", durations(1.5, 2), None, 3, 0),
    ]
    if step % 3 == 0:
        groups.append(GroupLatency("$dt", durations(math.inf, 1), durations(0.0, 0), 0, 0))
    return Latency(
        window_s=300.0,
        queue=GroupLatency(None, durations(0.3, 20 + step), durations(0.6, 12), 12, 1),
        groups=tuple(groups),
        missing=("run time: none of the 3 jobs finished in the window keeps a start time",),
        error="timed out (statement_timeout 800 ms)" if step == 4 else None,
        paced="read every 60s, paced: no index serves the window's range on finished_at",
        read_at=T0 + timedelta(seconds=2 * step),
    )


def with_latency(step: int) -> Snapshot:
    snap = fixed_snapshot(step, rows=4)
    return replace(snap, latency=None if step == 5 else latency(step))


def test_a_latency_comes_back_equal_through_the_codec():
    for step in range(4):
        snap = with_latency(step)
        back = codec.from_tree(codec.loads(codec.dumps(codec.to_tree(snap))), Snapshot)
        assert back == snap
        assert back.latency.groups[1].group == "x\x1b]0;t\x07"
        assert back.latency.queue.wait.buckets == snap.latency.queue.wait.buckets
    empty = Latency(60.0, GroupLatency(None, None, None, 0, 0), finished_measured=False)
    snap = replace(fixed_snapshot(1), latency=empty)
    assert codec.from_tree(codec.loads(codec.dumps(codec.to_tree(snap))), Snapshot) == snap


def test_frames_patched_against_the_one_before_rebuild_each_latency():
    encoder, tree = FrameEncoder(), None
    for step in range(10):
        snap = with_latency(step)
        patch = encoder.encode(snap)
        if tree is None:
            tree = codec.loads(codec.frame_json(encoder.whole()))
        else:
            tree = codec.loads(
                codec.frame_json(delta.apply(tree, codec.loads(codec.frame_json(patch))))
            )
        assert codec.from_tree(store.named(tree), Snapshot) == snap


def test_a_recording_of_real_polls_keeps_the_latency(dsn, connect, tmp_path):
    setup = connect(autocommit=True)
    spec = create_queue(dsn)
    fill_history(setup, 200)
    path = tmp_path / "r.qtr"
    with db.connect_monitor(dsn) as mon:
        spec = config.validate(mon, spec)
        monitor = Monitor(spec, 1.0)
        snaps = []
        for _ in range(3):
            snaps.append(monitor.poll(mon))
            setup.execute(
                "INSERT INTO queuetop_demo.jobs (queue, status, created_at, started_at, "
                "finished_at) VALUES ('other', 'done', now() - interval '3 s', "
                "now() - interval '2 s', now())"
            )
            for section in monitor.sections.values():
                section.tried_at = None  # every section read again on the next poll
    assert [s.latency.queue.finished for s in snaps] == [37, 38, 39]
    writer = RecordingWriter(path, spec, 1.0)
    for snap in snaps:
        writer.write(snap)
    writer.close()
    recording = Recording(path)
    bounds = recording.bounds()
    back = list(recording.snapshots(bounds.first_id, bounds.last_id))
    assert [s.latency for s in back] == [s.latency for s in snaps]
    assert back[-1].latency.groups[-1].group == "other"
