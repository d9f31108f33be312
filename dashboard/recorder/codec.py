"""Snapshots (any frozen dataclass) to JSON trees and back, by walking their fields.

Nothing here names a field of a Snapshot: a field someone adds to models.py is recorded
and read back without a change here. The tree is plain JSON (canonical from dumps(): sorted
keys, no spaces; frame_json() writes a frame in the order given, for speed) with a few
tagged objects for what JSON has no type for:

    {"$dt": "2026-01-15T09:30:00+00:00"}   datetime (also $date, $time, $td seconds)
    {"$dec": "1.50"}  {"$uuid": "…"}  {"$b64": "…"}  {"$set": […]}
    {"$map": [[key, value], …]}           a dict whose keys are not all plain text
    {"$text": "…"}                        a value of a type this module does not know

A dataclass is an object of its fields; an enum its value; a tuple or list a list. Reading
back is led by the dataclass's type hints, and is tolerant, since recordings outlive
releases: a key the class no longer has is ignored, a field the tree lacks takes its default
(or an empty value of its type when it has none). Where a field is typed Any, a list comes
back a list (JSON from the database is), so a tuple there reads back as a list.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import operator
import types
import typing
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from functools import cache
from typing import Any
from uuid import UUID

# JSON's own: kept as they are (a float that is not finite is written NaN or Infinity, as
# Python's json reads and writes them)
_PLAIN = frozenset((str, int, bool, float, type(None)))
_TAG = "$"


_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def dumps(tree: Any) -> bytes:
    """Canonical JSON: the same tree always gives the same bytes."""
    text = _ENCODE(tree)
    # lone surrogates (a database in SQL_ASCII can hand back any byte) survive the trip
    return text.encode("utf-8", "surrogatepass")


def loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8", "surrogatepass"))


# --- to a tree -----------------------------------------------------------------------------


def to_tree(value: Any) -> Any:
    """A JSON tree of `value`: dataclasses, containers and the scalars psycopg returns (a
    dict of plain values is its own tree: trees are read, never changed)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    exact = _EXACT.get(kind)  # the types every frame holds, without the search below
    if exact is not None:
        return exact(value)
    if kind is tuple or kind is list:
        return [v if type(v) in _PLAIN else to_tree(v) for v in value]
    fields = record_fields(kind)
    if fields is not None:
        names, values = fields
        return {
            n: v if type(v) in _PLAIN else to_tree(v)
            for n, v in zip(names, values(value), strict=True)
        }
    if kind is dict:
        return _dict_tree(value)
    return _tagged(value)


_TEXT = frozenset((str,))
_STARTS_TAG = operator.methodcaller("startswith", _TAG)


def _dict_tree(value: dict) -> Any:
    if _TEXT.issuperset(map(type, value)) and not any(map(_STARTS_TAG, value)):
        if _PLAIN.issuperset(map(type, value.values())):
            return value
        return {k: v if type(v) in _PLAIN else to_tree(v) for k, v in value.items()}
    return {"$map": [[to_tree(k), to_tree(v)] for k, v in value.items()]}


_EXACT: dict[type, Callable[[Any], Any]] = {
    dict: _dict_tree,
    datetime: lambda v: {"$dt": v.isoformat()},
    date: lambda v: {"$date": v.isoformat()},
    time: lambda v: {"$time": v.isoformat()},
    timedelta: lambda v: {"$td": v.total_seconds()},
    Decimal: lambda v: {"$dec": str(v)},
    UUID: lambda v: {"$uuid": str(v)},
}


@cache
def record_fields(kind: type) -> tuple[tuple[str, ...], Callable[[Any], tuple]] | None:
    """A dataclass's field names, and a function reading all their values at once (a tuple,
    in C: the recorder reads every row of every poll); None for any other type."""
    if not dataclasses.is_dataclass(kind):
        return None
    names = tuple(f.name for f in dataclasses.fields(kind))
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return names, lambda value: (one(value),)
    return names, operator.attrgetter(*names) if names else (lambda value: ())


def _field_names(kind: type) -> tuple[str, ...] | None:
    fields = record_fields(kind)
    return fields[0] if fields else None


