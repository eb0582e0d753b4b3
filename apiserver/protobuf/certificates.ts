/** Field numbers of k8s.io/api/certificates/v1 generated.proto messages (kubectl certificate approve|deny). */
import { f, list, m, type Message } from './spec.ts';

export const CERTIFICATES: Readonly<Record<string, Message>> = {
  CertificateSigningRequest: { 1: f('metadata', m('ObjectMeta')), 2: f('spec', m('CertificateSigningRequestSpec')), 3: f('status', m('CertificateSigningRequestStatus')) },
  // `extra` (6, map<string, ExtraValue>) is left out: the apiserver sets it on create and never reads it from a body.
  CertificateSigningRequestSpec: {
    1: f('request', 'bytes'), 2: f('username', 'string'), 3: f('uid', 'string'), 4: f('groups', 'string', list), 5: f('usages', 'string', list),
    7: f('signerName', 'string'), 8: f('expirationSeconds', 'int32'),
  },
  CertificateSigningRequestStatus: { 1: f('conditions', m('CertificateSigningRequestCondition'), list), 2: f('certificate', 'bytes') },
  CertificateSigningRequestCondition: {
    1: f('type', 'string'), 2: f('reason', 'string'), 3: f('message', 'string'), 4: f('lastUpdateTime', 'time'), 5: f('lastTransitionTime', 'time'), 6: f('status', 'string'),
  },
};
