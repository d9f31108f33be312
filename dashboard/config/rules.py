"""Roles by conditions over columns, from TOML (`[queue.roles]`) or flags (`--running-when`).

    running = { locked_at = "set" }                 # TOML
    --running-when 'locked_at set'                  # the same as a flag

A condition is a column and a test: `set`, `null`, `before now`, `after now`, `above N`,
`below N`, `= VALUE`, `<> VALUE`, `in (A, B)`, `not in (A, B)`. A role's conditions must all
hold. A row takes the first role whose conditions hold, always in the order of PRECEDENCE
(finished roles first), so that a TOML file, the flags and the understanding of a table
agree whatever order they were written in. No SQL text: columns are identifiers, values
parameters, the tests a fixed set.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dashboard.errors import UserError
from dashboard.models import ROLES, Condition, RoleRule

# A row takes the first role whose conditions hold, in this order.
PRECEDENCE: tuple[str, ...] = ("dead", "failed", "done", "running", "scheduled", "ready")
WORDS = {
    "set": "set",
    "is set": "set",
    "not null": "set",
    "is not null": "set",
    "null": "null",
    "is null": "null",
    "unset": "null",
    "before now": "past",
    "past": "past",
    "after now": "future",
    "future": "future",
}
HOW = (
    "a condition is COLUMN set | null | before now | after now | above N | below N | "
    "= VALUE | <> VALUE | in (A, B) | not in (A, B)"
)


def scalar_text(value: Any) -> str:
    """A TOML or flag value as PostgreSQL prints it (true, 3, 'pending' -> pending)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UserError(f"bad value {value!r}: use a finite number")
        return repr(value)
    if isinstance(value, (int, str)):
        return str(value)
    raise UserError(f"bad value {value!r}: use a string, a number or true/false")


