/**
 * get and list. Reads are consistent by default (the projection first catches up with the
 * log, like kube's consistent reads); `resourceVersion=0` reads whatever this apiserver
 * has; `resourceVersionMatch=Exact` reads the cluster as it was at a list resourceVersion
 * (from the projection's history). Lists page with `limit`/`continue` over a fixed position.
 */
import { formatVector, parseObjectVersion, parseVector, type PositionVector, type View } from '../../projections/index.ts';
import { assertNever, type KubeObject } from '../../schemas/index.ts';
import { catchUp, json, keyOf, nameOf, type Reply, type RequestContext, type ServerContext } from '../context.ts';
import { apiErrors, fieldErrors } from '../errors.ts';
import { negotiate, type Representation } from '../http.ts';
import { apiVersionOf, type ResourceInfo } from '../resources.ts';
import { parseSelection, pinnedName } from '../selection.ts';
import type { StatusCause } from '../status.ts';
import { parseIncludeObject, partialMetadata, toTable } from '../tables.ts';
import { customTableOf } from '../custom-resources/printer-columns.ts';
import { withLatestRenewal } from '../node-leases.ts';

/** Renders objects as the client asked: the object/list itself, a Table, or PartialObjectMetadata. */
const represent = (
  ctx: RequestContext,
  representation: Representation,
  objects: readonly KubeObject[],
  single: boolean,
  listMeta: { resourceVersion?: string; continue?: string },
): unknown => {
  const resource = ctx.target.resource;
  switch (representation.type) {
    case 'table':
      if (resource.custom) {
        return customTableOf(resource.custom, objects, {
          includeObject: parseIncludeObject(ctx.query.get('includeObject')),
          version: representation.version,
          ...(listMeta.resourceVersion !== undefined ? { resourceVersion: listMeta.resourceVersion } : {}),
          ...(listMeta.continue ? { continueToken: listMeta.continue } : {}),
        });
      }
      return toTable(objects, {
        kind: resource.kind,
        includeObject: parseIncludeObject(ctx.query.get('includeObject')),
        version: representation.version,
        ...(listMeta.resourceVersion !== undefined ? { resourceVersion: listMeta.resourceVersion } : {}),
        ...(listMeta.continue ? { continueToken: listMeta.continue } : {}),
      });
    case 'partialMetadata':
      if (single) return partialMetadata(objects[0]!, representation.version);
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${representation.version}`,
        metadata: listMeta,
        items: objects.map((o) => partialMetadata(o, representation.version)),
      };
    case 'object':
      if (single) return objects[0];
      return { kind: resource.custom?.listKind ?? `${resource.kind}List`, apiVersion: apiVersionOf(resource), metadata: listMeta, items: objects };
    default:
      return assertNever(representation, 'representation');
  }
};

/** GET of one object (also `/status`, which reads the whole object as kube does). */
export const getObject = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const representation = negotiate(ctx.req.headers.accept);
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  const rv = ctx.query.get('resourceVersion') ?? '';
  // kube parses a GET's resourceVersion too: an object's or a list's version reads the
  // current object (no older than either), anything else is refused.
  if (rv !== '' && rv !== '0' && !parseObjectVersion(rv)) parseListVersion(server, rv);
  if (rv !== '0') await catchUp(server);
  const object = server.projection.view().get(keyOf(resource, namespace, name));
  if (!object) throw apiErrors.notFound(resource, name);
  return json(200, represent(ctx, representation, [withLatestRenewal(object, server.nodeLeaseRenewals)], true, {}));
};

interface ContinueToken {
  readonly rv: string;
  readonly after: string;
}

const encodeContinue = (token: ContinueToken): string => Buffer.from(JSON.stringify(token)).toString('base64url');

const decodeContinue = (text: string): ContinueToken => {
  try {
    const token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof token.rv === 'string' && typeof token.after === 'string') return token;
  } catch {
    // fall through to the error below
  }
  throw apiErrors.badRequest('continue key is not valid: it was not issued by this server');
};

const parseListVersion = (server: ServerContext, rv: string): PositionVector => {
  try {
    return parseVector(rv, server.projection.partitions);
  } catch {
    throw apiErrors.badRequest(`resourceVersion: Invalid value: "${rv}": not a list resourceVersion of this cluster (expected ${server.projection.partitions * 2} dot-separated offsets)`);
  }
};

/** The one object a field selector pins by name (metadata.name=...), if it exists in the view. */
const pinnedObject = (view: View, resource: ResourceInfo, namespace: string | undefined, name: string): KubeObject[] => {
  const object = view.get(keyOf(resource, namespace, name));
  return object ? [object] : [];
};

/**
 * kube's `ValidateListOptions` for a list: resourceVersionMatch needs a resourceVersion, no
 * continue, one of its two values, and Exact not at "0"; 422 `ListOptions.meta.k8s.io`.
 */
const validateListOptions = (rv: string, match: string, continueText: string): void => {
  if (match === '') return;
  const causes: StatusCause[] = [];
  if (rv === '') causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  if (continueText !== '') causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  if (match !== 'Exact' && match !== 'NotOlderThan') causes.push(fieldErrors.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
  if (match === 'Exact' && rv === '0') causes.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  if (causes.length > 0) throw apiErrors.invalidOptions('ListOptions', causes);
};

/** GET of a collection. */
export const listObjects = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const representation = negotiate(ctx.req.headers.accept);
  const { resource, namespace } = ctx.target;
  const selection = parseSelection(resource, ctx.query);
  const limitText = ctx.query.get('limit');
  const limit = limitText === null || limitText === '' ? 0 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 0) throw apiErrors.badRequest(`limit: Invalid value: "${limitText}": must be a non-negative integer`);
  const continueText = ctx.query.get('continue');
  const rv = ctx.query.get('resourceVersion') ?? '';
  const match = ctx.query.get('resourceVersionMatch') ?? '';
  validateListOptions(rv, match, continueText ?? '');
  if (continueText && rv !== '' && rv !== '0') throw apiErrors.badRequest('specifying resource version is not allowed when using continue');

  let view: View;
  let position: PositionVector;
  let after = '';
  /** Whether the list reads the current state (a node's Lease then shows its latest renewal), not a past position. */
  let current = false;
  if (continueText) {
    const token = decodeContinue(continueText);
    position = parseListVersion(server, token.rv);
    view = server.projection.viewAt(position);
    after = token.after;
  } else if (match === 'Exact') {
    position = parseListVersion(server, rv);
    await waitForPosition(server, position);
    view = server.projection.viewAt(position);
  } else {
    if (rv === '') await catchUp(server);
    else if (rv !== '0') await waitForPosition(server, parseListVersion(server, rv));
    // Synchronous from here: the cursor and the live view describe the same state.
    position = server.projection.cursor();
    view = server.projection.view();
    current = true;
  }
  const pinned = pinnedName(selection);
  let objects: KubeObject[];
  let continueToken: string | undefined;
  if (pinned !== undefined && (namespace !== undefined || !resource.namespaced)) {
    objects = pinnedObject(view, resource, namespace, pinned)
      .filter((o) => selection.matches(o) && keyOf(resource, o.metadata.namespace, o.metadata.name) > after)
      .map((o) => (current ? withLatestRenewal(o, server.nodeLeaseRenewals) : o));
  } else {
    // Key order, from the continue key on: a page materializes only the objects it looks at
    // (kubectl lists in pages of 500, so a whole collection is never decoded per page).
    objects = [];
    let last = '';
    for (const key of view.keys(resource.ref, resource.namespaced ? namespace : undefined, after === '' ? undefined : after)) {
      const object = view.get(key);
      if (!object || !selection.matches(object)) continue;
      if (limit > 0 && objects.length === limit) {
        continueToken = encodeContinue({ rv: formatVector(position), after: last });
        break;
      }
      objects.push(current ? withLatestRenewal(object, server.nodeLeaseRenewals) : object);
      last = key;
    }
  }
  const listMeta = { resourceVersion: formatVector(position), ...(continueToken ? { continue: continueToken } : {}) };
  return json(200, represent(ctx, representation, objects, false, listMeta));
};

/** Waits (briefly) for a position the client saw elsewhere; 504 "Too large resource version" otherwise. */
export const waitForPosition = async (server: ServerContext, position: PositionVector): Promise<void> => {
  try {
    await server.projection.waitFor(position, server.readTimeoutMs);
  } catch {
    throw apiErrors.timeout(`Too large resource version: ${formatVector(position)}, current: ${formatVector(server.projection.cursor())}`);
  }
};
