/**
 * A small typed client of the CRI v1 API (`runtime.v1.RuntimeService` and `ImageService`)
 * over gRPC, as kubelet talks to containerd or CRI-O. Requests are the proto's messages
 * in camelCase (only the fields logplane sets are typed); answers are normalized: times
 * in ms since the epoch, states as discriminated unions, absent messages as `undefined`.
 * Every failed call rejects with a {@link CriError} carrying the gRPC code and whether a
 * retry may help.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { KubeletConfigError } from '../errors.ts';
import { assertNever } from '../../../schemas/index.ts';
import { CriError, GRPC_CODES, type GrpcCode } from './errors.ts';

/** The vendored CRI v1 proto (kubernetes/cri-api v0.32.0, gogoproto lines removed). */
export const CRI_PROTO_PATH = fileURLToPath(new URL('./api.proto', import.meta.url));

/** Options of {@link createCriClient}. */
export interface CriClientOptions {
  /** The runtime's socket: `unix:///run/containerd/containerd.sock` or an absolute path. */
  readonly endpoint: string;
  /** Deadline of each call but image pulls; default 30 s. */
  readonly callTimeoutMs?: number;
  /** Deadline of `pullImage`; default 5 min. */
  readonly pullTimeoutMs?: number;
  /** Told of every call when it ends: the proto's method name, whether it failed, and how long it took (s). */
  readonly onOperation?: (method: string, failed: boolean, seconds: number) => void;
}

export type StringMap = Readonly<Record<string, string>>;
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

/** `runtime.v1.NamespaceOption`. */
export interface NamespaceOption {
  readonly network?: NamespaceMode;
  readonly pid?: NamespaceMode;
  readonly ipc?: NamespaceMode;
}

/** `runtime.v1.SecurityProfile`: a seccomp or AppArmor profile. */
export interface SecurityProfile {
  readonly profileType: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  /** Localhost: the seccomp profile's absolute path, or the AppArmor profile's name. */
  readonly localhostRef?: string;
}

/** `runtime.v1.SELinuxOption`. */
export interface SELinuxOption {
  readonly user?: string;
  readonly role?: string;
  readonly type?: string;
  readonly level?: string;
}

/** `runtime.v1.LinuxSandboxSecurityContext`. */
export interface LinuxSandboxSecurityContext {
  readonly namespaceOptions?: NamespaceOption;
  readonly selinuxOptions?: SELinuxOption;
  readonly runAsUser?: { readonly value: number };
  readonly runAsGroup?: { readonly value: number };
  readonly readonlyRootfs?: boolean;
  readonly supplementalGroups?: readonly number[];
  /** True when any container of the pod is privileged (containerd refuses privileged containers in other sandboxes). */
  readonly privileged?: boolean;
  readonly seccomp?: SecurityProfile;
}

/** `runtime.v1.LinuxContainerSecurityContext`. */
export interface LinuxContainerSecurityContext {
  readonly capabilities?: { readonly addCapabilities?: readonly string[]; readonly dropCapabilities?: readonly string[] };
  readonly privileged?: boolean;
  readonly namespaceOptions?: NamespaceOption;
  readonly selinuxOptions?: SELinuxOption;
  readonly runAsUser?: { readonly value: number };
  readonly runAsGroup?: { readonly value: number };
  /** The image's user by name (only when it has no numeric one and no runAsUser is given). */
  readonly runAsUsername?: string;
  readonly readonlyRootfs?: boolean;
  readonly supplementalGroups?: readonly number[];
  readonly noNewPrivs?: boolean;
  readonly maskedPaths?: readonly string[];
  readonly readonlyPaths?: readonly string[];
  readonly seccomp?: SecurityProfile;
  readonly apparmor?: SecurityProfile;
  /** The deprecated string form of `apparmor` (`runtime/default`, `unconfined`, `localhost/<name>`), which containerd 1.6 reads. */
  readonly apparmorProfile?: string;
}

/** `runtime.v1.LinuxContainerResources` (cgroup settings). */
export interface LinuxContainerResources {
  readonly cpuPeriod?: number;
  readonly cpuQuota?: number;
  readonly cpuShares?: number;
  readonly memoryLimitInBytes?: number;
  readonly oomScoreAdj?: number;
}

