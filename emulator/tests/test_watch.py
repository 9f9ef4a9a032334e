"""Watches: initial state, resume from a resourceVersion, 410 Gone, selectors, bookmarks,
timeouts."""
import threading

CM = '/api/v1/namespaces/default/configmaps'


def names(events):
    return [(e['type'], e['object']['metadata']['name']) for e in events]


def test_a_watch_without_version_starts_with_the_current_objects(api):
    api.post(CM, {'metadata': {'name': 'before'}})
    w = api.watch(CM)
    assert names([w.next()]) == [('ADDED', 'before')]
    api.post(CM, {'metadata': {'name': 'after'}})
    event = w.next()
    assert names([event]) == [('ADDED', 'after')]
    assert event['object']['kind'] == 'ConfigMap'   # watch events carry apiVersion and kind
    w.close()


def test_a_watch_from_a_version_gets_only_later_events(api):
    api.post(CM, {'metadata': {'name': 'old'}})
    _, listed = api.get(CM)
    rv = listed['metadata']['resourceVersion']
    api.patch(f'{CM}/old', {'data': {'k': 'v'}})
    api.post(CM, {'metadata': {'name': 'new'}})
    api.delete(f'{CM}/old')
    w = api.watch(CM, resourceVersion=rv)
    assert names(w.take(3)) == [('MODIFIED', 'old'), ('ADDED', 'new'), ('DELETED', 'old')]
    w.close()
    # Resuming from the last event seen replays nothing.
    _, listed = api.get(CM)
    w = api.watch(CM, timeout=1, resourceVersion=listed['metadata']['resourceVersion'])
    assert w.next() is None
    w.close()


def test_a_watch_from_an_expired_version_gets_410_gone(make_emulator):
    api = make_emulator(watch_capacity=3).client
    _, listed = api.get(CM)
    rv = listed['metadata']['resourceVersion']
    for i in range(5):
        api.post(CM, {'metadata': {'name': f'cm-{i}'}})
    w = api.watch(CM, resourceVersion=rv)
    event = w.next()
    assert event['type'] == 'ERROR'
    assert event['object']['code'] == 410 and event['object']['reason'] == 'Expired'
    assert event['object']['message'].startswith(f'too old resource version: {rv} (')
    w.close()


def test_label_and_field_selector_watches(api):
    w = api.watch(CM, resourceVersion=api.get(CM)[1]['metadata']['resourceVersion'], labelSelector='app=x')
    api.post(CM, {'metadata': {'name': 'other', 'labels': {'app': 'y'}}})
    api.post(CM, {'metadata': {'name': 'mine', 'labels': {'app': 'x'}}})
    api.patch(f'{CM}/mine', {'metadata': {'labels': {'app': 'z'}}})
    # An object that stops matching is DELETED for this watch; one that starts, ADDED.
    api.patch(f'{CM}/other', {'metadata': {'labels': {'app': 'x'}}})
    assert names(w.take(3)) == [('ADDED', 'mine'), ('DELETED', 'mine'), ('ADDED', 'other')]
    w.close()
    w = api.watch(CM, fieldSelector='metadata.name=mine')
    assert names([w.next()]) == [('ADDED', 'mine')]
    api.patch(f'{CM}/other', {'data': {'a': 'b'}})
    api.patch(f'{CM}/mine', {'data': {'a': 'b'}})
    assert names([w.next()]) == [('MODIFIED', 'mine')]
    w.close()


def test_timeout_ends_the_watch_with_a_bookmark_when_allowed(make_emulator):
    api = make_emulator(bookmark_interval=0.2).client
    api.post(CM, {'metadata': {'name': 'x'}})
    rv = api.get(CM)[1]['metadata']['resourceVersion']
    w = api.watch(CM, timeout=1, resourceVersion=rv, allowWatchBookmarks='true')
    event = w.next()
    assert event['type'] == 'BOOKMARK' and event['object']['metadata']['resourceVersion'] == rv
    events = []
    while (e := w.next()) is not None:
        events.append(e)
    assert events and all(e['type'] == 'BOOKMARK' for e in events)   # then the stream ends


def test_streaming_list_ends_its_initial_events_with_a_bookmark(api):
    api.post(CM, {'metadata': {'name': 'x'}})
    w = api.watch(CM, sendInitialEvents='true', allowWatchBookmarks='true', resourceVersionMatch='NotOlderThan')
    added, bookmark = w.take(2)
    assert added['type'] == 'ADDED'
    assert bookmark['type'] == 'BOOKMARK'
    assert bookmark['object']['metadata']['annotations'] == {'k8s.io/initial-events-end': 'true'}
    w.close()


def test_a_closed_watch_is_forgotten(emu, api):
    w = api.watch(CM)
    api.post(CM, {'metadata': {'name': 'x'}})
    w.next()
    channel = emu.call(emu.server.store.channel, ('', 'configmaps'))
    assert len(channel.subscribers) == 1
    w.close()
    done = threading.Event()
    for _ in range(100):
        api.post(CM, {'metadata': {'generateName': 'poke-'}})   # lets the server notice
        if not emu.call(lambda: len(channel.subscribers)):
            done.set()
            break
        done.wait(0.05)
    assert done.is_set(), 'the subscriber of a closed watch was kept'
