/**
 * No Docker engine runs where the tests do, so `docker-compose.yml` and the `Dockerfile`
 * are checked as text: the services exist with the shape the README describes, and every
 * logplane command line in them uses subcommands and options the real CLI defines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../cli/main.ts';
import { REPO_ROOT } from './process.ts';

interface ComposeService {
  readonly image?: string;
  readonly build?: string;
  readonly command?: readonly string[];
  readonly environment?: Record<string, string | number>;
  readonly ports?: readonly string[];
  readonly deploy?: { readonly replicas?: number };
  readonly network_mode?: string;
  readonly depends_on?: Record<string, { condition: string }>;
  readonly healthcheck?: { readonly test: readonly string[] };
}

const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;

/** The option of `flag` (`--kafka`) on the subcommand `name`, or on the program. */
const optionOf = (name: string, flag: string) => {
  const program = buildProgram();
  const command = program.commands.find((c) => c.name() === name);
  return command?.options.find((o) => o.long === flag) ?? program.options.find((o) => o.long === flag);
};

describe('docker-compose.yml', () => {
  it('runs Kafka from the official image as a single KRaft node', () => {
    const kafka = services['kafka']!;
    expect(kafka.image).toMatch(/^apache\/kafka:\d+\.\d+\.\d+$/);
    expect(kafka.environment).toMatchObject({
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@kafka:9093',
      KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://kafka:9092',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 1,
    });
    expect(kafka.healthcheck?.test).toContain('localhost:9092');
  });

  it('runs an apiserver on 6443, two controller replicas and two agents, one with the proxy', () => {
    expect(Object.keys(services).sort()).toEqual(['agent-1', 'agent-2', 'apiserver', 'controllers', 'kafka']);
    expect(services['apiserver']!.ports).toEqual(['127.0.0.1:6443:6443']);
    expect(services['apiserver']!.command).toEqual(expect.arrayContaining(['apiserver', '--host', '0.0.0.0', '--port', '6443']));
    expect(services['controllers']!.deploy?.replicas).toBe(2);
    expect(services['agent-1']!.command?.join(' ')).toContain('agent --node node-1 --proxy userspace');
    expect(services['agent-2']!.command?.join(' ')).toContain('agent --node node-2 --proxy none');
    expect(services['agent-2']!.network_mode).toBe('service:agent-1');
    for (const name of ['apiserver', 'controllers', 'agent-1', 'agent-2']) {
      const service = services[name]!;
      expect(service.build, name).toBe('.');
      expect(service.depends_on?.['kafka'], name).toEqual({ condition: 'service_healthy' });
      expect(service.command?.join(' '), name).toContain('--kafka kafka:9092');
    }
  });

  it.each(['apiserver', 'controllers', 'agent-1', 'agent-2'])('gives %s a command line the CLI accepts', (name) => {
    const [subcommand, ...args] = services[name]!.command!;
    expect(buildProgram().commands.map((c) => c.name())).toContain(subcommand);
    for (const flag of args.filter((a) => a.startsWith('--'))) expect(optionOf(subcommand!, flag), `${subcommand} ${flag}`).toBeDefined();
  });
});

describe('Dockerfile', () => {
  it('installs with npm ci on node:20-slim, builds the dashboard in a stage of its own, and runs bin/logplane.mjs', () => {
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20-slim$/m);
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "bin\/logplane\.mjs"\]$/m);
    // The dashboard is built in its own stage (Vite is a dev dependency) and copied in; a local build is not.
    expect(dockerfile).toMatch(/^FROM node:20-slim AS dashboard$/m);
    expect(dockerfile).toMatch(/^RUN node dashboard\/build\.mjs$/m);
    expect(dockerfile).toMatch(/^COPY --from=dashboard \/build\/dashboard\/dist \.\/dashboard\/dist$/m);
    expect(readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n')).toEqual(expect.arrayContaining(['node_modules', '.git', '.logplane', '.kafka-local', 'dashboard/dist']));
  });
});
