"""A state column of an enum type (Oban's oban_job_state) is counted through its index."""

from __future__ import annotations

import json

import pytest

from dashboard.cli import main

# every server of the matrix (tests/servers.py)
pytestmark = pytest.mark.matrix

SPEC_TOML = """
[queue]
table = "app.jobs"
status = "state"
[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
"""


def test_enum_state_counted_through_its_index(dsn, connect, tmp_path, capsys):
    setup = connect(autocommit=True)
    setup.execute("CREATE SCHEMA app")  # off the search path: the type name comes qualified
    setup.execute("""CREATE TYPE app."Job State" AS ENUM ('ready', 'running', 'done')""")
    setup.execute("""CREATE TABLE app.jobs (id bigserial PRIMARY KEY,
                                            state app."Job State" NOT NULL)""")
    setup.execute("CREATE INDEX ON app.jobs (state)")
    setup.execute("""INSERT INTO app.jobs (state)
                     SELECT 'done' FROM generate_series(1, 5000)""")
    setup.execute("INSERT INTO app.jobs (state) VALUES ('ready'), ('ready'), ('running')")
    setup.execute("ANALYZE app.jobs")
    spec_file = tmp_path / "enum.toml"
    spec_file.write_text(SPEC_TOML)
    assert main(["snapshot", "--json", "--exact", "--dsn", dsn, "--queue", str(spec_file)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["count_mode"] == "index"
    assert (data["counts"]["ready"], data["counts"]["running"], data["counts"]["done"]) == (
        2,
        1,
        5000,
    )
