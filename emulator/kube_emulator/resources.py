"""The resource types the emulator serves: built-in ones from a table, custom ones from CRDs.

A type is served at one or more versions; its objects are kept once, under (group, plural),
in the storage version (see conversion.py). Discovery, routing and the store all look types
up here.
"""
from dataclasses import dataclass, field

ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']
CREATE_ONLY = ['create']


@dataclass
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ''
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    verbs: list[str] = field(default_factory=lambda: list(ALL_VERBS))
    subresources: list[str] = field(default_factory=list)
    # The CRD's name for a custom resource; None for a built-in type.
    crd: str | None = None
    # Whether `metadata.generation` counts spec changes (objects with a spec or a status
    # subresource; not ConfigMaps, Events, ...).
    generation: bool = True

    def __post_init__(self):
        self.singular = self.singular or self.kind.lower()

    @property
    def api_version(self) -> str:
        return f'{self.group}/{self.version}' if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Where the objects of this type are kept, whatever version is asked for."""
        return (self.group, self.plural)


def _t(group, version, plural, kind, namespaced, short=(), cats=(), verbs=None, subs=(), gen=True):
    return ResourceType(group, version, plural, kind, namespaced, short_names=list(short),
                        categories=list(cats), verbs=list(verbs or ALL_VERBS),
                        subresources=list(subs), generation=gen)


# What generated operators, kubectl and the Makefile flow touch, and their usual neighbours.
# Versions are the current ones of Kubernetes 1.32.
BUILTIN = [
    _t('', 'v1', 'namespaces', 'Namespace', False, ['ns'], verbs=['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], subs=['status', 'finalize'], gen=False),
    _t('', 'v1', 'pods', 'Pod', True, ['po'], ['all'], subs=['status', 'log']),
    _t('', 'v1', 'services', 'Service', True, ['svc'], ['all'], subs=['status']),
    _t('', 'v1', 'configmaps', 'ConfigMap', True, ['cm'], gen=False),
    _t('', 'v1', 'secrets', 'Secret', True, gen=False),
    _t('', 'v1', 'serviceaccounts', 'ServiceAccount', True, ['sa'], gen=False),
    _t('', 'v1', 'events', 'Event', True, ['ev'], gen=False),
    _t('', 'v1', 'endpoints', 'Endpoints', True, ['ep'], gen=False),
    _t('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', True, ['pvc'], subs=['status']),
    _t('', 'v1', 'nodes', 'Node', False, ['no'], subs=['status']),
    _t('apps', 'v1', 'deployments', 'Deployment', True, ['deploy'], ['all'], subs=['status', 'scale']),
    _t('apps', 'v1', 'replicasets', 'ReplicaSet', True, ['rs'], ['all'], subs=['status', 'scale']),
    _t('apps', 'v1', 'statefulsets', 'StatefulSet', True, ['sts'], ['all'], subs=['status', 'scale']),
    _t('apps', 'v1', 'daemonsets', 'DaemonSet', True, ['ds'], ['all'], subs=['status']),
    _t('batch', 'v1', 'jobs', 'Job', True, cats=['all'], subs=['status']),
    _t('batch', 'v1', 'cronjobs', 'CronJob', True, ['cj'], ['all'], subs=['status']),
    _t('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', True, ['hpa'], ['all'], subs=['status']),
    _t('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', True, ['pdb'], subs=['status']),
    _t('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', True, ['netpol']),
    _t('networking.k8s.io', 'v1', 'ingresses', 'Ingress', True, ['ing'], subs=['status']),
    _t('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', True, gen=False),
    _t('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', True, gen=False),
    _t('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', False, gen=False),
    _t('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', False, gen=False),
    _t('coordination.k8s.io', 'v1', 'leases', 'Lease', True, gen=False),
    _t('events.k8s.io', 'v1', 'events', 'Event', True, ['ev'], gen=False),
    _t('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', False, ['crd', 'crds'], ['api-extensions'], subs=['status']),
    _t('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', False, cats=['api-extensions'], gen=False),
    _t('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', False, cats=['api-extensions'], gen=False),
    # Review APIs: create only, answered and never stored (auth.py).
    _t('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', False, verbs=CREATE_ONLY, gen=False),
    _t('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', False, verbs=CREATE_ONLY, gen=False),
    _t('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', False, verbs=CREATE_ONLY, gen=False),
    _t('authorization.k8s.io', 'v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', True, verbs=CREATE_ONLY, gen=False),
]

REVIEWS = {('authentication.k8s.io', 'tokenreviews'), ('authorization.k8s.io', 'subjectaccessreviews'),
           ('authorization.k8s.io', 'selfsubjectaccessreviews'),
           ('authorization.k8s.io', 'localsubjectaccessreviews')}


class Registry:
    """Served types by (group, version, plural), with the lookups discovery and kubectl need."""

    def __init__(self):
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        # Group -> versions in preference order (the first is the preferred one).
        self._group_versions: dict[str, list[str]] = {}
        for t in BUILTIN:
            self.add(t)

    def add(self, t: ResourceType):
        self._types[(t.group, t.version, t.plural)] = t
        versions = self._group_versions.setdefault(t.group, [])
        if t.version not in versions:
            versions.append(t.version)

    def remove_crd(self, crd_name: str):
        for k, t in list(self._types.items()):
            if t.crd == crd_name:
                del self._types[k]
        self._group_versions = {}
        for t in self._types.values():
            versions = self._group_versions.setdefault(t.group, [])
            if t.version not in versions:
                versions.append(t.version)

    def set_version_order(self, group: str, versions: list[str]):
        """CRDs say which version is preferred (kube-aggregator's version priority)."""
        current = self._group_versions.get(group, [])
        self._group_versions[group] = [v for v in versions if v in current] + \
            [v for v in current if v not in versions]

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def groups(self) -> dict[str, list[str]]:
        return self._group_versions

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for (g, v, _), t in self._types.items() if g == group and v == version]

    def by_kind(self, group: str, kind: str) -> list[ResourceType]:
        return [t for t in self._types.values() if t.group == group and t.kind == kind]

    def any_version(self, group: str, plural: str) -> ResourceType | None:
        """The preferred served version of a type, for the garbage collector and namespaces."""
        for version in self._group_versions.get(group, []):
            t = self._types.get((group, version, plural))
            if t:
                return t
        return None

    def all(self) -> list[ResourceType]:
        return list(self._types.values())
