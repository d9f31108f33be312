-- purpose: which of the given job ids another table holds (the dead-letter table, the queue): a plain read by id, no lock
SELECT {job_id}::text AS id
FROM unnest(%(ids)s::text[]) AS i(queuetop_given)
JOIN {table} AS t ON {job_id} = i.queuetop_given::{id_type}
