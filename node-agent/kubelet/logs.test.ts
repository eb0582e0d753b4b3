import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logInstances, prepareLogFile, readLogFile } from './logs.ts';
import { tempDir } from './testing.ts';

async function collect(iterable: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of iterable) text += chunk;
  return text;
}

describe('log files', () => {
  it.each([
    { content: 'a\nb\nc\n', tailLines: 2, expected: 'b\nc\n' },
    { content: 'a\nb\nc', tailLines: 2, expected: 'b\nc' },
    { content: 'a\nb\nc\n', tailLines: 10, expected: 'a\nb\nc\n' },
    { content: 'a\nb\nc\n', tailLines: 0, expected: '' },
    { content: '', tailLines: 3, expected: '' },
    { content: `${'x'.repeat(70_000)}\n${'y'.repeat(70_000)}\nz\n`, tailLines: 2, expected: `${'y'.repeat(70_000)}\nz\n` },
  ])('tailLines $tailLines of $content.length bytes', async ({ content, tailLines, expected }) => {
    const file = join(tempDir(), 'x.log');
    writeFileSync(file, content);
    expect(await collect(readLogFile(file, { tailLines }))).toBe(expected);
  });

  it('keeps multi-byte characters intact across read chunks', async () => {
    const file = join(tempDir(), 'x.log');
    const content = `${'a'.repeat(64 * 1024 - 1)}é✓\n`;
    writeFileSync(file, content);
    expect(await collect(readLogFile(file, {}))).toBe(content);
  });

  it('follows appended output until the writer ends, then reads what is left', async () => {
    const file = join(tempDir(), 'x.log');
    writeFileSync(file, 'first\n');
    let end = () => {};
    const ended = new Promise<void>((resolve) => (end = resolve));
    const iterator = readLogFile(file, { ended })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe('first\n');
    const pending = iterator.next();
    appendFileSync(file, 'second\n');
    expect((await pending).value).toBe('second\n');
    appendFileSync(file, 'last\n');
    end();
    let rest = '';
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) rest += next.value;
    expect(rest).toBe('last\n');
  });

  it('stops following when aborted', async () => {
    const file = join(tempDir(), 'x.log');
    writeFileSync(file, '');
    const abort = new AbortController();
    const iterator = readLogFile(file, { ended: new Promise(() => {}), signal: abort.signal })[Symbol.asyncIterator]();
    const pending = iterator.next();
    abort.abort();
    expect((await pending).done).toBe(true);
  });

  it('keeps the current and the previous instance only', () => {
    const dir = tempDir();
    for (const n of [0, 1, 2, 3]) writeFileSync(prepareLogFile(dir, 'c', n), `${n}\n`);
    expect(logInstances(dir, 'c')).toEqual([2, 3]);
  });
});
