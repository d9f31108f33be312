-- purpose: age in seconds of the oldest ready job
SELECT extract(epoch FROM now() - min({created_at}))::float8 AS age_s
FROM {table} AS t
WHERE t.{status} = ANY (%(values)s::{status_type}[])
