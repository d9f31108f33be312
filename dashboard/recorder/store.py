"""The recording file: SQLite (standard library), one row per frame, indexed by time.

    meta(key, value)             format, queue, spec, interval, keyframe period, versions
    frames(id, at, kind, data)   at: Unix seconds; kind 0 a full frame, 1 a delta against the
                                 frame before it (by id); data: the frame's JSON, zlib of it
                                 where it is longer than RAW_UP_TO bytes
    audit(key, at, data)         one row per audit record (key: where it is in the trail)

A frame's lists of records are rows of values, their field names under "$cols" (format 2;
format 1 wrote each row as an object, and every frame compressed): named() reads both.
Format 3 adds one patch node, a list's column replaced ("$c", delta.py); it reads 1 and 2.
WAL journal, synchronous=NORMAL: each frame is its own transaction, so a SIGKILL loses at
most the frame being written, and a reader can open the file while the recorder adds to it.
A full frame comes every KEYFRAME_EVERY frames, so a seek reads at most that many rows.
"""

from __future__ import annotations

import sqlite3
import typing
import zlib
from pathlib import Path
from typing import Any

from dashboard.errors import UserError
from dashboard.recorder import codec, delta, limits

FORMAT = 3  # the layout of the tables and of a frame's data; a reader refuses a newer one
FULL, DELTA = 0, 1
KEYFRAME_EVERY = 60
# A delta is stored where it is smaller than this share of the last full frame (its JSON).
DELTA_RATIO = 1.0
ZLIB_LEVEL = 6  # audit records, and a frame rebuilt whole by retention
FRAME_ZLIB_LEVEL = 1  # a frame as it is written: most of level 6's gain, for less time
# A frame's JSON up to this long is stored as it is: compressing it would cost more of the
# recorder's time than the bytes it saves are worth (a zlib stream never starts with "{").
RAW_UP_TO = 1024
# what reading a damaged frame raises (cut data, a copy gone wrong, bytes flipped, a patch
# that does not fit the frame before it: a recording may come from anyone)
UNREADABLE = (
    sqlite3.DatabaseError,
    ValueError,
    zlib.error,
    TypeError,
    IndexError,
    AttributeError,
    RecursionError,
    OverflowError,
)
# what a recording's schema holds (SCHEMA), and SQLite's indexes of its keys
TABLES = {"meta", "frames", "audit"}
INDEXES = {"frames_at", "audit_at"}
COLUMNS = {
    "meta": {"key", "value"},
    "frames": {"id", "at", "kind", "data"},
    "audit": {"key", "at", "data"},
}
# A reader sees only the rows it can use: a frame or an audit record with a time that is a
# number of this era's seconds, a kind it knows, data that is a blob or text (temporary
# views of the same names shadow the file's tables on the reader's connection).
VALID_AT = "typeof(at) IN ('integer', 'real') AND at BETWEEN 0 AND 1e11"
READER_VIEWS = (
    "CREATE TEMP VIEW frames AS SELECT id, at, kind, data FROM main.frames "
    f"WHERE typeof(id) = 'integer' AND {VALID_AT} AND kind IN (0, 1) "
    "AND typeof(data) IN ('blob', 'text')",
    "CREATE TEMP VIEW audit AS SELECT key, at, data FROM main.audit "
    f"WHERE {VALID_AT} AND typeof(data) IN ('blob', 'text')",
)
MAX_META = 4_000_000  # characters of one meta value (a spec is a few KB)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS frames ("
    " id INTEGER PRIMARY KEY, at REAL NOT NULL, kind INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS frames_at ON frames (at)",
    "CREATE TABLE IF NOT EXISTS audit (key TEXT PRIMARY KEY, at REAL NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS audit_at ON audit (at)",
)


def pack(tree: Any) -> bytes:
    return zlib.compress(codec.dumps(tree), ZLIB_LEVEL)


