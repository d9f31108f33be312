-- purpose: doctor's own session only: with sequential scans priced out, EXPLAIN picks an index wherever one can serve a statement, so "no index serves it" does not depend on the table's size today
SELECT set_config('enable_seqscan', %(setting)s, false)
