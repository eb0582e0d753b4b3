/**
 * Reads Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), which
 * kubectl's typed clients send (`kubectl create deployment|namespace|service …`) and
 * which client-go does not retry as JSON. The body is the `k8s\0` magic and a
 * `runtime.Unknown` {typeMeta, raw}; `raw` is the object in the wire format of
 * k8s.io/api's generated.proto, decoded here with a table of field numbers into the
 * Kubernetes JSON shape, so admission treats it like any JSON body.
 *
 * The tables cover the kinds logplane serves (plus Binding, Scale, DeleteOptions, TokenRequest). Fields
 * of message types logplane does not model decode to an opaque non-empty marker, so the
 * schema check reports them as unknown fields by their real names. Like gogo-protobuf
 * JSON, zero scalars of non-pointer fields mean "absent"; fields where zero is a value
 * (`replicas: 0`) are marked `keepZero`.
 */
import { apiErrors } from './errors.ts';

type Scalar = 'string' | 'bytes' | 'int32' | 'int64' | 'bool' | 'time' | 'quantity' | 'intOrString' | 'opaque';

interface FieldSpec {
  readonly name: string;
  /** A scalar kind or the name of a message in `MESSAGES`. */
  readonly type: Scalar | `message:${string}`;
  readonly repeated?: boolean;
  /** A `map<string, V>`; `type` is the value type. */
  readonly map?: boolean;
  /** The message's fields are merged into the parent (Go embedded struct, e.g. Probe's handler). */
  readonly inline?: boolean;
  /** Zero is a value here (a Go pointer field, or a field the schema requires). */
  readonly keepZero?: boolean;
}

type Message = Readonly<Record<number, FieldSpec>>;

const f = (name: string, type: FieldSpec['type'], options: Omit<FieldSpec, 'name' | 'type'> = {}): FieldSpec => ({ name, type, ...options });
const m = (name: string): `message:${string}` => `message:${name}`;
const list = { repeated: true } as const;
const map = { map: true } as const;
const zero = { keepZero: true } as const;

const OBJECT = (spec: string, status: string): Message => ({
  1: f('metadata', m('ObjectMeta')),
  2: f('spec', m(spec)),
  3: f('status', m(status)),
});

