// graphile-worker driven by the adapter tests (tests/test_adapter_graphile_worker.py), with the
// library's own API. Copied next to the npm-installed package (.cache/node/graphile-worker/)
// so that `import 'graphile-worker'` resolves. DSN from the environment. Commands:
//   setup JSON       runMigrations, the side table, then jobs; prints {label: id}
//   add JSON         jobs {label: {task, payload, options}} through WorkerUtils.addJob
//                    (options.runIn: seconds from now, as runAt); prints {label: id}
//   reschedule JSON  WorkerUtils.rescheduleJobs([id], {runAt: now + runIn s})
//   once TASKS       runOnce: every job of TASKS now due, then exit
//   work TASKS N     run(): a pool of N on TASKS until SIGTERM/SIGKILL; with NAME_SESSIONS=1
//                    every session of the pool is named 'graphile_worker:' + its pool id (the
//                    opt-in that lets queuetop tell a dead pool's jobs)
//   view             the library's own view of the jobs (graphile_worker.jobs, is_available)
// A job sleeps payload.ms (payload.first_ms on its first attempt), or throws payload.fail.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { makeWorkerUtils, run, runMigrations, runOnce } from 'graphile-worker';

const DSN = process.env.DSN;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function taskList(tasks, side) {
  const record = (job, event) => side.query(
    'INSERT INTO public.job_runs (job_id, task, event, attempts, pid) VALUES ($1, $2, $3, $4, $5)',
    [job.id, job.task_identifier, event, job.attempts, process.pid]);
  const handler = async (payload, helpers) => {
    await record(helpers.job, 'start');
    if (payload.fail) throw new Error(payload.fail);
    const first = helpers.job.attempts === 1 && payload.first_ms !== undefined;
    await sleep(first ? payload.first_ms : payload.ms ?? 0);
    await record(helpers.job, 'done');
  };
  return Object.fromEntries(tasks.map((task) => [task, handler]));
}

// The opt-in documented in the preset: every client of the pool the worker runs on carries
// application_name 'graphile_worker:<pool id>', the value graphile-worker writes to locked_by.
// The id is known once the pool exists (pool:create); a client is renamed when acquired,
// before the query it was acquired for (clients opened earlier, e.g. for migrations, too).
function namedPool(events) {
  const pool = new pg.Pool({ connectionString: DSN, max: 10 });
  let name = null;
  events.on('pool:create', ({ workerPool }) => {
    name = `graphile_worker:${workerPool.id}`;
    pool.options.application_name = name;
  });
  pool.on('acquire', (client) => {
    if (name && client.appName !== name) {
      client.appName = name;
      client.query('SELECT set_config($1, $2, false)', ['application_name', name]).catch(() => {});
    }
  });
  return pool;
}

async function addAll(utils, jobs) {
  const ids = {};
  for (const [label, { task, payload = {}, options = {} }] of Object.entries(jobs)) {
    const { runIn, ...spec } = options;
    if (runIn !== undefined) spec.runAt = new Date(Date.now() + runIn * 1000);
    ids[label] = (await utils.addJob(task, payload, spec)).id;
  }
  return ids;
}

const [command, arg, extra] = process.argv.slice(2);
if (command === 'work' || command === 'once') {
  const side = new pg.Pool({ connectionString: DSN, max: 2, application_name: 'job-handler' });
  const tasks = taskList(arg.split(','), side);
  if (command === 'once') {
    await runOnce({ connectionString: DSN, taskList: tasks });
    await side.end();
    console.log(JSON.stringify(arg));
  } else {
    const events = new EventEmitter();
    const pgPool = process.env.NAME_SESSIONS === '1'
      ? namedPool(events) : new pg.Pool({ connectionString: DSN, max: 10 });
    pgPool.on('error', (e) => console.error('pool error', e.message));
    pgPool.on('connect', (client) => client.on('error', (e) => console.error('client', e.message)));
    const runner = await run({ pgPool, events, concurrency: Number(extra ?? 2), pollInterval: 500,
                               taskList: tasks });
    console.log('working', arg, process.pid);
    await runner.promise;
    await side.end();
  }
} else {
  if (command === 'setup') await runMigrations({ connectionString: DSN });
  const utils = await makeWorkerUtils({ connectionString: DSN });
  if (command === 'setup') {
    await utils.withPgClient((client) => client.query(`CREATE TABLE public.job_runs (
      job_id bigint NOT NULL, task text NOT NULL, event text NOT NULL, attempts int NOT NULL,
      pid int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`));
    console.log(JSON.stringify(await addAll(utils, JSON.parse(arg))));
  } else if (command === 'add') {
    console.log(JSON.stringify(await addAll(utils, JSON.parse(arg))));
  } else if (command === 'reschedule') {
    const { id, runIn } = JSON.parse(arg);
    const done = await utils.rescheduleJobs([id], { runAt: new Date(Date.now() + runIn * 1000) });
    console.log(JSON.stringify(done.map((job) => job.id)));
  } else if (command === 'view') {
    const { rows } = await utils.withPgClient((client) => client.query(
      `SELECT j.*, p.is_available FROM graphile_worker.jobs AS j
       JOIN graphile_worker._private_jobs AS p USING (id) ORDER BY j.id`));
    console.log(JSON.stringify(rows));
  } else {
    console.error('unknown command', command);
    process.exit(2);
  }
  await utils.release();
}
