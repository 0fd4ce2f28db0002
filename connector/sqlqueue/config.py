"""Configuration files for jobs and the ``sqlqueue`` command: TOML, overrides, secrets, validation.

    [connection]                        # shared by [source] and [sink] unless they set their own
    url = "postgresql://db:5432/ops"
    user = "queue_reader"
    passwordEnv = "SQLQUEUE_PASSWORD"   # the password comes from this environment variable

    [source]                            # options of the sqlqueue source (sqlqueue.options)
    queue = "orders"
    maxRowsPerTrigger = 50000

    [sink]                              # options of the sqlqueue sink
    queue = "orders_enriched"

    [job]                               # settings of the job itself (JOB_SETTINGS)
    checkpointLocation = "/checkpoints/orders"

    [spark]                             # Spark configuration, spark.* keys
    "spark.sql.shuffle.partitions" = "8"

    [logging]
    level = "INFO"

Several files merge in order, later keys winning; ``section.key=value`` overrides come last. Keys
use the options' own names (matched ignoring case). Everything is checked here, before Spark
starts, and every problem is a one-line ``ConfigError`` naming the file, section and key.
Passwords are refused in files and overrides: they come only from the environment.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .connection import SCHEMES
from .errors import ConfigError
from .options import OPTIONS, SINK, SOURCE, SinkOptions, SourceOptions, refuse_retired

CONNECTION, JOB, SPARK, LOGGING = "connection", "job", "spark", "logging"
PASSWORD_ENV = "passwordEnv"
CONNECTION_KEYS = ("url", "connectionString", "dialect", "user", PASSWORD_ENV)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
ROLE_SECTIONS = (SOURCE, SINK)
SECTIONS = (CONNECTION, SOURCE, SINK, JOB, SPARK, LOGGING)


@dataclass(frozen=True)
class Setting:
    """A key of the [job] or [logging] section: its default and meaning (docs/reference.md lists them)."""

    key: str
    default: Any
    doc: str


JOB_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "checkpointLocation",
        None,
        "Folder of the streaming query's checkpoint; required. Restarting "
        "with the same folder continues where the query stopped.",
    ),
    Setting("target", None, "queue-to-delta: the Delta table, a path or a table name."),
    Setting("input", None, "table-to-queue: the table to stream from, a path or a table name."),
    Setting("inputFormat", "delta", "table-to-queue: the format of input (any streaming-capable format)."),
    Setting(
        "trigger",
        "availableNow",
        "availableNow (drain what is there, then stop), once, or "
        "processingTime:<interval> (run continuously, e.g. processingTime:10 seconds).",
    ),
    Setting(
        "transform",
        None,
        "A function module:function that takes the DataFrame and returns the one to "
        "write; the module must be importable (e.g. shipped with --py-files).",
    ),
    Setting(
        "mergeOn",
        None,
        "queue-to-delta: write by a Delta MERGE on these comma-separated key columns "
        "(insert when not matched) instead of an idempotent append; covers rows a consumer whose lease "
        "expired wrote before another consumer took them.",
    ),
    Setting("queryName", None, "Name of the streaming query in Spark's UI and logs."),
)
LOGGING_SETTINGS: tuple[Setting, ...] = (
    Setting("level", "INFO", f"Level of sqlqueue's Python log lines: {', '.join(LOG_LEVELS)}."),
    Setting("sparkLevel", "WARN", "Level of Spark's own log lines (SparkContext.setLogLevel)."),
)
_SETTINGS = {JOB: {s.key.lower(): s for s in JOB_SETTINGS}, LOGGING: {s.key.lower(): s for s in LOGGING_SETTINGS}}


def valid_keys(section: str) -> dict[str, str]:
    """{lowercased key: documented spelling} of the keys a section takes ([spark] takes any spark.*)."""
    if section in _SETTINGS:
        keys = [s.key for s in _SETTINGS[section].values()]
    elif section == CONNECTION:
        keys = list(CONNECTION_KEYS)
    else:
        keys = [o.key for o in OPTIONS if section in o.roles and o.key != "password"] + [PASSWORD_ENV]
    return {k.lower(): k for k in keys}


def canonical_key(section: str, key: str) -> str:
    """The documented spelling of ``key`` in ``section``, or a ConfigError listing the valid keys."""
    if section == SPARK:
        if not key.lower().startswith("spark."):
            raise ConfigError(f"[spark] key {key!r} is not a Spark setting: Spark settings start with 'spark.'")
        return key
    if key.lower() == "password":
        raise ConfigError(
            f"[{section}] password: a password does not belong in a configuration file or on the command "
            f"line; export it in an environment variable and name that variable with {PASSWORD_ENV}"
        )
    refuse_retired(key)
    valid = valid_keys(section)
    if key.lower() not in valid:
        raise ConfigError(f"[{section}] unknown key {key!r}; valid keys are: {', '.join(sorted(valid.values()))}")
    return valid[key.lower()]


def _text(value: Any) -> str:
    """TOML values as Spark option strings (true, not True)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        raise ConfigError(f"value {value!r} is not allowed: give a string, number or boolean")
    return str(value)


def _merge(into: dict[str, dict[str, str]], source: str, data: Mapping[str, Any]) -> None:
    for section, values in data.items():
        if section not in SECTIONS:
            raise ConfigError(f"{source}: unknown section [{section}]; valid sections are: {', '.join(SECTIONS)}")
        if not isinstance(values, Mapping):
            raise ConfigError(f"{source}: {section} must be a section ([{section}]), not a value")
        for key, value in values.items():
            try:
                into[section][canonical_key(section, key)] = _text(value)
            except ConfigError as exc:
                raise ConfigError(f"{source}: {exc}") from None


