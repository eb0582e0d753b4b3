import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { decodeOpenapiV2, encodeOpenapiV2, OPENAPI_V2_PROTOBUF, openapiV2Document, openapiV2Reply } from './openapi-v2.ts';
import { RESOURCES } from './resources.ts';

const document = openapiV2Document();

interface NamedSchema {
  readonly name: string;
  readonly value: Record<string, unknown> & { vendorExtension?: { name: string; value: { yaml: string } }[]; properties?: { additionalProperties: NamedSchema[] } };
}

describe('/openapi/v2', () => {
  it('holds the definition of every served kind, with its group-version-kind extension, and everything they reach', () => {
    for (const resource of RESOURCES) {
      const definition = document.definitions[resource.definition] as Record<string, unknown> | undefined;
      expect(definition, resource.definition).toBeDefined();
      expect(definition?.['x-kubernetes-group-version-kind']).toEqual(expect.arrayContaining([expect.objectContaining({ kind: resource.kind })]));
    }
    const references = [...JSON.stringify(document.definitions).matchAll(/"#\/definitions\/([^"]+)"/g)].map((match) => match[1] as string);
    expect(references.filter((name) => !Object.hasOwn(document.definitions, name))).toEqual([]);
    expect(Object.keys(document.definitions)).toContain('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  });

  it('encodes as gnostic protobuf that decodes to the same definitions, properties, types, references and extensions', () => {
    const decoded = decodeOpenapiV2(encodeOpenapiV2(document)) as { swagger: string; definitions: { additionalProperties: NamedSchema[] } };
    expect(decoded.swagger).toBe('2.0');
    const byName = new Map(decoded.definitions.additionalProperties.map((entry) => [entry.name, entry.value]));
    expect([...byName.keys()]).toEqual(Object.keys(document.definitions));
    const pod = byName.get('io.k8s.api.core.v1.Pod')!;
    const gvk = pod.vendorExtension?.find((extension) => extension.name === 'x-kubernetes-group-version-kind');
    expect(parse(gvk!.value.yaml)).toEqual([{ group: '', kind: 'Pod', version: 'v1' }]);
    const properties = new Map(pod.properties!.additionalProperties.map((entry) => [entry.name, entry.value]));
    expect(properties.get('spec')).toMatchObject({ ref: '#/definitions/io.k8s.api.core.v1.PodSpec' });
    expect(properties.get('apiVersion')).toMatchObject({ type: { value: ['string'] } });
    const spec = byName.get('io.k8s.api.core.v1.PodSpec')!;
    expect(spec.required).toEqual(['containers']);
    const containers = spec.properties!.additionalProperties.find((entry) => entry.name === 'containers')!.value;
    expect(containers).toMatchObject({ type: { value: ['array'] }, items: { schema: [{ ref: '#/definitions/io.k8s.api.core.v1.Container' }] } });
    const patchStrategy = (containers.vendorExtension as { name: string; value: { yaml: string } }[]).find((extension) => extension.name === 'x-kubernetes-patch-merge-key');
    expect(parse(patchStrategy!.value.yaml)).toBe('name');
  });

  it('answers protobuf for either spelling of its media type, JSON otherwise, and 304 for a current ETag', () => {
    for (const accept of ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9, application/json']) {
      const reply = openapiV2Reply(accept, undefined);
      expect(reply).toMatchObject({ code: 200, contentType: OPENAPI_V2_PROTOBUF });
      expect(reply.body[0]).toBe(0x0a); // field 1 (swagger), length-delimited
    }
    const json = openapiV2Reply('application/json', undefined);
    expect(json.contentType).toBe('application/json');
    expect(JSON.parse(json.body.toString('utf8'))).toEqual(document);
    expect(openapiV2Reply(undefined, json.etag)).toMatchObject({ code: 304, body: Buffer.alloc(0) });
    expect(openapiV2Reply(undefined, '"other"').code).toBe(200);
  });
});
