# Everything a fresh machine needs, installed by the project itself. Each step leaves a stamp
# (or its product) so the second run is quick.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CACHE := .cache
DELTA_VERSION := 4.4.0
DELTA_JARS := $(CACHE)/jars/delta-spark_4.2_2.13-$(DELTA_VERSION).jar $(CACHE)/jars/delta-storage-$(DELTA_VERSION).jar
SYSTEM_PACKAGES := unixodbc tdsodbc postgresql openjdk-17-jre-headless maven
# Spark 4.2 runs on Java 17 or 21; machines may carry other JDKs too, so pick one explicitly.
JAVA_HOME ?= $(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-21-openjdk-*))
export JAVA_HOME
export SQLQUEUE_JARS_DIR := $(abspath $(CACHE)/jars)
PYTEST_ARGS ?=

.PHONY: setup system venv jars toxiproxy demo docs docs-serve lint test test-crash test-cluster test-sqlserver test-babelfish test-pyspark-upper lint-workflows system-packages chaos chaos-ci bench bench-smoke clean
setup: system venv jars toxiproxy

system: $(CACHE)/system.stamp
$(CACHE)/system.stamp:
	@mkdir -p $(CACHE)
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@touch $@

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml | $(CACHE)/system.stamp
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

jars: $(DELTA_JARS)
$(CACHE)/jars/%.jar: | $(CACHE)/system.stamp
	@mkdir -p $(CACHE)/jars
	artifact=$$(echo $* | sed -E 's/^(.*)-([0-9][^-]*)$$/io.delta:\1:\2/'); \
	mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
	  -Dartifact=$$artifact -DoutputDirectory=$(CACHE)/jars

# Toxiproxy, the TCP proxy the outage tests put in front of a database (tests/support/toxiproxy.py),
# built once from its Go module into .cache, as actionlint is below (about a minute). Without Go it says
# so and setup goes on: the tests that need a proxy then skip, naming this target.
TOXIPROXY_VERSION := v2.5.0
TOXIPROXY := $(CACHE)/toxiproxy/$(TOXIPROXY_VERSION)/server
toxiproxy: $(TOXIPROXY)
$(TOXIPROXY):
	@if ! command -v go >/dev/null; then \
	  echo "make toxiproxy: skipped: needs Go (https://go.dev/dl/) to build Toxiproxy; the outage tests skip without it" >&2; \
	else \
	  echo "building Toxiproxy $(TOXIPROXY_VERSION) into $(@D)"; \
	  GOBIN=$(abspath $(@D)) GOMODCACHE=$(abspath $(CACHE))/go/mod GOCACHE=$(abspath $(CACHE))/go/build \
	    go install -modcacherw github.com/Shopify/toxiproxy/v2/cmd/server@$(TOXIPROXY_VERSION); \
	fi

demo: setup
	$(PY) jobs/demo.py

# The docs site (mkdocs.yml, docs/): built --strict into build/site, so a broken link or anchor, or a page
# left out of the nav, fails the build. The docs' examples are run by `make test` (tests/docs).
# NO_MKDOCS_2_WARNING: Material 9.8 otherwise prints a banner about its successor on every build.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs
docs: setup
	$(MKDOCS) build --strict

docs-serve: setup
	$(MKDOCS) serve

# The tooling gate: lint and format (ruff), types (mypy), the layering contract (import-linter).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	PYTHONPATH=connector $(VENV)/bin/lint-imports --no-cache

# The Spark JVMs the suites start live for seconds or minutes, mostly loading and compiling Spark: with
# the C1 compiler alone (no C2) a local session's start and first queries took 20 CPU seconds instead
# of 36 on this project's 2-core host. Spark reads SPARK_SUBMIT_OPTS for every driver it launches
# (pyspark's sessions, the jobs the tests start, Spark Connect's server). The demo, the benchmarks and
# users' jobs keep the JVM's defaults.
# They also map a class data sharing archive of the classes a Spark session, its first queries and Delta
# load (tests/support/spark_cds.py, made once): 26.6 CPU seconds instead of 38.6 for that start on C1. A JVM
# whose JDK or class path differs ignores it, quietly, as it does an empty file (left where making it failed).
SPARK_CDS := $(abspath $(CACHE))/spark-cds.jsa
# And a Spark home of links to the installed pyspark whose python/lib/pyspark.zip carries compiled
# bytecode (tests/support/spark_home.py): Spark puts that zip first on the path of every Python process it
# starts, and pip's holds sources only, so each compiled what it imported (1.1 s instead of 0.4 per
# process; tests/spark/test_jobs.py 74 s instead of 84-89). Not test-pyspark-upper's: another pyspark.
SPARK_HOME_TESTS := $(abspath $(CACHE))/spark-home
test test-crash test-cluster test-babelfish chaos chaos-ci bench-smoke: export SPARK_HOME := $(SPARK_HOME_TESTS)
test test-crash test-cluster test-babelfish chaos chaos-ci bench-smoke: $(SPARK_HOME_TESTS)
$(SPARK_HOME_TESTS): $(VENV)/.installed
	$(PY) -m tests.support.spark_home $@
