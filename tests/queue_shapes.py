"""Queue tables as teams build them by hand, each staged with its ground truth.

Pure ground truth for tests that queuetop understands a table it was not told about (from
the catalog, statistics, a sample of rows and the workers' statements): queuetop is not
imported here. Each shape stages the same counts (COUNTS) for the roles it has; running is
two fresh claims around one stuck claim (three hours old), which is `stuck`."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

# Distinct counts, so that a role mapped to another shows in the counts. (Ready is 6 and
# dead 7, not 3 and 2: those equal running and scheduled, which would hide a swap.)
READY, SCHEDULED, RUNNING, DONE, FAILED, DEAD = 6, 2, 3, 4, 1, 7
COUNTS = {
    "ready": READY,
    "scheduled": SCHEDULED,
    "running": RUNNING,  # written row by row: two fresh, the stuck one between them
    "done": DONE,
    "failed": FAILED,
    "dead": DEAD,
}
ROLES = tuple(COUNTS)
UNMAPPED_ROWS = 5  # UNMAPPABLE's rows in a state no role claims


@dataclass(frozen=True)
class Shape:
    name: str  # short id for pytest ids
    table: str  # as queuetop prints it: schema.table, parts quoted where they must be
    ddl: str  # schema, types, table, indexes (statements separated by ';')
    stage: str  # INSERTs the staged truth, relative to now()
    roles: dict[str, str]  # role -> SQL condition over the table's columns (no alias)
    truth: dict[str, int]  # role -> rows staged in it
    stuck: str | None  # id (as id_sql gives it) of the one stuck job
    claim: str  # the shape's own claim of one ready job, RETURNING its id as text AS id
    lock_ready: str  # SELECT ... FOR UPDATE of one ready job (id as text AS id); '' if none
    id_sql: str  # the job id as text, the form of `stuck`


def _truth(*roles: str) -> dict[str, int]:
    return {role: COUNTS[role] for role in roles}


def _nth(*before: str) -> str:
    """The serial id of the stuck row: after the rows of `before`, one fresh claim, then it."""
    return str(sum(COUNTS[role] for role in before) + 2)


PT_DOCUMENTS = Shape(
    name="pt_documents",
    table="integracao.jobs_documentos",
    ddl="""
CREATE SCHEMA integracao;
CREATE TABLE integracao.jobs_documentos (
    documento_id  bigserial PRIMARY KEY,
    status        text NOT NULL DEFAULT 'pendente'
                  CHECK (status IN ('pendente', 'processando', 'concluido', 'falhou')),
    tentativas    integer NOT NULL DEFAULT 0,
    worker_id     text,
    criado_em     timestamptz NOT NULL DEFAULT now(),
    iniciado_em   timestamptz,
    concluido_em  timestamptz,
    ultimo_erro   text,
    reservado_ate timestamptz,
    conteudo      text
);
CREATE INDEX jobs_documentos_pendente_idx ON integracao.jobs_documentos (criado_em, documento_id)
    WHERE status = 'pendente'
""",
    stage=f"""
INSERT INTO integracao.jobs_documentos
    (status, tentativas, worker_id, criado_em, iniciado_em, concluido_em, conteudo)
SELECT 'concluido', 1, 'w-' || (1 + g % 2), now() - interval '50 minutes' + g * interval '1 minute',
       now() - interval '49 minutes' + g * interval '1 minute',
       now() - interval '48 minutes' + g * interval '1 minute', '<nota n="' || g || '"/>'
FROM generate_series(1, {DONE}) g;
INSERT INTO integracao.jobs_documentos
    (status, tentativas, worker_id, criado_em, iniciado_em, ultimo_erro, conteudo)
VALUES ('falhou', 2, 'w-2', now() - interval '40 minutes', now() - interval '30 minutes',
        'timeout ao enviar para a SEFAZ', '<nota n="40"/>');
INSERT INTO integracao.jobs_documentos
    (status, tentativas, worker_id, criado_em, iniciado_em, reservado_ate, conteudo)
VALUES ('processando', 1, 'w-1', now() - interval '3 minutes', now() - interval '10 seconds',
        now() + interval '5 minutes', '<nota n="41"/>'),
       ('processando', 1, 'w-3', now() - interval '3 hours 5 minutes', now() - interval '3 hours',
        now() - interval '2 hours 50 minutes', '<nota n="42"/>'),
       ('processando', 1, 'w-2', now() - interval '2 minutes', now() - interval '10 seconds',
        now() + interval '5 minutes', '<nota n="43"/>');
INSERT INTO integracao.jobs_documentos (criado_em, conteudo)
SELECT now() - interval '1 minute' * ({READY} + 1 - g), '<nota n="' || (100 + g) || '"/>'
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "status = 'pendente'",
        "running": "status = 'processando'",
        "done": "status = 'concluido'",
        "failed": "status = 'falhou'",
    },
    truth=_truth("ready", "running", "done", "failed"),
    stuck=_nth("done", "failed"),
    claim="""
UPDATE integracao.jobs_documentos
SET status = 'processando', tentativas = tentativas + 1, worker_id = 'w-test',
    iniciado_em = now(), reservado_ate = now() + interval '5 minutes'
WHERE documento_id = (
    SELECT documento_id FROM integracao.jobs_documentos WHERE status = 'pendente'
    ORDER BY criado_em, documento_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING documento_id::text AS id""",
    lock_ready="""
SELECT documento_id::text AS id FROM integracao.jobs_documentos WHERE status = 'pendente'
ORDER BY criado_em, documento_id LIMIT 1 FOR UPDATE""",
    id_sql="documento_id::text",
)

