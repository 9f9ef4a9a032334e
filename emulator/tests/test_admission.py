"""Admission webhooks (HTTPS, caBundle verified) and CRD conversion webhooks."""
import base64
import copy
import json

import pytest

from conftest import install_crd, load

CM = '/api/v1/namespaces/default/configmaps'
MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations'
VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations'


def configuration(name, server, path='/hook', ca_bundle=None, failure='Fail', operations=('CREATE', 'UPDATE'), **hook):
    return {'metadata': {'name': name}, 'webhooks': [{
        'name': f'{name}.example.com', 'admissionReviewVersions': ['v1'], 'sideEffects': 'None',
        'failurePolicy': failure, 'timeoutSeconds': 2,
        'clientConfig': {'url': f'{server.url}{path}', 'caBundle': ca_bundle or server.ca_bundle},
        'rules': [{'operations': list(operations), 'apiGroups': [''], 'apiVersions': ['v1'], 'resources': ['configmaps']}],
        **hook}]}


def allow(review, **extra):
    return {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
            'response': {'uid': review['request']['uid'], 'allowed': True, **extra}}


def labeller(review):
    ops = [{'op': 'add', 'path': '/metadata/labels', 'value': {'mutated': 'yes'}}]
    return allow(review, patchType='JSONPatch', patch=base64.b64encode(json.dumps(ops).encode()).decode(),
                 warnings=['labelled by the test'])


def test_mutating_webhook_patches_then_validating_webhook_sees_the_result(api, webhook_server):
    mutator = webhook_server(labeller)
    seen = []

    def validator(review):
        seen.append(review['request'])
        return allow(review)
    checker = webhook_server(validator)
    assert api.post(MUTATING, configuration('mutate', mutator))[0] == 201
    assert api.post(VALIDATING, configuration('validate', checker))[0] == 201

    status, body = api.post(CM, {'metadata': {'name': 'm'}, 'data': {'k': 'v'}})
    assert status == 201 and body['metadata']['labels'] == {'mutated': 'yes'}
    assert api.last.headers['Warning'] == '299 - "labelled by the test"'
    path, review = mutator.reviews[0]
    assert path == '/hook?timeout=2s'
    request = review['request']
    assert request['operation'] == 'CREATE' and request['namespace'] == 'default' and request['name'] == 'm'
    assert request['kind'] == {'group': '', 'version': 'v1', 'kind': 'ConfigMap'}
    assert request['resource'] == {'group': '', 'version': 'v1', 'resource': 'configmaps'}
    assert request['userInfo']['username'] == 'kubernetes-admin' and request['oldObject'] is None
    assert seen[0]['object']['metadata']['labels'] == {'mutated': 'yes'}

    api.patch(f'{CM}/m', {'data': {'k': 'w'}})
    assert seen[-1]['operation'] == 'UPDATE' and seen[-1]['oldObject']['data'] == {'k': 'v'}


def test_a_denial_is_worded_as_the_api_server_words_it(api, webhook_server):
    def deny(review):
        return {'response': {'uid': review['request']['uid'], 'allowed': False,
                             'status': {'code': 403, 'message': 'configmaps need an owner'}}}
    api.post(VALIDATING, configuration('deny', webhook_server(deny)))
    status, body = api.post(CM, {'metadata': {'name': 'x'}})
    assert status == 403
    assert body['message'] == 'admission webhook "deny.example.com" denied the request: configmaps need an owner'
    assert api.get(f'{CM}/x')[0] == 404

    def deny_without_code(review):
        return {'response': {'uid': review['request']['uid'], 'allowed': False}}
    api.delete(f'{VALIDATING}/deny')
    api.post(VALIDATING, configuration('bare', webhook_server(deny_without_code)))
    status, body = api.post(CM, {'metadata': {'name': 'x'}})
    assert status == 400 and body['message'] == 'admission webhook "bare.example.com" denied the request without explanation'


def test_failure_policy_and_tls_verification(api, webhook_server):
    server = webhook_server(allow)
    other_ca = webhook_server(allow).ca_bundle
    # A certificate the caBundle does not trust is a failed call.
    api.post(VALIDATING, configuration('untrusted', server, ca_bundle=other_ca))
    status, body = api.post(CM, {'metadata': {'name': 'x'}})
    assert status == 500 and body['reason'] == 'InternalError'
    assert body['message'].startswith('Internal error occurred: failed calling webhook "untrusted.example.com": failed to call webhook: Post "')
    assert 'certificate verify failed' in body['message']
    assert server.reviews == []
    api.delete(f'{VALIDATING}/untrusted')
    api.post(VALIDATING, configuration('ignored', server, ca_bundle=other_ca, failure='Ignore'))
    assert api.post(CM, {'metadata': {'name': 'x'}})[0] == 201
    api.delete(f'{VALIDATING}/ignored')
    # A webhook slower than its timeoutSeconds fails the call too.
    slow = webhook_server(allow, delay=3)
    api.post(VALIDATING, configuration('slow', slow))
    status, body = api.post(CM, {'metadata': {'name': 'y'}})
    assert status == 500 and 'context deadline exceeded' in body['message']


