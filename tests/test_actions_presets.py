"""Actions on queue tables of other shapes: no token, no lease expiry, uuid ids, enum states."""

from __future__ import annotations

import psycopg
import pytest

from dashboard import config, db
from dashboard.actions import TableAudit, dead_letter, observe_jobs, requeue
from dashboard.errors import UserError
from dashboard.setup import schema

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix


def _setup(dsn: str, ddl: list[str], preset: str | None = None, table: str | None = None):
    with psycopg.connect(dsn) as conn:
        schema.init_audit(conn)
        for statement in ddl:
            conn.execute(statement)
        conn.commit()
        spec = config.validate(conn, config.build_spec(preset=preset, table=table))
        conn.commit()
    return spec


def _row(dsn: str, query: str, *params):
    with psycopg.connect(dsn) as conn:
        return conn.execute(query, params).fetchone()


def test_node_jobs_without_token_or_lease_expiry(dsn):
    spec = _setup(
        dsn,
        [
            "CREATE TABLE jobs (id bigserial PRIMARY KEY, status text NOT NULL, "
            "started_at timestamptz, worker_id text)",
            "INSERT INTO jobs (status, started_at, worker_id) VALUES "
            "('processing', now() - interval '20 minutes', 'node-1'), "
            "('processing', now() - interval '1 minute', 'node-2')",
        ],
        preset="node-jobs",
    )
    with db.connect_action(dsn) as action:
        seen, _ = observe_jobs(action, spec, ["1", "2"])
        result = requeue(action, spec, seen, audit=TableAudit())
        assert result.changed == ("1",)
        assert [(s.id, s.reason) for s in result.skipped] == [
            ("2", "lease not expired (use --force)")
        ]
        assert _row(dsn, "SELECT status, worker_id FROM jobs WHERE id = 1") == ("pending", None)
        seen, _ = observe_jobs(action, spec, ["2"])
        assert dead_letter(
            action, spec, seen, audit=TableAudit(), reason="stuck", force=True
        ).changed == ("2",)
    assert _row(dsn, "SELECT status FROM jobs WHERE id = 2") == ("failed",)


def test_tarefas_demo_uuid_ids_enum_state_and_int_token(dsn):
    spec = _setup(
        dsn,
        [
            "CREATE TYPE estado_tarefa AS ENUM ('pendente', 'executando', 'concluida')",
            "CREATE TABLE tarefas_demo (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), "
            "estado estado_tarefa NOT NULL, reservada_em timestamptz, worker text, "
            "versao_posse integer NOT NULL DEFAULT 0)",
            "INSERT INTO tarefas_demo (id, estado, reservada_em, worker, versao_posse) VALUES "
            "('0b7e1c8e-0000-4000-8000-000000000001', 'executando', now() - interval '1 hour', "
            "'agente-7', 4)",
        ],
        preset="tarefas-demo",
    )
    task = "0b7e1c8e-0000-4000-8000-000000000001"
    with db.connect_action(dsn) as action:
        seen, _ = observe_jobs(action, spec, [task.upper()])  # any spelling PostgreSQL accepts
        assert seen[0].id == task and seen[0].lease_token == "4"
        assert requeue(action, spec, seen, audit=TableAudit()).changed == (task,)
        assert _row(dsn, "SELECT estado::text, worker, versao_posse FROM tarefas_demo") == (
            "pendente",
            None,
            5,
        )
        with pytest.raises(UserError, match="no dead-letter policy"):
            dead_letter(action, spec, seen, audit=TableAudit(), reason="r")
        with pytest.raises(UserError, match="bad job id.*uuid"):
            observe_jobs(action, spec, ["not-a-uuid"])


def test_fila_documentos_dead_letter_to_state_with_reason(dsn):
    spec = _setup(
        dsn,
        [
            "CREATE SCHEMA sql_semana_12",
            "CREATE TABLE sql_semana_12.fila_documentos (documento_id integer PRIMARY KEY, "
            "status text NOT NULL, criado_em timestamptz DEFAULT now(), iniciado_em timestamptz, "
            "worker_id text, tentativas integer NOT NULL DEFAULT 0, reservado_ate timestamptz, "
            "ultimo_erro text, conteudo_xml text)",
            "INSERT INTO sql_semana_12.fila_documentos VALUES "
            "(7, 'processando', now(), now(), 'w', 5, now() - interval '1 minute', NULL, '<a/>')",
        ],
        preset="fila-documentos",
    )
    with db.connect_action(dsn) as action:
        seen, _ = observe_jobs(action, spec, ["7"])
        assert dead_letter(
            action, spec, seen, audit=TableAudit(), reason="5 tentativas"
        ).changed == ("7",)
    assert _row(
        dsn, "SELECT status, ultimo_erro, tentativas FROM sql_semana_12.fila_documentos"
    ) == ("falhou", "5 tentativas", 5)


def test_odd_identifiers_are_quoted_not_pasted(dsn):
    spec = _setup(
        dsn,
        [
            'CREATE SCHEMA "Odd Schema"',
            'CREATE TABLE "Odd Schema"."My Jobs" (id text PRIMARY KEY, status text)',
            """INSERT INTO "Odd Schema"."My Jobs" VALUES ('a''; DROP TABLE x; --', 'failed')""",
            # the ready value its workers claim: with --table alone a requeue writes only that
            """INSERT INTO "Odd Schema"."My Jobs" VALUES ('b', 'pending')""",
        ],
        table='"Odd Schema"."My Jobs"',
    )
    with db.connect_action(dsn) as action:
        seen, missing = observe_jobs(action, spec, ["a'; DROP TABLE x; --"])
        assert not missing
        assert requeue(action, spec, seen, audit=TableAudit()).changed == (seen[0].id,)
    assert _row(dsn, """SELECT status FROM "Odd Schema"."My Jobs" WHERE id <> 'b'""") == (
        "pending",
    )
