-- purpose: the idle transaction's row: one ready job, locked and then held with nothing running
SELECT id FROM queuetop_demo.jobs WHERE status = 'ready' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
