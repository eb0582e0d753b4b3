/**
 * Semantic validation of objects, per kind, with kube-apiserver's field paths and
 * messages (`spec.containers[0].image: Required value`). The schema check
 * (`shape.ts`) runs first, so types are right by the time these run.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import { parseQuantity, scaleForResource } from '../../projections/quantity.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type {
  Container,
  Deployment,
  Endpoints,
  KubeObject,
  LabelSelector,
  Namespace,
  Node,
  ObjectMeta,
  Pod,
  PodSpec,
  PodTemplateSpec,
  Probe,
  ReplicaSet,
  Service,
} from '../../schemas/index.ts';
import { assertNever } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { ResourceInfo } from '../resources.ts';
import type { StatusCause } from '../status.ts';
import {
  dns1035LabelProblem,
  dns1123LabelProblem,
  dns1123SubdomainProblem,
  envVarNameProblem,
  ipProblem,
  labelValueProblem,
  pathSegmentProblem,
  portNameProblem,
  qualifiedNameProblem,
} from './names.ts';
import { checkPodVolumes } from './volumes.ts';

export type Causes = StatusCause[];

const MAX_ANNOTATIONS_BYTES = 256 * 1024;
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

export const checkPort = (causes: Causes, field: string, port: number, min = 1): void => {
  if (port < min || port > 65535) causes.push(fieldErrors.invalid(field, port, `must be between ${min} and 65535, inclusive`));
};

export const checkNonNegative = (causes: Causes, field: string, value: number | undefined): void => {
  if (value !== undefined && value < 0) causes.push(fieldErrors.invalid(field, value, 'must be greater than or equal to 0'));
};

export const checkEnum = (causes: Causes, field: string, value: string | undefined, supported: readonly string[]): void => {
  if (value !== undefined && !supported.includes(value)) causes.push(fieldErrors.notSupported(field, value, supported));
};

export const checkLabels = (causes: Causes, field: string, labels: Readonly<Record<string, string>> | undefined): void => {
  for (const [key, value] of Object.entries(labels ?? {})) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) causes.push(fieldErrors.invalid(field, key, keyProblem));
    const valueProblem = labelValueProblem(value);
    if (valueProblem) causes.push(fieldErrors.invalid(`${field}[${key}]`, value, valueProblem));
  }
};

/** The name rule of a resource, from its kind's descriptor. */
const nameProblem = (resource: ResourceInfo, name: string): string | undefined => {
  const format = resource.nameFormat;
  switch (format) {
    case 'label':
      return dns1123LabelProblem(name);
    case 'dns1035Label':
      return dns1035LabelProblem(name);
    case 'subdomain':
      return dns1123SubdomainProblem(name);
    case 'pathSegment':
      return pathSegmentProblem(name);
    default:
      return assertNever(format, 'name format');
  }
};

/** Validates `metadata` of an object of `resource`. */
export const validateMetadata = (resource: ResourceInfo, metadata: ObjectMeta): Causes => {
  const causes: Causes = [];
  if (!metadata.name) {
    causes.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  } else {
    const problem = nameProblem(resource, metadata.name);
    if (problem) causes.push(fieldErrors.invalid('metadata.name', metadata.name, problem));
  }
  if (resource.namespaced) {
    if (!metadata.namespace) causes.push(fieldErrors.required('metadata.namespace'));
    else {
      const problem = dns1123LabelProblem(metadata.namespace);
      if (problem) causes.push(fieldErrors.invalid('metadata.namespace', metadata.namespace, problem));
    }
  }
  checkLabels(causes, 'metadata.labels', metadata.labels);
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(metadata.annotations ?? {})) {
    const problem = qualifiedNameProblem(key.toLowerCase());
    if (problem) causes.push(fieldErrors.invalid('metadata.annotations', key, problem));
    annotationBytes += key.length + value.length;
  }
  if (annotationBytes > MAX_ANNOTATIONS_BYTES) causes.push(fieldErrors.tooLong('metadata.annotations', MAX_ANNOTATIONS_BYTES));
  (metadata.finalizers ?? []).forEach((finalizer, i) => {
    const problem = qualifiedNameProblem(finalizer);
    if (problem) causes.push(fieldErrors.invalid(`metadata.finalizers[${i}]`, finalizer, problem));
  });
  (metadata.ownerReferences ?? []).forEach((ref, i) => {
    const field = `metadata.ownerReferences[${i}]`;
    if (!ref.apiVersion) causes.push(fieldErrors.invalid(`${field}.apiVersion`, ref.apiVersion, 'version must not be empty'));
    if (!ref.kind) causes.push(fieldErrors.invalid(`${field}.kind`, ref.kind, 'kind must not be empty'));
    if (!ref.name) causes.push(fieldErrors.invalid(`${field}.name`, ref.name, 'name must not be empty'));
    if (!ref.uid) causes.push(fieldErrors.invalid(`${field}.uid`, ref.uid, 'uid must not be empty'));
  });
  if ((metadata.ownerReferences ?? []).filter((r) => r.controller).length > 1) {
    causes.push(fieldErrors.invalid('metadata.ownerReferences', 'controller', 'Only one reference can have Controller set to true'));
  }
  return causes;
};

