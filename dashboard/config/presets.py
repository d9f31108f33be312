"""Where a spec comes from: a preset (adapter), a TOML file, or flags over either."""

from __future__ import annotations

import sys
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from dashboard.config import role_flags, state_values, thresholds
from dashboard.config.parse import (
    check_dead_letter,
    parse_duration,
    parse_table_name,
    spec_from_dict,
)
from dashboard.errors import UserError
from dashboard.models import OPTIONAL_COLUMNS, QueueSpec, TableName
from dashboard.understand.spec import GUESSES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_PRESET = "demo"
# What `--table` assumes of a text state column where no row holds a role's value yet.
GENERIC_STATES = GUESSES


def _preset_folder():
    return resources.files("dashboard").joinpath("presets")


def preset_names() -> list[str]:
    return sorted(p.name[:-5] for p in _preset_folder().iterdir() if p.name.endswith(".toml"))


def _preset_text(name: str) -> str:
    if name not in preset_names():
        raise UserError(f"unknown preset {name!r}; choose one of: {', '.join(preset_names())}")
    return _preset_folder().joinpath(f"{name}.toml").read_text("utf-8")


def load_preset(name: str) -> QueueSpec:
    return spec_from_dict(tomllib.loads(_preset_text(name)), f"preset {name}")


def preset_about(name: str) -> dict[str, Any]:
    """The `[about]` table of a preset: library, version tested, liveness, recovery."""
    about = tomllib.loads(_preset_text(name)).get("about", {})
    return about if isinstance(about, dict) else {}


def load_file(path: str | Path) -> QueueSpec:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"queue file {path} does not exist; pass an existing TOML file") from None
    except IsADirectoryError:
        raise UserError(f"queue file {path} is a directory; pass a TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read queue file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"bad TOML in {path}: {exc}; fix the syntax and retry") from None
    return spec_from_dict(data, str(path))


def build_spec(
    queue_file: str | None = None,
    preset: str | None = None,
    table: str | None = None,
    id_column: str | list[str] | None = None,
    status_column: str | None = None,
    stale_after: str | None = None,
    columns: dict[str, str] | None = None,
    ready_value: str | None = None,
    dead_value: str | None = None,
    role_values: dict[str, str] | None = None,
    role_rules: dict[str, str] | None = None,
) -> QueueSpec:
    """The spec from --queue or --preset (else the demo preset), then flag overrides.

    `columns` maps spec keys (started_at, worker, lease_until, ...) to column names given
    as flags; `role_values` roles to comma-separated state values (--running-values) and
    `role_rules` roles to conditions (--running-when). With `--table` alone the table is
    understood against the catalog (validate): what a flag names is kept as given.
    `ready_value` and `dead_value` name the values requeue and dead-letter write.
    """
    if queue_file and preset:
        raise UserError("give either --queue FILE or --preset NAME, not both")
    if queue_file:
        spec = load_file(queue_file)
    elif preset:
        spec = load_preset(preset)
    elif table:
        spec = QueueSpec(
            table=parse_table_name(table),
            states=dict(GENERIC_STATES),
            source="flags",
            guessed_states=True,
            understand=True,
        )
    else:
        spec = load_preset(DEFAULT_PRESET)
    if table:
        picked = parse_table_name(table)
        pattern = spec.table_pattern
        if pattern is not None and picked.schema is None:  # `--table q_orders`: the preset's schema
            picked = TableName(picked.name, pattern.schema)
        spec = replace(spec, table=picked)
    given = {k: v for k, v in (columns or {}).items() if v}
    unknown = set(given) - set(OPTIONAL_COLUMNS)
    if unknown:
        raise UserError(f"unknown column key(s) {', '.join(sorted(unknown))}")
    if id_column:
        key = [id_column] if isinstance(id_column, str) else list(id_column)
        if len(set(key)) != len(key):
            raise UserError("--id-column names the same column twice; name each key column once")
        given["id"] = key[0] if len(key) == 1 else tuple(key)
    if status_column:
        given["status"] = status_column
    if given:
        spec = replace(
            spec,
            columns=replace(spec.columns, **given),
            given=spec.given | set(given),
        )
    spec = role_flags.apply(spec, role_values or {}, role_rules or {})
    if stale_after:
        seconds = parse_duration(stale_after, "--stale-after")
        spec = replace(spec, stale_after_override=(seconds, "--stale-after"))
    if ready_value:
        spec = state_values.with_ready_value(spec, ready_value)
    if dead_value:
        spec = state_values.with_dead_value(spec, dead_value)
    check_dead_letter(spec)
    return thresholds.apply(spec)
