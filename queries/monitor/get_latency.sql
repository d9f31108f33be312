-- purpose: how long the jobs of the latency window waited (those that started in it) and ran (those that finished in it), for the whole queue and per group: how many, their sum, p50/p95/p99 (percentile_cont: interpolated between the two nearest), how many at or below each bucket bound (cumulative), and how many of the finished ended failed or dead; each side read by a range on its own timestamp, an ordinary read
WITH started AS (
{started}
), finished AS (
{finished}
), durations AS (
    SELECT 'wait'::text AS kind, s.grp, s.seconds, false AS failed FROM started AS s
    UNION ALL
    SELECT 'run'::text, f.grp, f.seconds, f.failed FROM finished AS f
)
SELECT d.kind,
       d.grp AS "group",
       grouping(d.grp) = 1 AS whole,
       count(*)::bigint AS jobs,
       count(d.seconds)::bigint AS measured,
       coalesce(sum(d.seconds), 0)::float8 AS sum_s,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]::float8[])
           WITHIN GROUP (ORDER BY d.seconds) AS percentiles,
       {buckets} AS buckets,
       count(*) FILTER (WHERE d.failed)::bigint AS failed
FROM durations AS d
GROUP BY GROUPING SETS ((d.kind, d.grp), (d.kind))
