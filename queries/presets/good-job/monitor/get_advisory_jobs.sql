-- purpose: which good_job jobs the advisory locks in the locks view stand for: the unfinished rows (good_job's partial indexes serve them) whose md5 key is one of the held keys; an ordinary read
SELECT {advisory_lock} AS advisory_key, {job_id}::text AS job
FROM {table} AS t
WHERE t.finished_at IS NULL
  AND {advisory_lock} = ANY (%(keys)s::bigint[])
