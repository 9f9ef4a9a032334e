"""metadata.managedFields as the API server records them: entries per manager, operation,
apiVersion and subresource, the fieldsV1 format, ownership moving with changes, managedFields
sent by clients."""
import re
import time

CM = '/api/v1/namespaces/default/configmaps'
DEPLOY = '/apis/apps/v1/namespaces/default/deployments'
RFC3339_SECONDS = re.compile(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ')


def entries(obj):
    return obj['metadata'].get('managedFields', [])


def by_manager(obj):
    return {(e.get('manager', ''), e['operation'], e.get('subresource', '')): e['fieldsV1'] for e in entries(obj)}


def applied_cm(name, **fields):
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': name}, **fields}


def test_an_apply_records_an_entry_owning_the_applied_fields(api):
    body = applied_cm('a', data={'key': 'v'})
    body['metadata']['labels'] = {'app': 'a'}
    status, created = api.patch(f'{CM}/a', body, 'apply', fieldManager='tool')
    assert status == 201
    [entry] = entries(created)
    assert RFC3339_SECONDS.fullmatch(entry['time'])
    assert {k: v for k, v in entry.items() if k != 'time'} == {'manager': 'tool', 'operation': 'Apply', 'apiVersion': 'v1', 'fieldsType': 'FieldsV1',
                     'fieldsV1': {'f:data': {'f:key': {}}, 'f:metadata': {'f:labels': {'f:app': {}}}}}
    assert api.get(f'{CM}/a')[1]['metadata']['managedFields'] == created['metadata']['managedFields']


def test_updates_own_what_they_change_and_take_it_from_other_managers(api):
    kubectl = {'User-Agent': 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc'}
    _, created = api.post(CM, {'metadata': {'name': 'u', 'labels': {'app': 'u'}}, 'data': {'key': 'v', 'other': 'w'}}, headers=kubectl)
    # No fieldManager: the User-Agent before its first '/'. Containers the create added list '.'.
    assert by_manager(created) == {('kubectl', 'Update', ''): {
        'f:data': {'.': {}, 'f:key': {}, 'f:other': {}}, 'f:metadata': {'f:labels': {'.': {}, 'f:app': {}}}}}
    created['data']['key'] = 'changed'
    status, updated = api.put(f'{CM}/u', created, fieldManager='editor')
    assert status == 200
    assert by_manager(updated) == {
        ('kubectl', 'Update', ''): {'f:data': {'.': {}, 'f:other': {}}, 'f:metadata': {'f:labels': {'.': {}, 'f:app': {}}}},
        ('editor', 'Update', ''): {'f:data': {'f:key': {}}}}
    # A removed field leaves every entry; a manager with nothing left has no entry.
    _, patched = api.patch(f'{CM}/u', {'data': {'key': None}}, fieldManager='cleaner')
    assert ('editor', 'Update', '') not in by_manager(patched)
    assert ('cleaner', 'Update', '') not in by_manager(patched)   # it removed, set nothing
    assert [e['manager'] for e in entries(patched)] == ['kubectl']


def test_two_appliers_share_a_value_they_both_set_and_apply_comes_first(api):
    _, created = api.post(CM, {'metadata': {'name': 'two'}, 'data': {'x': '1'}}, fieldManager='creator')
    api.patch(f'{CM}/two', applied_cm('two', data={'a': '1', 'shared': 's'}), 'apply', fieldManager='alpha')
    _, both = api.patch(f'{CM}/two', applied_cm('two', data={'b': '1', 'shared': 's'}), 'apply', fieldManager='beta')
    assert by_manager(both) == {
        ('alpha', 'Apply', ''): {'f:data': {'f:a': {}, 'f:shared': {}}},
        ('beta', 'Apply', ''): {'f:data': {'f:b': {}, 'f:shared': {}}},
        ('creator', 'Update', ''): {'f:data': {'.': {}, 'f:x': {}}}}
    assert [e['operation'] for e in entries(both)] == ['Apply', 'Apply', 'Update']
    # Changing the shared value takes it from alpha (no conflict: every apply acts as forced).
    _, changed = api.patch(f'{CM}/two', applied_cm('two', data={'b': '1', 'shared': 'new'}), 'apply', fieldManager='beta')
    assert by_manager(changed)[('alpha', 'Apply', '')] == {'f:data': {'f:a': {}}}
    # An applier's entry is what it applied last: dropping `b` gives it up (its value stays).
    _, dropped = api.patch(f'{CM}/two', applied_cm('two', data={'shared': 'new'}), 'apply', fieldManager='beta')
    assert by_manager(dropped)[('beta', 'Apply', '')] == {'f:data': {'f:shared': {}}}
    assert dropped['data']['b'] == '1'


def test_a_write_that_changes_nothing_stores_nothing(api):
    body = applied_cm('same', data={'k': 'v'})
    _, first = api.patch(f'{CM}/same', body, 'apply', fieldManager='tool')
    time.sleep(1.1)   # a new time would show
    _, again = api.patch(f'{CM}/same', body, 'apply', fieldManager='tool')
    assert again['metadata']['resourceVersion'] == first['metadata']['resourceVersion']
    assert again['metadata']['managedFields'] == first['metadata']['managedFields']
    # Another manager applying the same value changes who owns it: that is stored.
    _, shared = api.patch(f'{CM}/same', body, 'apply', fieldManager='other')
    assert shared['metadata']['resourceVersion'] != first['metadata']['resourceVersion']
    assert shared['data'] == {'k': 'v'} and len(entries(shared)) == 2


def test_keys_of_sets_map_lists_and_atomic_fields(api):
    _, owner = api.post(CM, {'metadata': {'name': 'owner'}})
    uid = owner['metadata']['uid']
    deploy = {'apiVersion': 'apps/v1', 'kind': 'Deployment',
              'metadata': {'name': 'web', 'finalizers': ['example.com/f'],
                           'ownerReferences': [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'owner', 'uid': uid}]},
              'spec': {'selector': {'matchLabels': {'app': 'web'}},
                       'template': {'metadata': {'labels': {'app': 'web'}},
                                    'spec': {'containers': [{'name': 'app', 'image': 'app:1', 'args': ['-v'],
                                                             'ports': [{'containerPort': 80}]}]}}}}
    status, created = api.patch(f'{DEPLOY}/web', deploy, 'apply', fieldManager='op')
    assert status == 201, created
    owned = by_manager(created)[('op', 'Apply', '')]
    assert owned['f:metadata'] == {'f:finalizers': {'v:"example.com/f"': {}},
                                   'f:ownerReferences': {f'k:{{"uid":"{uid}"}}': {'.': {}, 'f:apiVersion': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {}}}}
    assert owned['f:spec']['f:selector'] == {}   # a LabelSelector is atomic: owned whole
    container = owned['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}']
    # args is an atomic list; ports are keyed by containerPort and protocol, which defaults to TCP.
    assert container == {'.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {},
                         'f:ports': {'k:{"containerPort":80,"protocol":"TCP"}': {'.': {}, 'f:containerPort': {}}}}
    assert list(owned) == ['f:metadata', 'f:spec'] and list(container)[0] == '.'


def test_status_writes_have_an_entry_of_their_own(api, dms):
    obj = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService', 'metadata': {'name': 's'},
           'spec': {'image': 'a:1'}, 'status': {'readyReplicas': 9}}
    _, created = api.patch(f'{dms}/s', obj, 'apply', fieldManager='user')
    # The status of an apply to the resource is not stored, so not owned; spec.port's default neither.
    assert by_manager(created) == {('user', 'Apply', ''): {'f:spec': {'f:image': {}}}}
    status = {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService', 'metadata': {'name': 's'},
              'spec': {'image': 'ignored:1'},
              'status': {'readyReplicas': 1, 'conditions': [
                  {'type': 'Ready', 'status': 'True', 'reason': 'Ok', 'message': '', 'lastTransitionTime': '2026-01-01T00:00:00Z'}]}}
    code, written = api.patch(f'{dms}/s/status', status, 'apply', fieldManager='operator')
    assert code == 200, written
    [entry] = [e for e in entries(written) if e.get('subresource')]
    assert (entry['manager'], entry['operation'], entry['apiVersion'], entry['subresource']) == ('operator', 'Apply', 'devops.my.domain/v1', 'status')
    assert entry['fieldsV1'] == {'f:status': {'f:conditions': {'k:{"type":"Ready"}': {
        '.': {}, 'f:lastTransitionTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {}}},
        'f:readyReplicas': {}}}
    # A merge patch of /status is an Update of the status subresource.
    _, merged = api.patch(f'{dms}/s/status', {'status': {'readyReplicas': 2}}, fieldManager='scaler')
    fields = by_manager(merged)
    assert fields[('scaler', 'Update', 'status')] == {'f:status': {'f:readyReplicas': {}}}
    assert 'f:readyReplicas' not in fields[('operator', 'Apply', 'status')]['f:status']


def test_a_create_owns_defaults_and_everything_it_sets(api, dms):
    _, created = api.post(dms, {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService',
                                'metadata': {'name': 'c'}, 'spec': {'image': 'a:1'}}, fieldManager='maker')
    assert by_manager(created) == {('maker', 'Update', ''): {'f:spec': {'.': {}, 'f:image': {}, 'f:port': {}}}}


def test_managed_fields_sent_by_a_client_replace_or_clear_them(api):
    _, obj = api.post(CM, {'metadata': {'name': 'm'}, 'data': {'k': 'v'}}, fieldManager='maker')
    sent = [{'manager': 'restored', 'operation': 'Apply', 'apiVersion': 'v1', 'time': '2020-01-01T00:00:00Z',
             'fieldsType': 'FieldsV1', 'fieldsV1': {'f:data': {'f:k': {}}}}]
    _, replaced = api.patch(f'{CM}/m', {'metadata': {'managedFields': sent}})
    assert entries(replaced) == sent
    # Invalid entries are ignored: the stored ones stay.
    bogus = [{**sent[0], 'operation': 'Bogus'}]
    _, kept = api.patch(f'{CM}/m', {'metadata': {'managedFields': bogus}, 'data': {'new': 'x'}}, fieldManager='adder')
    assert [e['manager'] for e in entries(kept)] == ['restored', 'adder']
    # An empty list clears them; so does one empty entry (JSON patch, as the docs show it).
    _, cleared = api.patch(f'{CM}/m', {'metadata': {'managedFields': []}})
    assert 'managedFields' not in cleared['metadata']
    api.patch(f'{CM}/m', {'data': {'k': 'again'}}, fieldManager='maker')
    _, cleared = api.patch(f'{CM}/m', [{'op': 'replace', 'path': '/metadata/managedFields', 'value': [{}]}], 'json')
    assert 'managedFields' not in cleared['metadata']
    # Clearing and changing in one write: the write's own entry is all that is left.
    _, reset = api.put(f'{CM}/m', {**cleared, 'metadata': {**cleared['metadata'], 'managedFields': []}, 'data': {'k': 'v2'}}, fieldManager='putter')
    assert by_manager(reset) == {('putter', 'Update', ''): {'f:data': {'f:k': {}}}}


def test_an_apply_may_not_carry_managed_fields_and_status_writes_ignore_them(api, dms):
    body = applied_cm('n', data={'k': 'v'})
    body['metadata']['managedFields'] = []
    status, error = api.patch(f'{CM}/n', body, 'apply', fieldManager='tool')
    assert status == 400 and error['message'] == 'metadata.managedFields must be nil'
    _, obj = api.post(dms, {'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService',
                            'metadata': {'name': 'x'}, 'spec': {'image': 'a:1'}}, fieldManager='maker')
    _, written = api.patch(f'{dms}/x/status', {'metadata': {'managedFields': []}, 'status': {'readyReplicas': 1}}, fieldManager='st')
    assert set(by_manager(written)) == {('maker', 'Update', ''), ('st', 'Update', 'status')}
