/**
 * LimitRange defaults and validation, as kube 1.32's SetDefaults_LimitRangeItem
 * (pkg/apis/core/v1/defaults.go) and ValidateLimitRange (pkg/apis/core/validation): a
 * Container item's `default` falls back to its `max`, its `defaultRequest` to its `default`,
 * then to its `min`; then per resource min <= defaultRequest <= default <= max, a ratio of at
 * least 1 and at most max/min, and no Pod-level defaults. Messages and field paths are kube's.
 */
import type { ObjectOfKind } from '../../schemas/index.ts';
import { compareQuantities, parseQuantity, quantityMilliValue, quantityValue, type Quantity } from '../../schemas/quantity.ts';
import { fieldErrors } from '../errors.ts';
import { qualifiedNameProblem } from './names.ts';
import type { Causes } from './objects.ts';

type LimitRange = ObjectOfKind<'LimitRange'>;
type LimitRangeItem = NonNullable<LimitRange['spec']>['limits'][number];

/** resource.MaxMilliValue. */
const MAX_MILLI_VALUE = 9223372036854775n;

/** kube's SetDefaults_LimitRangeItem, for every item of `limitRange`. */
export const defaultLimitRange = (limitRange: LimitRange): void => {
  for (const item of limitRange.spec?.limits ?? []) {
    if (item.type !== 'Container') continue;
    const defaults: Record<string, string> = { ...item.default };
    const requests: Record<string, string> = { ...item.defaultRequest };
    for (const [name, value] of Object.entries(item.max ?? {})) if (!Object.hasOwn(defaults, name)) defaults[name] = value;
    for (const [name, value] of Object.entries(defaults)) if (!Object.hasOwn(requests, name)) requests[name] = value;
    for (const [name, value] of Object.entries(item.min ?? {})) if (!Object.hasOwn(requests, name)) requests[name] = value;
    item.default = defaults;
    item.defaultRequest = requests;
  }
};

/** helper.IsStandardContainerResourceName. */
const isStandardContainerResource = (name: string): boolean => name === 'cpu' || name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-');

/** helper.IsOvercommitAllowed: native resources other than huge pages. */
const overcommitAllowed = (name: string): boolean => (!name.includes('/') || name.includes('kubernetes.io/')) && !name.startsWith('hugepages-');

/** validateLimitRangeResourceName: a qualified name; for Container and Pod items an un-prefixed one must be a container resource. */
const checkResourceName = (causes: Causes, type: string, name: string, field: string): void => {
  const problem = qualifiedNameProblem(name);
  if (problem) causes.push(fieldErrors.invalid(field, name, problem));
  if ((type === 'Container' || type === 'Pod') && !name.includes('/') && !isStandardContainerResource(name)) {
    causes.push(fieldErrors.invalid(field, name, 'must be a standard resource for containers'));
  }
};

const collect = (causes: Causes, item: LimitRangeItem, list: Record<string, string> | undefined, field: string, keys: Set<string>): Map<string, Quantity> => {
  const parsed = new Map<string, Quantity>();
  for (const name of Object.keys(list ?? {}).sort()) {
    checkResourceName(causes, item.type, name, `${field}[${name}]`);
    keys.add(name);
    parsed.set(name, parseQuantity(list![name]!));
  }
  return parsed;
};

/** `%f`: six decimals. */
const goFloat = (value: number): string => (Number.isFinite(value) ? value.toFixed(6) : value > 0 ? '+Inf' : 'NaN');

