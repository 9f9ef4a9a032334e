"""The REST semantics the e2e flow relies on: discovery, CRUD, selectors, conflicts, patches,
server-side apply, the status subresource, generation, authentication."""
from conftest import install_crd, load, wait_until

CM = '/api/v1/namespaces/default/configmaps'
DEPLOY = '/apis/apps/v1/namespaces/default/deployments'


def cm(name, labels=None, data=None):
    return {'apiVersion': 'v1', 'kind': 'ConfigMap',
            'metadata': {'name': name, 'labels': labels or {}}, 'data': data or {}}


def deployment(name, image='app:1', replicas=1):
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': name},
            'spec': {'replicas': replicas, 'selector': {'matchLabels': {'app': name}},
                     'template': {'metadata': {'labels': {'app': name}},
                                  'spec': {'containers': [{'name': 'app', 'image': image}]}}}}


def test_discovery_serves_built_in_types_and_crds_from_their_creation_to_their_deletion(api):
    status, core = api.get('/api/v1')
    assert status == 200
    namespaces = next(r for r in core['resources'] if r['name'] == 'namespaces')
    assert namespaces['namespaced'] is False and 'ns' in namespaces['shortNames']
    _, groups = api.get('/apis')
    assert 'devops.my.domain' not in [g['name'] for g in groups['groups']]

    install_crd(api, load('demomicroservices.yaml'))
    _, groups = api.get('/apis')
    group = next(g for g in groups['groups'] if g['name'] == 'devops.my.domain')
    assert group['preferredVersion']['groupVersion'] == 'devops.my.domain/v1'
    _, resources = api.get('/apis/devops.my.domain/v1')
    names = {r['name']: r for r in resources['resources']}
    assert names['demomicroservices']['shortNames'] == ['dms']
    assert names['demomicroservices']['kind'] == 'DemoMicroService'
    assert 'demomicroservices/status' in names

    status, _ = api.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/demomicroservices.devops.my.domain')
    assert status in (200, 202)
    assert wait_until(lambda: api.get('/apis/devops.my.domain/v1')[0] == 404)


def test_version_and_health_answer_anonymous_requests_but_nothing_else_does(emu):
    from conftest import Client
    anonymous = Client(emu.url, emu.ca_file, None)
    assert anonymous.get('/version')[1]['major'] == '1'
    assert anonymous.get('/healthz')[0] == 200
    status, body = anonymous.get('/api/v1/namespaces')
    assert status == 403 and body['reason'] == 'Forbidden'
    status, body = Client(emu.url, emu.ca_file, 'not-a-token').get('/api/v1/namespaces')
    assert status == 401 and body['reason'] == 'Unauthorized'


def test_create_get_list_with_label_and_field_selectors(api):
    assert api.post(CM, cm('a', {'tier': 'web', 'env': 'prod'}))[0] == 201
    assert api.post(CM, cm('b', {'tier': 'db'}))[0] == 201
    status, body = api.post(CM, {'metadata': {'name': 'c', 'namespace': 'kube-system'}})
    assert status == 400 and 'does not match the namespace sent on the request' in body['message']
    status, body = api.post(CM, cm('a'))
    assert status == 409 and body['reason'] == 'AlreadyExists'
    assert body['message'] == 'configmaps "a" already exists'

    status, got = api.get(f'{CM}/a')
    assert status == 200 and got['metadata']['uid'] and got['metadata']['resourceVersion']
    status, body = api.get(f'{CM}/missing')
    assert status == 404 and body['reason'] == 'NotFound' and body['message'] == 'configmaps "missing" not found'

    def names(**params):
        _, listed = api.get(CM, **params)
        return [o['metadata']['name'] for o in listed['items']]
    assert names() == ['a', 'b']
    assert names(labelSelector='tier=web') == ['a']
    assert names(labelSelector='tier in (web,db),env!=prod') == ['b']
    assert names(labelSelector='!env') == ['b']
    assert names(fieldSelector='metadata.name=b') == ['b']
    status, body = api.get(CM, fieldSelector='data.x=1')
    assert status == 400 and body['message'] == 'field label not supported: data.x'

    _, listed = api.get(CM)
    assert listed['kind'] == 'ConfigMapList' and int(listed['metadata']['resourceVersion']) > 0
    # Built-in lists leave their items' apiVersion and kind out, as the API server does.
    assert 'kind' not in listed['items'][0]
    _, everywhere = api.get('/api/v1/configmaps')
    assert len(everywhere['items']) == 2


def test_list_pagination(api):
    for i in range(5):
        api.post(CM, cm(f'page-{i}'))
    _, first = api.get(CM, limit='2')
    assert [o['metadata']['name'] for o in first['items']] == ['page-0', 'page-1']
    assert first['metadata']['remainingItemCount'] == 3
    _, second = api.get(CM, limit='2', **{'continue': first['metadata']['continue']})
    assert [o['metadata']['name'] for o in second['items']] == ['page-2', 'page-3']


