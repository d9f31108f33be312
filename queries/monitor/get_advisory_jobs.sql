-- purpose: which jobs the advisory locks in the locks view stand for: the rows whose advisory key is one of the held keys (through the primary key where the key is the id, as for Que); an ordinary read
SELECT {advisory_lock} AS advisory_key, {job_id} AS job
FROM {table} AS t
WHERE {advisory_lock} = ANY (%(keys)s::bigint[])
