-- purpose: enqueue N ready jobs in one statement, with a payload of the chosen size where the table has a payload column
INSERT INTO {table} ({status}{payload_col})
SELECT %(ready)s::{status_type}{payload_value}
FROM generate_series(1, %(n)s)
