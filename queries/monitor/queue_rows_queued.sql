-- purpose: the queue rows sessions are queued on, by their physical address (a TID scan of those rows only; a partition's address means nothing in another, hence the tableoid)
SELECT t.tableoid, t.ctid, t.xmax::text AS xmax, {job_id} AS id, {state}::text AS status,
       {group}::text AS grp
FROM {table} AS t
WHERE t.ctid = ANY (ARRAY(SELECT q.tid FROM queued AS q))
  AND t.tableoid IN (SELECT q.relation FROM queued AS q WHERE q.tid = t.ctid)
