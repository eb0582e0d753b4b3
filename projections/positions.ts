/**
 * Log positions and resourceVersions.
 *
 * A projection folds two topics (desired, observed) of P partitions each. Its position is
 * a vector of 2P cursors (the next offset to apply): desired partitions first, then
 * observed. As a resourceVersion it is the cursors joined by dots, so with one partition a
 * list's resourceVersion reads "42.17" (42 desired events and 17 observed events applied).
 *
 * An object's own resourceVersion uses the same format but counts only the events that
 * touched it, in its own partition: "D.O" where D = 1 + offset of the last desired event
 * that changed it and O = 1 + offset of the last observed one (0 if none). It is a pure
 * function of the log, so every replica of the projection serves the same value.
 */
import type { Topic } from '../log/port.ts';
import { ProjectionError } from './errors.ts';

/** The topics a projection folds, in vector order. */
export const FOLDED_TOPICS = ['desired', 'observed'] as const satisfies readonly Topic[];
export type FoldedTopic = (typeof FOLDED_TOPICS)[number];

/** Per folded topic, the next offset to apply for each partition. */
export interface PositionVector {
  readonly desired: readonly number[];
  readonly observed: readonly number[];
}

/** The version of one object: offsets (+1) of the last desired and observed events that touched it. */
export interface ObjectVersion {
  readonly desired: number;
  readonly observed: number;
}

export const zeroVector = (partitions: number): PositionVector => ({
  desired: Array.from({ length: partitions }, () => 0),
  observed: Array.from({ length: partitions }, () => 0),
});

export const formatVector = (v: PositionVector): string => [...v.desired, ...v.observed].join('.');

export const formatObjectVersion = (v: ObjectVersion): string => `${v.desired}.${v.observed}`;

const parseNumbers = (rv: string): number[] | undefined => {
  if (!/^\d+(\.\d+)*$/.test(rv)) return undefined;
  return rv.split('.').map(Number);
};

/** Parses a resourceVersion of an object ("D.O"); undefined when it is not one. */
export const parseObjectVersion = (rv: string): ObjectVersion | undefined => {
  const numbers = parseNumbers(rv);
  if (numbers?.length !== 2) return undefined;
  return { desired: numbers[0]!, observed: numbers[1]! };
};

/**
 * Parses a list/watch resourceVersion for a log of `partitions` partitions.
 * Throws a `ProjectionError` naming the value when it is malformed.
 */
export const parseVector = (rv: string, partitions: number): PositionVector => {
  const numbers = parseNumbers(rv);
  if (numbers?.length !== partitions * 2) {
    throw new ProjectionError(
      `resourceVersion "${rv}" is not a position of this cluster: expected ${partitions * 2} dot-separated offsets`,
      false,
      { resourceVersion: rv },
    );
  }
  return { desired: numbers.slice(0, partitions), observed: numbers.slice(partitions) };
};

/** True when every cursor of `a` is ≥ the matching cursor of `b`. */
export const vectorCovers = (a: PositionVector, b: PositionVector): boolean =>
  FOLDED_TOPICS.every((t) => b[t].every((offset, p) => (a[t][p] ?? 0) >= offset));

export const topicIndex = (topic: FoldedTopic): number => FOLDED_TOPICS.indexOf(topic);
