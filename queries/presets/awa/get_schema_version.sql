-- purpose: awa's schema version, as its own migrations table keeps it (awa.schema_version: 40 for awa 0.6.5 to 0.6.9, 11 for 0.5.7), with the storage engine awa itself reads as active (awa.active_storage_engine(), since its migration 10): "40, canonical engine" or "40, queue_storage engine"; a storage transition still draining canonical jobs (mixed_transition) and a queue storage kept in a schema of its own (its transition state's details) are named too, so that the preset refuses them in one line
SELECT max(v.version)::text || ', ' || {schema}.active_storage_engine() || ' engine'
       || coalesce((SELECT CASE WHEN s.state = 'mixed_transition' THEN ' in mixed_transition state'
                                ELSE '' END
                           || CASE WHEN {schema}.active_storage_engine() = 'queue_storage'
                                   THEN coalesce(' in schema '
                                        || nullif(nullif(s.details ->> 'schema', ''), 'awa'), '')
                                   ELSE '' END
                    FROM {schema}.storage_transition_state AS s
                    WHERE s.singleton), '')
FROM {schema}.schema_version AS v
