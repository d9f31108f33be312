-- purpose: how many of these leases (job and lease token) the rescuer requeued: a stopped worker's lease must be rescued once it expired; an earlier rescue of the same job, under another token, does not count
SELECT count(*) FROM chaos.transitions AS t
JOIN unnest(%(ids)s::bigint[], %(tokens)s::bigint[]) AS l (job_id, token)
  ON t.job_id = l.job_id AND t.old_token = l.token
WHERE t.actor = 'queuetop-rescuer'