const checkResources = (causes: Causes, field: string, container: Container): void => {
  const parsed: Record<'requests' | 'limits', Map<string, number>> = { requests: new Map(), limits: new Map() };
  for (const part of ['requests', 'limits'] as const) {
    for (const [name, quantity] of Object.entries(container.resources?.[part] ?? {})) {
      const path = `${field}.resources.${part}[${name}]`;
      const nameProblemText = qualifiedNameProblem(name);
      if (nameProblemText) {
        causes.push(fieldErrors.invalid(path, name, nameProblemText));
        continue;
      }
      const result = parseQuantity(quantity, scaleForResource(name));
      if (result.type === 'invalid') {
        causes.push(fieldErrors.invalid(path, quantity, 'quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\''));
      } else if (result.value < 0) {
        causes.push(fieldErrors.invalid(path, quantity, 'must be greater than or equal to 0'));
      } else {
        parsed[part].set(name, result.value);
      }
    }
  }
  for (const [name, request] of parsed.requests) {
    const limit = parsed.limits.get(name);
    if (limit !== undefined && request > limit) {
      causes.push(fieldErrors.invalid(`${field}.resources.requests`, container.resources?.requests?.[name], `must be less than or equal to ${name} limit of ${container.resources?.limits?.[name]}`));
    }
  }
};

const checkNamedPort = (causes: Causes, field: string, port: number | string): void => {
  if (typeof port === 'number') checkPort(causes, field, port);
  else {
    const problem = portNameProblem(port);
    if (problem) causes.push(fieldErrors.invalid(field, port, problem));
  }
};

const checkProbe = (causes: Causes, field: string, probe: Probe | undefined): void => {
  if (!probe) return;
  const handlers = [probe.exec, probe.httpGet, probe.tcpSocket, probe.grpc].filter((h) => h !== undefined);
  if (handlers.length === 0) causes.push(fieldErrors.required(field, 'must specify a handler type'));
  if (handlers.length > 1) causes.push(fieldErrors.forbidden(field, 'may not specify more than 1 handler type'));
  if (probe.httpGet) checkNamedPort(causes, `${field}.httpGet.port`, probe.httpGet.port);
  if (probe.tcpSocket) checkNamedPort(causes, `${field}.tcpSocket.port`, probe.tcpSocket.port);
  if (probe.grpc) checkPort(causes, `${field}.grpc.port`, probe.grpc.port);
  if (probe.exec && (probe.exec.command ?? []).length === 0) causes.push(fieldErrors.required(`${field}.exec.command`));
  checkNonNegative(causes, `${field}.initialDelaySeconds`, probe.initialDelaySeconds);
  for (const key of ['periodSeconds', 'timeoutSeconds', 'successThreshold', 'failureThreshold'] as const) {
    const value = probe[key];
    if (value !== undefined && value < 1) causes.push(fieldErrors.invalid(`${field}.${key}`, value, 'must be greater than or equal to 1'));
  }
};