/** Field numbers of k8s.io/api generated.proto messages, by message name. */
const MESSAGES: Readonly<Record<string, Message>> = {
  Unknown: { 1: f('typeMeta', m('TypeMeta')), 2: f('raw', 'opaque'), 3: f('contentEncoding', 'string'), 4: f('contentType', 'string') },
  TypeMeta: { 1: f('apiVersion', 'string'), 2: f('kind', 'string') },
  ObjectMeta: {
    1: f('name', 'string'), 2: f('generateName', 'string'), 3: f('namespace', 'string'), 4: f('selfLink', 'string'),
    5: f('uid', 'string'), 6: f('resourceVersion', 'string'), 7: f('generation', 'int64'), 8: f('creationTimestamp', 'time'),
    9: f('deletionTimestamp', 'time'), 10: f('deletionGracePeriodSeconds', 'int64', zero), 11: f('labels', 'string', map),
    12: f('annotations', 'string', map), 13: f('ownerReferences', m('OwnerReference'), list), 14: f('finalizers', 'string', list),
    17: f('managedFields', 'opaque', list),
  },
  OwnerReference: {
    1: f('kind', 'string'), 3: f('name', 'string'), 4: f('uid', 'string'), 5: f('apiVersion', 'string'),
    6: f('controller', 'bool', zero), 7: f('blockOwnerDeletion', 'bool', zero),
  },
  LabelSelector: { 1: f('matchLabels', 'string', map), 2: f('matchExpressions', m('LabelSelectorRequirement'), list) },
  LabelSelectorRequirement: { 1: f('key', 'string'), 2: f('operator', 'string'), 3: f('values', 'string', list) },
  DeleteOptions: {
    1: f('gracePeriodSeconds', 'int64', zero), 2: f('preconditions', m('Preconditions')), 3: f('orphanDependents', 'bool', zero),
    4: f('propagationPolicy', 'string'), 5: f('dryRun', 'string', list),
  },
  Preconditions: { 1: f('uid', 'string'), 2: f('resourceVersion', 'string') },

  Namespace: OBJECT('NamespaceSpec', 'NamespaceStatus'),
  NamespaceSpec: { 1: f('finalizers', 'string', list) },
  NamespaceStatus: { 1: f('phase', 'string'), 2: f('conditions', 'opaque', list) },

  Node: OBJECT('NodeSpec', 'NodeStatus'),
  NodeSpec: {
    1: f('podCIDR', 'string'), 2: f('externalID', 'string'), 3: f('providerID', 'string'), 4: f('unschedulable', 'bool'),
    5: f('taints', m('Taint'), list), 6: f('configSource', 'opaque'), 7: f('podCIDRs', 'string', list),
  },
  Taint: { 1: f('key', 'string', zero), 2: f('value', 'string'), 3: f('effect', 'string', zero), 4: f('timeAdded', 'time') },
  NodeStatus: {
    1: f('capacity', 'quantity', map), 2: f('allocatable', 'quantity', map), 3: f('phase', 'string'),
    4: f('conditions', m('NodeCondition'), list), 5: f('addresses', m('NodeAddress'), list),
    6: f('daemonEndpoints', m('NodeDaemonEndpoints')), 7: f('nodeInfo', m('NodeSystemInfo')), 8: f('images', 'opaque', list),
    9: f('volumesInUse', 'string', list), 10: f('volumesAttached', 'opaque', list), 11: f('config', 'opaque'),
  },
  NodeCondition: {
    1: f('type', 'string', zero), 2: f('status', 'string', zero), 3: f('lastHeartbeatTime', 'time'),
    4: f('lastTransitionTime', 'time'), 5: f('reason', 'string'), 6: f('message', 'string'),
  },
  NodeAddress: { 1: f('type', 'string', zero), 2: f('address', 'string', zero) },
  NodeDaemonEndpoints: { 1: f('kubeletEndpoint', m('DaemonEndpoint')) },
  DaemonEndpoint: { 1: f('Port', 'int32', zero) },
  NodeSystemInfo: {
    1: f('machineID', 'string'), 2: f('systemUUID', 'string'), 3: f('bootID', 'string'), 4: f('kernelVersion', 'string'),
    5: f('osImage', 'string'), 6: f('containerRuntimeVersion', 'string'), 7: f('kubeletVersion', 'string'),
    8: f('kubeProxyVersion', 'string'), 9: f('operatingSystem', 'string'), 10: f('architecture', 'string'),
  },

  Pod: OBJECT('PodSpec', 'PodStatus'),
  PodTemplateSpec: { 1: f('metadata', m('ObjectMeta')), 2: f('spec', m('PodSpec')) },
  PodSpec: {
    1: f('volumes', 'opaque', list), 2: f('containers', m('Container'), list), 3: f('restartPolicy', 'string'),
    4: f('terminationGracePeriodSeconds', 'int64', zero), 5: f('activeDeadlineSeconds', 'int64', zero), 6: f('dnsPolicy', 'string'),
    7: f('nodeSelector', 'string', map), 8: f('serviceAccountName', 'string'), 9: f('serviceAccount', 'string'),
    10: f('nodeName', 'string'), 11: f('hostNetwork', 'bool'), 12: f('hostPID', 'bool'), 13: f('hostIPC', 'bool'),
    14: f('securityContext', 'opaque'), 15: f('imagePullSecrets', 'opaque', list), 16: f('hostname', 'string'),
    17: f('subdomain', 'string'), 18: f('affinity', m('Affinity')), 19: f('schedulerName', 'string'),
    20: f('initContainers', m('Container'), list), 21: f('automountServiceAccountToken', 'bool', zero),
    22: f('tolerations', m('Toleration'), list), 23: f('hostAliases', 'opaque', list), 24: f('priorityClassName', 'string'),
    25: f('priority', 'int32', zero), 26: f('dnsConfig', 'opaque'), 27: f('shareProcessNamespace', 'bool', zero),
    28: f('readinessGates', 'opaque', list), 29: f('runtimeClassName', 'string'), 30: f('enableServiceLinks', 'bool', zero),
    31: f('preemptionPolicy', 'string'), 32: f('overhead', 'quantity', map), 33: f('topologySpreadConstraints', 'opaque', list),
    34: f('ephemeralContainers', 'opaque', list), 35: f('setHostnameAsFQDN', 'bool', zero), 36: f('os', 'opaque'),
    37: f('hostUsers', 'bool', zero), 38: f('schedulingGates', 'opaque', list), 39: f('resourceClaims', 'opaque', list),
  },
  Container: {
    1: f('name', 'string'), 2: f('image', 'string'), 3: f('command', 'string', list), 4: f('args', 'string', list),
    5: f('workingDir', 'string'), 6: f('ports', m('ContainerPort'), list), 7: f('env', m('EnvVar'), list),
    8: f('resources', m('ResourceRequirements')), 9: f('volumeMounts', 'opaque', list), 10: f('livenessProbe', m('Probe')),
    11: f('readinessProbe', m('Probe')), 12: f('lifecycle', 'opaque'), 13: f('terminationMessagePath', 'string'),
    14: f('imagePullPolicy', 'string'), 15: f('securityContext', 'opaque'), 16: f('stdin', 'bool'), 17: f('stdinOnce', 'bool'),
    18: f('tty', 'bool'), 19: f('envFrom', 'opaque', list), 20: f('terminationMessagePolicy', 'string'),
    21: f('volumeDevices', 'opaque', list), 22: f('startupProbe', m('Probe')), 23: f('resizePolicy', 'opaque', list),
    24: f('restartPolicy', 'string'),
  },
  ContainerPort: { 1: f('name', 'string'), 2: f('hostPort', 'int32'), 3: f('containerPort', 'int32', zero), 4: f('protocol', 'string'), 5: f('hostIP', 'string') },
  EnvVar: { 1: f('name', 'string', zero), 2: f('value', 'string'), 3: f('valueFrom', 'opaque') },
  ResourceRequirements: { 1: f('limits', 'quantity', map), 2: f('requests', 'quantity', map), 3: f('claims', 'opaque', list) },
  Probe: {
    1: f('handler', m('ProbeHandler'), { inline: true }), 2: f('initialDelaySeconds', 'int32'), 3: f('timeoutSeconds', 'int32'),
    4: f('periodSeconds', 'int32'), 5: f('successThreshold', 'int32'), 6: f('failureThreshold', 'int32'),
    7: f('terminationGracePeriodSeconds', 'int64', zero),
  },
  ProbeHandler: { 1: f('exec', m('ExecAction')), 2: f('httpGet', m('HTTPGetAction')), 3: f('tcpSocket', m('TCPSocketAction')), 4: f('grpc', 'opaque') },
  ExecAction: { 1: f('command', 'string', list) },
  HTTPGetAction: { 1: f('path', 'string'), 2: f('port', 'intOrString', zero), 3: f('host', 'string'), 4: f('scheme', 'string'), 5: f('httpHeaders', 'opaque', list) },
  TCPSocketAction: { 1: f('port', 'intOrString', zero), 2: f('host', 'string') },
  Toleration: { 1: f('key', 'string'), 2: f('operator', 'string'), 3: f('value', 'string'), 4: f('effect', 'string'), 5: f('tolerationSeconds', 'int64', zero) },
  Affinity: { 1: f('nodeAffinity', m('NodeAffinity')), 2: f('podAffinity', m('PodAffinity')), 3: f('podAntiAffinity', m('PodAffinity')) },
  NodeAffinity: {
    1: f('requiredDuringSchedulingIgnoredDuringExecution', m('NodeSelector')),
    2: f('preferredDuringSchedulingIgnoredDuringExecution', m('PreferredSchedulingTerm'), list),
  },
  NodeSelector: { 1: f('nodeSelectorTerms', m('NodeSelectorTerm'), list) },
  NodeSelectorTerm: { 1: f('matchExpressions', m('NodeSelectorRequirement'), list), 2: f('matchFields', m('NodeSelectorRequirement'), list) },
  NodeSelectorRequirement: { 1: f('key', 'string'), 2: f('operator', 'string'), 3: f('values', 'string', list) },
  PreferredSchedulingTerm: { 1: f('weight', 'int32', zero), 2: f('preference', m('NodeSelectorTerm')) },
  PodAffinity: {
    1: f('requiredDuringSchedulingIgnoredDuringExecution', m('PodAffinityTerm'), list),
    2: f('preferredDuringSchedulingIgnoredDuringExecution', m('WeightedPodAffinityTerm'), list),
  },
  PodAffinityTerm: {
    1: f('labelSelector', m('LabelSelector')), 2: f('namespaces', 'string', list), 3: f('topologyKey', 'string', zero),
    4: f('namespaceSelector', m('LabelSelector')),
  },
  WeightedPodAffinityTerm: { 1: f('weight', 'int32', zero), 2: f('podAffinityTerm', m('PodAffinityTerm')) },
  PodStatus: {
    1: f('phase', 'string'), 2: f('conditions', m('PodCondition'), list), 3: f('message', 'string'), 4: f('reason', 'string'),
    5: f('hostIP', 'string'), 6: f('podIP', 'string'), 7: f('startTime', 'time'), 8: f('containerStatuses', m('ContainerStatus'), list),
    9: f('qosClass', 'string'), 10: f('initContainerStatuses', 'opaque', list), 11: f('nominatedNodeName', 'string'),
    12: f('podIPs', m('PodIP'), list), 13: f('ephemeralContainerStatuses', 'opaque', list),
  },
  PodCondition: {
    1: f('type', 'string', zero), 2: f('status', 'string', zero), 3: f('lastProbeTime', 'time'), 4: f('lastTransitionTime', 'time'),
    5: f('reason', 'string'), 6: f('message', 'string'),
  },
  PodIP: { 1: f('ip', 'string', zero) },
  ContainerStatus: {
    1: f('name', 'string', zero), 2: f('state', m('ContainerState')), 3: f('lastState', m('ContainerState')), 4: f('ready', 'bool', zero),
    5: f('restartCount', 'int32', zero), 6: f('image', 'string', zero), 7: f('imageID', 'string'), 8: f('containerID', 'string'),
    9: f('started', 'bool', zero),
  },
  ContainerState: { 1: f('waiting', m('ContainerStateWaiting')), 2: f('running', m('ContainerStateRunning')), 3: f('terminated', m('ContainerStateTerminated')) },
  ContainerStateWaiting: { 1: f('reason', 'string'), 2: f('message', 'string') },
  ContainerStateRunning: { 1: f('startedAt', 'time') },
  ContainerStateTerminated: {
    1: f('exitCode', 'int32', zero), 2: f('signal', 'int32'), 3: f('reason', 'string'), 4: f('message', 'string'),
    5: f('startedAt', 'time'), 6: f('finishedAt', 'time'), 7: f('containerID', 'string'),
  },

  Service: OBJECT('ServiceSpec', 'ServiceStatus'),
  ServiceSpec: {
    1: f('ports', m('ServicePort'), list), 2: f('selector', 'string', map), 3: f('clusterIP', 'string'), 4: f('type', 'string'),
    5: f('externalIPs', 'string', list), 7: f('sessionAffinity', 'string'), 8: f('loadBalancerIP', 'string'),
    9: f('loadBalancerSourceRanges', 'string', list), 10: f('externalName', 'string'), 11: f('externalTrafficPolicy', 'string'),
    12: f('healthCheckNodePort', 'int32'), 13: f('publishNotReadyAddresses', 'bool'), 14: f('sessionAffinityConfig', 'opaque'),
    16: f('topologyKeys', 'string', list), 17: f('ipFamilyPolicy', 'string'), 18: f('clusterIPs', 'string', list),
    19: f('ipFamilies', 'string', list), 20: f('allocateLoadBalancerNodePorts', 'bool', zero), 21: f('loadBalancerClass', 'string'),
    22: f('internalTrafficPolicy', 'string'), 23: f('trafficDistribution', 'string'),
  },
  ServicePort: { 1: f('name', 'string'), 2: f('protocol', 'string'), 3: f('port', 'int32', zero), 4: f('targetPort', 'intOrString'), 5: f('nodePort', 'int32'), 6: f('appProtocol', 'string') },
  ServiceStatus: { 1: f('loadBalancer', m('LoadBalancerStatus')), 2: f('conditions', 'opaque', list) },
  LoadBalancerStatus: { 1: f('ingress', m('LoadBalancerIngress'), list) },
  LoadBalancerIngress: { 1: f('ip', 'string'), 2: f('hostname', 'string'), 4: f('ports', 'opaque', list) },

  Endpoints: { 1: f('metadata', m('ObjectMeta')), 2: f('subsets', m('EndpointSubset'), list) },
  EndpointSubset: { 1: f('addresses', m('EndpointAddress'), list), 2: f('notReadyAddresses', m('EndpointAddress'), list), 3: f('ports', m('EndpointPort'), list) },
  EndpointAddress: { 1: f('ip', 'string', zero), 2: f('targetRef', m('ObjectReference')), 3: f('hostname', 'string'), 4: f('nodeName', 'string') },
  EndpointPort: { 1: f('name', 'string'), 2: f('port', 'int32', zero), 3: f('protocol', 'string'), 4: f('appProtocol', 'string') },
  ObjectReference: {
    1: f('kind', 'string'), 2: f('namespace', 'string'), 3: f('name', 'string'), 4: f('uid', 'string'), 5: f('apiVersion', 'string'),
    6: f('resourceVersion', 'string'), 7: f('fieldPath', 'string'),
  },
  Binding: { 1: f('metadata', m('ObjectMeta')), 2: f('target', m('ObjectReference')) },
  // authentication.k8s.io/v1 (kubectl create token).
  TokenRequest: OBJECT('TokenRequestSpec', 'TokenRequestStatus'),
  TokenRequestSpec: { 1: f('audiences', 'string', list), 3: f('boundObjectRef', m('BoundObjectReference')), 4: f('expirationSeconds', 'int64') },
  BoundObjectReference: { 1: f('kind', 'string'), 2: f('apiVersion', 'string'), 3: f('name', 'string'), 4: f('uid', 'string') },
  TokenRequestStatus: { 1: f('token', 'string'), 2: f('expirationTimestamp', 'time') },

  ServiceAccount: {
    1: f('metadata', m('ObjectMeta')), 2: f('secrets', m('ObjectReference'), list), 3: f('imagePullSecrets', m('LocalObjectReference'), list),
    4: f('automountServiceAccountToken', 'bool', zero),
  },
  ConfigMap: { 1: f('metadata', m('ObjectMeta')), 2: f('data', 'string', map), 3: f('binaryData', 'bytes', map), 4: f('immutable', 'bool', zero) },
  Secret: {
    1: f('metadata', m('ObjectMeta')), 2: f('data', 'bytes', map), 3: f('type', 'string'), 4: f('stringData', 'string', map),
    5: f('immutable', 'bool', zero),
  },
  Job: OBJECT('JobSpec', 'JobStatus'),
  JobSpec: {
    1: f('parallelism', 'int32', zero), 2: f('completions', 'int32', zero), 3: f('activeDeadlineSeconds', 'int64', zero),
    4: f('selector', m('LabelSelector')), 5: f('manualSelector', 'bool', zero), 6: f('template', m('PodTemplateSpec')),
    7: f('backoffLimit', 'int32', zero), 8: f('ttlSecondsAfterFinished', 'int32', zero), 9: f('completionMode', 'string'),
    10: f('suspend', 'bool', zero), 11: f('podFailurePolicy', 'opaque'), 12: f('backoffLimitPerIndex', 'int32', zero),
    13: f('maxFailedIndexes', 'int32', zero), 14: f('podReplacementPolicy', 'string'), 15: f('managedBy', 'string'), 16: f('successPolicy', 'opaque'),
  },
  JobStatus: {},
  Deployment: OBJECT('DeploymentSpec', 'DeploymentStatus'),
  DeploymentSpec: {
    1: f('replicas', 'int32', zero), 2: f('selector', m('LabelSelector')), 3: f('template', m('PodTemplateSpec')),
    4: f('strategy', m('DeploymentStrategy')), 5: f('minReadySeconds', 'int32'), 6: f('revisionHistoryLimit', 'int32', zero),
    7: f('paused', 'bool'), 9: f('progressDeadlineSeconds', 'int32', zero),
  },
  DeploymentStrategy: { 1: f('type', 'string'), 2: f('rollingUpdate', m('RollingUpdateDeployment')) },
  RollingUpdateDeployment: { 1: f('maxUnavailable', 'intOrString', zero), 2: f('maxSurge', 'intOrString', zero) },
  DeploymentStatus: {
    1: f('observedGeneration', 'int64'), 2: f('replicas', 'int32'), 3: f('updatedReplicas', 'int32'), 4: f('availableReplicas', 'int32'),
    5: f('unavailableReplicas', 'int32'), 6: f('conditions', m('DeploymentCondition'), list), 7: f('readyReplicas', 'int32'),
    8: f('collisionCount', 'int32', zero),
  },
  DeploymentCondition: {
    1: f('type', 'string', zero), 2: f('status', 'string', zero), 4: f('reason', 'string'), 5: f('message', 'string'),
    6: f('lastUpdateTime', 'time'), 7: f('lastTransitionTime', 'time'),
  },
  ReplicaSet: OBJECT('ReplicaSetSpec', 'ReplicaSetStatus'),
  ReplicaSetSpec: { 1: f('replicas', 'int32', zero), 2: f('selector', m('LabelSelector')), 3: f('template', m('PodTemplateSpec')), 4: f('minReadySeconds', 'int32') },
  ReplicaSetStatus: {
    1: f('replicas', 'int32', zero), 2: f('fullyLabeledReplicas', 'int32'), 3: f('observedGeneration', 'int64'), 4: f('readyReplicas', 'int32'),
    5: f('availableReplicas', 'int32'), 6: f('conditions', m('ReplicaSetCondition'), list),
  },
  ReplicaSetCondition: { 1: f('type', 'string', zero), 2: f('status', 'string', zero), 3: f('lastTransitionTime', 'time'), 4: f('reason', 'string'), 5: f('message', 'string') },

  Scale: { 1: f('metadata', m('ObjectMeta')), 2: f('spec', m('ScaleSpec')), 3: f('status', m('ScaleStatus')) },
  ScaleSpec: { 1: f('replicas', 'int32', zero) },
  ScaleStatus: { 1: f('replicas', 'int32', zero), 2: f('selector', 'string') },
  // rbac.authorization.k8s.io/v1 (kubectl create role|clusterrole|rolebinding|clusterrolebinding send them).
  Role: { 1: f('metadata', m('ObjectMeta')), 2: f('rules', m('PolicyRule'), list) },
  ClusterRole: { 1: f('metadata', m('ObjectMeta')), 2: f('rules', m('PolicyRule'), list), 3: f('aggregationRule', m('AggregationRule')) },
  PolicyRule: {
    1: f('verbs', 'string', list), 2: f('apiGroups', 'string', list), 3: f('resources', 'string', list), 4: f('resourceNames', 'string', list),
    5: f('nonResourceURLs', 'string', list),
  },
  AggregationRule: { 1: f('clusterRoleSelectors', m('LabelSelector'), list) },
  RoleBinding: { 1: f('metadata', m('ObjectMeta')), 2: f('subjects', m('Subject'), list), 3: f('roleRef', m('RoleRef')) },
  ClusterRoleBinding: { 1: f('metadata', m('ObjectMeta')), 2: f('subjects', m('Subject'), list), 3: f('roleRef', m('RoleRef')) },
  Subject: { 1: f('kind', 'string'), 2: f('apiGroup', 'string'), 3: f('name', 'string'), 4: f('namespace', 'string') },
  RoleRef: { 1: f('apiGroup', 'string'), 2: f('kind', 'string'), 3: f('name', 'string') },

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
  Time: { 1: f('seconds', 'int64'), 2: f('nanos', 'int32') },
  IntOrString: { 1: f('type', 'int64'), 2: f('intVal', 'int32'), 3: f('strVal', 'string') },
  Quantity: { 1: f('string', 'string') },
};

