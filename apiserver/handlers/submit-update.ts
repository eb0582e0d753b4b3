/** The append of an update of the main resource, shared by PUT, PATCH and apply. */
import type { KubeObject } from '../../schemas/index.ts';
import { keyOf, objectAfter, throwIfRejected, type RequestContext, type ServerContext } from '../context.ts';
import { customObjectBody } from '../custom-resources/events.ts';

/** Appends an update of the main resource (at the request's `time`) and answers with the updated object. */
export const submitUpdate = async (
  server: ServerContext,
  ctx: RequestContext,
  object: KubeObject,
  expectedResourceVersion: string | null,
  time: number,
): Promise<KubeObject> => {
  const { resource } = ctx.target;
  const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
  const result = await server.writer.submit({
    topic: 'desired',
    key,
    body: resource.custom
      ? await customObjectBody(server, ctx, object, { type: 'update', expectedResourceVersion, subresource: null })
      : { type: 'ObjectUpdated', object, expectedResourceVersion, subresource: null },
    identity: ctx.identity,
    time,
  });
  throwIfRejected(result, resource, object.metadata.name);
  const updated = objectAfter(server, result, key);
  // An update that removed the last finalizer of a deleting object completes the deletion.
  return updated ?? object;
};
