/**
 * The Events of a StatefulSet's decision (kube's stateful_pod_control recordPodEvent /
 * recordClaimEvent) on the StatefulSet: SuccessfulCreate "create Pod web-0 in StatefulSet
 * web successful", SuccessfulDelete "delete Pod web-0 in StatefulSet web successful", and
 * SuccessfulCreate "create Claim www-web-0 Pod web-0 in StatefulSet web success".
 */
import type { Narrator } from '../events/index.ts';

/** The pod a claim of the set is for (claims are named `<template>-<set>-<ordinal>`). */
const podOfClaim = (setName: string, claimName: string): string => {
  const ordinal = /-(\d+)$/.exec(claimName)?.[1];
  return ordinal === undefined ? '' : `${setName}-${ordinal}`;
};

/** Records the pod and claim creates and the pod deletes of the decision on the StatefulSet `key`. */
export const narrateStatefulSet: Narrator = (key, view, decision, recorder) => {
  const set = view.get(key);
  if (set?.kind !== 'StatefulSet') return;
  const name = set.metadata.name;
  for (const command of decision.commands) {
    if (command.type === 'ObjectCreated' && command.object.kind === 'Pod') {
      recorder.event(set, 'Normal', 'SuccessfulCreate', `create Pod ${command.object.metadata.name} in StatefulSet ${name} successful`);
    } else if (command.type === 'ObjectCreated' && command.object.kind === 'PersistentVolumeClaim') {
      const claim = command.object.metadata.name;
      recorder.event(set, 'Normal', 'SuccessfulCreate', `create Claim ${claim} Pod ${podOfClaim(name, claim)} in StatefulSet ${name} success`);
    } else if (command.type === 'ObjectDeleted' && command.kind === 'Pod') {
      recorder.event(set, 'Normal', 'SuccessfulDelete', `delete Pod ${command.name} in StatefulSet ${name} successful`);
    }
  }
};
