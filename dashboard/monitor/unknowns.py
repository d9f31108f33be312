"""What a snapshot could not read or map, each a whole sentence that says what to do.

Never a false all-clear: rows in a state no role claims, a mapping only guessed, a section
of the table that could not be read. The screen shows these whole, `snapshot` prints them,
and `check` answers UNKNOWN over them rather than OK.
"""

from __future__ import annotations

from dashboard.models import NO_STATE, QueueSpec, SectionState
from dashboard.understand.words import role_of_word

TABLE_SECTIONS = ("counts", "scan", "stale", "finished")


def unmapped(spec: QueueSpec, by_status: dict[str, int]) -> dict[str, int]:
    """Rows per state value that no role claims."""
    return {v: n for v, n in by_status.items() if n and spec.role_of(v) is None}


def _flag(role: str, spec: QueueSpec) -> str:
    return f"--{role}-when" if spec.rules else f"--{role}-values"


def unmapped_line(spec: QueueSpec, value: str, rows: int) -> str:
    plural = "row" if rows == 1 else "rows"
    have, meet = ("has", "meets") if rows == 1 else ("have", "meet")
    jobs = "its job is" if rows == 1 else "their jobs are"
    if spec.rules:
        conditions = "; ".join(f"{r.role}: {r.label}" for r in spec.rules)
        return (
            f"{rows} {plural} of {spec.table} {meet} no role's conditions ({conditions}): "
            f"{jobs} in no count; describe them with --ROLE-when 'CONDITIONS' "
            "(e.g. --running-when 'locked_at set') or [queue.roles] in a queue TOML"
        )
    column = spec.columns.status
    if value == NO_STATE:
        return (
            f"{rows} {plural} of {spec.table} {have} no state ({column} is NULL): {jobs} "
            "in no count; give the NULL rows a role in a queue TOML, or fix the rows"
        )
    hint = role_of_word(value)
    example = (
        f"{_flag(hint, spec)} {value}"
        if hint
        else f"--running-values {value} (or the --ROLE-values of its role)"
    )
    return (
        f"{rows} {plural} of {spec.table} {have} {column} = {value!r}, which no role claims: "
        f"{jobs} in no count and no stale lease; map it with {example}"
    )


def section_lines(sections: tuple[SectionState, ...]) -> list[str]:
    """Table sections whose last read failed: their numbers are missing or old."""
    lines = []
    for s in sections:
        if s.name in TABLE_SECTIONS and s.error:
            old = "never read" if s.age_s is None else f"last read {s.age_s:.0f}s ago"
            lines.append(f"{s.name} could not be read ({old}): {s.error}")
    return lines


def doubts_now(spec: QueueSpec, by_status: dict[str, int]) -> list[str]:
    """The understanding's doubts that bear on this moment: a weak guess about a value no
    row holds now misleads no count (a CHECK's `concluida` on a fresh queue), and is said
    again as soon as a row holds it; every other doubt always."""
    if spec.understood is None:
        return []
    values = [v for vs in spec.states.values() for v in vs]
    out = []
    for doubt in spec.understood.doubts:
        named = [v for v in values if f"= {v!r} is taken for" in doubt]
        if named and not any(by_status.get(v) for v in named):
            continue
        out.append(doubt)
    return out


def lines(
    spec: QueueSpec,
    unmapped_rows: dict[str, int],
    sections: tuple[SectionState, ...],
    by_status: dict[str, int] | None = None,
) -> tuple[str, ...]:
    """Every line of what could not be read or mapped; `by_status` (rows per raw value) lets
    a doubt about a value no row holds wait until one does (read errors are said anyway)."""
    out = [unmapped_line(spec, v, n) for v, n in sorted(unmapped_rows.items(), key=_order)]
    if spec.understood is not None:
        out += (
            doubts_now(spec, by_status) if by_status is not None else list(spec.understood.doubts)
        )
    out += section_lines(sections)
    if not spec.can_find_stale():
        out.append(
            f"stale leases unknown: the spec of {spec.table} names no lease expiry, claim "
            "time, heartbeat or workers table; pass --started-at-column or "
            "--lease-until-column"
        )
    return tuple(out)


def _order(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])
