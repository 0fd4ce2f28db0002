"""Where the queue lives: a URL (or driver connection string) turned into a dialect and a connect call.

Passwords are kept out of every string this module produces: ``ConnectionSpec`` never shows one in
its repr or ``display``, and ``redact`` scrubs them from any text (driver errors included).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from .errors import ConfigError

_SECRET_IN_TEXT = re.compile(r"(?i)\b(pwd|password)\s*=\s*(\{[^}]*\}|[^;\s&]*)")
_SECRET_IN_URL = re.compile(r"(//[^:/@\s]+:)[^@/\s]+@")


def redact(text: str, *secrets: str | None) -> str:
    """Remove passwords from text: key=value forms, user:password@ in URLs, and known secret values."""
    text = _SECRET_IN_TEXT.sub(lambda m: f"{m.group(1)}=***", text)
    text = _SECRET_IN_URL.sub(r"\1***@", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class ConnectionSpec:
    """A database address. ``params`` are dialect-specific; ``password`` never appears in repr."""

    dialect: str
    params: tuple[tuple[str, str], ...]
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    raw: str | None = field(default=None, repr=False)  # a driver connection string given verbatim

    @property
    def display(self) -> str:
        """A human-readable address without secrets, for logs and errors."""
        if self.raw is not None:
            return f"{self.dialect}:{redact(self.raw, self.password)}"
        shown = ";".join(f"{k}={v}" for k, v in self.params)
        return f"{self.dialect}:{shown}" + (f" (user {self.user})" if self.user else "")

    def param(self, key: str, default: str | None = None) -> str | None:
        return dict(self.params).get(key, default)

    @property
    def cache_key(self) -> tuple:
        return (self.dialect, self.params, self.user, self.password, self.raw)


def parse_connection(
    url: str | None,
    connection_string: str | None = None,
    dialect: str | None = None,
    user: str | None = None,
    password: str | None = None,
) -> ConnectionSpec:
    """Build a spec from either ``url`` or ``connectionString`` + ``dialect``."""
    if url and connection_string:
        raise ConfigError("options 'url' and 'connectionString' are exclusive: give one of them")
    if connection_string:
        scheme = SCHEMES.get((dialect or "").lower())
        if scheme is None or scheme.verbatim is None:
            allowed = " or ".join(f"{name!r} ({s.verbatim})" for name, s in SCHEMES.items() if s.verbatim)
            raise ConfigError(f"option 'dialect' = {dialect!r} is not allowed with 'connectionString': use {allowed}")
        return ConnectionSpec(scheme.dialect, (), user, password, raw=connection_string)
    if not url:
        raise ConfigError(
            "option 'url' is required: e.g. sqlite:///var/queues/jobs.db, "
            "postgresql://host:5432/db or sqlserver://host:1433/db"
        )
    name, sep, rest = url.partition(":")
    scheme = SCHEMES.get(name.lower())
    if not sep or scheme is None:
        raise ConfigError(
            f"option 'url' = {redact(url)!r} is not allowed: its scheme must be one of "
            f"{', '.join(sorted(SCHEMES))} (e.g. sqlite:///path/queue.db)"
        )
    return scheme.address(scheme.dialect, url, rest, user, password)


def _file_address(dialect: str, url: str, rest: str, user: str | None, password: str | None) -> ConnectionSpec:
    """scheme:///path: a database file every Spark process opens itself."""
    path = rest[2:] if rest.startswith("//") else rest
    if not path or path == ":memory:":
        raise ConfigError(
            f"option 'url' = {url!r} is not allowed: {dialect} needs a file path that every Spark "
            f"process can open, e.g. {dialect}:///tmp/queue.db"
        )
    # SQLite creates a missing file but not its folder, and then says only "unable to open database file".
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        problem = (
            "is a file, not a folder"
            if os.path.exists(folder)
            else "is missing: create it first (the engine creates the database file, not its folder)"
        )
        raise ConfigError(f"option 'url' = {url!r} is not allowed: the folder {folder} {problem}")
    return ConnectionSpec(dialect, (("path", path),))


def _server_address(dialect: str, url: str, rest: str, user: str | None, password: str | None) -> ConnectionSpec:
    """scheme://[user[:password]@]host[:port]/database[?driver options]."""
    parts = urlsplit(url)
    if not parts.hostname or not parts.path.strip("/"):
        raise ConfigError(
            f"option 'url' = {redact(url)!r} is not allowed: expected {parts.scheme}://host[:port]/database"
        )
    params = [("host", parts.hostname), ("database", unquote(parts.path.strip("/")))]
    if parts.port:
        params.append(("port", str(parts.port)))
    query = parse_qsl(parts.query)
    _check_keywords(dialect, [k for k, _ in query])
    params.extend(sorted(query))
    return ConnectionSpec(
        dialect,
        tuple(params),
        user or (unquote(parts.username) if parts.username else None),
        password or (unquote(parts.password) if parts.password else None),
    )