def test_generate_name_and_name_validation(api):
    status, body = api.post(CM, {'metadata': {'generateName': 'gen-'}})
    assert status == 201 and body['metadata']['name'].startswith('gen-') and len(body['metadata']['name']) == 9
    status, body = api.post(CM, cm('Not_Valid'))
    assert status == 422 and body['reason'] == 'Invalid'
    assert body['message'].startswith('ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain')
    status, body = api.post(CM, cm('labelled', {'app': 'x' * 64}))
    assert status == 422 and 'metadata.labels: Invalid value: "' + 'x' * 64 + '": must be no more than 63 characters' in body['message']


def test_put_checks_the_resource_version(api):
    _, created = api.post(CM, cm('c', data={'k': '1'}))
    stale = dict(created, data={'k': '2'})
    status, updated = api.put(f'{CM}/c', stale)
    assert status == 200 and updated['data'] == {'k': '2'}
    status, body = api.put(f'{CM}/c', dict(created, data={'k': '3'}))
    assert status == 409 and body['reason'] == 'Conflict'
    assert body['message'] == 'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again'
    unconditional = {**created, 'metadata': {'name': 'c'}, 'data': {'k': '4'}}
    assert api.put(f'{CM}/c', unconditional)[1]['data'] == {'k': '4'}
    status, body = api.put(f'{CM}/c', {**unconditional, 'metadata': {'name': 'other'}})
    assert status == 400
    status, _ = api.put(f'{CM}/nope', cm('nope'))
    assert status == 404


def test_merge_json_and_strategic_patches(api):
    api.post(CM, cm('p', {'a': '1'}, {'x': '1', 'y': '2'}))
    status, body = api.patch(f'{CM}/p', {'data': {'x': None, 'z': '3'}})
    assert status == 200 and body['data'] == {'y': '2', 'z': '3'}
    # kube's finalizer helper: a `test` for null passes on a missing path.
    ops = [{'op': 'test', 'path': '/metadata/finalizers', 'value': None},
           {'op': 'add', 'path': '/metadata/finalizers', 'value': ['example.com/f']}]
    status, body = api.patch(f'{CM}/p', ops, 'json')
    assert status == 200 and body['metadata']['finalizers'] == ['example.com/f']
    status, _ = api.patch(f'{CM}/p', [{'op': 'test', 'path': '/metadata/finalizers', 'value': None}], 'json')
    assert status == 422
    status, body = api.patch(f'{CM}/p', {'data': {'w': '4'}, '$setElementOrder/x': []}, 'strategic')
    assert status == 200 and body['data']['w'] == '4' and '$setElementOrder/x' not in body
    status, body = api.patch(f'{CM}/missing', {'data': {}})
    assert status == 404
    status, body = api.request('PATCH', f'{CM}/p', {'data': {}}, 'text/plain')
    assert status == 415


def test_server_side_apply_creates_then_merges_and_needs_a_field_manager(api):
    applied = {'apiVersion': 'apps/v1', 'kind': 'Deployment', **{k: v for k, v in deployment('web').items() if k not in ('apiVersion', 'kind')}}
    status, body = api.patch(f'{DEPLOY}/web', applied, 'apply')
    assert status == 422 and 'fieldManager: Required value' in body['message']
    status, created = api.patch(f'{DEPLOY}/web', applied, 'apply', fieldManager='test')
    assert status == 201 and created['metadata']['generation'] == 1
    # YAML bodies, as kubectl may send them.
    yaml_body = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {team: a}\n'
    status, merged = api.patch(f'{DEPLOY}/web', yaml_body, 'apply', fieldManager='test')
    assert status == 200 and merged['metadata']['labels'] == {'team': 'a'}
    assert merged['spec']['replicas'] == 1   # fields not applied stay (no field ownership)
    status, body = api.patch(f'{DEPLOY}/web', {'apiVersion': 'v1', 'kind': 'Deployment', 'metadata': {'name': 'web'}}, 'apply', fieldManager='test')
    assert status == 400


def test_generation_counts_spec_changes_and_no_op_writes_store_nothing(api):
    _, created = api.post(DEPLOY, deployment('g'))
    rv = created['metadata']['resourceVersion']
    _, same = api.patch(f'{DEPLOY}/g', {'spec': {'replicas': 1}})
    assert same['metadata']['resourceVersion'] == rv   # nothing changed: no new version
    _, labelled = api.patch(f'{DEPLOY}/g', {'metadata': {'labels': {'x': 'y'}}})
    assert labelled['metadata']['generation'] == 1 and labelled['metadata']['resourceVersion'] != rv
    _, scaled = api.patch(f'{DEPLOY}/g', {'spec': {'replicas': 3}})
    assert scaled['metadata']['generation'] == 2


