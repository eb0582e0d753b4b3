/**
 * Event validation, as kube's pkg/apis/core/validation/events.go: every Event passes the
 * legacy rules (namespaces agree; an Event with `eventTime` names its reporting controller,
 * instance, action and reason within kube's length limits); one created or updated through
 * events.k8s.io/v1 also passes the strict rules of that API, which core/v1 skips for old
 * clients. Field paths are the stored (core) ones, as kube reports them.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import type { ObjectOfKind } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { ResourceInfo } from '../resources.ts';
import { dns1123SubdomainProblem, qualifiedNameProblem } from './names.ts';
import type { Causes } from './objects.ts';

type Event = ObjectOfKind<'Event'>;

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

const unset = (value: unknown): boolean => value === undefined || value === null || value === '';

const legacy = (causes: Causes, event: Event): void => {
  const namespace = event.metadata.namespace ?? '';
  const involvedNamespace = event.involvedObject.namespace ?? '';
  const mismatch = () => causes.push(fieldErrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace'));
  if (unset(event.eventTime)) {
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) mismatch();
  } else {
    if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') mismatch();
    const controller = event.reportingComponent ?? '';
    if (controller === '') causes.push(fieldErrors.required('reportingController'));
    else {
      const problem = qualifiedNameProblem(controller);
      if (problem) causes.push(fieldErrors.invalid('reportingController', controller, problem));
    }
    const limited = (field: string, value: string | undefined, limit: number, required: boolean): void => {
      if (required && (value ?? '') === '') causes.push(fieldErrors.required(field));
      if ((value ?? '').length > limit) causes.push(fieldErrors.invalid(field, '', `can have at most ${limit} characters`));
    };
    limited('reportingInstance', event.reportingInstance, REPORTING_INSTANCE_LIMIT, true);
    limited('action', event.action, ACTION_LIMIT, true);
    limited('reason', event.reason, REASON_LIMIT, true);
    limited('message', event.message, NOTE_LIMIT, false);
  }
  const problem = dns1123SubdomainProblem(namespace);
  if (problem) causes.push(fieldErrors.invalid('namespace', namespace, problem));
};

const series = (causes: Causes, event: Event): void => {
  if (!event.series) return;
  if ((event.series.count ?? 0) < 2) causes.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
  if (unset(event.series.lastObservedTime)) causes.push(fieldErrors.required('series.lastObservedTime'));
};

/** The fields an events.k8s.io/v1 update may not change, by their stored names. */
const IMMUTABLE = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
] as const;

/** kube's field path of a stored Event field (`reportingComponent` is `ReportingController` inside kube). */
const pathOf = (field: (typeof IMMUTABLE)[number]): string => (field === 'reportingComponent' ? 'reportingController' : field);

const strictCreate = (causes: Causes, event: Event): void => {
  series(causes, event);
  if (unset(event.eventTime)) causes.push(fieldErrors.required('eventTime'));
  if (event.type !== 'Normal' && event.type !== 'Warning') causes.push(fieldErrors.invalid('type', '', `has invalid value: ${event.type ?? ''}`));
  if (!unset(event.firstTimestamp)) causes.push(fieldErrors.invalid('firstTimestamp', '', 'needs to be unset'));
  if (!unset(event.lastTimestamp)) causes.push(fieldErrors.invalid('lastTimestamp', '', 'needs to be unset'));
  if ((event.count ?? 0) !== 0) causes.push(fieldErrors.invalid('count', '', 'needs to be unset'));
  if (!unset(event.source?.component) || !unset(event.source?.host)) causes.push(fieldErrors.invalid('source', '', 'needs to be unset'));
};

const strictUpdate = (causes: Causes, event: Event, old: Event): void => {
  if (!sameJson(event.series ?? null, old.series ?? null)) series(causes, event);
  const record = event as unknown as Record<string, unknown>;
  const before = old as unknown as Record<string, unknown>;
  for (const field of IMMUTABLE) {
    if (!sameJson(record[field] ?? null, before[field] ?? null)) causes.push(fieldErrors.invalid(pathOf(field), record[field] ?? null, 'field is immutable'));
  }
};

/** ValidateEventCreate / ValidateEventUpdate with the request's group: strict for events.k8s.io. */
export const validateEvent = (causes: Causes, event: Event, old: Event | undefined, resource: ResourceInfo): void => {
  legacy(causes, event);
  if (resource.group !== 'events.k8s.io') return;
  if (old) strictUpdate(causes, event, old);
  else strictCreate(causes, event);
};