/** The first bytes of every Kubernetes protobuf body. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const malformed = (detail: string) => apiErrors.badRequest(`the protobuf body cannot be read: ${detail}`);

/** A cursor over protobuf bytes. */
class Reader {
  offset = 0;
  constructor(readonly buf: Buffer) {}
  get done(): boolean {
    return this.offset >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.offset >= this.buf.length) throw malformed('truncated varint');
      const byte = this.buf[this.offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw malformed('varint too long');
    }
  }
  bytes(): Buffer {
    const length = Number(this.varint());
    if (this.offset + length > this.buf.length) throw malformed('truncated length-delimited field');
    const out = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.offset += 8;
        return;
      case 2:
        this.bytes();
        return;
      case 5:
        this.offset += 4;
        return;
      default:
        throw malformed(`unsupported wire type ${wireType}`);
    }
  }
}

/** Yields (field number, wire type, reader positioned at the value) for each field of a message. */
function* fields(buf: Buffer): Generator<{ number: number; wireType: number; reader: Reader }> {
  const reader = new Reader(buf);
  while (!reader.done) {
    const key = Number(reader.varint());
    yield { number: key >>> 3, wireType: key & 7, reader };
  }
}

/** Zero scalars, which gogo-protobuf writes for non-pointer fields that JSON would omit. */
const isZero = (value: unknown): boolean => value === '' || value === 0 || value === false;