const checkContainer = (causes: Causes, field: string, container: Container): void => {
  if (!container.name) causes.push(fieldErrors.required(`${field}.name`));
  else {
    const problem = dns1123LabelProblem(container.name);
    if (problem) causes.push(fieldErrors.invalid(`${field}.name`, container.name, problem));
  }
  if (!container.image || container.image.trim() === '') causes.push(fieldErrors.required(`${field}.image`));
  checkEnum(causes, `${field}.imagePullPolicy`, container.imagePullPolicy, ['Always', 'IfNotPresent', 'Never']);
  const portNames = new Set<string>();
  (container.ports ?? []).forEach((port, i) => {
    const portField = `${field}.ports[${i}]`;
    checkPort(causes, `${portField}.containerPort`, port.containerPort);
    if (port.hostPort !== undefined && port.hostPort !== 0) checkPort(causes, `${portField}.hostPort`, port.hostPort);
    checkEnum(causes, `${portField}.protocol`, port.protocol, PROTOCOLS);
    if (port.name !== undefined) {
      const problem = portNameProblem(port.name);
      if (problem) causes.push(fieldErrors.invalid(`${portField}.name`, port.name, problem));
      else if (portNames.has(port.name)) causes.push(fieldErrors.duplicate(`${portField}.name`, port.name));
      portNames.add(port.name);
    }
  });
  (container.env ?? []).forEach((env, i) => {
    if (!env.name) causes.push(fieldErrors.required(`${field}.env[${i}].name`));
    else {
      const problem = envVarNameProblem(env.name);
      if (problem) causes.push(fieldErrors.invalid(`${field}.env[${i}].name`, env.name, problem));
    }
  });
  checkResources(causes, field, container);
  checkProbe(causes, `${field}.livenessProbe`, container.livenessProbe);
  checkProbe(causes, `${field}.readinessProbe`, container.readinessProbe);
  checkProbe(causes, `${field}.startupProbe`, container.startupProbe);
};

/**
 * kube's container `restartPolicy` rules (1.32, SidecarContainers): only an init container may
 * set it, and only to Always (a sidecar); a regular init container runs to completion, so it
 * may have no probes and no lifecycle hooks.
 */
const checkContainerRestartPolicies = (causes: Causes, field: string, spec: PodSpec): void => {
  (spec.initContainers ?? []).forEach((container, i) => {
    const at = `${field}.initContainers[${i}]`;
    if (container.restartPolicy !== undefined && container.restartPolicy !== 'Always') causes.push(fieldErrors.notSupported(`${at}.restartPolicy`, container.restartPolicy, ['Always']));
    if (container.restartPolicy === 'Always') return;
    for (const probe of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
      if (container[probe] !== undefined) causes.push(fieldErrors.forbidden(`${at}.${probe}`, 'may not be set for init containers without restartPolicy=Always'));
    }
  });
  spec.containers.forEach((container, i) => {
    if (container.restartPolicy !== undefined) causes.push(fieldErrors.forbidden(`${field}.containers[${i}].restartPolicy`, 'may not be set for non-init containers'));
  });
};

/**
 * Validates a PodSpec found at `field` (`spec` or `spec.template.spec`). `volumes: false`
 * skips the volume and mount checks: kube does not run them on a StatefulSet's template,
 * whose containers mount the claims of its volumeClaimTemplates.
 */
