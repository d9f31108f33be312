"""The three real-world queue schemas the presets describe, as DDL, with ways to fill them."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg


@dataclass(frozen=True)
class Seed:
    preset: str
    table: str  # schema-qualified, as the snapshot names it
    ddl: tuple[str, ...]
    insert_ready: str  # %(n)s ready rows (through fill_ready: it may name the {xml} type)
    ready_rows: str  # SELECT of the ready rows, to be suffixed with a locking clause
    insert_stale: str  # one running row whose lease is over, worker 'w-dead', token 7
    ready_value: str


def xml_type(conn: psycopg.Connection) -> str:
    """`xml` where the server has libxml, else `text` (the embedded server has none)."""
    try:
        with conn.transaction():
            conn.execute("SELECT '<a/>'::xml")
        return "xml"
    except psycopg.errors.FeatureNotSupported:
        return "text"


FILA = Seed(
    preset="fila-documentos",
    table="sql_semana_12.fila_documentos",
    ddl=(
        "CREATE SCHEMA sql_semana_12",
        """CREATE TABLE sql_semana_12.fila_documentos (
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
            conteudo_xml  {xml}
        )""",
        """CREATE INDEX fila_pendente_idx ON sql_semana_12.fila_documentos (criado_em, documento_id)
            WHERE status = 'pendente'""",
    ),
    insert_ready="""INSERT INTO sql_semana_12.fila_documentos (conteudo_xml, criado_em)
        SELECT ('<nota n="' || g || '"/>')::{xml}, now() - interval '3 seconds'
        FROM generate_series(1, %(n)s) g""",
    ready_rows="""SELECT documento_id FROM sql_semana_12.fila_documentos
        WHERE status = 'pendente' ORDER BY criado_em, documento_id""",
    insert_stale="""INSERT INTO sql_semana_12.fila_documentos
        (status, tentativas, worker_id, iniciado_em, reservado_ate, conteudo_xml)
        VALUES ('processando', 7, 'w-dead', now() - interval '20 minutes',
                now() - interval '5 minutes', '<nota/>')""",
    ready_value="pendente",
)

TAREFAS = Seed(
    preset="tarefas-demo",
    table="public.tarefas_demo",
    ddl=(
        """CREATE TABLE tarefas_demo (
            id            bigserial PRIMARY KEY,
            estado        text NOT NULL DEFAULT 'pendente'
                          CHECK (estado IN ('pendente', 'executando', 'concluida')),
            worker        text,
            versao_posse  integer NOT NULL DEFAULT 0,
            reservada_em  timestamptz,
            entrada       jsonb NOT NULL DEFAULT '{}'
        )""",
    ),
    insert_ready="INSERT INTO tarefas_demo (entrada) SELECT jsonb_build_object('n', g) "
    "FROM generate_series(1, %(n)s) g",
    ready_rows="SELECT id FROM tarefas_demo WHERE estado = 'pendente' ORDER BY id",
    insert_stale="""INSERT INTO tarefas_demo (estado, worker, versao_posse, reservada_em)
        VALUES ('executando', 'w-dead', 7, now() - interval '10 minutes')""",
    ready_value="pendente",
)

NODE_JOBS = Seed(
    preset="node-jobs",
    table="public.jobs",
    ddl=(
        """CREATE TABLE jobs (
            id          serial PRIMARY KEY,
            status      varchar(20) NOT NULL DEFAULT 'pending',
            worker_id   varchar(100),
            started_at  timestamp,
            priority    integer NOT NULL DEFAULT 0,
            payload     jsonb,
            created_at  timestamp NOT NULL DEFAULT now()
        )""",
        "CREATE INDEX jobs_pending_idx ON jobs (priority DESC, id) WHERE status = 'pending'",
    ),
    insert_ready="INSERT INTO jobs (payload) SELECT jsonb_build_object('n', g) "
    "FROM generate_series(1, %(n)s) g",
    ready_rows="SELECT id FROM jobs WHERE status = 'pending' ORDER BY priority DESC, id",
    insert_stale="""INSERT INTO jobs (status, worker_id, started_at)
        VALUES ('processing', 'w-dead', now() - interval '11 minutes')""",
    ready_value="pending",
)

SEEDS = (FILA, TAREFAS, NODE_JOBS)


def create(conn: psycopg.Connection, seed: Seed) -> None:
    xml = xml_type(conn)
    with conn.transaction():
        for statement in seed.ddl:
            conn.execute(statement.replace("{xml}", xml))


def fill_ready(conn: psycopg.Connection, seed: Seed, n: int) -> None:
    """`n` ready rows (the document column is `xml` where the server has libxml)."""
    conn.execute(seed.insert_ready.replace("{xml}", xml_type(conn)), {"n": n})
