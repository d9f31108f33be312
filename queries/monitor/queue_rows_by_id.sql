-- purpose: queue rows a session still in the same transaction was seen queued on earlier, through the primary key: after its holder finished the row, the waiter locks it (and keeps that lock) before it moves on to the next one
SELECT t.tableoid, t.ctid, t.xmax::text AS xmax, {job_id} AS id, {state}::text AS status,
       {group}::text AS grp
FROM {table} AS t
WHERE {job_id} = ANY (%(seen_ids)s::text[]::{id_type}[])
