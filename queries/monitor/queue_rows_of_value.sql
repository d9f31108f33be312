-- purpose: the rows of one active state value that carry an xmax, through that value's index (one branch per value), read only while a session with a running transaction holds a lock on the queue table (a row lock needs one)
SELECT t.tableoid, t.ctid, t.xmax::text AS xmax, {job_id} AS id, {state}::text AS status,
       {group}::text AS grp
FROM {table} AS t
WHERE {value_rows}
  AND t.xmax <> '0'::xid
  AND EXISTS (SELECT 1 FROM l JOIN xacts AS x ON x.pid = l.pid
              WHERE l.locktype = 'relation' AND l.granted
                AND l.relation IN (SELECT oid FROM queue))
