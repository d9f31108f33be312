"""Words, in several languages: the weakest evidence there is, a hint and never a proof.

State words say which role a value likely stands for; column words which part of a job a
column likely holds. English, Portuguese, Spanish, French, German, Italian and Dutch, as
teams name things; matched on the lowercased name split at `_`, `-`, spaces and camelCase.
"""

from __future__ import annotations

import functools
import re

# role -> words a state value may be (whole value, after normalising case and separators)
STATE_WORDS: dict[str, frozenset[str]] = {
    "ready": frozenset(
        """pending queued ready available new todo waiting enqueued open created
        scheduled_now idle unclaimed unprocessed unsent not_started submitted inbox
        pendente pendentes aguardando novo nova fila enfileirado enfileirada pronto pronta
        pendiente pendientes en_cola encolado nuevo nueva esperando lista
        en_attente attente nouveau nouvelle pret prete a_faire
        wartend offen neu ausstehend bereit
        in_attesa attesa nuovo nuova
        wachtend nieuw
        """.split()
    ),
    "scheduled": frozenset(
        """scheduled delayed deferred later retry_scheduled snoozed sleeping
        agendado agendada programado programada planifie planifiee geplant pianificato
        """.split()
    ),
    "running": frozenset(
        """running processing active in_progress inprogress claimed locked picked doing
        working started leased taken reserved executing in_flight inflight busy fetched
        dequeued consuming handling sending delivering
        processando executando em_andamento em_execucao em_processamento rodando reservado
        reservada
        procesando en_proceso en_curso ejecutando en_ejecucion tomado tomada
        en_cours traitement en_traitement
        laufend in_bearbeitung verarbeitung aktiv
        in_corso elaborazione
        bezig
        """.split()
    ),
    "done": frozenset(
        """done completed complete succeeded success successful finished processed sent
        delivered ok acknowledged acked archived closed
        concluido concluida concluidos feito feita finalizado finalizada processado
        processada enviado enviada sucesso
        completado completada terminado terminada hecho hecha procesado procesada exitoso
        termine terminee fini finie traite
        erledigt fertig abgeschlossen
        completato completata
        klaar voltooid
        """.split()
    ),
    "failed": frozenset(
        """failed error errored failure retryable retrying retry erroring
        falhou falha erro com_erro
        fallido fallida fallo
        echoue echouee echec erreur
        fehlgeschlagen fehler
        fallito errore
        mislukt
        """.split()
    ),
    "dead": frozenset(
        """dead discarded cancelled canceled aborted abandoned expired killed dropped
        dead_letter deadletter quarantined rejected poisoned exhausted deleted gave_up
        cancelado cancelada descartado descartada morto morta abortado abortada
        descartados
        annule annulee abandonne
        abgebrochen verworfen
        annullato
        geannuleerd
        """.split()
    ),
}

