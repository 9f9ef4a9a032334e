"""API errors, worded and shaped as kube-apiserver sends them.

Clients key on these: kube-rs's `get_opt` and finalizer helper on `reason: NotFound` and the
409 code, kube-runtime's watcher on a 410 `Expired` event, kubectl on `reason: Invalid` with
`details.causes` (it prints "The Kind "name" is invalid: field: message"). So an error is a
`Status` object with the API server's code, reason and message, never a bare text.
"""
import json
from dataclasses import dataclass, field
from typing import Any


class ApiError(Exception):
    """A request refused with a `Status` (metav1.Status) body."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict:
        body = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure',
                'message': self.message, 'reason': self.reason, 'code': self.code}
        if self.details:
            body['details'] = self.details
        return body


def qualified(resource: str, group: str) -> str:
    """`deployments.apps`, or `pods` for the core group: how the API server names a resource."""
    return f'{resource}.{group}' if group else resource


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(404, 'NotFound', f'{qualified(resource, group)} "{name}" not found',
                    {'name': name, 'group': group, 'kind': resource})


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(409, 'AlreadyExists', f'{qualified(resource, group)} "{name}" already exists',
                    {'name': name, 'group': group, 'kind': resource})


def conflict(resource: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(409, 'Conflict',
                    f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
                    {'name': name, 'group': group, 'kind': resource})


MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again'


def bad_request(message: str) -> ApiError:
    return ApiError(400, 'BadRequest', message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, 'Forbidden', message)


def method_not_allowed(message: str) -> ApiError:
    return ApiError(405, 'MethodNotAllowed', message)


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(415, 'UnsupportedMediaType', f'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type!r})')


def gone(message: str) -> ApiError:
    # What kube-runtime's watcher (and client-go's reflector) answer by listing again.
    return ApiError(410, 'Expired', message)


def internal(message: str) -> ApiError:
    return ApiError(500, 'InternalError', f'Internal error occurred: {message}')


def unauthorized() -> ApiError:
    return ApiError(401, 'Unauthorized', 'Unauthorized')


# ---- Field errors: apimachinery's field.Error, for 422 Invalid --------------------------------

# field.ErrorType: how the message starts, and the cause's `reason`.
REQUIRED = ('Required value', 'FieldValueRequired')
INVALID = ('Invalid value', 'FieldValueInvalid')
TYPE_INVALID = ('Invalid value', 'FieldValueTypeInvalid')
NOT_SUPPORTED = ('Unsupported value', 'FieldValueNotSupported')
DUPLICATE = ('Duplicate value', 'FieldValueDuplicate')
FORBIDDEN = ('Forbidden', 'FieldValueForbidden')
TOO_LONG = ('Too long', 'FieldValueTooLong')
TOO_MANY = ('Too many', 'FieldValueTooMany')

# The types whose message never shows the bad value (field.Error.ErrorBody).
_NO_VALUE = {REQUIRED, FORBIDDEN, TOO_LONG}

# CEL rules may name their error type by cause reason.
BY_REASON = {t[1]: t for t in (REQUIRED, INVALID, NOT_SUPPORTED, DUPLICATE, FORBIDDEN)}

_OMIT = object()


class Raw(str):
    """A bad value printed as it is (what Go's %#v prints for a map or struct), not quoted."""


def go_value(value: Any) -> str:
    """A bad value as Go's `%v`/`%q` prints it in a field error."""
    if isinstance(value, Raw):
        return str(value)
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return format_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    # Go prints maps and slices with %#v; close enough for a human, and rare.
    return json.dumps(value, separators=(',', ':'), sort_keys=True)


def format_number(value: int | float) -> str:
    """A JSON number as Go prints an int64 or a float64 (`1`, `0.5`, `1e+21`)."""
    if isinstance(value, int):
        return str(value)
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value).replace('e+0', 'e+').replace('e-0', 'e-')


@dataclass
class FieldError:
    """One invalid field, as apimachinery's field.Error."""
    type: tuple[str, str]
    field: str          # dotted path; '' is the root, printed "<nil>" as Go prints a nil path
    bad_value: Any = _OMIT
    detail: str = ''

    @property
    def path(self) -> str:
        return self.field or '<nil>'

    def body(self) -> str:
        if self.type in _NO_VALUE or self.bad_value is _OMIT:
            text = self.type[0]
        else:
            text = f'{self.type[0]}: {go_value(self.bad_value)}'
        return f'{text}: {self.detail}' if self.detail else text

    def __str__(self) -> str:
        return f'{self.path}: {self.body()}'


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    """422 Invalid, as apierrors.NewInvalid words it: `Kind.group "name" is invalid: ...`,
    the causes listed one by one for kubectl."""
    qualified_kind = f'{kind}.{group}' if group else kind
    listed = str(errors[0]) if len(errors) == 1 else '[' + ', '.join(map(str, errors)) + ']'
    causes = [{'reason': e.type[1], 'message': e.body(), 'field': e.path} for e in errors]
    return ApiError(422, 'Invalid', f'{qualified_kind} "{name}" is invalid: {listed}',
                    {'name': name, 'group': group, 'kind': kind, 'causes': causes})


@dataclass
class Warnings:
    """Warnings for the response's `Warning: 299 - "..."` headers (kubectl prints them)."""
    items: list[str] = field(default_factory=list)

    def add(self, text: str):
        if text not in self.items:
            self.items.append(text)
