-- purpose: the monitoring connection's statement timeout for the next section (each section has its own)
SELECT set_config('statement_timeout', %(ms)s, false)
