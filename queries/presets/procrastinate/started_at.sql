-- purpose: when a running procrastinate job was claimed (its last 'started' event; the jobs table has no such column); NULL for the other states
CASE WHEN t.status = 'doing'
     THEN (SELECT max(e.at) FROM procrastinate_events AS e
           WHERE e.job_id = {job_id} AND e.type = 'started')
END
