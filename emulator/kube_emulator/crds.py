"""CustomResourceDefinitions: what the API server checks in one, and what serving it means.

A CRD that is created or updated is checked (names, scope, one storage version, a schema per
version, CEL rules that compile, a conversion webhook when the strategy asks for one), then
its served versions become resource types (discovery, routing) and its status says so:
`acceptedNames`, `storedVersions`, `NamesAccepted` and `Established` conditions, as the
apiextensions controllers set them a moment after the write.
"""
import re
from dataclasses import dataclass, field

import copy

from . import cel, errors
from .errors import INVALID, NOT_SUPPORTED, REQUIRED, FieldError
from .lifecycle import later
from .resources import ResourceType
from .schema import has_defaults, root_schema
from .store import meta, now

CRDS = ('apiextensions.k8s.io', 'customresourcedefinitions')

GROUP = 'apiextensions.k8s.io'
KIND = 'CustomResourceDefinition'
CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io'


@dataclass
class Version:
    name: str
    served: bool
    storage: bool
    schema: dict | None                 # openAPIV3Schema
    status: bool                        # has the status subresource
    scale: bool
    selectable_fields: list[str]
    defaults: bool                      # whether the schema has any default (skip when not)
    printer_columns: list[dict]         # additionalPrinterColumns, for kubectl get's Table


@dataclass
class Crd:
    name: str
    group: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: list[str]
    categories: list[str]
    versions: dict[str, Version]
    storage_version: str
    conversion: dict = field(default_factory=dict)
    terminating: bool = False

    def schema(self, version: str) -> dict | None:
        v = self.versions.get(version)
        return root_schema(v.schema) if v and v.schema else None


def check(crd: dict) -> list[FieldError]:
    """The API server's main refusals of a CRD (apiextensions validation), as field errors."""
    errs = []
    spec = crd.get('spec') or {}
    names = spec.get('names') or {}
    name = (crd.get('metadata') or {}).get('name', '')
    group, plural = spec.get('group', ''), names.get('plural', '')
    if not group:
        errs.append(FieldError(REQUIRED, 'spec.group'))
    if not plural:
        errs.append(FieldError(REQUIRED, 'spec.names.plural'))
    if not names.get('kind'):
        errs.append(FieldError(REQUIRED, 'spec.names.kind'))
    if group and plural and name != f'{plural}.{group}':
        errs.append(FieldError(INVALID, 'metadata.name', name, 'must be spec.names.plural+"."+spec.group'))
    if spec.get('scope') not in ('Namespaced', 'Cluster'):
        errs.append(FieldError(NOT_SUPPORTED, 'spec.scope', spec.get('scope', ''), 'supported values: "Cluster", "Namespaced"'))
    versions = spec.get('versions') or []
    if not versions:
        errs.append(FieldError(INVALID, 'spec.versions', versions, 'must have exactly one version marked as storage version'))
    elif sum(1 for v in versions if v.get('storage')) != 1:
        errs.append(FieldError(INVALID, 'spec.versions', [v.get('name') for v in versions],
                               'must have exactly one version marked as storage version'))
    for i, v in enumerate(versions):
        schema = ((v.get('schema') or {}).get('openAPIV3Schema'))
        where = f'spec.versions[{i}].schema.openAPIV3Schema'
        if not schema:
            errs.append(FieldError(REQUIRED, where, detail='schemas are required'))
            continue
        for path, rule in cel.rules_in(schema, where):
            problem = cel.compile_error(rule.get('rule', ''))
            if problem:
                errs.append(FieldError(INVALID, f'{path}.rule', rule.get('rule', ''), f'compilation failed: {problem}'))
    conversion = spec.get('conversion') or {}
    if conversion.get('strategy', 'None') == 'Webhook':
        hook = conversion.get('webhook') or {}
        if not (hook.get('clientConfig') or {}):
            errs.append(FieldError(REQUIRED, 'spec.conversion.webhook.clientConfig', detail='required when strategy is set to Webhook'))
        if not hook.get('conversionReviewVersions'):
            errs.append(FieldError(REQUIRED, 'spec.conversion.webhook.conversionReviewVersions', detail='must include at least one of v1, v1beta1'))
    elif conversion.get('strategy', 'None') != 'None':
        errs.append(FieldError(NOT_SUPPORTED, 'spec.conversion.strategy', conversion.get('strategy'), 'supported values: "None", "Webhook"'))
    return errs


def parse(crd: dict) -> Crd:
    spec = crd['spec']
    names = spec['names']
    versions = {}
    for v in spec['versions']:
        schema = (v.get('schema') or {}).get('openAPIV3Schema')
        subs = v.get('subresources') or {}
        versions[v['name']] = Version(
            name=v['name'], served=v.get('served', True), storage=bool(v.get('storage')),
            schema=schema, status='status' in subs, scale='scale' in subs,
            selectable_fields=[f['jsonPath'].lstrip('.') for f in v.get('selectableFields') or []],
            defaults=has_defaults(schema),
            printer_columns=list(v.get('additionalPrinterColumns') or []))
    storage = next(v.name for v in versions.values() if v.storage)
    return Crd(name=crd['metadata']['name'], group=spec['group'], kind=names['kind'],
               plural=names['plural'], singular=names.get('singular') or names['kind'].lower(),
               namespaced=spec.get('scope') == 'Namespaced',
               short_names=list(names.get('shortNames') or []),
               categories=list(names.get('categories') or []),
               versions=versions, storage_version=storage,
               conversion=spec.get('conversion') or {})


