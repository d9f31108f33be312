-- purpose: the lab's ground truth: one row per change of a job's state or lease token, written by a trigger in the changing transaction (a rolled-back change leaves none)
CREATE TABLE queuetop_lab.transitions (
    seq         bigserial   PRIMARY KEY,
    job_id      bigint      NOT NULL,
    old_status  text,
    new_status  text,
    old_token   bigint,
    new_token   bigint
)
