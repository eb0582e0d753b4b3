/**
 * The per-type rules of a Secret, after kube's ValidateSecret (pkg/apis/core/validation):
 * the keys each well-known type must carry (checked after stringData is folded into data)
 * and the annotation a service-account token names its account with.
 */
import type { Secret } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { StatusCause } from '../status.ts';

const SERVICE_ACCOUNT_NAME = 'kubernetes.io/service-account.name';

/** A data value that decodes to a JSON document (dockercfg, dockerconfigjson). */
const isJsonDocument = (base64: string | undefined): boolean => {
  if (base64 === undefined) return false;
  try {
    JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
    return true;
  } catch {
    return false;
  }
};

/** Checks the keys and annotations the Secret's `type` requires. */
export const checkSecretType = (causes: StatusCause[], secret: Secret): void => {
  const data = secret.data ?? {};
  const has = (key: string): boolean => Object.hasOwn(data, key);
  const type = secret.type ?? 'Opaque';
  switch (type) {
    case 'kubernetes.io/service-account-token':
      if (!secret.metadata.annotations?.[SERVICE_ACCOUNT_NAME]) causes.push(fieldErrors.required(`metadata.annotations[${SERVICE_ACCOUNT_NAME}]`));
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) causes.push(fieldErrors.required(`data[${key}]`));
      else if (!isJsonDocument(data[key])) causes.push(fieldErrors.invalid(`data[${key}]`, '<secret contents redacted>', 'must be valid JSON'));
      break;
    }
    case 'kubernetes.io/basic-auth':
      // Either may be empty, but one of the two keys must be there.
      if (!has('username') && !has('password')) {
        causes.push(fieldErrors.required('data[username]'), fieldErrors.required('data[password]'));
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (!data['ssh-privatekey']) causes.push(fieldErrors.required('data[ssh-privatekey]'));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) causes.push(fieldErrors.required('data[tls.crt]'));
      if (!has('tls.key')) causes.push(fieldErrors.required('data[tls.key]'));
      break;
    default:
      // Opaque, bootstrap tokens and any custom type: no keys required.
      break;
  }
};
