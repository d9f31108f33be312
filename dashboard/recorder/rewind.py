"""The rewind: the dashboard's last minutes of snapshots, in memory, as a recording's frames.

    buffer = RewindBuffer(span_s=900)   # max_bytes=MAX_BYTES
    buffer.add(snap)                    # any thread: queued, encoded on the buffer's thread
    frames = buffer.frames()            # what it holds within the span, the first one whole
    save(path, spec, interval, frames)  # a normal recording: `queuetop replay` opens it

A frame is the recorder's own (frames.FrameEncoder, codec.frame_json, store.squeeze, the
writer's keyframe and delta rules): a whole frame every KEYFRAME_EVERY, deltas between. They
are held as (at, kind, data) in runs, each starting with a whole frame. A run goes, whole,
once its last frame is older than the span, and, oldest first, while what is held passes
`max_bytes` (a frame's data and FRAME_OVERHEAD for the objects holding it): so beside the
span at most one run older than it is held (a minute at 1 s), and never shown. Where one
run alone is over the cap it is replaced by its newest frame, whole; a frame larger than
the cap alone is not held at all (stats.too_big counts them). The encoding runs on the
buffer's own thread: add() only queues the snapshot, so the screen never waits for it.
"""

from __future__ import annotations

import os
import queue
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from dashboard.errors import UserError
from dashboard.models import QueueSpec, Snapshot
from dashboard.recorder import codec, delta, own_file, store
from dashboard.recorder.frames import FrameEncoder
from dashboard.recorder.redacted import without_literals
from dashboard.recorder.writer import RecordingWriter

MAX_BYTES = 32 * 2**20  # what the frames held may add up to (32 MiB), whatever the span
QUEUE_LIMIT = 16  # snapshots waiting for the buffer's thread; beyond it one is dropped


class Frame(NamedTuple):
    """One frame as a recording's frames table holds it."""

    at: float  # Unix seconds
    kind: int  # store.FULL or store.DELTA
    data: bytes


# bytes a held frame costs beside its data: its tuple, its time, the bytes object's header,
# the run's slot for it
FRAME_OVERHEAD = sys.getsizeof(Frame(0.0, 0, b"")) + sys.getsizeof(0.0) + sys.getsizeof(b"") + 8


@dataclass
class RewindStats:
    """What the buffer did so far (bench/rewind_cost.py reads it)."""

    frames: int = 0  # snapshots encoded and held
    dropped: int = 0  # snapshots not taken: the buffer's thread was behind (queue full)
    too_big: int = 0  # frames larger than max_bytes alone: not held
    cpu_s: float = 0.0  # CPU of the thread that encoded and held them
    error: str = ""  # the last snapshot that could not be encoded, and why


