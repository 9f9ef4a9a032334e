"""Conversion between the versions of a custom resource.

Objects are stored in the CRD's storage version. A request in another version converts what
it sends to the storage version and what it gets back to its own version: with
`spec.conversion.strategy: None` only `apiVersion` changes; with `Webhook`, the objects go
in a ConversionReview v1 to the CRD's conversion webhook (HTTPS, verifying its caBundle),
one review per request (a list sends all its objects at once). A failed conversion fails the
request with a 500, worded as the API server's: `conversion webhook for GROUP/VERSION,
Kind=KIND failed: ...`.
"""
import uuid

from . import errors, hooks


def _check(converted, sent, desired):
    if not isinstance(converted, list) or len(converted) != len(sent):
        raise hooks.HookError(f'expected {len(sent)} converted objects, got {len(converted) if isinstance(converted, list) else 0}')
    for before, after in zip(sent, converted):
        if after.get('apiVersion') != desired:
            raise hooks.HookError(f'invalid apiVersion "{after.get("apiVersion")}" of a converted object, expected "{desired}"')
        b, a = before.get('metadata') or {}, after.get('metadata') or {}
        for k in ('name', 'namespace', 'uid'):
            if b.get(k) != a.get(k):
                raise hooks.HookError(f'metadata.{k} of a converted object changed')


async def convert(crd, objects: list[dict], version: str) -> list[dict]:
    """`objects` in `version` of `crd` (a crds.Crd)."""
    desired = f'{crd.group}/{version}'
    todo = [i for i, o in enumerate(objects) if o.get('apiVersion') != desired]
    if not todo:
        return objects
    out = list(objects)
    if (crd.conversion or {}).get('strategy', 'None') != 'Webhook':
        for i in todo:
            out[i] = {**objects[i], 'apiVersion': desired}
        return out
    sent = [objects[i] for i in todo]
    hook = crd.conversion.get('webhook') or {}
    review = {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'ConversionReview',
              'request': {'uid': str(uuid.uuid4()), 'desiredAPIVersion': desired, 'objects': sent}}
    try:
        if 'v1' not in (hook.get('conversionReviewVersions') or []):
            raise hooks.HookError('the webhook accepts no ConversionReview version the emulator sends (v1)')
        answer = await hooks.post(hook.get('clientConfig') or {}, review, 30)
        response = answer.get('response') or {}
        if response.get('uid') != review['request']['uid']:
            raise hooks.HookError('the response uid does not match the request uid')
        result = response.get('result') or {}
        if result.get('status') != 'Success':
            raise hooks.HookError(result.get('message') or 'the webhook did not convert the objects')
        converted = response.get('convertedObjects')
        _check(converted, sent, desired)
    except hooks.HookError as e:
        raise errors.internal(f'conversion webhook for {desired}, Kind={crd.kind} failed: {e}') from None
    for i, obj in zip(todo, converted):
        out[i] = obj
    return out
