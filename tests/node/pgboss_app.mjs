// pg-boss driven by the adapter tests (tests/test_adapter_pgboss.py), with the library's own API.
// Copied next to the npm-installed package (.cache/node/pg-boss/) so that `import 'pg-boss'`
// resolves. DSN from the environment (a postgresql:// URL). Commands:
//   setup JSON   migrations, queues {name: options}, the side table, then jobs {label: {queue,
//                data, options}}, flows [{ref, name, data, options, dependsOn}] (boss.flow) and
//                cancel [label] (boss.cancel); prints {label or ref: id}
//   send JSON    jobs {label: {queue, data, options}}; prints {label: id}
//   work Q,Q N   a worker on queues Q (N jobs at once per queue) until SIGTERM/SIGKILL; a job
//                sleeps data.ms (data.first_ms on its first run), or throws data.fail
//   view Q,Q     the library's own counts (its getQueueStats statement) and jobs (findJobs)
//   cancel Q ID  boss.cancel
// Every process runs with supervise: false: a supervising instance would fail the orphan
// itself once its heartbeat stops, which is pg-boss's own rescue, not what the tests look at.
import { PgBoss } from 'pg-boss';
import * as plans from 'pg-boss/dist/plans.js';

const DSN = process.env.DSN;
const SCHEMA = 'pgboss';

function makeBoss() {
  const boss = new PgBoss({ connectionString: DSN, supervise: false, schedule: false,
                            registerInstance: false });
  boss.on('error', (e) => console.error('pg-boss error:', e.message));
  return boss;
}

async function sendAll(boss, jobs) {
  const ids = {};
  for (const [label, job] of Object.entries(jobs)) {
    ids[label] = await boss.send(job.queue, job.data ?? {}, job.options ?? {});
  }
  return ids;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function work(boss, queues, concurrency) {
  const db = boss.getDb();
  const record = (job, event) => db.executeSql(
    'INSERT INTO public.job_runs (job_id, queue, event, retry_count, pid) VALUES ($1, $2, $3, $4, $5)',
    [job.id, job.name, event, job.retryCount, process.pid]);
  for (const queue of queues) {
    await boss.work(queue, { pollingIntervalSeconds: 0.5, localConcurrency: concurrency,
                             heartbeatRefreshSeconds: 2, includeMetadata: true }, async ([job]) => {
      await record(job, 'start');
      if (job.data.fail) throw new Error(job.data.fail);
      const first = job.retryCount === 0 && job.data.first_ms !== undefined;
      await sleep(first ? job.data.first_ms : job.data.ms ?? 0);
      await record(job, 'done');
    });
  }
  const stop = async () => { await boss.stop({ graceful: false }); process.exit(0); };
  process.on('SIGTERM', stop);
  console.log('working', queues.join(','), process.pid);
}

async function view(boss, queues) {
  const db = boss.getDb();
  const stats = plans.getQueueStats(SCHEMA, 'job', queues);
  const { rows } = await db.executeSql(stats.text, [queues]);
  const jobs = [];
  for (const queue of queues) jobs.push(...await boss.findJobs(queue, { limit: 10000 }));
  return { stats: rows, jobs };
}

const [command, arg, extra] = process.argv.slice(2);
const boss = makeBoss();
await boss.start();
if (command === 'setup') {
  const { queues, jobs = {}, flows = [], cancel = [] } = JSON.parse(arg);
  for (const [name, options] of Object.entries(queues)) await boss.createQueue(name, options);
  await boss.getDb().executeSql(`CREATE TABLE IF NOT EXISTS public.job_runs (
    job_id uuid NOT NULL, queue text NOT NULL, event text NOT NULL, retry_count int NOT NULL,
    pid int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  const ids = await sendAll(boss, jobs);
  if (flows.length) Object.assign(ids, await boss.flow(flows));
  for (const label of cancel) await boss.cancel(jobs[label].queue, ids[label]);
  console.log(JSON.stringify(ids));
} else if (command === 'send') {
  console.log(JSON.stringify(await sendAll(boss, JSON.parse(arg))));
} else if (command === 'work') {
  await work(boss, arg.split(','), Number(extra ?? 2));
} else if (command === 'view') {
  console.log(JSON.stringify(await view(boss, arg.split(','))));
} else if (command === 'cancel') {
  console.log(JSON.stringify(await boss.cancel(arg, extra)));
} else {
  console.error('unknown command', command);
  process.exit(2);
}
if (command !== 'work') await boss.stop({ graceful: false });
