-- purpose: the ground truth: one row per change of a job's state or lease token, written by a trigger in the changing transaction itself (a rolled-back change leaves no row)
CREATE TABLE IF NOT EXISTS chaos.transitions (
    seq         bigserial   PRIMARY KEY,
    job_id      bigint      NOT NULL,
    old_status  text,
    new_status  text,
    old_token   bigint,
    new_token   bigint,
    worker      text,
    actor       text        NOT NULL DEFAULT current_setting('application_name'),
    at          timestamptz NOT NULL DEFAULT clock_timestamp()
)
