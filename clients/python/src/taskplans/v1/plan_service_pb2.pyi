from google.protobuf import timestamp_pb2 as _timestamp_pb2
from taskplans.v1 import plan_pb2 as _plan_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RestoreStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESTORE_STATUS_UNSPECIFIED: _ClassVar[RestoreStatus]
    RESTORE_STATUS_RESTORED: _ClassVar[RestoreStatus]
    RESTORE_STATUS_ALREADY_CURRENT: _ClassVar[RestoreStatus]

class PlanChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLAN_CHANGE_KIND_UNSPECIFIED: _ClassVar[PlanChangeKind]
    PLAN_CHANGE_KIND_SNAPSHOT: _ClassVar[PlanChangeKind]
    PLAN_CHANGE_KIND_CREATED: _ClassVar[PlanChangeKind]
    PLAN_CHANGE_KIND_UPDATED: _ClassVar[PlanChangeKind]
    PLAN_CHANGE_KIND_REVERTED: _ClassVar[PlanChangeKind]
    PLAN_CHANGE_KIND_DELETED: _ClassVar[PlanChangeKind]
    PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED: _ClassVar[PlanChangeKind]
RESTORE_STATUS_UNSPECIFIED: RestoreStatus
RESTORE_STATUS_RESTORED: RestoreStatus
RESTORE_STATUS_ALREADY_CURRENT: RestoreStatus
PLAN_CHANGE_KIND_UNSPECIFIED: PlanChangeKind
PLAN_CHANGE_KIND_SNAPSHOT: PlanChangeKind
PLAN_CHANGE_KIND_CREATED: PlanChangeKind
PLAN_CHANGE_KIND_UPDATED: PlanChangeKind
PLAN_CHANGE_KIND_REVERTED: PlanChangeKind
PLAN_CHANGE_KIND_DELETED: PlanChangeKind
PLAN_CHANGE_KIND_IMPLEMENTATION_STARTED: PlanChangeKind

class GetPlanRequest(_message.Message):
    __slots__ = ("task_id", "offset", "limit", "expected_version")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    offset: int
    limit: int
    expected_version: int
    def __init__(self, task_id: _Optional[str] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ..., expected_version: _Optional[int] = ...) -> None: ...

class GetPlanResponse(_message.Message):
    __slots__ = ("plan", "total_chars", "total_bytes", "next_offset", "has_more")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CHARS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    plan: _plan_pb2.Plan
    total_chars: int
    total_bytes: int
    next_offset: int
    has_more: bool
    def __init__(self, plan: _Optional[_Union[_plan_pb2.Plan, _Mapping]] = ..., total_chars: _Optional[int] = ..., total_bytes: _Optional[int] = ..., next_offset: _Optional[int] = ..., has_more: bool = ...) -> None: ...