/** `runtime.v1.PodSandboxConfig`: what a pod's sandbox (network namespace, pause container) is made of. */
export interface PodSandboxConfig {
  readonly metadata: { readonly name: string; readonly uid: string; readonly namespace: string; readonly attempt?: number };
  readonly hostname?: string;
  /** Directory of the pod's container logs; each container's `logPath` is relative to it. */
  readonly logDirectory?: string;
  readonly dnsConfig?: { readonly servers?: readonly string[]; readonly searches?: readonly string[]; readonly options?: readonly string[] };
  readonly portMappings?: readonly { readonly protocol?: 'TCP' | 'UDP' | 'SCTP'; readonly containerPort: number; readonly hostPort?: number; readonly hostIp?: string }[];
  readonly labels?: StringMap;
  readonly annotations?: StringMap;
  readonly linux?: {
    readonly cgroupParent?: string;
    readonly sysctls?: StringMap;
    readonly securityContext?: LinuxSandboxSecurityContext;
  };
}

/** `runtime.v1.MountPropagation`: private (`rprivate`), host to container (`rslave`), bidirectional (`rshared`). */
export type CriMountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';

/** `runtime.v1.Mount`: a host path bind-mounted into a container (symlinks of `hostPath` followed by the runtime). */
export interface CriMount {
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readonly?: boolean;
  readonly selinuxRelabel?: boolean;
  readonly propagation?: CriMountPropagation;
}

/** `runtime.v1.ContainerConfig`. */
export interface ContainerConfig {
  readonly metadata: { readonly name: string; readonly attempt?: number };
  readonly image: { readonly image: string };
  /** Replaces the image's entrypoint (Kubernetes `command`). */
  readonly command?: readonly string[];
  /** Replaces the image's cmd (Kubernetes `args`). */
  readonly args?: readonly string[];
  readonly workingDir?: string;
  readonly envs?: readonly { readonly key: string; readonly value: string }[];
  readonly mounts?: readonly CriMount[];
  readonly labels?: StringMap;
  readonly annotations?: StringMap;
  /** Relative to the sandbox's `logDirectory`. */
  readonly logPath?: string;
  readonly stdin?: boolean;
  readonly stdinOnce?: boolean;
  readonly tty?: boolean;
  readonly linux?: {
    readonly resources?: LinuxContainerResources;
    readonly securityContext?: LinuxContainerSecurityContext;
  };
}

/** `runtime.v1.AuthConfig`: registry credentials of one pull (from `imagePullSecrets`). */
export interface AuthConfig {
  readonly username?: string;
  readonly password?: string;
  readonly auth?: string;
  readonly serverAddress?: string;
  readonly identityToken?: string;
  readonly registryToken?: string;
}