const toTime = (message: Record<string, unknown>): string | undefined => {
  const seconds = Number(message['seconds'] ?? 0);
  if (seconds === 0 && Number(message['nanos'] ?? 0) === 0) return undefined;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
};

/** Decodes one value of a scalar kind or message type from a field. */
const decodeValue = (spec: FieldSpec, wireType: number, reader: Reader): unknown => {
  const type = spec.type;
  if (type.startsWith('message:')) {
    if (wireType !== 2) throw malformed(`field ${spec.name}: expected a message`);
    return decodeMessage(reader.bytes(), type.slice('message:'.length));
  }
  switch (type as Scalar) {
    case 'string':
      if (wireType !== 2) throw malformed(`field ${spec.name}: expected a string`);
      return reader.bytes().toString('utf8');
    case 'bytes':
      if (wireType !== 2) throw malformed(`field ${spec.name}: expected bytes`);
      return reader.bytes().toString('base64');
    case 'int32':
      return Number(BigInt.asIntN(32, reader.varint()));
    case 'int64':
      return Number(BigInt.asIntN(64, reader.varint()));
    case 'bool':
      return reader.varint() !== 0n;
    case 'time':
      return toTime(decodeMessage(reader.bytes(), 'Time'));
    case 'quantity':
      return decodeMessage(reader.bytes(), 'Quantity')['string'] ?? '0';
    case 'intOrString': {
      const value = decodeMessage(reader.bytes(), 'IntOrString');
      return Number(value['type'] ?? 0) === 1 ? (value['strVal'] ?? '') : (value['intVal'] ?? 0);
    }
    case 'opaque': {
      const bytes = wireType === 2 ? reader.bytes() : (reader.skip(wireType), Buffer.alloc(1));
      return bytes.length === 0 ? {} : { '(protobuf)': `${bytes.length} bytes` };
    }
    default:
      throw malformed(`unknown field type ${type}`);
  }
};

