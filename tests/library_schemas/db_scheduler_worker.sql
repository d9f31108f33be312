-- db-scheduler's own statements on PostgreSQL, as its code builds them for the table
-- scheduled_tasks (db-scheduler/src/main/java/com/github/kagkarlsson/scheduler/ of
-- kagkarlsson/db-scheduler, commit d17d770, after v16.12.0; the same columns and values in
-- v14.1.0's JdbcTaskRepository); ? are its JDBC bindings, in its order. No unresolved tasks:
-- its UnresolvedFilter adds nothing. Its priority ordering is off (enablePriority is opt-in).
-- ==== insert (JdbcTaskRepository.getInsertQuery, createIfNotExists): name, instance, data, execution_time, picked = false, version = 1
insert into scheduled_tasks(task_name, task_instance, task_data, execution_time, picked, version) values(?, ?, ?, ?, ?, ? )
-- ==== get_due (DefaultJdbcCustomization.createSelectDueQuery, its default FETCH polling): picked = false, now; the limit is its polling strategy's (10 here)
select * from scheduled_tasks where picked = ? and execution_time <= ?  ORDER BY execution_time ASC  LIMIT 10
-- ==== pick (JdbcTaskRepository.pick, FETCH polling): true, scheduler name, time picked, false, name, instance, version
update scheduled_tasks set picked = ?, picked_by = ?, last_heartbeat = ?, version = version + 1 where picked = ? and task_name = ? and task_instance = ? and version = ?
-- ==== lock_and_fetch (PostgreSqlJdbcCustomization.lockAndFetchSingleStatement, LOCK_AND_FETCH polling): true, scheduler name, now, false, now; the limit is its polling strategy's (10 here)
 WITH locked_executions as (UPDATE scheduled_tasks st1 SET picked = ?, picked_by = ?, last_heartbeat = ?, version = version + 1  WHERE (st1.task_name, st1.task_instance) IN (SELECT st2.task_name, st2.task_instance FROM scheduled_tasks st2  WHERE picked = ? and execution_time <= ?  ORDER BY execution_time ASC  FOR UPDATE SKIP LOCKED  LIMIT 10) RETURNING st1.*)  SELECT * FROM locked_executions  ORDER BY execution_time ASC 
-- ==== update_heartbeat (JdbcTaskRepository.updateHeartbeat, every heartbeat interval while it runs): now, name, instance, version
update scheduled_tasks set last_heartbeat = ? where task_name = ? and task_instance = ? and version = ?
-- ==== dead_executions (JdbcTaskRepository.getDeadExecutions, from Scheduler.detectDeadExecutions): true, now - heartbeat interval x missed-heartbeats limit
select * from scheduled_tasks where picked = ? and last_heartbeat <= ?  order by last_heartbeat asc
-- ==== reschedule (ExecutionUpdate.updateSingle from JdbcTaskRepository.reschedule; ReviveDeadExecution, the failure handlers and SchedulerClient.reschedule all write through it): execution_time, picked, picked_by, last_success, last_failure, consecutive_failures, last_heartbeat, version + 1; name, instance, version
UPDATE scheduled_tasks SET execution_time = ?, picked = ?, picked_by = ?, last_success = ?, last_failure = ?, consecutive_failures = ?, last_heartbeat = ?, version = ? WHERE task_name = ? AND task_instance = ? AND version = ?
-- ==== remove (JdbcTaskRepository.remove: a one-time execution done): name, instance, version
delete from scheduled_tasks where task_name = ? and task_instance = ? and version = ?
-- ==== summary (JdbcTaskRepository.getScheduledExecutionsSummaryByTask, what its stats show): true, false, false
select task_name, count(*) as instance_count, sum(case when picked = ? then 1 else 0 end) as running_count, sum(case when picked = ? and coalesce(consecutive_failures, 0) > 0 then 1 else 0 end) as failing_count, sum(case when picked = ? and coalesce(consecutive_failures, 0) = 0 then 1 else 0 end) as scheduled_count, min(execution_time) as earliest_execution_time, max(last_success) as latest_last_success, max(last_failure) as latest_last_failure, max(consecutive_failures) as max_consecutive_failures from scheduled_tasks group by task_name
