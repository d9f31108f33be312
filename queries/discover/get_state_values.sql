-- purpose: the distinct values of a candidate state column among at most 10,000 rows of the table (an ordinary bounded read, for tables the planner has no statistics of)
SELECT DISTINCT s.v
FROM (SELECT t.{column}::text AS v FROM {table} AS t LIMIT 10000) AS s
WHERE s.v IS NOT NULL
LIMIT 50
