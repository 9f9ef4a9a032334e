"""Authentication of the emulator's own requests, and the review APIs that a manager's
authenticated metrics endpoint calls: TokenReview (authentication.k8s.io/v1) and
SubjectAccessReview (authorization.k8s.io/v1), answered from a table given at start.

The table (YAML or JSON):

    users:                      # bearer token -> identity
    - token: reader-token
      username: system:serviceaccount:monitoring:prometheus
      uid: "42"                 # optional
      groups: [system:serviceaccounts]
    rules:                      # who may do what (allow rules only, as RBAC)
    - users: [system:serviceaccount:monitoring:prometheus]   # and/or groups: [...]
      verbs: [get]
      nonResourceURLs: [/metrics]                           # a trailing * is a prefix
    - groups: [system:serviceaccounts]
      verbs: [get, list]
      apiGroups: [""]
      resources: [pods]                                     # "*" and "pods/log" too
      namespaces: [default]                                 # optional: all when absent

Members of `system:masters` may do anything, as on a real cluster; the kubeconfig that the
emulator writes uses such an admin token. Requests with an unknown token are refused (401);
requests without one are anonymous and may only read /version and the health endpoints.
The emulator does not enforce RBAC on its own requests: every authenticated user may do
anything through it.
"""
import secrets
from dataclasses import dataclass, field

import yaml

ADMIN_GROUPS = ['system:masters', 'system:authenticated']
ANONYMOUS_PATHS = {'/version', '/healthz', '/livez', '/readyz'}


@dataclass
class User:
    username: str
    uid: str = ''
    groups: list[str] = field(default_factory=list)

    def info(self) -> dict:
        out = {'username': self.username, 'groups': self.groups}
        if self.uid:
            out['uid'] = self.uid
        return out


class Auth:
    def __init__(self, table: dict | None = None):
        table = table or {}
        self.tokens: dict[str, User] = {}
        for u in table.get('users') or []:
            groups = list(u.get('groups') or [])
            if 'system:authenticated' not in groups:
                groups.append('system:authenticated')
            self.tokens[u['token']] = User(u['username'], str(u.get('uid', '')), groups)
        self.rules: list[dict] = list(table.get('rules') or [])
        self.admin_token = secrets.token_urlsafe(24)
        self.tokens[self.admin_token] = User('kubernetes-admin', 'admin', list(ADMIN_GROUPS))

    @classmethod
    def from_file(cls, path: str | None) -> 'Auth':
        if not path:
            return cls()
        with open(path) as f:
            return cls(yaml.safe_load(f))

    def authenticate(self, authorization: str | None) -> User | None | bool:
        """The user of a request's Authorization header; None if anonymous; False if the
        token is unknown."""
        if not authorization:
            return None
        scheme, _, token = authorization.partition(' ')
        if scheme.lower() != 'bearer':
            return False
        return self.tokens.get(token.strip(), False)

    # ---- TokenReview ----------------------------------------------------------------------

    def token_review(self, review: dict) -> dict:
        spec = review.get('spec') or {}
        user = self.tokens.get(spec.get('token') or '')
        status = {'authenticated': user is not None, 'user': user.info() if user else {}}
        if user is not None:
            status['audiences'] = spec.get('audiences') or ['https://kubernetes.default.svc']
        else:
            status['error'] = 'invalid bearer token'
        return {**review, 'status': status}

    # ---- SubjectAccessReview --------------------------------------------------------------

    def allowed(self, user: str, groups: list[str], attrs: dict, non_resource: bool) -> str | None:
        """The reason a request is allowed, or None if no rule allows it."""
        if 'system:masters' in groups:
            return 'allowed: the user is in the system:masters group'
        for i, rule in enumerate(self.rules):
            if user not in (rule.get('users') or []) and not set(groups) & set(rule.get('groups') or []):
                continue
            if not _any(rule.get('verbs'), attrs.get('verb', '')):
                continue
            if non_resource:
                if _path_matches(rule.get('nonResourceURLs') or [], attrs.get('path', '')):
                    return f'allowed by rule {i} of the emulator\'s table'
                continue
            if rule.get('nonResourceURLs') and not rule.get('resources'):
                continue
            resource = attrs.get('resource', '')
            if attrs.get('subresource'):
                resource += '/' + attrs['subresource']
            if (_any(rule.get('apiGroups'), attrs.get('group', ''))
                    and _any(rule.get('resources'), resource)
                    and (not rule.get('resourceNames') or attrs.get('name') in rule['resourceNames'])
                    and (not rule.get('namespaces') or attrs.get('namespace') in rule['namespaces'])):
                return f'allowed by rule {i} of the emulator\'s table'
        return None

    def subject_access_review(self, review: dict, requester: User | None = None) -> dict:
        """SubjectAccessReview; with `requester`, a SelfSubjectAccessReview of that user."""
        spec = review.get('spec') or {}
        if requester is not None:
            user, groups = requester.username, requester.groups
        else:
            user, groups = spec.get('user', ''), list(spec.get('groups') or [])
        if review.get('metadata', {}).get('namespace') and spec.get('resourceAttributes'):
            spec['resourceAttributes'].setdefault('namespace', review['metadata']['namespace'])
        non_resource = 'nonResourceAttributes' in spec
        attrs = spec.get('nonResourceAttributes' if non_resource else 'resourceAttributes') or {}
        reason = self.allowed(user, groups, attrs, non_resource)
        status = {'allowed': reason is not None}
        if reason:
            status['reason'] = reason
        return {**review, 'status': status}


def _any(allowed: list | None, value: str) -> bool:
    allowed = allowed or []
    return '*' in allowed or value in allowed


def _path_matches(patterns: list[str], path: str) -> bool:
    for p in patterns:
        if p == '*' or p == path or (p.endswith('*') and path.startswith(p[:-1])):
            return True
    return False
