"""What every spark-submit job in jobs/ shares: arguments, configuration, session, query start.

A job script defines its pipeline (a function from the checked ``Config`` and a SparkSession to a
started streaming query) and a ``Job`` describing what it reads; ``run`` does the rest. Bad
configuration ends before Spark starts, as one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import DataStreamReader, DataStreamWriter, StreamingQuery

from ..config import JOB, Config, load_config
from ..errors import ConfigError, SqlQueueError
from ..options import SINK, SOURCE
from ..queue import Queue
from .checkpoint import clear_interrupted_start
from .session import REMOTE, build_session

BAD_CONFIG = 2
_INTERVAL = re.compile(r"^processingtime\s*:\s*(.+)$", re.IGNORECASE)
Pipeline = Callable[[Config, SparkSession], StreamingQuery]


@dataclass(frozen=True)
class Job:
    """A job's name, its help text, the sqlqueue sections it reads, the [job] settings it takes and
    those it cannot run without.

    ``flags`` are command-line shortcuts for [job] settings, e.g. {"--merge-on": "mergeOn"}.
    """

    name: str
    description: str
    roles: tuple[str, ...]
    settings: tuple[str, ...]
    required: tuple[str, ...] = ("checkpointLocation",)
    flags: dict[str, str] = field(default_factory=dict)


def arguments(job: Job) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=job.name,
        description=job.description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Configuration files merge in order; --set overrides come last. Keys and sections: see the "
        "configuration reference, docs/reference.md. Exit status: 0 done, 2 bad configuration, 1 the query failed.",
    )
    parser.add_argument(
        "-c",
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        required=True,
        help="a TOML configuration file (repeat to layer, e.g. conf/postgres.toml conf/spark-local.toml)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        dest="overrides",
        help="override one key, e.g. --set source.maxRowsPerTrigger=50000 (repeatable)",
    )
    parser.add_argument(
        "--remote",
        metavar="URL",
        help="run on Spark Connect: sc://host:port, or local[N] to start a server in this process "
        "(shortcut for --set spark.spark.remote=URL; SPARK_REMOTE works too)",
    )
    for flag, key in job.flags.items():
        parser.add_argument(flag, metavar=key.upper(), dest=key, help=f"shortcut for --set job.{key}=...")
    return parser


def parse_trigger(text: str) -> dict[str, Any]:
    """The [job] trigger setting as DataStreamWriter.trigger keyword arguments."""
    lowered = text.strip().lower()
    if lowered == "availablenow":
        return {"availableNow": True}
    if lowered == "once":
        return {"once": True}
    match = _INTERVAL.match(text.strip())
    if match:
        return {"processingTime": match.group(1).strip()}
    raise ConfigError(
        f"[job] trigger = {text!r} is not allowed: availableNow, once or processingTime:<interval> "
        "(e.g. processingTime:10 seconds)"
    )


def load_transform(path: str | None) -> Callable[[DataFrame], DataFrame]:
    """The [job] transform hook ``module:function``; without one, the DataFrame as it is."""
    if not path:
        return lambda df: df
    module_name, sep, function_name = path.partition(":")
    if not sep or not module_name or not function_name:
        raise ConfigError(f"[job] transform = {path!r} is not allowed: use module:function, e.g. my_jobs.enrich:orders")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except ImportError as exc:
        raise ConfigError(f"[job] transform: module {module_name!r} cannot be imported ({exc})") from None
    except AttributeError:
        raise ConfigError(f"[job] transform: module {module_name!r} has no function {function_name!r}") from None
    if not callable(function):
        raise ConfigError(f"[job] transform: {path} is not a function")
    return function


def check_queues(config: Config, roles: Sequence[str]) -> None:
    """Reach each queue before Spark starts: a wrong address, login or table name fails in one line."""
    for role in roles:
        options = config.source_options() if role == SOURCE else config.sink_options()
        queue = Queue(options.address.connection, options.address.table, options.address.profile)
        try:
            queue.require(*options.needs)
            queue.columns()
        finally:
            queue.close()


def queue_stream(spark: SparkSession, config: Config) -> DataFrame:
    reader: DataStreamReader = spark.readStream.format("sqlqueue").options(**config.source)
    return reader.load()


def start(writer: DataStreamWriter, config: Config) -> StreamingQuery:
    """Start a query with the [job] checkpoint, trigger and name."""
    checkpoint = config.required("checkpointLocation")
    clear_interrupted_start(checkpoint)
    writer = writer.option("checkpointLocation", checkpoint)
    writer = writer.trigger(**parse_trigger(config.required("trigger")))
    name = config.setting("queryName")
    return (writer.queryName(name) if name else writer).start()


def into_queue(stream: DataFrame, config: Config) -> StreamingQuery:
    """The sqlqueue sink: exactly once by its ledger under the query's id."""
    return start(stream.writeStream.format("sqlqueue").options(**config.sink), config)


def prepare(job: Job, argv: Sequence[str]) -> Config:
    args = arguments(job).parse_args(argv)
    flags = [f"{JOB}.{key}={getattr(args, key)}" for key in job.flags.values() if getattr(args, key) is not None]
    flags += [f"spark.{REMOTE}={args.remote}"] if args.remote else []
    config = load_config(args.config, [*args.overrides, *flags], roles=job.roles, job_keys=job.settings)
    parse_trigger(config.required("trigger"))
    for key in job.required:
        config.required(key)
    load_transform(config.setting("transform"))
    return config


def run(job: Job, pipeline: Pipeline, argv: Sequence[str] | None = None) -> int:
    """Check everything, start the pipeline and wait for it; the exit status."""
    try:
        config = prepare(job, sys.argv[1:] if argv is None else argv)
        config.apply_logging()
        check_queues(config, [r for r in job.roles if r in (SOURCE, SINK)])
        spark = build_session(
            job.name, master=None, conf=config.spark, log_level=config.logging.get("sparkLevel", "WARN")
        )
    except SqlQueueError as exc:
        print(f"{job.name}: error: {exc}", file=sys.stderr)
        return BAD_CONFIG
    # A failed query raises here with Spark's own report, and the process exits non-zero.
    pipeline(config, spark).awaitTermination()
    return 0
