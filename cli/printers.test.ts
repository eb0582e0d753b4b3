import { describe, expect, it } from 'vitest';
import { ApiError, ConnectionError } from './client.ts';
import { cellText, formatError, formatLabels, renderTable, TablePrinter, tableLines, toJson, toYaml, type Table } from './printers.ts';

describe('renderTable', () => {
  it('pads every column but the last to its widest cell + 3 (at least 6), like kubectl', () => {
    expect(renderTable([
      ['NAME', 'READY', 'AGE'],
      ['a', '1/1', '5s'],
      ['longer-name', '0/1', '3m'],
    ])).toBe(['NAME          READY   AGE', 'a             1/1     5s', 'longer-name   0/1     3m', ''].join('\n'));
  });
});

/** A Table as the apiserver sends it for pods (cells are the server's: ages, `<none>`). */
const podTable = (rows: { name: string; namespace?: string; labels?: Record<string, string>; cells: unknown[] }[]): Table => ({
  kind: 'Table',
  apiVersion: 'meta.k8s.io/v1',
  metadata: { resourceVersion: '7' },
  columnDefinitions: [
    { name: 'Name', type: 'string', format: 'name', description: '', priority: 0 },
    { name: 'Ready', type: 'string', format: '', description: '', priority: 0 },
    { name: 'Restarts', type: 'integer', format: '', description: '', priority: 0 },
    { name: 'Age', type: 'string', format: '', description: '', priority: 0 },
    { name: 'IP', type: 'string', format: '', description: '', priority: 1 },
    { name: 'Nominated Node', type: 'string', format: '', description: '', priority: 1 },
  ],
  rows: rows.map((r) => ({
    cells: [r.name, ...r.cells],
    object: { kind: 'PartialObjectMetadata', metadata: { name: r.name, namespace: r.namespace ?? 'default', ...(r.labels ? { labels: r.labels } : {}) } },
  })),
});

const TWO = podTable([
  { name: 'web-1', labels: { tier: 'front', app: 'web' }, cells: ['1/1', 0, '5m', '127.100.0.2', '<none>'] },
  { name: 'a-much-longer-name', namespace: 'shop', cells: ['0/1', 12, '3d4h', '<none>', '<none>'] },
]);

const print = (table: Table, options: ConstructorParameters<typeof TablePrinter>[0] = {}): string => new TablePrinter(options).print([table]);

describe('printing the server\'s Tables (kubectl\'s table printer)', () => {
  it('prints the priority-0 columns with upper-cased headers, aligned with 3 spaces', () => {
    expect(print(TWO)).toBe(
      [
        'NAME                 READY   RESTARTS   AGE',
        'web-1                1/1     0          5m',
        'a-much-longer-name   0/1     12         3d4h',
        '',
      ].join('\n'),
    );
  });

  it('adds the other columns with -o wide', () => {
    expect(print(TWO, { wide: true }).split('\n')[0]).toBe('NAME                 READY   RESTARTS   AGE    IP            NOMINATED NODE');
    expect(print(TWO, { wide: true }).split('\n')[1]).toBe('web-1                1/1     0          5m     127.100.0.2   <none>');
  });

  it('adds NAMESPACE first with -A and LABELS last with --show-labels, from each row\'s object', () => {
    expect(print(TWO, { withNamespace: true, showLabels: true })).toBe(
      [
        'NAMESPACE   NAME                 READY   RESTARTS   AGE    LABELS',
        'default     web-1                1/1     0          5m     app=web,tier=front',
        'shop        a-much-longer-name   0/1     12         3d4h   <none>',
        '',
      ].join('\n'),
    );
  });

  it('prints no header with --no-headers, and nothing for a table without rows', () => {
    // Widths come from the rows alone (at least 6 each).
    expect(print(TWO, { noHeaders: true }).split('\n')[0]).toBe('web-1                1/1   0     5m');
    expect(print(podTable([]))).toBe('');
    expect(print(podTable([]), { noHeaders: true })).toBe('');
  });

  it('prefixes the name column (format "name") with the kind when several types are printed', () => {
    expect(tableLines(TWO, { kind: 'deployment.apps' })[1]![0]).toBe('deployment.apps/web-1');
  });

  it('prints cells as kubectl does: nothing for null, cut at a line break', () => {
    expect(cellText(null)).toBe('');
    expect(cellText(3)).toBe('3');
    expect(cellText(true)).toBe('true');
    expect(cellText('one\ntwo')).toBe('one...');
    expect(formatLabels({ b: '2', a: '1' })).toBe('a=1,b=2');
    expect(formatLabels({})).toBe('<none>');
  });

  it('keeps a watch\'s rows aligned with the list: one header, widths only grow', () => {
    const printer = new TablePrinter({});
    const first = printer.print([podTable([{ name: 'web-1', cells: ['1/1', 0, '5m', '', ''] }])]);
    expect(first).toBe('NAME    READY   RESTARTS   AGE\nweb-1   1/1     0          5m\n');
    // The next event has the same columns: no header again, and the earlier widths are kept.
    expect(printer.print([podTable([{ name: 'w', cells: ['0/1', 1, '1s', '', ''] }])])).toBe('w       0/1     1          1s\n');
    expect(printer.print([podTable([{ name: 'a-longer-one', cells: ['0/1', 1, '1s', '', ''] }])])).toBe('a-longer-one   0/1     1          1s\n');
  });

  it('prints the header with the first rows when the list was empty', () => {
    const printer = new TablePrinter({});
    expect(printer.print([podTable([])])).toBe('');
    expect(printer.print([podTable([{ name: 'web-1', cells: ['1/1', 0, '5m', '', ''] }])])).toBe('NAME    READY   RESTARTS   AGE\nweb-1   1/1     0          5m\n');
  });

  it('lines up the tables of several named objects in one flush', () => {
    const one = podTable([{ name: 'a', cells: ['1/1', 0, '5m', '', ''] }]);
    const two = podTable([{ name: 'much-longer', cells: ['1/1', 0, '5m', '', ''] }]);
    expect(new TablePrinter({}).print([one, two])).toBe('NAME          READY   RESTARTS   AGE\na             1/1     0          5m\nmuch-longer   1/1     0          5m\n');
  });
});