class RewindBuffer:
    """The last `span_s` seconds of snapshots, within `max_bytes`; see the module docstring.

    keep() encodes on the caller's thread (tests, the bench); add() hands the snapshot to
    the buffer's own thread. Use one or the other: the encoder is not shared."""

    def __init__(
        self,
        span_s: float,
        max_bytes: int = MAX_BYTES,
        *,
        keyframe_every: int = store.KEYFRAME_EVERY,
        redact_queries: bool = False,
        version: Callable[[], str] = lambda: "",
    ):
        self.span_s = span_s
        self.max_bytes = max_bytes
        self.keyframe_every = keyframe_every
        self.redact_queries = redact_queries  # a saved rewind is shared like a recording
        self.version = version  # queuetop's version, for a saved rewind's meta (asked late)
        self.stats = RewindStats()
        self._encoder = FrameEncoder()
        self._since_full = 0
        self._full_size = 0
        self._lock = threading.Lock()
        self._runs: list[list[Frame]] = []
        self._bytes = 0
        self._queue: queue.Queue[Snapshot | None] = queue.Queue(QUEUE_LIMIT)
        self._thread: threading.Thread | None = None

    # --- taking snapshots in ----------------------------------------------------------------

    def add(self, snap: Snapshot) -> None:
        """Queue `snap` for the buffer's thread (started on the first call); never waits."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="queuetop-rewind", daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait(snap)
        except queue.Full:
            self.stats.dropped += 1

    def _run(self) -> None:
        while (snap := self._queue.get()) is not None:
            try:
                self.keep(snap)
            except Exception as exc:  # one snapshot that cannot be encoded: the next is whole
                self.stats.error = f"{type(exc).__name__}: {exc}"

    def close(self, timeout: float = 2.0) -> None:
        """Stop the buffer's thread (what it holds stays readable)."""
        if self._thread is not None and self._thread.is_alive():
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                return  # a daemon thread: it ends with the process
            self._thread.join(timeout)

    def keep(self, snap: Snapshot) -> None:
        """Encode `snap` now, on this thread, and hold it."""
        clock = time.thread_time
        started = clock()
        if self.redact_queries:
            snap = without_literals(snap)
        try:
            kind, text = self._encode(snap)
        except BaseException:
            self._encoder.reset()  # not held: the next frame cannot be a delta against it
            raise
        frame = Frame(snap.taken_at.timestamp(), kind, store.squeeze(text))
        with self._lock:
            over = self._hold(frame)
        if over:
            self._restart(frame)
        self.stats.frames += 1
        self.stats.cpu_s += clock() - started

    def _encode(self, snap: Snapshot) -> tuple[int, bytes]:
        """The frame's kind and JSON, as RecordingWriter.write makes them."""
        patch = self._encoder.encode(snap)
        kind, text = store.FULL, b""
        if patch is not None and self._since_full < self.keyframe_every - 1:
            text = codec.frame_json(patch)
            if len(text) < store.DELTA_RATIO * self._full_size:
                kind = store.DELTA
        if kind == store.FULL:
            text = codec.frame_json(self._encoder.whole())
            self._full_size = len(text)
        self._since_full = 0 if kind == store.FULL else self._since_full + 1
        return kind, text

    def _hold(self, frame: Frame) -> bool:
        """Add `frame`, drop what is out of the span or over the cap; True when the newest
        run alone is still over it. (Under the lock.)"""
        if frame.kind == store.FULL or not self._runs:
            self._runs.append([frame])
        else:
            self._runs[-1].append(frame)
        self._bytes += len(frame.data) + FRAME_OVERHEAD
        cut = frame.at - self.span_s
        while len(self._runs) > 1 and self._runs[0][-1].at < cut:
            self._drop_run()
        while self._bytes > self.max_bytes and len(self._runs) > 1:
            self._drop_run()
        return self._bytes > self.max_bytes

    def _drop_run(self) -> None:
        run = self._runs.pop(0)
        self._bytes -= sum(len(f.data) for f in run) + FRAME_OVERHEAD * len(run)

    def _restart(self, newest: Frame) -> None:
        """One run alone is over the cap: only its newest frame is kept, whole (or nothing,
        where that frame alone is over it too)."""
        if newest.kind == store.FULL:
            data = newest.data
        else:
            text = codec.frame_json(self._encoder.whole())
            data = store.squeeze(text)
            self._full_size, self._since_full = len(text), 0
        fits = len(data) + FRAME_OVERHEAD <= self.max_bytes
        with self._lock:
            self._runs = [[Frame(newest.at, store.FULL, data)]] if fits else []
            self._bytes = len(data) + FRAME_OVERHEAD if fits else 0
        if not fits:
            self.stats.too_big += 1
            self._encoder.reset()  # nothing held: the next frame is whole

    # --- reading what it holds --------------------------------------------------------------

    @property
    def held_bytes(self) -> int:
        """What the frames held add up to: their data, and FRAME_OVERHEAD each."""
        return self._bytes

    @property
    def held_frames(self) -> int:
        """Frames held, those older than the span at the start of the first run included."""
        with self._lock:
            return sum(map(len, self._runs))

    def frames(self) -> list[Frame]:
        """The frames within the span of the newest one, in order, the first one whole (a
        delta is rebuilt from the whole frame before it, as retention does in a file)."""
        with self._lock:
            runs = [list(run) for run in self._runs]
        if not runs:
            return []
        cut = runs[-1][-1].at - self.span_s
        runs = runs[next(n for n, run in enumerate(runs) if run[-1].at >= cut) :]
        first = runs[0]
        start = next(n for n, f in enumerate(first) if f.at >= cut)
        if start:
            head = first[start]
            first = [Frame(head.at, store.FULL, store.pack(_tree(first[: start + 1])))]
            first += runs[0][start + 1 :]
        return [*first, *(f for run in runs[1:] for f in run)]


def _tree(run: Sequence[Frame]) -> Any:
    """The tree of the last frame of `run` (a whole frame, then deltas)."""
    tree = store.unpack(run[0].data)
    for frame in run[1:]:
        tree = delta.apply(tree, store.unpack(frame.data))
    return tree


def save(
    path: str | Path,
    spec: QueueSpec,
    interval: float,
    frames: Sequence[Frame],
    *,
    replace: bool = False,
    version: str = "",
) -> Path:
    """Write `frames` (the first one whole) as a recording at `path`: a new file, or with
    `replace` in place of the recording of this user's there (own_file's rules: anything
    else is refused). Written whole to a private file beside it first, then moved into
    place, so that nothing half-written is ever at `path`."""
    path = Path(path)
    if not frames:
        raise UserError("the rewind holds no frame yet: nothing to save")
    if path.is_dir():
        raise UserError(f"{path} is a directory: give a file name")
    if not path.parent.is_dir():
        raise UserError(f"no directory {path.parent} for {path}: create it or give another")
    if replace:
        own_file.check_replaceable(path)
    elif os.path.lexists(path):
        raise UserError(f"{path} exists: give another name (it is never overwritten unasked)")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.saving")
    writer: RecordingWriter | None = None
    try:
        writer = RecordingWriter(temp, spec, interval, version=version)
        writer.conn.execute("BEGIN IMMEDIATE")
        writer.conn.executemany("INSERT INTO frames (at, kind, data) VALUES (?, ?, ?)", frames)
        writer.conn.execute("COMMIT")
        writer.close()
        writer = None
        _put_in_place(temp, path, replace)
    except BaseException:
        if writer is not None:
            writer.conn.close()
        for leftover in (temp, *(Path(f"{temp}{s}") for s in own_file.SIDE_FILES)):
            leftover.unlink(missing_ok=True)
        raise
    return path


def _put_in_place(temp: Path, path: Path, replace: bool) -> None:
    if replace:
        os.replace(temp, path)
        for suffix in own_file.SIDE_FILES:  # the old file's, empty (check_replaceable)
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    try:
        os.link(temp, path)  # never over a file that appeared meanwhile
    except FileExistsError:
        raise UserError(f"{path} appeared while saving: give another name") from None
    except OSError:  # a file system without hard links
        if os.path.lexists(path):
            raise UserError(f"{path} appeared while saving: give another name") from None
        os.rename(temp, path)
        return
    temp.unlink()
