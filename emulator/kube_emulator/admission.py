"""Admission webhooks (admissionregistration.k8s.io/v1), called as the API server calls them.

A write (create, update, patch, delete, and their subresources) is sent as an AdmissionReview
v1 to each mutating webhook whose rules, namespaceSelector and objectSelector match (in the
order of the configurations' names, then of their webhooks), whose base64 JSONPatch is
applied; then, once the object passed schema validation, to the matching validating webhooks.
A denial is refused as the API server words it: `admission webhook "NAME" denied the
request: MESSAGE`, with the webhook's code (400 if it gave none). A webhook that cannot be
called fails the request (500 `failed calling webhook "NAME": ...`) unless its
failurePolicy is Ignore. Warnings go to the response's Warning headers.

Not emulated: matchConditions, matchPolicy Equivalent (only exact group/version matches),
reinvocationPolicy, sideEffects checks on dry runs, and ValidatingAdmissionPolicy.
"""
import base64
import json
import uuid

from . import errors, hooks, patch
from .selectors import labels_of, match_selector_object

GROUP = 'admissionregistration.k8s.io'
MUTATING = (GROUP, 'mutatingwebhookconfigurations')
VALIDATING = (GROUP, 'validatingwebhookconfigurations')


class Request:
    """What is being admitted: the AdmissionReview request, less the objects."""

    def __init__(self, rt, operation: str, namespace: str, name: str, subresource: str,
                 user, dry_run: bool, options: dict | None = None):
        self.rt, self.operation, self.namespace, self.name = rt, operation, namespace, name
        self.subresource, self.user, self.dry_run, self.options = subresource, user, dry_run, options

    def review(self, obj, old) -> dict:
        kind = {'group': self.rt.group, 'version': self.rt.version, 'kind': self.rt.kind}
        resource = {'group': self.rt.group, 'version': self.rt.version, 'resource': self.rt.plural}
        req = {'uid': str(uuid.uuid4()), 'kind': kind, 'resource': resource,
               'requestKind': kind, 'requestResource': resource, 'name': self.name,
               'operation': self.operation, 'userInfo': self.user.info() if self.user else {},
               'object': obj, 'oldObject': old, 'dryRun': self.dry_run,
               'options': self.options}
        if self.namespace:
            req['namespace'] = self.namespace
        if self.subresource:
            req['subResource'] = self.subresource
            req['requestSubResource'] = self.subresource
        return {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview', 'request': req}


def _any(values, wanted) -> bool:
    return '*' in (values or []) or wanted in (values or [])


def _resource_matches(patterns, plural: str, sub: str) -> bool:
    full = f'{plural}/{sub}' if sub else plural
    for p in patterns or []:
        if p == full or p == '*/*':
            return True
        if p == '*' and not sub:
            return True
        name, _, psub = p.partition('/')
        if sub and psub and (name in ('*', plural)) and psub in ('*', sub):
            return True
    return False


def rule_matches(rule: dict, req: Request) -> bool:
    rt = req.rt
    scope = rule.get('scope', '*')
    if scope == 'Cluster' and rt.namespaced or scope == 'Namespaced' and not rt.namespaced:
        return False
    return (_any(rule.get('operations'), req.operation)
            and _any(rule.get('apiGroups'), rt.group)
            and _any(rule.get('apiVersions'), rt.version)
            and _resource_matches(rule.get('resources'), rt.plural, req.subresource))


class Admission:
    def __init__(self, store):
        self.store = store

    def _webhooks(self, key) -> list[dict]:
        configs = sorted(self.store.list(key, ''), key=lambda c: c['metadata']['name'])
        return [h for c in configs for h in c.get('webhooks') or []]

    def _namespace_labels(self, req: Request, obj) -> dict:
        if req.rt.key == ('', 'namespaces'):
            return labels_of(obj or {})
        ns = self.store.get(('', 'namespaces'), '', req.namespace) if req.namespace else None
        return labels_of(ns or {})

    def _matching(self, key, req: Request, obj, old) -> list[dict]:
        if req.rt.group == GROUP:
            return []   # webhook configurations are never subject to webhooks
        out = []
        for hook in self._webhooks(key):
            if not any(rule_matches(r, req) for r in hook.get('rules') or []):
                continue
            if (req.rt.namespaced or req.rt.key == ('', 'namespaces')) and not \
                    match_selector_object(hook.get('namespaceSelector'), self._namespace_labels(req, obj)):
                continue
            selector = hook.get('objectSelector')
            if selector and not any(match_selector_object(selector, labels_of(o))
                                    for o in (obj, old) if o is not None):
                continue
            out.append(hook)
        return out

    async def mutate(self, req: Request, obj, old, warnings) -> dict:
        for hook in self._matching(MUTATING, req, obj, old):
            response = await self._call(hook, req, obj, old, warnings)
            if response and response.get('patch'):
                if response.get('patchType', 'JSONPatch') != 'JSONPatch':
                    raise errors.internal(f'admission webhook "{hook["name"]}" returned an unsupported patch type')
                ops = json.loads(base64.b64decode(response['patch']))
                obj = patch.json_patch(obj, ops)
        return obj

    async def validate(self, req: Request, obj, old, warnings):
        for hook in self._matching(VALIDATING, req, obj, old):
            await self._call(hook, req, obj, old, warnings)

    async def _call(self, hook: dict, req: Request, obj, old, warnings) -> dict | None:
        name = hook.get('name', '')
        review = req.review(obj, old)
        try:
            if 'v1' not in (hook.get('admissionReviewVersions') or []):
                raise hooks.HookError('the webhook accepts no AdmissionReview version the emulator sends (v1)')
            answer = await hooks.post(hook.get('clientConfig') or {}, review, hook.get('timeoutSeconds', 10))
            response = answer.get('response')
            if not isinstance(response, dict):
                raise hooks.HookError('the response has no "response"')
            if response.get('uid') != review['request']['uid']:
                raise hooks.HookError(f'expected response.uid="{review["request"]["uid"]}", got "{response.get("uid")}"')
        except hooks.HookError as e:
            if hook.get('failurePolicy', 'Fail') == 'Ignore':
                warnings.add(f'failed calling webhook "{name}" (failurePolicy Ignore): {e}')
                return None
            raise errors.internal(f'failed calling webhook "{name}": failed to call webhook: {e}') from None
        for w in response.get('warnings') or []:
            warnings.add(w)
        if not response.get('allowed'):
            raise denied(name, response.get('status') or {})
        return response


def denied(name: str, result: dict) -> errors.ApiError:
    """A webhook's refusal, as the API server's webhookutil.ToStatusErr words it."""
    code = result.get('code') or 0
    code = code if code >= 400 else 400
    by = f'admission webhook "{name}" denied the request'
    if result.get('message'):
        message = f'{by}: {result["message"]}'
    elif result.get('reason'):
        message = f'{by}: {result["reason"]}'
    else:
        message = f'{by} without explanation'
    return errors.ApiError(code, result.get('reason') or '', message, result.get('details'))
