"""Turning each snapshot into a frame: the whole frame, or a patch against the frame before.

A frame is the snapshot's fields as a JSON object. A list of records (locks, waits, idle
sessions, stale leases, sections …) is written as rows of values in field order, its field
names once per frame under "$cols" (store.named() turns them back into objects). The patch
is delta.py's, found from the snapshots' values rather than from trees: each list as runs of
rows copied from the frame before and new rows written whole, any other field replaced when
it changed. So an unchanged 1,000-row lock table costs a comparison of its values, a poll
costs the recorder the rows that changed, and no tree is built for a frame nobody writes
whole: the values themselves go to the JSON encoder (codec.frame_json), which writes a tuple
as a list and asks codec.to_tree for what JSON has no type for.

Rows are compared by ==, as values: a value equal to the old one keeps the old one's JSON
(1 for 1.0, which codec reads back into the field's type).
"""

from __future__ import annotations

from itertools import compress, count
from operator import ne
from typing import Any

from dashboard.recorder import codec

_PLAIN = frozenset((str, int, bool, float, type(None)))


class FrameEncoder:
    """Frames for one writer, in order."""

    def __init__(self) -> None:
        self._kind: type | None = None  # the snapshot's class
        self._names: tuple[str, ...] = ()
        self._values: tuple | None = None  # the previous snapshot's field values
        self._trees: list[Any] = []  # each field as the frame holds it
        # a list of records: (its rows' values, the place of each, or None where a row
        # holds a dict or list: such rows are written as trees and compared only as a whole)
        self._rows: dict[int, tuple[list[tuple], dict | None]] = {}
        self._cols: dict[str, tuple[str, ...]] = {}  # a list's field names, once per frame
        self._cols_changed = False

    def reset(self) -> None:
        """The next frame is written whole and patched against nothing before it."""
        self.__init__()

    def whole(self) -> dict[str, Any]:
        """The last snapshot encoded, as a whole frame."""
        frame: dict[str, Any] = {"$cols": self._cols}
        frame.update(zip(self._names, self._trees, strict=True))
        return frame

    def encode(self, snap: Any) -> dict[str, Any] | None:
        """Take in the next snapshot: the patch from the previous frame to it (None if there
        was no previous frame; whole() then gives the frame)."""
        kind = type(snap)
        names, read = codec.record_fields(kind)
        values = read(snap)
        old = self._values
        if kind is not self._kind or old is None:
            self.reset()
            self._kind, self._names, self._trees = kind, names, [None] * len(names)
            old = None
        trees, cols = self._trees, self._cols
        self._cols_changed = False
        changed: dict[str, Any] = {}
        for n, value in enumerate(values):
            if old is not None and old[n] is value:  # a section not read this poll
                continue
            name = names[n]
            if type(value) is tuple and value:
                fields = codec.record_fields(type(value[0]))
                if fields is not None and len(set(map(type, value))) == 1:
                    patch = self._list(n, name, value, fields)
                    if patch is not None:
                        changed[name] = patch
                    continue
            if old is not None and type(old[n]) is type(value) and old[n] == value:
                continue
            tree = trees[n] = value if type(value) in _PLAIN else codec.to_tree(value)
            self._rows.pop(n, None)
            # an empty list reads the same with or without field names
            if value != () and cols.pop(name, None) is not None:
                self._cols_changed = True
            changed[name] = {"$r": tree}
        self._values = values
        if old is None:
            return None
        if self._cols_changed:
            changed["$cols"] = {"$r": dict(cols)}
        return {"$o": changed}

    def _list(self, n: int, name: str, value: tuple, fields: tuple) -> dict | None:
        """Field `n`, a list of records of one class: its patch (None if unchanged)."""
        names, read = fields
        keys = list(map(read, value))
        previous = self._rows.get(n)
        same_cols = self._cols.get(name) is names  # record_fields' own tuple, cached
        if previous is not None and same_cols and keys == previous[0]:
            return None
        try:
            index: dict | None = dict(zip(keys, range(len(keys)), strict=True))
        except TypeError:  # a row holding a dict or list: written as trees, whole
            index = None
        rows = keys if index is not None else [[codec.to_tree(v) for v in k] for k in keys]
        self._rows[n] = (keys, index)
        self._trees[n] = rows
        if not same_cols:
            self._cols[name] = names
            self._cols_changed = True
        if previous is None or previous[1] is None or index is None or not same_cols:
            return {"$r": rows}
        return {"$l": _ops(previous[1], previous[0], keys)}


def _ops(old_index: dict, old_keys: list[tuple], keys: list[tuple]) -> list:
    """delta.py's list ops: runs of rows copied from the old list, rows patched by place from
    an old row of the same first field (a session's pid, a job's id, a section's name) where
    fewer than half their values differ, and new rows."""
    ops: list = []
    get = old_index.get
    run_end = -1  # the old row after the last copied one: a copy of it extends the run
    expect = 0  # the old row in the place of the next new one
    fresh: list | None = None  # the new rows being added to, if the last op is one
    kin: dict | None = None  # first field -> the first old row with it
    for key in keys:
        i = get(key)
        if i is not None:
            if i == run_end:
                ops[-1][0] += 1
            else:
                ops.append([1, i])
            run_end = expect = i + 1
            fresh = None
            continue
        run_end = -1
        if kin is None:
            kin = {}
            for place, old in enumerate(old_keys):
                if old:
                    kin.setdefault(old[0], place)
        place = expect if expect < len(old_keys) and old_keys[expect][:1] == key[:1] else None
        if place is None and key:
            place = kin.get(key[0])
        if place is not None:
            differ = list(compress(count(), map(ne, key, old_keys[place])))
            if 2 * len(differ) < len(key):  # most values as in that old row: only the others
                ops.append([-1, place, {"$p": [[n, key[n]] for n in differ]}])
                expect, fresh = place + 1, None
                continue
        if fresh is None:
            fresh = []
            ops.append([fresh])
        fresh.append(key)
    return ops
