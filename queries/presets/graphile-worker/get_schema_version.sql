-- purpose: graphile-worker's own schema version: the last migration it applied (19 for 0.17, 20 for 0.18)
SELECT max(m.id)::text FROM {schema}.migrations AS m
