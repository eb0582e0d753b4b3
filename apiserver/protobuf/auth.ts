/** Field numbers of k8s.io/api authentication/v1 and authorization/v1 generated.proto messages. */
import { f, list, m, map, OBJECT, type Message } from './spec.ts';

export const AUTH: Readonly<Record<string, Message>> = {
  // authentication.k8s.io/v1 (kubectl create token).
  TokenRequest: OBJECT('TokenRequestSpec', 'TokenRequestStatus'),
  TokenRequestSpec: { 1: f('audiences', 'string', list), 3: f('boundObjectRef', m('BoundObjectReference')), 4: f('expirationSeconds', 'int64') },
  BoundObjectReference: { 1: f('kind', 'string'), 2: f('apiVersion', 'string'), 3: f('name', 'string'), 4: f('uid', 'string') },
  TokenRequestStatus: { 1: f('token', 'string'), 2: f('expirationTimestamp', 'time') },

  // authorization.k8s.io/v1 and authentication.k8s.io/v1 reviews (kubectl auth can-i / whoami send them).
  SelfSubjectAccessReview: OBJECT('SelfSubjectAccessReviewSpec', 'SubjectAccessReviewStatus'),
  SelfSubjectAccessReviewSpec: { 1: f('resourceAttributes', m('ResourceAttributes')), 2: f('nonResourceAttributes', m('NonResourceAttributes')) },
  SubjectAccessReview: OBJECT('SubjectAccessReviewSpec', 'SubjectAccessReviewStatus'),
  LocalSubjectAccessReview: OBJECT('SubjectAccessReviewSpec', 'SubjectAccessReviewStatus'),
  SubjectAccessReviewSpec: {
    1: f('resourceAttributes', m('ResourceAttributes')), 2: f('nonResourceAttributes', m('NonResourceAttributes')), 3: f('user', 'string'),
    4: f('groups', 'string', list), 5: f('extra', 'opaque', map), 6: f('uid', 'string'),
  },
  ResourceAttributes: {
    1: f('namespace', 'string'), 2: f('verb', 'string'), 3: f('group', 'string'), 4: f('version', 'string'), 5: f('resource', 'string'),
    6: f('subresource', 'string'), 7: f('name', 'string'), 8: f('fieldSelector', 'opaque'), 9: f('labelSelector', 'opaque'),
  },
  NonResourceAttributes: { 1: f('path', 'string'), 2: f('verb', 'string') },
  SubjectAccessReviewStatus: { 1: f('allowed', 'bool'), 2: f('reason', 'string'), 3: f('evaluationError', 'string'), 4: f('denied', 'bool') },
  SelfSubjectRulesReview: OBJECT('SelfSubjectRulesReviewSpec', 'SubjectRulesReviewStatus'),
  SelfSubjectRulesReviewSpec: { 1: f('namespace', 'string') },
  SubjectRulesReviewStatus: { 3: f('incomplete', 'bool'), 4: f('evaluationError', 'string') },
  SelfSubjectReview: { 1: f('metadata', m('ObjectMeta')), 2: f('status', 'opaque') },
  TokenReview: OBJECT('TokenReviewSpec', 'TokenReviewStatus'),
  TokenReviewSpec: { 1: f('token', 'string'), 2: f('audiences', 'string', list) },
  TokenReviewStatus: {},
};
