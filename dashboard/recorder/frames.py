"""Turning each snapshot into a frame: the whole tree, or a patch against the frame before.

The patch is delta.py's (the reader applies it to the previous tree), but it is found from
the snapshots themselves, so that a poll of a thousand unchanged lock rows costs the
recorder a comparison of their values, not a re-encoding: each list of records (locks,
waits, idle sessions, stale leases, sections …) is kept as the values of its rows and
their trees. A row whose values are those of a row of the previous frame is a copy of that
row; another is patched from the previous row in its place where most of its fields are
the same (a wait that grew), else written whole.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from itertools import compress, count
from typing import Any

from dashboard.recorder import codec, delta

_MISSING = object()


@dataclass
class _Rows:
    """One list field of the previous frame: each row's values, and its tree."""

    keys: list[tuple]
    trees: list[Any]


class FrameEncoder:
    """Frames for one writer, in order."""

    def __init__(self) -> None:
        self._previous: Any = None  # the previous snapshot (object)
        self._tree: dict[str, Any] | None = None  # its tree, as the reader rebuilds it
        self._rows: dict[str, _Rows] = {}

    def reset(self) -> None:
        """The next frame is written whole and patched against nothing before it."""
        self.__init__()

    def encode(self, snap: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(this frame's whole tree, the patch from the previous frame or None if there is
        no previous frame)."""
        names, values = codec.record_fields(type(snap))
        previous, before = self._previous, self._tree
        if previous is not None and type(previous) is not type(snap):
            previous = before = None
        old_values = values(previous) if previous is not None else None
        tree: dict[str, Any] = {}
        changed: dict[str, Any] = {}
        for n, (name, value) in enumerate(zip(names, values(snap), strict=True)):
            old = old_values[n] if old_values is not None else _MISSING
            if old is value and before is not None:  # a section not read this poll
                tree[name] = before[name]
                continue
            rows = self._record_list(value)
            if rows is not None:
                tree[name], patch = self._list(name, value, rows, before)
            else:
                self._rows.pop(name, None)
                if before is not None and type(old) is type(value) and old == value:
                    tree[name] = before[name]
                    continue
                tree[name] = codec.to_tree(value)
                patch = (
                    delta.diff(before[name], tree[name])
                    if before is not None
                    else {"$r": tree[name]}
                )
            if patch is not None:
                changed[name] = patch
        self._previous, self._tree = snap, tree
        return tree, ({"$o": changed} if before is not None else None)

    @staticmethod
    def _record_list(value: Any) -> tuple | None:
        """(field names, the function reading a row's values) where `value` is a non-empty
        tuple of records of one class; else None."""
        if type(value) is not tuple or not value:
            return None
        fields = codec.record_fields(type(value[0]))
        if fields is None or len(set(map(type, value))) != 1:
            return None
        return fields

    def _list(self, name: str, value: tuple, fields: tuple, before) -> tuple[list, Any]:
        names, read = fields
        keys = list(map(read, value))
        rows = self._rows.get(name)
        if rows is not None and before is not None and keys == rows.keys:
            return before[name], None
        if rows is None or before is None:
            trees = [codec.to_tree(v) for v in value]
            self._rows[name] = _Rows(keys, trees)
            return trees, {"$r": trees}
        try:
            index = dict(zip(rows.keys, range(len(rows.keys)), strict=True))
        except TypeError:  # a row holding a dict or list: compared as trees instead
            trees = [codec.to_tree(v) for v in value]
            self._rows[name] = _Rows(keys, trees)
            return trees, delta.diff(before[name], trees)
        hits = list(map(index.get, keys))  # the old row each new one equals, or None
        old_trees, old_keys = rows.trees, rows.keys
        trees = [old_trees[i] if i is not None else None for i in hits]
        ops: list = []
        run_end = -1  # the old row after the last copied one: a copy of it extends the run
        expect = 0  # the old row in the place of the next new one
        kin: dict | None = None  # first field (a pid, an id, a name) -> old rows with it
        for j, i in enumerate(hits):
            if i is not None:
                if i == run_end:
                    ops[-1][0] += 1
                else:
                    ops.append([1, i])
                run_end = expect = i + 1
                continue
            run_end = -1
            if kin is None:
                kin = _by_first_field(old_keys)
            key = keys[j]
            close = _closest(old_keys, [*kin.get(_first(key), ())[:3], expect], key)
            if close is not None:  # most fields as in that old row: only the others
                place, differ = close
                changed = {names[n]: codec.to_tree(key[n]) for n in compress(count(), differ)}
                trees[j] = {**old_trees[place], **changed}
                ops.append([-1, place, {"$o": {k: {"$r": v} for k, v in changed.items()}}])
                expect = place + 1
                continue
            new = trees[j] = codec.to_tree(value[j])
            if ops and len(ops[-1]) == 1:
                ops[-1][0].append(new)
            else:
                ops.append([[new]])
        self._rows[name] = _Rows(keys, trees)
        return trees, {"$l": ops}


def _first(key: tuple) -> Any:
    return key[0] if key else None


def _by_first_field(keys: list[tuple]) -> dict:
    """Old rows by their first field: where a row that changed most likely was (a session's
    pid, a job's id, a section's name), wherever the order put it."""
    kin: dict = {}
    for i, key in enumerate(keys):
        try:
            kin.setdefault(_first(key), []).append(i)
        except TypeError:  # an unhashable first field: positional pairing only
            pass
    return kin


def _closest(old_keys: list[tuple], places: list[int], key: tuple) -> tuple | None:
    """(the old row among `places` that the new row's values differ least from, which of
    them differ) where fewer than half do; None if no old row is that close."""
    best, fewest = None, len(key)
    for place in dict.fromkeys(places):
        if place < len(old_keys) and len(old_keys[place]) == len(key):
            # by ==: a value equal to the old one keeps its old tree (1 for 1.0, as
            # codec reads it back into the field's type)
            differ = list(map(operator.ne, key, old_keys[place]))
            n = sum(differ)
            if 2 * n < len(key) and n < fewest:
                best, fewest = (place, differ), n
                if n <= 1:
                    break
    return best
