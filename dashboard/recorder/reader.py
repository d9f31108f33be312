"""Reading a recording: frames by id or by time, as Snapshots; the audit records.

The file may still be growing (a recorder writes to it): every question is asked of the
file again, never of a list read at opening.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dashboard.audit.trail import AuditRecord
from dashboard.errors import UserError
from dashboard.models import QueueSpec, Snapshot
from dashboard.recorder import codec, conform, limits, store


@dataclass(frozen=True)
class Bounds:
    first_id: int
    last_id: int
    first_at: float
    last_at: float
    frames: int

    @property
    def seconds(self) -> float:
        return self.last_at - self.first_at


def when(at: float) -> datetime:
    return datetime.fromtimestamp(at, timezone.utc)


class Recording:
    """A recording opened read-only."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = store.connect(self.path, write=False)
        try:
            self.meta = store.read_meta(self.conn, self.path)
        except UserError:
            self.conn.close()
            raise
        self.chain = store.FrameChain(self.conn)
        self.notes: list[str] = []  # what of the file could not be read, in words
        self.interval = self._interval()
        skipped = self.conn.execute(
            "SELECT (SELECT count(*) FROM main.frames) - (SELECT count(*) FROM frames)"
        ).fetchone()[0]
        if skipped:
            self.notes.append(f"{skipped} frame(s) without a valid time or kind are skipped")

    def _interval(self) -> float:
        text = self.meta.get("interval", "1")
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0.01 <= value <= 86_400:  # NaN too
            self.notes.append(f"its interval {text[:40]!r} is not a number of seconds; 1 s taken")
            return 1.0
        return value

    @property
    def queue(self) -> str:
        return self.meta.get("queue", "?")

    def spec(self) -> QueueSpec | None:
        """The queue spec it was recorded with (read as this release's QueueSpec)."""
        text = self.meta.get("spec")
        if not text:
            return None
        try:
            tree = limits.check(codec.loads(text.encode("utf-8", "surrogatepass")))
            return codec.from_tree(tree, QueueSpec)
        except (*store.UNREADABLE, KeyError):
            return None  # the dashboard then shows what the frames hold, without the spec

    def close(self) -> None:
        self.conn.close()

    # --- where ---------------------------------------------------------------------------

    def bounds(self) -> Bounds | None:
        """First and last frame now (None while there is none)."""
        first = self.conn.execute("SELECT id, at FROM frames ORDER BY id LIMIT 1").fetchone()
        last = self.conn.execute("SELECT id, at FROM frames ORDER BY id DESC LIMIT 1").fetchone()
        if first is None or last is None:
            return None
        count = self.conn.execute("SELECT count(*) FROM frames").fetchone()[0]
        return Bounds(first[0], last[0], first[1], last[1], count)

    def frame_at(self, at: float) -> int | None:
        """The frame showing time `at`: the last one taken at or before it (the first frame
        for a time before the recording began)."""
        row = self.conn.execute(
            "SELECT id FROM frames WHERE at <= ? ORDER BY at DESC, id DESC LIMIT 1", (at,)
        ).fetchone()
        if row is None:
            row = self.conn.execute("SELECT id FROM frames ORDER BY id LIMIT 1").fetchone()
        return row[0] if row else None

    def step(self, frame_id: int, frames: int) -> int:
        """The frame `frames` after (or, negative, before) `frame_id`, kept within the file."""
        if frames == 0:
            return frame_id
        if frames > 0:
            sql = "SELECT id FROM frames WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?"
            fallback = "SELECT max(id) FROM frames"
        else:
            sql = "SELECT id FROM frames WHERE id < ? ORDER BY id DESC LIMIT 1 OFFSET ?"
            fallback = "SELECT min(id) FROM frames"
        row = self.conn.execute(sql, (frame_id, abs(frames) - 1)).fetchone()
        return row[0] if row else self.conn.execute(fallback).fetchone()[0]

    def at_of(self, frame_id: int) -> float:
        row = self.conn.execute("SELECT at FROM frames WHERE id = ?", (frame_id,)).fetchone()
        if row is None:
            raise KeyError(frame_id)
        return row[0]

    def position(self, frame_id: int) -> int:
        """1 for the first frame."""
        return self.conn.execute(
            "SELECT count(*) FROM frames WHERE id <= ?", (frame_id,)
        ).fetchone()[0]

    def ids_between(self, first_at: float, last_at: float) -> list[int]:
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM frames WHERE at BETWEEN ? AND ? ORDER BY id", (first_at, last_at)
            )
        ]

    # --- what ----------------------------------------------------------------------------

    def snapshot(self, frame_id: int) -> Snapshot:
        """The snapshot of one frame (KeyError if the file has no such frame)."""
        try:
            return _read(self.chain.tree(frame_id))
        except store.UNREADABLE as exc:
            raise UserError(f"{self.path}: frame {frame_id} cannot be read ({exc})") from exc

    def snapshots(self, first_id: int, last_id: int, every: int = 1) -> Iterator[Snapshot]:
        """The snapshots of frames first_id..last_id in order (every `every`-th one, and the
        last), rebuilt in one pass over their rows."""
        try:
            start = self.chain.tree(first_id)
            yield _read(start)
            for n, (fid, tree) in enumerate(self.chain.trees(first_id + 1, last_id, start), 1):
                if n % every == 0 or fid == last_id:
                    yield _read(tree)
        except KeyError:
            return
        except store.UNREADABLE as exc:
            raise UserError(f"{self.path}: a frame cannot be read ({exc})") from exc

    def audit(
        self, until: float | None = None, since: float | None = None, limit: int = 200
    ) -> list[AuditRecord]:
        """Audit records taken from `since` to `until`, newest first. A connection of its own,
        so that a screen may read it from a thread."""
        conn = store.connect(self.path, write=False)
        try:
            rows = conn.execute(
                "SELECT data FROM audit WHERE at <= ? AND at >= ? ORDER BY at DESC, key LIMIT ?",
                (
                    float("inf") if until is None else until,
                    float("-inf") if since is None else since,
                    limit,
                ),
            ).fetchall()
        except sqlite3.OperationalError:  # a file from before any audit record: no table
            rows = []
        finally:
            conn.close()
        records = []
        for (data,) in rows:  # a damaged record is left out, never the trail
            try:
                record = codec.from_tree(limits.check(store.unpack(data)), AuditRecord)
                if conform.audit_record(record) is None:
                    records.append(record)
            except store.UNREADABLE:
                continue
        return records


def _read(tree) -> Snapshot:
    """A frame's tree as a Snapshot held to its types (ValueError where it is not)."""
    return conform.snapshot(codec.from_tree(store.named(tree), Snapshot))
