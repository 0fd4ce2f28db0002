"""The dialect contract: the engine contract plus every statement sqlqueue runs.

A dialect subclass spells what its engine spells differently (``engine.Engine``) and, where its
engine needs another shape, overrides a statement (a SQL Server claim is UPDATE TOP ... OUTPUT).
"""

from __future__ import annotations

from .statements.adopted_sink import AdoptedSink
from .statements.doctor import Doctor
from .statements.housekeeping import Housekeeping
from .statements.leases import Leases
from .statements.migrations import Migrations
from .statements.sink import Sink


class Dialect(Doctor, Migrations, Sink, Housekeeping, Leases, AdoptedSink):
    """Every statement, by concern: schema, claims, sink, housekeeping, doctor, migrations, adopted tables,
    leases and the sink into adopted tables."""
