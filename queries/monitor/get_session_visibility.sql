-- purpose: whether this role sees every session in full (pg_read_all_stats, part of pg_monitor) and whether a session is hidden from it right now (other roles' rows show no state, wait or query)
SELECT current_user::text AS role,
       pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS sees_all,
       EXISTS (SELECT 1
               FROM pg_stat_activity AS a
               WHERE a.datid IS NOT NULL
                 AND a.query = '<insufficient privilege>') AS some_hidden
