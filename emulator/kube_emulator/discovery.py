"""Discovery: /api, /apis and the resource lists of each group version, built from the
registry at each request, so that CRDs appear as soon as they are created and disappear with
them. Served in the legacy (unaggregated) format only: kubectl and kube-rs ask for the
aggregated one first and fall back to it when the server answers with plain JSON.
"""
from .resources import Registry, ResourceType

VERSION = {'major': '1', 'minor': '32', 'gitVersion': 'v1.32.0-kube-emulator', 'gitCommit': '',
           'gitTreeState': 'clean', 'buildDate': '2026-01-01T00:00:00Z', 'goVersion': 'go1.23',
           'compiler': 'gc', 'platform': 'linux/amd64'}

SUBRESOURCE_VERBS = {'status': ['get', 'patch', 'update'], 'scale': ['get', 'patch', 'update'],
                     'finalize': ['update'], 'log': ['get']}


def _gv(group: str, version: str) -> str:
    return f'{group}/{version}' if group else version


def core_versions(server_address: str) -> dict:
    return {'kind': 'APIVersions', 'versions': ['v1'],
            'serverAddressByClientCIDRs': [{'clientCIDR': '0.0.0.0/0', 'serverAddress': server_address}]}


def _group(name: str, versions: list[str]) -> dict:
    entries = [{'groupVersion': _gv(name, v), 'version': v} for v in versions]
    return {'name': name, 'versions': entries, 'preferredVersion': entries[0]}


def group_list(registry: Registry) -> dict:
    groups = [_group(g, vs) for g, vs in registry.groups().items() if g and vs]
    return {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': groups}


def group(registry: Registry, name: str) -> dict | None:
    versions = registry.groups().get(name)
    if not versions:
        return None
    return {'kind': 'APIGroup', 'apiVersion': 'v1', **_group(name, versions)}


def _entry(t: ResourceType) -> dict:
    entry = {'name': t.plural, 'singularName': t.singular, 'namespaced': t.namespaced,
             'kind': t.kind, 'verbs': t.verbs}
    if t.short_names:
        entry['shortNames'] = t.short_names
    if t.categories:
        entry['categories'] = t.categories
    return entry


def resource_list(registry: Registry, group_name: str, version: str) -> dict | None:
    types = registry.in_group_version(group_name, version)
    if not types:
        return None
    resources = []
    for t in sorted(types, key=lambda t: t.plural):
        resources.append(_entry(t))
        for sub in t.subresources:
            resources.append({'name': f'{t.plural}/{sub}', 'singularName': '',
                              'namespaced': t.namespaced, 'kind': t.kind,
                              'verbs': SUBRESOURCE_VERBS.get(sub, ['get'])})
    return {'kind': 'APIResourceList', 'apiVersion': 'v1',
            'groupVersion': _gv(group_name, version), 'resources': resources}