# C1 alone, a JVM reserves 48 MB for compiled code; a test session of many suites filled it (connector/
# sqlqueue/spark/tuning.py, LOCAL_JVM_OPTIONS), so the tests reserve what a C2 JVM does.
TEST_JVM := -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:SharedArchiveFile=$(SPARK_CDS) -Xlog:cds*=off
test test-crash test-cluster test-babelfish test-pyspark-upper chaos chaos-ci bench-smoke: export SPARK_SUBMIT_OPTS += $(TEST_JVM)
test test-crash test-cluster test-babelfish test-pyspark-upper chaos chaos-ci bench-smoke: $(SPARK_CDS)
$(SPARK_CDS): $(SPARK_HOME_TESTS) | setup
	SPARK_HOME=$(SPARK_HOME_TESTS) SPARK_SUBMIT_OPTS="-XX:TieredStopAtLevel=1 -XX:ArchiveClassesAtExit=$@.part -Xlog:cds*=off" \
	  PYTHONPATH=connector $(PY) -m tests.support.spark_cds && mv $@.part $@ \
	  || { echo "no class data sharing archive: the test JVMs start without one" >&2; rm -f $@.part; touch $@; }

# Every test but the kill-and-restart scenarios and the cluster's: the inner loop, under 30 minutes on 2 cores.
# Its files go to TEST_WORKERS pytest processes (pytest-xdist), each with its own Spark session and
# PostgreSQL server: alone, one process left the 2 cores 32-43% idle (vmstat), waiting on the JVMs and
# the subprocesses it starts; pytest took 1,605 s. A file stays on one worker, so its module fixtures
# are made once. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: setup lint
	$(PY) -m pytest -m "not crash and not cluster" -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The kill-and-restart scenarios (tests/crash, marker crash): Spark drivers SIGKILLed inside every crash
# window of the protocols and restarted from their checkpoint, a database restarted under a job. Each
# run of a job starts a JVM, so these take 15-25 minutes on 2 cores; .ci/run runs them after `test`, beside
# the other steps.
test-crash: setup
	$(PY) -m pytest -m crash tests/crash $(PYTEST_ARGS)

# The jobs under spark-submit on a Spark standalone cluster started on this host from pyspark's own
# scripts (a master, two 1-core workers), against PostgreSQL: 2.6-4.6 minutes on a shared 2-core
# host, hence not in `test`. Only tests/cluster is collected (the marker alone would import them all).
test-cluster: setup
	$(PY) -m pytest -m cluster tests/cluster $(PYTEST_ARGS)

