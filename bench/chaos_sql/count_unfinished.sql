-- purpose: jobs not finished yet (ready or running): recovery is over when this reaches 0
SELECT count(*) FROM queuetop_demo.jobs WHERE status IN ('ready', 'running')