class EditPlanRequest(_message.Message):
    __slots__ = ("task_id", "expected_version", "old_text", "new_text", "acknowledge_reduction", "author", "request_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    OLD_TEXT_FIELD_NUMBER: _ClassVar[int]
    NEW_TEXT_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGE_REDUCTION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    expected_version: int
    old_text: str
    new_text: str
    acknowledge_reduction: bool
    author: _plan_pb2.Author
    request_id: str
    def __init__(self, task_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., old_text: _Optional[str] = ..., new_text: _Optional[str] = ..., acknowledge_reduction: bool = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class RestorePlanRevisionRequest(_message.Message):
    __slots__ = ("task_id", "revision_id", "expected_version", "expected_revision_version", "author", "request_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    revision_id: str
    expected_version: int
    expected_revision_version: str
    author: _plan_pb2.Author
    request_id: str
    def __init__(self, task_id: _Optional[str] = ..., revision_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., expected_revision_version: _Optional[str] = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class RestorePlanRevisionResponse(_message.Message):
    __slots__ = ("status", "plan", "revision", "prior_revision_number")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    PRIOR_REVISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    status: RestoreStatus
    plan: _plan_pb2.Plan
    revision: _plan_pb2.WrittenRevision
    prior_revision_number: int
    def __init__(self, status: _Optional[_Union[RestoreStatus, str]] = ..., plan: _Optional[_Union[_plan_pb2.Plan, _Mapping]] = ..., revision: _Optional[_Union[_plan_pb2.WrittenRevision, _Mapping]] = ..., prior_revision_number: _Optional[int] = ...) -> None: ...

class CreatePlanRequest(_message.Message):
    __slots__ = ("task_id", "title", "content", "author", "expected_version", "acknowledge_reduction", "mode", "request_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGE_REDUCTION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    content: str
    author: _plan_pb2.Author
    expected_version: int
    acknowledge_reduction: bool
    mode: _plan_pb2.WriteMode
    request_id: str
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ..., expected_version: _Optional[int] = ..., acknowledge_reduction: bool = ..., mode: _Optional[_Union[_plan_pb2.WriteMode, str]] = ..., request_id: _Optional[str] = ...) -> None: ...

class UpdatePlanRequest(_message.Message):
    __slots__ = ("task_id", "title", "content", "mode", "expected_version", "acknowledge_reduction", "author", "request_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGE_REDUCTION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    content: str
    mode: _plan_pb2.WriteMode
    expected_version: int
    acknowledge_reduction: bool
    author: _plan_pb2.Author
    request_id: str
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., mode: _Optional[_Union[_plan_pb2.WriteMode, str]] = ..., expected_version: _Optional[int] = ..., acknowledge_reduction: bool = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SavePlanRequest(_message.Message):
    __slots__ = ("task_id", "title", "content", "author")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    content: str
    author: _plan_pb2.Author
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ...) -> None: ...

class WritePlanResponse(_message.Message):
    __slots__ = ("plan", "revision", "truncation")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    TRUNCATION_FIELD_NUMBER: _ClassVar[int]
    plan: _plan_pb2.Plan
    revision: _plan_pb2.WrittenRevision
    truncation: _plan_pb2.Truncation
    def __init__(self, plan: _Optional[_Union[_plan_pb2.Plan, _Mapping]] = ..., revision: _Optional[_Union[_plan_pb2.WrittenRevision, _Mapping]] = ..., truncation: _Optional[_Union[_plan_pb2.Truncation, _Mapping]] = ...) -> None: ...

class DeletePlanRequest(_message.Message):
    __slots__ = ("task_id", "expected_version")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    expected_version: int
    def __init__(self, task_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class DeletePlanResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPlanRevisionsRequest(_message.Message):
    __slots__ = ("task_id", "page_size", "page_token")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    page_size: int
    page_token: str
    def __init__(self, task_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListPlanRevisionsResponse(_message.Message):
    __slots__ = ("revisions", "next_page_token")
    REVISIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    revisions: _containers.RepeatedCompositeFieldContainer[_plan_pb2.PlanRevision]
    next_page_token: str
    def __init__(self, revisions: _Optional[_Iterable[_Union[_plan_pb2.PlanRevision, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetPlanRevisionRequest(_message.Message):
    __slots__ = ("task_id", "revision_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    revision_id: str
    def __init__(self, task_id: _Optional[str] = ..., revision_id: _Optional[str] = ...) -> None: ...

class GetPlanRevisionResponse(_message.Message):
    __slots__ = ("revision",)
    REVISION_FIELD_NUMBER: _ClassVar[int]
    revision: _plan_pb2.PlanRevision
    def __init__(self, revision: _Optional[_Union[_plan_pb2.PlanRevision, _Mapping]] = ...) -> None: ...

class RevertPlanRequest(_message.Message):
    __slots__ = ("task_id", "revision_id", "author")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    revision_id: str
    author: _plan_pb2.Author
    def __init__(self, task_id: _Optional[str] = ..., revision_id: _Optional[str] = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ...) -> None: ...

class MarkImplementationStartedRequest(_message.Message):
    __slots__ = ("task_id", "session_id", "actor")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    session_id: str
    actor: str
    def __init__(self, task_id: _Optional[str] = ..., session_id: _Optional[str] = ..., actor: _Optional[str] = ...) -> None: ...

class MarkImplementationStartedResponse(_message.Message):
    __slots__ = ("plan",)
    PLAN_FIELD_NUMBER: _ClassVar[int]
    plan: _plan_pb2.Plan
    def __init__(self, plan: _Optional[_Union[_plan_pb2.Plan, _Mapping]] = ...) -> None: ...

class WatchPlanRequest(_message.Message):
    __slots__ = ("task_id", "after_version", "include_content")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_VERSION_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    after_version: int
    include_content: bool
    def __init__(self, task_id: _Optional[str] = ..., after_version: _Optional[int] = ..., include_content: bool = ...) -> None: ...

class PlanChange(_message.Message):
    __slots__ = ("kind", "plan", "revision", "author", "committed_at")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    kind: PlanChangeKind
    plan: _plan_pb2.Plan
    revision: _plan_pb2.WrittenRevision
    author: _plan_pb2.Author
    committed_at: _timestamp_pb2.Timestamp
    def __init__(self, kind: _Optional[_Union[PlanChangeKind, str]] = ..., plan: _Optional[_Union[_plan_pb2.Plan, _Mapping]] = ..., revision: _Optional[_Union[_plan_pb2.WrittenRevision, _Mapping]] = ..., author: _Optional[_Union[_plan_pb2.Author, _Mapping]] = ..., committed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
