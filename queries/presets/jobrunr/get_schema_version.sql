-- purpose: JobRunr's own schema version: the number of the last migration its DatabaseCreator ran, as jobrunr_migrations records its script (v016__... for 8.x, v015__... for 6.x and 7.x; its "TABLE LOCKER" row is no migration)
SELECT max(substring(m.script FROM '^v([0-9]+)__')::int)::text
FROM {schema}.jobrunr_migrations AS m
