/**
 * The dashboard in a real headless Chromium (Debian's, driven by playwright-core) against a
 * real cluster, on the embedded log and on the Kafka broker: the anonymous /ui/ files hold no
 * cluster data, log in, see a Deployment's pods appear live, roll it out (its page's
 * Kubernetes Events follow it), see the old and new ReplicaSets' lanes on the timeline (read
 * in one bulk history request), drag the time slider before the rollout and see the old
 * image, and open why of a pod with the scheduler's reasons. Every wait is for a condition on
 * the page. A screenshot of each step is kept in dashboard/test-artifacts/<log>/; the README's
 * two are the embedded run's.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, LOG_ADAPTERS, startTestCluster, waitForView, type TestCluster } from './helpers.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';

const deployment = (image: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'echo', namespace: 'default', labels: { app: 'echo' } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'echo' } },
    template: {
      metadata: { labels: { app: 'echo' } },
      spec: { containers: [{ name: 'echo', image, ports: [{ name: 'http', containerPort: 8080 }] }] },
    },
  },
});

describe.each(LOG_ADAPTERS)('the dashboard in Chromium on the %s log', (adapter) => {
  const ARTIFACTS = join(REPO, 'dashboard', 'test-artifacts', adapter);
  let cluster: TestCluster;
  let browser: Browser;
  let page: Page;
  let ui: string;
  /** Script errors and console errors (CSP violations among them) of every page the tests open. */
  const pageErrors: string[] = [];
  const shot = async (name: string): Promise<void> => {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    // The test checks the sources as they are, not what the last install built.
    execFileSync(process.execPath, [join(REPO, 'dashboard', 'build.mjs')], { stdio: 'pipe' });
    mkdirSync(ARTIFACTS, { recursive: true });
    cluster = await startTestCluster(adapter, 'dashboard', { nodes: 2 });
    ui = `${cluster.cluster.url}/ui/`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 401/.test(message.text())) pageErrors.push(message.text());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await cluster?.stop();
  });

  it('serves its files without a token, and they hold no cluster data; the APIs still need one', async () => {
    const index = await fetch(ui);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await index.text();
    expect(html).not.toContain(cluster.cluster.token);
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const bundle = await (await fetch(`${cluster.cluster.url}${script}`)).text();
    expect(bundle).not.toContain(cluster.cluster.token);
    expect((await fetch(`${cluster.cluster.url}/api/v1/pods`)).status).toBe(401);
    expect((await fetch(`${cluster.cluster.url}/logplane/v1/position`)).status).toBe(401);
    // Paths that climb out of the dashboard's directory, sent as they are (fetch would normalize them).
    const { hostname, port } = new URL(cluster.cluster.url);
    for (const path of ['/ui/..%2f..%2fpackage.json', '/ui/%2e%2e%2fbuild.mjs', '/ui/assets/..%5c..%5cbuild.mjs', '/ui/.gitignore', '/ui/%00']) {
      expect((await httpRequest(hostname, Number(port), path)).status, path).toBe(404);
    }
    // Normalized by the server's URL parser to a path outside /ui/, which needs a token.
    for (const path of ['/ui/../package.json', '/ui/%2e%2e/package.json']) {
      expect((await httpRequest(hostname, Number(port), path)).status, path).toBe(401);
    }
    expect((await fetch(`${cluster.cluster.url}/ui/`, { method: 'POST' })).status).toBe(405);
    const redirect = await fetch(`${cluster.cluster.url}/ui`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/ui/');
  });

  it('logs in with a token kept in sessionStorage, never in the URL', async () => {
    await page.goto(ui);
    await page.getByLabel('token').fill('not-a-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('login-error').getByText('The server refused this token.').waitFor();
    await page.getByLabel('token').fill(cluster.cluster.token);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('nav a[data-plural="pods"]').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('logplane.token'))).toBe(cluster.cluster.token);
    expect(page.url()).not.toContain(cluster.cluster.token);
    await shot('1-logged-in');
  });

  let beforeRollout = 0;
  /** The position `history` printed for the Deployment's creation. */
  let createdAt = '';

  it("shows a Deployment's pods appear live in the pods table", async () => {
    await page.goto(`${ui}#/list/pods?ns=default`);
    await page.locator('table.objects[data-resource="pods"]').waitFor();
    await page.locator('p.status', { hasText: 'live' }).waitFor();
    expect(await page.locator('tr[data-name^="echo-"]').count()).toBe(0);
    await cluster.api.create('/apis/apps/v1/namespaces/default/deployments', deployment('logplane/echo:1'));
    const running = page.locator('tr[data-name^="echo-"]', { has: page.locator('td[data-column="STATUS"]', { hasText: /^Running$/ }) });
    await expect.poll(() => running.count(), { timeout: 30_000 }).toBe(2);
    await shot('2-pods-live');
  });

  it('follows a rollout on the Deployment page, live', async () => {
    await page.goto(`${ui}#/object/deployments/default/echo?ns=default`);
    await page.getByTestId('yaml').getByText('image: logplane/echo:1').waitFor();
    // Its Kubernetes Events, from the Events API: the deployment controller scaled the first ReplicaSet up.
    const scaled = page.getByTestId('events').locator('tr[data-reason="ScalingReplicaSet"]');
    await expect.poll(() => scaled.count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
    const scaledBefore = await scaled.count();
    const patched = await fetch(`${cluster.cluster.url}/apis/apps/v1/namespaces/default/deployments/echo`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${cluster.cluster.token}`, 'content-type': 'application/strategic-merge-patch+json' },
      body: JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'echo', image: 'logplane/echo:2' }] } } } }),
    });
    expect(patched.status).toBe(200);
    await page.getByTestId('yaml').getByText('image: logplane/echo:2').waitFor();
    // The rollout's Events arrive on the open page through the watch: the new ReplicaSet scaled up.
    await expect.poll(() => scaled.count(), { timeout: 30_000 }).toBeGreaterThan(scaledBefore);
    const replicaSetsNow = (await cluster.api.request('GET', '/apis/apps/v1/namespaces/default/replicasets')).body as { items: { metadata: { name: string }; spec: { template: { spec: { containers: { image: string }[] } } } }[] };
    const newReplicaSet = replicaSetsNow.items.find((rs) => rs.spec.template.spec.containers[0]?.image === 'logplane/echo:2')!.metadata.name;
    await page.getByTestId('events').locator('tr[data-reason="ScalingReplicaSet"]', { hasText: newReplicaSet }).first().waitFor({ timeout: 30_000 });
    // The moment just before the event that changed the template: the slider's target later.
    const history = (await cluster.api.request('GET', '/logplane/v1/history/Deployment/default/echo')).body as { versions: { time: number; object: { spec: { template: { spec: { containers: { image: string }[] } } } } | null }[] };
    const rollout = history.versions.find((v) => v.object?.spec.template.spec.containers[0]?.image === 'logplane/echo:2');
    expect(rollout).toBeDefined();
    beforeRollout = rollout!.time - 1;
    createdAt = (history.versions[0] as unknown as { position: string }).position;
    await waitForView(cluster.cluster.projection, 'the rollout to finish', (view) =>
      view
        .list('Pod', 'default')
        .map((p) => p as unknown as { spec: { containers: { image: string }[] }; status?: { phase?: string } })
        .filter((p) => p.spec.containers[0]?.image === 'logplane/echo:2' && p.status?.phase === 'Running').length === 2,
    );
    // Two writers update the same version at once: the fold accepts one and rejects the other,
    // and the rejection is a fact in the log. (A write already stale when it arrives is refused
    // before it is appended, so the race is repeated, a bounded number of times, until the
    // log holds a rejected write; each attempt writes new values, since a write that changes
    // nothing appends nothing.)
    const hasRejectedWrite = async (): Promise<boolean> => {
      const reply = (await cluster.api.request('GET', '/logplane/v1/history/Deployment/default/echo')).body as { versions: { verdict: { type: string } }[] };
      return reply.versions.some((v) => v.verdict.type === 'rejected');
    };
    for (let attempt = 0; attempt < 20 && !(await hasRejectedWrite()); attempt++) {
      const current = (await cluster.api.request('GET', '/apis/apps/v1/namespaces/default/deployments/echo')).body as { metadata: { labels: Record<string, string> } };
      const answers = await Promise.all(
        ['a', 'b'].map((writer) =>
          cluster.api.request('PUT', '/apis/apps/v1/namespaces/default/deployments/echo', { ...current, metadata: { ...current.metadata, labels: { ...current.metadata.labels, writer: `${writer}-${attempt}` } } }),
        ),
      );
      for (const answer of answers) expect([200, 409]).toContain(answer.status);
    }
    expect(await hasRejectedWrite()).toBe(true);
    await shot('3-rolled-out');
  });

  it("shows the old and the new ReplicaSet's lanes on the timeline, under the Deployment", async () => {
    const historyRequests: string[] = [];
    const record = (request: { url(): string }): void => {
      if (request.url().includes('/logplane/v1/history')) historyRequests.push(new URL(request.url()).pathname + new URL(request.url()).search);
    };
    page.on('request', record);
    await page.goto(`${ui}#/timeline?ns=default`);
    await page.locator('.vis-timeline').waitFor();
    page.off('request', record);
    // The namespace's timeline (what it draws, not whole objects) in one bulk request, not one request per object.
    expect(historyRequests).toEqual(['/logplane/v1/history?view=timeline&limit=10000&namespace=default']);
    const replicaSets = page.locator('.vis-label [data-kind="ReplicaSet"]');
    await expect.poll(() => replicaSets.count()).toBe(2);
    await page.locator('.vis-label [data-lane="Deployment/default/echo"]').waitFor();
    expect(await page.locator('.vis-label [data-kind="Pod"]').count()).toBeGreaterThanOrEqual(4);
    // The stale write is a mark on the Deployment's lane.
    const rejected = page.locator('.vis-item.mark-rejected', { hasText: 'rejected' }).first();
    await rejected.waitFor();
    // Its tooltip names the event by the one position format every page and verb uses. (The
    // mouse is not moved onto it: a span of the same lane may be drawn over the point.)
    await rejected.dispatchEvent('mouseover');
    await expect.poll(async () => (await page.locator('.vis-tooltip').allTextContents()).join(' ')).toMatch(/by user \S+ at .*, position \d+(\.\d+)+ — rejected: /);
    // Spans are named by state: the pods ran.
    await page.locator('.vis-item.tone-ok', { hasText: 'Running' }).first().waitFor();
    // Kubernetes Events are marks on their objects' lanes, not lanes of their own.
    await page.locator('.vis-item.mark-event', { hasText: 'ScalingReplicaSet' }).first().waitFor();
    expect(await page.locator('.vis-label [data-kind="Event"]').count()).toBe(0);
    await shot('4-timeline');
    await page.screenshot({ path: join(ARTIFACTS, 'readme-timeline.png') });
  });

  it('puts the Deployment page into the past with the time slider: the old image', async () => {
    await page.goto(`${ui}#/object/deployments/default/echo?ns=default`);
    await page.getByTestId('yaml').getByText('image: logplane/echo:2').waitFor();
    await page.getByTestId('slider').fill(String(beforeRollout));
    await page.getByTestId('past-banner').waitFor();
    await page.getByTestId('yaml').getByText('image: logplane/echo:1').waitFor();
    expect(await page.getByTestId('yaml').textContent()).not.toContain('logplane/echo:2');
    expect(page.url()).toContain(`at=${beforeRollout}`);
    // Its Kubernetes Events as they were then: only the first ReplicaSet's scale-up, none of the rollout's.
    const pastEvents = page.getByTestId('events').locator('tr[data-reason="ScalingReplicaSet"]');
    await pastEvents.first().waitFor();
    expect(await pastEvents.count()).toBe(1);
    expect(await pastEvents.first().textContent()).toMatch(/Scaled up replica set echo-\S+ from 0 to 2/);
    // The history marks the version shown: the last one before the rollout, the old template's.
    const shownRow = page.getByTestId('shown-version');
    await shownRow.waitFor();
    expect(Number(new Date((await shownRow.locator('td').first().textContent()) ?? '').getTime())).toBeLessThanOrEqual(beforeRollout);
    await shot('5-time-travel');
    await page.screenshot({ path: join(ARTIFACTS, 'readme-time-travel.png') });
    // "Now" returns to the live page.
    await page.getByRole('button', { name: 'Now' }).click();
    await page.getByTestId('yaml').getByText('image: logplane/echo:2').waitFor();
    expect(await page.getByTestId('past-banner').count()).toBe(0);
    // A position as history printed it, typed into the moment field: the object exists there.
    await page.getByLabel('position or time').fill(createdAt);
    await page.getByRole('button', { name: 'Go' }).click();
    await page.locator(`p.status[data-position="${createdAt}"]`).waitFor();
    await page.getByTestId('yaml').getByText('image: logplane/echo:1').waitFor();
    // From the past, what changed since: the diff from this moment to now.
    await page.getByRole('link', { name: 'what changed since' }).click();
    await page.locator('ul.changed > li', { hasText: /^Deployment default\/echo/ }).waitFor();
    expect(page.url()).toContain(`from=${encodeURIComponent(createdAt)}`);
  });

  it('shows the pods table as it was before the rollout: the old ReplicaSet\'s pods', async () => {
    const replicaSets = (await cluster.api.request('GET', '/apis/apps/v1/namespaces/default/replicasets')).body as { items: { metadata: { name: string }; spec: { template: { spec: { containers: { image: string }[] } } } }[] };
    const old = replicaSets.items.find((rs) => rs.spec.template.spec.containers[0]?.image === 'logplane/echo:1')!.metadata.name;
    await page.goto(`${ui}#/list/pods?ns=default&at=${beforeRollout}`);
    await page.locator('p.status[data-position]').waitFor();
    const rows = page.locator('table.objects tr[data-name^="echo-"]');
    await expect.poll(() => rows.count()).toBe(2);
    for (const name of await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-name') ?? ''))) expect(name.startsWith(`${old}-`)).toBe(true);
    await shot('6-pods-before-rollout');
  });

  it('narrows the timeline to the new ReplicaSet: its owner and its pods, not the old one', async () => {
    const replicaSets = (await cluster.api.request('GET', '/apis/apps/v1/namespaces/default/replicasets')).body as { items: { metadata: { name: string }; spec: { template: { spec: { containers: { image: string }[] } } } }[] };
    const fresh = replicaSets.items.find((rs) => rs.spec.template.spec.containers[0]?.image === 'logplane/echo:2')!.metadata.name;
    await page.goto(`${ui}#/timeline?ns=default&key=${encodeURIComponent(`ReplicaSet/default/${fresh}`)}`);
    await page.locator('.vis-timeline').waitFor();
    await page.locator(`.vis-label [data-lane="ReplicaSet/default/${fresh}"]`).waitFor();
    expect(await page.locator('.vis-label [data-kind="ReplicaSet"]').count()).toBe(1);
    expect(await page.locator('.vis-label [data-kind="Deployment"]').count()).toBe(1);
    expect(await page.locator('.vis-label [data-kind="Pod"]').count()).toBe(2);
  });

  it('diffs two moments: the new ReplicaSet created, the Deployment\'s image changed', async () => {
    await page.goto(`${ui}#/diff?from=${beforeRollout}`);
    await page.locator('ul.created li', { hasText: /^ReplicaSet default\/echo-/ }).first().waitFor();
    const deployment = page.locator('ul.changed > li', { hasText: /^Deployment default\/echo/ });
    await deployment.locator('li.changed', { hasText: 'spec.template.spec.containers[0].image: "logplane/echo:1" → "logplane/echo:2"' }).waitFor();
    expect(await page.locator('ul.deleted li', { hasText: /^Pod default\/echo-/ }).count()).toBe(2);
    await shot('7-diff');
  });

  it('shows the topology now and before the rollout: which ReplicaSet owns the pods, where they run', async () => {
    const replicaSets = (await cluster.api.request('GET', '/apis/apps/v1/namespaces/default/replicasets')).body as { items: { metadata: { name: string }; spec: { template: { spec: { containers: { image: string }[] } } } }[] };
    const byImage = (image: string): string => replicaSets.items.find((rs) => rs.spec.template.spec.containers[0]?.image === image)!.metadata.name;
    const owns = (rs: string) => page.locator(`[data-testid="topology"] li[data-from="ReplicaSet/default/${rs}"][data-to^="Pod/default/${rs}-"]`);
    await page.goto(`${ui}#/topology?ns=default`);
    await page.getByTestId('topology-graph').locator('canvas').first().waitFor();
    await expect.poll(() => owns(byImage('logplane/echo:2')).count()).toBe(2);
    expect(await owns(byImage('logplane/echo:1')).count()).toBe(0);
    expect(await page.locator('[data-testid="topology"] li[data-from="Deployment/default/echo"]').count()).toBe(2);
    expect(await page.locator('[data-testid="topology"] li[data-from^="Pod/default/echo-"][data-to^="Node//node-"]').count()).toBe(2);
    await page.goto(`${ui}#/topology?ns=default&at=${beforeRollout}`);
    await page.locator('p.status', { hasText: `as they were at ${beforeRollout}` }).waitFor();
    await expect.poll(() => owns(byImage('logplane/echo:1')).count()).toBe(2);
    expect(await owns(byImage('logplane/echo:2')).count()).toBe(0);
    await shot('7-topology-before-rollout');
  });

  it("lists the admin's changes in the audit feed and jumps from one to its moment on the timeline", async () => {
    await page.goto(`${ui}#/audit?user=admin`);
    const update = page.locator('table.audit tr', { hasText: 'ObjectUpdated' }).filter({ hasText: 'Deployment/default/echo' });
    await update.first().waitFor();
    expect(await page.locator('table.audit tr', { hasText: 'ObjectCreated' }).filter({ hasText: 'Deployment/default/echo' }).count()).toBe(1);
    await update.first().locator('td').first().locator('a').click();
    await page.locator('.vis-timeline .vis-custom-time').waitFor();
    expect(page.url()).toContain('#/timeline');
  });

  it('replays the log into a fresh projection: the same state hash as the live one', async () => {
    await page.goto(`${ui}#/replay`);
    await page.getByRole('button', { name: 'Replay the log into a fresh projection' }).click();
    await page.getByTestId('replay-result').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('replay-result').textContent()).toContain("= the live projection's");
  });

  it("shows why a pod runs, with the scheduler's reasons for its binding", async () => {
    const pods = (await cluster.api.request('GET', '/api/v1/namespaces/default/pods')).body as { items: { metadata: { name: string } }[] };
    const current = pods.items.find((p) => p.metadata.name.startsWith('echo-'))!.metadata.name;
    expect(current).not.toBe('');
    await page.goto(`${ui}#/why/Pod/default/${current}`);
    await page.locator('ol.chain').first().waitFor();
    await page.locator('.cause', { hasText: 'bound to node' }).first().waitFor();
    const rationale = page.getByTestId('rationale').first();
    await rationale.waitFor();
    expect(await rationale.textContent()).toMatch(/2 of 2 nodes feasible/);
    expect(await rationale.locator('td', { hasText: /^node-[12]$/ }).count()).toBeGreaterThanOrEqual(1);
    await page.locator('.cause', { hasText: 'user "admin"' }).first().waitFor();
    // The chains as one graph, drawn by cytoscape.
    const graph = page.getByTestId('causation-graph');
    await graph.locator('canvas').first().waitFor();
    expect(Number(await graph.getAttribute('data-nodes'))).toBeGreaterThanOrEqual(4);
    await shot('8-why');
    // Re-run the scheduler's decision on the view it saw: the same binding.
    await page.locator('.cause', { hasText: 'bound to node' }).first().getByTestId('rerun').click();
    await page.getByTestId('rerun-verdict').getByText('Same commands as it appended then.').waitFor();
    await shot('9-rerun');
  });

  it("shows a pod's page with its status and its log, followed", async () => {
    const pods = (await cluster.api.request('GET', '/api/v1/namespaces/default/pods')).body as { items: { metadata: { name: string } }[] };
    const name = pods.items.find((p) => p.metadata.name.startsWith('echo-'))!.metadata.name;
    await page.goto(`${ui}#/object/pods/default/${name}?ns=default`);
    await page.getByTestId('phase').getByText('Running').waitFor();
    await page.getByTestId('log').getByText(`echo: pod ${name} listening`).waitFor();
    await page.locator('.owners a', { hasText: /^ReplicaSet\/echo-/ }).waitFor();
    await shot('10-pod');
  });

  it('logs out: the token leaves sessionStorage and the login form is back', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('token').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('logplane.token'))).toBeNull();
  });

  it('had no script errors and no Content-Security-Policy violations on any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
