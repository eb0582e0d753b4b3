/**
 * Label selectors as `-l` takes them (`app=web`, `tier!=db`, `env in (a,b)`, `env notin
 * (c)`, `gpu`, `!gpu`), parsed client-side for the views the server cannot filter
 * (`get --at`).
 */
import { assertNever } from '../../schemas/assert-never.ts';

/** One requirement of a selector. */
export type Requirement =
  | { readonly type: 'equals'; readonly key: string; readonly value: string }
  | { readonly type: 'notEquals'; readonly key: string; readonly value: string }
  | { readonly type: 'in'; readonly key: string; readonly values: readonly string[] }
  | { readonly type: 'notIn'; readonly key: string; readonly values: readonly string[] }
  | { readonly type: 'exists'; readonly key: string }
  | { readonly type: 'doesNotExist'; readonly key: string };

/** Splits on commas that are not inside parentheses. */
const splitTerms = (text: string): string[] => {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
};

const KEY = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;

/** Parses a label selector; throws on a term it cannot read. */
export const parseLabelSelector = (text: string): Requirement[] =>
  splitTerms(text).map((term): Requirement => {
    const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
    if (set) {
      const [, key = '', operator, list = ''] = set;
      const values = list.split(',').map((v) => v.trim()).filter((v) => v !== '');
      return operator === 'in' ? { type: 'in', key, values } : { type: 'notIn', key, values };
    }
    const inequality = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(term);
    if (inequality) return { type: 'notEquals', key: inequality[1]!, value: inequality[2]! };
    const equality = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(term);
    if (equality) return { type: 'equals', key: equality[1]!, value: equality[2]! };
    if (term.startsWith('!') && KEY.test(term.slice(1).trim())) return { type: 'doesNotExist', key: term.slice(1).trim() };
    if (KEY.test(term)) return { type: 'exists', key: term };
    throw new Error(`unable to parse requirement: ${JSON.stringify(term)}`);
  });

/** Whether labels satisfy every requirement. */
export const selectorMatches = (requirements: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean =>
  requirements.every((r) => {
    const value = labels?.[r.key];
    switch (r.type) {
      case 'equals':
        return value === r.value;
      case 'notEquals':
        return value !== r.value;
      case 'in':
        return value !== undefined && r.values.includes(value);
      case 'notIn':
        return value === undefined || !r.values.includes(value);
      case 'exists':
        return value !== undefined;
      case 'doesNotExist':
        return value === undefined;
      default:
        return assertNever(r, 'selector requirement');
    }
  });

/** A selector string that matches exactly `labels` (`a=b,c=d`), for listing what a workload selects. */
export const selectorFromLabels = (labels: Readonly<Record<string, string>>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