def test_status_subresource_splits_the_object(api, dms):
    obj = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService', 'metadata': {'name': 's'},
           'spec': {'image': 'a:1'}, 'status': {'readyReplicas': 5}}
    _, created = api.post(dms, obj)
    assert 'status' not in created   # ignored on create, as with a status subresource
    _, updated = api.patch(f'{dms}/s', {'status': {'readyReplicas': 1}, 'spec': {'image': 'b:1'}})
    assert updated['spec']['image'] == 'b:1' and 'status' not in updated
    assert updated['metadata']['generation'] == 2
    apply = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService',
             'status': {'readyReplicas': 2}, 'spec': {'image': 'ignored:1'}}
    status, body = api.patch(f'{dms}/s/status', apply, 'apply', fieldManager='test', force='true')
    assert status == 200, body
    assert body['status'] == {'readyReplicas': 2} and body['spec']['image'] == 'b:1'
    assert body['metadata']['generation'] == 2   # status writes never count
    status, body = api.get(f'{dms}/s/status')
    assert status == 200 and body['status'] == {'readyReplicas': 2}


def test_dry_run_stores_nothing(api):
    status, body = api.post(CM, cm('dry'), dryRun='All')
    assert status == 201 and body['metadata']['name'] == 'dry'
    assert api.get(f'{CM}/dry')[0] == 404


def test_events_and_leases(api):
    event = {'apiVersion': 'events.k8s.io/v1', 'kind': 'Event', 'metadata': {'name': 'e1'},
             'eventTime': '2026-01-01T00:00:00.000000Z', 'reportingController': 'test',
             'reportingInstance': 'test-1', 'action': 'Reconcile', 'reason': 'Created', 'type': 'Normal',
             'regarding': {'kind': 'ConfigMap', 'name': 'x', 'namespace': 'default'}}
    events = '/apis/events.k8s.io/v1/namespaces/default/events'
    assert api.post(events, event)[0] == 201
    status, patched = api.patch(f'{events}/e1', {'series': {'count': 2, 'lastObservedTime': '2026-01-01T00:00:01.000000Z'}})
    assert status == 200 and patched['series']['count'] == 2
    leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases'
    lease = {'metadata': {'name': 'leader'}, 'spec': {'holderIdentity': 'a', 'leaseDurationSeconds': 15}}
    _, created = api.post(leases, lease)
    created['spec']['holderIdentity'] = 'b'
    assert api.put(f'{leases}/leader', created)[1]['spec']['holderIdentity'] == 'b'


def test_crd_is_checked_and_established(api):
    crd = load('demomicroservices.yaml')
    crd['metadata']['name'] = 'wrong.devops.my.domain'
    status, body = api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)
    assert status == 422 and 'metadata.name: Invalid value: "wrong.devops.my.domain": must be spec.names.plural+"."+spec.group' in body['message']
    crd = load('demomicroservices.yaml')
    crd['spec']['versions'][0]['schema']['openAPIV3Schema']['x-kubernetes-validations'][0]['rule'] = 'self.metadata.name.size( <= 63'
    status, body = api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)
    assert status == 422 and 'compilation failed' in body['message']
    got = install_crd(api, load('demomicroservices.yaml'))
    assert got['status']['acceptedNames']['kind'] == 'DemoMicroService'
    assert got['status']['storedVersions'] == ['v1']


def test_deployments_and_events_are_validated_as_the_api_server_does(api):
    bad = deployment('bad', replicas=-1)
    bad['spec']['template']['metadata']['labels'] = {'app': 'other'}
    bad['spec']['template']['spec']['containers'][0].pop('image')
    status, body = api.post(DEPLOY, bad)
    assert status == 422
    assert body['message'] == ('Deployment.apps "bad" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, '
                               'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`, '
                               'spec.template.spec.containers[0].image: Required value]')
    api.post(DEPLOY, deployment('web'))
    status, body = api.patch(f'{DEPLOY}/web', {'spec': {'selector': {'matchLabels': {'app': 'new'}}, 'template': {'metadata': {'labels': {'app': 'new'}}}}})
    assert status == 422 and 'spec.selector: Invalid value: ' in body['message'] and 'field is immutable' in body['message']

    event = {'apiVersion': 'events.k8s.io/v1', 'kind': 'Event', 'metadata': {'name': 'long'},
             'eventTime': '2026-01-01T00:00:00.000000Z', 'reportingController': 'test', 'reportingInstance': 'test-1',
             'action': 'Reconcile', 'reason': 'Failed', 'type': 'Bad', 'note': 'x' * 1025}
    status, body = api.post('/apis/events.k8s.io/v1/namespaces/default/events', event)
    assert status == 422
    assert body['message'] == 'Event.events.k8s.io "long" is invalid: [type: Unsupported value: "Bad": supported values: "Normal", "Warning", note: Too long: may not be more than 1024 bytes]'
