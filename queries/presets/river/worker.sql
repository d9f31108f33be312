-- purpose: River's worker of a job: the last client id in attempted_by (River appends the claiming client's id and keeps the last 100)
t.attempted_by[array_upper(t.attempted_by, 1)]
