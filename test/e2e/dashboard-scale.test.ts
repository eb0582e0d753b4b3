/**
 * The timeline of a larger namespace in Chromium: a Deployment of 1,000 simulated pods.
 * The test checks every object gets its lane (the ReplicaSet's folded), read in one bulk
 * history request, and that unfolding the ReplicaSet and scrolling to its last pods draws
 * their spans (the page gives vis-timeline only the lanes in view, refilled as they change);
 * the time the page takes to load and draw it is printed (not asserted:
 * the machine is shared). The large case (10,000 objects, 1,000,000 events) is a
 * benchmark figure: `npm run bench -- --only dashboard`.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_SCOPED, KINDS } from '../../schemas/index.ts';
import { startTestCluster, waitForView, type TestCluster } from './helpers.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const REPLICAS = 1000;

describe('the timeline of a namespace with a thousand pods', () => {
  let cluster: TestCluster;
  let browser: Browser;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(REPO, 'dashboard', 'build.mjs')], { stdio: 'pipe' });
    cluster = await startTestCluster('embedded', 'dashboard-scale', { nodes: 20, runtime: 'sim', proxy: 'none' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await cluster?.stop();
  });

  it(`gives each of ${REPLICAS} pods, its ReplicaSet and its Deployment a lane`, { timeout: 300_000 }, async () => {
    await cluster.api.create('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'wide', namespace: 'default' },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: 'wide' } },
        template: { metadata: { labels: { app: 'wide' } }, spec: { containers: [{ name: 'c', image: 'logplane/sleeper' }] } },
      },
    });
    await waitForView(
      cluster.cluster.projection,
      `${REPLICAS} running pods`,
      (view) => view.list('Pod', 'default').filter((p) => (p as unknown as { status?: { phase?: string } }).status?.phase === 'Running').length === REPLICAS,
      { timeoutMs: 240_000 },
    );
    const position = (await cluster.api.request('GET', '/logplane/v1/position')).body as { resourceVersion: string };
    const events = position.resourceVersion.split('.').reduce((sum, offset) => sum + Number(offset), 0);

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript((token) => sessionStorage.setItem('logplane.token', token), cluster.cluster.token);
    let historyRequests = 0;
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/logplane/v1/history')) historyRequests++;
    });
    const started = performance.now();
    await page.goto(`${cluster.cluster.url}/ui/#/timeline?ns=default`);
    const status = page.locator('p.status[data-lanes]');
    await status.waitFor({ timeout: 240_000 });
    await page.locator('.vis-timeline .vis-item').first().waitFor();
    const seconds = (performance.now() - started) / 1000;
    // Every object of the namespace has a lane: the Deployment, its ReplicaSet and pods, and what every
    // namespace holds (the kubernetes Service and its endpoints, kube-root-ca.crt, the default ServiceAccount);
    // the Events about them are marks on their lanes, not lanes.
    const view = cluster.cluster.projection.view();
    const inNamespace = KINDS.filter((kind) => !CLUSTER_SCOPED.has(kind) && kind !== 'Event').reduce((count, kind) => count + view.list(kind, 'default').length, 0);
    expect(inNamespace).toBeGreaterThanOrEqual(REPLICAS + 2);
    expect(Number(await status.getAttribute('data-lanes'))).toBe(inNamespace);
    expect(view.list('Event', 'default').length).toBeGreaterThanOrEqual(1);
    expect(historyRequests).toBe(1);
    // The ReplicaSet of a thousand pods starts folded: its lane is drawn, its pods' are not yet.
    await page.locator('.vis-label [data-kind="ReplicaSet"]').waitFor();
    expect(await page.locator('.vis-label [data-kind="Pod"]').count()).toBe(0);
    const [loadMs, drawMs] = [await status.getAttribute('data-load-ms'), await status.getAttribute('data-draw-ms')];
    // Unfolded, the pods' lanes appear; scrolled to the last of them, their spans are drawn too
    // (only the lanes in view, and a few around, are given to vis-timeline).
    await page.locator('.vis-label.vis-nesting-group', { has: page.locator('[data-kind="ReplicaSet"]') }).click();
    await page.locator('.vis-label [data-kind="Pod"]').first().waitFor();
    await expect.poll(() => page.locator('.vis-label [data-kind="Pod"]').count()).toBe(REPLICAS);
    await page.evaluate(() => {
      const panel = document.querySelector('.vis-panel.vis-left')!;
      panel.scrollTop = panel.scrollHeight;
      panel.dispatchEvent(new Event('scroll'));
    });
    const lastPod = page.locator('.vis-label [data-kind="Pod"]').last();
    await expect.poll(async () => (await lastPod.boundingBox())?.y ?? -1).toBeGreaterThan(0);
    const drawn = async (): Promise<number> =>
      page.evaluate(() => {
        // Items drawn beside the last pod's label: its lane's spans.
        const label = [...document.querySelectorAll('.vis-label')].filter((l) => l.querySelector('[data-kind="Pod"]')).at(-1)!.getBoundingClientRect();
        return [...document.querySelectorAll('.vis-timeline .vis-item')].filter((item) => {
          const box = item.getBoundingClientRect();
          return box.height > 0 && box.top < label.bottom && box.bottom > label.top;
        }).length;
      });
    await expect.poll(drawn, { timeout: 30_000 }).toBeGreaterThan(0);
    console.log(`dashboard timeline: ${inNamespace} objects, ${events} events in the log: shown in ${seconds.toFixed(2)} s (history read in one request in ${loadMs} ms, lanes built and drawn in ${drawMs} ms)`);
  });
});
