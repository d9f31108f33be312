"""--ROLE-values and --ROLE-when: each role's state values, or its conditions, named on the
command line (`--running-values working`, `--running-when 'locked_at set'`).

A value named for a role leaves any other role it was in; what a flag names is kept as
given when `--table` is understood against the catalog.
"""

from __future__ import annotations

from dataclasses import replace

from dashboard.config import rules
from dashboard.config.parse import check_values_once, states_of_rules
from dashboard.errors import UserError
from dashboard.models import ROLES, QueueSpec


def split_values(role: str, text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(","))
    if not values or any(not v for v in values):
        raise UserError(
            f"--{role}-values {text!r}: name the values separated by commas, e.g. "
            f"--{role}-values a,b (a value holding a comma goes in a queue TOML)"
        )
    return values


def with_values(spec: QueueSpec, role_values: dict[str, str]) -> QueueSpec:
    if spec.rules:
        raise UserError(
            f"--{next(iter(role_values))}-values: the queue spec {spec.source} defines roles "
            "by conditions ([queue.roles]); use --ROLE-when, or a TOML with a state column"
        )
    states = dict(spec.states)
    named: dict[str, tuple[str, ...]] = {r: split_values(r, t) for r, t in role_values.items()}
    every = {v for vs in named.values() for v in vs}
    for role in ROLES:
        states[role] = named.get(role) or tuple(v for v in states.get(role, ()) if v not in every)
    check_values_once({r: named[r] for r in named}, "of the --ROLE-values flags")
    if not spec.understand:  # a spec's file or preset keeps ready and running mapped
        for role in ("ready", "running"):
            if not states[role]:
                flag = next(
                    f"--{r}-values" for r, vs in named.items() if set(vs) & set(spec.values(role))
                )
                raise UserError(
                    f"{flag} takes every {role} value of the queue spec {spec.source}; "
                    f"name the {role} values too (--{role}-values V)"
                )
    given = spec.given | {f"states.{r}" for r in named}
    spec = replace(spec, states=states, given=given)
    ready = spec.policy.ready_value
    if ready is not None and ready not in states["ready"]:  # the flags moved it
        spec = replace(spec, policy=replace(spec.policy, ready_value=None))
    return spec


def with_rules(spec: QueueSpec, role_rules: dict[str, str]) -> QueueSpec:
    if not spec.understand and not spec.rules:
        raise UserError(
            f"--{next(iter(role_rules))}-when: the queue spec {spec.source} has a state column; "
            "name its values with --ROLE-values instead"
        )
    given = [rules.rule_from_text(role, text) for role, text in role_rules.items()]
    by_role = {r.role: r for r in spec.rules}
    by_role.update({r.role: r for r in given})
    merged = rules.ordered(list(by_role.values()))
    return replace(
        spec,
        rules=merged,
        states=states_of_rules(merged),
        columns=replace(spec.columns, status=None),
        given=spec.given | {f"rules.{r.role}" for r in given},
        guessed_states=False,
    )


def apply(spec: QueueSpec, role_values: dict[str, str], role_rules: dict[str, str]) -> QueueSpec:
    role_values = {r: t for r, t in role_values.items() if t}
    role_rules = {r: t for r, t in role_rules.items() if t}
    if role_values and role_rules:
        raise UserError(
            "give a state column's values (--ROLE-values) or roles by conditions "
            "(--ROLE-when), not both"
        )
    if role_values:
        spec = with_values(spec, role_values)
    if role_rules:
        spec = with_rules(spec, role_rules)
    return spec