def _tagged(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return to_tree(value.value)
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, time):
        return {"$time": value.isoformat()}
    if isinstance(value, timedelta):
        return {"$td": value.total_seconds()}
    if isinstance(value, Decimal):
        return {"$dec": str(value)}
    if isinstance(value, UUID):
        return {"$uuid": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (set, frozenset)):
        items = [to_tree(v) for v in value]
        return {"$set": sorted(items, key=lambda t: dumps(t))}  # canonical: sorted
    for plain in (bool, int, float, str, dict):  # subclasses of the plain types
        if isinstance(value, plain):
            return to_tree(plain(value))
    if isinstance(value, (tuple, list)):  # a named tuple
        return [to_tree(v) for v in value]
    return {"$text": str(value)}  # e.g. an inet: kept readable rather than lost


_UNTAG: dict[str, Callable[[Any], Any]] = {
    "$dt": datetime.fromisoformat,
    "$date": date.fromisoformat,
    "$time": time.fromisoformat,
    "$td": lambda s: timedelta(seconds=s),
    "$dec": Decimal,
    "$uuid": UUID,
    "$b64": base64.b64decode,
    "$text": str,
}


def is_tagged(node: Any) -> bool:
    """A tagged scalar ({"$dt": …}) or map: one key that starts with $."""
    return type(node) is dict and len(node) == 1 and next(iter(node)).startswith(_TAG)


# Frames: key order as given (no sorting), a tuple written as a list, and to_tree asked for
# what JSON has no type for (a datetime in a row of values: recorder/frames.py). The C
# encoder is made once: JSONEncoder.encode would make it again for every frame.
_FRAME_OPTIONS: dict[str, Any] = {
    "separators": (",", ":"),
    "ensure_ascii": False,
    "check_circular": False,
}
if json.encoder.c_make_encoder is not None:
    _FRAME_CHUNKS = json.encoder.c_make_encoder(
        None,
        to_tree,
        json.encoder.encode_basestring,
        None,
        ":",
        ",",
        False,
        False,
        True,
    )

    def _frame_text(frame: Any) -> str:
        return "".join(_FRAME_CHUNKS(frame, 0))

else:  # a Python without the C accelerator: the same text, more slowly
    _frame_text = json.JSONEncoder(**_FRAME_OPTIONS, default=to_tree).encode


def frame_json(frame: Any) -> bytes:
    """A frame's JSON: trees, or the values of rows as they are (tuples, datetimes …)."""
    return _frame_text(frame).encode("utf-8", "surrogatepass")


# --- from a tree ---------------------------------------------------------------------------


def from_tree(tree: Any, kind: Any) -> Any:
    """`tree` read back as `kind` (a dataclass, or any type hint)."""
    return _decoder(kind)(tree)


def _plain_value(node: Any) -> Any:
    """A tree read without a hint (a field typed Any): tags decoded, lists kept lists."""
    kind = type(node)
    if kind is list:
        return [_plain_value(v) for v in node]
    if kind is dict:
        if len(node) == 1:
            tag, inner = next(iter(node.items()))
            if tag in _UNTAG:
                return _UNTAG[tag](inner)
            if tag == "$map":
                return {_hashable(_plain_value(k)): _plain_value(v) for k, v in inner}
            if tag == "$set":
                return frozenset(_hashable(_plain_value(v)) for v in inner)
        return {k: _plain_value(v) for k, v in node.items()}
    return node


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


