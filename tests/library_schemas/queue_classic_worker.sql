-- queue_classic 4.x's own statements, from lib/queue_classic/queue.rb and lib/queue_classic.rb
-- of QueueClassic/queue_classic (commit 97f5217), its table name and $1 as they are.
-- ==== lock (QC::Queue#lock): the next due job of queue $1, locked by this session's pid
WITH selected_job AS (
  SELECT id
  FROM queue_classic_jobs
  WHERE locked_at IS NULL
    AND q_name = $1
    AND scheduled_at <= now()
  LIMIT 1
  FOR NO KEY UPDATE SKIP LOCKED
)
UPDATE queue_classic_jobs
SET
  locked_at = now(),
  locked_by = pg_backend_pid()
FROM selected_job
WHERE queue_classic_jobs.id = selected_job.id
RETURNING *
-- ==== enqueue (QC::Queue#enqueue)
INSERT INTO queue_classic_jobs (q_name, method, args) VALUES ($1, $2, $3) RETURNING id
-- ==== delete (QC::Queue#delete): a job done
DELETE FROM queue_classic_jobs WHERE id = $1
-- ==== unlock_jobs_of_dead_workers (QC.unlock_jobs_of_dead_workers, run by every worker's start)
UPDATE queue_classic_jobs SET locked_at = NULL, locked_by = NULL WHERE locked_by NOT IN (SELECT pid FROM pg_stat_activity);