# Every sqlserver-marked test (the crash tests included: their engine parameter carries the marker)
# against the server in SQLQUEUE_TEST_SQLSERVER, a sqlserver:// URL or an ODBC connection string;
# SQLQUEUE_TEST_SQLSERVER_DRIVER picks the ODBC driver when it names none. The variable is checked
# when the Makefile is read, so without it nothing is installed and nothing runs.
SQLSERVER_PYTEST = $(PY) -m pytest -m sqlserver $(PYTEST_ARGS)
ifeq ($(strip $(SQLQUEUE_TEST_SQLSERVER)),)
test-sqlserver:
	$(error make test-sqlserver: set SQLQUEUE_TEST_SQLSERVER to a sqlserver:// URL or an ODBC connection string of a SQL Server you may create tables in (see docs/sqlserver.md "Running the tests against your server"))
else
test-sqlserver: setup
	$(SQLSERVER_PYTEST)
endif

# The sqlserver-marked suite against a live TDS server: Babelfish for PostgreSQL from ../shared/babelfish
# (a clone with ../shared beside it, as CI's has), once per SQL Server driver. Babelfish is a witness of
# drivers, binding, DDL and statement shapes, not of SQL Server's locking: its gaps are strict expected
# failures (tests/support/babelfish.py). Microsoft's Driver 18, the one production runs, takes the
# database-side suite whole and the Spark tests of LIVE_SPARK; the other drivers
# (FreeTDS, and mssql-python, which `setup` installs through the dev extra) take the tests of what a
# driver carries: bulk writes, every value type, the driver's own behaviour, an adopted table's sink, its per-row outcomes and its subtype tables
# (docs/sqlserver.md "Testing on Babelfish"). Driver 18's run and the other drivers' runs go
# side by side, each into a log of its own that is printed when both are done. The server
# starts fresh (`reset`): Babelfish's catalog views slow down with every table a database holds, and the
# tests drop theirs (tests/support/engines.py) but an interrupted run cannot. The ODBC drivers pool their
# connections (unixODBC's pooling, in an odbcinst.ini of its own: tests/support/pooled_odbcinst.py), as
# mssql-python does by default: a Babelfish backend's first catalog query costs about a second, and
# test_claims.py took 144 s unpooled, 29.5 s pooled; FreeTDS's subset 766 s unpooled in CI's run of
# 2026-11-29 (beside Driver 18's run), 66 s pooled alone. First the recording TDS stub's tests of each
# driver run again with Driver 18 registered, unpooled (it records each login); its FreeTDS-only and
# pip-only tests ran in make test already. Without ../shared it says so and passes.
DRIVER_STUB_TESTS := tests/drivers/test_each_driver_wire.py tests/drivers/test_sqlqueue_on_each_driver.py
BABELFISH := $(abspath ../shared/babelfish)
BABELFISH_URL := sqlserver://babelfish_user:12345678@127.0.0.1:1433/babelfish_db?TrustServerCertificate=yes
POOLED_ODBC := $(abspath $(CACHE))/odbc-pooled
LIVE_FULL_DRIVER := ODBC Driver 18 for SQL Server
LIVE_SUBSET_DRIVERS := FreeTDS mssql-python
# Of the Spark tests, Babelfish runs the source, the sink, an adopted table's source, the jobs, the SQL Server
# quick start as the docs write it and the examples as users copy them. The rest
# run on SQLite and PostgreSQL, and all of them on a real server (make test-sqlserver): on 2 cores Babelfish
# took 34 minutes for the whole suite with Driver 18 alone. Kills and outages on Babelfish are the fault
# matrix's (make chaos CHAOS_ARGS="--engines babelfish"); Babelfish ignores table hints, so a kill there
# proves statements, not locking.
LIVE_SPARK := tests/spark/test_source.py tests/spark/test_sink.py tests/spark/test_adoption.py \
  tests/spark/test_jobs.py tests/docs/test_sqlserver_quick_start.py tests/plugin/test_example.py
LIVE_SUBSET := tests/conformance/test_producer.py tests/conformance/test_payloads.py \
  tests/conformance/test_sqlserver_driver.py tests/conformance/test_adopted_sink.py \
  tests/conformance/test_adopted_outcomes.py tests/conformance/test_subtypes.py tests/conformance/test_runs.py
# The two Babelfish runs share one database, and Babelfish's catalog views fail a read with "could not
# open relation with OID", or "column ... of relation ... does not exist" naming the other run's table,
# when the other run drops or alters a table under it (PostgreSQL's catalog functions on a relation
# changed mid-scan; SQL Server's catalog views do not). A test that meets those messages, and only
# those, runs again: one that fails the same way each time still fails.
BABELFISH_PYTEST = $(SQLSERVER_PYTEST) --reruns 2 --only-rerun 'could not open relation with OID' \
  --only-rerun 'column "[^"]*" of relation "[^"]*" does not exist'
test-babelfish: setup
	@if [ ! -x "$(BABELFISH)/babelfish.sh" ]; then \
	  echo "test-babelfish: skipped: no ../shared/babelfish beside this clone, so no live TDS server to run the sqlserver suite on"; \
	  exit 0; fi; \
	"$(BABELFISH)/babelfish.sh" reset && bash "$(BABELFISH)/msodbc18.sh" >/dev/null || exit 1; \
	status=0; \
	echo "== the recording TDS stub, with every driver now registered"; \
	$(PY) -m pytest $(DRIVER_STUB_TESTS) $(PYTEST_ARGS) || status=1; \
	$(PY) -m tests.support.pooled_odbcinst $(POOLED_ODBC) '$(LIVE_FULL_DRIVER)' FreeTDS || exit 1; \
	full=$(CACHE)/babelfish-full.log; subset=$(CACHE)/babelfish-subset.log; \
	( echo "== sqlserver suite on Babelfish, driver $(LIVE_FULL_DRIVER): the database-side tests, and $(LIVE_SPARK)"; \
	  ODBCSYSINI=$(POOLED_ODBC) SQLQUEUE_TEST_SQLSERVER='$(BABELFISH_URL)' SQLQUEUE_TEST_SQLSERVER_DRIVER='$(LIVE_FULL_DRIVER)' \
	    $(BABELFISH_PYTEST) tests/conformance $(LIVE_SPARK) ) > $$full 2>&1 & full_pid=$$!; \
	( code=0; for driver in $(LIVE_SUBSET_DRIVERS); do \
	  echo "== sqlserver suite on Babelfish, driver $$driver: $(LIVE_SUBSET)"; \
	  ODBCSYSINI=$(POOLED_ODBC) SQLQUEUE_TEST_SQLSERVER='$(BABELFISH_URL)' SQLQUEUE_TEST_SQLSERVER_DRIVER="$$driver" \
	    $(BABELFISH_PYTEST) $(LIVE_SUBSET) || code=1; \
	  done; exit $$code ) > $$subset 2>&1 & subset_pid=$$!; \
	wait $$full_pid || status=1; wait $$subset_pid || status=1; \
	cat $$full $$subset; \
	exit $$status

# The upper end of pyproject's pyspark range: the conformance suite and the Spark source and sink
# tests (none needs Delta, which pins pyspark 4.2.0) in a venv of their own with that pyspark.
PYSPARK_UPPER := 4.2.1
UPPER_VENV := $(CACHE)/venv-pyspark-$(PYSPARK_UPPER)
test-pyspark-upper: setup
	test -x $(UPPER_VENV)/bin/python || $(PYTHON) -m venv $(UPPER_VENV)
	$(UPPER_VENV)/bin/pip install -q -e '.[sqlserver,postgres]' pyspark==$(PYSPARK_UPPER) pytest==9.2.0 chispa==0.12.0 sqlfluff==4.5.0
	$(UPPER_VENV)/bin/python -m pytest tests/conformance tests/spark/test_source.py tests/spark/test_source_operations.py tests/spark/test_sink.py $(PYTEST_ARGS)

# The CI workflows, checked by actionlint (a Go module, built once into .cache/go).
ACTIONLINT_VERSION := v1.7.12
lint-workflows:
	@command -v go >/dev/null || { echo "make lint-workflows: needs Go (https://go.dev/dl/) to run actionlint" >&2; exit 1; }
	GOMODCACHE=$(abspath $(CACHE))/go/mod GOCACHE=$(abspath $(CACHE))/go/build \
	  go run -modcacherw github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) .github/workflows/*.yml

# The Debian/Ubuntu packages `make system` installs, for a CI runner that installs them with sudo.
system-packages:
	@echo $(SYSTEM_PACKAGES)

# The fault matrix (tests/chaos, docs/guarantees.md "Fault matrix"): the real jobs under kills, outages longer than
# the lease, database restarts, reset and stalled connections and the table's own worker, on every table
# design; a verifier that shares no code with sqlqueue counts lost, duplicated and unexpected keys.
# PostgreSQL runs every cell (10 rounds of 5,000 keys), SQLite and Babelfish the kill and outage cells (2 rounds).
# Hours on 2 cores: CHAOS_ARGS="--only 'postgres/queue-to-delta/*'" picks cells. SEED replays a plan.
CHAOS_ARGS ?=
CHAOS_JOBS ?= 2
chaos: setup
	$(PY) -m tests.chaos $(if $(SEED),--seed $(SEED)) --jobs $(CHAOS_JOBS) $(CHAOS_ARGS)

# The seeded slice CI runs: five cells, two at a time, under 5 minutes.
chaos-ci: setup
	$(PY) -m tests.chaos --seed $(or $(SEED),29) --slice ci --jobs $(CHAOS_JOBS)

bench: setup
	$(PY) benchmarks/run_all.py

# Every benchmark at a tiny size (benchmarks/smoke.py), so none rots: a few minutes, in .ci/run.
bench-smoke: setup
	$(PY) benchmarks/smoke.py

clean:
	rm -rf $(VENV) $(CACHE) .pytest_cache
