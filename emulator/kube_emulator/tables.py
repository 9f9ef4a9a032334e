"""Table output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`) for custom resources:
what `kubectl get` prints, with a CRD's `additionalPrinterColumns` (e.g. `kubectl get dms`
shows the image). Built-in types are answered as plain objects, which kubectl prints itself
(names and ages only).
"""
import datetime

NAME = {'name': 'Name', 'type': 'string', 'format': 'name', 'priority': 0,
        'description': 'Name must be unique within a namespace.'}
AGE = {'name': 'Age', 'type': 'date', 'format': '', 'priority': 0,
       'description': 'CreationTimestamp is a timestamp representing the server time when this object was created.'}


def wanted(accept: str) -> bool:
    return 'as=Table' in accept and 'g=meta.k8s.io' in accept


def _path(obj, json_path: str):
    """A value by a simple JSONPath (`.spec.image`, `.status.conditions[0].type`)."""
    node = obj
    for part in json_path.strip('.').replace('[', '.').replace(']', '').split('.'):
        if part == '':
            continue
        if isinstance(node, list) and part.isdigit():
            node = node[int(part)] if int(part) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration, as the API server prints ages."""
    s = int(seconds)
    if s < 0:
        return '0s'
    if s < 120:
        return f'{s}s'
    m = s // 60
    if m < 10:
        return f'{m}m' if s % 60 == 0 else f'{m}m{s % 60}s'
    if m < 180:
        return f'{m}m'
    h = m // 60
    if h < 8:
        return f'{h}h' if m % 60 == 0 else f'{h}h{m % 60}m'
    if h < 48:
        return f'{h}h'
    if h < 24 * 8:
        return f'{h // 24}d' if h % 24 == 0 else f'{h // 24}d{h % 24}h'
    if h < 24 * 365 * 2:
        return f'{h // 24}d'
    return f'{h // (24 * 365)}y'


def _cell(obj, column):
    value = _path(obj, column['jsonPath'])
    if value is None:
        return None
    if column.get('type') == 'date' and isinstance(value, str):
        try:
            then = datetime.datetime.strptime(value, '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            return value
        return human_duration((datetime.datetime.now(tz=datetime.timezone.utc) - then).total_seconds())
    return value


def table(columns: list[dict], objects: list[dict], resource_version: str, include: str) -> dict:
    """A meta.k8s.io/v1 Table of `objects` with the CRD version's printer `columns`."""
    printer = columns or [{**AGE, 'jsonPath': '.metadata.creationTimestamp'}]
    definitions = [NAME] + [{'name': c['name'], 'type': c['type'], 'format': c.get('format', ''),
                             'description': c.get('description', ''), 'priority': c.get('priority', 0)}
                            for c in printer]
    rows = []
    for obj in objects:
        row = {'cells': [obj['metadata']['name']] + [_cell(obj, c) for c in printer]}
        if include == 'Object':
            row['object'] = obj
        elif include != 'None':
            row['object'] = {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1',
                             'metadata': obj['metadata']}
        rows.append(row)
    return {'kind': 'Table', 'apiVersion': 'meta.k8s.io/v1', 'metadata': {'resourceVersion': resource_version},
            'columnDefinitions': definitions, 'rows': rows}
