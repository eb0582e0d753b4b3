/**
 * x509 client-certificate authentication, as kube-apiserver's `--client-ca-file`
 * (k8s.io/apiserver/pkg/authentication/request/x509): a client certificate that verifies
 * against the client CA and allows client authentication (extended key usage clientAuth)
 * stands for the user named by its subject's CommonName, in the groups of its
 * Organizations, as kubeadm's and kind's kubeconfigs use them. A certificate that does not
 * verify authenticates nobody (the request may still carry a token).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { AUTHENTICATED_GROUP, type UserInfo } from './auth.ts';

/** The extended key usage OID of TLS client authentication. */
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The user of the request's verified client certificate, if it has one. */
export const authenticateClientCertificate = (req: IncomingMessage): UserInfo | undefined => {
  const socket = req.socket as Partial<TLSSocket>;
  if (!socket.encrypted || !socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const certificate = socket.getPeerCertificate();
  if (!certificate || Object.keys(certificate).length === 0) return undefined;
  // kube's verifier asks for ExtKeyUsageClientAuth; a certificate without the extension allows any usage.
  const usages = certificate.ext_key_usage;
  if (usages !== undefined && usages.length > 0 && !usages.includes(CLIENT_AUTH)) return undefined;
  const [name] = asList(certificate.subject?.CN);
  if (name === undefined || name === '') return undefined;
  const groups = asList(certificate.subject?.O);
  return { name, uid: '', groups: groups.includes(AUTHENTICATED_GROUP) ? groups : [...groups, AUTHENTICATED_GROUP] };
};
