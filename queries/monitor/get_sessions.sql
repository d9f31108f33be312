-- purpose: the sessions with the given pids (blockers), for the wait tree and guarded cancel/terminate
SELECT a.pid,
       a.backend_start,
       coalesce(a.application_name, '') AS application_name,
       coalesce(a.state, '') AS state,
       extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_s,
       coalesce(a.query, '') AS query
FROM pg_stat_activity AS a
WHERE a.pid = ANY (%(pids)s::int[])
