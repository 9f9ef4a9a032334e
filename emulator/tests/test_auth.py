"""TokenReview and SubjectAccessReview, answered from the table given at start."""
import pytest

from conftest import Client
from kube_emulator.auth import Auth

TABLE = {
    'users': [
        {'token': 'reader-token', 'username': 'system:serviceaccount:monitoring:prometheus', 'uid': '42',
         'groups': ['system:serviceaccounts']},
        {'token': 'dev-token', 'username': 'dev'},
    ],
    'rules': [
        {'users': ['system:serviceaccount:monitoring:prometheus'], 'verbs': ['get'], 'nonResourceURLs': ['/metrics']},
        {'groups': ['system:serviceaccounts'], 'verbs': ['get', 'list'], 'apiGroups': [''], 'resources': ['pods', 'pods/log'], 'namespaces': ['default']},
        {'users': ['dev'], 'verbs': ['*'], 'apiGroups': ['apps'], 'resources': ['deployments'], 'resourceNames': ['web']},
        {'users': ['dev'], 'verbs': ['get'], 'nonResourceURLs': ['/debug/*']},
    ],
}
TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews'
SARS = '/apis/authorization.k8s.io/v1/subjectaccessreviews'


@pytest.fixture
def api(make_emulator):
    return make_emulator(auth=Auth(TABLE)).client


def test_token_review(api):
    status, review = api.post(TOKEN_REVIEWS, {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenReview',
                                              'spec': {'token': 'reader-token', 'audiences': ['metrics']}})
    assert status == 201
    assert review['status']['authenticated'] is True
    assert review['status']['user'] == {'username': 'system:serviceaccount:monitoring:prometheus', 'uid': '42',
                                        'groups': ['system:serviceaccounts', 'system:authenticated']}
    assert review['status']['audiences'] == ['metrics']
    _, review = api.post(TOKEN_REVIEWS, {'spec': {'token': 'nobody'}})
    assert review['status']['authenticated'] is False and review['status']['error']
    assert api.get(TOKEN_REVIEWS)[0] == 405   # reviews are created, never stored


def sar(api, user, groups=(), **attributes):
    spec = {'user': user, 'groups': list(groups)}
    if 'path' in attributes:
        spec['nonResourceAttributes'] = attributes
    else:
        spec['resourceAttributes'] = attributes
    status, review = api.post(SARS, {'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview', 'spec': spec})
    assert status == 201
    return review['status']['allowed']


def test_subject_access_review_of_non_resource_urls(api):
    prometheus = 'system:serviceaccount:monitoring:prometheus'
    assert sar(api, prometheus, path='/metrics', verb='get') is True
    assert sar(api, prometheus, path='/metrics', verb='post') is False
    assert sar(api, 'someone-else', path='/metrics', verb='get') is False
    assert sar(api, 'dev', path='/debug/pprof', verb='get') is True
    assert sar(api, 'dev', path='/metrics', verb='get') is False


def test_subject_access_review_of_resources(api):
    assert sar(api, 'x', ['system:serviceaccounts'], verb='list', group='', resource='pods', namespace='default') is True
    assert sar(api, 'x', ['system:serviceaccounts'], verb='get', group='', resource='pods', subresource='log', namespace='default') is True
    assert sar(api, 'x', ['system:serviceaccounts'], verb='delete', group='', resource='pods', namespace='default') is False
    assert sar(api, 'x', ['system:serviceaccounts'], verb='list', group='', resource='pods', namespace='other') is False
    assert sar(api, 'dev', verb='patch', group='apps', resource='deployments', name='web', namespace='a') is True
    assert sar(api, 'dev', verb='patch', group='apps', resource='deployments', name='db', namespace='a') is False
    assert sar(api, 'admin', ['system:masters'], verb='delete', group='', resource='nodes') is True


def test_self_subject_access_review_and_the_tokens_of_the_table(make_emulator):
    emu = make_emulator(auth=Auth(TABLE))
    dev = Client(emu.url, emu.ca_file, 'dev-token')
    # The emulator authenticates table tokens; it does not enforce RBAC on its own requests.
    assert dev.get('/api/v1/namespaces')[0] == 200
    status, review = dev.post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
                              {'spec': {'resourceAttributes': {'verb': 'get', 'group': 'apps', 'resource': 'deployments', 'name': 'web'}}})
    assert status == 201 and review['status']['allowed'] is True


def test_the_table_is_read_from_a_file(tmp_path):
    path = tmp_path / 'auth.yaml'
    path.write_text('users:\n- {token: t, username: u, groups: [g]}\nrules: []\n')
    auth = Auth.from_file(str(path))
    assert auth.authenticate('Bearer t').username == 'u'
    assert auth.authenticate('Bearer nope') is False
    assert auth.authenticate(None) is None
