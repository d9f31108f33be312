-- purpose: the table's own count of finished jobs (done, and the terminal state failing jobs end in), read before and after a load run: the workers' own count falls short when one is killed before it reports
SELECT count(*) FILTER (WHERE t.{status} = ANY (%(done_values)s::{status_type}[]))::bigint AS done,
       count(*) FILTER (WHERE t.{status} = %(terminal)s::{status_type})::bigint AS dead
FROM {table} AS t
WHERE t.{status} = ANY (%(finished_values)s::{status_type}[])
