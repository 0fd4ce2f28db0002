"""Which engine a URL or connection string names, and the one-line refusals of the rest."""

from __future__ import annotations

import pytest

from sqlqueue.connection import parse_connection
from sqlqueue.errors import ConfigError


@pytest.mark.parametrize(
    ("url", "dialect"),
    [
        ("sqlite:///{tmp}/q.db", "sqlite"),
        ("postgresql://db:5432/ops", "postgres"),
        ("postgres://db/ops", "postgres"),
        ("sqlserver://db:1433/ops", "sqlserver"),
        ("mssql://db/ops", "sqlserver"),
    ],
)
def test_a_url_scheme_names_its_engine(url, dialect, tmp_path):
    assert parse_connection(url.format(tmp=tmp_path)).dialect == dialect


def test_a_server_url_keeps_host_port_database_and_driver_options():
    spec = parse_connection("sqlserver://app:pw@db:1433/queues?Encrypt=yes")
    assert spec.params == (("host", "db"), ("database", "queues"), ("port", "1433"), ("Encrypt", "yes"))
    assert (spec.user, spec.password) == ("app", "pw")


def test_a_connection_string_is_refused_for_an_engine_that_takes_none():
    with pytest.raises(ConfigError, match=r"'dialect' = 'sqlite' is not allowed with 'connectionString': use 'post"):
        parse_connection(None, "Data Source=q.db", "sqlite")


def test_a_sqlite_url_without_a_file_is_refused():
    with pytest.raises(ConfigError, match="needs a file path that every Spark process can open"):
        parse_connection("sqlite://:memory:")


def test_a_server_url_without_a_database_is_refused():
    with pytest.raises(ConfigError, match=r"expected postgresql://host\[:port\]/database"):
        parse_connection("postgresql://db:5432/")


@pytest.mark.parametrize(
    ("url", "named", "closest"),
    [
        ("sqlserver://h:1433/db?TrustServerCertficate=yes", "TrustServerCertficate", "TrustServerCertificate"),
        ("postgresql://h:5432/db?ssl_mode=require", "ssl_mode", "sslmode"),
    ],
)
def test_a_misspelled_url_keyword_is_refused_by_name_with_the_closest_known_one(url, named, closest):
    with pytest.raises(ConfigError, match=rf"keyword '{named}', which .* \(did you mean {closest}\?\); known keywords"):
        parse_connection(url)


def test_the_keywords_drivers_document_pass():
    spec = parse_connection("sqlserver://h:1433/db?TDS_Version=7.4&ClientCharset=UTF-8&Encrypt=yes&driver=FreeTDS")
    assert dict(spec.params)["TDS_Version"] == "7.4"
