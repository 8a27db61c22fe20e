from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WriteMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WRITE_MODE_UNSPECIFIED: _ClassVar[WriteMode]
    WRITE_MODE_REPLACE: _ClassVar[WriteMode]
    WRITE_MODE_APPEND: _ClassVar[WriteMode]

class AuthorKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUTHOR_KIND_UNSPECIFIED: _ClassVar[AuthorKind]
    AUTHOR_KIND_AGENT: _ClassVar[AuthorKind]
    AUTHOR_KIND_USER: _ClassVar[AuthorKind]
WRITE_MODE_UNSPECIFIED: WriteMode
WRITE_MODE_REPLACE: WriteMode
WRITE_MODE_APPEND: WriteMode
AUTHOR_KIND_UNSPECIFIED: AuthorKind
AUTHOR_KIND_AGENT: AuthorKind
AUTHOR_KIND_USER: AuthorKind

class Author(_message.Message):
    __slots__ = ("kind", "name")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    kind: AuthorKind
    name: str
    def __init__(self, kind: _Optional[_Union[AuthorKind, str]] = ..., name: _Optional[str] = ...) -> None: ...

class Plan(_message.Message):
    __slots__ = ("task_id", "title", "content", "content_bytes", "content_chars", "version", "created_by", "created_at", "updated_at", "latest_revision_number", "implementation_started_at", "implementation_started_by", "implementation_started_session_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_CHARS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LATEST_REVISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    IMPLEMENTATION_STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    IMPLEMENTATION_STARTED_BY_FIELD_NUMBER: _ClassVar[int]
    IMPLEMENTATION_STARTED_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    title: str
    content: str
    content_bytes: int
    content_chars: int
    version: int
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    latest_revision_number: int
    implementation_started_at: _timestamp_pb2.Timestamp
    implementation_started_by: str
    implementation_started_session_id: str
    def __init__(self, task_id: _Optional[str] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., content_bytes: _Optional[int] = ..., content_chars: _Optional[int] = ..., version: _Optional[int] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., latest_revision_number: _Optional[int] = ..., implementation_started_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., implementation_started_by: _Optional[str] = ..., implementation_started_session_id: _Optional[str] = ...) -> None: ...

class PlanRevision(_message.Message):
    __slots__ = ("id", "task_id", "revision_number", "title", "content", "content_bytes", "content_chars", "author_kind", "author_name", "revert_of_revision_id", "created_at", "updated_at", "revision_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_CHARS_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_KIND_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_NAME_FIELD_NUMBER: _ClassVar[int]
    REVERT_OF_REVISION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVISION_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    task_id: str
    revision_number: int
    title: str
    content: str
    content_bytes: int
    content_chars: int
    author_kind: AuthorKind
    author_name: str
    revert_of_revision_id: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    revision_version: str
    def __init__(self, id: _Optional[str] = ..., task_id: _Optional[str] = ..., revision_number: _Optional[int] = ..., title: _Optional[str] = ..., content: _Optional[str] = ..., content_bytes: _Optional[int] = ..., content_chars: _Optional[int] = ..., author_kind: _Optional[_Union[AuthorKind, str]] = ..., author_name: _Optional[str] = ..., revert_of_revision_id: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., revision_version: _Optional[str] = ...) -> None: ...

class WrittenRevision(_message.Message):
    __slots__ = ("id", "number", "coalesced")
    ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    COALESCED_FIELD_NUMBER: _ClassVar[int]
    id: str
    number: int
    coalesced: bool
    def __init__(self, id: _Optional[str] = ..., number: _Optional[int] = ..., coalesced: bool = ...) -> None: ...

class Truncation(_message.Message):
    __slots__ = ("prior_chars", "new_chars", "prior_revision_number")
    PRIOR_CHARS_FIELD_NUMBER: _ClassVar[int]
    NEW_CHARS_FIELD_NUMBER: _ClassVar[int]
    PRIOR_REVISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    prior_chars: int
    new_chars: int
    prior_revision_number: int
    def __init__(self, prior_chars: _Optional[int] = ..., new_chars: _Optional[int] = ..., prior_revision_number: _Optional[int] = ...) -> None: ...
