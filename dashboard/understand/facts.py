"""What the understanding reads of a table, before it weighs anything: plain records."""

from __future__ import annotations

from dataclasses import dataclass, field

from dashboard.models import TableName

TIME_TYPES = ("timestamp", "date")
TEXT_CATEGORY = "S"
NUMBER_CATEGORY = "N"
BOOL_CATEGORY = "B"
ENUM_CATEGORY = "E"
TIME_CATEGORY = "D"


@dataclass
class ColumnFacts:
    name: str
    type: str  # format_type: "text", "timestamp with time zone", "work.job_status"
    category: str  # pg_type.typcategory: S string, N number, B boolean, E enum, D date/time
    not_null: bool = False
    default: str | None = None  # the default's expression, as pg_get_expr prints it
    enum_labels: list[str] = field(default_factory=list)
    # pg_stats, where the server has analysed the table
    null_frac: float | None = None
    n_distinct: float | None = None
    common: dict[str, float] = field(default_factory=dict)  # value -> frequency
    histogram: list[str] = field(default_factory=list)

    @property
    def is_time(self) -> bool:
        return self.category == TIME_CATEGORY and self.type.startswith(TIME_TYPES)

    @property
    def is_text(self) -> bool:
        return self.category == TEXT_CATEGORY

    @property
    def is_integer(self) -> bool:
        return self.type in ("smallint", "integer", "bigint")

    @property
    def is_bool(self) -> bool:
        return self.category == BOOL_CATEGORY

    @property
    def is_enum(self) -> bool:
        return self.category == ENUM_CATEGORY


@dataclass
class TableFacts:
    """A table as the catalog and the statistics describe it (no row read)."""

    table: TableName
    oid: int
    rows_estimate: float  # pg_class.reltuples (-1: never analysed)
    columns: dict[str, ColumnFacts] = field(default_factory=dict)
    primary_key: tuple[str, ...] = ()
    unique_keys: list[tuple[str, ...]] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # pg_get_constraintdef of each CHECK
    partial_predicates: list[str] = field(default_factory=list)
    index_leads: list[str] = field(default_factory=list)  # each index's first column
    foreign_keys: dict[str, str] = field(default_factory=dict)  # column -> schema.table
    live_rows: float | None = None  # pg_stat_user_tables.n_live_tup
    constraints_read: bool = False
    statistics_read: bool = False
    notes: list[str] = field(default_factory=list)  # what could not be read, and why

    @property
    def rows(self) -> float | None:
        """The rows the server believes the table holds; None where it has no idea."""
        if self.live_rows:
            return self.live_rows
        return self.rows_estimate if self.rows_estimate >= 0 else None


@dataclass(frozen=True)
class Combination:
    """How many sampled rows have one state value (or none) and one shape of set columns:
    column -> `null`, `set`, `past`, `future` (times), `zero`, `positive` (counts),
    `true`, `false` (booleans)."""

    value: str | None
    shape: tuple[tuple[str, str], ...]
    rows: int

    def of(self, column: str) -> str | None:
        return dict(self.shape).get(column)


@dataclass
class Sample:
    """A bounded read of a table's rows, grouped by state value and column shape."""

    rows: int = 0
    combinations: list[Combination] = field(default_factory=list)
    state_column: str | None = None
    error: str | None = None  # why the sample could not be read (the understanding goes on)
    complete: bool = False  # every row of the table was read
    locked: bool = False  # another session holds the table locked exclusively

    def values(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.combinations:
            if c.value is not None:
                out[c.value] = out.get(c.value, 0) + c.rows
        return out

    def share(self, value: str | None, column: str, states: tuple[str, ...]) -> float:
        """The share of `value`'s sampled rows whose `column` is in one of `states`."""
        rows = [c for c in self.combinations if c.value == value]
        total = sum(c.rows for c in rows)
        if not total:
            return 0.0
        return sum(c.rows for c in rows if c.of(column) in states) / total
