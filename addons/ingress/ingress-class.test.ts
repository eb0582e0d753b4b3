/** Which IngressClass the controller creates at start, given the classes the cluster has. */
import { describe, expect, it } from 'vitest';
import type { IngressClass } from '../../schemas/index.ts';
import { INGRESS_CLASS_NAME, ingressClassToCreate } from './ingress-class.ts';
import { DEFAULT_CLASS_ANNOTATION, INGRESS_CONTROLLER_NAME } from './rules.ts';

const klass = (name: string, controller: string, isDefault = false): IngressClass => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IngressClass',
  metadata: { name, ...(isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } } : {}) },
  spec: { controller },
});

describe('ingressClassToCreate', () => {
  it('creates the default class `logplane` in a cluster with no class', () => {
    const made = ingressClassToCreate([]);
    expect(made?.metadata.name).toBe(INGRESS_CLASS_NAME);
    expect(made?.spec?.controller).toBe(INGRESS_CONTROLLER_NAME);
    expect(made?.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION]).toBe('true');
  });

  it('creates nothing when a class (of any name) already names this controller', () => {
    expect(ingressClassToCreate([klass('mine', INGRESS_CONTROLLER_NAME)])).toBeUndefined();
  });

  it('does not take the default from another controller’s default class', () => {
    const made = ingressClassToCreate([klass('nginx', 'k8s.io/ingress-nginx', true)]);
    expect(made?.metadata.name).toBe(INGRESS_CLASS_NAME);
    expect(made?.metadata.annotations).toBeUndefined();
  });

  it('is the default when the other classes are not', () => {
    expect(ingressClassToCreate([klass('nginx', 'k8s.io/ingress-nginx')])?.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION]).toBe('true');
  });
});
