/**
 * dashboard: the timeline of one namespace out of a long history (issue 21's large case:
 * 10,000 objects, 1,000,000 events). The history is appended straight to an embedded log
 * (`history.ts`: sim pods dealt among namespaces, each through `rounds` events: created,
 * bound, status reports, a spec update every tenth), folded into a projection with
 * `replayLog`, and served by an apiserver with the history API and the dashboard's files.
 * Measured:
 * - the bulk history reply of one namespace (`GET /logplane/v1/history?namespace=NS`, every
 *   page), p50 and p99 over repeated requests, and its size; the same for its timeline view
 *   (`&view=timeline`: what the timeline draws, which the page reads);
 * - the timeline page of that namespace in headless Chromium (Debian's, playwright-core):
 *   from the moment the page asks for the history to the drawn timeline (the page's own
 *   `data-load-ms` + `data-draw-ms`: the request, its parse, the lanes and spans built, and
 *   vis-timeline drawn), over several loads, and the same from navigation on; once opened as
 *   a link to the present does (its last 28 days: vis-timeline's widest zoom, where this
 *   history, months old, has only each pod's last span) and once opened at a moment inside
 *   the history (`focus=`, as the audit feed links: every span of the lanes in view is in range).
 */
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createHistoryApi } from '../../apiserver/history/routes.ts';
import { parseTokenFile } from '../../apiserver/index.ts';
import { createApiServer } from '../../apiserver/server.ts';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { createProjection, replayLog } from '../../projections/index.ts';
import { buildHistory } from '../history.ts';
import { atMost, plain, quantile, quietLogger, round, type ScenarioContext, type ScenarioResult, withTempDir } from '../support.ts';

const TOKEN = 'bench-dashboard-token';
const CHROMIUM = '/usr/bin/chromium';

interface DashboardSize {
  readonly pods: number;
  readonly rounds: number;
  readonly nodes: number;
  readonly namespaces: number;
}

const sizeFor = (context: ScenarioContext): DashboardSize =>
  context.quick ? { pods: 1_000, rounds: 30, nodes: 10, namespaces: 10 } : { pods: 10_000, rounds: 100, nodes: 100, namespaces: 100 };