/** Decodes a message of `name` into its Kubernetes JSON shape. */
const decodeMessage = (buf: Buffer, name: string): Record<string, unknown> => {
  const table = MESSAGES[name];
  if (!table) throw malformed(`no table for message ${name}`);
  const out: Record<string, unknown> = {};
  for (const { number, wireType, reader } of fields(buf)) {
    const spec = table[number];
    if (!spec) {
      const bytes = wireType === 2 ? reader.bytes().length : (reader.skip(wireType), 1);
      out[`protobufField${number}`] = bytes === 0 ? {} : true;
      continue;
    }
    if (spec.map) {
      const entry: Record<string, unknown> = {};
      for (const item of fields(reader.bytes())) {
        if (item.number === 1) entry['key'] = item.reader.bytes().toString('utf8');
        else if (item.number === 2) entry['value'] = decodeValue({ ...spec, map: false }, item.wireType, item.reader);
        else item.reader.skip(item.wireType);
      }
      const target = (out[spec.name] ??= {}) as Record<string, unknown>;
      // An own property whatever the key, so a key such as `__proto__` is data that the
      // body check after decoding rejects, never a prototype.
      Object.defineProperty(target, String(entry['key'] ?? ''), {
        value: entry['value'] ?? (spec.type === 'string' ? '' : undefined),
        writable: true,
        enumerable: true,
        configurable: true,
      });
      continue;
    }
    const scalarNumeric = spec.type === 'int32' || spec.type === 'int64' || spec.type === 'bool';
    if (spec.repeated && scalarNumeric && wireType === 2) {
      const packed = new Reader(reader.bytes());
      const values = (out[spec.name] ??= []) as unknown[];
      while (!packed.done) values.push(decodeValue(spec, 0, packed));
      continue;
    }
    const value = decodeValue(spec, wireType, reader);
    if (spec.inline && typeof value === 'object' && value !== null) {
      Object.assign(out, value);
    } else if (spec.repeated) {
      ((out[spec.name] ??= []) as unknown[]).push(value);
    } else if (value !== undefined && (spec.keepZero || !isZero(value))) {
      out[spec.name] = value;
    }
  }
  return out;
};

