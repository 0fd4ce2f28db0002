"""sqlqueue adopt and doctor on a table sqlqueue did not create, on every engine."""

from __future__ import annotations

import json

import pytest

from sqlqueue import cli
from sqlqueue.identifiers import TableName
from sqlqueue.testing import designs
from tests.support import user_tables
from tests.support.engines import config_file


@pytest.fixture
def adopt(engine, tmp_path, monkeypatch, capsys):
    """``adopt(command, *args)`` -> (exit status, stdout, stderr) against a seed-004 table not adopted yet."""
    queue = user_tables.relational(engine, adopt=False)
    conf = config_file(engine, tmp_path, monkeypatch)

    def invoke(command: str, *args: str) -> tuple[int, str, str]:
        status = cli.main([command, "-c", conf, "--queue", str(queue.table), *args])
        out, err = capsys.readouterr()
        return status, out, err

    def apply_relational() -> None:
        """Adopt the table with the relational profile, failing here with the command's own error: a later
        step's "not adopted yet" would hide it (and the Babelfish runs' catalog-race reruns match on it)."""
        status, _, err = invoke("adopt", "--set", "source.profile=relational", "--apply")
        assert status == 0, err

    invoke.queue = queue
    invoke.apply_relational = apply_relational
    return invoke


def claims_table_exists(queue) -> bool:
    claims = queue.dialect.lifecycle.claims_table(queue.table)
    return bool(queue.fetch(queue.dialect.schema.table_columns(claims), queue.catalog_names(claims)))


def test_adopt_proposes_a_profile_read_from_the_tables_columns(adopt):
    status, out, err = adopt("adopt")
    assert status == 0, err
    assert '"profile" = "relational"' in out
    assert '"profile.key" = "enqueuedat"' in out.lower()
    assert not claims_table_exists(adopt.queue)


def test_adopt_with_a_profile_prints_the_ddl_it_needs_and_changes_nothing(adopt):
    status, out, err = adopt("adopt", "--set", "source.profile=relational")
    assert status == 0 and "_sqlqueue_claims" in out and "fits profile relational" in out, err
    assert "ix_" in out  # no index leads with ScheduledFor: the one it proposes
    assert not claims_table_exists(adopt.queue)


def test_adopt_apply_creates_the_claims_table_and_leaves_the_table_alone_without_index(adopt):
    status, out, err = adopt("adopt", "--set", "source.profile=relational", "--apply")
    assert status == 0 and "is adopted" in out, err
    assert claims_table_exists(adopt.queue)
    status, out, err = adopt("doctor", "--set", "source.profile=relational")
    assert status == 1 and "PROBLEM  claim index" in out and "OK       adopted" in out, err


def test_adopt_apply_index_gives_the_claim_an_index_and_the_doctor_is_content(adopt):
    assert adopt("adopt", "--set", "source.profile=relational", "--apply", "--index")[0] == 0
    status, out, err = adopt("doctor", "--set", "source.profile=relational")
    assert "OK       claim index" in out and "no problems found" in out and status == 0, err


def test_a_profile_that_does_not_fit_is_one_line_naming_the_column(adopt):
    status, out, err = adopt("adopt", "--set", "source.profile=relational", "--set", "source.profile.token=Version")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "token column 'Version' is not in table" in err


def test_other_commands_refuse_an_adopted_table_in_one_line(adopt):
    status, _, err = adopt("purge", "--set", "source.profile=relational", "--older-than", "1d")
    assert status == 2 and err.count("\n") == 1
    assert "is adopted through profile relational, which does not support purging finished rows" in err
    assert "use the table's own housekeeping" in err


def test_stats_on_an_adopted_table_shows_rows_per_status_held_unpublished_and_claimable(adopt):
    adopt.apply_relational()
    user_tables.enqueue_relational(adopt.queue, 3)
    adopt.queue.consuming.claim("etl", 1, 1)
    status, out, err = adopt("stats", "--set", "source.profile=relational")
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[2:] if len(line.split()) > 1}
    assert status == 0 and lines["Pending"] == "2" and lines["Processing"] == "1" and lines["held"] == "1", err
    assert lines["unpublished"] == "0" and "claimable: 2 rows now" in out


