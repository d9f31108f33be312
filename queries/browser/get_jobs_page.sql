-- purpose: one page of the job browser: a role's jobs in id order from just past the last row shown (keyset, never OFFSET, so every page reads about its own rows through the primary key), each row as an action observes it
SELECT {job_id} AS sort_key,
       {job_id}::text AS id,
       {state}::text AS status,
       {attempts}::int AS attempts,
       {worker}::text AS worker,
       extract(epoch FROM now() - {created_at})::float8 AS age_s,
       left({last_error}::text, %(error_chars)s) AS last_error,
       {group}::text AS "group",
       {lease_token}::text AS lease_token,
       {lease_until} AS lease_until,
       {is_stale} AS expired,
       {requeue_refusal}::text AS requeue_refusal,
       {dead_letter_refusal}::text AS dead_letter_refusal,
       left({dead_reason}::text, %(error_chars)s) AS dead_reason
FROM {table} AS t
WHERE {rows}
  AND {after}
  AND {in_group}
  AND {matches}
ORDER BY {job_id} {direction}
LIMIT %(limit)s