/**
 * Decodes a Kubernetes protobuf body into the JSON object it stands for (with apiVersion
 * and kind from its type meta). 415 for kinds without a table, 400 for malformed bytes.
 */
export const decodeKubernetesProtobuf = (body: Buffer): Record<string, unknown> => {
  if (!body.subarray(0, 4).equals(PROTOBUF_MAGIC)) throw malformed('missing the k8s\\0 prefix');
  let raw: Buffer | undefined;
  const typeMeta: Record<string, unknown> = {};
  for (const { number, wireType, reader } of fields(body.subarray(4))) {
    if (number === 1 && wireType === 2) Object.assign(typeMeta, decodeMessage(reader.bytes(), 'TypeMeta'));
    else if (number === 2 && wireType === 2) raw = reader.bytes();
    else reader.skip(wireType);
  }
  const kind = String(typeMeta['kind'] ?? '');
  if (!MESSAGES[kind] || ['Unknown', 'TypeMeta', 'Time', 'IntOrString', 'Quantity'].includes(kind)) {
    throw apiErrors.unsupportedMediaType(`logplane cannot read ${kind || 'this object'} as ${PROTOBUF_MEDIA_TYPE}; send application/json`);
  }
  const object = decodeMessage(raw ?? Buffer.alloc(0), kind);
  return { ...(typeMeta['apiVersion'] ? { apiVersion: typeMeta['apiVersion'] } : {}), kind, ...object };
};

