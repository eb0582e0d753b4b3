/**
 * Kinds that kube-apiserver serves from another kind's storage: events.k8s.io/v1 Event is
 * a second view of core/v1 Event (pkg/registry/core/event serves both; an event created
 * through one group is read through the other, converted). Such a kind has no record of
 * its own in the log: its objects are stored, keyed and folded as the kind it maps to.
 * By kind ref (see refs.ts): the served kind → the stored kind.
 */
export const STORED_AS: ReadonlyMap<string, string> = new Map([['Event.events.k8s.io', 'Event']]);

/** The ref of the kind whose records hold the objects of the kind `ref` names. */
export const storageRefOf = (ref: string): string => STORED_AS.get(ref) ?? ref;
