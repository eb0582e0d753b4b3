/** Forwarding rules shared by the nftables rendering tests and the network-namespace test. */
import type { ServicePortRule } from '../table.ts';

/** A service with two endpoints and a NodePort. */
export const web: ServicePortRule = {
  serviceKey: 'default/web',
  portName: 'http',
  protocol: 'TCP',
  clusterIP: '127.96.0.10',
  port: 80,
  nodePort: 30080,
  endpoints: [
    { ip: '127.100.0.2', port: 8080 },
    { ip: '127.100.0.3', port: 8080 },
  ],
};

/** A service without endpoints. */
export const idle: ServicePortRule = {
  serviceKey: 'default/idle',
  portName: '',
  protocol: 'TCP',
  clusterIP: '127.96.0.11',
  port: 80,
  nodePort: null,
  endpoints: [],
};
