/**
 * The review APIs, answered and not stored, as kube's registries
 * (`pkg/registry/authorization/*`, `pkg/registry/authentication/*`) answer them:
 * SelfSubjectAccessReview and SubjectAccessReview ("may this user do that?", what
 * `kubectl auth can-i` asks), SelfSubjectRulesReview (`kubectl auth can-i --list`),
 * SelfSubjectReview (`kubectl auth whoami`) and TokenReview. Each replies 201 with the
 * request object and its status.
 */
import { assertNever } from '../../schemas/index.ts';
import type { UserInfo } from '../auth.ts';
import { json, type Reply } from '../context.ts';
import { ApiError, apiErrors } from '../errors.ts';
import { CAUSE_TYPES, failureStatus } from '../status.ts';
import type { Attributes, Subject } from './attributes.ts';
import type { Authorizer } from './decision.ts';
import type { ReviewResource } from './review-resources.ts';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const fieldPath = (path: string, field: string): string => (path === '' ? field : `${path}.${field}`);

/** A string field of a review (absent or null: ''); 400 naming the field for anything else. */
const stringField = (object: Json | undefined, field: string, path: string): string => {
  const value = object?.[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw apiErrors.badRequest(`${fieldPath(path, field)}: expected a string, got ${JSON.stringify(value)}`);
  return value;
};

const objectField = (object: Json | undefined, field: string, path: string): Json | undefined => {
  const value = object?.[field];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw apiErrors.badRequest(`${fieldPath(path, field)}: expected an object`);
  return value;
};

const stringList = (object: Json | undefined, field: string, path: string): string[] => {
  const value = object?.[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw apiErrors.badRequest(`${fieldPath(path, field)}: expected a list of strings`);
  return value as string[];
};

/** 422 as kube's `NewInvalid(authorization.Kind(kind), "", errs)`. */
const invalid = (resource: ReviewResource, field: string, value: unknown, detail: string): ApiError => {
  const message = `Invalid value: ${JSON.stringify(value ?? 'null')}: ${detail}`;
  return new ApiError(
    failureStatus('Invalid', `${resource.kind}.${resource.group} "" is invalid: ${field}: ${message}`, {
      group: resource.group,
      kind: resource.kind,
      causes: [{ reason: CAUSE_TYPES.FieldValueInvalid, message, field }],
    }),
  );
};

/** The attributes a review's spec asks about (kube's `ResourceAttributesFrom` / `NonResourceAttributesFrom`). */
const specAttributes = (resource: ReviewResource, spec: Json | undefined, user: Subject): Attributes => {
  const resourceAttributes = objectField(spec, 'resourceAttributes', 'spec');
  const nonResourceAttributes = objectField(spec, 'nonResourceAttributes', 'spec');
  if (resourceAttributes && nonResourceAttributes) {
    throw invalid(resource, 'spec.nonResourceAttributes', nonResourceAttributes, 'cannot be specified in combination with resourceAttributes');
  }
  if (resourceAttributes) {
    const path = 'spec.resourceAttributes';
    const version = stringField(resourceAttributes, 'version', path);
    return {
      type: 'resource',
      user,
      verb: stringField(resourceAttributes, 'verb', path),
      apiGroup: stringField(resourceAttributes, 'group', path),
      apiVersion: version === '' ? '*' : version,
      resource: stringField(resourceAttributes, 'resource', path),
      subresource: stringField(resourceAttributes, 'subresource', path),
      namespace: stringField(resourceAttributes, 'namespace', path),
      name: stringField(resourceAttributes, 'name', path),
    };
  }
  if (nonResourceAttributes) {
    const path = 'spec.nonResourceAttributes';
    return { type: 'nonResource', user, verb: stringField(nonResourceAttributes, 'verb', path), path: stringField(nonResourceAttributes, 'path', path) };
  }
  throw invalid(resource, 'spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified');
};

const accessReviewStatus = (authorizer: Authorizer, attributes: Attributes) => {
  const decision = authorizer.authorize(attributes);
  return { allowed: decision.type === 'allow', ...(decision.type === 'deny' ? { denied: true } : {}), ...(decision.reason !== '' ? { reason: decision.reason } : {}) };
};

const userInfoOf = (user: UserInfo) => ({ username: user.name, ...(user.uid === '' ? {} : { uid: user.uid }), groups: [...user.groups], ...(user.extra ? { extra: user.extra } : {}) });

export interface ReviewContext {
  readonly user: UserInfo;
  /** The namespace of the URL (LocalSubjectAccessReview). */
  readonly namespace: string | undefined;
  readonly authorizer: Authorizer;
  /** The user a bearer token stands for (TokenReview). */
  readonly authenticateToken: (token: string) => Promise<UserInfo | undefined>;
}

/** Answers a create of a review resource with the review's body. */
export const answerReview = async (resource: ReviewResource, body: unknown, ctx: ReviewContext): Promise<Reply> => {
  if (!isObject(body)) throw apiErrors.badRequest(`the request body must be a ${resource.kind} object`);
  const apiVersion = `${resource.group}/${resource.version}`;
  if ((body['kind'] !== undefined && body['kind'] !== resource.kind) || (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion)) {
    throw apiErrors.badRequest(`the body is ${String(body['apiVersion'])}, Kind=${String(body['kind'])}; this endpoint takes ${apiVersion}, Kind=${resource.kind}`);
  }
  const spec = objectField(body, 'spec', '');
  const given = objectField(body, 'metadata', '') ?? {};
  const metadata = resource.namespaced ? { ...given, namespace: ctx.namespace } : given;
  const reply = (status: unknown): Reply => json(201, { kind: resource.kind, apiVersion, metadata, ...(spec ? { spec } : {}), status });
  switch (resource.kind) {
    case 'SelfSubjectAccessReview':
      return reply(accessReviewStatus(ctx.authorizer, specAttributes(resource, spec, ctx.user)));
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const subject: Subject = { name: stringField(spec, 'user', 'spec'), uid: stringField(spec, 'uid', 'spec'), groups: stringList(spec, 'groups', 'spec') };
      if (subject.name === '' && subject.groups.length === 0) throw invalid(resource, 'spec.user', '', 'at least one of user or group must be specified');
      const attributes = specAttributes(resource, spec, subject);
      if (resource.kind === 'LocalSubjectAccessReview') {
        // kube's ValidateLocalSubjectAccessReview, then its REST check of the namespace.
        if (attributes.type === 'nonResource') throw invalid(resource, 'spec.nonResourceAttributes', objectField(spec, 'nonResourceAttributes', 'spec'), 'disallowed on this kind of request');
        if (attributes.namespace !== ctx.namespace) throw apiErrors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${ctx.namespace ?? ''}`);
      }
      return reply(accessReviewStatus(ctx.authorizer, attributes));
    }
    case 'SelfSubjectRulesReview': {
      const namespace = stringField(spec, 'namespace', 'spec');
      if (namespace === '') throw apiErrors.badRequest('no namespace on request');
      const rules = ctx.authorizer.rulesFor(ctx.user, namespace);
      return reply({
        resourceRules: rules.resourceRules.map((r) => ({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], resourceNames: r.resourceNames ?? [] })),
        nonResourceRules: rules.nonResourceRules.map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs ?? [] })),
        incomplete: rules.incomplete,
        ...(rules.evaluationError ? { evaluationError: rules.evaluationError } : {}),
      });
    }
    case 'SelfSubjectReview':
      return json(201, { kind: resource.kind, apiVersion, metadata, status: { userInfo: userInfoOf(ctx.user) } });
    case 'TokenReview': {
      const token = stringField(spec, 'token', 'spec');
      if (token === '') throw apiErrors.badRequest(`token is required for TokenReview in ${apiVersion}`);
      const reviewed = await ctx.authenticateToken(token);
      return reply(reviewed ? { authenticated: true, user: userInfoOf(reviewed) } : { user: {}, error: 'invalid bearer token' });
    }
    default:
      return assertNever(resource.kind, 'review kind');
  }
};
