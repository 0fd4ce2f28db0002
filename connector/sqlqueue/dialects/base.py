"""The dialect: one engine and the statement parts built on it, each named for its concern.

``dialect.engine`` spells SQL and drives the connection (``engine.Engine``); every statement lives in
the part its name says: ``dialect.claims.claim(...)``, ``dialect.sink.publish(...)``,
``dialect.housekeeping.purge(...)``, ``dialect.inspection.peek(...)``. Where an engine writes a part its
own way (a SQL Server claim is UPDATE TOP ... OUTPUT), its module subclasses that part, and
``dialect_for`` hands the subclass in.
"""

from __future__ import annotations

from .engine import Engine
from .statements.adoption import Adoption
from .statements.claims import Claims
from .statements.doctor import Doctor
from .statements.housekeeping import Housekeeping
from .statements.inspection import Inspection
from .statements.leases import Leases
from .statements.lifecycle import Lifecycle
from .statements.migrations import Migrations
from .statements.outcomes import Outcomes
from .statements.runs import Runs
from .statements.schema import Schema
from .statements.sink import Sink


class Dialect:
    """The engine and its parts. Each Queue has a dialect of its own: statements are built once per part."""

    def __init__(
        self,
        engine: Engine,
        *,
        claims: type[Claims],
        doctor: type[Doctor],
        migrations: type[Migrations],
    ) -> None:
        self.engine = engine
        self.schema = Schema(engine)
        self.lifecycle = Lifecycle(engine)
        self.claims = claims(engine, self.schema, self.lifecycle)
        self.adoption = Adoption(engine, self.lifecycle)
        self.leases = Leases(engine, self.lifecycle, self.claims)
        self.runs = Runs(engine, self.schema, self.lifecycle, self.claims)
        self.sink = Sink(engine, self.schema, self.lifecycle, self.adoption)
        self.outcomes = Outcomes(engine, self.lifecycle, self.claims)
        self.housekeeping = Housekeeping(engine, self.lifecycle)
        self.inspection = Inspection(engine, self.lifecycle, self.claims)
        self.doctor = doctor(engine, self.schema, self.lifecycle, self.claims, self.runs)
        self.migrations = migrations(engine, self.schema)
