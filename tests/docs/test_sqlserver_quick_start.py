"""The SQL Server quick start (docs/getting-started.md) runs as written against a live server: each of its
blocks, in order, with the server's address and login in place of the page's placeholders, the queue
under a name of this run's own, and /tmp/sqlqueue a folder of the test's own. On Babelfish, which cannot
run the ordered claims (tests/support/babelfish.py), the queue is made and claimed in heap order, as the
other tests whose subject is not the order do."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from deltalake import DeltaTable

from tests.support.docs import SANDBOXED, examples
from tests.support.engines import Engine, fresh_name
from tests.support.golden import ROOT

pytestmark = pytest.mark.sqlserver
PAGE = ROOT / "docs" / "getting-started.md"
LINKED = ("jobs", "sql", "connector", ".venv", ".cache")
PLACEHOLDERS = {"address": "db.example.com:1433/ops?Encrypt=yes", "user": "sqlqueue_connector"}


def blocks() -> list[str]:
    found = [e.source for e in examples(PAGE) if e.on_sqlserver]
    assert len(found) >= 3, "docs/getting-started.md has lost its SQL Server quick start"
    return found


def in_place(text: str, engine: Engine, folder: Path, table: str) -> str:
    """A block with this server's address, login and password, and this run's folder and table."""
    url = urlsplit(engine.options["url"])
    address = f"{url.hostname}:{url.port or 1433}{url.path}?{url.query or urlencode({'Encrypt': 'yes'})}"
    text = text.replace(PLACEHOLDERS["address"], address).replace(PLACEHOLDERS["user"], engine.options["user"])
    text = text.replace("change-me", engine.options["password"]).replace("dbo.orders", f"dbo.{table}")
    if engine.babelfish:  # its gap: no UPDATE through a CTE, so no ordered claim
        login = 'passwordEnv = "SQLQUEUE_PASSWORD"\n'
        text = text.replace(f"{login}TOML", f'{login}[source]\norder = "heap"\nTOML')
    return text.replace(SANDBOXED, str(folder))


def test_the_sql_server_quick_start_runs_as_written(engine, tmp_path):
    if engine.name != "sqlserver":
        pytest.skip("the SQL Server quick start needs a SQL Server")
    if "user" not in engine.options or "password" not in engine.options:
        pytest.skip("the quick start logs in with a user and a password: give them in the sqlserver:// URL")
    table = fresh_name("qs")
    folder = tmp_path / "sqlqueue"
    folder.mkdir()
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    (folder / "conf").mkdir()
    for conf in (ROOT / "conf").rglob("*.toml"):
        target = folder / "conf" / conf.relative_to(ROOT / "conf")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(conf.read_text())
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SQLQUEUE_TEST_")}
    script = "\n".join(in_place(block, engine, folder, table) for block in blocks())  # one shell, top to bottom
    done = subprocess.run(
        ["bash", "-eu", "-o", "pipefail", "-x", "-c", script],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    shown = done.stderr.replace(engine.options["password"], "***")
    assert done.returncode == 0, f"the quick start failed:\n{done.stdout[-3000:]}\n{shown[-5000:]}"
    assert len(DeltaTable(str(folder / "orders-delta")).to_pyarrow_table()) == 2000