export const validatePodSpec = (field: string, spec: PodSpec, options: { volumes?: boolean } = {}): Causes => {
  const causes: Causes = [];
  if (options.volumes !== false) checkPodVolumes(causes, field, spec);
  if (spec.containers.length === 0) causes.push(fieldErrors.required(`${field}.containers`));
  const names = new Set<string>();
  const each = (list: readonly Container[] | undefined, listField: string): void =>
    (list ?? []).forEach((container, i) => {
      checkContainer(causes, `${listField}[${i}]`, container);
      if (container.name && names.has(container.name)) causes.push(fieldErrors.duplicate(`${listField}[${i}].name`, container.name));
      names.add(container.name);
    });
  each(spec.initContainers, `${field}.initContainers`);
  each(spec.containers, `${field}.containers`);
  checkContainerRestartPolicies(causes, field, spec);
  checkEnum(causes, `${field}.restartPolicy`, spec.restartPolicy, ['Always', 'OnFailure', 'Never']);
  checkNonNegative(causes, `${field}.terminationGracePeriodSeconds`, spec.terminationGracePeriodSeconds);
  if (spec.nodeName) {
    const problem = dns1123SubdomainProblem(spec.nodeName);
    if (problem) causes.push(fieldErrors.invalid(`${field}.nodeName`, spec.nodeName, problem));
  }
  checkLabels(causes, `${field}.nodeSelector`, spec.nodeSelector);
  (spec.tolerations ?? []).forEach((toleration, i) => {
    const tField = `${field}.tolerations[${i}]`;
    checkEnum(causes, `${tField}.operator`, toleration.operator, ['Equal', 'Exists']);
    checkEnum(causes, `${tField}.effect`, toleration.effect || undefined, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
    if (toleration.operator === 'Exists' && toleration.value) {
      causes.push(fieldErrors.invalid(`${tField}.operator`, toleration.value, 'value must be empty when `operator` is \'Exists\''));
    }
    if (!toleration.key && toleration.operator !== 'Exists') {
      causes.push(fieldErrors.invalid(`${tField}.operator`, toleration.operator ?? '', 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (toleration.tolerationSeconds !== undefined && toleration.effect !== 'NoExecute') {
      causes.push(fieldErrors.invalid(`${tField}.effect`, toleration.effect ?? '', 'effect must be \'NoExecute\' when `tolerationSeconds` is set'));
    }
  });
  const nodeAffinity = spec.affinity?.nodeAffinity;
  nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms.forEach((term, i) => {
    (term.matchExpressions ?? []).forEach((expr, j) => {
      checkEnum(causes, `${field}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${i}].matchExpressions[${j}].operator`, expr.operator, ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
    });
  });
  nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.forEach((term, i) => {
    if (term.weight < 1 || term.weight > 100) {
      causes.push(fieldErrors.invalid(`${field}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}].weight`, term.weight, 'must be in the range 1-100'));
    }
  });
  return causes;
};

export const checkSelector = (causes: Causes, field: string, selector: LabelSelector | undefined): boolean => {
  if (!selector) {
    causes.push(fieldErrors.required(field));
    return false;
  }
  const parsed = labelSelectorToRequirements(selector);
  if (parsed.type === 'invalid') {
    causes.push(fieldErrors.invalid(field, selector, parsed.error.message));
    return false;
  }
  if (parsed.requirements.length === 0) {
    causes.push(fieldErrors.invalid(field, selector, 'empty selector is invalid for deployment'));
    return false;
  }
  return true;
};

/** ReplicaSet and Deployment share the selector/template rules. */
export const validateWorkloadTemplate = (
  causes: Causes,
  selector: LabelSelector | undefined,
  template: PodTemplateSpec | undefined,
  replicas: number | undefined,
): void => {
  checkNonNegative(causes, 'spec.replicas', replicas);
  const selectorOk = checkSelector(causes, 'spec.selector', selector);
  if (!template) {
    causes.push(fieldErrors.required('spec.template'));
    return;
  }
  const labels = template.metadata?.labels;
  checkLabels(causes, 'spec.template.metadata.labels', labels);
  if (selectorOk && selector) {
    const parsed = labelSelectorToRequirements(selector);
    if (parsed.type === 'ok' && !matchesLabels(parsed.requirements, labels ?? {})) {
      causes.push(fieldErrors.invalid('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`'));
    }
  }
  causes.push(...validatePodSpec('spec.template.spec', template.spec));
  const restartPolicy = template.spec.restartPolicy;
  if (restartPolicy !== undefined && restartPolicy !== 'Always') {
    causes.push(fieldErrors.notSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  }
};

const intOrPercent = (value: number | string | undefined): { type: 'int'; value: number } | { type: 'percent'; value: number } | undefined => {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return { type: 'int', value };
  const match = /^(\d+)%$/.exec(value);
  return match ? { type: 'percent', value: Number(match[1]) } : { type: 'percent', value: Number.NaN };
};

export const validateDeployment = (causes: Causes, deployment: Deployment): void => {
  const spec = deployment.spec;
  validateWorkloadTemplate(causes, spec.selector, spec.template, spec.replicas);
  checkNonNegative(causes, 'spec.minReadySeconds', spec.minReadySeconds);
  checkNonNegative(causes, 'spec.revisionHistoryLimit', spec.revisionHistoryLimit);
  if (spec.progressDeadlineSeconds !== undefined && spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) {
    causes.push(fieldErrors.invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
  const strategy = spec.strategy;
  checkEnum(causes, 'spec.strategy.type', strategy?.type, ['Recreate', 'RollingUpdate']);
  if (strategy?.type === 'Recreate' && strategy.rollingUpdate) {
    causes.push(fieldErrors.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  }
  const rolling = strategy?.rollingUpdate;
  if (rolling) {
    const surge = intOrPercent(rolling.maxSurge);
    const unavailable = intOrPercent(rolling.maxUnavailable);
    for (const [name, parsed, raw] of [['maxSurge', surge, rolling.maxSurge], ['maxUnavailable', unavailable, rolling.maxUnavailable]] as const) {
      if (!parsed) continue;
      const field = `spec.strategy.rollingUpdate.${name}`;
      if (Number.isNaN(parsed.value)) causes.push(fieldErrors.invalid(field, raw, 'a valid percent string must be a numeric string followed by an ending \'%\' (e.g. \'1%\',  or \'93%\')'));
      else if (parsed.value < 0) causes.push(fieldErrors.invalid(field, raw, 'must be greater than or equal to 0'));
      else if (parsed.type === 'percent' && name === 'maxUnavailable' && parsed.value > 100) causes.push(fieldErrors.invalid(field, raw, 'must not be greater than 100%'));
    }
    if (surge?.value === 0 && unavailable?.value === 0) {
      causes.push(fieldErrors.invalid('spec.strategy.rollingUpdate.maxUnavailable', rolling.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
    }
  }
};

/**
 * Validates a Service; `creating` is false for an update, where an ExternalName service's
 * cluster IP is not judged (the fold allocates one and keeps it across updates).
 */
export const validateService = (causes: Causes, service: Service, creating = true): void => {
  const spec = service.spec;
  const type = spec.type ?? 'ClusterIP';
  checkEnum(causes, 'spec.type', type, ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']);
  const externalName = type === 'ExternalName';
  if (externalName) {
    // A DNS name, a trailing dot allowed; no cluster IP of its own.
    if (!spec.externalName) causes.push(fieldErrors.required('spec.externalName'));
    else {
      const problem = dns1123SubdomainProblem(spec.externalName.replace(/\.$/, ''));
      if (problem) causes.push(fieldErrors.invalid('spec.externalName', spec.externalName, problem));
    }
    if (creating && spec.clusterIP) causes.push(fieldErrors.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
  }
  checkEnum(causes, 'spec.sessionAffinity', spec.sessionAffinity, ['None', 'ClientIP']);
  const headless = spec.clusterIP === 'None';
  if (spec.clusterIP && !headless) {
    const problem = ipProblem(spec.clusterIP);
    if (problem) causes.push(fieldErrors.invalid('spec.clusterIP', spec.clusterIP, problem));
  }
  if (headless && type !== 'ClusterIP') {
    causes.push(fieldErrors.invalid('spec.clusterIP', 'None', `may not be set to 'None' for ${type} services`));
  }
  const ports = spec.ports ?? [];
  if (ports.length === 0 && !headless && !externalName) causes.push(fieldErrors.required('spec.ports'));
  const names = new Set<string>();
  const seen = new Set<string>();
  ports.forEach((port, i) => {
    const field = `spec.ports[${i}]`;
    if (ports.length > 1 && !port.name) causes.push(fieldErrors.required(`${field}.name`));
    if (port.name) {
      const problem = dns1123LabelProblem(port.name);
      if (problem) causes.push(fieldErrors.invalid(`${field}.name`, port.name, problem));
      else if (names.has(port.name)) causes.push(fieldErrors.duplicate(`${field}.name`, port.name));
      names.add(port.name);
    }
    checkPort(causes, `${field}.port`, port.port);
    checkEnum(causes, `${field}.protocol`, port.protocol, PROTOCOLS);
    if (port.targetPort !== undefined) checkNamedPort(causes, `${field}.targetPort`, port.targetPort);
    if (port.nodePort !== undefined && port.nodePort !== 0) {
      if (type === 'ClusterIP') causes.push(fieldErrors.forbidden(`${field}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
      else if (port.nodePort < 30000 || port.nodePort > 32767) {
        causes.push(fieldErrors.invalid(`${field}.nodePort`, port.nodePort, 'provided port is not in the valid range. The range of valid ports is 30000-32767'));
      }
    }
    const key = `${port.port}/${port.protocol ?? 'TCP'}`;
    if (seen.has(key)) causes.push(fieldErrors.duplicate(field, { port: port.port, protocol: port.protocol ?? 'TCP' }));
    seen.add(key);
  });
  checkLabels(causes, 'spec.selector', spec.selector);
};

export const validateEndpoints = (causes: Causes, endpoints: Endpoints): void => {
  (endpoints.subsets ?? []).forEach((subset, i) => {
    const field = `subsets[${i}]`;
    for (const list of ['addresses', 'notReadyAddresses'] as const) {
      (subset[list] ?? []).forEach((address, j) => {
        const problem = ipProblem(address.ip);
        if (problem) causes.push(fieldErrors.invalid(`${field}.${list}[${j}].ip`, address.ip, problem));
      });
    }
    const ports = subset.ports ?? [];
    ports.forEach((port, j) => {
      if (ports.length > 1 && !port.name) causes.push(fieldErrors.required(`${field}.ports[${j}].name`));
      checkPort(causes, `${field}.ports[${j}].port`, port.port);
      checkEnum(causes, `${field}.ports[${j}].protocol`, port.protocol, PROTOCOLS);
    });
  });
};

export const validateNode = (causes: Causes, node: Node): void => {
  (node.spec?.taints ?? []).forEach((taint, i) => {
    const problem = qualifiedNameProblem(taint.key);
    if (problem) causes.push(fieldErrors.invalid(`spec.taints[${i}].key`, taint.key, problem));
    checkEnum(causes, `spec.taints[${i}].effect`, taint.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
  });
};

export const validateNamespace = (causes: Causes, namespace: Namespace): void => {
  (namespace.spec?.finalizers ?? []).forEach((finalizer, i) => {
    const problem = qualifiedNameProblem(finalizer);
    if (problem) causes.push(fieldErrors.invalid(`spec.finalizers[${i}]`, finalizer, problem));
  });
};

export const checkImmutableSelector = (causes: Causes, next: LabelSelector, previous: LabelSelector): void => {
  if (JSON.stringify(canonical(next)) !== JSON.stringify(canonical(previous))) {
    causes.push(fieldErrors.invalid('spec.selector', next, 'field is immutable'));
  }
};

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  }
  return value;
};

/** The spec of a pod with the fields an update may change blanked out. */
const mutablePartsBlanked = (pod: Pod): unknown => {
  const spec = structuredClone(pod.spec);
  for (const container of [...spec.containers, ...(spec.initContainers ?? [])]) container.image = '';
  delete spec.tolerations;
  delete spec.terminationGracePeriodSeconds;
  delete spec.nodeName;
  return canonical(spec);
};

export const validatePodUpdate = (next: Pod, old: Pod): Causes => {
  if (sameJson(mutablePartsBlanked(next), mutablePartsBlanked(old))) return [];
  return [
    fieldErrors.forbidden(
      'spec',
      'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    ),
  ];
};

/** Validates a status written through a `/status` subresource. */
export const validateStatus = (object: KubeObject): Causes => {
  const causes: Causes = [];
  if (object.kind === 'Pod') {
    checkEnum(causes, 'status.phase', object.status?.phase, ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']);
  }
  if (object.kind === 'Namespace') {
    checkEnum(causes, 'status.phase', object.status?.phase, ['Active', 'Terminating']);
  }
  return causes;
};
