"""The flags and the TOML that describe a spec without any understanding: what discovery
and `--table` print so that a mapping guessed today is written down tomorrow."""

from __future__ import annotations

import shlex
from dataclasses import replace

from dashboard.config.rules import PRECEDENCE, toml_string, toml_value
from dashboard.models import OPTIONAL_COLUMNS, ROLES, QueueSpec


def pinned(spec: QueueSpec) -> QueueSpec:
    """`spec` with its understanding's pins filled in (unchanged when nobody guessed)."""
    if spec.understood is None:
        return spec
    return replace(
        spec,
        understood=replace(spec.understood, pin_flags=pin_flags(spec), pin_toml=pin_toml(spec)),
    )


def pin_flags(spec: QueueSpec) -> tuple[str, ...]:
    """The flags that describe `spec` without any understanding."""
    flags = ["--table", str(spec.table)]
    for column in spec.columns.key:
        flags += ["--id-column", column]
    if spec.rules:
        for rule in spec.rules:
            flags += [f"--{rule.role}-when", rule.label if rule.conditions else "every other row"]
    elif isinstance(spec.columns.status, str):
        flags += ["--status-column", spec.columns.status]
        for role in ROLES:
            if spec.values(role):
                flags += [f"--{role}-values", ",".join(spec.values(role))]
    for key in OPTIONAL_COLUMNS:
        column = spec.columns.real(key)
        if column:
            flags += [f"--{key.replace('_', '-')}-column", column]
    return tuple(flags)


def command(words: tuple[str, ...], verb: str = "watch") -> str:
    return " ".join(shlex.quote(w) for w in ("queuetop", verb, *words))


def pin_toml(spec: QueueSpec) -> str:
    """A queue TOML describing `spec` (what `--queue FILE` reads)."""
    s = toml_string
    lines = ["[queue]", f"table = {s(str(spec.table))}"]
    key = spec.columns.key
    lines.append(f"id = {s(key[0])}" if len(key) == 1 else f"id = [{', '.join(s(k) for k in key)}]")
    if not spec.rules and isinstance(spec.columns.status, str):
        lines.append(f"status = {s(spec.columns.status)}")
    for k in OPTIONAL_COLUMNS:
        column = spec.columns.real(k)
        if column:
            lines.append(f"{k} = {s(column)}")
    if spec.rules:
        lines += [
            "",
            "[queue.roles]               # a row takes the first that holds: "
            + ", ".join(PRECEDENCE),
        ]
        for rule in spec.rules:
            conds = ", ".join(f"{s(c.column)} = {toml_value(c)}" for c in rule.conditions)
            lines.append(f"{rule.role} = {{ {conds} }}")
    else:
        lines += ["", "[queue.states]"]
        for role in ROLES:
            values = spec.values(role)
            if values or role in ("ready", "running"):
                lines.append(f"{role} = [{', '.join(s(v) for v in values)}]")
    lines += ["", "[queue.policy]", f"stale_after = {s(f'{spec.policy.stale_after_s:g} seconds')}"]
    if spec.policy.ready_value:
        lines.append(f"ready_value = {s(spec.policy.ready_value)}")
    dead = spec.policy.dead_letter
    if dead is not None and dead.kind == "status" and dead.status is not None:
        lines.append(f"dead_letter = {s('status:' + dead.status)}")
    lines.append('worker_session = "none"')
    return "\n".join(lines) + "\n"
