-- purpose: running jobs by whether their lease has run out (stale) or not yet (a load run that ended moments ago, or a live worker, holds them)
SELECT count(*) FILTER (WHERE coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) < now())::bigint AS stale,
       count(*) FILTER (WHERE coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) >= now())::bigint AS leased
FROM {table} AS t
WHERE t.{status} = %(running)s::{status_type}
