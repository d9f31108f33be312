-- purpose: the Hangfire server running a job: the ServerId of its Processing state's data (ServerName in older releases), the id its server announced in the server table
CASE WHEN t.statename = 'Processing'
     THEN (SELECT coalesce(s.data::jsonb ->> 'ServerId', s.data::jsonb ->> 'ServerName')
           FROM {schema}."state" AS s
           WHERE s.id = t.stateid)
END
