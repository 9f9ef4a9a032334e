"""A few validations of built-in types that generated operators write, with the API server's
messages: events.k8s.io Events (what kube's Recorder sends) and apps/v1 Deployments (what
operators build in code, where a mistake would otherwise show only on a real cluster).
Other built-in types get the generic object checks only (objects.py).
"""
import json
import re

from .errors import INVALID, NOT_SUPPORTED, REQUIRED, TOO_LONG, FieldError, Raw
from .objects import DNS1123_LABEL, LABEL_MSG


def _go_map(labels: dict) -> str:
    """A label map as Go's %#v prints map[string]string."""
    return 'map[string]string{' + ', '.join(f'{json.dumps(k)}:{json.dumps(v)}' for k, v in sorted(labels.items())) + '}'


def event(obj: dict, old: dict | None) -> list[FieldError]:
    errs = []
    for name, limit in (('reportingController', 253), ('reportingInstance', 128), ('action', 128), ('reason', 128)):
        value = obj.get(name)
        if not value:
            errs.append(FieldError(REQUIRED, name))
        elif len(value) > limit:
            errs.append(FieldError(INVALID, name, value, f'can have at most {limit} characters'))
    if not obj.get('eventTime'):
        errs.append(FieldError(REQUIRED, 'eventTime'))
    if obj.get('type') not in ('Normal', 'Warning'):
        errs.append(FieldError(NOT_SUPPORTED, 'type', obj.get('type', ''), 'supported values: "Normal", "Warning"'))
    note = obj.get('note') or ''
    if len(note.encode()) > 1024:
        errs.append(FieldError(TOO_LONG, 'note', detail='may not be more than 1024 bytes'))
    return errs


def deployment(obj: dict, old: dict | None) -> list[FieldError]:
    errs = []
    spec = obj.get('spec') or {}
    replicas = spec.get('replicas')
    if isinstance(replicas, int) and replicas < 0:
        errs.append(FieldError(INVALID, 'spec.replicas', replicas, 'must be greater than or equal to 0'))
    selector = spec.get('selector')
    template = spec.get('template') or {}
    labels = (template.get('metadata') or {}).get('labels') or {}
    if not selector:
        errs.append(FieldError(REQUIRED, 'spec.selector'))
    else:
        wanted = selector.get('matchLabels') or {}
        if not wanted and not selector.get('matchExpressions'):
            errs.append(FieldError(INVALID, 'spec.selector', selector, 'empty selector is invalid for deployment'))
        elif any(labels.get(k) != v for k, v in wanted.items()):
            errs.append(FieldError(INVALID, 'spec.template.metadata.labels', Raw(_go_map(labels)),
                                   '`selector` does not match template `labels`'))
    if old is not None and (old.get('spec') or {}).get('selector') != selector:
        errs.append(FieldError(INVALID, 'spec.selector', Raw(json.dumps(selector, sort_keys=True)), 'field is immutable'))
    containers = (template.get('spec') or {}).get('containers') or []
    if not containers:
        errs.append(FieldError(REQUIRED, 'spec.template.spec.containers'))
    for i, c in enumerate(containers):
        path = f'spec.template.spec.containers[{i}]'
        if not c.get('name'):
            errs.append(FieldError(REQUIRED, f'{path}.name'))
        elif len(c['name']) > 63 or not re.fullmatch(DNS1123_LABEL, c['name']):
            errs.append(FieldError(INVALID, f'{path}.name', c['name'], LABEL_MSG))
        if not c.get('image'):
            errs.append(FieldError(REQUIRED, f'{path}.image'))
    return errs


CHECKS = {('events.k8s.io', 'events'): event, ('apps', 'deployments'): deployment}


def check(key, obj: dict, old: dict | None) -> list[FieldError]:
    fn = CHECKS.get(key)
    return fn(obj, old) if fn else []
