-- purpose: the jobs a worker session holds right now with its claim committed and no transaction open (a stopped worker's job must expire and be rescued; one stopped mid-transaction keeps its row locked and the rescuer rightly skips it)
SELECT j.id, j.lease_token
FROM queuetop_demo.jobs AS j
WHERE j.status = 'running' AND j.worker = %(worker)s
  AND EXISTS (
      SELECT FROM pg_stat_activity AS a
      WHERE a.application_name = %(worker)s AND a.state = 'idle'
  )
