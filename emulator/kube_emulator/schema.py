"""CRD structural schemas: pruning, defaulting and validation of custom resources, with the API
server's semantics and wording (apiextensions-apiserver on top of kube-openapi's validator).

The order is the API server's: unknown fields are pruned, nulls of non-nullable fields are
dropped or defaulted, defaults applied; then the object is validated against the schema and
its `x-kubernetes-validations` CEL rules (cel.py). Errors are field.Errors whose messages
read as the API server's: `spec.replicas: Invalid value: -1: spec.replicas in body should be
greater than or equal to 0`.

Not validated: `format` (the API server checks only a few), `uniqueItems` (refused in CRDs
anyway), `oneOf`/`anyOf`/`allOf`/`not` (value validations, rare in generated CRDs).
"""
import copy
import re
from typing import Any

from .errors import (DUPLICATE, INVALID, NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY,
                     TYPE_INVALID, FieldError, format_number)

# Object metadata fields kept by pruning at the root of a custom resource and of embedded
# resources (ObjectMeta's JSON names).
OBJECT_META = {'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion',
               'generation', 'creationTimestamp', 'deletionTimestamp',
               'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences',
               'finalizers', 'managedFields'}


def child(path: str, name: str) -> str:
    return f'{path}.{name}' if path else name


def index(path: str, i: int) -> str:
    return f'{path}[{i}]'


def json_type(value: Any) -> str:
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'number'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, list):
        return 'array'
    return 'object'


def preserves_unknown(schema: dict) -> bool:
    return bool(schema.get('x-kubernetes-preserve-unknown-fields'))


# ---- pruning --------------------------------------------------------------------------------

def prune(value: Any, schema: dict, path: str, root: bool, pruned: list[str]) -> Any:
    """Drops the fields the schema does not declare (unless it preserves unknown fields);
    their paths go to `pruned` (for field validation Warn/Strict)."""
    if isinstance(value, dict):
        props = schema.get('properties')
        extra = schema.get('additionalProperties')
        embedded = root or schema.get('x-kubernetes-embedded-resource')
        out = {}
        for k, v in value.items():
            p = child(path, k)
            if embedded and k in ('apiVersion', 'kind'):
                out[k] = v
            elif embedded and k == 'metadata':
                out[k] = _prune_meta(v, p, pruned) if isinstance(v, dict) else v
            elif props is not None and k in props:
                out[k] = prune(v, props[k], p, False, pruned)
            elif isinstance(extra, dict):
                out[k] = prune(v, extra, p, False, pruned)
            elif extra is True or preserves_unknown(schema):
                out[k] = v
            else:
                pruned.append(p)
        return out
    if isinstance(value, list) and isinstance(schema.get('items'), dict):
        return [prune(v, schema['items'], index(path, i), False, pruned) for i, v in enumerate(value)]
    return value


def _prune_meta(md: dict, path: str, pruned: list[str]) -> dict:
    out = {}
    for k, v in md.items():
        if k in OBJECT_META:
            out[k] = v
        else:
            pruned.append(child(path, k))
    return out


# ---- defaulting -----------------------------------------------------------------------------

def default(value: Any, schema: dict) -> Any:
    """Applies `default`s to absent properties (recursing into objects, arrays and maps), and
    drops or defaults nulls of non-nullable properties, as the API server does."""
    if isinstance(value, dict):
        props = schema.get('properties') or {}
        out = dict(value)
        for k, sub in props.items():
            if k in out and out[k] is None and not sub.get('nullable'):
                del out[k]
            if k not in out and 'default' in sub:
                out[k] = copy.deepcopy(sub['default'])
            if k in out:
                out[k] = default(out[k], sub)
        extra = schema.get('additionalProperties')
        if isinstance(extra, dict):
            for k in out:
                if k not in props:
                    out[k] = default(out[k], extra)
        return out
    if isinstance(value, list) and isinstance(schema.get('items'), dict):
        return [default(v, schema['items']) for v in value]
    return value


def has_defaults(schema: Any) -> bool:
    if isinstance(schema, dict):
        return 'default' in schema or any(has_defaults(v) for v in schema.values())
    if isinstance(schema, list):
        return any(has_defaults(v) for v in schema)
    return False


# ---- validation -----------------------------------------------------------------------------

def _in_body(path: str) -> str:
    return f'{path} in body'