def _bound(role: str, column: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            number = float(str(value))
        except ValueError:
            raise UserError(
                f"bad condition for {role}: {column} needs a number, got {value!r}"
            ) from None
    else:
        number = float(value)
    if not math.isfinite(number):
        raise UserError(f"bad condition for {role}: {column} needs a finite number")
    return scalar_text(int(number) if number.is_integer() else number)


def condition_from_toml(role: str, column: str, value: Any) -> Condition:
    """`locked_at = "set"`, `picked = true`, `status = ["a", "b"]`, `read_ct = { above = 0 }`."""
    if not isinstance(column, str) or not column:
        raise UserError(f"bad condition for {role}: a column name is needed")
    if isinstance(value, str) and value.strip().lower() in WORDS:
        return Condition(column, WORDS[value.strip().lower()])
    if isinstance(value, list):
        if not value:
            raise UserError(f"bad condition for {role}: {column} = [] matches nothing")
        return Condition(column, "equals", tuple(scalar_text(v) for v in value))
    if isinstance(value, dict):
        if len(value) != 1:
            raise UserError(
                f"bad condition for {role}: {column} takes one of {{ above = N }}, "
                "{ below = N }, { equals = V }, { not = V }"
            )
        ((key, bound),) = value.items()
        if key in ("above", "below"):
            return Condition(column, key, (_bound(role, column, bound),))
        if key in ("equals", "not"):
            values = bound if isinstance(bound, list) else [bound]
            if not values:
                raise UserError(f"bad condition for {role}: {column} {key} [] is empty")
            return Condition(column, key, tuple(scalar_text(v) for v in values))
        raise UserError(f"bad condition for {role}: unknown test {key!r} on {column}; {HOW}")
    return Condition(column, "equals", (scalar_text(value),))


def rules_from_toml(raw: Any, source: str) -> tuple[RoleRule, ...]:
    """`[queue.roles]`: role -> { column = condition, ... }, in PRECEDENCE order."""
    if not isinstance(raw, dict) or not raw:
        raise UserError(
            f"bad queue spec {source}: [queue.roles] must map roles to conditions, e.g. "
            'running = { locked_at = "set" }'
        )
    unknown = set(raw) - set(ROLES)
    if unknown:
        raise UserError(
            f"bad queue spec {source}: unknown role(s) {', '.join(sorted(unknown))} in "
            f"[queue.roles]; roles are {', '.join(ROLES)}"
        )
    rules = []
    for role in PRECEDENCE:
        if role not in raw:
            continue
        conditions = raw[role]
        if not isinstance(conditions, dict):
            raise UserError(
                f"bad queue spec {source}: [queue.roles] {role} must be a table of "
                'column = condition, e.g. { locked_at = "set" }'
            )
        try:
            parsed = tuple(condition_from_toml(role, c, v) for c, v in conditions.items())
        except UserError as exc:
            raise UserError(f"bad queue spec {source}: {exc}") from None
        rules.append(RoleRule(role, parsed))
    return check_rules(tuple(rules), source)


def check_rules(rules: tuple[RoleRule, ...], source: str) -> tuple[RoleRule, ...]:
    if not any(r.role == "ready" for r in rules) or not any(r.role == "running" for r in rules):
        raise UserError(
            f"bad queue spec {source}: roles by conditions need at least ready and running "
            '(e.g. running = { locked_at = "set" }, ready = { locked_at = "null" })'
        )
    return rules


# --- the flag form: "locked_at set, failed_at null" ----------------------------------------

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_CONDITION = re.compile(
    rf"^\s*(?P<column>{_IDENT})\s*(?P<rest>.*?)\s*$",
    re.DOTALL,
)


def _unquote(ident: str) -> str:
    if ident.startswith('"'):
        return ident[1:-1].replace('""', '"')
    return ident


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside parentheses and quotes."""
    parts, depth, quote, buf = [], 0, "", []
    for ch in text:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(buf))
            buf = []
            continue
        buf.append(ch)
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()]


def _value(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if not text:
        raise ValueError("a value is missing")
    return text


def condition_from_text(role: str, text: str) -> Condition:
    """One condition as `describe()` writes it (and a person types it)."""
    match = _CONDITION.match(text)
    if not match:
        raise UserError(f"--{role}-when: cannot read {text!r}; {HOW}")
    column, rest = _unquote(match.group("column")), match.group("rest")
    low = rest.lower()
    try:
        if low in WORDS:
            return Condition(column, WORDS[low])
        for word in ("above", ">", "below", "<"):
            if low.startswith(word + " ") or (word in "<>" and low.startswith(word)):
                if word == "<" and low.startswith("<>"):
                    break
                test = "above" if word in ("above", ">") else "below"
                return Condition(column, test, (_bound(role, column, rest[len(word) :].strip()),))
        for word, test in (("not in", "not"), ("in", "equals")):
            if low.startswith(word + " ") or low.startswith(word + "("):
                inner = rest[len(word) :].strip()
                if not (inner.startswith("(") and inner.endswith(")")):
                    raise ValueError("a list is written (A, B)")
                values = tuple(_value(v) for v in _split_top(inner[1:-1]))
                if not values:
                    raise ValueError("the list is empty")
                return Condition(column, test, values)
        for word, test in (("<>", "not"), ("!=", "not"), ("=", "equals")):
            if low.startswith(word):
                return Condition(column, test, (_value(rest[len(word) :]),))
    except ValueError as exc:
        raise UserError(f"--{role}-when: {text!r}: {exc}; {HOW}") from None
    raise UserError(f"--{role}-when: cannot read {text!r}; {HOW}")


def rule_from_text(role: str, text: str) -> RoleRule:
    """`--running-when 'locked_at set, failed_at null'`; `every other row` takes the rest."""
    if text.strip().lower() in ("every other row", "else", "*"):
        return RoleRule(role, ())
    return RoleRule(role, tuple(condition_from_text(role, part) for part in _split_top(text)))


def ordered(rules: list[RoleRule]) -> tuple[RoleRule, ...]:
    """Rules in PRECEDENCE order (one per role)."""
    by_role = {r.role: r for r in rules}
    return tuple(by_role[role] for role in PRECEDENCE if role in by_role)


def toml_value(condition: Condition) -> str:
    """The TOML right-hand side of a condition (for the TOML that pins an understanding)."""
    words = {"set": '"set"', "null": '"null"', "past": '"before now"', "future": '"after now"'}
    if condition.test in words:
        return words[condition.test]
    if condition.test in ("above", "below"):
        return f"{{ {condition.test} = {condition.values[0]} }}"
    items = ", ".join(toml_string(v) for v in condition.values)
    if condition.test == "equals" and any(v.lower() in WORDS for v in condition.values):
        return f"{{ equals = [{items}] }}"  # a value that reads as a test word
    if condition.test == "not":
        return f"{{ not = [{items}] }}"
    return f"[{items}]" if len(condition.values) > 1 else items


def toml_string(value: str) -> str:
    """A TOML basic string (escapes as TOML reads them)."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
