from __future__ import annotations

import pytest

from sqlqueue.dialects import dialect_for
from sqlqueue.errors import ConfigError
from sqlqueue.identifiers import TableName
from sqlqueue.kinds.adopted import checks_on
from sqlqueue.profile import NATIVE, PRESETS, profile_from, propose, settings_of
from sqlqueue.schema import Column


def test_options_set_fields_over_a_preset():
    profile = profile_from("relational", {"key": "Id", "ready": "New, Retry", "order": "DueAt DESC, Id", "token": ""})
    assert profile.key == ("Id",) and profile.ready == ("New", "Retry") and profile.token is None
    assert profile.order == (("DueAt", "DESC"), ("Id", "ASC"))


def test_an_unknown_preset_lists_the_presets():
    with pytest.raises(ConfigError, match="option 'profile' = 'fifo' is not allowed: use one of relational"):
        profile_from("fifo", {})


def test_an_unknown_field_lists_the_fields():
    with pytest.raises(ConfigError, match="unknown option\\(s\\) profile.statuss; a profile takes: profile.key"):
        profile_from("relational", {"statuss": "State"})


def test_a_status_without_ready_values_is_refused():
    with pytest.raises(ConfigError, match="no ready values or in-flight value"):
        profile_from("relational", {"ready": ""})


def test_the_proposal_reads_the_design_from_the_column_names():
    columns = [  # seed 003's retry table
        Column("id", "bigint", False),
        Column("in_process", "boolean", False),
        Column("scheduled_start_date", "timestamp"),
        Column("start_date", "timestamp"),
        Column("end_date", "timestamp"),
        Column("app_server", "string"),
        Column("attempts", "int"),
    ]
    profile = propose(columns, [["in_process", "id"]])
    assert (profile.name, profile.key, profile.status) == ("claimer", ("in_process", "id"), "in_process")
    assert (profile.claimer, profile.done_at) == ("app_server", "end_date")


def test_a_status_word_beside_a_claimer_column_is_proposed_as_relational():
    columns = [Column("Id", "bigint", False), Column("Status", "string"), Column("LockedBy", "string")]
    profile = propose(columns, [["Id"]])
    assert (profile.name, profile.status, profile.claimer) == ("relational", "Status", "LockedBy")


def test_the_proposal_maps_the_response_and_step_an_acknowledgement_writes():
    columns = [Column("Id", "bigint", False), Column("Status", "string"), Column("Response", "text")]
    profile = propose([*columns, Column("Step", "string")], [["Id"]])
    assert (profile.response, profile.step) == ("Response", "Step")


def test_a_table_without_lifecycle_columns_is_proposed_as_a_dequeue():
    assert propose([Column("Id", "bigint", False), Column("Payload", "text")], [["Id"]]).name == "dequeue"


def test_written_out_settings_give_the_same_profile_back():
    profile = propose([Column("Key", "bigint", False), Column("State", "string"), Column("Body", "text")], [["Key"]])
    settings = settings_of(profile)
    again = profile_from(settings.pop("profile"), {k.removeprefix("profile."): v for k, v in settings.items()})
    assert again == profile


def test_check_vocabularies_are_the_clauses_naming_the_column_with_values():
    sql = "CREATE TABLE t (Status TEXT CHECK (Status IN ('A', 'B')), n INT CHECK (n > 0))"
    assert checks_on(sql, "status") == ["(Status IN ('A', 'B'))"]
    assert checks_on("([Status]='A' OR [Status]='B')", "Status") == ["([Status]='A' OR [Status]='B')"]
    assert checks_on("CHECK ((length(status) > 0))", "status") == []


def test_every_preset_is_a_valid_profile():
    assert set(PRESETS) == {"relational", "started-mark", "claimer", "dequeue"}


def test_a_create_table_without_check_gives_no_vocabulary():
    assert checks_on("CREATE TABLE t (Status TEXT DEFAULT '', n INT)", "Status") == []


def test_an_in_flight_value_among_the_ready_values_is_refused():
    with pytest.raises(ConfigError, match="'Processing' are also ready values"):
        profile_from("relational", {"ready": "Pending, Processing"})


def test_a_dequeue_with_a_status_column_neither_filters_its_claim_index_nor_fills_the_status():
    dialect = dialect_for("sqlite")
    profile = profile_from("dequeue", {"status": "Status"})
    assert dialect.claims.claimable(profile) is None
    assert "Status" not in dialect.sink.new_row(profile, ["Payload"])


def test_sql_server_compares_an_ascii_status_to_a_plain_literal_so_a_varchar_column_keeps_its_seek():
    claimable = dialect_for("sqlserver").claims.claimable(PRESETS["relational"])
    assert claimable == "[Status] IN ('Pending', 'Error', 'Processing')"


def test_sql_server_keeps_a_status_beyond_ascii_in_a_unicode_literal():
    profile = profile_from("relational", {"ready": "Ausstehend", "in_flight": "Läuft"})
    assert dialect_for("sqlserver").claims.claimable(profile) == "[Status] IN ('Ausstehend', N'Läuft')"


@pytest.mark.parametrize("engine", ["sqlite", "postgres", "sqlserver"])
def test_a_quote_in_a_status_value_is_doubled_in_its_literal(engine):
    profile = profile_from("relational", {"ready": "Won't wait", "in_flight": "Processing"})
    assert "'Won''t wait'" in dialect_for(engine).claims.claimable(profile)


def test_sqlqueue_s_own_layout_claims_ready_rows_only_and_leaves_expired_leases_to_the_sweep():
    ready = dialect_for("sqlite").claims.ready(TableName("jobs"), NATIVE)
    assert ready.startswith("\"state\" = 'ready' AND ") and "claimed" not in ready


def test_the_bookkeeping_roles_of_sqlqueue_s_own_layout_are_no_options():
    with pytest.raises(ConfigError, match="unknown option.*profile.lease"):
        profile_from("relational", {"lease": "LockedUntil"})


def test_include_names_subtype_tables_an_unqualified_one_in_the_tables_schema():
    profile = profile_from("relational", {"include": "Notification_Email, mail.Notification_Reset"})
    assert profile.include_exclusive
    assert profile.subtypes(TableName("Notification", "dbo")) == (
        TableName("Notification_Email", "dbo"),
        TableName("Notification_Reset", "mail"),
    )


def test_include_written_out_gives_the_same_profile_back():
    profile = profile_from("relational", {"include": "Notification_Email", "include_exclusive": "false"})
    settings = settings_of(profile)
    assert settings["profile.include"] == "Notification_Email"
    assert (
        profile_from("relational", {k.removeprefix("profile."): v for k, v in settings.items() if k != "profile"})
        == profile
    )


def test_include_exclusive_is_not_written_out_without_include():
    assert "profile.include_exclusive" not in settings_of(PRESETS["relational"])


def test_an_include_item_of_three_parts_is_refused():
    with pytest.raises(
        ConfigError, match=r"^option 'profile.include' item 'a.b.c' is not allowed: use table or schema.table$"
    ):
        profile_from("relational", {"include": "a.b.c"})