def resource_types(crd: Crd) -> list[ResourceType]:
    out = []
    for v in crd.versions.values():
        if not v.served:
            continue
        subs = (['status'] if v.status else []) + (['scale'] if v.scale else [])
        out.append(ResourceType(crd.group, v.name, crd.plural, crd.kind, crd.namespaced,
                                singular=crd.singular, short_names=crd.short_names,
                                categories=crd.categories, subresources=subs, crd=crd.name))
    return out


def version_priority(crd: dict) -> list[str]:
    """The CRD's versions, most preferred first: GA before beta before alpha, higher first
    (kube-aggregator's ordering), so that `kubectl get` uses the preferred one."""
    def rank(name):
        m = re.fullmatch(r'v(\d+)(?:(alpha|beta)(\d+))?', name)
        if not m:
            return (3, 0, 0, name)
        level = {None: 0, 'beta': 1, 'alpha': 2}[m.group(2)]
        return (level, -int(m.group(1)), -int(m.group(3) or 0), name)
    return sorted((v['name'] for v in crd['spec']['versions']), key=rank)


def established_status(crd: dict, old_status: dict | None) -> dict:
    """The status the apiextensions controllers give a served CRD."""
    spec = crd['spec']
    stored = list((old_status or {}).get('storedVersions') or [])
    storage = next(v['name'] for v in spec['versions'] if v.get('storage'))
    if storage not in stored:
        stored.append(storage)
    conditions = {c['type']: c for c in (old_status or {}).get('conditions') or []}
    for type_, reason, message in (('NamesAccepted', 'NoConflicts', 'no conflicts found'),
                                   ('Established', 'InitialNamesAccepted', 'the initial names have been accepted')):
        if conditions.get(type_, {}).get('status') != 'True':
            conditions[type_] = {'type': type_, 'status': 'True', 'reason': reason,
                                 'message': message, 'lastTransitionTime': now()}
    names = dict(spec['names'])
    names.setdefault('singular', names['kind'].lower())
    names.setdefault('listKind', names['kind'] + 'List')
    return {'acceptedNames': names, 'storedVersions': stored, 'conditions': list(conditions.values())}


def invalid(name: str, errs: list[FieldError]) -> errors.ApiError:
    return errors.invalid(KIND, GROUP, name, errs)


class Served:
    """The CRDs being served, parsed, by name and by (group, plural); what the apiextensions
    controllers do when one is written, starts terminating or goes."""

    def __init__(self, store, registry):
        self.store, self.registry = store, registry
        self._by_name: dict[str, Crd] = {}
        self._by_key: dict[tuple, str] = {}

    def get(self, name: str) -> Crd | None:
        return self._by_name.get(name)

    def for_key(self, key) -> Crd | None:
        name = self._by_key.get(key)
        return self._by_name.get(name) if name else None

    def of(self, rt: ResourceType) -> Crd | None:
        return self._by_name.get(rt.crd) if rt.crd else None

    def serve(self, obj: dict):
        """Serves a CRD just written: its types at once, its status a moment later."""
        crd = parse(obj)
        crd.terminating = bool(meta(obj).get('deletionTimestamp'))
        if crd.name in self._by_name:
            self.registry.remove_crd(crd.name)
        self._by_name[crd.name] = crd
        self._by_key[(crd.group, crd.plural)] = crd.name
        for t in resource_types(crd):
            self.registry.add(t)
        self.registry.set_version_order(crd.group, version_priority(obj))
        later(self._establish, crd.name)

    def _establish(self, name: str):
        obj = self.store.get(CRDS, '', name)
        if obj is None or meta(obj).get('deletionTimestamp'):
            return
        status = established_status(obj, obj.get('status'))
        if status != obj.get('status'):
            self.store.update(CRDS, {**copy.deepcopy(obj), 'status': status}, obj)

    def terminating(self, obj: dict):
        """A CRD being deleted: creates are refused, and its status says so."""
        crd = self._by_name.get(meta(obj)['name'])
        if crd is None:
            return
        crd.terminating = True
        new = copy.deepcopy(obj)
        conditions = [c for c in (new.get('status') or {}).get('conditions') or [] if c['type'] != 'Terminating']
        conditions.append({'type': 'Terminating', 'status': 'True', 'reason': 'InstanceDeletionInProgress',
                           'message': 'CustomResource deletion is in progress', 'lastTransitionTime': meta(obj)['deletionTimestamp']})
        new.setdefault('status', {})['conditions'] = conditions
        self.store.update(CRDS, new, obj)

    def removed(self, obj: dict):
        """A CRD gone: its types are no longer served, and its (empty) storage is dropped."""
        crd = self._by_name.pop(meta(obj)['name'], None)
        if crd is None:
            return
        self.registry.remove_crd(crd.name)
        self._by_key.pop((crd.group, crd.plural), None)
        self.store.drop_type((crd.group, crd.plural))
