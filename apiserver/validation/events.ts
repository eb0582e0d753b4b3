/**
 * core/v1 Event validation, after kube's legacyValidateEvent (pkg/apis/core/validation/
 * events.go): an event lives in the namespace of the object it is about; an event about a
 * cluster-scoped object lives in `default` (or, with an eventTime, `kube-system`).
 */
import type { Event } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { StatusCause } from '../status.ts';

export const validateEvent = (causes: StatusCause[], event: Event): void => {
  const namespace = event.metadata.namespace ?? '';
  const involved = event.involvedObject.namespace ?? '';
  const mismatch = (): void => {
    causes.push(fieldErrors.invalid('involvedObject.namespace', involved, 'does not match event.namespace'));
  };
  if (!event.eventTime) {
    if (involved === '' ? namespace !== '' && namespace !== 'default' : namespace !== involved) mismatch();
  } else if (involved === '' && namespace !== 'default' && namespace !== 'kube-system') {
    mismatch();
  }
};
