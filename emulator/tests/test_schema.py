"""CRD structural schemas on custom resources: validation (with the API server's messages),
pruning, defaulting, and x-kubernetes-validations CEL rules."""
import pytest

from conftest import install_crd, load

WIDGETS = '/apis/test.example.com/v1/namespaces/default/widgets'


@pytest.fixture
def widgets(api):
    install_crd(api, load('widgets.yaml'))
    return WIDGETS


def widget(name='w', **spec):
    return {'apiVersion': 'test.example.com/v1', 'kind': 'Widget', 'metadata': {'name': name}, 'spec': spec}


def refused(api, path, obj):
    status, body = api.post(path, obj)
    assert status == 422, body
    assert body['reason'] == 'Invalid' and body['details']['kind'] == obj['kind']
    return body


def test_the_example_crd_refuses_negative_replicas_as_the_api_server_does(api, dms):
    obj = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService', 'metadata': {'name': 'x'},
           'spec': {'image': 'a:1', 'replicas': -1}}
    body = refused(api, dms, obj)
    assert body['message'] == 'DemoMicroService.devops.my.domain "x" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0'
    assert body['details'] == {'name': 'x', 'group': 'devops.my.domain', 'kind': 'DemoMicroService', 'causes': [
        {'reason': 'FieldValueInvalid', 'message': 'Invalid value: -1: spec.replicas in body should be greater than or equal to 0', 'field': 'spec.replicas'}]}


def test_the_example_crd_cel_rule_refuses_a_long_name(api, dms):
    name = 'a' * 70
    obj = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService', 'metadata': {'name': name}, 'spec': {'image': 'a:1'}}
    body = refused(api, dms, obj)
    assert body['message'] == f'DemoMicroService.devops.my.domain "{name}" is invalid: <nil>: Invalid value: "object": metadata.name must be at most 63 characters (it labels the Deployment)'
    assert body['details']['causes'][0]['field'] == '<nil>'


def test_the_example_crd_defaults_the_port_and_requires_the_image(api, dms):
    obj = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService', 'metadata': {'name': 'd'}, 'spec': {'image': 'a:1'}}
    status, created = api.post(dms, obj)
    assert status == 201 and created['spec'] == {'image': 'a:1', 'port': 9898}
    # port is nullable: an explicit null is kept, not defaulted.
    status, created = api.post(dms, {**obj, 'metadata': {'name': 'n'}, 'spec': {'image': 'a:1', 'port': None}})
    assert status == 201 and created['spec'] == {'image': 'a:1', 'port': None}
    body = refused(api, dms, {**obj, 'metadata': {'name': 'e'}, 'spec': {}})
    assert body['message'] == 'DemoMicroService.devops.my.domain "e" is invalid: spec.image: Required value'
    assert body['details']['causes'][0]['reason'] == 'FieldValueRequired'


@pytest.mark.parametrize('spec, message', [
    ({'colour': 'pink'}, 'spec.colour: Unsupported value: "pink": supported values: "red", "green", "blue"'),
    ({'code': 'ABCD'}, "[spec.code: Too long: may not be more than 3 bytes, spec.code: Invalid value: \"ABCD\": spec.code in body should match '^[A-Z]{3}$']"),
    ({'code': 'ab'}, "spec.code: Invalid value: \"ab\": spec.code in body should match '^[A-Z]{3}$'"),
    ({'title': 'a'}, 'spec.title: Invalid value: "a": spec.title in body should be at least 2 chars long'),
    ({'ratio': 1}, 'spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1'),
    ({'ratio': 0}, 'spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0'),
    ({'count': 11}, 'spec.count: Invalid value: 11: spec.count in body should be less than or equal to 10'),
    ({'count': 'many'}, 'spec.count: Invalid value: "string": spec.count in body must be of type integer: "string"'),
    ({'count': 1.5}, 'spec.count: Invalid value: "number": spec.count in body must be of type integer: "number"'),
    ({'port': True}, 'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'),
    ({'tags': []}, 'spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items'),
    ({'tags': ['a', 'b', 'c', 'd', 'e']}, 'spec.tags: Too many: 5: must have at most 4 items'),
    ({'tags': ['a', 'a']}, 'spec.tags[1]: Duplicate value: "a"'),
    ({'limits': {'cpu': -1}}, 'spec.limits.cpu: Invalid value: -1: spec.limits.cpu in body should be greater than or equal to 0'),
])
def test_schema_violations_are_worded_as_the_api_server_words_them(api, widgets, spec, message):
    body = refused(api, widgets, widget(**spec))
    assert body['message'] == f'Widget.test.example.com "w" is invalid: {message}'