def read_file(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"configuration file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"configuration file {path} cannot be read: {exc.strerror}") from None


def parse_override(text: str) -> tuple[str, str, str]:
    """``section.key=value`` as (section, key, value)."""
    target, sep, value = text.partition("=")
    section, dot, key = target.strip().partition(".")
    if not sep or not dot or not key:
        raise ConfigError(
            f"override {text!r} is not allowed: use section.key=value, e.g. source.maxRowsPerTrigger=50000"
        )
    return section, key, value.strip()


def _resolved(values: Mapping[str, str], environ: Mapping[str, str], need_secrets: bool) -> dict[str, str]:
    """A role section's options with the password from the environment variable it names."""
    options = dict(values)
    variable = options.pop(PASSWORD_ENV, None)
    if variable is not None and (need_secrets or variable in environ):
        if variable not in environ:
            raise ConfigError(
                f"environment variable {variable} is not set ({PASSWORD_ENV} names it "
                "for the database password): export it before running"
            )
        options["password"] = environ[variable]
    return options


@dataclass(frozen=True)
class Config:
    """A checked configuration. Role sections hold raw option strings for Spark, password included,
    so they stay out of repr."""

    source: dict[str, str] = field(repr=False)
    sink: dict[str, str] = field(repr=False)
    job: dict[str, str]
    spark: dict[str, str]
    logging: dict[str, str]

    def setting(self, key: str) -> str | None:
        return self.job.get(key, _SETTINGS[JOB][key.lower()].default)

    def required(self, key: str) -> str:
        value = self.setting(key)
        if not value:
            raise ConfigError(f"[job] {key} is required: {_SETTINGS[JOB][key.lower()].doc}")
        return value

    def source_options(self) -> SourceOptions:
        return SourceOptions.parse(self.source)

    def sink_options(self) -> SinkOptions:
        return SinkOptions.parse(self.sink)

    def apply_logging(self) -> None:
        level = self.logging.get("level", "INFO").upper()
        logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("sqlqueue").setLevel(level)


def load_config(
    paths: Sequence[str],
    overrides: Iterable[str] = (),
    roles: Iterable[str] = (),
    job_keys: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    need_secrets: bool = True,
) -> Config:
    """Merge files and overrides, resolve secrets and check every section a caller uses.

    ``roles`` are the sqlqueue sections the caller reads (source, sink): they must parse as those
    options. ``job_keys`` are the [job] settings it takes; any other [job] key is refused.
    ``need_secrets`` False lets a caller that connects to nothing (printing DDL) go without them.
    """
    environ = os.environ if environ is None else environ
    merged: dict[str, dict[str, str]] = {s: {} for s in SECTIONS}
    for path in paths:
        _merge(merged, path, read_file(path))
    for text in overrides:
        section, key, value = parse_override(text)
        _merge(merged, f"--set {section}.{key}", {section: {key: value}})
    _check_job_keys(merged[JOB], list(job_keys))
    level = merged[LOGGING].get("level", "INFO").upper()
    if level not in LOG_LEVELS:
        raise ConfigError(f"[logging] level = {level!r} is not allowed: one of {', '.join(LOG_LEVELS)}")
    sections = {}
    for role in ROLE_SECTIONS:
        own = merged[role]
        inherited = _inherited(role, own, merged[CONNECTION])
        sections[role] = _resolved({**inherited, **own}, environ, need_secrets) if role in roles else {}
    config = Config(sections[SOURCE], sections[SINK], merged[JOB], merged[SPARK], merged[LOGGING])
    for role in roles:
        try:
            (config.source_options if role == SOURCE else config.sink_options)()
        except ConfigError as exc:
            raise ConfigError(f"[{role}] {exc}") from None
    return config


def _inherited(role: str, own: Mapping[str, str], connection: Mapping[str, str]) -> dict[str, str]:
    """What a role section takes from [connection]: all of it; or where the section names an address of its
    own on the same engine (a url, as the command line's --url gives), the login alone, so that the other
    address keeps the configured login rather than connect with none. A url naming another user than
    [connection] is refused: [connection]'s password is not that user's. An address on another engine
    takes nothing."""
    if not {"url", "connectionString"} & set(own):
        return dict(connection)
    if _engine(own) is None or _engine(own) != _engine(connection):
        return {}
    login = {k: v for k, v in connection.items() if k in ("user", PASSWORD_ENV) and k not in own}
    named = urlsplit(own["url"]).username if "url" in own else None
    configured = login.get("user")
    if named is not None and "user" not in own:
        if configured is not None and unquote(named) != configured:
            raise ConfigError(
                f"[{role}] url names user {unquote(named)!r} while [connection] names {configured!r}: that user "
                f"would log in with [connection]'s password; drop the user from the url, or give [{role}] its own "
                f"user and {PASSWORD_ENV}"
            )
        login.pop("user", None)
    return login


def _engine(section: Mapping[str, str]) -> str | None:
    """The engine a section's address names (its url's scheme, or its dialect), None for none or a file."""
    if "url" in section:
        scheme = SCHEMES.get(section["url"].partition(":")[0].lower())
        return scheme.dialect if scheme is not None and scheme.dialect != "sqlite" else None
    found = SCHEMES.get(section.get("dialect", "").lower())
    return found.dialect if found is not None else None


def _check_job_keys(job: Mapping[str, str], accepted: list[str]) -> None:
    extra = [k for k in job if k not in accepted]
    if extra:
        raise ConfigError(
            f"[job] key(s) {', '.join(extra)} are not used by this job; it takes: {', '.join(accepted) or 'none'}"
        )
