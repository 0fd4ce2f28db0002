"""Write an odbcinst.ini that registers this machine's ODBC drivers, with unixODBC's connection pooling on for
the ones named.

    python -m tests.support.pooled_odbcinst DIR DRIVER...   # then ODBCSYSINI=DIR for the processes that pool

`make test-babelfish` runs the Driver 18 suite and FreeTDS's with it. Babelfish starts a PostgreSQL backend
per connection, and a backend's first catalog query (sqlqueue reads a table's columns from sys.columns
when it opens a queue) costs about a second there while its caches fill: tests/conformance/test_claims.py
took 144 s on a connection per queue, 29.5 s with pooled connections. mssql-python pools by default
(its Connection enables its pool on first connect), so its run already did. Pooling is the driver
manager's (unixODBC reads Pooling from the [ODBC] section, and pools a driver whose CPTimeout is set),
so the drivers under test are the same; pyodbc asks for it by default (pyodbc.pooling). A pool hands a
connection out again as it was left: FreeTDS's, after an error that ended its transaction (on Babelfish
every error does), once came back with autocommit off and failed its next connect with 3903, until
sqlqueue turned autocommit back on in that case too (SqlServerEngine._autocommit_again).
"""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

IDLE_SECONDS = "120"  # how long an unused pooled connection stays open


def system_odbcinst() -> Path:
    """Where unixODBC reads its drivers from here (`odbcinst -j`: DRIVERS)."""
    listing = subprocess.run(["odbcinst", "-j"], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        if line.startswith("DRIVERS"):
            return Path(line.split(":", 1)[1].strip())
    raise RuntimeError("odbcinst -j names no DRIVERS file")


def pooled(source: Path, drivers: list[str]) -> configparser.ConfigParser:
    ini = configparser.ConfigParser(interpolation=None)
    ini.optionxform = str  # type: ignore[assignment,method-assign]  # keep the keys' case, as unixODBC writes them
    ini.read(source)
    for driver in drivers:
        ini[driver]["CPTimeout"] = IDLE_SECONDS
    if not ini.has_section("ODBC"):
        ini.add_section("ODBC")
    ini["ODBC"]["Pooling"] = "Yes"
    return ini


def main(folder: str, drivers: list[str]) -> None:
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "odbcinst.ini", "w") as out:
        pooled(system_odbcinst(), drivers).write(out, space_around_delimiters=False)
    (target / "odbc.ini").touch()  # ODBCSYSINI moves the system DSN file too; sqlqueue names no DSN


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
