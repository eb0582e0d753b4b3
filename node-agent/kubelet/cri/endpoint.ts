/** containerd's default CRI socket (kubelet's `--container-runtime-endpoint` for containerd), apart from the CRI client so flags parse without loading gRPC. */
export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';
