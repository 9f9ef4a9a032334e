"""Generic object rules the API server applies to every type: names, labels, annotations,
generation, fields the server owns, and the status subresource's split of an object.
"""
import copy
import json
import random
import re

from .errors import FORBIDDEN, INVALID, REQUIRED, TOO_LONG, FieldError

DNS1123_SUBDOMAIN = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'
DNS1123_LABEL = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?'
LABEL_VALUE = r'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'
QUALIFIED_NAME = r'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                 "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                 f"regex used for validation is '{DNS1123_SUBDOMAIN}')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
             "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
             f"regex used for validation is '{DNS1123_LABEL}')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                   "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
                   f"or 'my_value',  or '12345', regex used for validation is '{LABEL_VALUE}')")
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
                 "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                 f"regex used for validation is '{QUALIFIED_NAME}')")

# Types whose names are DNS labels rather than subdomains; RBAC names are path segments.
LABEL_NAMED = {('', 'namespaces'), ('', 'services')}
PATH_SEGMENT_NAMED = {('rbac.authorization.k8s.io', p) for p in ('roles', 'rolebindings', 'clusterroles', 'clusterrolebindings')}

# Set by the server; ignored when a client sends them (resourceVersion is checked apart, and
# the managedFields a client sends are read before, by managed.py).
SERVER_FIELDS = ('uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds',
                 'generation', 'selfLink', 'managedFields')

MAX_ANNOTATIONS = 256 * 1024
_GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789'   # apiserver's names.SimpleNameGenerator


def generate_name(prefix: str) -> str:
    return prefix[:58] + ''.join(random.choice(_GENERATE_CHARS) for _ in range(5))


def check_name(key, name: str, path: str = 'metadata.name') -> list[FieldError]:
    if not name:
        return [FieldError(REQUIRED, path, detail='name or generateName is required')]
    if key in PATH_SEGMENT_NAMED:
        if name in ('.', '..') or '/' in name or '%' in name:
            return [FieldError(INVALID, path, name, 'may not contain \'/\' or \'%\', or be \'.\' or \'..\'')]
        return []
    label = key in LABEL_NAMED
    limit, pattern, message = (63, DNS1123_LABEL, LABEL_MSG) if label else (253, DNS1123_SUBDOMAIN, SUBDOMAIN_MSG)
    errs = []
    if len(name) > limit:
        errs.append(FieldError(INVALID, path, name, f'must be no more than {limit} characters'))
    if not re.fullmatch(pattern, name):
        errs.append(FieldError(INVALID, path, name, message))
    return errs


def check_labels(labels, path: str = 'metadata.labels') -> list[FieldError]:
    errs = []
    for key, value in (labels or {}).items():
        errs += _check_key(key, path)
        if not isinstance(value, str):
            continue
        if len(value) > 63:
            errs.append(FieldError(INVALID, path, value, 'must be no more than 63 characters'))
        if not re.fullmatch(LABEL_VALUE, value):
            errs.append(FieldError(INVALID, path, value, LABEL_VALUE_MSG))
    return errs


def _check_key(key: str, path: str) -> list[FieldError]:
    prefix, _, name = key.rpartition('/')
    errs = []
    if prefix and (len(prefix) > 253 or not re.fullmatch(DNS1123_SUBDOMAIN, prefix)):
        errs.append(FieldError(INVALID, path, key, 'prefix part ' + SUBDOMAIN_MSG))
    if not name or len(name) > 63:
        errs.append(FieldError(INVALID, path, key, 'name part must be no more than 63 characters'))
    elif not re.fullmatch(QUALIFIED_NAME, name):
        errs.append(FieldError(INVALID, path, key, QUALIFIED_MSG))
    return errs


def check_annotations(annotations) -> list[FieldError]:
    size = sum(len(k) + len(v if isinstance(v, str) else json.dumps(v)) for k, v in (annotations or {}).items())
    if size > MAX_ANNOTATIONS:
        return [FieldError(TOO_LONG, 'metadata.annotations', detail=f'may not be more than {MAX_ANNOTATIONS} bytes')]
    return []


def check_new_finalizers(old: dict, new: dict) -> list[FieldError]:
    """An object being deleted may lose finalizers, never gain one."""
    before = set(old.get('metadata', {}).get('finalizers') or [])
    added = [f for f in new.get('metadata', {}).get('finalizers') or [] if f not in before]
    if old.get('metadata', {}).get('deletionTimestamp') and added:
        found = '[]string{' + ', '.join(json.dumps(f) for f in added) + '}'
        return [FieldError(FORBIDDEN, 'metadata.finalizers', detail=f'no new finalizers can be added if the object is being deleted, found new finalizers {found}')]
    return []


def content(obj: dict) -> dict:
    """What `metadata.generation` counts: all but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ('metadata', 'status', 'apiVersion', 'kind')}


def same_state(a: dict, b: dict) -> bool:
    """Whether a write changes nothing (then the API server stores nothing and sends no event).
    managedFields count: a write that only changes who owns a field is stored."""
    def strip(o):
        md = {k: v for k, v in (o.get('metadata') or {}).items() if k != 'resourceVersion'}
        return {**o, 'metadata': md}
    return strip(a) == strip(b)


def carry_server_fields(new: dict, old: dict) -> dict:
    """`new` with the fields only the server sets taken from `old` (uid, creation time,
    deletion, generation, namespace)."""
    new = copy.copy(new)
    md = dict(new.get('metadata') or {})
    old_md = old.get('metadata') or {}
    for k in SERVER_FIELDS + ('namespace',):
        md.pop(k, None)
        if k in old_md:
            md[k] = old_md[k]
    new['metadata'] = md
    return new


def split_status(new: dict, old: dict, status_write: bool) -> dict:
    """A write to the main resource keeps the old status; a write to /status changes only
    the status."""
    if status_write:
        out = copy.copy(old)
        out['metadata'] = dict(old.get('metadata') or {})   # written to later; `old` may be stored
        if 'status' in new:
            out['status'] = new['status']
        else:
            out.pop('status', None)
        return out
    out = copy.copy(new)
    if 'status' in old:
        out['status'] = old['status']
    else:
        out.pop('status', None)
    return out
