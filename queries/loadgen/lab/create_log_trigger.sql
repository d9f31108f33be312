-- purpose: log every insert and state or token change of the lab's queue into its transitions table
CREATE TRIGGER log_transition
AFTER INSERT OR UPDATE ON queuetop_lab.jobs
FOR EACH ROW EXECUTE FUNCTION queuetop_lab.log_transition()
