"""Typed readers of the metadata two refusals carry: MERGE_CONFLICT and HISTORY_UNAVAILABLE."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from taskplans.errors import as_error


@dataclass(frozen=True)
class MergeConflict:
    """What a MERGE_CONFLICT carries. ``base_version``: the version the write was based on (its
    expected_version); ``current_version``: the plan's version when the merge was tried (retry with it
    once you redid your change); ``conflict_regions``: how many regions conflict; ``conflicts``: the
    regions in diff3's marker format (``@@ base lines A-B @@``, ``<<<<<<< yours``, ``||||||| base``,
    ``=======``, ``>>>>>>> current``), at most 4,096 UTF-8 bytes."""

    base_version: int
    current_version: int
    conflict_regions: int
    conflicts: str


@dataclass(frozen=True)
class HistoryUnavailable:
    """What a HISTORY_UNAVAILABLE carries. ``version``: the version whose content cannot be derived
    (GetPlanChanges' since_version, or a merge's expected_version); ``current_version``: the plan's
    current version (read the whole plan and use it); ``oldest_version``: the oldest version
    GetPlanChanges can answer from now, None when only the current one."""

    version: int
    current_version: int
    oldest_version: Optional[int]


def _number(metadata: Mapping[str, str], key: str) -> Optional[int]:
    value = metadata.get(key)
    return int(value) if value is not None and value.isdigit() else None


def merge_conflict_of(error: BaseException) -> Optional[MergeConflict]:
    """The metadata of a MERGE_CONFLICT, typed; None for any other error."""
    typed = as_error(error)
    if typed is None or typed.reason != "MERGE_CONFLICT":
        return None
    m = typed.metadata
    return MergeConflict(
        base_version=_number(m, "base_version") or 0,
        current_version=_number(m, "current_version") or 0,
        conflict_regions=_number(m, "conflict_regions") or 0,
        conflicts=m.get("conflicts", ""),
    )


def history_unavailable_of(error: BaseException) -> Optional[HistoryUnavailable]:
    """The metadata of a HISTORY_UNAVAILABLE, typed; None for any other error."""
    typed = as_error(error)
    if typed is None or typed.reason != "HISTORY_UNAVAILABLE":
        return None
    m = typed.metadata
    version = _number(m, "since_version")
    return HistoryUnavailable(
        version=version if version is not None else _number(m, "expected_version") or 0,
        current_version=_number(m, "current_version") or 0,
        oldest_version=_number(m, "oldest_version"),
    )


__all__ = ["HistoryUnavailable", "MergeConflict", "history_unavailable_of", "merge_conflict_of"]
