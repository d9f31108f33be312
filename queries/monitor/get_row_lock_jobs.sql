-- purpose: which jobs the row locks of the locks view are on: their rows by physical address (ctid), read through a TID scan, nothing else
SELECT t.ctid::text AS tid, t.{id}::text AS id
FROM {table} AS t
WHERE t.ctid = ANY (%(tids)s::tid[])