def squeeze(text: bytes) -> bytes:
    """A frame's data: its JSON, compressed where it is long. The window and hash table are
    sized to the frame (a zlib stream all the same): setting up zlib's default ones costs
    more than compressing a few kilobytes."""
    size = len(text)
    if size <= RAW_UP_TO:
        return text
    wbits = min(15, max(9, (size - 1).bit_length()))
    packer = zlib.compressobj(FRAME_ZLIB_LEVEL, zlib.DEFLATED, wbits, max(1, wbits - 7))
    return packer.compress(text) + packer.flush()


def unpack(data: bytes) -> Any:
    """A frame's or an audit record's tree, decompressed to limits.MAX_FRAME_BYTES at most
    (a file's data may be a zlib bomb); ValueError beyond it."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, bytes):
        raise ValueError(f"data of type {type(data).__name__}")
    if data[:1] == b"{":
        text = data
    else:
        inflate = zlib.decompressobj()
        text = inflate.decompress(data, limits.MAX_FRAME_BYTES)
        if inflate.unconsumed_tail:
            raise ValueError(f"larger than {limits.MAX_FRAME_BYTES // 2**20} MB decompressed")
    if len(text) > limits.MAX_FRAME_BYTES:
        raise ValueError(f"larger than {limits.MAX_FRAME_BYTES // 2**20} MB")
    try:
        return codec.loads(text)
    except RecursionError:
        raise ValueError("nested too deep to read") from None


def named(frame: Any) -> Any:
    """A frame as codec.from_tree reads it: the rows of values of its lists as objects of
    their fields (a frame without "$cols", of format 1, is that already)."""
    cols = frame.get("$cols") if type(frame) is dict else None
    if type(cols) is not dict:
        return frame
    tree = dict(frame)
    del tree["$cols"]
    for name, fields in cols.items():
        rows = tree.get(name)
        if type(rows) is list and type(fields) is list:  # tolerant, like codec: a short row
            tree[name] = [  # reads its missing fields as their defaults
                dict(zip(fields, row, strict=False)) if type(row) is list else row for row in rows
            ]
    return tree


def connect(path: str | Path, *, write: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); WAL when writing."""
    path = Path(path)
    try:
        if write:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            # before the first table: freed pages can then be handed back to the file system
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA journal_size_limit = 4194304")
        else:
            if not path.is_file():
                raise UserError(f"no recording {path}: give the file `queuetop record --out` wrote")
            uri = f"{path.resolve().as_uri()}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        if not write:
            try:
                problem = schema_problem(conn)
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise UserError(
                    f"{path} is not a queuetop recording ({exc}); give a file "
                    "`queuetop record` wrote"
                ) from exc
            if problem:
                conn.close()
                raise UserError(
                    f"{path} is not a recording queuetop can read ({problem}); "
                    "give a file `queuetop record` wrote"
                )
            tables = {r[0] for r in conn.execute("SELECT name FROM main.sqlite_master")}
            for name, view in zip(("frames", "audit"), READER_VIEWS, strict=True):
                if name in tables:  # a file from before any audit record has no audit table
                    conn.execute(view)
        return conn
    except sqlite3.Error as exc:
        raise UserError(f"cannot open recording {path}: {exc}") from exc


def schema_problem(conn: sqlite3.Connection) -> str | None:
    """What in the file's schema no recording holds (a view, a trigger, another table, a
    column missing), or None. A view named `frames` could compute rows without end."""
    rows = conn.execute("SELECT type, name FROM main.sqlite_master").fetchall()
    foreign = [
        f"{kind} {name}"
        for kind, name in rows
        if not (
            (kind == "table" and name in TABLES)
            or (kind == "index" and (name in INDEXES or str(name).startswith("sqlite_autoindex_")))
        )
    ]
    if foreign:
        return f"it holds what no recording does: {', '.join(foreign[:3])}"
    tables = {name for kind, name in rows if kind == "table"}
    for table in ("meta", "frames"):
        if table not in tables:
            return f"no table {table}"
    for table in tables:
        have = {
            r[0] for r in conn.execute("SELECT name FROM pragma_table_info(?, 'main')", (table,))
        }
        if not COLUMNS[table] <= have:
            return f"table {table} lacks {', '.join(sorted(COLUMNS[table] - have))}"
    return None


