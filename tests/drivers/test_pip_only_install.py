"""`pip install sqlqueue[mssql]` alone reaches SQL Server: what a serverless platform, where nothing can
be installed with apt, can do.

A fresh virtual environment gets this checkout with the ``mssql`` extra and nothing else (no pyodbc),
and connects to the recording TDS stub with a URL that names no driver, unixODBC's configuration
hidden (ODBCSYSINI and ODBCINI point at nothing). This machine does have the system's unixODBC
(FreeTDS needs it), so it cannot be uninstalled for the test; instead the test shows that the
connected process maps no ODBC library from outside the venv, and that ``ldd`` resolves every ODBC
library mssql-python's wheel carries inside the wheel.

It costs 45 s to 2 minutes on a shared 2-core machine, nearly all of it pip unpacking pyspark (320 MB), a
dependency of sqlqueue itself: hence the ``venv`` marker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.source_build import building_from_source
from tests.support.tds_server import TdsServer

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.venv

CONNECT = """
import json, sys
from sqlqueue.connection import parse_connection
from sqlqueue.dialects.sqlserver import SqlServerEngine

url = f"sqlserver://app@127.0.0.1:{sys.argv[1]}/queues?Encrypt=no"  # no ?driver=: sqlqueue chooses
conn = SqlServerEngine().connect(parse_connection(url, password="p"))
maps = {line.split()[-1] for line in open("/proc/self/maps") if "odbc" in line.lower()}
print(json.dumps({"pyodbc": "pyodbc" in sys.modules, "odbc_libraries": sorted(maps)}))
conn.close()
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("pip-only") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=120)
    with building_from_source():
        pip = subprocess.run(
            [str(home / "bin" / "pip"), "install", "-q", f"{ROOT}[mssql]"], capture_output=True, text=True, timeout=600
        )
    assert pip.returncode == 0, pip.stderr
    return home


def test_the_mssql_extra_alone_connects_with_no_odbc_library_from_outside_the_venv(venv, tmp_path):
    hidden = tmp_path / "no-odbc-config"
    hidden.mkdir()
    with TdsServer() as server:
        run = subprocess.run(
            [str(venv / "bin" / "python"), "-c", CONNECT, str(server.port)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,  # not the checkout: sqlqueue comes from the venv
            env={"PATH": "/usr/bin:/bin", "ODBCSYSINI": str(hidden), "ODBCINI": str(hidden / "odbc.ini")},
        )
        assert run.returncode == 0, run.stderr
        (login,) = server.logins
    seen = json.loads(run.stdout.splitlines()[-1])
    assert login.app == "MSSQL-Python" and (login.user, login.database) == ("app", "queues")
    assert not seen["pyodbc"]
    assert any("libmsodbcsql" in lib for lib in seen["odbc_libraries"])
    assert all(lib.startswith(str(venv)) for lib in seen["odbc_libraries"]), seen["odbc_libraries"]


def test_ldd_resolves_every_odbc_library_of_the_wheel_inside_the_wheel(venv):
    (libs,) = venv.glob("lib/python3*/site-packages/mssql_python_odbc/libs/linux/debian_ubuntu/*/lib")
    for library in sorted(libs.glob("*.so*")):
        linked = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
        assert "not found" not in linked, f"{library.name}: {linked}"
        for line in linked.splitlines():
            if "odbc" in line.split("=>")[0]:
                assert str(libs) in line, f"{library.name} links {line.strip()} from outside the wheel"