/** Encodes an object the way client-go does (tests build typed-client bodies with it). */
export const encodeKubernetesProtobuf = (apiVersion: string, kind: string, object: Record<string, unknown>): Buffer => {
  const typeMeta = encodeMessage({ apiVersion, kind }, 'TypeMeta');
  const raw = encodeMessage(object, kind);
  return Buffer.concat([PROTOBUF_MAGIC, field(1, 2, typeMeta), field(2, 2, raw)]);
};

const varint = (value: bigint): Buffer => {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return Buffer.from(bytes);
};

const field = (number: number, wireType: number, payload: Buffer | bigint): Buffer =>
  Buffer.concat([varint(BigInt((number << 3) | wireType)), typeof payload === 'bigint' ? varint(payload) : Buffer.concat([varint(BigInt(payload.length)), payload])]);

const encodeValue = (spec: FieldSpec, number: number, value: unknown): Buffer => {
  if (spec.type.startsWith('message:')) return field(number, 2, encodeMessage(value as Record<string, unknown>, spec.type.slice(8)));
  switch (spec.type as Scalar) {
    case 'string':
      return field(number, 2, Buffer.from(String(value), 'utf8'));
    case 'bytes':
      return field(number, 2, Buffer.from(String(value), 'base64'));
    case 'int32':
    case 'int64':
      return field(number, 0, BigInt(value as number));
    case 'bool':
      return field(number, 0, value ? 1n : 0n);
    case 'time':
      return field(number, 2, encodeMessage({ seconds: Math.floor(Date.parse(String(value)) / 1000) }, 'Time'));
    case 'quantity':
      return field(number, 2, encodeMessage({ string: String(value) }, 'Quantity'));
    case 'intOrString':
      return field(number, 2, encodeMessage(typeof value === 'string' ? { type: 1, strVal: value } : { type: 0, intVal: value }, 'IntOrString'));
    case 'opaque':
      return field(number, 2, Buffer.from([0x0a, 0x00]));
    default:
      throw new Error(`cannot encode ${spec.type}`);
  }
};

const encodeMessage = (object: Record<string, unknown>, name: string): Buffer => {
  const table = MESSAGES[name]!;
  const parts: Buffer[] = [];
  for (const [numberText, spec] of Object.entries(table)) {
    const number = Number(numberText);
    if (spec.inline) {
      const inner = Object.fromEntries(Object.values(MESSAGES[spec.type.slice(8)]!).filter((s) => s.name in object).map((s) => [s.name, object[s.name]]));
      if (Object.keys(inner).length > 0) parts.push(field(number, 2, encodeMessage(inner, spec.type.slice(8))));
      continue;
    }
    const value = object[spec.name];
    if (value === undefined) continue;
    if (spec.map) {
      for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
        parts.push(field(number, 2, Buffer.concat([field(1, 2, Buffer.from(key)), encodeValue({ ...spec, map: false }, 2, entry)])));
      }
    } else if (spec.repeated) {
      for (const item of value as unknown[]) parts.push(encodeValue(spec, number, item));
    } else {
      parts.push(encodeValue(spec, number, value));
    }
  }
  return Buffer.concat(parts);
};