# The URL keywords a driver of the engine takes, so a misspelled one is refused by name rather than reach the
# driver, which ignores it or fails as something else (a certificate error for a misspelled
# TrustServerCertificate). SQL Server: Microsoft's ODBC Driver 18 ("DSN and Connection String Keywords and
# Attributes", learn.microsoft.com/sql/connect/odbc/dsn-connection-string-attribute), FreeTDS 1.3's ODBC
# driver (freetds.org/userguide/odbcconnattr.html) and mssql-python's allow-list of Driver 18's, with `driver`,
# which sqlqueue reads. PostgreSQL: libpq's parameter key words
# (postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS).
# fmt: off
SQLSERVER_KEYWORDS = (
    "driver", "Addr", "Address", "AnsiNPW", "APP", "ApplicationIntent", "AttachDBFileName", "Authentication",
    "AutoTranslate", "ClientCertificate", "ClientKey", "ColumnEncryption", "ConcatNullYieldsNull",
    "ConnectRetryCount", "ConnectRetryInterval", "ConnectTimeout", "Database", "Description", "DSN", "Encrypt",
    "Failover_Partner", "FailoverPartner", "FailoverPartnerSPN", "FileDSN", "GetDataExtensions",
    "HostnameInCertificate", "IpAddressPreference", "KeepAlive", "KeepAliveInterval", "KeystoreAuthentication",
    "KeystorePrincipalId", "KeystoreSecret", "Language", "LongAsMax", "MARS_Connection", "MultipleActiveResultSets",
    "MultiSubnetFailover", "PacketSize", "QuotedId", "Regional", "Replication", "RetryExec", "SaveFile", "Server",
    "ServerCertificate", "ServerSPN", "StatsLog_File", "StatsLogging", "TransparentNetworkIPResolution",
    "Trusted_Connection", "TrustServerCertificate", "UseFMTONLY", "WSID", "ClientCharset", "ConnectionTimeout",
    "DebugFlags", "DumpFile", "DumpFileAppend", "Encryption", "Port", "REALM", "Servername", "TDS_Version",
    "TextSize", "Timeout", "UseNTLMv2",
)
# fmt: on
# fmt: off
POSTGRES_KEYWORDS = (
    "application_name", "fallback_application_name", "connect_timeout", "client_encoding", "options", "keepalives",
    "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode",
    "sslmode", "requiressl", "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslkeylogfile",
    "sslpassword", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer",
    "ssl_min_protocol_version", "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service",
    "target_session_attrs", "load_balance_hosts", "require_auth", "channel_binding", "hostaddr", "passfile",
    "min_protocol_version", "max_protocol_version", "scram_client_key", "scram_server_key", "oauth_issuer",
    "oauth_client_id", "oauth_client_secret", "oauth_scope",
)
# fmt: on
KEYWORDS = {"sqlserver": SQLSERVER_KEYWORDS, "postgres": POSTGRES_KEYWORDS}


def _check_keywords(dialect: str, given: list[str]) -> None:
    known = KEYWORDS.get(dialect)
    if known is None:
        return
    by_lower = {k.lower(): k for k in known}
    for key in given:
        if key.lower() not in by_lower:
            close = difflib.get_close_matches(key.lower(), by_lower, n=1, cutoff=0.75)
            hint = f" (did you mean {by_lower[close[0]]}?)" if close else ""
            who = "no SQL Server driver knows" if dialect == "sqlserver" else "libpq does not know"
            raise ConfigError(
                f"option 'url' has keyword {key!r}, which {who}{hint}; known keywords: "
                f"{', '.join(sorted(known, key=str.lower))}"
            )


@dataclass(frozen=True)
class Scheme:
    """A URL scheme: the dialect it names, how its address reads, and what a verbatim driver
    connection string is for it (None: the engine takes none)."""

    dialect: str
    address: Callable[[str, str, str, str | None, str | None], ConnectionSpec]
    verbatim: str | None = None


SCHEMES = {
    "sqlite": Scheme("sqlite", _file_address),
    "postgresql": Scheme("postgres", _server_address, "a libpq conninfo"),
    "postgres": Scheme("postgres", _server_address, "a libpq conninfo"),
    "sqlserver": Scheme("sqlserver", _server_address, "an ODBC connection string"),
    "mssql": Scheme("sqlserver", _server_address, "an ODBC connection string"),
}
