"""Hostile recordings: a real one (RecordingWriter, fixed snapshots) edited as an attacker
would with sqlite3, one file per case. Each case names what it does to the file."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from ui_snapshots import T0, demo_spec, fixed_snapshot

from dashboard.models import RowLockHolder
from dashboard.recorder import RecordingWriter, store

OSC52 = "\x1b]52;c;ZXZpbA==\x1b\\"
TITLE = "\x1b]2;T8\x07\x1b[31m"


def real_recording(path: Path, frames: int = 8) -> Path:
    writer = RecordingWriter(path, demo_spec(), 1.0)
    for i in range(frames):
        snap = replace(fixed_snapshot(i), taken_at=T0 + timedelta(seconds=i))
        snap = replace(
            snap,
            row_lock_holders=(RowLockHolder(pid=4100, role="ready", rows=1, application_name="w"),),
        )
        writer.write(snap)
    writer.close()
    for side in ("-wal", "-shm"):
        Path(f"{path}{side}").unlink(missing_ok=True)
    return path


def _edit(path: Path, *statements: tuple[str, tuple]) -> None:
    conn = sqlite3.connect(path)
    for sql, params in statements:
        conn.execute(sql, params)
    conn.commit()
    conn.close()


def _first_full(path: Path) -> dict:
    conn = sqlite3.connect(path)
    data = conn.execute("SELECT data FROM frames WHERE kind = 0 ORDER BY id LIMIT 1").fetchone()[0]
    conn.close()
    return store.unpack(data)


def _set_first(path: Path, tree_or_bytes) -> None:
    data = (
        tree_or_bytes
        if isinstance(tree_or_bytes, bytes)
        else store.squeeze(json.dumps(tree_or_bytes, allow_nan=True).encode())
    )
    _edit(path, ("UPDATE frames SET data = ? WHERE id = (SELECT min(id) FROM frames)", (data,)))


def _with(path: Path, **fields) -> None:
    tree = _first_full(path)
    tree.update(fields)
    _set_first(path, tree)


def role_escape(path: Path) -> None:
    tree = _first_full(path)
    holders = tree["row_lock_holders"]
    if "$cols" in tree and "row_lock_holders" in tree["$cols"]:
        place = tree["$cols"]["row_lock_holders"].index("role")
        for row in holders:
            row[place] = OSC52 + TITLE
    else:
        for row in holders:
            row["role"] = OSC52 + TITLE
    _set_first(path, tree)


def zlib_bomb(path: Path) -> None:
    _set_first(path, zlib.compress(b"[" + b"0," * 400_000_000 + b"0]", 9))


def doubling_deltas(path: Path) -> None:
    base = _first_full(path)
    rows = [["x" * 50, i] for i in range(2000)]
    base["locks"] = rows
    base.pop("$cols", None)
    _set_first(path, base)
    double = {"$o": {"locks": {"$l": [[10**9, 0], [10**9, 0]]}}}
    conn = sqlite3.connect(path)
    first = conn.execute("SELECT min(id) FROM frames").fetchone()[0]
    conn.execute("DELETE FROM frames WHERE id > ?", (first,))
    for n in range(1, 25):
        conn.execute(
            "INSERT INTO frames (id, at, kind, data) VALUES (?, ?, 1, ?)",
            (first + n, T0.timestamp() + n, json.dumps(double).encode()),
        )
    conn.commit()
    conn.close()


def deep_value(path: Path) -> None:
    _set_first(path, b'{"queue": ' + b"[" * 900 + b"]" * 900 + b"}")


def very_deep_json(path: Path) -> None:
    _set_first(path, zlib.compress(b'{"queue": ' + b"[" * 1_000_000 + b"]" * 1_000_000 + b"}"))


def huge_query(path: Path) -> None:
    tree = _first_full(path)
    big = "SELECT '" + "A" * 50_000_000 + "'"
    if "$cols" in tree and "locks" in tree["$cols"]:
        place = tree["$cols"]["locks"].index("query")
        tree["locks"][0][place] = big
    _set_first(path, zlib.compress(json.dumps(tree).encode(), 9))


def meta_view(path: Path) -> None:
    _edit(
        path,
        ("ALTER TABLE meta RENAME TO meta_old", ()),
        (
            "CREATE VIEW meta AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT 'k' || n AS key, printf('%.*c', 1000000, 'x') AS value FROM r",
            (),
        ),
    )


def frames_view(path: Path) -> None:
    _edit(
        path,
        ("ALTER TABLE frames RENAME TO frames_old", ()),
        (
            "CREATE VIEW frames AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT n AS id, n AS at, 0 AS kind, zeroblob(1000000) AS data FROM r",
            (),
        ),
    )


def at_text(path: Path) -> None:
    _edit(path, ("UPDATE frames SET at = 'noon'", ()))


def at_huge(path: Path) -> None:
    _edit(path, ("UPDATE frames SET at = 1e300 WHERE id = (SELECT max(id) FROM frames)", ()))


def at_negative_huge(path: Path) -> None:
    _edit(path, ("UPDATE frames SET at = -1e300 WHERE id = (SELECT min(id) FROM frames)", ()))


def interval_text(path: Path) -> None:
    _edit(path, ("UPDATE meta SET value = 'abc' WHERE key = 'interval'", ()))


def spec_not_json(path: Path) -> None:
    _edit(path, ("UPDATE meta SET value = '{not json' WHERE key = 'spec'", ()))


def not_finite(path: Path) -> None:
    _with(
        path, oldest_ready_age_s=float("nan"), monitor_load=float("inf"), elapsed_ms=-float("inf")
    )


def huge_number(path: Path) -> None:
    tree = _first_full(path)
    text = json.dumps(tree)
    text = text.replace('"stale_count": ', '"stale_count": ' + "1" + "0" * 400 + ', "x": ', 1)
    _set_first(path, text.encode())


def unknown_role(path: Path) -> None:
    _with(path, roles=["ready", "running", "exploded", OSC52])


def wrong_types(path: Path) -> None:
    _with(path, queue=["a", "list"], counts={"ready": "many"}, taken_at=12, by_status=[1, 2])


def damaged_audit(path: Path) -> None:
    _edit(
        path,
        ("INSERT INTO audit (key, at, data) VALUES ('k1', 1.0, ?)", (b"\x78\x9c garbage",)),
        ("INSERT INTO audit (key, at, data) VALUES ('k2', 2.0, ?)", (b'{"at": 5, "action": []}',)),
        ("INSERT INTO audit (key, at, data) VALUES ('k3', 'x', ?)", (b"[[[[",)),
    )


def damaged_page(path: Path) -> None:
    data = bytearray(path.read_bytes())
    page = 4096
    for i in range(page * 2, min(len(data), page * 4)):
        data[i] = 0xA5
    path.write_bytes(bytes(data))


def trigger(path: Path) -> None:
    _edit(
        path,
        ("CREATE TABLE stolen (n INTEGER)", ()),
        ("CREATE TRIGGER t AFTER INSERT ON audit BEGIN INSERT INTO stolen VALUES (1); END", ()),
    )


CASES: dict[str, Callable[[Path], None]] = {
    f.__name__: f
    for f in (
        role_escape,
        zlib_bomb,
        doubling_deltas,
        deep_value,
        very_deep_json,
        huge_query,
        meta_view,
        frames_view,
        at_text,
        at_huge,
        at_negative_huge,
        interval_text,
        spec_not_json,
        not_finite,
        huge_number,
        unknown_role,
        wrong_types,
        damaged_audit,
        damaged_page,
        trigger,
    )
}


def hostile(tmp: Path, name: str) -> Path:
    path = real_recording(tmp / f"{name}.qtr")
    CASES[name](path)
    return path
