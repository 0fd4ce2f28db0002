"""Configuration files: layering, overrides, secrets from the environment, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlqueue.config import load_config
from sqlqueue.errors import ConfigError

JOB_KEYS = ("checkpointLocation", "target")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture
def profile(tmp_path: Path) -> str:
    return write(
        tmp_path, "pg.toml", '[connection]\nurl = "postgresql://db:5432/ops"\nuser = "etl"\npasswordEnv = "TEST_PW"\n'
    )


def test_role_sections_inherit_the_connection_and_read_the_password_from_the_environment(tmp_path, profile):
    job = write(tmp_path, "job.toml", '[source]\nqueue = "orders"\n')
    config = load_config([profile, job], roles=["source"], environ={"TEST_PW": "s3cret"})
    assert config.source == {"url": "postgresql://db:5432/ops", "user": "etl", "password": "s3cret", "queue": "orders"}


def test_a_section_with_its_own_url_inherits_nothing_from_the_connection(tmp_path, profile):
    job = write(tmp_path, "job.toml", '[sink]\nurl = "sqlite:///tmp/b.db"\nqueue = "b"\n')
    config = load_config([profile, job], roles=["sink"], environ={})
    assert config.sink == {"url": "sqlite:///tmp/b.db", "queue": "b"}


def test_a_url_on_the_same_engine_keeps_the_configured_login(tmp_path, profile):
    """The command line's --url, or a section's own url, replaces the address, not the login."""
    job = write(tmp_path, "job.toml", '[source]\nqueue = "orders"\n')
    config = load_config(
        [profile, job], ["source.url=postgresql://replica:5432/ops"], ["source"], environ={"TEST_PW": "pw"}
    )
    assert config.source == {"url": "postgresql://replica:5432/ops", "user": "etl", "password": "pw", "queue": "orders"}


def test_a_url_naming_another_user_than_the_configured_one_is_refused(tmp_path, profile):
    job = write(tmp_path, "job.toml", '[source]\nqueue = "orders"\nurl = "postgresql://ops@db:5432/ops"\n')
    with pytest.raises(ConfigError, match=r"^\[source\] url names user 'ops' while \[connection\] names 'etl'"):
        load_config([profile, job], roles=["source"], environ={"TEST_PW": "pw"})


def test_later_files_and_overrides_win_and_keys_match_ignoring_case(tmp_path):
    first = write(tmp_path, "a.toml", '[source]\nurl = "sqlite:///tmp/a.db"\nqueue = "a"\nmaxRowsPerTrigger = 10\n')
    second = write(tmp_path, "b.toml", "[source]\nmaxrowspertrigger = 20\nprefetch = false\n")
    config = load_config([first, second], ["source.MAXROWSPERTRIGGER=30"], roles=["source"])
    assert config.source["maxRowsPerTrigger"] == "30"
    assert config.source["prefetch"] == "false"
    assert config.source_options().max_rows_per_trigger == 30


def test_repr_never_shows_the_password(tmp_path, profile):
    job = write(tmp_path, "job.toml", '[source]\nqueue = "orders"\n')
    config = load_config([profile, job], roles=["source"], environ={"TEST_PW": "s3cret"})
    assert "s3cret" not in repr(config) and "s3cret" not in repr(config.source_options())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[source]\nmaxRows = 5\n", r"\[source\] unknown key 'maxRows'; valid keys are: .*maxRowsPerTrigger"),
        ('[source]\nwriterId = "w"\n', r"\[source\] unknown key 'writerId'"),
        ('[sourcez]\nqueue = "q"\n', r"unknown section \[sourcez\]; valid sections are: connection, source"),
        ('[source]\npassword = "hunter2"\n', r"password: a password does not belong in a configuration file"),
        (
            '[source]\nqueue = "q"\norder = "random"\n',
            r"\[source\] option 'order' = 'random' is not allowed: one of heap",
        ),
        ('[source]\nqueue = "q"\n[job]\nnope = 1\n', r"\[job\] unknown key 'nope'; valid keys are: checkpointLocation"),
        ('[source]\nqueue = "q"\n[job]\ninput = "t"\n', r"\[job\] key\(s\) input are not used by this job; it takes: "),
        ('[spark]\nmaster = "local"\n', r"\[spark\] key 'master' is not a Spark setting"),
        ('[logging]\nlevel = "LOUD"\n', r"\[logging\] level = 'LOUD' is not allowed"),
        ("[source\nqueue = 1\n", r"is not valid TOML"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_problem(tmp_path, text, message):
    path = write(tmp_path, "bad.toml", '[connection]\nurl = "sqlite:///tmp/x.db"\n' + text)
    with pytest.raises(ConfigError, match=message) as failure:
        load_config([path], roles=["source"], job_keys=JOB_KEYS)
    assert "\n" not in str(failure.value)


def test_missing_secret_names_the_environment_variable(tmp_path, profile):
    job = write(tmp_path, "job.toml", '[source]\nqueue = "orders"\n')
    with pytest.raises(ConfigError, match="environment variable TEST_PW is not set"):
        load_config([profile, job], roles=["source"], environ={})


def test_a_caller_that_connects_to_nothing_can_go_without_the_secret(tmp_path, profile):
    job = write(tmp_path, "job.toml", '[source]\nqueue = "orders"\n')
    config = load_config([profile, job], roles=["source"], environ={}, need_secrets=False)
    assert "password" not in config.source


def test_password_on_the_command_line_is_refused(tmp_path, profile):
    with pytest.raises(ConfigError, match="password: a password does not belong"):
        load_config([profile], ["source.password=s3cret"], roles=["source"], environ={"TEST_PW": "x"})


def test_override_needs_section_key_and_value():
    with pytest.raises(ConfigError, match="use section.key=value"):
        load_config([], ["maxRowsPerTrigger=5"])


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"configuration file .*nope.toml does not exist"):
        load_config([str(tmp_path / "nope.toml")])


def test_required_job_setting_names_what_it_is_for(tmp_path):
    config = load_config([], job_keys=JOB_KEYS)
    with pytest.raises(ConfigError, match=r"\[job\] checkpointLocation is required: Folder of the streaming"):
        config.required("checkpointLocation")


@pytest.mark.parametrize("profile_name", sorted(p.name for p in (Path(__file__).parents[2] / "conf").rglob("*.toml")))
def test_shipped_profiles_load_without_secrets(profile_name):
    path = next((Path(__file__).parents[2] / "conf").rglob(profile_name))
    load_config(
        [str(path)],
        roles=[],
        job_keys=("checkpointLocation", "target", "input", "trigger", "transform"),
        need_secrets=False,
    )


def test_a_misspelled_option_is_named_with_the_closest_valid_one():
    from sqlqueue.options import SourceOptions

    with pytest.raises(ConfigError, match=r"unknown option\(s\) maxrowspertriger \(did you mean maxRowsPerTrigger\?\)"):
        SourceOptions.parse({"url": "sqlite:///tmp/q.db", "queue": "q", "maxrowspertriger": "5"})
