"""Writing a recording: frames, audit records, retention by age and size."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dashboard.audit.trail import AuditRecord
from dashboard.errors import UserError
from dashboard.models import QueueSpec, Snapshot
from dashboard.recorder import codec, own_file, store
from dashboard.recorder.frames import FrameEncoder
from dashboard.recorder.redacted import without_literals

# Size retention frees down to this share of --max-size, so that it does not run each frame.
SIZE_HEADROOM = 0.9
ROW_OVERHEAD = 48  # bytes a frame row costs beside its data: row header, rowid, time index


@dataclass
class WriteStats:
    """What the writer did so far (bench/record_cost.py and `record`'s last line read it)."""

    frames: int = 0
    full: int = 0
    bytes: int = 0  # compressed frame data written
    cpu_s: float = 0.0  # this thread's CPU spent encoding and writing frames, of which:
    encode_s: float = 0.0  # the snapshot compared with the one before, the patch built
    json_s: float = 0.0  # the patch or whole frame turned into JSON
    zlib_s: float = 0.0  # and compressed
    sql_s: float = 0.0  # the row inserted and committed, retention
    dropped: int = 0  # frames deleted by retention
    audit: int = 0  # audit records written (new or changed)


class RecordingWriter:
    """Appends frames to a recording (created if absent, else extended if it is of the same
    queue), keeping it within `retain_s` seconds and `max_bytes` bytes, oldest dropped first."""

    def __init__(
        self,
        path: str | Path,
        spec: QueueSpec,
        interval: float,
        *,
        retain_s: float | None = None,
        max_bytes: int | None = None,
        keyframe_every: int = store.KEYFRAME_EVERY,
        version: str = "",
        redact_queries: bool = False,
    ):
        self.path = Path(path)
        self.redact_queries = redact_queries  # literals of query text replaced by ?
        self.retain_s = retain_s
        self.max_bytes = max_bytes
        self.keyframe_every = keyframe_every
        self.stats = WriteStats()
        self._encoder = FrameEncoder()
        self._since_full = 0
        self._full_size = 0  # the last full frame's JSON: a delta must be much smaller
        self._measured = 0  # the file's size when last asked (PRAGMAs cost a frame's time)
        self._unmeasured = 0  # bytes written since
        self.conn = self._open(spec, interval, version)
        self._chain = store.FrameChain(self.conn)
        self._oldest_at = self.conn.execute("SELECT min(at) FROM frames").fetchone()[0]

    def _open(self, spec: QueueSpec, interval: float, version: str) -> sqlite3.Connection:
        if self.path.is_dir():
            raise UserError(f"--out {self.path} is a directory: give a file name")
        if not self.path.parent.is_dir():
            raise UserError(f"no directory {self.path.parent} for --out {self.path}: create it")
        existed = own_file.prepare(self.path)  # ours to extend, or new and 0600
        conn = store.connect(self.path, write=True)
        try:
            if existed:
                meta = store.read_meta(conn, self.path)
                if meta.get("queue") != str(spec.table):
                    raise UserError(
                        f"{self.path} records queue {meta.get('queue')}, not {spec.table}: "
                        "record this queue to another file"
                    )
            conn.execute("BEGIN IMMEDIATE")
            for statement in store.SCHEMA:
                conn.execute(statement)
            meta = {
                "format": str(store.FORMAT),
                "queue": str(spec.table),
                "spec": codec.dumps(codec.to_tree(spec)).decode("utf-8", "surrogatepass"),
                "interval": repr(float(interval)),
                "keyframe_every": str(self.keyframe_every),
                "queuetop_version": version,
            }
            if not existed:
                meta["created_at"] = datetime.now(timezone.utc).isoformat()
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.close()
            raise UserError(f"cannot write recording {self.path}: {exc}") from exc
        except UserError:
            conn.close()
            raise
        return conn

    # --- frames ----------------------------------------------------------------------------

    def write(self, snap: Snapshot) -> tuple[int, int]:
        """One frame, committed on its own; (kind, bytes of data)."""
        clock = time.thread_time
        started = clock()
        if self.redact_queries:
            snap = without_literals(snap)
        try:
            patch = self._encoder.encode(snap)
            encoded = clock()
            kind, text = store.FULL, b""
            if patch is not None and self._since_full < self.keyframe_every - 1:
                text = codec.frame_json(patch)
                if len(text) < store.DELTA_RATIO * self._full_size:
                    kind = store.DELTA
            if kind == store.FULL:
                text = codec.frame_json(self._encoder.whole())
                self._full_size = len(text)
            dumped = clock()
            data = store.squeeze(text)
            compressed = clock()
            at = snap.taken_at.timestamp()
            self.conn.execute(
                "INSERT INTO frames (at, kind, data) VALUES (?, ?, ?)", (at, kind, data)
            )
        except BaseException:
            self._encoder.reset()  # not written: the next frame cannot be a delta against it
            raise
        self._since_full = 0 if kind == store.FULL else self._since_full + 1
        if self._oldest_at is None:
            self._oldest_at = at
        self._unmeasured += len(data) + ROW_OVERHEAD
        self._retain(at)
        stats = self.stats
        stats.frames += 1
        stats.full += kind == store.FULL
        stats.bytes += len(data)
        done = clock()
        stats.cpu_s += done - started
        stats.encode_s += encoded - started
        stats.json_s += dumped - encoded
        stats.zlib_s += compressed - dumped
        stats.sql_s += done - compressed
        return kind, len(data)

    def add_audit(self, records: Iterable[AuditRecord]) -> int:
        """Audit records, new or changed since read last (a file's pending record gets its
        outcome later); one transaction. Returns how many rows changed."""
        rows = [
            (f"{r.record_id}/{r.target}", r.at.timestamp(), store.pack(codec.to_tree(r)))
            for r in records
        ]
        if not rows:
            return 0
        before = self.conn.total_changes
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT INTO audit (key, at, data) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE "
            "SET at = excluded.at, data = excluded.data WHERE data IS NOT excluded.data",
            rows,
        )
        self.conn.execute("COMMIT")
        changed = self.conn.total_changes - before
        self.stats.audit += changed
        return changed

    # --- retention -------------------------------------------------------------------------

    def used_bytes(self) -> int:
        """The file's size as SQLite sees it (its write-ahead log aside)."""
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        return pages * size

    def _retain(self, newest_at: float) -> None:
        too_old = self.retain_s and self._oldest_at is not None
        if too_old and newest_at - self._oldest_at > self.retain_s:
            cut = self.conn.execute(
                "SELECT min(id) FROM frames WHERE at >= ?", (newest_at - self.retain_s,)
            ).fetchone()[0]
            if cut is not None:
                self.drop_before(cut)
        # the file is measured only when it may be near its limit: pages fill unevenly, so
        # twice the bytes written since the last measure is taken as what it may have grown
        if not self.max_bytes or self._measured + 2 * self._unmeasured <= self.max_bytes:
            return
        # pages do not free byte for byte: again until it fits (the newest frame stays)
        for _ in range(8):
            self._measured, self._unmeasured = self.used_bytes(), 0
            if self._measured <= self.max_bytes:
                return
            cut = self._size_cut(self.used_bytes() - SIZE_HEADROOM * self.max_bytes)
            if not self.drop_before(cut):
                return

    def _size_cut(self, to_free: float) -> int:
        """The first frame to keep so that the older ones add up to `to_free` bytes (the
        newest frame is always kept)."""
        freed = 0
        rows = self.conn.execute("SELECT id, length(data) FROM frames ORDER BY id").fetchall()
        for fid, size in rows[:-1]:
            if freed >= to_free:
                return fid
            freed += size + ROW_OVERHEAD
        return rows[-1][0]

    def drop_before(self, frame_id: int) -> int:
        """Delete the frames older than `frame_id` (which becomes a full frame if it was a
        delta) and the audit records older than what is left; the freed pages go back to
        the file system. Returns how many frames went."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            kind = conn.execute("SELECT kind FROM frames WHERE id = ?", (frame_id,)).fetchone()
            if kind is not None and kind[0] == store.DELTA:
                tree = self._chain.tree(frame_id)
                conn.execute(
                    "UPDATE frames SET kind = ?, data = ? WHERE id = ?",
                    (store.FULL, store.pack(tree), frame_id),
                )
            gone = conn.execute("DELETE FROM frames WHERE id < ?", (frame_id,)).rowcount
            self._oldest_at = conn.execute("SELECT min(at) FROM frames").fetchone()[0]
            if self._oldest_at is not None:
                conn.execute("DELETE FROM audit WHERE at < ?", (self._oldest_at,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._chain = store.FrameChain(conn)  # its cached tree may be of a frame now gone
        conn.execute("PRAGMA incremental_vacuum").fetchall()  # each row is a page given back
        self.stats.dropped += gone
        return gone

    def close(self) -> None:
        """Checkpoint the write-ahead log into the file and close: the file alone is then
        the whole recording (a copy needs no -wal file beside it)."""
        try:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:  # a reader holds the log open: it is checkpointed later
            pass
        self.conn.close()
