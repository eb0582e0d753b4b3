/** The apiserver: Kubernetes-shaped REST and watch over the log. */
export { actorOf, formatTokenFile, loadTokenFile, parseTokenFile, type TokenFile, type UserInfo } from './auth.ts';
export { AUTHORIZATION_MODES, parseAuthorizationModes, type AuthorizationMode } from './authorization/modes.ts';
export type { PodLogRequest, PodLogsHook } from './context.ts';
export type { NodeResourceUsage, ResourceUsageHook } from './metrics-api.ts';
export { ApiError, apiErrors } from './errors.ts';
export { kubeconfigYaml, writeKubeconfig, type KubeconfigOptions } from './kubeconfig.ts';
export { DEFAULT_NAMESPACES } from './namespaces.ts';
export { RESOURCES, type ResourceInfo } from './resources.ts';
export { createApiServer, type ApiExtension, type ApiServer, type ApiServerOptions } from './server.ts';
export type { Status, StatusCause } from './status.ts';
export {
  generateCertificateAuthority,
  generateSelfSignedCertificate,
  issueCertificate,
  type CertificateUsage,
  type IssueOptions,
  type SelfSignedOptions,
  type TlsMaterial,
} from './tls.ts';
