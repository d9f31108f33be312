-- JobRunr's own statements on PostgreSQL, as its Sql class sends them (core/src/main/java/org/
-- jobrunr/storage/sql/common/JobTable.java, JobStatsView.java, db/Sql.java, db/SqlStatement.java
-- and mapper/SqlAmountRequestMapper.java of jobrunr/jobrunr v8.7.1, commit 073e6ed; the same
-- text in v7.5.3): its :named parameters become ?, in their order; no table prefix.
-- ==== insert (JobTable.INSERT_STATEMENT: a new job): id, version, jobAsJson, jobSignature, state, createdAt, updatedAt, scheduledAt, recurringJobId
insert into jobrunr_jobs (id, version, jobAsJson, jobSignature, state, createdAt, updatedAt, scheduledAt, recurringJobId) values (?, ?, ?, ?, ?, ?, ?, ?, ?)
-- ==== claim (JobTable.selectJobsToProcess from getJobsToProcess, its OnboardNewWorkTask's ascOnUpdatedAt(free workers)): ENQUEUED, limit
select jobAsJson from jobrunr_jobs where state = ? ORDER BY updatedAt ASC LIMIT ? FOR UPDATE SKIP LOCKED
-- ==== save (JobTable.UPDATE_STATEMENT: every save of a job, its version checked): version, jobAsJson, state, updatedAt, scheduledAt, id, previous version
update jobrunr_jobs SET version = ?, jobAsJson = ?, state = ?, updatedAt =?, scheduledAt = ? WHERE id = ? and version = ?
-- ==== orphaned (JobTable.selectJobsByState(state, updatedBefore, ...) from ProcessOrphanedJobsTask): PROCESSING, now - poll interval x server timeout multiplicand, page size
select jobAsJson from jobrunr_jobs where state = ? AND updatedAt <= ? ORDER BY updatedAt ASC LIMIT ?
-- ==== stats (JobStatsView: what its dashboard counts)
select * from jobrunr_jobs_stats
