"""kubectl against the emulator, as the e2e flow runs it: with its default (strict)
validation, which needs the OpenAPI v3 the emulator serves; server-side apply, short names,
wait, cascading deletes, `get -f`."""
import json
import os
import subprocess

import pytest

from conftest import HERE

CRD = os.path.join(HERE, 'data', 'demomicroservices.yaml')


@pytest.fixture
def kubectl(emu, tmp_path):
    config = emu.kubeconfig(str(tmp_path / 'kubeconfig'))
    env = {**os.environ, 'KUBECONFIG': config, 'HOME': str(tmp_path)}   # a discovery cache of its own

    def run(*args, input=None, ok=True):
        done = subprocess.run(['kubectl', *args], input=input, env=env, capture_output=True, text=True, timeout=60)
        if ok:
            assert done.returncode == 0, done.stderr
        return done
    return run


def sample(name='sample', **spec):
    return json.dumps({'apiVersion': 'devops.my.domain/v1', 'kind': 'DemoMicroService',
                       'metadata': {'name': name}, 'spec': {'image': 'a:1', **spec}})


def test_openapi_v3_declares_server_side_field_validation(api, dms):
    status, index = api.get('/openapi/v3')
    assert status == 200 and 'apis/devops.my.domain/v1' in index['paths']
    _, doc = api.get(index['paths']['apis/devops.my.domain/v1']['serverRelativeURL'].split('?')[0])
    patch = doc['paths']['/apis/devops.my.domain/v1/namespaces/{namespace}/demomicroservices/{name}']['patch']
    assert patch['x-kubernetes-group-version-kind'] == {'group': 'devops.my.domain', 'version': 'v1', 'kind': 'DemoMicroService'}
    assert any(p['name'] == 'fieldValidation' and p['in'] == 'query' for p in patch['parameters'])
    assert 'spec' in doc['components']['schemas']['domain.my.devops.v1.DemoMicroService']['properties']
    assert api.get('/openapi/v2')[0] == 404


def test_kubectl_apply_with_default_validation(kubectl):
    kubectl('apply', '--server-side', '-f', CRD)
    kubectl('wait', '--for=condition=Established', 'crd/demomicroservices.devops.my.domain', '--timeout=10s')
    assert 'created' in kubectl('apply', '-f', '-', input=sample()).stdout
    assert 'configured' in kubectl('apply', '-f', '-', input=sample(replicas=2)).stdout
    assert 'serverside-applied' in kubectl('apply', '--server-side', '-f', '-', input=sample('ssa')).stdout
    # The CRD's printer columns, in a Table from the server.
    table = kubectl('get', 'dms', 'sample').stdout.splitlines()
    assert table[0].split() == ['NAME', 'IMAGE', 'AGE'] and table[1].split()[:2] == ['sample', 'a:1']
    out = kubectl('get', 'dms', '-o', 'name').stdout.split()
    assert out == ['demomicroservice.devops.my.domain/sample', 'demomicroservice.devops.my.domain/ssa']
    assert kubectl('get', 'dms', 'sample', '-o', 'jsonpath={.spec.replicas},{.spec.port}').stdout == '2,9898'

    refused = kubectl('apply', '-f', '-', input=sample('bad', replicas=-1), ok=False)
    assert 'The DemoMicroService "bad" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0' in refused.stderr
    refused = kubectl('apply', '-f', '-', input=sample('unknown', colour='blue'), ok=False)
    assert 'strict decoding error: unknown field "spec.colour"' in refused.stderr


def test_kubectl_get_f_delete_cascade_and_wait(kubectl, tmp_path):
    deploy = tmp_path / 'deploy.yaml'
    deploy.write_text(json.dumps({'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'web', 'namespace': 'default'},
                                  'spec': {'selector': {'matchLabels': {'app': 'web'}},
                                           'template': {'metadata': {'labels': {'app': 'web'}},
                                                        'spec': {'containers': [{'name': 'web', 'image': 'web:1'}]}}}}))
    kubectl('apply', '-f', str(deploy))
    assert kubectl('get', '-f', str(deploy), '-o', 'name').stdout.strip() == 'deployment.apps/web'
    uid = kubectl('get', 'deploy', 'web', '-o', 'jsonpath={.metadata.uid}').stdout
    owned = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'child', 'ownerReferences': [
        {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'web', 'uid': uid, 'blockOwnerDeletion': True}]}}
    kubectl('create', '-f', '-', input=json.dumps(owned))
    kubectl('delete', '-f', str(deploy), '--cascade=orphan')
    kubectl('get', 'configmap', 'child')
    kubectl('apply', '-f', str(deploy))
    uid = kubectl('get', 'deploy', 'web', '-o', 'jsonpath={.metadata.uid}').stdout
    owned['metadata'].update(name='child2', ownerReferences=[{**owned['metadata']['ownerReferences'][0], 'uid': uid}])
    kubectl('create', '-f', '-', input=json.dumps(owned))
    kubectl('delete', 'deployment', 'web', '--cascade=foreground', '--timeout=20s')
    kubectl('wait', '--for=delete', 'configmap/child2', '--timeout=10s')
    assert kubectl('get', '-f', str(deploy), '--ignore-not-found', '-o', 'name').stdout == ''
    # (Not `kubectl create namespace`: its typed client sends protobuf, which the emulator refuses.)
    kubectl('create', '-f', '-', input=json.dumps({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'gone-soon'}}))
    kubectl('delete', 'namespace', 'gone-soon', '--timeout=20s')
