"""What reading one frame of a recording may cost, whoever made the file.

A recording is a file people exchange: its frames are read as untrusted input. A frame's
data is decompressed up to MAX_FRAME_BYTES and no further (a zlib bomb stops there); its
tree, once rebuilt (a full frame, or a delta applied to the frame before), is walked once
without recursion and refused when it nests deeper than MAX_DEPTH, holds more than
MAX_NODES values (counted as the screen would read them: a list a patch doubled by
reference counts every copy), or a number that is not finite or beyond 64 bits. A string
longer than MAX_STRING is cut where it stands, marked. A refused frame raises ValueError:
the reader says which frame and why, and goes on with the others.
"""

from __future__ import annotations

import math
from typing import Any

MAX_FRAME_BYTES = 16 * 2**20  # a frame's JSON, decompressed (the largest real ones: ~5 MB)
MAX_DEPTH = 48  # a snapshot nests about 8 deep; JSON from the database a little more
MAX_NODES = 1_500_000  # values in one frame's tree (100,000 groups: ~800,000)
MAX_ITEMS = 200_000  # items in one list after a patch
MAX_STRING = 1_000_000  # characters of one text value (a query, an error)
MAX_CHAIN = 10 * 60  # deltas read from a full frame (the writer puts one every 60 frames)
MAX_INT = 2**63
CUT = "…[cut by queuetop: longer than a recording may hold]"


def check(tree: Any) -> Any:
    """`tree` within the limits (long strings cut in place); ValueError naming the first
    limit it passes."""
    nodes = 0
    todo: list[tuple[Any, int]] = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise ValueError(f"more than {MAX_NODES:,} values in one frame")
        kind = type(node)
        if kind is dict or kind is list:
            if depth >= MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH}")
            if kind is dict:
                for key, value in node.items():
                    if type(value) is str and len(value) > MAX_STRING:
                        node[key] = value[:MAX_STRING] + CUT
                    elif type(value) in (dict, list, int, float):
                        todo.append((value, depth + 1))
                    else:
                        nodes += 1
            else:
                for i, value in enumerate(node):
                    if type(value) is str and len(value) > MAX_STRING:
                        node[i] = value[:MAX_STRING] + CUT
                    elif type(value) in (dict, list, int, float):
                        todo.append((value, depth + 1))
                    else:
                        nodes += 1
        elif kind is float:
            if not math.isfinite(node):
                raise ValueError("a number that is not finite")
        elif kind is int and not -MAX_INT <= node < MAX_INT:
            raise ValueError("a number beyond 64 bits")
    return tree


def list_length(items: list) -> list:
    """A list a patch built, refused beyond MAX_ITEMS."""
    if len(items) > MAX_ITEMS:
        raise ValueError(f"a list of more than {MAX_ITEMS:,} items")
    return items
