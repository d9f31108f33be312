-- purpose: log every row change of the demo queue into chaos.transitions
CREATE OR REPLACE TRIGGER log_transition
AFTER INSERT OR UPDATE OR DELETE ON queuetop_demo.jobs
FOR EACH ROW EXECUTE FUNCTION chaos.log_transition()
