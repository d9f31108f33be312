"""What changed between two frames' trees (codec.to_tree), and applying it.

A patch is one node:

    {"$r": value}                  replace with value
    {"$o": {key: patch}, "$x": […]} an object: keys patched (or added), keys removed
    {"$l": [op, …]}                a list rebuilt from ops:
        [n, i]         copy n items of the old list from index i, unchanged
        [-1, i, patch] the old item i, patched
        [items]        new items as they are
    {"$p": [[place, value], …]}    a list (a row of values) with the values at those places
                                   replaced (written by recorder/frames.py)
    {"$c": [[place, values], …]}   a list of rows of values, the same length, each row's
                                   value at `place` replaced by its own of `values` (a
                                   column: recorder/frames.py, format 3)

Lists (locks, waiting sessions, stale leases) are aligned by each item's *signature*: its
values other than floats, which tick from one poll to the next (wait_s, ages). A session
that stays keeps its place though its wait grew; one that leaves or arrives shifts nothing
else. Alignment is difflib's, on those signatures.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from dashboard.recorder import limits

SAME = None  # diff() of equal trees: no patch


def diff(old: Any, new: Any) -> dict | None:
    """The patch turning `old` into `new`; SAME (None) when they are identical."""
    if identical(old, new):
        return SAME
    if type(old) is dict and type(new) is dict and _is_object(old) and _is_object(new):
        changed = {}
        for key, value in new.items():
            if key in old:
                patch = diff(old[key], value)
                if patch is not SAME:
                    changed[key] = patch
            else:
                changed[key] = {"$r": value}
        removed = [key for key in old if key not in new]
        node: dict = {"$o": changed}
        if removed:
            node["$x"] = removed
        return node
    if type(old) is list and type(new) is list and old and new:
        return _list_diff(old, new)
    return {"$r": new}


def identical(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down: False == 0 and 0.0 == -0.0, but their
    JSON differs."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(identical(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def _is_object(node: dict) -> bool:
    """A plain object, not a tagged scalar such as {"$dt": …} (those are replaced whole)."""
    return not (len(node) == 1 and next(iter(node)).startswith("$"))


def _signature(item: Any) -> Any:
    if type(item) is dict:
        return tuple(
            (k, v if type(v) in (str, int, bool) or v is None else repr(v))
            for k, v in item.items()
            if type(v) is not float
        )
    return repr(item)


def _list_diff(old: list, new: list) -> dict:
    matcher = difflib.SequenceMatcher(
        None, [_signature(i) for i in old], [_signature(i) for i in new], autojunk=False
    )
    ops: list = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1):
                patch = diff(old[i1 + offset], new[j1 + offset])
                if patch is SAME:
                    if (
                        ops
                        and len(ops[-1]) == 2
                        and ops[-1][0] > 0
                        and _ends_at(ops[-1]) == i1 + offset
                    ):
                        ops[-1][0] += 1
                    else:
                        ops.append([1, i1 + offset])
                else:
                    ops.append([-1, i1 + offset, patch])
        elif j2 > j1:  # replaced or inserted: the new items as they are
            ops.append([new[j1:j2]])
    return {"$l": ops}


def _ends_at(op: list) -> int:
    return op[1] + op[0]


def apply(old: Any, patch: dict | None) -> Any:
    """`old` with `patch` applied (a new tree; `old` is not changed)."""
    if patch is SAME:
        return old
    if "$r" in patch:
        return patch["$r"]
    if "$o" in patch:
        new = dict(old)
        for key in patch.get("$x", ()):
            new.pop(key, None)
        for key, sub in patch["$o"].items():
            new[key] = apply(old.get(key), sub) if key in old else sub.get("$r")
        return new
    if "$l" in patch:
        new_list: list = []
        for op in patch["$l"]:
            if len(op) == 1:
                new_list.extend(op[0])
            elif op[0] == -1:
                new_list.append(apply(old[op[1]], op[2]))
            else:
                new_list.extend(old[op[1] : op[1] + op[0]])
        return limits.list_length(new_list)  # a file's patches may double a list
    if "$p" in patch:
        row = list(old)
        for place, value in patch["$p"]:
            row[place] = value
        return row
    if "$c" in patch:
        rows = [list(row) if type(row) is list else _not_a_row(row) for row in old]
        for place, values in patch["$c"]:
            for row, value in zip(rows, values, strict=True):
                row[place] = value
        return rows
    raise ValueError("not a patch")


def _not_a_row(item: Any) -> list:
    raise ValueError(f"a column patched in a list of {type(item).__name__}, not of rows")
