"""A snapshot read from a file held to its own types, field by field.

The codec reads recordings tolerantly (recordings outlive releases), so a field typed `str`
may come back a list, and a count a string, from a file someone edited. Every screen and
report would then fail somewhere of its own. Here each field of the rebuilt Snapshot is
checked against its type hint once, and a frame that does not conform is refused with the
field that does not (the reader says which frame, and goes on). Roles this release does not
know are dropped from `roles` (each role has its place and style on the screen).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import replace
from datetime import date, datetime, time, timedelta
from functools import cache
from typing import Any

from dashboard.models import ROLES, Snapshot

Check = Callable[[Any], str | None]  # None: conforms; else where it does not


def snapshot(snap: Any) -> Snapshot:
    """`snap` checked (ValueError naming the first field that is not of its type), with
    `roles` this release knows."""
    problem = _checker(Snapshot)(snap)
    if problem:
        raise ValueError(f"field {problem}")
    known = tuple(r for r in snap.roles if r in ROLES)
    return snap if known == snap.roles else replace(snap, roles=known)


def _ok(value: Any) -> str | None:
    return None


def _instance(*kinds: type) -> Check:
    def check(value: Any) -> str | None:
        if type(value) is bool and bool not in kinds:
            return f"is of type bool, not {kinds[0].__name__}"
        return None if isinstance(value, kinds) else f"is of type {type(value).__name__}"

    return check


@cache
def _checker(hint: Any) -> Check:
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return _ok
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass_checker(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        members = [_checker(a) for a in args]
        return lambda value: None if any(m(value) is None for m in members) else "fits no type"
    if origin is typing.Literal:
        return _ok
    if origin in (tuple, list, set, frozenset) or hint in (tuple, list):
        return _sequence_checker(origin or hint, args)
    if origin is dict or hint is dict:
        return _dict_checker(*(args or (Any, Any)))
    simple = {
        str: _instance(str),
        int: _instance(int),
        float: _instance(float, int),
        bool: _instance(bool),
        datetime: _instance(datetime),
        date: _instance(date),
        time: _instance(time),
        timedelta: _instance(timedelta),
    }
    return simple.get(hint, _ok)


def _sequence_checker(container: Any, args: tuple) -> Check:
    kinds = (tuple, list, set, frozenset)
    if args and not (len(args) == 2 and args[1] is Ellipsis) and len(args) != 1:
        items = [_checker(a) for a in args]  # a fixed tuple: one hint per place

        def fixed(value: Any) -> str | None:
            if not isinstance(value, kinds):
                return f"is of type {type(value).__name__}"
            for i, (check, v) in enumerate(zip(items, value, strict=False)):
                if (problem := check(v)) is not None:
                    return f"[{i}] {problem}"
            return None

        return fixed
    item = _checker(args[0]) if args else _ok

    def each(value: Any) -> str | None:
        if not isinstance(value, kinds):
            return f"is of type {type(value).__name__}"
        for i, v in enumerate(value):
            if (problem := item(v)) is not None:
                return f"[{i}] {problem}"
        return None

    return each


def _dict_checker(key_hint: Any, value_hint: Any) -> Check:
    key, value = _checker(key_hint), _checker(value_hint)

    def check(node: Any) -> str | None:
        if not isinstance(node, dict):
            return f"is of type {type(node).__name__}"
        for k, v in node.items():
            if (problem := key(k)) is not None:
                return f"key {problem}"
            if (problem := value(v)) is not None:
                return f"[{k!r}] {problem}"[:200]
        return None

    return check


def _dataclass_checker(kind: type) -> Check:
    plan: list[tuple[str, Check]] = []

    def check(value: Any) -> str | None:
        if not plan:
            hints = typing.get_type_hints(kind)
            plan.extend(
                (f.name, _checker(hints.get(f.name, Any))) for f in dataclasses.fields(kind)
            )
        if not isinstance(value, kind):
            return f"is of type {type(value).__name__}, not {kind.__name__}"
        for name, field_check in plan:
            if (problem := field_check(getattr(value, name))) is not None:
                return f"{name} {problem}"
        return None

    return check


def audit_record(record: Any) -> str | None:
    """None where an audit record read from a file is of its types, else where not."""
    from dashboard.audit.trail import AuditRecord

    return _checker(AuditRecord)(record)