# concept -> words a column name may contain (its parts, normalised), most telling first
COLUMN_WORDS: dict[str, tuple[str, ...]] = {
    "state": (
        "status",
        "state",
        "estado",
        "situacao",
        "situacion",
        "etat",
        "stage",
        "phase",
        "step",
        "zustand",
        "stato",
    ),
    "created_at": (
        "created",
        "inserted",
        "enqueued",
        "queued",
        "criado",
        "criada",
        "creado",
        "creada",
        "cree",
        "erstellt",
        "creato",
        "submitted",
        "added",
    ),
    "scheduled_at": (
        "run_at",
        "run_after",
        "scheduled",
        "available",
        "due",
        "not_before",
        "execution_time",
        "next_attempt",
        "next_run",
        "retry_at",
        "agendado",
        "programado",
        "planifie",
        "visible",
    ),
    "started_at": (
        "started",
        "locked",
        "claimed",
        "picked",
        "attempted",
        "grabbed",
        "taken",
        "fetched",
        "reserved",
        "leased_at",
        "iniciado",
        "iniciada",
        "reservada_em",
        "reservado_em",
        "tomado",
        "pego",
        "pega",
        "comenzado",
        "commence",
        "begonnen",
        "iniziato",
        "processing_started",
    ),
    "finished_at": (
        "finished",
        "completed",
        "done",
        "processed",
        "succeeded",
        "ended",
        "finalized",
        "finalised",
        "sent",
        "delivered",
        "concluido",
        "concluida",
        "terminado",
        "finalizado",
        "completado",
        "termine",
        "beendet",
        "completato",
    ),
    "failed_at": ("failed", "errored", "falhou", "fallido", "echoue"),
    "worker": (
        "worker",
        "locked_by",
        "claimed_by",
        "picked_by",
        "owner",
        "grabbed_by",
        "taken_by",
        "reserved_by",
        "processed_by",
        "consumer",
        "node",
        "host",
        "pego_por",
        "pega_por",
        "tomado_por",
        "reservado_por",
        "reservada_por",
        "executado_por",
        "trabalhador",
        "trabajador",
        "processo",
        "executor",
    ),
    "attempts": (
        "attempts",
        "attempt",
        "tries",
        "retries",
        "retry_count",
        "attempt_count",
        "read_ct",
        "read_count",
        "delivery_count",
        "tentativas",
        "tentativa",
        "intentos",
        "reintentos",
        "tentatives",
        "versuche",
        "tentativi",
        "failures",
        "consecutive_failures",
    ),
    "max_attempts": ("max_attempts", "max_tries", "max_retries", "retry_limit"),
    "lease_until": (
        "lease_until",
        "leased_until",
        "locked_until",
        "lease_expires",
        "expires",
        "visible_at",
        "invisible_until",
        "vt",
        "reservado_ate",
        "reservada_ate",
        "valid_until",
        "timeout_at",
        "deadline",
    ),
    "lease_token": (
        "lease_token",
        "lease_version",
        "fencing_token",
        "version",
        "versao",
        "versao_posse",
        "lock_version",
        "claim_id",
        "token",
    ),
    "heartbeat": ("heartbeat", "heartbeat_at", "last_heartbeat", "heartbeated", "alive_at"),
    "last_error": (
        "last_error",
        "error",
        "error_message",
        "failure",
        "exception",
        "ultimo_erro",
        "erro",
        "mensaje_error",
        "erreur",
        "fehler",
        "errore",
        "error_text",
    ),
    "group": ("queue", "queue_name", "channel", "topic", "kind", "task_name", "fila", "cola"),
    "payload": (
        "payload",
        "args",
        "arguments",
        "data",
        "body",
        "message",
        "handler",
        "params",
        "conteudo",
        "entrada",
        "contenido",
        "datos",
    ),
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ACCENTS = str.maketrans("áàâãäéèêëíìîïóòôõöúùûüçñ", "aaaaaeeeeiiiiooooouuuucn")


def normalise(name: str) -> str:
    """`LockedAt` -> `locked_at`, `In-Progress` -> `in_progress`, `Concluído` -> `concluido`."""
    snake = _CAMEL.sub("_", name.strip())
    return re.sub(r"[\s\-./]+", "_", snake.lower().translate(_ACCENTS)).strip("_")


def role_of_word(value: str) -> str | None:
    """The role a state value's word suggests, or None."""
    word = normalise(value)
    for role, words in STATE_WORDS.items():
        if word in words:
            return role
    return None


@functools.lru_cache(maxsize=8192)  # the same names recur across thousands of tables
def column_concept(name: str) -> tuple[str, ...]:
    """The concepts a column's name suggests, most telling first (`locked_at`: started_at;
    `locked_until`: lease_until, its whole name, before started_at, a part of it)."""
    norm = normalise(name)
    parts = set(norm.split("_"))
    found: list[tuple[int, int, str]] = []
    for concept, names in COLUMN_WORDS.items():
        for rank, word in enumerate(names):
            if norm == word:
                found.append((0, rank, concept))
                break
            if norm.startswith(word + "_") or ("_" not in word and word in parts):
                found.append((1, rank, concept))
                break
    return tuple(c for _, _, c in sorted(found))
