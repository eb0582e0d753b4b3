/**
 * Defaulting, as kube-apiserver does it before validation: restartPolicy Always, TCP
 * ports, a Service's targetPort, a Deployment's RollingUpdate 25%/25% strategy, and so on.
 * Defaults are part of what gets appended, so every reader sees the same object.
 */
import type { Container, KubeObject, PodSpec, Probe } from '../../schemas/index.ts';
import { assertNever } from '../../schemas/index.ts';

const imagePullPolicy = (image: string | undefined): string => {
  if (!image) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  if (lastSegment.includes('@')) return 'IfNotPresent';
  const tag = lastSegment.includes(':') ? lastSegment.slice(lastSegment.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
};

const defaultProbe = (probe: Probe | undefined): void => {
  if (!probe) return;
  probe.periodSeconds ??= 10;
  probe.timeoutSeconds ??= 1;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (probe.httpGet) {
    probe.httpGet.path ??= '/';
    probe.httpGet.scheme ??= 'HTTP';
  }
};

const defaultContainer = (container: Container): void => {
  container.imagePullPolicy ??= imagePullPolicy(container.image);
  for (const port of container.ports ?? []) port.protocol ??= 'TCP';
  defaultProbe(container.livenessProbe);
  defaultProbe(container.readinessProbe);
  defaultProbe(container.startupProbe);
};

/** Fills a PodSpec's defaults in place. */
export const defaultPodSpec = (spec: PodSpec): void => {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) defaultContainer(container);
};

/** Fills an object's defaults in place (the object has passed the schema check). */
export const applyDefaults = (object: KubeObject): void => {
  switch (object.kind) {
    case 'Pod':
      defaultPodSpec(object.spec);
      return;
    case 'Deployment': {
      const spec = object.spec;
      spec.replicas ??= 1;
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      spec.strategy ??= {};
      spec.strategy.type ??= 'RollingUpdate';
      if (spec.strategy.type === 'RollingUpdate') {
        spec.strategy.rollingUpdate ??= {};
        spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
        spec.strategy.rollingUpdate.maxSurge ??= '25%';
      }
      defaultPodSpec(spec.template.spec);
      return;
    }
    case 'ReplicaSet':
      object.spec.replicas ??= 1;
      if (object.spec.template) defaultPodSpec(object.spec.template.spec);
      return;
    case 'Service': {
      const spec = object.spec;
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      for (const port of spec.ports ?? []) {
        port.protocol ??= 'TCP';
        port.targetPort ??= port.port;
      }
      return;
    }
    case 'Endpoints':
      for (const subset of object.subsets ?? []) for (const port of subset.ports ?? []) port.protocol ??= 'TCP';
      return;
    case 'Namespace':
    case 'Node':
      return;
    default:
      return assertNever(object);
  }
};
