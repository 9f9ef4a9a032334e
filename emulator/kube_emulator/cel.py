"""`x-kubernetes-validations`: CEL rules of a CRD schema, evaluated with cel-python (PyPI).

As the API server does: a rule runs at the schema node that declares it, with `self` the
value there (at the root: apiVersion, kind, metadata.name and .generateName, and the
declared fields). A transition rule (one that names `oldSelf`) runs only on update, where an
old value is at the same path (correlated through object properties and map keys; not
through arrays here). A failed rule is a field error at the node's path (plus the rule's
`fieldPath`), of the rule's `reason` (FieldValueInvalid by default), whose bad value is the
node's schema type and whose message is `messageExpression`, else `message`, else
`failed rule: RULE`.

Not emulated: the Kubernetes CEL libraries beyond the CEL standard ones (`quantity()`,
`url()`, `isSorted()`, `lowerAscii()`, ...), cost budgets, and `optionalOldSelf`.
"""
import functools
import re

import celpy

from .errors import BY_REASON, INVALID, FieldError
from .schema import child

_ENV = None


def _env() -> celpy.Environment:
    global _ENV
    if _ENV is None:   # building the parser takes a fifth of a second: once
        _ENV = celpy.Environment()
    return _ENV


@functools.lru_cache(maxsize=4096)
def compile_rule(rule: str):
    """A compiled program for `rule`; raises celpy's CELParseError if it does not compile."""
    env = _env()
    return env.program(env.compile(rule))


def compile_error(rule: str) -> str | None:
    try:
        compile_rule(rule)
        return None
    except Exception as e:   # cel-python raises parse errors of several types
        return str(e).strip().splitlines()[0]


def is_transition(rule: str) -> bool:
    return re.search(r'\boldSelf\b', rule) is not None


def _evaluate(rule: str, activation: dict):
    result = compile_rule(rule).evaluate(
        {k: celpy.json_to_cel(v) for k, v in activation.items()})
    if isinstance(result, Exception):   # cel-python returns evaluation errors as values
        raise result
    return result


def _root_self(value: dict) -> dict:
    md = value.get('metadata') or {}
    out = dict(value)
    out['metadata'] = {k: md[k] for k in ('name', 'generateName') if k in md}
    return out


def check(value, old, schema: dict, path: str = '', root: bool = True) -> list[FieldError]:
    """The failed rules in `value` (with `old` the previous state, or None on create)."""
    errs: list[FieldError] = []
    _walk(value, old, schema, path, root, errs)
    return errs


def _walk(value, old, schema, path, root, errs):
    if value is None:
        return
    rules = schema.get('x-kubernetes-validations') or []
    if rules:
        this = _root_self(value) if root and isinstance(value, dict) else value
        was = (_root_self(old) if root and isinstance(old, dict) else old)
        for rule in rules:
            error = _run(rule, this, was, schema, path)
            if error:
                errs.append(error)
    if isinstance(value, dict):
        props = schema.get('properties') or {}
        extra = schema.get('additionalProperties')
        for k, v in value.items():
            sub = props.get(k) if k in props else (extra if isinstance(extra, dict) else None)
            if sub is not None:
                was = old.get(k) if isinstance(old, dict) else None
                _walk(v, was, sub, child(path, k), False, errs)
    elif isinstance(value, list) and isinstance(schema.get('items'), dict):
        for i, v in enumerate(value):
            _walk(v, None, schema['items'], f'{path}[{i}]', False, errs)


def _run(rule: dict, this, was, schema, path) -> FieldError | None:
    text = rule.get('rule', '')
    activation = {'self': this}
    if is_transition(text):
        if was is None:
            return None
        activation['oldSelf'] = was
    where = path
    if rule.get('fieldPath'):
        where = (path + rule['fieldPath']) if path else rule['fieldPath'].lstrip('.')
    kind = BY_REASON.get(rule.get('reason'), INVALID)
    bad_value = schema.get('type') or 'object'
    try:
        ok = _evaluate(text, activation)
    except Exception as e:
        return FieldError(kind, where, bad_value, f'{_message(rule, activation)}: evaluation error: {_first_line(e)}')
    if ok is True or (not isinstance(ok, bool) and bool(ok)):
        return None
    return FieldError(kind, where, bad_value, _message(rule, activation))


def _message(rule: dict, activation: dict) -> str:
    expression = rule.get('messageExpression')
    if expression:
        try:
            text = _evaluate(expression, activation)
            if isinstance(text, str) and text.strip():
                return str(text)
        except Exception:
            pass   # the API server falls back to message too
    return rule.get('message') or f'failed rule: {rule.get("rule", "")}'


def _first_line(e: Exception) -> str:
    text = str(e.args[0]) if getattr(e, 'args', None) else str(e)
    return text.splitlines()[0] if text else type(e).__name__


def rules_in(schema, path='openAPIV3Schema'):
    """Every (path, rule) of a schema, to compile them when the CRD is created."""
    if not isinstance(schema, dict):
        return
    for i, rule in enumerate(schema.get('x-kubernetes-validations') or []):
        yield f'{path}.x-kubernetes-validations[{i}]', rule
    for k, sub in (schema.get('properties') or {}).items():
        yield from rules_in(sub, f'{path}.properties[{k}]')
    for key in ('items', 'additionalProperties'):
        if isinstance(schema.get(key), dict):
            yield from rules_in(schema[key], f'{path}.{key}')
