"""The queue spec: presets (adapters), TOML files, flag overrides, and catalog validation.

spec = config.build_spec(preset="procrastinate")   # or queue_file=..., table=...
spec = config.validate(conn, spec)                  # schema-qualified, with column types
"""

from dashboard.config.catalog import (
    USUAL_NAMES,
    detect_columns,
    resolve_table,
    state_warnings,
    unmatched_values,
    validate,
)
from dashboard.config.parse import (
    POLICY_KEYS,
    QUEUE_KEYS,
    check_dead_letter,
    latency_window,
    parse_duration,
    parse_table_name,
    spec_from_dict,
)
from dashboard.config.presets import (
    DEFAULT_PRESET,
    GENERIC_STATES,
    build_spec,
    load_file,
    load_preset,
    preset_about,
    preset_names,
)

__all__ = [
    "DEFAULT_PRESET",
    "GENERIC_STATES",
    "POLICY_KEYS",
    "QUEUE_KEYS",
    "USUAL_NAMES",
    "build_spec",
    "check_dead_letter",
    "detect_columns",
    "latency_window",
    "load_file",
    "load_preset",
    "parse_duration",
    "parse_table_name",
    "preset_about",
    "preset_names",
    "resolve_table",
    "spec_from_dict",
    "state_warnings",
    "unmatched_values",
    "validate",
]