PT_TASKS = Shape(
    name="pt_tasks",
    table="public.fila_tarefas",
    ddl="""
CREATE TABLE fila_tarefas (
    id            bigserial PRIMARY KEY,
    estado        text NOT NULL DEFAULT 'pendente'
                  CHECK (estado IN ('pendente', 'executando', 'concluida')),
    worker        text,
    versao_posse  integer NOT NULL DEFAULT 0,
    reservada_em  timestamptz,
    entrada       jsonb NOT NULL DEFAULT '{}'
)
""",
    stage=f"""
INSERT INTO fila_tarefas (estado, worker, versao_posse, reservada_em, entrada)
SELECT 'concluida', 'agente-' || (1 + g % 2), 1,
       now() - interval '30 minutes' + g * interval '1 minute',
       jsonb_build_object('tarefa', 'resumir', 'documento', g)
FROM generate_series(1, {DONE}) g;
INSERT INTO fila_tarefas (estado, worker, versao_posse, reservada_em, entrada)
VALUES ('executando', 'agente-1', 1, now() - interval '10 seconds',
        jsonb_build_object('tarefa', 'resumir', 'documento', 11)),
       ('executando', 'agente-3', 2, now() - interval '3 hours',
        jsonb_build_object('tarefa', 'traduzir', 'documento', 12)),
       ('executando', 'agente-2', 1, now() - interval '10 seconds',
        jsonb_build_object('tarefa', 'resumir', 'documento', 13));
INSERT INTO fila_tarefas (entrada)
SELECT jsonb_build_object('tarefa', 'classificar', 'documento', 100 + g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "estado = 'pendente'",
        "running": "estado = 'executando'",
        "done": "estado = 'concluida'",
    },
    truth=_truth("ready", "running", "done"),
    stuck=_nth("done"),
    claim="""
UPDATE fila_tarefas
SET estado = 'executando', worker = 'w-test', versao_posse = versao_posse + 1,
    reservada_em = now()
WHERE id = (
    SELECT id FROM fila_tarefas WHERE estado = 'pendente'
    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM fila_tarefas WHERE estado = 'pendente'
ORDER BY id LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

ES_JOBS = Shape(
    name="es_jobs",
    table="public.cola_trabajos",
    ddl="""
CREATE TABLE cola_trabajos (
    id           bigserial PRIMARY KEY,
    estado       text NOT NULL DEFAULT 'pendiente',
    tipo         text NOT NULL,
    datos        jsonb,
    intentos     integer NOT NULL DEFAULT 0,
    trabajador   text,
    tomado_en    timestamptz,
    creado_en    timestamptz NOT NULL DEFAULT now(),
    terminado_en timestamptz,
    error        text
);
CREATE INDEX cola_trabajos_estado_idx ON cola_trabajos (estado, creado_en)
""",
    stage=f"""
INSERT INTO cola_trabajos
    (estado, tipo, datos, intentos, trabajador, tomado_en, creado_en, terminado_en)
SELECT 'completado', 'enviar_factura', jsonb_build_object('factura', g), 1,
       'trabajador-' || (1 + g % 2), now() - interval '40 minutes' + g * interval '1 minute',
       now() - interval '45 minutes' + g * interval '1 minute',
       now() - interval '39 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO cola_trabajos
    (estado, tipo, datos, intentos, trabajador, tomado_en, creado_en, terminado_en, error)
VALUES ('fallido', 'enviar_factura', jsonb_build_object('factura', 20), 2, 'trabajador-2',
        now() - interval '20 minutes', now() - interval '35 minutes',
        now() - interval '19 minutes', 'SMTP 451: inténtelo más tarde');
INSERT INTO cola_trabajos
    (estado, tipo, datos, intentos, trabajador, tomado_en, creado_en, terminado_en, error)
SELECT 'descartado', 'sincronizar_cliente', jsonb_build_object('cliente', g), 5,
       'trabajador-1', now() - interval '30 minutes' + g * interval '1 minute',
       now() - interval '55 minutes' + g * interval '1 minute',
       now() - interval '29 minutes' + g * interval '1 minute',
       'se alcanzó el máximo de intentos: cliente inexistente'
FROM generate_series(1, {DEAD}) g;
INSERT INTO cola_trabajos (estado, tipo, datos, intentos, trabajador, tomado_en, creado_en)
VALUES ('en_proceso', 'enviar_factura', jsonb_build_object('factura', 31), 1, 'trabajador-1',
        now() - interval '10 seconds', now() - interval '2 minutes'),
       ('en_proceso', 'enviar_factura', jsonb_build_object('factura', 32), 1, 'trabajador-3',
        now() - interval '3 hours', now() - interval '3 hours 5 minutes'),
       ('en_proceso', 'enviar_factura', jsonb_build_object('factura', 33), 1, 'trabajador-2',
        now() - interval '10 seconds', now() - interval '1 minute');
INSERT INTO cola_trabajos (tipo, datos, creado_en)
SELECT 'enviar_factura', jsonb_build_object('factura', 100 + g),
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "estado = 'pendiente'",
        "running": "estado = 'en_proceso'",
        "done": "estado = 'completado'",
        "failed": "estado = 'fallido'",
        "dead": "estado = 'descartado'",
    },
    truth=_truth("ready", "running", "done", "failed", "dead"),
    stuck=_nth("done", "failed", "dead"),
    claim="""
UPDATE cola_trabajos
SET estado = 'en_proceso', intentos = intentos + 1, trabajador = 'w-test', tomado_en = now()
WHERE id = (
    SELECT id FROM cola_trabajos WHERE estado = 'pendiente'
    ORDER BY creado_en, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM cola_trabajos WHERE estado = 'pendiente'
ORDER BY creado_en, id LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

UPPER_JOBS = Shape(
    name="upper_jobs",
    table="public.job_queue",
    ddl="""
CREATE TABLE job_queue (
    job_id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    state          varchar(20) NOT NULL,
    job_signature  varchar(512) NOT NULL,
    job_as_json    text,
    enqueued_at    timestamptz,
    picked_at      timestamptz,
    picked_by      varchar(100),
    attempt_count  int,
    last_exception text,
    updated_at     timestamptz
);
CREATE INDEX job_queue_state_idx ON job_queue (state, enqueued_at)
""",
    stage=f"""
INSERT INTO job_queue
    (state, job_signature, job_as_json, enqueued_at, picked_at, picked_by, attempt_count,
     updated_at)
SELECT 'SUCCEEDED', 'com.acme.ReportService.render(java.lang.Long)',
       '{{"report": ' || g || '}}', now() - interval '50 minutes' + g * interval '1 minute',
       now() - interval '49 minutes' + g * interval '1 minute', 'node-' || (1 + g % 2), 1,
       now() - interval '48 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO job_queue
    (state, job_signature, job_as_json, enqueued_at, picked_at, picked_by, attempt_count,
     last_exception, updated_at)
VALUES ('FAILED', 'com.acme.ReportService.render(java.lang.Long)', '{{"report": 20}}',
        now() - interval '30 minutes', now() - interval '25 minutes', 'node-2', 1,
        'java.net.SocketTimeoutException: Read timed out', now() - interval '24 minutes');
INSERT INTO job_queue
    (state, job_signature, job_as_json, enqueued_at, picked_at, picked_by, attempt_count,
     last_exception, updated_at)
SELECT 'DELETED', 'com.acme.MailService.send(java.util.UUID)', '{{"mail": ' || g || '}}',
       now() - interval '59 minutes' + g * interval '1 minute',
       now() - interval '58 minutes' + g * interval '1 minute', 'node-1', 10,
       'java.lang.IllegalStateException: mailbox gone',
       now() - interval '30 minutes' + g * interval '1 minute'
FROM generate_series(1, {DEAD}) g;
INSERT INTO job_queue
    (state, job_signature, job_as_json, enqueued_at, picked_at, picked_by, attempt_count,
     updated_at)
VALUES ('PROCESSING', 'com.acme.ReportService.render(java.lang.Long)', '{{"report": 31}}',
        now() - interval '2 minutes', now() - interval '10 seconds', 'node-1', 1,
        now() - interval '10 seconds'),
       ('PROCESSING', 'com.acme.ReportService.render(java.lang.Long)', '{{"report": 32}}',
        now() - interval '3 hours 5 minutes', now() - interval '3 hours', 'node-3', 1,
        now() - interval '3 hours'),
       ('PROCESSING', 'com.acme.ReportService.render(java.lang.Long)', '{{"report": 33}}',
        now() - interval '1 minute', now() - interval '10 seconds', 'node-2', 1,
        now() - interval '10 seconds');
INSERT INTO job_queue (state, job_signature, job_as_json, enqueued_at, attempt_count, updated_at)
SELECT 'ENQUEUED', 'com.acme.ReportService.render(java.lang.Long)',
       '{{"report": ' || (100 + g) || '}}', now() - interval '1 minute' * ({READY} + 1 - g), 0,
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "state = 'ENQUEUED'",
        "running": "state = 'PROCESSING'",
        "done": "state = 'SUCCEEDED'",
        "failed": "state = 'FAILED'",
        "dead": "state = 'DELETED'",
    },
    truth=_truth("ready", "running", "done", "failed", "dead"),
    stuck=_nth("done", "failed", "dead"),
    claim="""
UPDATE job_queue
SET state = 'PROCESSING', picked_at = now(), picked_by = 'w-test',
    attempt_count = coalesce(attempt_count, 0) + 1, updated_at = now()
WHERE job_id = (
    SELECT job_id FROM job_queue WHERE state = 'ENQUEUED'
    ORDER BY enqueued_at, job_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING job_id::text AS id""",
    lock_ready="""
SELECT job_id::text AS id FROM job_queue WHERE state = 'ENQUEUED'
ORDER BY enqueued_at, job_id LIMIT 1 FOR UPDATE""",
    id_sql="job_id::text",
)

ENUM_JOBS = Shape(
    name="enum_jobs",
    table="work.job_runs",
    ddl="""
CREATE SCHEMA work;
CREATE TYPE work.job_status AS ENUM ('queued', 'in_flight', 'succeeded', 'errored', 'abandoned');
CREATE TABLE work.job_runs (
    run_id       bigserial PRIMARY KEY,
    status       work.job_status NOT NULL DEFAULT 'queued',
    kind         text NOT NULL,
    args         jsonb NOT NULL DEFAULT '{}',
    claimed_at   timestamptz,
    claimed_by   text,
    heartbeat_at timestamptz,
    tries        int,
    created_at   timestamptz DEFAULT now(),
    finished_at  timestamptz,
    error        text
);
CREATE INDEX job_runs_status_idx ON work.job_runs (status)
""",
    stage=f"""
INSERT INTO work.job_runs
    (status, kind, args, claimed_at, claimed_by, heartbeat_at, tries, created_at, finished_at)
SELECT 'succeeded', 'resize_image', jsonb_build_object('image', g),
       now() - interval '40 minutes' + g * interval '1 minute', 'pod-' || (1 + g % 2),
       now() - interval '39 minutes' + g * interval '1 minute', 1,
       now() - interval '41 minutes' + g * interval '1 minute',
       now() - interval '39 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO work.job_runs
    (status, kind, args, claimed_at, claimed_by, heartbeat_at, tries, created_at, finished_at,
     error)
VALUES ('errored', 'resize_image', jsonb_build_object('image', 20),
        now() - interval '15 minutes', 'pod-2', now() - interval '14 minutes', 1,
        now() - interval '16 minutes', now() - interval '14 minutes',
        'S3 GetObject: SlowDown');
INSERT INTO work.job_runs
    (status, kind, args, claimed_at, claimed_by, heartbeat_at, tries, created_at, finished_at,
     error)
SELECT 'abandoned', 'transcode_video', jsonb_build_object('video', g),
       now() - interval '50 minutes' + g * interval '1 minute', 'pod-1',
       now() - interval '49 minutes' + g * interval '1 minute', 3,
       now() - interval '58 minutes' + g * interval '1 minute',
       now() - interval '49 minutes' + g * interval '1 minute', 'codec not supported (3 tries)'
FROM generate_series(1, {DEAD}) g;
INSERT INTO work.job_runs
    (status, kind, args, claimed_at, claimed_by, heartbeat_at, tries, created_at)
VALUES ('in_flight', 'resize_image', jsonb_build_object('image', 31),
        now() - interval '10 seconds', 'pod-1', now() - interval '5 seconds', 1,
        now() - interval '2 minutes'),
       ('in_flight', 'resize_image', jsonb_build_object('image', 32),
        now() - interval '3 hours', 'pod-3', now() - interval '3 hours', 1,
        now() - interval '3 hours 5 minutes'),
       ('in_flight', 'resize_image', jsonb_build_object('image', 33),
        now() - interval '10 seconds', 'pod-2', now() - interval '5 seconds', 2,
        now() - interval '20 minutes');
INSERT INTO work.job_runs (kind, args, tries, created_at)
SELECT 'resize_image', jsonb_build_object('image', 100 + g), 0,
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "status = 'queued'",
        "running": "status = 'in_flight'",
        "done": "status = 'succeeded'",
        "failed": "status = 'errored'",
        "dead": "status = 'abandoned'",
    },
    truth=_truth("ready", "running", "done", "failed", "dead"),
    stuck=_nth("done", "failed", "dead"),
    claim="""
UPDATE work.job_runs
SET status = 'in_flight', claimed_at = now(), claimed_by = 'w-test', heartbeat_at = now(),
    tries = coalesce(tries, 0) + 1
WHERE run_id = (
    SELECT run_id FROM work.job_runs WHERE status = 'queued'
    ORDER BY run_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING run_id::text AS id""",
    lock_ready="""
SELECT run_id::text AS id FROM work.job_runs WHERE status = 'queued'
ORDER BY run_id LIMIT 1 FOR UPDATE""",
    id_sql="run_id::text",
)

INT_JOBS = Shape(
    name="int_jobs",
    table="public.print_jobs",
    ddl="""
CREATE TABLE print_jobs (
    id          serial PRIMARY KEY,
    status      smallint NOT NULL DEFAULT 0 CHECK (status IN (0, 1, 2, 3, 4)),
    printer     text NOT NULL,
    document    text NOT NULL,
    copies      int NOT NULL DEFAULT 1,
    grabbed_at  timestamptz,
    grabbed_by  text,
    finished_at timestamptz,
    error_text  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    retries     int NOT NULL DEFAULT 0
);
CREATE INDEX print_jobs_waiting_idx ON print_jobs (id) WHERE status = 0
""",
    stage=f"""
INSERT INTO print_jobs
    (status, printer, document, grabbed_at, grabbed_by, finished_at, created_at)
SELECT 2, 'lobby-laser', 'invoice-' || g || '.pdf',
       now() - interval '30 minutes' + g * interval '1 minute', 'spooler-' || (1 + g % 2),
       now() - interval '29 minutes' + g * interval '1 minute',
       now() - interval '31 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO print_jobs
    (status, printer, document, grabbed_at, grabbed_by, finished_at, error_text, created_at,
     retries)
VALUES (3, 'floor2-color', 'poster.pdf', now() - interval '12 minutes', 'spooler-2',
        now() - interval '11 minutes', 'paper jam in tray 2', now() - interval '13 minutes', 1);
INSERT INTO print_jobs
    (status, printer, document, grabbed_at, grabbed_by, finished_at, error_text, created_at,
     retries)
SELECT 4, 'floor2-color', 'draft-' || g || '.docx',
       now() - interval '50 minutes' + g * interval '1 minute', 'spooler-1',
       now() - interval '49 minutes' + g * interval '1 minute', 'cancelled by user',
       now() - interval '52 minutes' + g * interval '1 minute', 0
FROM generate_series(1, {DEAD}) g;
INSERT INTO print_jobs (status, printer, document, grabbed_at, grabbed_by, created_at)
VALUES (1, 'lobby-laser', 'contract-31.pdf', now() - interval '10 seconds', 'spooler-1',
        now() - interval '1 minute'),
       (1, 'basement-plotter', 'floorplan-32.pdf', now() - interval '3 hours', 'spooler-3',
        now() - interval '3 hours 2 minutes'),
       (1, 'lobby-laser', 'contract-33.pdf', now() - interval '10 seconds', 'spooler-2',
        now() - interval '30 seconds');
INSERT INTO print_jobs (printer, document, copies, created_at)
SELECT 'lobby-laser', 'letter-' || g || '.pdf', 1 + g % 3,
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "status = 0",
        "running": "status = 1",
        "done": "status = 2",
        "failed": "status = 3",
        "dead": "status = 4",
    },
    truth=_truth("ready", "running", "done", "failed", "dead"),
    stuck=_nth("done", "failed", "dead"),
    claim="""
UPDATE print_jobs SET status = 1, grabbed_at = now(), grabbed_by = 'w-test'
WHERE id = (
    SELECT id FROM print_jobs WHERE status = 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM print_jobs WHERE status = 0 ORDER BY id LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

BOOL_TASKS = Shape(
    name="bool_tasks",
    table="public.scheduled_work",
    ddl="""
CREATE TABLE scheduled_work (
    id                   bigserial PRIMARY KEY,
    task_name            text NOT NULL,
    task_data            bytea,
    execution_time       timestamptz NOT NULL,
    picked               boolean NOT NULL DEFAULT false,
    picked_by            text,
    last_failure         timestamptz,
    consecutive_failures int NOT NULL DEFAULT 0,
    last_heartbeat       timestamptz,
    version              bigint NOT NULL DEFAULT 1
);
CREATE INDEX scheduled_work_execution_time_idx ON scheduled_work (execution_time)
""",
    stage=f"""
INSERT INTO scheduled_work (task_name, task_data, execution_time, last_failure,
                            consecutive_failures, version)
VALUES ('send-reminder', convert_to('user=21', 'UTF8'), now() + interval '1 hour',
        now() - interval '5 minutes', 1, 3),
       ('send-reminder', convert_to('user=22', 'UTF8'), now() + interval '1 hour', NULL, 0, 1);
INSERT INTO scheduled_work
    (task_name, task_data, execution_time, picked, picked_by, last_heartbeat, version)
VALUES ('send-reminder', convert_to('user=31', 'UTF8'), now() - interval '30 seconds', true,
        'app-1', now() - interval '5 seconds', 2),
       ('rebuild-search-index', NULL, now() - interval '3 hours 1 minute', true, 'app-3',
        now() - interval '3 hours', 2),
       ('send-reminder', convert_to('user=33', 'UTF8'), now() - interval '20 seconds', true,
        'app-2', now() - interval '5 seconds', 2);
INSERT INTO scheduled_work (task_name, task_data, execution_time)
SELECT 'send-reminder', convert_to('user=' || (100 + g), 'UTF8'),
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "NOT picked AND execution_time <= now()",
        "scheduled": "NOT picked AND execution_time > now()",
        "running": "picked",
    },
    truth=_truth("ready", "scheduled", "running"),
    stuck=_nth("scheduled"),
    claim="""
UPDATE scheduled_work
SET picked = true, picked_by = 'w-test', last_heartbeat = now(), version = version + 1
WHERE id = (
    SELECT id FROM scheduled_work WHERE NOT picked AND execution_time <= now()
    ORDER BY execution_time FOR UPDATE SKIP LOCKED LIMIT 1)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM scheduled_work WHERE NOT picked AND execution_time <= now()
ORDER BY execution_time LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

_HANDLER = (
    "'--- !ruby/object:ActiveJob::QueueAdapters::DelayedJobAdapter::JobWrapper' || chr(10) || "
    "'job_data:' || chr(10) || '  job_class: ' || {cls} || chr(10) || '  arguments: [' || {arg} "
    "|| ']'"
)

STATELESS_JOBS = Shape(
    name="stateless_jobs",
    table="public.background_jobs",
    ddl="""
CREATE TABLE background_jobs (
    id         bigserial PRIMARY KEY,
    priority   integer NOT NULL DEFAULT 0,
    attempts   integer NOT NULL DEFAULT 0,
    handler    text NOT NULL,
    last_error text,
    run_at     timestamptz NOT NULL,
    locked_at  timestamptz,
    locked_by  text,
    failed_at  timestamptz,
    queue      varchar(255),
    created_at timestamptz,
    updated_at timestamptz
);
CREATE INDEX background_jobs_priority ON background_jobs (priority, run_at)
""",
    stage=f"""
INSERT INTO background_jobs
    (priority, attempts, handler, last_error, run_at, failed_at, queue, created_at, updated_at)
SELECT 0, 25, {_HANDLER.format(cls="'ImportFeedJob'", arg="g")},
       'Net::OpenTimeout: execution expired' || chr(10) || 'app/jobs/import_feed_job.rb:12',
       now() - interval '40 minutes' + g * interval '1 minute',
       now() - interval '40 minutes' + g * interval '1 minute', 'imports',
       now() - interval '59 minutes' + g * interval '1 minute',
       now() - interval '40 minutes' + g * interval '1 minute'
FROM generate_series(1, {DEAD}) g;
INSERT INTO background_jobs
    (priority, attempts, handler, run_at, locked_at, locked_by, queue, created_at, updated_at)
VALUES (0, 0, {_HANDLER.format(cls="'MailerJob'", arg="31")}, now() - interval '1 minute',
        now() - interval '10 seconds', 'host:web-1 pid:4242', 'mailers',
        now() - interval '1 minute', now() - interval '10 seconds'),
       (0, 0, {_HANDLER.format(cls="'ReportJob'", arg="32")},
        now() - interval '3 hours 5 minutes', now() - interval '3 hours',
        'host:web-3 pid:977', 'default', now() - interval '3 hours 5 minutes',
        now() - interval '3 hours'),
       (0, 1, {_HANDLER.format(cls="'MailerJob'", arg="33")}, now() - interval '2 minutes',
        now() - interval '10 seconds', 'host:web-2 pid:4310', 'mailers',
        now() - interval '9 minutes', now() - interval '10 seconds');
INSERT INTO background_jobs (priority, handler, run_at, queue, created_at, updated_at)
SELECT g % 2, {_HANDLER.format(cls="'MailerJob'", arg="100 + g")},
       now() - interval '1 minute' * ({READY} + 1 - g), 'mailers',
       now() - interval '1 minute' * ({READY} + 1 - g),
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g;
INSERT INTO background_jobs
    (priority, attempts, handler, last_error, run_at, queue, created_at, updated_at)
VALUES (0, 1, {_HANDLER.format(cls="'ImportFeedJob'", arg="41")},
        'Net::ReadTimeout', now() + interval '1 hour', 'imports', now() - interval '6 minutes',
        now() - interval '5 minutes'),
       (0, 0, {_HANDLER.format(cls="'DigestJob'", arg="42")}, NULL, now() + interval '1 hour',
        'default', now() - interval '2 minutes', now() - interval '2 minutes')
""",
    roles={
        "ready": "failed_at IS NULL AND locked_at IS NULL AND run_at <= now()",
        "scheduled": "failed_at IS NULL AND locked_at IS NULL AND run_at > now()",
        "running": "failed_at IS NULL AND locked_at IS NOT NULL",
        "dead": "failed_at IS NOT NULL",
    },
    truth=_truth("ready", "scheduled", "running", "dead"),
    stuck=_nth("dead"),
    claim="""
UPDATE background_jobs SET locked_at = now(), locked_by = 'w-test'
WHERE id IN (
    SELECT id FROM background_jobs
    WHERE run_at <= now() AND locked_at IS NULL AND failed_at IS NULL
    ORDER BY priority ASC, run_at ASC LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM background_jobs
WHERE run_at <= now() AND locked_at IS NULL AND failed_at IS NULL
ORDER BY priority ASC, run_at ASC LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

VT_MESSAGES = Shape(
    name="vt_messages",
    table="public.q_emails",
    ddl="""
CREATE TABLE q_emails (
    msg_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    read_ct     integer NOT NULL DEFAULT 0,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    vt          timestamptz NOT NULL,
    message     jsonb
);
CREATE INDEX q_emails_vt_idx ON q_emails (vt ASC)
""",
    # no stuck message: a message in flight whose timeout ran out is visible (ready) again;
    # one read 7 times and visible again for 3 hours is among the ready ones
    stage=f"""
INSERT INTO q_emails (read_ct, enqueued_at, vt, message)
VALUES (1, now() - interval '2 minutes', now() + interval '5 minutes',
        jsonb_build_object('to', 'ana@example.com', 'template', 'welcome')),
       (1, now() - interval '1 minute', now() + interval '5 minutes',
        jsonb_build_object('to', 'bo@example.com', 'template', 'welcome')),
       (2, now() - interval '4 minutes', now() + interval '5 minutes',
        jsonb_build_object('to', 'cy@example.com', 'template', 'receipt'));
INSERT INTO q_emails (read_ct, enqueued_at, vt, message)
VALUES (7, now() - interval '5 hours', now() - interval '3 hours',
        jsonb_build_object('to', 'bounce@invalid', 'template', 'receipt'));
INSERT INTO q_emails (enqueued_at, vt, message)
SELECT now() - interval '1 minute' * ({READY} - g), now() - interval '1 minute' * ({READY} - g),
       jsonb_build_object('to', 'user' || g || '@example.com', 'template', 'digest')
FROM generate_series(1, {READY - 1}) g;
INSERT INTO q_emails (enqueued_at, vt, message)
SELECT now() - interval '1 minute', now() + interval '1 hour',
       jsonb_build_object('to', 'later' || g || '@example.com', 'template', 'reminder')
FROM generate_series(1, {SCHEDULED}) g
""",
    roles={
        "ready": "vt <= now()",
        "scheduled": "read_ct = 0 AND vt > now()",
        "running": "read_ct > 0 AND vt > now()",
    },
    truth=_truth("ready", "scheduled", "running"),
    stuck=None,
    claim="""
UPDATE q_emails SET vt = now() + interval '30 seconds', read_ct = read_ct + 1
WHERE msg_id = (
    SELECT msg_id FROM q_emails WHERE vt <= now() ORDER BY msg_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING msg_id::text AS id""",
    lock_ready="""
SELECT msg_id::text AS id FROM q_emails WHERE vt <= now() ORDER BY msg_id LIMIT 1 FOR UPDATE""",
    id_sql="msg_id::text",
)

COMPOSITE_JOBS = Shape(
    name="composite_jobs",
    table="public.tenant_jobs",
    ddl="""
CREATE TABLE tenant_jobs (
    tenant     text NOT NULL,
    job_no     int NOT NULL,
    kind       text NOT NULL,
    payload    jsonb,
    status     text NOT NULL DEFAULT 'queued',
    started_at timestamptz,
    worker     text,
    attempts   int NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, job_no)
);
CREATE INDEX tenant_jobs_queued_idx ON tenant_jobs (created_at) WHERE status = 'queued'
""",
    stage=f"""
INSERT INTO tenant_jobs (tenant, job_no, kind, payload, status, started_at, worker, attempts,
                         created_at)
SELECT (ARRAY['acme', 'globex', 'initech'])[1 + g % 3], 10 + g, 'export_csv',
       jsonb_build_object('rows', 1000 * g), 'done',
       now() - interval '30 minutes' + g * interval '1 minute', 'worker-' || (1 + g % 2), 1,
       now() - interval '31 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO tenant_jobs (tenant, job_no, kind, payload, status, started_at, worker, attempts,
                         created_at)
VALUES ('initech', 5, 'export_csv', jsonb_build_object('rows', 0), 'failed',
        now() - interval '20 minutes', 'worker-2', 2, now() - interval '25 minutes');
INSERT INTO tenant_jobs (tenant, job_no, kind, payload, status, started_at, worker, attempts,
                         created_at)
VALUES ('acme', 6, 'export_csv', jsonb_build_object('rows', 500), 'running',
        now() - interval '10 seconds', 'worker-1', 1, now() - interval '1 minute'),
       ('globex', 7, 'rebuild_stats', jsonb_build_object('year', 2024), 'running',
        now() - interval '3 hours', 'worker-3', 1, now() - interval '3 hours 5 minutes'),
       ('initech', 8, 'export_csv', jsonb_build_object('rows', 70), 'running',
        now() - interval '10 seconds', 'worker-2', 1, now() - interval '2 minutes');
INSERT INTO tenant_jobs (tenant, job_no, kind, payload, created_at)
SELECT (ARRAY['acme', 'globex', 'initech'])[1 + g % 3], 100 + g, 'export_csv',
       jsonb_build_object('rows', g), now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "status = 'queued'",
        "running": "status = 'running'",
        "done": "status = 'done'",
        "failed": "status = 'failed'",
    },
    truth=_truth("ready", "running", "done", "failed"),
    stuck='["globex", 7]',
    claim="""
UPDATE tenant_jobs SET status = 'running', started_at = now(), worker = 'w-test',
    attempts = attempts + 1
WHERE (tenant, job_no) = (
    SELECT tenant, job_no FROM tenant_jobs WHERE status = 'queued'
    ORDER BY created_at, tenant, job_no LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING jsonb_build_array(tenant, job_no)::text AS id""",
    lock_ready="""
SELECT jsonb_build_array(tenant, job_no)::text AS id FROM tenant_jobs WHERE status = 'queued'
ORDER BY created_at, tenant, job_no LIMIT 1 FOR UPDATE""",
    id_sql="jsonb_build_array(tenant, job_no)::text",
)

STUCK_WEBHOOK = "00000000-0000-4000-8000-000000000001"

UUID_JOBS = Shape(
    name="uuid_jobs",
    table="public.outbound_webhooks",
    ddl="""
CREATE TABLE outbound_webhooks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    url             text NOT NULL,
    event           text NOT NULL,
    payload         jsonb NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'dead')),
    attempts        int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    locked_until    timestamptz,
    owner           text,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbound_webhooks_due_idx ON outbound_webhooks (next_attempt_at)
    WHERE status = 'pending'
""",
    stage=f"""
INSERT INTO outbound_webhooks
    (url, event, payload, status, attempts, next_attempt_at, owner, created_at)
SELECT 'https://hooks.example.com/orders', 'order.paid', jsonb_build_object('order', g), 'sent',
       1, now() - interval '20 minutes' + g * interval '1 minute', 'dispatcher-' || (1 + g % 2),
       now() - interval '20 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO outbound_webhooks
    (url, event, payload, status, attempts, next_attempt_at, owner, last_error, created_at)
VALUES ('https://hooks.example.com/orders', 'order.paid', jsonb_build_object('order', 20),
        'failed', 2, now() + interval '10 minutes', 'dispatcher-2', 'HTTP 503 Service Unavailable',
        now() - interval '12 minutes');
INSERT INTO outbound_webhooks
    (url, event, payload, status, attempts, next_attempt_at, owner, last_error, created_at)
SELECT 'https://old-crm.example.net/hook', 'customer.updated',
       jsonb_build_object('customer', g), 'dead', 8,
       now() - interval '30 minutes' + g * interval '1 minute', 'dispatcher-1',
       'connect ECONNREFUSED (gave up after 8 attempts)',
       now() - interval '50 minutes' + g * interval '1 minute'
FROM generate_series(1, {DEAD}) g;
INSERT INTO outbound_webhooks
    (id, url, event, payload, status, attempts, next_attempt_at, locked_until, owner,
     created_at)
VALUES (gen_random_uuid(), 'https://hooks.example.com/orders', 'order.created',
        jsonb_build_object('order', 31), 'sending', 1, now() - interval '1 minute',
        now() + interval '5 minutes', 'dispatcher-1', now() - interval '1 minute'),
       ('{STUCK_WEBHOOK}', 'https://slow.example.org/hook', 'invoice.issued',
        jsonb_build_object('invoice', 32), 'sending', 1, now() - interval '3 hours 5 minutes',
        now() - interval '2 hours 50 minutes', 'dispatcher-3',
        now() - interval '3 hours 5 minutes'),
       (gen_random_uuid(), 'https://hooks.example.com/orders', 'order.created',
        jsonb_build_object('order', 33), 'sending', 1, now() - interval '2 minutes',
        now() + interval '5 minutes', 'dispatcher-2', now() - interval '2 minutes');
INSERT INTO outbound_webhooks (url, event, payload, next_attempt_at, created_at)
SELECT 'https://hooks.example.com/orders', 'order.created', jsonb_build_object('order', 100 + g),
       now() - interval '1 minute' * ({READY} + 1 - g),
       now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g;
INSERT INTO outbound_webhooks (url, event, payload, next_attempt_at, created_at)
SELECT 'https://hooks.example.com/orders', 'order.reminder', jsonb_build_object('order', 200 + g),
       now() + interval '1 hour', now() - interval '3 minutes'
FROM generate_series(1, {SCHEDULED}) g
""",
    roles={
        "ready": "status = 'pending' AND next_attempt_at <= now()",
        "scheduled": "status = 'pending' AND next_attempt_at > now()",
        "running": "status = 'sending'",
        "done": "status = 'sent'",
        "failed": "status = 'failed'",
        "dead": "status = 'dead'",
    },
    truth=_truth("ready", "scheduled", "running", "done", "failed", "dead"),
    stuck=STUCK_WEBHOOK,
    claim="""
UPDATE outbound_webhooks
SET status = 'sending', owner = 'w-test', locked_until = now() + interval '5 minutes',
    attempts = attempts + 1
WHERE id = (
    SELECT id FROM outbound_webhooks WHERE status = 'pending' AND next_attempt_at <= now()
    ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM outbound_webhooks
WHERE status = 'pending' AND next_attempt_at <= now()
ORDER BY next_attempt_at LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

QUOTED_JOBS = Shape(
    name="quoted_jobs",
    table='"Billing"."PendingInvoiceJobs"',
    ddl="""
CREATE SCHEMA "Billing";
CREATE TABLE "Billing"."PendingInvoiceJobs" (
    "Id"          bigint GENERATED BY DEFAULT AS IDENTITY,
    "InvoiceId"   uuid NOT NULL,
    "TenantId"    integer NOT NULL,
    "Status"      text NOT NULL,
    "LockedAt"    timestamptz,
    "LockedBy"    text,
    "Attempts"    integer NOT NULL DEFAULT 0,
    "CreatedAt"   timestamptz NOT NULL DEFAULT now(),
    "CompletedAt" timestamptz,
    "LastError"   text,
    CONSTRAINT "PK_PendingInvoiceJobs" PRIMARY KEY ("Id")
);
CREATE INDEX "IX_PendingInvoiceJobs_Status" ON "Billing"."PendingInvoiceJobs" ("Status")
""",
    stage=f"""
INSERT INTO "Billing"."PendingInvoiceJobs"
    ("InvoiceId", "TenantId", "Status", "LockedAt", "LockedBy", "Attempts", "CreatedAt",
     "CompletedAt")
SELECT gen_random_uuid(), 1 + g % 3, 'Completed',
       now() - interval '30 minutes' + g * interval '1 minute', 'BILLING-VM1:' || (1 + g % 2), 1,
       now() - interval '31 minutes' + g * interval '1 minute',
       now() - interval '29 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO "Billing"."PendingInvoiceJobs"
    ("InvoiceId", "TenantId", "Status", "LockedAt", "LockedBy", "Attempts", "CreatedAt",
     "LastError")
VALUES (gen_random_uuid(), 2, 'Failed', now() - interval '8 minutes', 'BILLING-VM1:2', 1,
        now() - interval '9 minutes',
        'Npgsql.NpgsqlException (0x80004005): Exception while reading from stream');
INSERT INTO "Billing"."PendingInvoiceJobs"
    ("InvoiceId", "TenantId", "Status", "LockedAt", "LockedBy", "Attempts", "CreatedAt")
VALUES (gen_random_uuid(), 1, 'Running', now() - interval '10 seconds', 'BILLING-VM1:1', 1,
        now() - interval '1 minute'),
       (gen_random_uuid(), 3, 'Running', now() - interval '3 hours', 'BILLING-VM2:7', 1,
        now() - interval '3 hours 1 minute'),
       (gen_random_uuid(), 2, 'Running', now() - interval '10 seconds', 'BILLING-VM1:2', 1,
        now() - interval '2 minutes');
INSERT INTO "Billing"."PendingInvoiceJobs" ("InvoiceId", "TenantId", "Status", "CreatedAt")
SELECT gen_random_uuid(), 1 + g % 3, 'Pending', now() - interval '1 minute' * ({READY} + 1 - g)
FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "\"Status\" = 'Pending'",
        "running": "\"Status\" = 'Running'",
        "done": "\"Status\" = 'Completed'",
        "failed": "\"Status\" = 'Failed'",
    },
    truth=_truth("ready", "running", "done", "failed"),
    stuck=_nth("done", "failed"),
    claim="""
UPDATE "Billing"."PendingInvoiceJobs"
SET "Status" = 'Running', "LockedAt" = now(), "LockedBy" = 'w-test', "Attempts" = "Attempts" + 1
WHERE "Id" = (
    SELECT "Id" FROM "Billing"."PendingInvoiceJobs" WHERE "Status" = 'Pending'
    ORDER BY "CreatedAt", "Id" LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING "Id"::text AS id""",
    lock_ready="""
SELECT "Id"::text AS id FROM "Billing"."PendingInvoiceJobs" WHERE "Status" = 'Pending'
ORDER BY "CreatedAt", "Id" LIMIT 1 FOR UPDATE""",
    id_sql='"Id"::text',
)

INVENTED_WORDS = Shape(
    name="invented_words",
    table="public.widget_flow",
    ddl="""
CREATE TABLE widget_flow (
    id           bigserial PRIMARY KEY,
    phase        text NOT NULL DEFAULT 'blip',
    widget       jsonb,
    grabbed_when timestamptz,
    grabbed_by   text,
    ended_when   timestamptz,
    error_text   text
);
CREATE INDEX widget_flow_phase_idx ON widget_flow (phase)
""",
    stage=f"""
INSERT INTO widget_flow (phase, widget, grabbed_when, grabbed_by, ended_when)
SELECT 'quux', jsonb_build_object('sku', 'W-' || g),
       now() - interval '20 minutes' + g * interval '1 minute', 'gremlin-' || (1 + g % 2),
       now() - interval '19 minutes' + g * interval '1 minute'
FROM generate_series(1, {DONE}) g;
INSERT INTO widget_flow (phase, widget, grabbed_when, grabbed_by, ended_when, error_text)
VALUES ('fnord', jsonb_build_object('sku', 'W-20'), now() - interval '6 minutes', 'gremlin-2',
        now() - interval '5 minutes', 'widget jammed');
INSERT INTO widget_flow (phase, widget, grabbed_when, grabbed_by)
VALUES ('zorp', jsonb_build_object('sku', 'W-31'), now() - interval '10 seconds', 'gremlin-1'),
       ('zorp', jsonb_build_object('sku', 'W-32'), now() - interval '3 hours', 'gremlin-3'),
       ('zorp', jsonb_build_object('sku', 'W-33'), now() - interval '10 seconds', 'gremlin-2');
INSERT INTO widget_flow (widget)
SELECT jsonb_build_object('sku', 'W-' || (100 + g)) FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "phase = 'blip'",
        "running": "phase = 'zorp'",
        "done": "phase = 'quux'",
        "failed": "phase = 'fnord'",
    },
    truth=_truth("ready", "running", "done", "failed"),
    stuck=_nth("done", "failed"),
    claim="""
UPDATE widget_flow SET phase = 'zorp', grabbed_when = now(), grabbed_by = 'w-test'
WHERE id = (
    SELECT id FROM widget_flow WHERE phase = 'blip' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id::text AS id""",
    lock_ready="""
SELECT id::text AS id FROM widget_flow WHERE phase = 'blip' ORDER BY id LIMIT 1 FOR UPDATE""",
    id_sql="id::text",
)

SHAPES = (
    PT_DOCUMENTS,
    PT_TASKS,
    ES_JOBS,
    UPPER_JOBS,
    ENUM_JOBS,
    INT_JOBS,
    BOOL_TASKS,
    STATELESS_JOBS,
    VT_MESSAGES,
    COMPOSITE_JOBS,
    UUID_JOBS,
    QUOTED_JOBS,
    INVENTED_WORDS,
)

# A hand-rolled queue with UNMAPPED_ROWS rows in a state no word list knows and no role
# claims ('on_hold_by_ops'): rows no role claims must be reported.
UNMAPPABLE = Shape(
    name="unmappable",
    table="public.tasks",
    ddl="""
CREATE TABLE tasks (
    task_no   bigserial PRIMARY KEY,
    state     text NOT NULL DEFAULT 'new',
    payload   jsonb,
    locked_by text,
    locked_at timestamptz,
    attempts  int NOT NULL DEFAULT 0
)
""",
    stage=f"""
INSERT INTO tasks (state, payload, locked_by, locked_at, attempts)
SELECT 'finished', jsonb_build_object('n', g), 'box-' || (1 + g % 2),
       now() - interval '25 minutes' + g * interval '1 minute', 1
FROM generate_series(1, {DONE}) g;
INSERT INTO tasks (state, payload, locked_by, locked_at, attempts)
VALUES ('error', jsonb_build_object('n', 20), 'box-2', now() - interval '7 minutes', 2);
INSERT INTO tasks (state, payload, locked_by, locked_at, attempts)
VALUES ('working', jsonb_build_object('n', 31), 'box-1', now() - interval '10 seconds', 1),
       ('working', jsonb_build_object('n', 32), 'box-3', now() - interval '3 hours', 1),
       ('working', jsonb_build_object('n', 33), 'box-2', now() - interval '10 seconds', 1);
INSERT INTO tasks (state, payload, attempts)
SELECT 'on_hold_by_ops', jsonb_build_object('n', 40 + g, 'held_for', 'INC-2291'), 2
FROM generate_series(1, {UNMAPPED_ROWS}) g;
INSERT INTO tasks (payload)
SELECT jsonb_build_object('n', 100 + g) FROM generate_series(1, {READY}) g
""",
    roles={
        "ready": "state = 'new'",
        "running": "state = 'working'",
        "done": "state = 'finished'",
        "failed": "state = 'error'",
    },
    truth=_truth("ready", "running", "done", "failed"),
    stuck=_nth("done", "failed"),
    claim="""
UPDATE tasks SET state = 'working', locked_by = 'w-test', locked_at = now(),
    attempts = attempts + 1
WHERE task_no = (
    SELECT task_no FROM tasks WHERE state = 'new' ORDER BY task_no LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING task_no::text AS id""",
    lock_ready="""
SELECT task_no::text AS id FROM tasks WHERE state = 'new' ORDER BY task_no LIMIT 1 FOR UPDATE""",
    id_sql="task_no::text",
)

# Tables that are not queues, with rows: status words, timestamps and all.
DECOYS = """
CREATE TABLE orders (
    id          bigserial PRIMARY KEY,
    customer_id bigint NOT NULL,
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'paid', 'shipped', 'cancelled')),
    total       numeric(12, 2) NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_status_idx ON orders (status);
INSERT INTO orders (customer_id, status, total, created_at, updated_at)
SELECT 1 + g % 4, (ARRAY['pending', 'paid', 'shipped', 'cancelled'])[1 + g % 4], 19.90 * g,
       now() - interval '1 day' * g, now() - interval '1 hour' * g
FROM generate_series(1, 8) g;
CREATE TABLE users (
    id            bigserial PRIMARY KEY,
    email         text NOT NULL UNIQUE,
    status        text NOT NULL DEFAULT 'active',
    last_login_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);
INSERT INTO users (email, status, last_login_at, created_at)
SELECT 'user' || g || '@example.com', (ARRAY['active', 'inactive', 'banned'])[1 + g % 3],
       now() - interval '1 hour' * g, now() - interval '30 days' + g * interval '1 day'
FROM generate_series(1, 6) g;
CREATE TABLE audit_log (
    id     bigserial PRIMARY KEY,
    action text NOT NULL,
    actor  text NOT NULL,
    at     timestamptz NOT NULL DEFAULT now(),
    detail jsonb
);
INSERT INTO audit_log (action, actor, at, detail)
SELECT (ARRAY['login', 'update_profile', 'export'])[1 + g % 3], 'user' || g || '@example.com',
       now() - interval '10 minutes' * g, jsonb_build_object('ip', '10.0.0.' || g)
FROM generate_series(1, 10) g;
CREATE TABLE settings (
    key        text PRIMARY KEY,
    value      text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO settings (key, value) VALUES
    ('maintenance_mode', 'off'), ('max_upload_mb', '25'), ('support_email', 'help@example.com');
CREATE TABLE payments (
    id           bigserial PRIMARY KEY,
    order_id     bigint NOT NULL REFERENCES orders,
    state        text NOT NULL
                 CHECK (state IN ('authorized', 'captured', 'refunded', 'failed')),
    amount       numeric(12, 2) NOT NULL,
    processed_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
INSERT INTO payments (order_id, state, amount, processed_at, created_at)
SELECT g, (ARRAY['authorized', 'captured', 'refunded', 'failed'])[1 + g % 4], 19.90 * g,
       now() - interval '1 hour' * g + interval '2 seconds', now() - interval '1 hour' * g
FROM generate_series(1, 6) g
"""


def create(conn: psycopg.Connection, shape: Shape) -> None:
    """The shape's schema, types, table and indexes (on an autocommit connection)."""
    conn.execute(shape.ddl)


def stage(conn: psycopg.Connection, shape: Shape) -> None:
    """The staged truth: shape.truth rows in each role, times relative to now()."""
    conn.execute(shape.stage)


def role_counts(conn: psycopg.Connection, shape: Shape) -> dict[str, int]:
    """Rows in each of the shape's roles, counted through its ground-truth conditions."""
    counts = ", ".join(f"count(*) FILTER (WHERE {cond})" for cond in shape.roles.values())
    row = conn.execute(f"SELECT {counts} FROM {shape.table}").fetchone()
    assert row is not None
    return dict(zip(shape.roles, row, strict=True))


def claim(conn: psycopg.Connection, shape: Shape) -> str | None:
    """One claim by the shape's own statement, committed: the id claimed, None if none."""
    with conn.transaction():
        row = conn.execute(shape.claim).fetchone()
    return row[0] if row else None
