"""Doctor's upkeep checks: vacuum keeping up with a high-churn table, room for HOT updates,
what holds the xmin horizon back, and idle transactions left to linger forever.
Statistics, settings and catalog only."""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

import queries
from dashboard.doctor.findings import Finding, Limits
from dashboard.models import QueueSpec
from dashboard.render.report import age

IDLE_TIMEOUT = "5min"
FILLFACTOR = 80


def read_health(conn: psycopg.Connection, oid: int) -> dict:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(queries.load("doctor/get_table_health"), {"oid": oid}).fetchone()


def _options(health: dict) -> dict[str, str]:
    return dict(o.split("=", 1) for o in health["reloptions"] if "=" in o)


def _table(spec: QueueSpec) -> sql.Composable:
    return sql.Identifier(*spec.table.parts())


def vacuum_target(live: float) -> int:
    """Dead rows worth a vacuum on a queue table: about 1 % of it, at least 1000 (the
    churn is in its few active rows, not spread over the finished ones)."""
    return max(1000, int(round(live * 0.01, -3)))


def vacuum_findings(
    conn: psycopg.Connection, spec: QueueSpec, health: dict, limits: Limits
) -> list[Finding]:
    """Dead rows piling up, vacuum off, or autovacuum waiting for a share of a big table."""
    options = _options(health)
    live, dead = float(health["live_rows"] or 0), float(health["dead_rows"] or 0)
    churn = float((health["updated"] or 0) + (health["deleted"] or 0))
    scale = float(options.get("autovacuum_vacuum_scale_factor", health["vacuum_scale_factor"]))
    threshold = float(options.get("autovacuum_vacuum_threshold", health["vacuum_threshold"]))
    trigger = threshold + scale * live
    target = vacuum_target(live)
    last = "never" if health["last_vacuum"] is None else f"{age(health['last_vacuum_age_s'])} ago"
    why, fix = [], []
    table = _table(spec)
    if not health["autovacuum_on"]:
        why.append("autovacuum is off on this server.")
        fix.append("ALTER SYSTEM SET autovacuum = on;\nSELECT pg_reload_conf();")
    if options.get("autovacuum_enabled", "true").lower() in ("false", "off", "0", "no"):
        why.append(f"autovacuum is disabled for {spec.table} (autovacuum_enabled = false).")
        fix.append(
            sql.SQL("ALTER TABLE {} RESET (autovacuum_enabled);").format(table).as_string(conn)
        )
    if dead >= limits.dead_rows and dead >= limits.dead_share * max(live, 1.0):
        why.append(
            f"{int(dead):,} dead rows against {int(live):,} live "
            f"({dead / max(live, 1.0):.0%}); last vacuum: {last}. Dead rows slow "
            "every claim and count that walks past them."
        )
        fix.append(sql.SQL("VACUUM (ANALYZE) {};").format(table).as_string(conn))
    if churn >= max(limits.churn_rows, live) and trigger > 2 * target:
        why.append(
            f"High churn ({int(churn):,} updates and deletes since the statistics "
            f"were reset, {int(live):,} live rows): autovacuum waits for "
            f"{int(trigger):,} dead rows (threshold {threshold:g} + scale factor "
            f"{scale:g} x live rows). A queue's churn is in its active rows: vacuum "
            f"after a fixed ~{target:,} instead. Last vacuum: {last}."
        )
        fix.append(
            sql.SQL(
                "ALTER TABLE {} SET (autovacuum_vacuum_scale_factor = 0, "
                "autovacuum_vacuum_threshold = {}, autovacuum_analyze_scale_factor = 0, "
                "autovacuum_analyze_threshold = {});"
            )
            .format(table, sql.Literal(target), sql.Literal(target))
            .as_string(conn)
        )
    if not why:
        return []
    return [
        Finding(
            "vacuum", f"vacuum is not keeping up with {spec.table}", "\n".join(why), "\n".join(fix)
        )
    ]