def test_several_violations_are_listed_together(api, widgets):
    body = refused(api, widgets, widget(colour='pink', count=11))
    assert body['message'].startswith('Widget.test.example.com "w" is invalid: [spec.colour: Unsupported value')
    assert [c['field'] for c in body['details']['causes']] == ['spec.colour', 'spec.count']


def test_valid_values_pass(api, widgets):
    status, body = api.post(widgets, widget(code='ABC', ratio=0.5, port='http', tags=['a', 'b'], notes=None, limits={'cpu': 2}))
    assert status == 201, body
    assert body['spec']['port'] == 'http' and body['spec']['notes'] is None   # nullable kept


def test_unknown_fields_are_pruned_with_a_warning_or_refused_when_strict(api, widgets):
    obj = widget(colour='red', extra=1, free={'anything': {'goes': 1}},
                 template={'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'bogus': 1}, 'spec': {'x': 1}, 'other': 2})
    obj['metadata']['unknownMeta'] = 1
    obj['topLevel'] = True
    status, body = api.post(widgets, obj)
    assert status == 201
    assert 'extra' not in body['spec'] and 'topLevel' not in body and 'unknownMeta' not in body['metadata']
    assert body['spec']['free'] == {'anything': {'goes': 1}}   # x-kubernetes-preserve-unknown-fields
    assert body['spec']['template'] == {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'}, 'spec': {'x': 1}}
    warnings = api.last.headers.get('Warning', '')
    assert 'unknown field \\"spec.extra\\"' in warnings and 'unknown field \\"topLevel\\"' in warnings
    status, body = api.post(widgets, {**widget('strict', extra=1)}, fieldValidation='Strict')
    assert status == 400 and body['reason'] == 'BadRequest'
    assert body['message'] == 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.extra"'


def test_defaults_apply_on_create_update_and_read(api, widgets):
    _, created = api.post(widgets, widget())
    assert created['spec'] == {'colour': 'green', 'size': 'M', 'nested': {'level': 3}}
    _, patched = api.patch(f'{widgets}/w', {'spec': {'nested': None}})
    assert patched['spec']['nested'] == {'level': 3}
    # A default added to the CRD later shows on objects stored before, when read.
    crd = load('widgets.yaml')
    crd['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']['spec']['properties']['count']['default'] = 7
    path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.example.com'
    status, _ = api.patch(path, crd, 'apply', fieldManager='test')
    assert status == 200
    assert api.get(f'{widgets}/w')[1]['spec']['count'] == 7


def test_cel_rules_with_field_paths_reasons_and_message_expressions(api, widgets):
    body = refused(api, widgets, widget(min=5, max=1))
    assert body['message'] == 'Widget.test.example.com "w" is invalid: spec.min: Invalid value: "object": min must not exceed max'
    body = refused(api, widgets, widget(tags=['a', 'b', 'c']))
    assert body['message'] == 'Widget.test.example.com "w" is invalid: spec: Invalid value: "object": too many tags: 3'


def test_transition_rules_compare_with_the_old_object(api, widgets):
    status, _ = api.post(widgets, widget(size='L'))   # no oldSelf on create: the rule is skipped
    assert status == 201
    status, body = api.patch(f'{widgets}/w', {'spec': {'size': 'S'}})
    assert status == 422
    assert body['message'] == 'Widget.test.example.com "w" is invalid: spec: Forbidden: size is immutable'
    assert body['details']['causes'][0]['reason'] == 'FieldValueForbidden'
    status, _ = api.patch(f'{widgets}/w', {'spec': {'colour': 'blue'}})
    assert status == 200


def test_selectable_fields_of_a_crd(api, widgets):
    api.post(widgets, widget('r', colour='red'))
    api.post(widgets, widget('b', colour='blue'))
    _, listed = api.get(widgets, fieldSelector='spec.colour=red')
    assert [o['metadata']['name'] for o in listed['items']] == ['r']
    status, body = api.get(widgets, fieldSelector='spec.size=M')
    assert status == 400 and body['message'] == '"spec.size" is not a known field selector: only "metadata.name", "metadata.namespace"'