@cache
def _decoder(hint: Any) -> Callable[[Any], Any]:
    """One reading function per type hint, built once (the hot path of replay and seek)."""
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return _plain_value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_decoder(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return lambda node: _enum(hint, _plain_value(node))
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union_decoder(args)
    if origin is typing.Literal:
        return _plain_value
    if origin in (tuple, list, set, frozenset) or hint in (tuple, list):
        return _sequence_decoder(origin or hint, args)
    if origin is dict or hint is dict:
        return _dict_decoder(*(args or (Any, Any)))
    if hint is float:
        return _float
    if hint is bool:
        return lambda node: bool(node) if type(node) is int else _plain_value(node)
    return _plain_value  # str, int, bool, datetime, Decimal, UUID …: the tag says which


def _float(node: Any) -> Any:
    value = _plain_value(node)
    return float(value) if type(value) is int else value


def _enum(kind: type[enum.Enum], value: Any) -> Any:
    try:
        return kind(value)
    except ValueError:  # a member this release dropped: the raw value, not a crash
        return value


def _union_decoder(args: tuple) -> Callable[[Any], Any]:
    members = [a for a in args if a is not type(None)]
    classes = [a for a in members if isinstance(a, type) and dataclasses.is_dataclass(a)]
    sequences = [a for a in members if typing.get_origin(a) in (tuple, list) or a in (tuple, list)]
    floats = float in members and int not in members
    bools = bool in members and int not in members

    def decode(node: Any) -> Any:
        if node is None:
            return None
        if type(node) is dict and classes and not is_tagged(node):
            best = max(classes, key=lambda c: len(node.keys() & set(_field_names(c) or ())))
            return _decoder(best)(node)
        if type(node) is list and sequences:
            return _decoder(sequences[0])(node)
        value = _plain_value(node)
        if type(value) is int:  # a value kept from an equal one of the other type (1 == 1.0)
            return float(value) if floats else bool(value) if bools else value
        return value

    return decode


def _sequence_decoder(container: Any, args: tuple) -> Callable[[Any], Any]:
    make = {list: list, set: frozenset, frozenset: frozenset}.get(container, tuple)
    if (len(args) == 2 and args[1] is Ellipsis) or len(args) == 1:
        item = _decoder(args[0])
        return lambda node: make(item(v) for v in _items(node))
    if args:  # a fixed tuple: one hint per place
        items = [_decoder(a) for a in args]
        return lambda node: tuple(d(v) for d, v in zip(items, _items(node), strict=False))
    return lambda node: make(_plain_value(v) for v in _items(node))


def _items(node: Any) -> list:
    if type(node) is dict and "$set" in node:
        return node["$set"]
    return node if type(node) is list else []


def _dict_decoder(key_hint: Any, value_hint: Any) -> Callable[[Any], Any]:
    key, value = _decoder(key_hint), _decoder(value_hint)

    def decode(node: Any) -> Any:
        if type(node) is not dict:
            return {}
        if is_tagged(node) and "$map" in node:
            return {_hashable(key(k)): value(v) for k, v in node["$map"]}
        return {key(k): value(v) for k, v in node.items()}

    return decode


def _dataclass_decoder(kind: type) -> Callable[[Any], Any]:
    plan: list[tuple[str, Callable[[Any], Any], bool, Any]] = []

    def build() -> None:  # lazily: a class may refer to itself or to one defined later
        hints = typing.get_type_hints(kind)
        for f in dataclasses.fields(kind):
            if not f.init:
                continue
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            hint = hints.get(f.name, Any)
            plan.append((f.name, _decoder(hint), has_default, hint))

    def decode(node: Any) -> Any:
        if not plan:
            build()
        if type(node) is not dict:
            node = {}
        kwargs = {}
        for name, read, has_default, hint in plan:
            if name in node:
                try:
                    kwargs[name] = read(node[name])
                    continue
                except (TypeError, ValueError, AttributeError):  # its type changed since
                    pass
            if not has_default:  # recorded before the field existed: an empty value
                kwargs[name] = empty(hint)
        return kind(**kwargs)

    return decode


def empty(hint: Any) -> Any:
    """The empty value of a type: what a frame recorded before a required field existed
    reads as (None where None is allowed)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if (origin is typing.Union or origin is types.UnionType) and type(None) in args:
        return None
    if origin in (typing.Union, types.UnionType):
        return empty(args[0])
    simple = {str: "", int: 0, float: 0.0, bool: False, tuple: (), list: [], dict: {}}
    if hint in simple:
        return simple[hint]
    if origin in (tuple, list, dict, set, frozenset):
        return {tuple: (), list: [], dict: {}, set: frozenset(), frozenset: frozenset()}[origin]
    if hint is datetime:
        return datetime(1970, 1, 1, tzinfo=timezone.utc)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decoder(hint)({})
    return None