def test_stats_on_an_adopted_table_shows_the_rows_waiting_for_a_retry_and_the_errors_of_failed_rows(adopt, engine):
    adopt.apply_relational()
    user_tables.enqueue_relational(adopt.queue, 3)
    later = user_tables._plus_ms(engine.name, user_tables.NOW[engine.name], 600_000)
    user_tables.run(
        adopt.queue, f"UPDATE {adopt.queue.table} SET Status = 'Error', ScheduledFor = {later} WHERE Payload = 'p0'"
    )
    user_tables.run(adopt.queue, f"UPDATE {adopt.queue.table} SET Status = 'Failed', Error = 'HTTP 400:\n bad address'")
    user_tables.run(adopt.queue, f"UPDATE {adopt.queue.table} SET Status = 'Error' WHERE Payload = 'p0'")
    status, out, err = adopt("stats", "--set", "source.profile=relational")
    error_line = next(line for line in out.splitlines() if line.startswith("Error "))
    hours, minutes, seconds = map(int, error_line.split()[3].split(":"))  # first due in h:mm:ss
    assert (
        status == 0 and error_line.split()[1:3] == ["1", "1"] and 540 < hours * 3600 + minutes * 60 + seconds <= 600
    ), err
    assert "errors of Failed rows, the most frequent first" in out
    assert any(line.split() == ["2", "HTTP", "400:", "bad", "address"] for line in out.splitlines())


def test_peek_on_an_adopted_table_shows_its_next_ready_rows_whole_in_the_profiles_order_and_claims_nothing(adopt):
    adopt.apply_relational()
    user_tables.enqueue_relational(adopt.queue, 3)
    adopt.queue.consuming.claim("etl", 1, 1)  # p0, in the profile's order (ScheduledFor, then EnqueuedAt)
    status, out, err = adopt("peek", "--set", "source.profile=relational", "--limit", "5")
    rows = [{k.lower(): v for k, v in json.loads(line).items()} for line in out.splitlines()]  # PostgreSQL folds
    assert status == 0 and [(r["payload"], r["status"]) for r in rows] == [("p1", "Pending"), ("p2", "Pending")], err
    assert {k: v["rows"] for k, v in adopt.queue.inspection.stats().items()} == {"Pending": 2, "Processing": 1}


def test_peek_on_an_adopted_table_refuses_an_order_of_its_own_in_one_line(adopt):
    adopt.apply_relational()
    status, out, err = adopt("peek", "--set", "source.profile=relational", "--order", "lifo")
    assert status == 2 and out == "" and err.count("\n") == 1 and "option profile.order" in err


def test_peek_refuses_a_filter_that_closes_its_parentheses_in_one_line_and_lists_no_row(adopt):
    adopt.apply_relational()
    user_tables.enqueue_relational(adopt.queue, 2)
    user_tables.run(adopt.queue, f"UPDATE {adopt.queue.table} SET Status = 'Completed' WHERE Payload = 'p0'")
    escaping = "source.profile.filter=1=1) OR (1=1"  # would make the Completed row ready
    status, out, err = adopt("peek", "--set", "source.profile=relational", "--set", escaping)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "option 'profile.filter' = '1=1) OR (1=1' is not allowed: it closes a parenthesis it did not open" in err


def test_peek_with_a_filter_lists_only_the_rows_it_selects(adopt):
    adopt.apply_relational()
    user_tables.enqueue_relational(adopt.queue, 2, type_="Sync")
    user_tables.enqueue_relational(adopt.queue, 1, type_="Mail", start=10)
    filter_ = "source.profile.filter=Type IN ('Mail', 'Fax') AND Payload NOT LIKE '%:draft'"
    status, out, err = adopt("peek", "--set", "source.profile=relational", "--set", filter_, "--limit", "5")
    rows = [{k.lower(): v for k, v in json.loads(line).items()} for line in out.splitlines()]
    assert status == 0 and [(r["payload"], r["type"]) for r in rows] == [("p10", "Mail")], err


def test_adopt_proposes_the_tables_referencing_its_key_as_subtype_tables(adopt, engine):
    name = str(adopt.queue.table)
    user_tables.run(adopt.queue, *designs.subtypes(engine.name, name))
    status, out, err = adopt("adopt")
    assert status == 0, err
    assert f'"profile.include" = "{name}_email, {name}_reset"' in out.lower()
    assert '"profile.include_exclusive" = "true"' in out


def test_adopt_apply_makes_sqlqueue_s_tables_beside_each_subtype_table(adopt, engine):
    name = str(adopt.queue.table)
    user_tables.run(adopt.queue, *designs.subtypes(engine.name, name))
    status, _, err = adopt(
        "adopt", "--set", "source.profile=relational", "--set", f"source.profile.include={name}_email", "--apply"
    )
    assert status == 0, err
    claims = adopt.queue.dialect.lifecycle.claims_table(TableName(f"{name}_email"))
    assert adopt.queue.fetch(adopt.queue.dialect.schema.table_columns(claims), adopt.queue.catalog_names(claims))
