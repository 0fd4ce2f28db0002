"""profile.filter is one boolean expression in the table's dialect, or one line that says what is wrong."""

from __future__ import annotations

import pytest

from sqlqueue.dialects import dialect_for
from sqlqueue.errors import ConfigError
from sqlqueue.filters import check_filter
from sqlqueue.identifiers import TableName
from sqlqueue.options import SinkOptions, SourceOptions

ENGINES = ("sqlserver", "postgres", "sqlite")
URLS = {
    "sqlserver": "sqlserver://db.example:1433/jobs?TrustServerCertificate=yes",
    "postgres": "postgresql://db.example:5432/jobs",
    "sqlite": "sqlite:///tmp/queue.db",
}

# (filter, what the refusal says), on every engine.
REFUSED = [
    ("1=1) OR (1=1", "it closes a parenthesis it did not open"),
    ("(Type = 'Sync')) OR ((1=1)", "it closes a parenthesis it did not open"),
    ("(Type = 'Sync'", "it leaves a parenthesis open"),
    ("Type = 'Sync'; DELETE FROM x", "it holds a ';'"),
    ("Type = 'Sync' -- x", "it holds a comment"),
    ("Type = 'Sync' /* x */", "it holds a comment"),
    ("/* */", "it holds a comment"),
    ("SELECT 1", "it is a statement (SELECT ...)"),
    ("DELETE FROM jobs", "it is a statement (DELETE ...)"),
    ("UPDATE jobs SET Status = 'Pending'", "it is a statement (UPDATE ...)"),
    ("", "it is empty"),
    ("   ", "it is empty"),
    ("1", "it is a value (1), not a condition"),
    ("AttemptNum + 1", "not a condition"),
    ("(SELECT 1)", "not a condition"),
    ("Type = :consumer", "it holds a parameter or variable (:consumer)"),
    ("Type = ?", "it holds a parameter or variable (?)"),
    ("Type = @type", "it holds a parameter or variable (@type)"),
    ("Type = 'Sync' Step = 1", "it does not read as one expression from 'Step' on"),
    ("Type = 'Sync' UNION SELECT 1", "it does not read as one expression from 'UNION' on"),
    ("Type = 'Sync", "it does not read as SQL"),
    ("EXISTS (WITH d AS (DELETE FROM x RETURNING 1) SELECT 1 FROM d)", "a subquery in it does more than read (DELETE)"),
    ("Type IN (SELECT t INTO z FROM y)", "a subquery in it does more than read (INTO)"),
]
ACCEPTED = [
    "Type = 'Sync'",
    "Type IN ('Sync', 'Mail') AND Step IS NULL",
    "Type LIKE 'Sy%' OR (Step IS NOT NULL AND NOT Step = 2)",
    "Type LIKE '%:orders' AND Payload <> 'a;b -- /* )'",  # what looks like structure inside a literal is text
    "Type IN (SELECT t FROM types WHERE t <> 'Mail')",  # a subquery that reads
    "EXISTS (SELECT 1 FROM types WHERE types.t = Type)",
    "ScheduledFor BETWEEN '2026-01-01' AND '2026-12-31'",
    "((Type = 'Sync'))",
]
# Each engine's own spelling of names and text.
ACCEPTED_ON = {
    "sqlserver": ["Type = N'Sync'", "[Type] = N'Sync' AND [Step] IN (1, 2)", "Type LIKE 'S!%' ESCAPE '!'"],
    "postgres": ["\"Type\" = 'Sync'", '"Type" ~ \'^S\' AND "ScheduledFor"::date <= CURRENT_DATE'],
    "sqlite": ["\"Type\" = 'Sync'", "[Type] GLOB 'S*'"],
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("condition", "says"), REFUSED)
def test_a_filter_that_is_not_one_boolean_expression_is_refused_saying_why(engine, condition, says):
    with pytest.raises(ConfigError) as refused:
        check_filter(condition, engine)
    message = str(refused.value)
    assert message.startswith(f"option 'profile.filter' = {condition!r} is not allowed: ")
    assert says in message and "\n" not in message


@pytest.mark.parametrize("engine", ["sqlserver", "postgres"])
def test_a_procedure_call_is_refused_as_a_statement(engine):
    with pytest.raises(ConfigError, match=r"it is a statement \(EXEC \.\.\.\), not a condition"):
        check_filter("EXEC sp_who", engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("condition", ACCEPTED)
def test_one_boolean_expression_is_accepted_as_written(engine, condition):
    assert check_filter(f"  {condition}\n", engine) == condition


@pytest.mark.parametrize(("engine", "condition"), [(e, c) for e, cs in ACCEPTED_ON.items() for c in cs])
def test_each_engines_own_spelling_is_accepted(engine, condition):
    assert check_filter(condition, engine) == condition


def test_the_refusal_names_the_option_the_fault_and_what_to_give():
    with pytest.raises(ConfigError) as refused:
        check_filter("1=1) OR (1=1", "sqlserver")
    assert str(refused.value) == (
        "option 'profile.filter' = '1=1) OR (1=1' is not allowed: it closes a parenthesis it did not open; "
        "give one boolean expression on the table's columns, e.g. Type = 'Sync'"
    )


def test_a_filter_is_read_in_its_engines_dialect():
    condition = "Type ~ '^S'"  # a regular expression match on PostgreSQL; no T-SQL operator
    assert check_filter(condition, "postgres") == condition
    with pytest.raises(ConfigError, match="it does not read as one expression"):
        check_filter(condition, "sqlserver")


@pytest.mark.parametrize("parse", [SourceOptions.parse, SinkOptions.parse])
def test_options_refuse_a_bad_filter_before_anything_connects_and_never_show_the_password(parse):
    options = {
        "url": URLS["sqlserver"],
        "user": "etl",
        "password": "s3cret-pw",
        "queue": "dbo.SyncQueue",
        "profile": "relational",
        "profile.filter": "Type = 'Sync'; DROP TABLE dbo.SyncQueue",
    }
    with pytest.raises(ConfigError) as refused:
        parse(options)
    assert "option 'profile.filter'" in str(refused.value) and "it holds a ';'" in str(refused.value)
    assert "s3cret-pw" not in str(refused.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_options_take_a_good_filter_as_written(engine):
    options = {"url": URLS[engine], "queue": "jobs", "profile": "relational", "profile.filter": "Type = 'Sync'"}
    profile = SourceOptions.parse(options).address.profile
    assert profile is not None and profile.filter == "Type = 'Sync'"


def test_an_empty_filter_option_sets_no_filter_as_an_empty_column_option_unsets_it():
    options = {"url": URLS["sqlite"], "queue": "jobs", "profile": "relational", "profile.filter": ""}
    profile = SourceOptions.parse(options).address.profile
    assert profile is not None and profile.filter is None


@pytest.mark.parametrize("engine", ENGINES)
def test_a_colon_before_a_word_in_a_filters_literal_is_no_parameter_of_ours(engine):
    dialect = dialect_for(engine)
    probe = dialect.adoption.filter_probe(TableName("jobs"), "Type = 'job :orders'")
    assert probe.names == () and "'job :orders'" in probe.sql


def test_postgresql_statements_double_a_filters_percent_for_psycopg():
    probe = dialect_for("postgres").adoption.filter_probe(TableName("jobs"), "Type LIKE 'Sy%'")
    assert "LIKE 'Sy%%'" in probe.sql
