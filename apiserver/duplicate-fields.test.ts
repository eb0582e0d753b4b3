/**
 * The duplicate-field scan: no duplicates in anything JSON.stringify writes (any value,
 * any indentation, deeply nested without exhausting the stack), and kube's own example from
 * its field-validation integration test listed in kube's order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findingText, scanJsonFields, strictFindings } from './duplicate-fields.ts';

describe('scanJsonFields', () => {
  it('finds no duplicates in what JSON.stringify writes, at any indentation', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2, '\t'), (value, indent) => {
        expect(scanJsonFields(JSON.stringify(value, null, indent)).duplicates).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('scans a body nested 100,000 levels deep without recursion', () => {
    const depth = 100_000;
    const text = `${'{"a":['.repeat(depth)}{"k":1,"k":2}${']}'.repeat(depth)}`;
    const { duplicates } = scanJsonFields(text);
    expect(duplicates).toHaveLength(1);
    expect(duplicates[0]!.endsWith('a[0].k')).toBe(true);
  });

  it.each([
    ['{"a":1,"a":2,"a":3}', ['a']],
    ['{"a":{"b":1},"a":{"b":2,"b":3}}', ['a', 'a.b']],
    ['[{"x":"\\"x\\"","x":1},{"x":2}]', ['[0].x']],
    ['{"":1,"":2}', ['']],
    ['{"l":[1,"a,b]",{"m":{},"m":[]}]}', ['l[2].m']],
  ])('reports the duplicates of %s', (text, expected) => {
    expect(scanJsonFields(text).duplicates).toEqual(expected);
  });

  it("lists kube's integration-test Deployment as kube does: document order, unknown wins over duplicate", () => {
    const body = `{"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"dupename","name":"d","labels":{"app":"nginx"},"unknownMeta":"metaVal"},
      "spec":{"unknown1":"val1","unknownDupe":"valDupe","unknownDupe":"valDupe2","paused":true,"paused":false,
        "selector":{"matchLabels":{"app":"nginx"}},
        "template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:latest",
          "unknownNested":"val1","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}`;
    const unknown = ['metadata.unknownMeta', 'spec.unknown1', 'spec.unknownDupe', 'spec.template.spec.containers[0].unknownNested'];
    expect(strictFindings(scanJsonFields(body), unknown).map(findingText).join(', ')).toBe(
      'duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", ' +
        'duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
    );
  });
});
