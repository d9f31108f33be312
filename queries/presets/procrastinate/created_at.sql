-- purpose: when a waiting procrastinate job was deferred (its 'deferred' event; the jobs table has no such column), for the oldest-ready age; NULL for the other states, so a count never reads their events
CASE WHEN t.status = 'todo'
     THEN (SELECT min(e.at) FROM procrastinate_events AS e
           WHERE e.job_id = {job_id} AND e.type = 'deferred')
END