def validate(value: Any, schema: dict, path: str, errs: list[FieldError]):
    """Appends to `errs` the schema violations of `value` at `path` (not the CEL rules)."""
    if value is None:
        if not schema.get('nullable') and schema.get('type'):
            errs.append(FieldError(TYPE_INVALID, path, 'null',
                                   f'{_in_body(path)} must be of type {schema["type"]}: "null"'))
        return
    expected = schema.get('type')
    actual = json_type(value)
    if schema.get('x-kubernetes-int-or-string'):
        if actual not in ('integer', 'string'):
            errs.append(FieldError(TYPE_INVALID, path, actual,
                                   f'{_in_body(path)} must be of type integer,string: "{actual}"'))
            return
    elif expected and not (expected == actual or (expected == 'number' and actual == 'integer')):
        errs.append(FieldError(TYPE_INVALID, path, actual,
                               f'{_in_body(path)} must be of type {expected}: "{actual}"'))
        return

    if 'enum' in schema and value not in schema['enum']:
        errs.append(FieldError(NOT_SUPPORTED, path, value, 'supported values: ' + ', '.join(
            f'"{v}"' if isinstance(v, str) else format_number(v) if isinstance(v, (int, float)) else str(v)
            for v in schema['enum'])))

    if actual in ('integer', 'number'):
        _numbers(value, schema, path, errs)
    elif actual == 'string':
        _strings(value, schema, path, errs)
    elif actual == 'array':
        _arrays(value, schema, path, errs)
    elif actual == 'object':
        _objects(value, schema, path, errs)


def _numbers(value, schema, path, errs):
    body = _in_body(path)
    if 'minimum' in schema:
        low = schema['minimum']
        if schema.get('exclusiveMinimum') and value <= low:
            errs.append(FieldError(INVALID, path, value, f'{body} should be greater than {format_number(low)}'))
        elif value < low:
            errs.append(FieldError(INVALID, path, value, f'{body} should be greater than or equal to {format_number(low)}'))
    if 'maximum' in schema:
        high = schema['maximum']
        if schema.get('exclusiveMaximum') and value >= high:
            errs.append(FieldError(INVALID, path, value, f'{body} should be less than {format_number(high)}'))
        elif value > high:
            errs.append(FieldError(INVALID, path, value, f'{body} should be less than or equal to {format_number(high)}'))
    if 'multipleOf' in schema and schema['multipleOf'] and value % schema['multipleOf']:
        errs.append(FieldError(INVALID, path, value, f'{body} should be a multiple of {format_number(schema["multipleOf"])}'))


def _strings(value, schema, path, errs):
    body = _in_body(path)
    # Lengths count characters (runes), as Go's utf8.RuneCountInString.
    if 'maxLength' in schema and len(value) > schema['maxLength']:
        errs.append(FieldError(TOO_LONG, path, value, f'may not be more than {schema["maxLength"]} bytes'))
    if 'minLength' in schema and len(value) < schema['minLength']:
        errs.append(FieldError(INVALID, path, value, f'{body} should be at least {schema["minLength"]} chars long'))
    if 'pattern' in schema and not re.search(schema['pattern'], value):
        errs.append(FieldError(INVALID, path, value, f"{body} should match '{schema['pattern']}'"))


def _arrays(value, schema, path, errs):
    if 'maxItems' in schema and len(value) > schema['maxItems']:
        errs.append(FieldError(TOO_MANY, path, len(value), f'must have at most {schema["maxItems"]} items'))
    if 'minItems' in schema and len(value) < schema['minItems']:
        errs.append(FieldError(INVALID, path, len(value), f'{_in_body(path)} should have at least {schema["minItems"]} items'))
    items = schema.get('items')
    if isinstance(items, dict):
        for i, v in enumerate(value):
            validate(v, items, index(path, i), errs)
    list_type = schema.get('x-kubernetes-list-type')
    if list_type == 'set':
        seen = []
        for i, v in enumerate(value):
            if v in seen:
                errs.append(FieldError(DUPLICATE, index(path, i), v))
            seen.append(v)
    elif list_type == 'map':
        keys = schema.get('x-kubernetes-list-map-keys') or []
        seen = []
        for i, v in enumerate(value):
            if not isinstance(v, dict):
                continue
            k = tuple((key, v.get(key)) for key in keys)
            if k in seen:
                errs.append(FieldError(DUPLICATE, index(path, i), dict(k)))
            seen.append(k)


def _objects(value, schema, path, errs):
    for name in schema.get('required') or []:
        if name not in value:
            errs.append(FieldError(REQUIRED, child(path, name)))
    if 'maxProperties' in schema and len(value) > schema['maxProperties']:
        errs.append(FieldError(TOO_MANY, path, len(value), f'must have at most {schema["maxProperties"]} items'))
    if 'minProperties' in schema and len(value) < schema['minProperties']:
        errs.append(FieldError(INVALID, path, len(value), f'{_in_body(path)} should have at least {schema["minProperties"]} properties'))
    props = schema.get('properties') or {}
    extra = schema.get('additionalProperties')
    for k, v in value.items():
        if k in props:
            validate(v, props[k], child(path, k), errs)
        elif isinstance(extra, dict):
            validate(v, extra, child(path, k), errs)


def root_schema(schema: dict) -> dict:
    """A CRD's openAPIV3Schema, with the root's apiVersion/kind/metadata left to the generic
    object checks (the API server validates metadata as ObjectMeta, not by the schema)."""
    props = dict(schema.get('properties') or {})
    for k in ('apiVersion', 'kind', 'metadata'):
        props.pop(k, None)
    return {**schema, 'properties': props}