/** What the runtime says it is. */
export interface CriVersion {
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

/** A sandbox's state and addresses. */
export interface PodSandboxStatus {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly attempt: number;
  readonly state: 'ready' | 'notready';
  readonly createdAt: number;
  /** The pod's IP from CNI; undefined for a host-network sandbox or one whose network is torn down. */
  readonly ip?: string;
  readonly additionalIps: readonly string[];
  readonly labels: StringMap;
  readonly annotations: StringMap;
}

/** One sandbox of `listPodSandboxes`. */
export interface PodSandboxSummary {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly attempt: number;
  readonly state: 'ready' | 'notready';
  readonly createdAt: number;
  readonly labels: StringMap;
}

/** A container's state, as kubelet reads it (Kubernetes' waiting/running/terminated come from these). */
export type ContainerState =
  | { readonly type: 'created' }
  | { readonly type: 'running'; readonly startedAt: number }
  | {
      readonly type: 'exited';
      readonly startedAt: number;
      readonly finishedAt: number;
      readonly exitCode: number;
      /** `Completed`, `Error`, `OOMKilled` … as the runtime names it. */
      readonly reason: string;
      readonly message: string;
    }
  | { readonly type: 'unknown'; readonly reason: string; readonly message: string };

/** `ContainerStatus`, normalized. */
export interface ContainerStatus {
  readonly id: string;
  readonly name: string;
  readonly attempt: number;
  readonly state: ContainerState;
  readonly createdAt: number;
  readonly image: string;
  readonly imageRef: string;
  /** Absolute path of the container's log file (CRI format: `<time> stdout|stderr F|P <text>`). */
  readonly logPath: string;
  readonly labels: StringMap;
  readonly annotations: StringMap;
}

/** One container of `listContainers`. */
export interface ContainerSummary {
  readonly id: string;
  readonly podSandboxId: string;
  readonly name: string;
  readonly attempt: number;
  readonly state: ContainerState['type'];
  readonly createdAt: number;
  readonly image: string;
  readonly imageRef: string;
  readonly labels: StringMap;
}

/** A locally present image. */
export interface ImageInfo {
  readonly id: string;
  readonly repoTags: readonly string[];
  readonly repoDigests: readonly string[];
  readonly sizeBytes: number;
  /** The image's numeric user, if its config names one by number. */
  readonly uid?: number;
  /** The image's user, if it names one by name. */
  readonly username: string;
}

/** A container's resource use at `timestamp` (ms). Absent figures are undefined. */
export interface ContainerStats {
  readonly id: string;
  readonly name: string;
  readonly timestamp: number;
  readonly cpuUsageCoreNanoSeconds?: number;
  readonly memoryWorkingSetBytes?: number;
  readonly memoryUsageBytes?: number;
  readonly memoryRssBytes?: number;
}

/** The output of a command run in a container with `execSync`. */
export interface ExecSyncResult {
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly exitCode: number;
}

/** Filters of `listContainers`: all given ones must match. */
export interface ContainerFilter {
  readonly id?: string;
  readonly podSandboxId?: string;
  readonly state?: ContainerState['type'];
  readonly labelSelector?: StringMap;
}

/** Filters of `listPodSandboxes`: all given ones must match. */
export interface PodSandboxFilter {
  readonly id?: string;
  readonly state?: 'ready' | 'notready';
  readonly labelSelector?: StringMap;
}

/** A CRI runtime, call by call. Calls run concurrently; each rejects with a {@link CriError}. */
export interface CriClient {
  version(): Promise<CriVersion>;
  /** Creates and starts a sandbox (network namespace with a CNI address, pause container); resolves with its id. */
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  /** Stops the sandbox and every container in it and releases its network. Idempotent. */
  stopPodSandbox(sandboxId: string): Promise<void>;
  /** Removes a sandbox and its containers (forcibly stopping them). Idempotent. */
  removePodSandbox(sandboxId: string): Promise<void>;
  podSandboxStatus(sandboxId: string): Promise<PodSandboxStatus>;
  listPodSandboxes(filter?: PodSandboxFilter): Promise<readonly PodSandboxSummary[]>;
  /** Pulls an image (with registry credentials if given); resolves with its reference (`sha256:…`). */
  pullImage(image: string, opts?: { auth?: AuthConfig; sandboxConfig?: PodSandboxConfig }): Promise<string>;
  /** The image if it is present on the node, else undefined. */
  imageStatus(image: string): Promise<ImageInfo | undefined>;
  /** Creates a container in a sandbox (`sandboxConfig` is the one the sandbox was run with); resolves with its id. */
  createContainer(sandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /** Sends the stop signal, then SIGKILL after `timeoutSeconds` (0: at once). Idempotent. */
  stopContainer(containerId: string, timeoutSeconds: number): Promise<void>;
  /** Removes a container (forcibly stopping it). Idempotent. */
  removeContainer(containerId: string): Promise<void>;
  containerStatus(containerId: string): Promise<ContainerStatus>;
  listContainers(filter?: ContainerFilter): Promise<readonly ContainerSummary[]>;
  containerStats(containerId: string): Promise<ContainerStats>;
  /** Runs a command in a running container and waits for it (probes); `timeoutSeconds` 0 means none. */
  execSync(containerId: string, cmd: readonly string[], timeoutSeconds: number): Promise<ExecSyncResult>;
  /** Closes the connection; calls after it reject. */
  close(): void;
}

/** The proto-loader options the answers' parsing below relies on (int64 as strings, enums as names). */
const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

/** Proto messages as proto-loader decodes them: every field present, int64 as decimal strings. */
type Wire = Record<string, unknown>;

type UnaryCallback = (err: grpc.ServiceError | null, response: Wire) => void;
type UnaryMethod = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, callback: UnaryCallback) => grpc.ClientUnaryCall;
type ServiceClient = grpc.Client & Record<string, UnaryMethod>;
type ServiceConstructor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => ServiceClient;

let loaded: { runtime: ServiceConstructor; image: ServiceConstructor } | undefined;

function loadServices(): { runtime: ServiceConstructor; image: ServiceConstructor } {
  if (loaded !== undefined) return loaded;
  const definition = protoLoader.loadSync(CRI_PROTO_PATH, LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(definition) as unknown as { runtime: { v1: { RuntimeService: ServiceConstructor; ImageService: ServiceConstructor } } };
  loaded = { runtime: pkg.runtime.v1.RuntimeService, image: pkg.runtime.v1.ImageService };
  return loaded;
}

/** The gRPC target of an endpoint, or a {@link KubeletConfigError}. */
export function criTarget(endpoint: string): string {
  if (endpoint.startsWith('unix:///')) return endpoint;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new KubeletConfigError(`CRI endpoint "${endpoint}" is neither unix:///PATH nor an absolute socket path`, { endpoint });
}

function grpcCodeName(code: number | undefined): GrpcCode {
  return code !== undefined && code >= 0 && code < GRPC_CODES.length ? GRPC_CODES[code]! : 'UNKNOWN';
}

/** Nanoseconds since the epoch (int64 as a string) → ms. */
function nanosToMs(nanos: unknown): number {
  return typeof nanos === 'string' && nanos !== '' ? Number(BigInt(nanos) / 1_000_000n) : 0;
}

/** A `UInt64Value` wrapper message → number, or undefined when absent. */
function uint64Value(wrapper: unknown): number | undefined {
  const value = (wrapper as { value?: string } | null | undefined)?.value;
  return value === undefined ? undefined : Number(value);
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const num = (value: unknown): number => (typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : 0);
const strings = (value: unknown): readonly string[] => (Array.isArray(value) ? value.map(str) : []);
const stringMap = (value: unknown): StringMap => (value !== null && typeof value === 'object' ? (value as StringMap) : {});
const message = (value: unknown): Wire => (value !== null && typeof value === 'object' ? (value as Wire) : {});

const CONTAINER_STATES = { CONTAINER_CREATED: 'created', CONTAINER_RUNNING: 'running', CONTAINER_EXITED: 'exited', CONTAINER_UNKNOWN: 'unknown' } as const;
type WireContainerState = keyof typeof CONTAINER_STATES;
const WIRE_CONTAINER_STATES = Object.fromEntries(Object.entries(CONTAINER_STATES).map(([wire, state]) => [state, wire])) as Record<ContainerState['type'], WireContainerState>;

function containerStateType(wire: unknown): ContainerState['type'] {
  return CONTAINER_STATES[wire as WireContainerState] ?? 'unknown';
}

function sandboxState(wire: unknown): 'ready' | 'notready' {
  return wire === 'SANDBOX_READY' ? 'ready' : 'notready';
}

function containerState(status: Wire): ContainerState {
  const type = containerStateType(status['state']);
  switch (type) {
    case 'created':
      return { type };
    case 'running':
      return { type, startedAt: nanosToMs(status['startedAt']) };
    case 'exited':
      return {
        type,
        startedAt: nanosToMs(status['startedAt']),
        finishedAt: nanosToMs(status['finishedAt']),
        exitCode: num(status['exitCode']),
        reason: str(status['reason']),
        message: str(status['message']),
      };
    case 'unknown':
      return { type, reason: str(status['reason']), message: str(status['message']) };
    default:
      return assertNever(type, 'container state');
  }
}

function parseContainerStatus(status: Wire): ContainerStatus {
  const metadata = message(status['metadata']);
  return {
    id: str(status['id']),
    name: str(metadata['name']),
    attempt: num(metadata['attempt']),
    state: containerState(status),
    createdAt: nanosToMs(status['createdAt']),
    image: str(message(status['image'])['image']),
    imageRef: str(status['imageRef']),
    logPath: str(status['logPath']),
    labels: stringMap(status['labels']),
    annotations: stringMap(status['annotations']),
  };
}

function parseSandboxStatus(status: Wire): PodSandboxStatus {
  const metadata = message(status['metadata']);
  const network = message(status['network']);
  const ip = str(network['ip']);
  return {
    id: str(status['id']),
    name: str(metadata['name']),
    namespace: str(metadata['namespace']),
    uid: str(metadata['uid']),
    attempt: num(metadata['attempt']),
    state: sandboxState(status['state']),
    createdAt: nanosToMs(status['createdAt']),
    ...(ip === '' ? {} : { ip }),
    additionalIps: Array.isArray(network['additionalIps']) ? network['additionalIps'].map((extra) => str(message(extra)['ip'])) : [],
    labels: stringMap(status['labels']),
    annotations: stringMap(status['annotations']),
  };
}

/**
 * Connects to a CRI runtime (lazily: the first call connects). The endpoint is checked at
 * once (`KubeletConfigError`); an unreachable runtime makes calls fail with a retriable
 * `CriError` (UNAVAILABLE).
 */
export function createCriClient(opts: CriClientOptions): CriClient {
  const target = criTarget(opts.endpoint);
  const callTimeoutMs = opts.callTimeoutMs ?? 30_000;
  const pullTimeoutMs = opts.pullTimeoutMs ?? 300_000;
  if (!(callTimeoutMs > 0) || !(pullTimeoutMs > 0)) throw new KubeletConfigError('CRI call and pull timeouts must be > 0', { callTimeoutMs, pullTimeoutMs });
  const services = loadServices();
  const credentials = grpc.credentials.createInsecure();
  const runtimeService = new services.runtime(target, credentials);
  const imageService = new services.image(target, credentials, { channelOverride: runtimeService.getChannel() });

  function call(service: ServiceClient, method: string, request: unknown, timeoutMs = callTimeoutMs): Promise<Wire> {
    const rpc = service[method];
    if (rpc === undefined) throw new KubeletConfigError(`the CRI proto has no method ${method}`, { method });
    const started = performance.now();
    return new Promise((resolve, reject) => {
      rpc.call(service, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, response) => {
        opts.onOperation?.(method, err !== null, (performance.now() - started) / 1000);
        if (err === null) resolve(response);
        else reject(new CriError(grpcCodeName(err.code), method, err.details || err.message, { endpoint: target }, { cause: err }));
      });
    });
  }
  const runtime = (method: string, request: unknown, timeoutMs?: number) => call(runtimeService, method, request, timeoutMs);
  const image = (method: string, request: unknown, timeoutMs?: number) => call(imageService, method, request, timeoutMs);

  return {
    async version() {
      const response = await runtime('version', { version: 'v1' });
      return {
        version: str(response['version']),
        runtimeName: str(response['runtimeName']),
        runtimeVersion: str(response['runtimeVersion']),
        runtimeApiVersion: str(response['runtimeApiVersion']),
      };
    },
    async runPodSandbox(config, runtimeHandler = '') {
      return str((await runtime('runPodSandbox', { config, runtimeHandler }))['podSandboxId']);
    },
    async stopPodSandbox(podSandboxId) {
      await runtime('stopPodSandbox', { podSandboxId });
    },
    async removePodSandbox(podSandboxId) {
      await runtime('removePodSandbox', { podSandboxId });
    },
    async podSandboxStatus(podSandboxId) {
      return parseSandboxStatus(message((await runtime('podSandboxStatus', { podSandboxId }))['status']));
    },
    async listPodSandboxes(filter = {}) {
      const request = {
        filter: {
          id: filter.id ?? '',
          ...(filter.state === undefined ? {} : { state: { state: filter.state === 'ready' ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY' } }),
          labelSelector: filter.labelSelector ?? {},
        },
      };
      const items = (await runtime('listPodSandbox', request))['items'];
      return (Array.isArray(items) ? items : []).map((item: Wire) => {
        const metadata = message(item['metadata']);
        return {
          id: str(item['id']),
          name: str(metadata['name']),
          namespace: str(metadata['namespace']),
          uid: str(metadata['uid']),
          attempt: num(metadata['attempt']),
          state: sandboxState(item['state']),
          createdAt: nanosToMs(item['createdAt']),
          labels: stringMap(item['labels']),
        };
      });
    },
    async pullImage(name, pullOpts = {}) {
      const request = { image: { image: name }, ...(pullOpts.auth ? { auth: pullOpts.auth } : {}), ...(pullOpts.sandboxConfig ? { sandboxConfig: pullOpts.sandboxConfig } : {}) };
      return str((await image('pullImage', request, pullTimeoutMs))['imageRef']);
    },
    async imageStatus(name) {
      const found = (await image('imageStatus', { image: { image: name } }))['image'];
      if (found === null || found === undefined) return undefined;
      const info = message(found);
      const uid = uint64Value(info['uid']);
      return {
        id: str(info['id']),
        repoTags: strings(info['repoTags']),
        repoDigests: strings(info['repoDigests']),
        sizeBytes: num(info['size']),
        ...(uid === undefined ? {} : { uid }),
        username: str(info['username']),
      };
    },
    async createContainer(podSandboxId, config, sandboxConfig) {
      return str((await runtime('createContainer', { podSandboxId, config, sandboxConfig }))['containerId']);
    },
    async startContainer(containerId) {
      await runtime('startContainer', { containerId });
    },
    async stopContainer(containerId, timeoutSeconds) {
      // The call lasts up to the grace period: its deadline is the period plus the usual one.
      await runtime('stopContainer', { containerId, timeout: timeoutSeconds }, timeoutSeconds * 1000 + callTimeoutMs);
    },
    async removeContainer(containerId) {
      await runtime('removeContainer', { containerId });
    },
    async containerStatus(containerId) {
      return parseContainerStatus(message((await runtime('containerStatus', { containerId }))['status']));
    },
    async listContainers(filter = {}) {
      const request = {
        filter: {
          id: filter.id ?? '',
          podSandboxId: filter.podSandboxId ?? '',
          ...(filter.state === undefined ? {} : { state: { state: WIRE_CONTAINER_STATES[filter.state] } }),
          labelSelector: filter.labelSelector ?? {},
        },
      };
      const containers = (await runtime('listContainers', request))['containers'];
      return (Array.isArray(containers) ? containers : []).map((item: Wire) => {
        const metadata = message(item['metadata']);
        return {
          id: str(item['id']),
          podSandboxId: str(item['podSandboxId']),
          name: str(metadata['name']),
          attempt: num(metadata['attempt']),
          state: containerStateType(item['state']),
          createdAt: nanosToMs(item['createdAt']),
          image: str(message(item['image'])['image']),
          imageRef: str(item['imageRef']),
          labels: stringMap(item['labels']),
        };
      });
    },
    async containerStats(containerId) {
      const stats = message((await runtime('containerStats', { containerId }))['stats']);
      const attributes = message(stats['attributes']);
      const cpu = message(stats['cpu']);
      const memory = message(stats['memory']);
      const cpuUsage = uint64Value(cpu['usageCoreNanoSeconds']);
      const workingSet = uint64Value(memory['workingSetBytes']);
      const usage = uint64Value(memory['usageBytes']);
      const rss = uint64Value(memory['rssBytes']);
      return {
        id: str(attributes['id']),
        name: str(message(attributes['metadata'])['name']),
        timestamp: nanosToMs(memory['timestamp'] ?? cpu['timestamp']),
        ...(cpuUsage === undefined ? {} : { cpuUsageCoreNanoSeconds: cpuUsage }),
        ...(workingSet === undefined ? {} : { memoryWorkingSetBytes: workingSet }),
        ...(usage === undefined ? {} : { memoryUsageBytes: usage }),
        ...(rss === undefined ? {} : { memoryRssBytes: rss }),
      };
    },
    async execSync(containerId, cmd, timeoutSeconds) {
      const response = await runtime('execSync', { containerId, cmd, timeout: timeoutSeconds }, timeoutSeconds > 0 ? timeoutSeconds * 1000 + callTimeoutMs : callTimeoutMs);
      const bytes = (value: unknown) => (Buffer.isBuffer(value) ? value : Buffer.alloc(0));
      return { stdout: bytes(response['stdout']), stderr: bytes(response['stderr']), exitCode: num(response['exitCode']) };
    },
    close() {
      imageService.close();
      runtimeService.close();
    },
  };
}
