-- purpose: how many times the rescuer requeued these jobs (a stopped worker's job must be rescued once its lease expired)
SELECT count(*) FROM chaos.transitions
WHERE job_id = ANY (%(ids)s::bigint[]) AND actor = 'queuetop-rescuer'