const checkItem = (causes: Causes, item: LimitRangeItem, path: string): void => {
  const keys = new Set<string>();
  const max = collect(causes, item, item.max, `${path}.max`, keys);
  const min = collect(causes, item, item.min, `${path}.min`, keys);
  let defaults = new Map<string, Quantity>();
  let defaultRequests = new Map<string, Quantity>();
  if (item.type === 'Pod') {
    if (Object.keys(item.default ?? {}).length > 0) causes.push(fieldErrors.forbidden(`${path}.default`, "may not be specified when `type` is 'Pod'"));
    if (Object.keys(item.defaultRequest ?? {}).length > 0) causes.push(fieldErrors.forbidden(`${path}.defaultRequest`, "may not be specified when `type` is 'Pod'"));
  } else {
    defaults = collect(causes, item, item.default, `${path}.default`, keys);
    defaultRequests = collect(causes, item, item.defaultRequest, `${path}.defaultRequest`, keys);
  }
  if (item.type === 'PersistentVolumeClaim' && !Object.hasOwn(item.min ?? {}, 'storage') && !Object.hasOwn(item.max ?? {}, 'storage')) {
    causes.push(fieldErrors.required(`${path}.limits`, 'either minimum or maximum storage value is required, but neither was provided'));
  }
  const ratios = collect(causes, item, item.maxLimitRequestRatio, `${path}.maxLimitRequestRatio`, keys);
  for (const name of [...keys].sort()) {
    const [lo, hi, dflt, request, ratio] = [min.get(name), max.get(name), defaults.get(name), defaultRequests.get(name), ratios.get(name)];
    if (lo && hi && compareQuantities(lo, hi) > 0) {
      causes.push(fieldErrors.invalid(`${path}.min[${name}]`, lo.serialized, `min value ${lo.serialized} is greater than max value ${hi.serialized}`));
    }
    if (request && lo && compareQuantities(lo, request) > 0) {
      causes.push(fieldErrors.invalid(`${path}.defaultRequest[${name}]`, request.serialized, `min value ${lo.serialized} is greater than default request value ${request.serialized}`));
    }
    if (request && hi && compareQuantities(request, hi) > 0) {
      causes.push(fieldErrors.invalid(`${path}.defaultRequest[${name}]`, request.serialized, `default request value ${request.serialized} is greater than max value ${hi.serialized}`));
    }
    if (request && dflt && compareQuantities(request, dflt) > 0) {
      causes.push(fieldErrors.invalid(`${path}.defaultRequest[${name}]`, request.serialized, `default request value ${request.serialized} is greater than default limit value ${dflt.serialized}`));
    }
    if (dflt && lo && compareQuantities(lo, dflt) > 0) {
      causes.push(fieldErrors.invalid(`${path}.default[${name}]`, lo.serialized, `min value ${lo.serialized} is greater than default value ${dflt.serialized}`));
    }
    if (dflt && hi && compareQuantities(dflt, hi) > 0) {
      causes.push(fieldErrors.invalid(`${path}.default[${name}]`, hi.serialized, `default value ${dflt.serialized} is greater than max value ${hi.serialized}`));
    }
    if (ratio && compareQuantities(ratio, { mantissa: 1n, exponent: 0 }) < 0) {
      causes.push(fieldErrors.invalid(`${path}.maxLimitRequestRatio[${name}]`, ratio.serialized, `ratio ${ratio.serialized} is less than 1`));
    }
    if (ratio && lo && hi) {
      const [ratioUnits, loUnits, hiUnits] = [quantityValue(ratio), quantityValue(lo), quantityValue(hi)];
      const milli = ratioUnits < MAX_MILLI_VALUE && loUnits < MAX_MILLI_VALUE && hiUnits < MAX_MILLI_VALUE;
      const ratioValue = milli ? Number(quantityMilliValue(ratio)) / 1000 : Number(ratioUnits);
      const allowed = milli ? Number(quantityMilliValue(hi)) / Number(quantityMilliValue(lo)) : Number(hiUnits) / Number(loUnits);
      if (ratioValue > allowed) {
        causes.push(fieldErrors.invalid(`${path}.maxLimitRequestRatio[${name}]`, ratio.serialized, `ratio ${ratio.serialized} is greater than max/min = ${goFloat(allowed)}`));
      }
    }
    if (!overcommitAllowed(name) && dflt && request && compareQuantities(dflt, request) !== 0) {
      causes.push(
        fieldErrors.invalid(`${path}.defaultRequest[${name}]`, request.serialized, `default value ${dflt.serialized} must equal to defaultRequest value ${request.serialized} in ${name}`),
      );
    }
  }
};

/** kube's ValidateLimitRange (the spec; metadata is validated for every kind). */
export const validateLimitRange = (causes: Causes, limitRange: LimitRange): void => {
  const types = new Set<string>();
  (limitRange.spec?.limits ?? []).forEach((item, i) => {
    const path = `spec.limits[${i}]`;
    const problem = qualifiedNameProblem(item.type);
    if (problem) causes.push(fieldErrors.invalid(`${path}.type`, item.type, problem));
    if (types.has(item.type)) causes.push(fieldErrors.duplicate(`${path}.type`, item.type));
    types.add(item.type);
    checkItem(causes, item, path);
  });
};
