-- purpose: the trigger function that logs each change of a lab job's state or lease token
CREATE FUNCTION queuetop_lab.log_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO queuetop_lab.transitions (job_id, new_status, new_token)
        VALUES (NEW.id, NEW.status, NEW.lease_token);
    ELSIF NEW.status IS DISTINCT FROM OLD.status
       OR NEW.lease_token IS DISTINCT FROM OLD.lease_token THEN
        INSERT INTO queuetop_lab.transitions (job_id, old_status, new_status, old_token, new_token)
        VALUES (NEW.id, OLD.status, NEW.status, OLD.lease_token, NEW.lease_token);
    END IF;
    RETURN NULL;
END
$$
