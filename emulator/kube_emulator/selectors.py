"""Label and field selectors (`?labelSelector=`, `?fieldSelector=`) and label-selector objects.

Label selectors have the full set-based syntax (`a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
`a`, `!a`). Field selectors support what every type supports on a real API server,
`metadata.name` and `metadata.namespace` (kube-runtime watches one object with
`metadata.name=NAME`, e.g. in `await_condition`), plus a CRD's `selectableFields`; any other
field is refused with the API server's 400 "field label not supported".
"""
import re
from typing import Callable

from . import errors

Matcher = Callable[[dict], bool]

_SET_TERM = re.compile(r'^\s*(!?)\s*([^\s!=()]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$')


def _split_terms(text: str) -> list[str]:
    """Splits on commas that are not inside parentheses."""
    terms, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
        elif c == ',' and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return [t.strip() for t in terms if t.strip()]


def parse_labels(text: str | None) -> Matcher:
    """A matcher on `metadata.labels` for a `labelSelector` string."""
    if not text:
        return lambda obj: True
    checks = []
    for term in _split_terms(text):
        if '!=' in term:
            k, v = (s.strip() for s in term.split('!=', 1))
            checks.append(lambda l, k=k, v=v: l.get(k) != v)
        elif '=' in term:
            k, v = (s.strip() for s in term.replace('==', '=').split('=', 1))
            checks.append(lambda l, k=k, v=v: l.get(k) == v)
        else:
            m = _SET_TERM.match(term)
            if not m:
                raise errors.bad_request(f'unable to parse requirement: {term!r}')
            negated, key, op, values = m.groups()
            if op:
                allowed = {v.strip() for v in values.split(',') if v.strip()}
                if op == 'in':
                    checks.append(lambda l, k=key, a=allowed: l.get(k) in a)
                else:
                    checks.append(lambda l, k=key, a=allowed: l.get(k) not in a)
            elif negated:
                checks.append(lambda l, k=key: k not in l)
            else:
                checks.append(lambda l, k=key: k in l)
    return lambda obj: all(c(labels_of(obj)) for c in checks)


def labels_of(obj: dict) -> dict:
    return (obj.get('metadata') or {}).get('labels') or {}


def match_selector_object(selector: dict | None, labels: dict) -> bool:
    """A metav1.LabelSelector (matchLabels, matchExpressions) against `labels`; an absent or
    empty selector matches everything (as in webhook namespace/object selectors)."""
    if not selector:
        return True
    for k, v in (selector.get('matchLabels') or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get('matchExpressions') or []:
        key, op, values = e.get('key'), e.get('operator'), e.get('values') or []
        if op == 'In' and labels.get(key) not in values:
            return False
        if op == 'NotIn' and key in labels and labels[key] in values:
            return False
        if op == 'Exists' and key not in labels:
            return False
        if op == 'DoesNotExist' and key in labels:
            return False
    return True


def field_value(obj: dict, path: str):
    node = obj
    for part in path.split('.'):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def parse_fields(text: str | None, supported: set[str], custom: bool) -> Matcher:
    """A matcher for a `fieldSelector` string over the fields `supported` for the type
    (`custom`: a custom resource, whose refusal the API server words differently)."""
    if not text:
        return lambda obj: True
    checks = []
    for term in _split_terms(text):
        negate = '!=' in term
        k, v = (s.strip() for s in term.replace('!=', '=').replace('==', '=').split('=', 1)) \
            if '=' in term else (term, None)
        if v is None:
            raise errors.bad_request(f'invalid selector: {text!r}; can\'t understand {term!r}')
        if k not in supported:
            raise errors.bad_request(
                f'"{k}" is not a known field selector: only "metadata.name", "metadata.namespace"'
                if custom else f'field label not supported: {k}')

        def check(obj, k=k, v=v, negate=negate):
            value = field_value(obj, k)
            text = '' if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
            return (text != v) if negate else (text == v)
        checks.append(check)
    return lambda obj: all(c(obj) for c in checks)
