"""Kinds of queue table: sqlqueue's own layout (``own``) and a table adopted through a profile
(``adopted``), behind one contract (``kind``) a ``Queue`` holds."""

from __future__ import annotations

from ..profile import Profile
from .adopted import Adopted
from .kind import Served, TableKind
from .own import OwnLayout


def kind_for(profile: Profile | None) -> TableKind:
    """sqlqueue's own layout without a profile; with one, the table adopted through it."""
    return OwnLayout() if profile is None else Adopted(profile)


__all__ = ["Served", "TableKind", "kind_for"]
