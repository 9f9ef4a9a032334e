"""Deletion: finalizers, owner-reference garbage collection (background, foreground, orphan),
Namespaces and CRDs."""
from conftest import install_crd, load, wait_until

CM = '/api/v1/namespaces/default/configmaps'
NS = '/api/v1/namespaces'


def owned(name, owner, block=False, namespace_path=CM):
    ref = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': owner['metadata']['name'],
           'uid': owner['metadata']['uid'], 'controller': True, 'blockOwnerDeletion': block}
    return {'metadata': {'name': name, 'ownerReferences': [ref]}}


def exists(api, path):
    return api.get(path)[0] == 200


def test_finalizers_hold_deletion_until_removed_and_none_can_be_added_meanwhile(api):
    api.post(CM, {'metadata': {'name': 'f', 'finalizers': ['example.com/keep']}})
    status, body = api.delete(f'{CM}/f')
    assert status == 202 and body['metadata']['deletionTimestamp']
    _, held = api.get(f'{CM}/f')
    assert held['metadata']['finalizers'] == ['example.com/keep']
    status, body = api.patch(f'{CM}/f', {'metadata': {'finalizers': ['example.com/keep', 'example.com/new']}})
    assert status == 422 and 'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted' in body['message']
    status, _ = api.patch(f'{CM}/f', [{'op': 'remove', 'path': '/metadata/finalizers/0'}], 'json')
    assert status == 200
    assert api.get(f'{CM}/f')[0] == 404


def test_delete_preconditions(api):
    _, created = api.post(CM, {'metadata': {'name': 'pre'}})
    status, body = api.delete(f'{CM}/pre', {'preconditions': {'uid': 'another'}})
    assert status == 409 and body['message'].startswith('Operation cannot be fulfilled on configmaps "pre": Precondition failed: UID in precondition: another')
    status, body = api.delete(f'{CM}/pre', {'preconditions': {'uid': created['metadata']['uid']}})
    assert status == 200 and body['status'] == 'Success' and body['details']['name'] == 'pre'


def test_background_garbage_collection(api):
    _, owner = api.post(CM, {'metadata': {'name': 'owner'}})
    _, other = api.post(CM, {'metadata': {'name': 'other-owner'}})
    api.post(CM, owned('child', owner))
    both = owned('shared', owner)
    both['metadata']['ownerReferences'].append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'other-owner', 'uid': other['metadata']['uid']})
    api.post(CM, both)
    api.post(CM, owned('grandchild', api.get(f'{CM}/child')[1]))
    api.delete(f'{CM}/owner')
    assert wait_until(lambda: not exists(api, f'{CM}/child') and not exists(api, f'{CM}/grandchild'))
    # A dependent with another owner stays, without the dangling reference.
    _, shared = api.get(f'{CM}/shared')
    assert [r['name'] for r in shared['metadata']['ownerReferences']] == ['other-owner']


def test_foreground_deletion_waits_for_blocking_dependents(api):
    _, owner = api.post(CM, {'metadata': {'name': 'fg'}})
    child = owned('fg-child', owner, block=True)
    child['metadata']['finalizers'] = ['example.com/slow']
    api.post(CM, child)
    status, body = api.delete(f'{CM}/fg', {'propagationPolicy': 'Foreground'})
    assert status == 202 and 'foregroundDeletion' in body['metadata']['finalizers']
    assert wait_until(lambda: api.get(f'{CM}/fg-child')[1]['metadata'].get('deletionTimestamp'))
    assert exists(api, f'{CM}/fg')   # held by its blocking dependent
    api.patch(f'{CM}/fg-child', {'metadata': {'finalizers': None}})
    assert wait_until(lambda: not exists(api, f'{CM}/fg'))


def test_orphan_deletion_keeps_dependents(api):
    _, owner = api.post(CM, {'metadata': {'name': 'orphaner'}})
    api.post(CM, owned('orphan', owner))
    api.delete(f'{CM}/orphaner', propagationPolicy='Orphan')
    assert not exists(api, f'{CM}/orphaner')
    _, orphan = api.get(f'{CM}/orphan')
    assert 'ownerReferences' not in orphan['metadata']


def test_namespaces_hold_their_objects_and_take_them_along(api):
    status, ns = api.post(NS, {'metadata': {'name': 'team-a'}})
    assert status == 201 and ns['status']['phase'] == 'Active'
    assert ns['metadata']['labels']['kubernetes.io/metadata.name'] == 'team-a'
    status, body = api.post(NS, {'metadata': {'name': 'a' * 64}})
    assert status == 422 and 'must be no more than 63 characters' in body['message']
    status, body = api.post('/api/v1/namespaces/nowhere/configmaps', {'metadata': {'name': 'x'}})
    assert status == 404 and body['message'] == 'namespaces "nowhere" not found'
    cms = '/api/v1/namespaces/team-a/configmaps'
    api.post(cms, {'metadata': {'name': 'plain'}})
    api.post(cms, {'metadata': {'name': 'held', 'finalizers': ['example.com/f']}})
    status, body = api.delete(f'{NS}/team-a')
    assert status == 202 and body['status']['phase'] == 'Terminating'
    # As a namespace controller, the emulator takes a moment (1 s) before emptying it: a
    # client deleting the namespace and then what is in it finds the objects still there.
    assert exists(api, f'{cms}/plain')
    assert wait_until(lambda: not exists(api, f'{cms}/plain'))
    status, body = api.post(cms, {'metadata': {'name': 'late'}})
    assert status == 403 and 'because it is being terminated' in body['message']
    assert exists(api, f'{NS}/team-a')   # a finalizer in it holds it
    api.patch(f'{cms}/held', {'metadata': {'finalizers': None}})
    assert wait_until(lambda: not exists(api, f'{NS}/team-a'))


def test_deleting_a_crd_deletes_its_custom_resources_first(api, dms):
    obj = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService',
           'metadata': {'name': 'held', 'finalizers': ['devops.my.domain/finalizer']}, 'spec': {'image': 'a:1'}}
    api.post(dms, obj)
    crd = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/demomicroservices.devops.my.domain'
    api.delete(crd)
    assert wait_until(lambda: api.get(f'{dms}/held')[1]['metadata'].get('deletionTimestamp'))
    _, terminating = api.get(crd)
    assert any(c['type'] == 'Terminating' for c in terminating['status']['conditions'])
    status, body = api.post(dms, {**obj, 'metadata': {'name': 'new'}})
    assert status == 405
    api.patch(f'{dms}/held', {'metadata': {'finalizers': None}})
    assert wait_until(lambda: api.get(crd)[0] == 404)
    assert api.get(dms)[0] == 404
    # And it can come back.
    install_crd(api, load('demomicroservices.yaml'))
    assert api.get(dms)[1]['items'] == []
