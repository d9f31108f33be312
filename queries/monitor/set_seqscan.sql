-- purpose: the monitoring session only, around the latency section's EXPLAINs (nothing runs meanwhile): with sequential scans priced out the planner takes an index wherever one can serve the window's range, so "no index serves it" does not depend on the table's size today
SELECT set_config('enable_seqscan', %(setting)s, false)