describe('yaml and json', () => {
  it('sorts keys and does not indent sequences, like kubectl -o yaml', () => {
    expect(toYaml({ kind: 'Pod', apiVersion: 'v1', spec: { containers: [{ name: 'a', image: 'b' }] } })).toBe(
      ['apiVersion: v1', 'kind: Pod', 'spec:', '  containers:', '  - image: b', '    name: a', ''].join('\n'),
    );
    expect(toJson({ b: 1, a: [2] })).toBe('{\n    "a": [\n        2\n    ],\n    "b": 1\n}\n');
  });
});

describe('formatError', () => {
  it.each([
    [{ kind: 'Status', status: 'Failure', reason: 'NotFound', message: 'pods "x" not found', code: 404 }, 'Error from server (NotFound): pods "x" not found'],
    [
      { kind: 'Status', status: 'Failure', reason: 'AlreadyExists', message: 'deployments.apps "web" already exists', code: 409 },
      'Error from server (AlreadyExists): deployments.apps "web" already exists',
    ],
    [
      {
        kind: 'Status',
        status: 'Failure',
        reason: 'Conflict',
        message: 'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
        code: 409,
      },
      'Error from server (Conflict): Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    ],
    [{ kind: 'Status', status: 'Failure', reason: 'Unauthorized', message: 'Unauthorized', code: 401 }, 'error: You must be logged in to the server (Unauthorized)'],
    [{ kind: 'Status', status: 'Failure', message: 'something odd', code: 500 }, 'Error from server: something odd'],
    [
      {
        kind: 'Status',
        status: 'Failure',
        reason: 'Invalid',
        message: 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        details: {
          name: 'web',
          kind: 'Deployment.apps',
          causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' }],
        },
        code: 422,
      },
      'The Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ],
    [
      {
        kind: 'Status',
        status: 'Failure',
        reason: 'Invalid',
        message: 'Pod "p" is invalid: [spec.containers: Required value, metadata.name: Invalid value]',
        details: {
          name: 'p',
          kind: 'Pod',
          causes: [
            { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' },
            { reason: 'FieldValueInvalid', message: 'Invalid value', field: 'metadata.name' },
          ],
        },
        code: 422,
      },
      'The Pod "p" is invalid: \n* spec.containers: Required value\n* metadata.name: Invalid value',
    ],
  ] as const)('%j', (status, expected) => {
    expect(formatError(new ApiError(status, status.code))).toBe(expected);
  });

  it('prints refused connections like kubectl, other errors with "error: "', () => {
    const refused = new ConnectionError('127.0.0.1:6443', Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }) }));
    expect(formatError(refused)).toBe('The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?');
    expect(formatError(new Error('the server doesn\'t have a resource type "foo"'))).toBe('error: the server doesn\'t have a resource type "foo"');
  });
});
