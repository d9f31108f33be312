// pg-boss 10 and 11 driven by tests/test_adapter_pgboss_versions.py, with the library's own API
// (both are CommonJS packages with no heartbeats, flows or findJobs: pgboss_app.mjs is for 12).
// Copied next to the npm-installed package (.cache/node/pg-boss-N/). DSN from the environment.
//   setup JSON   migrations, queues {name: options}, the side table, jobs {label: {queue, data,
//                options}}; prints {label: id}
//   work Q       a worker on queue Q, one job at a time, until SIGTERM/SIGKILL; a job sleeps
//                data.ms (data.first_ms on its first run), or throws data.fail
//   view JSON    {label: [queue, id]}: the library's own getJobById per job, its queued count per
//                queue (getQueueSize in 10, getQueueStats in 11); prints {jobs: {label: job}, sizes: {queue: n}}
// Every process runs with supervise: false: pg-boss's own supervisor would fail the orphan
// itself once its claim expires, which is pg-boss's rescue, not what the test looks at.
import * as mod from 'pg-boss';

const PgBoss = mod.PgBoss ?? mod.default;
const DSN = process.env.DSN;

function makeBoss() {
  const boss = new PgBoss({ connectionString: DSN, supervise: false, schedule: false });
  boss.on('error', (e) => console.error('pg-boss error:', e.message));
  return boss;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function work(boss, queue) {
  const db = boss.getDb();
  const record = (job, event) => db.executeSql(
    'INSERT INTO public.job_runs (job_id, queue, event, retry_count, pid) VALUES ($1, $2, $3, $4, $5)',
    [job.id, job.name, event, job.retryCount, process.pid]);
  await boss.work(queue, { pollingIntervalSeconds: 0.5, batchSize: 1, includeMetadata: true },
    async ([job]) => {
      await record(job, 'start');
      if (job.data.fail) throw new Error(job.data.fail);
      const first = job.retryCount === 0 && job.data.first_ms !== undefined;
      await sleep(first ? job.data.first_ms : job.data.ms ?? 0);
      await record(job, 'done');
    });
  process.on('SIGTERM', async () => { await boss.stop({ graceful: false }); process.exit(0); });
  console.log('working', queue, process.pid);
}

const [command, arg] = process.argv.slice(2);
const boss = makeBoss();
await boss.start();
if (command === 'setup') {
  const { queues, jobs = {} } = JSON.parse(arg);
  for (const [name, options] of Object.entries(queues)) await boss.createQueue(name, options);
  await boss.getDb().executeSql(`CREATE TABLE IF NOT EXISTS public.job_runs (
    job_id uuid NOT NULL, queue text NOT NULL, event text NOT NULL, retry_count int NOT NULL,
    pid int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  const ids = {};
  for (const [label, job] of Object.entries(jobs)) {
    ids[label] = await boss.send(job.queue, job.data ?? {}, job.options ?? {});
  }
  console.log(JSON.stringify(ids));
} else if (command === 'work') {
  await work(boss, arg);
} else if (command === 'view') {
  const wanted = JSON.parse(arg);
  const jobs = {};
  const sizes = {};
  for (const [label, [queue, id]] of Object.entries(wanted)) {
    jobs[label] = await boss.getJobById(queue, id);
    // 10: getQueueSize (created and retry jobs); 11: getQueueStats' queuedCount, the same
    sizes[queue] = boss.getQueueSize
      ? await boss.getQueueSize(queue)
      : (await boss.getQueueStats(queue)).queuedCount ?? 0;
  }
  console.log(JSON.stringify({ jobs, sizes }));
} else {
  console.error('unknown command', command);
  process.exit(2);
}
if (command !== 'work') await boss.stop({ graceful: false });
