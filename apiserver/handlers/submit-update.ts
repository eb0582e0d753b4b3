/** The append of an update of the main resource, shared by PUT, PATCH and apply. */
import { objectKey, type KubeObject } from '../../schemas/index.ts';
import { objectAfter, throwIfRejected, type RequestContext, type ServerContext } from '../context.ts';

/** Appends an update of the main resource (at the request's `time`) and answers with the updated object. */
export const submitUpdate = async (
  server: ServerContext,
  ctx: RequestContext,
  object: KubeObject,
  expectedResourceVersion: string | null,
  time: number,
): Promise<KubeObject> => {
  const { resource } = ctx.target;
  const key = objectKey(object);
  const result = await server.writer.submit({
    topic: 'desired',
    key,
    body: { type: 'ObjectUpdated', object, expectedResourceVersion, subresource: null },
    identity: ctx.identity,
    time,
  });
  throwIfRejected(result, resource, object.metadata.name);
  const updated = objectAfter(server, result, key);
  // An update that removed the last finalizer of a deleting object completes the deletion.
  return updated ?? object;
};
