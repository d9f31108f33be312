-- purpose: the trigger function: an insert, a state or token change, or a delete of a job, logged with who did it
CREATE OR REPLACE FUNCTION chaos.log_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO chaos.transitions (job_id, new_status, new_token, worker)
        VALUES (NEW.id, NEW.status, NEW.lease_token, NEW.worker);
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO chaos.transitions (job_id, old_status, old_token, worker)
        VALUES (OLD.id, OLD.status, OLD.lease_token, OLD.worker);
    ELSIF NEW.status IS DISTINCT FROM OLD.status
       OR NEW.lease_token IS DISTINCT FROM OLD.lease_token THEN
        INSERT INTO chaos.transitions (job_id, old_status, new_status, old_token, new_token, worker)
        VALUES (NEW.id, OLD.status, NEW.status, OLD.lease_token, NEW.lease_token, NEW.worker);
    END IF;
    RETURN NULL;
END
$$
