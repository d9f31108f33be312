"""Turning each snapshot into a frame: the whole frame, or a patch against the frame before.

A frame is the snapshot's fields as a JSON object. A list of records (locks, waits, idle
sessions, stale leases, sections …) is written as rows of values in field order, its field
names once per frame under "$cols" (store.named() turns them back into objects). The patch
is delta.py's, found from the snapshots' values rather than from trees: a list whose rows
are the same records in the same places, a field of most of them changed (a wait, an age),
as those fields' columns; any other list as runs of rows copied from the frame before, rows
patched by place and new rows written whole; any other field replaced when it changed. So an
unchanged 1,000-row lock table costs a comparison of its rows' __dict__s, a poll costs the
recorder the rows that changed, and no tree is built for a frame nobody writes whole: the
values themselves go to the JSON encoder (codec.frame_json), which writes a tuple as a list
and asks codec.to_tree for what JSON has no type for.

Rows are compared by ==, as values: a value equal to the old one keeps the old one's JSON
(1 for 1.0, which codec reads back into the field's type).
"""

from __future__ import annotations

from itertools import compress, count
from operator import attrgetter, ne
from typing import Any

from dashboard.recorder import codec

_PLAIN = frozenset((str, int, bool, float, type(None)))
_STATE = attrgetter("__dict__")  # a row's fields and their values, as the object keeps them
_MIXED = object()  # a list whose rows are not all of one class
# A row that differs from an old one in most of its values is still patched from it where
# the values they share hold this much text (a query, an application name): only the
# values that changed are then written.
SHARED_TEXT = 64


class _Rows:
    """A list of records as the last frame holds it."""

    __slots__ = ("keys", "index", "states", "cols")

    def __init__(self, keys: list[tuple], index: dict | None, states: list | None, cols=None):
        self.keys = keys  # each row's values, in field order
        # row -> its place; None where a row holds a dict or list (written as trees and
        # compared only as a whole); _UNINDEXED until a frame needs it
        self.index = index
        self.states = states  # the rows' __dict__s (None for a class with __slots__)
        self.cols = cols  # the values by field (zip(*keys)), where a frame needed them

    def place_of(self) -> dict:
        if self.index is _UNINDEXED:
            self.index = dict(zip(self.keys, range(len(self.keys)), strict=True))
        return self.index


_UNINDEXED: Any = object()  # an index not built yet (its rows hold no dict or list)


class FrameEncoder:
    """Frames for one writer, in order."""

    def __init__(self) -> None:
        self._kind: type | None = None  # the snapshot's class
        self._names: tuple[str, ...] = ()
        self._values: tuple | None = None  # the previous snapshot's field values
        self._trees: list[Any] = []  # each field as the frame holds it
        self._rows: dict[int, _Rows] = {}  # each list of records, by field
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
                patch = _MIXED if fields is None else self._list(n, name, value, fields)
                if patch is not _MIXED:
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
        """Field `n`, a list of records: its patch (None if unchanged; _MIXED if its rows are
        not all of one class, which are then written as trees)."""
        names, read = fields
        same_cols = self._cols.get(name) is names  # record_fields' own tuple, cached
        old = self._rows.get(n) if same_cols else None  # rows of another class: whole
        try:
            # The rows' __dict__s compared in C, without a tuple made for each row: 1,000
            # locks held on compare in about half the time, and leave the garbage collector
            # nothing to count. Equal dicts are equal fields; unequal ones (a row that
            # changed) go on to the rows' values.
            states = list(map(_STATE, value))
        except AttributeError:  # a class with __slots__
            states = None
        if old is not None and states is not None and states == old.states:
            return None  # the fields and values of the rows before, all of one class
        if len(set(map(type, value))) != 1:
            return _MIXED
        keys = list(map(read, value))
        if old is not None and keys == old.keys:
            old.states = states
            return None
        if old is not None and old.index is not None:
            patch, cols = _columns(old, keys)
            if patch is not None:
                self._rows[n] = _Rows(keys, _UNINDEXED, states, cols)
                self._trees[n] = keys
                return patch
        try:
            index: dict | None = dict(zip(keys, range(len(keys)), strict=True))
        except TypeError:  # a row holding a dict or list: written as trees, whole
            index = None
        rows = keys if index is not None else [[codec.to_tree(v) for v in k] for k in keys]
        self._rows[n] = _Rows(keys, index, states)
        self._trees[n] = rows
        if not same_cols:
            self._cols[name] = names
            self._cols_changed = True
        if old is None or old.index is None or index is None:
            return {"$r": rows}
        return {"$l": _ops(old.place_of(), old.keys, keys)}


def _columns(old: _Rows, keys: list[tuple]) -> tuple[dict | None, list | None]:
    """The same records in the same places (the same first field in each), some fields
    changed in most of them (a wait, an age, a cost): those fields' columns, whole, as
    {"$c": [[field, values], …]}, and the new columns. (None, None) where that is not so,
    or where a changed value holds a dict or list (such rows are written as trees)."""
    if len(keys) != len(old.keys) or not keys:
        return None, None
    cols = list(zip(*keys, strict=True))
    if old.cols is None:
        old.cols = list(zip(*old.keys, strict=True))
    before = old.cols
    if not cols or len(cols) != len(before) or cols[0] != before[0]:
        return None, None
    changed = [c for c in range(1, len(cols)) if cols[c] != before[c]]
    cells = sum(sum(map(ne, cols[c], before[c])) for c in changed)
    if 2 * cells < len(keys) * len(changed):  # a few rows changed: patched row by row
        return None, None
    written = [[c, cols[c]] for c in changed]
    try:
        hash(tuple(cols[c] for c in changed))  # (a dict or list in them cannot be hashed)
    except TypeError:
        return None, None
    return {"$c": written}, cols


def _ops(old_index: dict, old_keys: list[tuple], keys: list[tuple]) -> list:
    """delta.py's list ops: runs of rows copied from the old list, rows patched by place from
    an old row of the same first field (a session's pid, a job's id, a section's name) where
    fewer than half their values differ or the others hold a long text, and new rows."""
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
            if 2 * len(differ) < len(key) or _shared_text(key, differ) >= SHARED_TEXT:
                ops.append([-1, place, {"$p": [[n, key[n]] for n in differ]}])
                expect, fresh = place + 1, None
                continue
        if fresh is None:
            fresh = []
            ops.append([fresh])
        fresh.append(key)
    return ops


def _shared_text(row: tuple, differ: list[int]) -> int:
    """How much text the values of `row` other than those at `differ` hold."""
    text = sum(len(v) for v in row if type(v) is str)
    return text - sum(len(row[n]) for n in differ if type(row[n]) is str)