def read_meta(conn: sqlite3.Connection, path: str | Path) -> dict[str, str]:
    """The recording's meta table; one clear line when the file is not a recording."""
    try:
        rows = conn.execute(
            "SELECT key, value FROM meta WHERE typeof(key) = 'text' AND typeof(value) = 'text' "
            "AND length(value) <= ? LIMIT 1000",
            (MAX_META,),
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise UserError(
            f"{path} is not a queuetop recording ({exc}); give a file `queuetop record` wrote"
        ) from exc
    meta = dict(rows)
    try:
        found = int(meta.get("format", ""))
    except ValueError:
        raise UserError(f"{path} is not a queuetop recording (no format in its meta)") from None
    if found > FORMAT:
        raise UserError(
            f"{path} is recording format {found}, newer than this queuetop reads ({FORMAT}): "
            "upgrade queuetop to replay it"
        )
    return meta


class FrameChain:
    """Frames rebuilt in order: a full frame, then each delta applied to the tree before it.

    Keeps the last tree it rebuilt, so that stepping forward one frame reads one row.
    """

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._last: tuple[int, Any] | None = None

    def tree(self, frame_id: int) -> Any:
        """The tree of frame `frame_id` (KeyError if there is none)."""
        last = self._last
        if last is not None and last[0] == frame_id:
            return last[1]
        key = self.conn.execute(
            "SELECT max(id) FROM frames WHERE kind = ? AND id <= ?", (FULL, frame_id)
        ).fetchone()[0]
        if last is not None and (key or 0) <= last[0] < frame_id:
            first, before = last[0] + 1, last[1]  # on the way: go on from the cached tree
        elif key is not None:
            first, before = key, None
            if frame_id - key > limits.MAX_CHAIN:  # ids may skip: count the rows between
                chain = self.conn.execute(
                    "SELECT count(*) FROM frames WHERE id > ? AND id <= ?", (key, frame_id)
                ).fetchone()[0]
                if chain > limits.MAX_CHAIN:
                    raise ValueError(
                        f"{chain} deltas after its full frame (a recording has at most "
                        f"{limits.MAX_CHAIN})"
                    )
        else:
            self._missing(frame_id)
        tree = None
        for fid, tree in self.trees(first, frame_id, before):
            if fid == frame_id:
                return tree
        self._missing(frame_id)

    def _missing(self, frame_id: int) -> typing.NoReturn:
        """KeyError where there is no such frame (retention dropped it); ValueError where
        the frame is there but no full frame before it is (a file cut or edited)."""
        if self.conn.execute("SELECT 1 FROM frames WHERE id = ?", (frame_id,)).fetchone():
            raise ValueError("no full frame before it to rebuild it from")
        raise KeyError(frame_id)

    def trees(self, first: int, last: int, before: Any = None):
        """(id, tree) for every frame from `first` to `last`, in order; `before` is the tree
        of the frame before `first` (needed when `first` is a delta)."""
        tree = before
        rows = self.conn.execute(
            "SELECT id, kind, data FROM frames WHERE id BETWEEN ? AND ? ORDER BY id", (first, last)
        )
        for fid, kind, data in rows:
            if kind not in (FULL, DELTA):
                raise ValueError(f"frame {fid} is of kind {kind}, newer than this queuetop reads")
            try:
                body = limits.check(unpack(data))
                if kind == FULL:
                    tree = body
                elif tree is None:  # a delta with nothing before it: its chain was cut
                    continue
                else:
                    tree = limits.check(delta.apply(tree, body))
            except UNREADABLE as exc:
                raise ValueError(f"frame {fid}: {exc}") from exc
            self._last = (fid, tree)
            yield fid, tree
