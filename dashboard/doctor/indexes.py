"""Doctor's index checks: which active rows no index serves, and a lease column the stale
scan cannot find through an index. Asked of the planner (EXPLAIN), never of the table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

import queries
from dashboard.doctor.findings import Finding
from dashboard.models import QueueSpec
from dashboard.monitor.plan import EXPLAIN_PARAMS, explain_statement
from dashboard.queue_sql.parts import queue_parts, table_query

# The roles a poll counts exactly on every refresh, with what each index is for.
PURPOSE = {
    "ready": "the claim (ready rows in due order), the ready count and the oldest ready age",
    "scheduled": "the scheduled count and the rows coming due",
    "running": "the running count and the stale-lease scan (by lease expiry)",
}
MAX_NAME = 63  # NAMEDATALEN - 1


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str | None, ...]  # None: an expression
    predicate: str | None
    valid: bool
    definition: str


def read_indexes(conn: psycopg.Connection, oid: int) -> list[Index]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(queries.load("doctor/get_indexes"), {"oid": oid}).fetchall()
    return [
        Index(r["name"], tuple(r["columns"]), r["predicate"], r["valid"], r["definition"])
        for r in rows
    ]


def _walk(node: dict[str, Any]):
    yield node
    for child in node.get("Plans", ()):
        yield from _walk(child)


def served(
    conn: psycopg.Connection,
    spec: QueueSpec,
    parts: dict[str, sql.Composable],
    value: str,
    role: str,
    indexes: dict[str, Index],
) -> bool:
    """Whether an index can find this value's rows. Sequential scans are priced out on
    doctor's session, so the planner takes an index wherever one applies, even on a small
    table today; an index read with no condition on a full index (a walk of the primary
    key, filtering every row) does not count."""
    plan = conn.execute(
        explain_statement(spec, parts, value, role), {"v": value, **EXPLAIN_PARAMS}
    ).fetchone()[0][0]["Plan"]
    nodes = list(_walk(plan))
    if any(
        n.get("Node Type") == "Seq Scan" and n.get("Relation Name") == spec.table.name
        for n in nodes
    ):
        return False
    reads = [n for n in nodes if n.get("Index Name") in indexes]
    return bool(reads) and all(
        "Index Cond" in n or indexes[n["Index Name"]].predicate for n in reads
    )


def _columns_for(spec: QueueSpec, role: str) -> tuple[list[str], list[str]]:
    """The index's key columns (the order its reads want) and the columns it carries
    (INCLUDE) so that a poll's count of the role reads the index alone."""
    cols = spec.columns
    group = [cols.real("group")]
    if role == "ready":
        due = cols.real("scheduled_at") or cols.real("created_at")
        keys = [due, cols.id]
        carried = group + [cols.real("scheduled_at"), cols.real("created_at")]
    elif role == "scheduled":
        keys = [cols.real("scheduled_at") or cols.id]
        carried = group
    else:
        keys = [lease_column(spec) or cols.real("started_at") or cols.id]
        carried = group + [
            cols.real("lease_until"),
            cols.real("heartbeat"),
            cols.real("started_at"),
            cols.id,
        ]
        if spec.liveness == "workers":
            carried += [cols.real("worker"), cols.real("created_at")]
    keys = list(dict.fromkeys(k for k in keys if k))
    carried = list(dict.fromkeys(c for c in carried if c and c not in keys))
    return keys, carried


def lease_column(spec: QueueSpec) -> str | None:
    """The column a running job's expiry is read from first: its lease, else its heartbeat."""
    return spec.columns.real("lease_until") or spec.columns.real("heartbeat")


def _free_name(conn: psycopg.Connection, schema: str | None, base: str) -> str:
    base = base[: MAX_NAME - 2]
    name, n = base, 1
    while conn.execute(
        queries.load("doctor/get_relation_exists"), {"schema": schema or "public", "name": name}
    ).fetchone()[0]:
        n += 1
        name = f"{base}{n}"
    return name


