// Checks a vitest JSON report for CI (see .ci/run):
//
//   node .ci/check-report.mjs <report.json> <selected-files.json> <coverage-summary.json>
//
// <selected-files.json> is `vitest list --filesOnly --json`: the test files the config selects.
// Fails (exit 1) when
// - any test ended other than passed or failed (skipped, pending, todo, disabled, or a test
//   left out by a name filter or a `.only`): every such test is listed;
// - a selected test file is missing from the report (filtered out on the command line, or it
//   did not run), or a file failed outside its tests (an import error, a failing hook);
// - a snapshot or golden file was written or is missing (CI never updates them);
// - no test talked to Kafka, or the real-broker round trip test did not pass.
// A Kafka test is one whose worker sent Kafka requests while it ran: `meta.kafkaRequests`, set
// by test/kafka-meter.ts (the rule is documented there). Failed tests themselves fail the vitest
// run, whose exit status .ci/run keeps. Tracked test files the config does not select are printed
// (each exclusion has its reason in vitest.config.ts).
// Prints the branch coverage of projections/, apiserver/, reconcilers/ and log/ from the coverage
// summary (vitest enforces the floors in vitest.config.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const [reportPath, selectedPath, coveragePath] = process.argv.slice(2);
if (!reportPath || !selectedPath || !coveragePath) {
  console.error('usage: node .ci/check-report.mjs <report.json> <selected-files.json> <coverage-summary.json>');
  process.exit(2);
}
const root = process.cwd();
const rel = (file) => relative(root, resolve(root, file));
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const problems = [];

const tests = report.testResults.flatMap((file) => (file.assertionResults ?? []).map((test) => ({ ...test, file: rel(file.name) })));
const count = (status) => tests.filter((test) => test.status === status).length;
const notRun = tests.filter((test) => test.status !== 'passed' && test.status !== 'failed');
if (notRun.length > 0) {
  problems.push(`${notRun.length} test(s) did not run (CI refuses skipped, todo and filtered-out tests):\n` + notRun.map((t) => `  - [${t.status}] ${t.file} > ${t.fullName}`).join('\n'));
}

const selected = new Set(JSON.parse(readFileSync(selectedPath, 'utf8')).map((entry) => rel(entry.file)));
const reported = new Set(report.testResults.map((file) => rel(file.name)));
const missing = [...selected].filter((file) => !reported.has(file)).sort();
if (missing.length > 0) problems.push('selected test files missing from the report:\n' + missing.map((file) => `  - ${file}`).join('\n'));
const brokenFiles = report.testResults.filter((file) => file.status === 'failed' && file.message);
if (brokenFiles.length > 0) problems.push('test files that failed outside their tests:\n' + brokenFiles.map((f) => `  - ${rel(f.name)}: ${f.message.split('\n')[0]}`).join('\n'));
const tracked = execFileSync('git', ['ls-files', '*.test.ts'], { encoding: 'utf8' }).split('\n').filter(Boolean);
const excluded = tracked.filter((file) => !selected.has(file));
console.log(`test files: ${reported.size} run, ${excluded.length} excluded by vitest.config.ts${excluded.length ? ': ' + excluded.join(', ') : ''}`);

const snapshot = report.snapshot ?? {};
if ((snapshot.added ?? 0) + (snapshot.filesAdded ?? 0) + (snapshot.updated ?? 0) + (snapshot.filesUpdated ?? 0) > 0) {
  problems.push(`snapshots were written in CI (added ${snapshot.added}, files added ${snapshot.filesAdded}, updated ${snapshot.updated}): golden files must be committed`);
}
if ((snapshot.unmatched ?? 0) + (snapshot.unchecked ?? 0) + (snapshot.filesRemoved ?? 0) > 0) {
  problems.push(`snapshots not matched: ${snapshot.unmatched} unmatched, ${snapshot.unchecked} obsolete, ${snapshot.filesRemoved} files removed`);
}

const kafka = tests.filter((test) => (test.meta?.kafkaRequests ?? 0) > 0);
const kafkaFiles = new Set(kafka.map((test) => test.file));
console.log(`kafka tests (talked to a broker): ${kafka.filter((t) => t.status === 'passed').length} passed, ${kafka.filter((t) => t.status === 'failed').length} failed, in ${kafkaFiles.size} files`);
if (!kafka.some((test) => test.status === 'passed')) problems.push('no passed test talked to Kafka: the Kafka suites did not run on a broker');
// The round trip through a real broker (log/kafka/broker/launcher.test.ts) must be among them.
const roundTrip = tests.find((test) => /kafka broker.*creates a topic, takes 3 messages/i.test(test.fullName ?? ''));
if (roundTrip?.status !== 'passed' || !kafka.includes(roundTrip)) {
  problems.push(`the real-broker round trip test did not pass on a broker (status: ${roundTrip?.status ?? 'missing'}, Kafka requests: ${roundTrip?.meta?.kafkaRequests ?? 0})`);
}

console.log(`tests: ${count('passed')} passed, ${count('failed')} failed, ${notRun.length} not run`);

if (existsSync(coveragePath)) {
  const summary = JSON.parse(readFileSync(coveragePath, 'utf8'));
  const folders = ['projections', 'apiserver', 'reconcilers', 'log'];
  console.log('branch coverage (floors in vitest.config.ts):');
  for (const folder of folders) {
    const files = Object.entries(summary).filter(([file]) => file !== 'total' && rel(file).startsWith(`${folder}/`));
    const covered = files.reduce((sum, [, f]) => sum + f.branches.covered, 0);
    const total = files.reduce((sum, [, f]) => sum + f.branches.total, 0);
    const lines = files.reduce((sum, [, f]) => [sum[0] + f.lines.covered, sum[1] + f.lines.total], [0, 0]);
    const pct = (a, b) => (b === 0 ? '-' : `${((100 * a) / b).toFixed(2)}%`);
    console.log(`  ${folder.padEnd(12)} branches ${pct(covered, total).padStart(7)} (${covered}/${total})   lines ${pct(lines[0], lines[1]).padStart(7)} (${files.length} files)`);
  }
} else {
  problems.push(`no coverage summary at ${coveragePath}: the suite did not run with coverage`);
}

// Failed tests fail the run through vitest's exit status; they are listed here too, last, so the
// tail of a CI log names them (the first line of each failure message, and how long it ran).
const failed = tests.filter((test) => test.status === 'failed');
for (const test of failed) {
  const message = (test.failureMessages ?? [])[0]?.split('\n')[0] ?? '(no message)';
  console.error(`FAILED TEST: ${test.file} > ${test.fullName} (${Math.round(test.duration ?? 0)} ms): ${message}`);
}
// The slowest files, so a CI run that nears its time budget shows where the time went.
const slowest = report.testResults
  .map((file) => ({ file: rel(file.name), ms: (file.endTime ?? 0) - (file.startTime ?? 0) }))
  .sort((a, b) => b.ms - a.ms)
  .slice(0, 15);
console.log('slowest test files: ' + slowest.map((f) => `${f.file} ${(f.ms / 1000).toFixed(0)}s`).join(', '));
for (const problem of problems) console.error(`FAIL: ${problem}`);
process.exit(problems.length > 0 ? 1 : 0);
