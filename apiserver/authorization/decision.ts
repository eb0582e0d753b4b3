/**
 * kube's authorizer interface (`k8s.io/apiserver/pkg/authorization/authorizer`): a decision
 * per request (allow, deny, or no opinion so the next authorizer decides), and the rules a
 * user has in a namespace (what SelfSubjectRulesReview answers).
 */
import type { Attributes, Subject } from './attributes.ts';
import type { PolicyRule } from './rules.ts';

export type Decision =
  | { readonly type: 'allow'; readonly reason: string }
  | { readonly type: 'deny'; readonly reason: string }
  | { readonly type: 'noOpinion'; readonly reason: string };

/** What a SelfSubjectRulesReview reports (resource rules carry resources, non-resource rules URLs). */
export interface RulesReview {
  readonly resourceRules: readonly PolicyRule[];
  readonly nonResourceRules: readonly PolicyRule[];
  /** True when an authorizer cannot list its rules (kube's webhook); RBAC's lists are complete. */
  readonly incomplete: boolean;
  readonly evaluationError?: string;
}

export interface Authorizer {
  authorize(attributes: Attributes): Decision;
  rulesFor(user: Subject, namespace: string): RulesReview;
}

/** Everything, as the rules kube's AlwaysAllow and system:masters authorizers list. */
export const ALL_RULES: RulesReview = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false,
};

const NO_RULES: RulesReview = { resourceRules: [], nonResourceRules: [], incomplete: false };

/** kube's `AlwaysAllow` mode. */
export const alwaysAllow: Authorizer = { authorize: () => ({ type: 'allow', reason: '' }), rulesFor: () => ALL_RULES };

/** kube's `AlwaysDeny` mode. */
export const alwaysDeny: Authorizer = { authorize: () => ({ type: 'deny', reason: '' }), rulesFor: () => ({ ...NO_RULES, incomplete: true }) };

/** kube's superuser group: its members may do everything, whatever the modes. */
export const SYSTEM_MASTERS = 'system:masters';

/** Allows members of `groups`, no opinion on anyone else (kube's `NewPrivilegedGroups`). */
export const privilegedGroups = (...groups: readonly string[]): Authorizer => ({
  authorize: (attributes) => (attributes.user.groups.some((g) => groups.includes(g)) ? { type: 'allow', reason: '' } : { type: 'noOpinion', reason: '' }),
  rulesFor: (user) => (user.groups.some((g) => groups.includes(g)) ? ALL_RULES : NO_RULES),
});

/**
 * Asks each authorizer in turn; the first allow or deny decides, reasons of those with no
 * opinion are joined (kube's union authorizer). Rules are the concatenation of all.
 */
export const unionAuthorizer = (authorizers: readonly Authorizer[]): Authorizer => ({
  authorize: (attributes) => {
    const reasons: string[] = [];
    for (const authorizer of authorizers) {
      const decision = authorizer.authorize(attributes);
      if (decision.type !== 'noOpinion') return decision;
      if (decision.reason !== '') reasons.push(decision.reason);
    }
    return { type: 'noOpinion', reason: reasons.join('\n') };
  },
  rulesFor: (user, namespace) => {
    const reviews = authorizers.map((authorizer) => authorizer.rulesFor(user, namespace));
    const errors = reviews.flatMap((review) => (review.evaluationError ? [review.evaluationError] : []));
    return {
      resourceRules: reviews.flatMap((review) => review.resourceRules),
      nonResourceRules: reviews.flatMap((review) => review.nonResourceRules),
      incomplete: reviews.some((review) => review.incomplete),
      ...(errors.length > 0 ? { evaluationError: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` } : {}),
    };
  },
});
