/**
 * Certificates for HTTPS: the `kubernetes.io/tls` Secret an owned Ingress's `spec.tls`
 * names for the SNI host a client asks for, turned into a TLS secure context (cached per
 * Secret version, so a renewed certificate is served from the next handshake on).
 */
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { View } from '../../projections/index.ts';
import type { Secret } from '../../schemas/index.ts';
import type { TlsRule } from './rules.ts';

/** The Secret type that holds a certificate and its key (`tls.crt`, `tls.key`, base64 in `data`). */
export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

/** A cache of secure contexts keyed by Secret and resourceVersion. */
export interface CertificateStore {
  /** The context of `rule`'s Secret, or undefined (logged) when it is missing, of another type or unusable. */
  contextFor(view: View, rule: TlsRule): SecureContext | undefined;
}

/** A store that keeps the contexts of the Secret versions it was last asked for. */
export const createCertificateStore = (logger: Logger): CertificateStore => {
  const contexts = new Map<string, { version: string; context: SecureContext | undefined }>();
  return {
    contextFor: (view, rule) => {
      const key = `${rule.namespace}/${rule.secretName}`;
      const secret = view.get(`Secret/${key}`) as Secret | undefined;
      if (!secret) {
        logger.warn({ secret: key }, 'the TLS Secret an Ingress names does not exist; create it (type kubernetes.io/tls)');
        return undefined;
      }
      const version = secret.metadata.resourceVersion ?? '';
      const cached = contexts.get(key);
      if (cached && cached.version === version) return cached.context;
      let context: SecureContext | undefined;
      const cert = secret.data?.['tls.crt'];
      const privateKey = secret.data?.['tls.key'];
      if (secret.type !== TLS_SECRET_TYPE || !cert || !privateKey) {
        logger.warn({ secret: key, type: secret.type }, 'the TLS Secret an Ingress names is not of type kubernetes.io/tls with tls.crt and tls.key');
      } else {
        try {
          context = createSecureContext({ cert: Buffer.from(cert, 'base64'), key: Buffer.from(privateKey, 'base64') });
        } catch (error) {
          logger.warn({ secret: key, err: (error as Error).message }, 'the TLS Secret an Ingress names holds no usable certificate and key');
        }
      }
      contexts.set(key, { version, context });
      return context;
    },
  };
};
