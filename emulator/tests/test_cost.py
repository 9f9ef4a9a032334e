"""The cost of a request does not grow with the emulator's history: it looks at the objects
the request concerns, and keeps a bounded number of events. Counted in stored objects looked
at (`Store.examined`), never timed."""
from kube_emulator.store import Store

CM = '/api/v1/namespaces/default/configmaps'
KEY = ('', 'configmaps')


def examined_by(emu, request):
    store = emu.server.store
    before = emu.call(lambda: store.examined)
    request()
    return emu.call(lambda: store.examined) - before


def test_a_get_looks_at_one_object_however_long_the_history(emu, api):
    api.post(CM, {'metadata': {'name': 'target'}})
    first = examined_by(emu, lambda: api.get(f'{CM}/target'))
    for i in range(300):   # writes, updates and deletes of other objects
        api.post(CM, {'metadata': {'name': f'cm-{i}'}})
        api.patch(f'{CM}/cm-{i}', {'data': {'i': str(i)}})
        if i % 2:
            api.delete(f'{CM}/cm-{i}')
    assert examined_by(emu, lambda: api.get(f'{CM}/target')) == first == 1


def test_a_list_looks_at_its_namespace_only(emu, api):
    api.post('/api/v1/namespaces', {'metadata': {'name': 'busy'}})
    for i in range(50):
        api.post('/api/v1/namespaces/busy/configmaps', {'metadata': {'name': f'cm-{i}'}})
    api.post(CM, {'metadata': {'name': 'one'}})
    assert examined_by(emu, lambda: api.get(CM)) == 1


def test_the_watch_buffer_is_bounded():
    store = Store(watch_capacity=10)
    for i in range(100):
        store.create(KEY, {'metadata': {'name': f'cm-{i}', 'namespace': 'default'}})
    channel = store.channel(KEY)
    assert len(channel.buffer) == 10
    assert not channel.can_resume(50) and channel.can_resume(91)


def test_deleting_an_owner_looks_at_its_dependents_not_at_the_store(emu, api):
    for i in range(200):
        api.post(CM, {'metadata': {'name': f'bystander-{i}'}})
    _, owner = api.post(CM, {'metadata': {'name': 'owner'}})
    ref = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'owner', 'uid': owner['metadata']['uid']}
    api.post(CM, {'metadata': {'name': 'child', 'ownerReferences': [ref]}})
    cost = examined_by(emu, lambda: api.delete(f'{CM}/owner'))
    assert api.get(f'{CM}/child')[0] in (200, 404)
    assert cost < 10, cost


def test_managed_fields_stay_bounded_however_many_managers_update_an_object(api):
    api.post(CM, {'metadata': {'name': 'busy'}})
    for i in range(30):
        api.patch(f'{CM}/busy', {'data': {f'k{i}': 'v'}}, fieldManager=f'manager-{i}')
    _, obj = api.get(f'{CM}/busy')
    updates = [e for e in obj['metadata']['managedFields'] if e['operation'] == 'Update']
    # The API server's cap: the oldest Update entries merge into `ancient-changes`, nothing is lost.
    assert len(updates) == 10 and 'ancient-changes' in [e['manager'] for e in updates]
    owned = set().union(*(e['fieldsV1']['f:data'] for e in updates))
    assert {f'f:k{i}' for i in range(30)} <= owned