def create_index(
    conn: psycopg.Connection,
    spec: QueueSpec,
    role: str,
    suffix: str,
    columns: list[str],
    carried: list[str] = (),
) -> str:
    """CREATE INDEX CONCURRENTLY … [INCLUDE …] WHERE state IN (the role's values), as text."""
    status, values = spec.columns.status, spec.values(role)
    assert isinstance(status, str)
    if len(values) == 1:
        predicate = sql.SQL("{} = {}").format(sql.Identifier(status), sql.Literal(values[0]))
    else:
        predicate = sql.SQL("{} IN ({})").format(
            sql.Identifier(status), sql.SQL(", ").join(map(sql.Literal, values))
        )
    name = _free_name(conn, spec.table.schema, f"{spec.table.name}_{suffix}_idx")
    include = (
        sql.SQL(" INCLUDE ({})").format(sql.SQL(", ").join(map(sql.Identifier, carried)))
        if carried
        else sql.SQL("")
    )
    stmt = sql.SQL("CREATE INDEX CONCURRENTLY {name} ON {table} ({columns}){include} WHERE {pred};")
    return stmt.format(
        name=sql.Identifier(name),
        table=sql.Identifier(*spec.table.parts()),
        columns=sql.SQL(", ").join(map(sql.Identifier, columns)),
        include=include,
        pred=predicate,
    ).as_string(conn)


def index_findings(
    conn: psycopg.Connection, spec: QueueSpec, indexes: list[Index]
) -> tuple[list[Finding], list[str]]:
    """One finding per active role whose rows no index finds, and one for a lease column no
    index holds (the stale scan then reads every running row)."""
    if not isinstance(spec.columns.status, str):
        return [], [
            f"the state of {spec.table} is derived by the {spec.adapter} adapter's SQL: "
            "no index check (its counts are one pass over the table, paced by the "
            "monitor's budget)"
        ]
    if table_query(spec):
        return [], [
            f"the jobs of {spec.table} are the rows of the {spec.adapter} adapter's query over "
            "its library's tables: no index check (its counts are one pass over that query, "
            "paced by the monitor's budget)"
        ]
    usable = {i.name: i for i in indexes if i.valid}
    parts = queue_parts(spec)
    conn.execute(queries.load("doctor/set_seqscan"), {"setting": "off"})
    try:
        unserved = {
            role: [v for v in spec.values(role) if not served(conn, spec, parts, v, role, usable)]
            for role in PURPOSE
            if spec.values(role)
        }
    finally:
        conn.execute(queries.load("doctor/set_seqscan"), {"setting": "on"})
    findings = []
    for role, missing in unserved.items():
        if not missing:
            continue
        columns, carried = _columns_for(spec, role)
        findings.append(
            Finding(
                "index",
                f"no index finds the {role} rows ({', '.join(missing)})",
                f"Every poll counts the {role} rows exactly; with no index to find them it reads "
                f"all of {spec.table}{', and so does every claim' if role == 'ready' else ''}.\n"
                f"A partial index on the {role} value{'s' if len(spec.values(role)) > 1 else ''} "
                f"serves {PURPOSE[role]}; it stays as small as the active rows, and it carries "
                "what the count reads, so where the pages are all-visible the count never "
                "touches the table.",
                create_index(conn, spec, role, role, columns, carried),
            )
        )
    lease = lease_column(spec)
    if (
        lease
        and spec.values("running")
        and not unserved.get("running")
        and not any(lease in i.columns for i in usable.values())
    ):
        findings.append(
            Finding(
                "lease_index",
                f"no index holds the lease column {lease}",
                f"The stale-lease scan (and any rescuer) looks for running jobs whose {lease} "
                f"has passed; an index finds the running rows but not by {lease}, so the scan "
                "reads every running row.",
                create_index(conn, spec, "running", "lease", [lease]),
            )
        )
    return findings, []