def fillfactor_findings(
    conn: psycopg.Connection, spec: QueueSpec, health: dict, limits: Limits
) -> list[Finding]:
    """Few HOT updates on full pages: each update writes every index and leaves the page."""
    updated, hot = float(health["updated"] or 0), float(health["hot_updated"] or 0)
    fillfactor = int(_options(health).get("fillfactor", 100))
    if updated < limits.churn_rows or fillfactor < 100 or hot >= limits.hot_share * updated:
        return []
    return [
        Finding(
            "fillfactor",
            f"{hot / updated:.0%} of {int(updated):,} updates were HOT (fillfactor {fillfactor})",
            "A queue updates each row several times (claim, heartbeat, finish). An update that "
            "changes no indexed column can stay on its page (HOT: no index entry written, the "
            "old version pruned without vacuum) only if the page has room; with fillfactor "
            "100 the pages are full. Lease renewals and heartbeats gain most; keep the columns "
            "they change out of indexes where you can.",
            sql.SQL(
                "ALTER TABLE {} SET (fillfactor = {});\n"
                "-- applies to pages written from now on; VACUUM FULL or pg_repack rewrites "
                "the existing ones (VACUUM FULL locks the table ACCESS EXCLUSIVE)"
            )
            .format(_table(spec), sql.Literal(FILLFACTOR))
            .as_string(conn),
        )
    ]


def horizon_findings(conn: psycopg.Connection, spec: QueueSpec, limits: Limits) -> list[Finding]:
    """Sessions, replication slots and prepared transactions older than the limit: vacuum
    keeps every row version any of them might still see."""
    with conn.cursor(row_factory=dict_row) as cur:
        holders = cur.execute(
            queries.load("doctor/get_horizon_holders"), {"min_age_s": limits.horizon_age_s}
        ).fetchall()
    if not holders:
        return []
    lines, fixes = [], []
    for h in holders:
        what = {
            "session": f"session pid {h['name']} ({h['application_name'] or 'no name'}, "
            f"{h['state']})",
            "replication slot": f"replication slot {h['name']} ({h['state']})",
            "prepared transaction": f"prepared transaction {h['name']}",
        }[h["kind"]]
        old = f", open {age(h['age_s'])}" if h["age_s"] is not None else ""
        waits_on = ", ".join(str(pid) for pid in h["blocked_by"] or ())
        if waits_on:
            # a waiter is a victim: it moves on (and lets the horizon go) when its blocker
            # ends, so ending it fixes nothing
            what += f", waiting on pid {waits_on}: it ends when that does, no fix of its own"
        lines.append(f"{what}{old}, {h['xid_age']:,} transactions behind")
        if waits_on:
            continue
        if h["kind"] == "session":
            stmt = sql.SQL(
                "SELECT pg_terminate_backend({});  -- or pg_cancel_backend: "
                "check what it runs first"
            ).format(sql.Literal(int(h["name"])))
        elif h["kind"] == "replication slot":
            stmt = sql.SQL(
                "SELECT pg_drop_replication_slot({});  -- only if nothing consumes it"
            ).format(sql.Literal(h["name"]))
        else:
            stmt = sql.SQL("ROLLBACK PREPARED {};").format(sql.Literal(h["name"]))
        fixes.append(stmt.as_string(conn))
    return [
        Finding(
            "xmin_horizon",
            f"{len(holders)} holding back the xmin horizon",
            "Vacuum cannot remove any row version these may still see, so the queue's dead "
            "rows pile up for as long as they stay:\n" + "\n".join(lines),
            "\n".join(fixes),
        )
    ]


def idle_timeout_findings(conn: psycopg.Connection, spec: QueueSpec) -> list[Finding]:
    """idle_in_transaction_session_timeout as this database and role set it (doctor's own
    connection sets none)."""
    setting = conn.execute(
        queries.load("doctor/get_setting"), {"name": "idle_in_transaction_session_timeout"}
    ).fetchone()
    if setting is None or setting[0] != "0":
        return []
    return [
        Finding(
            "idle_timeout",
            "idle_in_transaction_session_timeout is unset (0)",
            "A worker that stops inside a transaction (a bug, a debugger, a lost network) keeps "
            "its row locks and holds back vacuum until someone kills it. A timeout ends such "
            "sessions on its own; set it above the longest pause a healthy transaction makes.",
            sql.SQL(
                "ALTER DATABASE {} SET idle_in_transaction_session_timeout = {};\n"
                "-- new sessions get it; or ALTER ROLE <workers' role> SET … for the workers "
                "only"
            )
            .format(sql.Identifier(conn.info.dbname), sql.Literal(IDLE_TIMEOUT))
            .as_string(conn),
        )
    ]
