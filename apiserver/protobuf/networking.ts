/** Field numbers of k8s.io/api/networking/v1 generated.proto messages (kubectl create ingress). */
import { f, list, m, OBJECT, zero, type Message } from './spec.ts';

export const NETWORKING: Readonly<Record<string, Message>> = {
  Ingress: OBJECT('IngressSpec', 'IngressStatus'),
  IngressSpec: {
    1: f('defaultBackend', m('IngressBackend')), 2: f('tls', m('IngressTLS'), list), 3: f('rules', m('IngressRule'), list),
    4: f('ingressClassName', 'string', zero),
  },
  IngressBackend: { 3: f('resource', m('TypedLocalObjectReference')), 4: f('service', m('IngressServiceBackend')) },
  IngressServiceBackend: { 1: f('name', 'string', zero), 2: f('port', m('ServiceBackendPort')) },
  ServiceBackendPort: { 1: f('name', 'string'), 2: f('number', 'int32') },
  IngressTLS: { 1: f('hosts', 'string', list), 2: f('secretName', 'string') },
  // IngressRuleValue is embedded in IngressRule (`json:",inline"`).
  IngressRule: { 1: f('host', 'string'), 2: f('ingressRuleValue', m('IngressRuleValue'), { inline: true }) },
  IngressRuleValue: { 1: f('http', m('HTTPIngressRuleValue')) },
  HTTPIngressRuleValue: { 1: f('paths', m('HTTPIngressPath'), list) },
  HTTPIngressPath: { 1: f('path', 'string'), 2: f('backend', m('IngressBackend')), 3: f('pathType', 'string', zero) },
  IngressStatus: { 1: f('loadBalancer', m('IngressLoadBalancerStatus')) },
  IngressLoadBalancerStatus: { 1: f('ingress', m('IngressLoadBalancerIngress'), list) },
  IngressLoadBalancerIngress: { 1: f('ip', 'string'), 2: f('hostname', 'string'), 4: f('ports', m('IngressPortStatus'), list) },
  IngressPortStatus: { 1: f('port', 'int32', zero), 2: f('protocol', 'string', zero), 3: f('error', 'string', zero) },
};