@pytest.mark.parametrize('hook, matches', [
    ({'objectSelector': {'matchLabels': {'checked': 'yes'}}}, False),
    ({'objectSelector': {'matchLabels': {'app': 'x'}}}, True),
    ({'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'kube-system'}}}, False),
    ({'namespaceSelector': {'matchExpressions': [{'key': 'kubernetes.io/metadata.name', 'operator': 'In', 'values': ['default']}]}}, True),
    ({'rules': [{'operations': ['UPDATE'], 'apiGroups': [''], 'apiVersions': ['v1'], 'resources': ['configmaps']}]}, False),
    ({'rules': [{'operations': ['*'], 'apiGroups': ['*'], 'apiVersions': ['*'], 'resources': ['*'], 'scope': 'Namespaced'}]}, True),
    ({'rules': [{'operations': ['*'], 'apiGroups': ['*'], 'apiVersions': ['*'], 'resources': ['*'], 'scope': 'Cluster'}]}, False),
    ({'rules': [{'operations': ['CREATE'], 'apiGroups': ['apps'], 'apiVersions': ['v1'], 'resources': ['deployments']}]}, False),
])
def test_rules_and_selectors_choose_the_webhooks_called(api, webhook_server, hook, matches):
    server = webhook_server(allow)
    api.post(VALIDATING, configuration('sel', server, **hook))
    api.post(CM, {'metadata': {'name': 'x', 'labels': {'app': 'x'}}})
    assert bool(server.reviews) == matches


def test_service_references_are_not_supported_and_fail_as_unreachable(api):
    config = {'metadata': {'name': 'svc'}, 'webhooks': [{
        'name': 'svc.example.com', 'admissionReviewVersions': ['v1'], 'sideEffects': 'None',
        'clientConfig': {'service': {'name': 'webhook', 'namespace': 'default'}},
        'rules': [{'operations': ['CREATE'], 'apiGroups': [''], 'apiVersions': ['v1'], 'resources': ['configmaps']}]}]}
    api.post(VALIDATING, config)
    status, body = api.post(CM, {'metadata': {'name': 'x'}})
    assert status == 500 and 'clientConfig.service' in body['message']


# ---- conversion -----------------------------------------------------------------------------

def two_version_crd(server=None):
    """Widgets at v1 (storage: spec.size) and v2 (spec.dimensions.size)."""
    crd = load('widgets.yaml')
    v1 = crd['spec']['versions'][0]
    v1['schema']['openAPIV3Schema']['properties']['spec'].pop('x-kubernetes-validations')
    v2 = copy.deepcopy(v1)
    v2.update(name='v2', storage=False)
    v2['schema']['openAPIV3Schema']['properties']['spec'] = {'type': 'object', 'properties': {
        'dimensions': {'type': 'object', 'properties': {'size': {'type': 'string'}}}}}
    crd['spec']['versions'].append(v2)
    if server:
        crd['spec']['conversion'] = {'strategy': 'Webhook', 'webhook': {
            'conversionReviewVersions': ['v1'], 'clientConfig': {'url': f'{server.url}/convert', 'caBundle': server.ca_bundle}}}
    return crd


def convert(review):
    request = review['request']
    out = []
    for obj in request['objects']:
        obj = copy.deepcopy(obj)
        spec = obj.get('spec') or {}
        if request['desiredAPIVersion'].endswith('/v2'):
            obj['spec'] = {'dimensions': {'size': spec.get('size')}}
        else:
            obj['spec'] = {'size': (spec.get('dimensions') or {}).get('size')}
        obj['apiVersion'] = request['desiredAPIVersion']
        out.append(obj)
    return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'ConversionReview',
            'response': {'uid': request['uid'], 'convertedObjects': out, 'result': {'status': 'Success'}}}


def test_a_conversion_webhook_converts_to_and_from_the_storage_version(emu, api, webhook_server):
    server = webhook_server(convert)
    install_crd(api, two_version_crd(server))
    v1 = '/apis/test.example.com/v1/namespaces/default/widgets'
    v2 = '/apis/test.example.com/v2/namespaces/default/widgets'
    status, created = api.post(v2, {'apiVersion': 'test.example.com/v2', 'kind': 'Widget', 'metadata': {'name': 'w'},
                                    'spec': {'dimensions': {'size': 'XL'}}})
    assert status == 201, created
    assert created['apiVersion'] == 'test.example.com/v2' and created['spec'] == {'dimensions': {'size': 'XL'}}
    assert server.reviews[0][1]['request']['desiredAPIVersion'] == 'test.example.com/v1'
    stored = emu.call(emu.server.store.get, ('test.example.com', 'widgets'), 'default', 'w')
    assert stored['apiVersion'] == 'test.example.com/v1' and stored['spec']['size'] == 'XL'
    _, got = api.get(f'{v1}/w')
    assert got['spec']['size'] == 'XL'
    _, listed = api.get(v2)
    assert listed['items'][0]['spec'] == {'dimensions': {'size': 'XL'}}
    before = len(server.reviews)
    api.get(f'{v1}/w')
    assert len(server.reviews) == before   # the storage version needs no conversion


def test_a_failing_conversion_webhook_fails_the_request(api, webhook_server):
    def broken(review):
        return {'response': {'uid': review['request']['uid'], 'result': {'status': 'Failure', 'message': 'cannot convert'}}}
    install_crd(api, two_version_crd(webhook_server(broken)))
    status, body = api.post('/apis/test.example.com/v2/namespaces/default/widgets',
                            {'apiVersion': 'test.example.com/v2', 'kind': 'Widget', 'metadata': {'name': 'w'}, 'spec': {}})
    assert status == 500
    assert body['message'] == 'Internal error occurred: conversion webhook for test.example.com/v1, Kind=Widget failed: cannot convert'


def test_without_a_conversion_webhook_only_the_api_version_changes(api):
    install_crd(api, two_version_crd())
    api.post('/apis/test.example.com/v1/namespaces/default/widgets',
             {'apiVersion': 'test.example.com/v1', 'kind': 'Widget', 'metadata': {'name': 'w'}, 'spec': {'size': 'S'}})
    _, got = api.get('/apis/test.example.com/v2/namespaces/default/widgets/w')
    assert got['apiVersion'] == 'test.example.com/v2'
    assert got['spec'] == {'size': 'S', 'colour': 'green', 'nested': {'level': 3}}   # as stored (v1 defaults)
