/**
 * The review resources kube serves in `authorization.k8s.io/v1` and
 * `authentication.k8s.io/v1`: create-only, never stored, answered from the authorizer and
 * the authenticator. They are not kinds of the log (the kind registry holds stored kinds),
 * so routing and discovery read them from here.
 */
import type { GroupVersion } from '../resources.ts';

export interface ReviewResource extends GroupVersion {
  readonly plural: string;
  readonly singular: string;
  readonly kind: ReviewKind;
  /** Served under `namespaces/{ns}/` (LocalSubjectAccessReview). */
  readonly namespaced: boolean;
}

export const REVIEW_KINDS = [
  'SelfSubjectReview',
  'TokenReview',
  'LocalSubjectAccessReview',
  'SelfSubjectAccessReview',
  'SelfSubjectRulesReview',
  'SubjectAccessReview',
] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];

const review = (group: string, kind: ReviewKind, namespaced = false): ReviewResource => ({
  group,
  version: 'v1',
  kind,
  singular: kind.toLowerCase(),
  plural: `${kind.toLowerCase()}s`,
  namespaced,
});

/** In kube's discovery order. */
export const REVIEW_RESOURCES: readonly ReviewResource[] = [
  review('authentication.k8s.io', 'SelfSubjectReview'),
  review('authentication.k8s.io', 'TokenReview'),
  review('authorization.k8s.io', 'LocalSubjectAccessReview', true),
  review('authorization.k8s.io', 'SelfSubjectAccessReview'),
  review('authorization.k8s.io', 'SelfSubjectRulesReview'),
  review('authorization.k8s.io', 'SubjectAccessReview'),
];

/** The group/versions only review resources live in. */
export const REVIEW_GROUP_VERSIONS: readonly GroupVersion[] = REVIEW_RESOURCES.reduce<GroupVersion[]>((served, r) => {
  if (!served.some((gv) => gv.group === r.group && gv.version === r.version)) served.push({ group: r.group, version: r.version });
  return served;
}, []);

export const findReviewResource = (group: string, version: string, plural: string, namespaced: boolean): ReviewResource | undefined =>
  REVIEW_RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural && r.namespaced === namespaced);
