import { describe, expect, it } from 'vitest';
import { customResourcePrinter, customResourceTable, DEFAULT_PRINTER_COLUMNS, validatePrinterColumnJsonPath, type CustomObject, type PrinterColumn } from './printer-columns.ts';

const NOW = Date.parse('2025-01-10T12:00:00Z');

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const AGE_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** An operator's Database CRD version, with a column of every type. */
const DATABASE_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
  { name: 'Version', type: 'string', jsonPath: '.spec.version', priority: 1, description: 'The database engine version.' },
  { name: 'Load', type: 'number', format: 'float', jsonPath: '.status.load' },
  { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts[*]' },
];

/** A Database object created five minutes before {@link NOW}, or with no creationTimestamp when given null. */
const database = (name: string, fields: Record<string, unknown>, creationTimestamp: string | null = '2025-01-10T11:55:00Z'): CustomObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(creationTimestamp === null ? {} : { creationTimestamp }) },
  ...fields,
});

describe('column definitions', () => {
  it("are Name, then the CRD's columns with kube's defaults for description, format and priority", () => {
    expect(customResourcePrinter(DATABASE_COLUMNS).columnDefinitions).toEqual([
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      { name: 'Replicas', type: 'integer', format: '', description: 'Custom resource definition column (in JSONPath format): .spec.replicas', priority: 0 },
      { name: 'Ready', type: 'string', format: '', description: 'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status', priority: 0 },
      { name: 'Age', type: 'date', format: '', description: 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp', priority: 0 },
      { name: 'Enabled', type: 'boolean', format: '', description: 'Custom resource definition column (in JSONPath format): .spec.enabled', priority: 0 },
      { name: 'Version', type: 'string', format: '', description: 'The database engine version.', priority: 1 },
      { name: 'Load', type: 'number', format: 'float', description: 'Custom resource definition column (in JSONPath format): .status.load', priority: 0 },
      { name: 'Hosts', type: 'string', format: '', description: 'Custom resource definition column (in JSONPath format): .spec.hosts[*]', priority: 0 },
    ]);
  });

  it.each([
    ['no additionalPrinterColumns', undefined],
    ['an empty additionalPrinterColumns', []],
  ])('with %s are Name and Age (kube serveDefaultColumnsIfEmpty)', (_, columns) => {
    const printer = customResourcePrinter(columns);
    expect(printer.columnDefinitions).toEqual([
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      { name: 'Age', type: 'date', format: '', description: AGE_DESCRIPTION, priority: 0 },
    ]);
    expect(printer.error).toBeUndefined();
    expect(printer.cells(database('db', {}), NOW)).toEqual(['db', '5m']);
    expect(printer.cells(database('new', {}, null), NOW)).toEqual(['new', null]);
    expect(DEFAULT_PRINTER_COLUMNS).toHaveLength(1);
  });

  it('stop before a column whose JSONPath does not parse, and say so as kube logs it', () => {
    const printer = customResourcePrinter([
      { name: 'A', type: 'string', jsonPath: '.spec.a' },
      { name: 'B', type: 'string', jsonPath: '.spec[' },
      { name: 'C', type: 'string', jsonPath: '.spec.c' },
    ]);
    expect(printer.columnDefinitions.map((column) => column.name)).toEqual(['Name', 'A']);
    expect(printer.error).toBe('unrecognized column definition ".spec["');
    expect(printer.cells(database('x', { spec: { a: 'a', c: 'c' } }), NOW)).toEqual(['x', 'a']);
  });
});

describe('cells of the operator-style CRD', () => {
  const printer = customResourcePrinter(DATABASE_COLUMNS);

  it.each<[string, CustomObject, readonly unknown[]]>([
    [
      'every field set',
      database('db-1', {
        spec: { replicas: 3, enabled: true, version: '15.2', hosts: ['a.example', 'b.example'] },
        status: { load: 0.75, conditions: [{ type: 'Available', status: 'False' }, { type: 'Ready', status: 'True' }] },
      }),
      ['db-1', 3, 'True', '5m', true, '15.2', 0.75, 'a.example'],
    ],
    ['no spec nor status (missing fields are null, kubectl prints them empty)', database('db-2', {}), ['db-2', null, null, '5m', null, null, null, null]],
    [
      'values of other types than the columns',
      database('db-3', {
        spec: { replicas: '3', enabled: 'yes', version: 15, hosts: [] },
        status: { load: 'high', conditions: [{ type: 'Ready' }] },
      }, 'yesterday'),
      ['db-3', null, null, '<invalid>', null, '15', null, null],
    ],
    [
      'several results: only the first is printed',
      database('db-4', {
        spec: { replicas: 2.9, enabled: false, version: { major: 15, minor: 2 }, hosts: [{ name: 'h1' }, 'h2'] },
        status: { load: 2, conditions: [{ type: 'Ready', status: 'Unknown' }, { type: 'Ready', status: 'True' }] },
      }),
      ['db-4', 2, 'Unknown', '5m', false, '{"major":15,"minor":2}', 2, '{"name":"h1"}'],
    ],
    [
      'JSON nulls (a string column prints <no value>, others null)',
      database('db-5', { spec: { replicas: null, enabled: null, version: null, hosts: [null] }, status: { load: null, conditions: null } }, null),
      ['db-5', null, null, null, null, '<no value>', null, '<no value>'],
    ],
    [
      'a filter failing on mixed types prints null',
      database('db-6', { spec: { version: true, hosts: 'not-a-list' }, status: { conditions: [{ type: 1, status: 'True' }] } }),
      ['db-6', null, null, '5m', null, 'true', null, null],
    ],
  ])('%s', (_, object, cells) => {
    expect(printer.cells(object, NOW)).toEqual(cells);
  });

  it('prints an object without a name with an empty name', () => {
    expect(printer.cells({ metadata: {} }, NOW)[0]).toBe('');
  });
});

describe('cell values by column type', () => {
  const cell = (type: PrinterColumn['type'], value: unknown): unknown =>
    customResourcePrinter([{ name: 'V', type, jsonPath: '.spec.v' }]).cells(database('x', { spec: { v: value } }), NOW)[1];

  it.each<[PrinterColumn['type'], unknown, unknown]>([
    ['integer', 7, 7],
    ['integer', -7.9, -7],
    ['integer', '7', null],
    ['integer', true, null],
    ['number', 7, 7],
    ['number', 0.125, 0.125],
    ['number', '0.1', null],
    ['boolean', true, true],
    ['boolean', 'true', null],
    ['boolean', 0, null],
    ['string', 'text', 'text'],
    ['string', 42, '42'],
    ['string', 1.5e-7, '1.5e-07'],
    ['string', 2500000.5, '2.5000005e+06'],
    ['string', false, 'false'],
    ['string', ['a', 1], '["a",1]'],
    ['string', { b: '<x>', a: 1 }, '{"a":1,"b":"\\u003cx\\u003e"}'],
    ['string', '', ''],
    ['date', '2025-01-10T11:59:30Z', '30s'],
    ['date', '2025-01-10T12:59:30+01:00', '30s'],
    ['date', '2025-01-10T06:29:30-05:30', '30s'],
    ['date', '2025-01-10T11:59:30.999999999Z', '29s'],
    ['date', '2025-01-08T10:00:00Z', '2d2h'],
    ['date', '2023-01-10T12:00:00Z', '2y1d'],
    ['date', '2015-01-10T12:00:00Z', '10y'],
    ['date', '2024-02-29T12:00:00Z', '316d'],
    ['date', '2025-01-10T11:59:59Z', '1s'],
    ['date', '2025-01-10T12:00:01Z', '0s'],
    ['date', '2025-01-10T12:00:30Z', '<invalid>'],
    ['date', '', '<unknown>'],
    ['date', 'null', '<unknown>'],
    ['date', '0001-01-01T00:00:00Z', '<unknown>'],
    ['date', '0001-01-01T01:00:00+01:00', '<unknown>'],
    ['date', '2025-02-29T00:00:00Z', '<invalid>'],
    ['date', '2025-13-01T00:00:00Z', '<invalid>'],
    ['date', '2025-01-10T24:00:00Z', '<invalid>'],
    ['date', '2025-01-10T12:00:60Z', '<invalid>'],
    ['date', '2025-01-10 12:00:00Z', '<invalid>'],
    ['date', '2025-01-10T12:00:00', '<invalid>'],
    ['date', '2025-01-10', '<invalid>'],
    ['date', 1736510400, null],
    ['date', true, null],
  ])('%s column, value %j → %j', (type, value, expected) => {
    expect(cell(type, value)).toEqual(expected);
  });

  it('reads a string as a column of bytes only in a string column', () => {
    const printer = customResourcePrinter([
      { name: 'S', type: 'string', jsonPath: '.spec.s.*' },
      { name: 'I', type: 'integer', jsonPath: '.spec.s.*' },
    ]);
    expect(printer.cells(database('x', { spec: { s: 'A' } }), NOW).slice(1)).toEqual(['65', null]);
  });

  it('takes float literals of a path as floats', () => {
    const printer = customResourcePrinter([
      { name: 'I', type: 'integer', jsonPath: '1.5' },
      { name: 'N', type: 'number', jsonPath: '2.5' },
      { name: 'S', type: 'string', jsonPath: '3.0' },
    ]);
    expect(printer.cells(database('x', {}), NOW).slice(1)).toEqual([1, 2.5, '3']);
  });
});

describe('prototype safety', () => {
  const hostile = JSON.parse('{"metadata": {"name": "p"}, "spec": {"__proto__": {"replicas": 5}, "list": []}}') as CustomObject;

  it.each<[string, PrinterColumn['type'], unknown]>([
    ['.spec.replicas', 'integer', null],
    ['.spec.constructor', 'string', null],
    ['.spec.toString', 'string', null],
    ['.spec.hasOwnProperty', 'string', null],
    ['.spec.list.length', 'integer', null],
    ['.metadata.name.length', 'integer', null],
    ['.spec.__proto__.replicas', 'integer', 5],
    ["['spec']['__proto__']['replicas']", 'integer', 5],
  ])('%s reads only own properties', (jsonPath, type, expected) => {
    expect(customResourcePrinter([{ name: 'V', type, jsonPath }]).cells(hostile, NOW)[1]).toBe(expected);
    expect(({} as Record<string, unknown>)['replicas']).toBeUndefined();
  });
});

describe('validatePrinterColumnJsonPath (kube validateSimpleJSONPath)', () => {
  it.each([
    ['', 'Required value'],
    ['spec.replicas', 'Invalid value: "spec.replicas": must be a simple json path starting with .'],
    ['$.spec.replicas', 'Invalid value: "$.spec.replicas": must be a simple json path starting with .'],
    ['.', undefined],
    ['.spec.replicas', undefined],
    ['.status.conditions[?(@.type=="Ready")].status', undefined],
    ['.spec[', undefined],
  ])('%j → %j', (jsonPath, message) => {
    expect(validatePrinterColumnJsonPath(jsonPath)).toBe(message);
  });
});

describe('customResourceTable', () => {
  const printer = customResourcePrinter([{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }]);
  const objects = [database('a', { spec: { replicas: 1 } }), database('b', {})];

  it.each([
    ['Metadata', (object: CustomObject) => ({ object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata } })],
    ['Object', (object: CustomObject) => ({ object })],
    ['None', () => ({})],
  ] as const)('includeObject=%s', (includeObject, rowObject) => {
    const table = customResourceTable(objects, printer, { includeObject, version: 'v1', resourceVersion: '42', continueToken: 'next', now: NOW });
    expect(table).toEqual({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '42', continue: 'next' },
      columnDefinitions: printer.columnDefinitions,
      rows: [
        { cells: ['a', 1], ...rowObject(objects[0]!) },
        { cells: ['b', null], ...rowObject(objects[1]!) },
      ],
    });
  });

  it('leaves out the headers with noHeaders, and speaks v1beta1 when asked', () => {
    const table = customResourceTable(objects, printer, { includeObject: 'Metadata', version: 'v1beta1', noHeaders: true });
    expect(table.columnDefinitions).toEqual([]);
    expect(table.metadata).toEqual({});
    expect(table.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect((table.rows[0]!.object as { apiVersion: string }).apiVersion).toBe('meta.k8s.io/v1beta1');
  });

  it('serializes to JSON with null cells, as kube sends missing values', () => {
    const table = customResourceTable(objects, printer, { includeObject: 'None', version: 'v1', now: NOW });
    expect(JSON.stringify(table.rows)).toBe('[{"cells":["a",1]},{"cells":["b",null]}]');
  });
});
