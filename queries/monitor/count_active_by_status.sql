-- purpose: exact row count per status for the given (active) values only; cheap with partial indexes
SELECT t.{status}::text AS status, count(*)::bigint AS n
FROM {table} AS t
WHERE t.{status} = ANY (%(values)s::{status_type}[])
GROUP BY 1
