-- purpose: one server setting as this session sees it (doctor's connection sets none of its own), with its unit and where it comes from
SELECT setting, coalesce(unit, '') AS unit, source
FROM pg_settings
WHERE name = %(name)s
