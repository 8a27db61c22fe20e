"""How safe calls are retried (clients/SDK.md, "Retries")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional

_PLANS = "/taskplans.v1.PlanService/"
_TASKS = "/taskplans.v1.TaskService/"

#: The writes that carry a request_id: the client sets one when the caller gives none, once per
#: logical call, so that every attempt carries the same id and the server applies the write once.
REQUEST_ID_METHODS: FrozenSet[str] = frozenset(
    _PLANS + name for name in ("CreatePlan", "UpdatePlan", "EditPlan", "RestorePlanRevision")
)

#: Every method the retry policy retries: the reads and the writes with a request_id. No other write
#: (SavePlan, DeletePlan, RevertPlan, MarkImplementationStarted, CreateTask, DeleteTask) is retried.
#: ImportTask is a client stream whose requests are read once: it is not retried (run it again, it
#: is idempotent).
RETRIED_METHODS: FrozenSet[str] = REQUEST_ID_METHODS | frozenset(
    [_PLANS + name for name in ("GetPlan", "ListPlanRevisions", "GetPlanRevision", "GetPlanChanges", "DiffPlanRevisions")]
    + [_TASKS + name for name in ("GetTask", "ListTasks", "ExportTask")]
)


@dataclass(frozen=True)
class RetryPolicy:
    """How ``dial(retry=...)`` retries; ``retry=None`` turns retries off. Times are in seconds.

    ``max_attempts``: attempts in all, the first included. ``initial_backoff``: the delay before the
    second attempt; each next one is ``multiplier`` times longer, at most ``max_backoff``, and
    multiplied by a random factor in ``[1 - jitter, 1 + jitter]``; at least the error's RetryInfo
    delay. ``max_elapsed``: no attempt starts later than this after the first (nor past the call's
    deadline).
    """

    max_attempts: int = 7
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.2
    max_elapsed: float = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.max_elapsed < 0:
            raise ValueError("RetryPolicy backoffs and max_elapsed cannot be negative")
        if self.multiplier < 1:
            raise ValueError("RetryPolicy.multiplier must be at least 1")
        if not 0 <= self.jitter < 1:
            raise ValueError("RetryPolicy.jitter must be in [0, 1)")

    def delay(self, failures: int, retry_delay: Optional[float], random: float) -> float:
        """The delay before the attempt after ``failures`` failed ones (1 for the first retry), with
        ``random`` in [0, 1) choosing the jitter factor and ``retry_delay`` the error's RetryInfo."""
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** (failures - 1))
        jittered = base * (1 - self.jitter + 2 * self.jitter * random)
        return max(jittered, retry_delay or 0.0)


#: The defaults of clients/SDK.md: 5 attempts, 100 ms doubling to 5 s, jitter 0.8-1.2, 30 s in all.
DEFAULT_RETRY_POLICY = RetryPolicy()