export const dashboardScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const size = sizeFor(context);
  return withTempDir('dashboard', async (dir) => {
    const log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'bench', partitions: 1 });
    try {
      const history = await buildHistory(log, { ...size, progress: context.progress });
      context.progress(`dashboard: ${history.events} events appended in ${history.seconds.toFixed(1)} s`);
      const replayed = await replayLog({ log, dir: join(dir, 'projection'), chunk: 10_000 });
      context.progress(`dashboard: folded in ${replayed.seconds.toFixed(1)} s`);
      const projection = createProjection({ dir: join(dir, 'projection'), log });
      const server = await createApiServer({
        log,
        projection,
        tokens: parseTokenFile(`${TOKEN},bench-admin,1,"system:masters"`),
        port: 0,
        host: '127.0.0.1',
        logger: quietLogger(),
        extensions: [createHistoryApi({ log, projection })],
      });
      try {
        // A namespace in the middle: every namespace holds the same number of pods.
        const namespace = history.namespaces[Math.floor(history.namespaces.length / 2)]!;
        /** Every page of the namespace's bulk history: the time to the last byte of the last page, and what it held. */
        const readNamespace = async (view = ''): Promise<{ ms: number; objects: number; versions: number; bytes: number; pages: number; middle: number }> => {
          const started = performance.now();
          const bodies: string[] = [];
          let token: string | undefined;
          do {
            const path = `/logplane/v1/history?namespace=${namespace}&limit=10000${view ? `&view=${view}` : ''}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
            const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
            const text = await response.text();
            if (response.status !== 200) throw new Error(`the bulk history answered ${response.status}: ${text.slice(0, 200)}`);
            bodies.push(text);
            // Only the continue token is read before the next page is asked for; the pages are parsed after the clock stops.
            token = /"continue":"([^"]+)"/.exec(text.slice(0, 400))?.[1];
          } while (token !== undefined);
          const ms = performance.now() - started;
          const pages = bodies.map((body) => JSON.parse(body) as { items: { versions?: { time: number }[]; marks?: { time: number; versions?: number }[] }[] });
          let [first, last] = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
          for (const page of pages) {
            for (const item of page.items) {
              for (const { time } of item.versions ?? item.marks ?? []) [first, last] = [Math.min(first, time), Math.max(last, time)];
            }
          }
          // The timeline view counts the versions its spans stand for (and its marks, one version each).
          const versionsOf = (item: { versions?: unknown[]; marks?: { versions?: number }[] }): number =>
            item.versions?.length ?? (item.marks ?? []).reduce((n, mark) => n + (mark.versions ?? 1), 0);
          return {
            ms,
            objects: pages.reduce((sum, page) => sum + page.items.length, 0),
            versions: pages.reduce((sum, page) => sum + page.items.reduce((n, item) => n + versionsOf(item), 0), 0),
            bytes: bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0),
            pages: bodies.length,
            middle: Math.round((first + last) / 2),
          };
        };
        const first = await readNamespace();
        context.progress(`dashboard: ${namespace}: ${first.objects} objects, ${first.versions} versions, ${(first.bytes / 2 ** 20).toFixed(1)} MiB in ${first.pages} page(s), ${Math.round(first.ms)} ms`);
        const replies: number[] = [];
        for (let i = 0; i < (context.quick ? 5 : 10); i++) replies.push((await readNamespace()).ms);
        const lean = await readNamespace('timeline');
        context.progress(`dashboard: ${namespace} timeline view: ${lean.objects} objects, ${lean.versions} versions, ${(lean.bytes / 2 ** 20).toFixed(1)} MiB in ${lean.pages} page(s), ${Math.round(lean.ms)} ms`);
        const leanReplies: number[] = [];
        for (let i = 0; i < (context.quick ? 5 : 10); i++) leanReplies.push((await readNamespace('timeline')).ms);

        const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
        type PageTime = { inPage: number; load: number; draw: number; fromNavigation: number; lanes: number; drawn: number };
        /** Opens the timeline of the namespace (with `extra` in its address) and reads the page's own figures. */
        const openTimeline = async (extra: string): Promise<PageTime> => {
          const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
          try {
            await page.addInitScript((token) => sessionStorage.setItem('logplane.token', token), TOKEN);
            const started = performance.now();
            await page.goto(`${server.url}/ui/#/timeline?ns=${namespace}${extra}`);
            const status = page.locator('p.status[data-draw-ms]');
            await status.waitFor({ timeout: 120_000 });
            await page.locator('.vis-timeline .vis-item').first().waitFor({ timeout: 120_000 });
            const fromNavigation = performance.now() - started;
            const load = Number(await status.getAttribute('data-load-ms'));
            const draw = Number(await status.getAttribute('data-draw-ms'));
            const lanes = Number(await status.getAttribute('data-lanes'));
            const drawn = await page.locator('.vis-timeline .vis-item').count();
            context.progress(`dashboard: timeline of ${namespace}${extra} (${lanes} lanes, ${drawn} items drawn of ${await status.getAttribute('data-marks')}): history ${load} ms + drawn ${draw} ms; ${Math.round(fromNavigation)} ms from navigation`);
            return { inPage: load + draw, load, draw, fromNavigation, lanes, drawn };
          } finally {
            await page.close();
          }
        };
        const pageTimes: PageTime[] = [];
        const focusTimes: PageTime[] = [];
        try {
          const loads = context.quick ? 3 : 5;
          for (let i = 0; i < loads; i++) pageTimes.push(await openTimeline(''));
          for (let i = 0; i < loads; i++) focusTimes.push(await openTimeline(`&focus=${lean.middle}`));
        } finally {
          await browser.close();
        }
        const median = (values: readonly number[]): number => quantile(values, 0.5);
        return {
          scenario: 'dashboard',
          log: context.log,
          figures: [
            plain('bulk history of one namespace, p50', round(quantile(replies, 0.5), 1), 'ms'),
            plain('bulk history of one namespace, p99', round(quantile(replies, 0.99), 1), 'ms'),
            plain('its timeline view (what the page reads), p50', round(quantile(leanReplies, 0.5), 1), 'ms'),
            plain('its timeline view, p99', round(quantile(leanReplies, 0.99), 1), 'ms'),
            atMost('timeline of one namespace: history read + lanes drawn in Chromium (median)', round(median(pageTimes.map((t) => t.inPage))), 'ms', 1000),
            plain('  of which the history request and its parse (median)', round(median(pageTimes.map((t) => t.load))), 'ms'),
            plain('  of which building the lanes and drawing them (median)', round(median(pageTimes.map((t) => t.draw))), 'ms'),
            plain('timeline page from navigation to drawn (median; with the app, discovery and login state)', round(median(pageTimes.map((t) => t.fromNavigation))), 'ms'),
            atMost('… opened at a moment inside the history (focus=): history read + lanes drawn (median)', round(median(focusTimes.map((t) => t.inPage))), 'ms', 1000),
            plain('  of which the history request and its parse (median)', round(median(focusTimes.map((t) => t.load))), 'ms'),
            plain('  of which building the lanes and drawing them (median)', round(median(focusTimes.map((t) => t.draw))), 'ms'),
          ],
          setup: {
            ...size,
            events: history.events,
            objects: size.pods + size.nodes + size.namespaces,
            buildSeconds: round(history.seconds, 1),
            foldSeconds: round(replayed.seconds, 1),
            namespace,
            namespaceObjects: first.objects,
            namespaceVersions: first.versions,
            replyMiB: round(first.bytes / 2 ** 20, 1),
            replyPages: first.pages,
            timelineReplyMiB: round(lean.bytes / 2 ** 20, 2),
            lanes: pageTimes[0]?.lanes ?? 0,
            itemsDrawn: pageTimes[0]?.drawn ?? 0,
            itemsDrawnAtFocus: focusTimes[0]?.drawn ?? 0,
          },
          notes: [
            `${history.events.toLocaleString('en-US')} events: ${size.pods.toLocaleString('en-US')} pods × ${size.rounds} events each in ${size.namespaces} namespaces, ${size.nodes} nodes; appended straight to the embedded log, then folded.`,
            'The history reply and the page read the projection: the log adapter takes no part, so this scenario runs on the embedded log only.',
          ],
        };
      } finally {
        await server.close();
        await projection.close();
      }
    } finally {
      await log.close();
    }
  });
};
