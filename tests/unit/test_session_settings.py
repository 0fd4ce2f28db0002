"""The settings a JVM that build_session starts gets: the tuning, and for a local master C1 alone and
checkpoint files written without forking and Python workers forked from sqlqueue's daemon."""

from __future__ import annotations

import pytest

from sqlqueue.spark.session import JAVA_OPTIONS, server_settings
from sqlqueue.spark.tuning import (
    CHECKPOINT_FILE_MANAGER,
    DAEMON_MODULE,
    LOCAL_JVM_OPTIONS,
    LOCAL_TUNING,
    UNIX_SOCKETS,
)


@pytest.fixture(autouse=True)
def launched_here(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)


def test_a_local_jvm_compiles_with_c1_alone():
    assert set(LOCAL_JVM_OPTIONS) <= set(server_settings(local=True)[JAVA_OPTIONS].split())


def test_a_local_jvm_compiling_with_c1_alone_keeps_the_code_cache_c2_would_have():
    # C1 alone, the JVM reserves 48 MB for compiled code; a long session ran out of it.
    assert "-XX:ReservedCodeCacheSize=240m" in server_settings(local=True)[JAVA_OPTIONS].split()


def test_a_cluster_driver_keeps_the_default_compilers():
    assert not set(LOCAL_JVM_OPTIONS) & set(server_settings(local=False)[JAVA_OPTIONS].split())


def test_a_local_master_writes_checkpoint_files_with_the_file_system_manager():
    assert server_settings(local=True)[CHECKPOINT_FILE_MANAGER] == LOCAL_TUNING[CHECKPOINT_FILE_MANAGER]


def test_a_cluster_keeps_sparks_checkpoint_file_manager():
    assert CHECKPOINT_FILE_MANAGER not in server_settings(local=False)


def test_a_local_master_forks_python_workers_from_sqlqueues_daemon():
    assert server_settings(local=True)[DAEMON_MODULE] == "sqlqueue.spark.daemon"


def test_a_clusters_executors_keep_pysparks_daemon():
    # Their Python may lack sqlqueue, and what their workers print goes to the executors' logs.
    assert DAEMON_MODULE not in server_settings(local=False)


@pytest.mark.parametrize("local", [True, False], ids=["local", "cluster"])
def test_python_workers_talk_to_the_jvm_over_unix_sockets(local):
    assert server_settings(local=local)[UNIX_SOCKETS] == "true"


def test_the_users_java_options_come_after_ours_so_their_flags_win():
    options = server_settings(local=True, java_options="-XX:TieredStopAtLevel=4 -Dx=1")[JAVA_OPTIONS].split()
    assert max(options.index(flag) for flag in LOCAL_JVM_OPTIONS) < options.index("-XX:TieredStopAtLevel=4")
    assert "-Dx=1" in options


def test_under_spark_submit_only_the_users_java_options_are_kept(monkeypatch):
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # the JVM runs already: its options are spark-submit's
    assert JAVA_OPTIONS not in server_settings(local=True)
    assert server_settings(local=True, java_options="-Dx=1")[JAVA_OPTIONS] == "-Dx=1"
